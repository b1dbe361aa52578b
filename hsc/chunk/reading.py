"""Reading one file of a repository without trusting what is on the disk.

Whatever sits at a path (a symlink to ``/etc/passwd`` or ``/dev/zero``, a
FIFO, a socket, a file that grows or is swapped while hsc reads it, a name
that is not valid UTF-8, text in a legacy encoding), these functions answer
with bytes or text, or with a reason a person can act on; they never block,
never read more than the size limit and never follow a link out of the
repository.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

READ_CHUNK = 1 << 16
BINARY_SNIFF_BYTES = 8192
# The single-byte encoding tried for text that is not UTF-8: cp1252 is what
# Windows editors wrote for decades and a superset of latin-1's printable
# range; latin-1 decodes the five bytes cp1252 leaves undefined.
LEGACY_ENCODINGS = ("cp1252", "latin-1")
# C0 control bytes that do not occur in text (tab, newlines, form feed and escape do).
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])
_CONTROL_SHARE = 0.01
_LONE_CR = re.compile(r"\r(?!\n)")


@dataclass(frozen=True)
class FileBytes:
    """One file's bytes, or why they were not read (``status`` "skipped" or "error")."""

    data: bytes | None
    size: int = 0
    status: str = "ok"
    reason: str = ""


@dataclass(frozen=True)
class DecodedText:
    """A file's text, or why it is not text (``text`` None)."""

    text: str | None
    encoding: str = "utf-8"
    note: str = ""  # how the text was decoded, when not plain UTF-8; the reason when ``text`` is None


# -- names ------------------------------------------------------------------------------


def stored_name(os_name: str) -> str:
    """A path as the index stores and shows it: valid UTF-8 whatever the disk holds.

    Python hands a file name that is not valid UTF-8 over with each bad byte
    as a lone surrogate, which SQLite (and any UTF-8 output) refuses. Here a
    bad byte becomes ``\\xNN`` and a backslash becomes ``\\\\``, so the
    mapping is lossless (:func:`os_name` inverts it) and readable. Names of
    valid UTF-8 without a backslash (nearly all) are unchanged.
    """
    if "\\" not in os_name and not _has_surrogates(os_name):
        return os_name
    raw = os.fsencode(os_name).replace(b"\\", b"\\\\")
    return raw.decode("utf-8", errors="backslashreplace")


def os_name(name: str) -> str:
    """The name on the disk for a :func:`stored_name`."""
    if "\\" not in name:
        return name
    out = bytearray()
    encoded = name.encode("utf-8")
    i = 0
    while i < len(encoded):
        if encoded[i : i + 2] == b"\\\\":
            out += b"\\"
            i += 2
        elif encoded[i : i + 2] == b"\\x" and i + 4 <= len(encoded):
            out.append(int(encoded[i + 2 : i + 4], 16))
            i += 4
        else:
            out.append(encoded[i])
            i += 1
    return os.fsdecode(bytes(out))


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# -- bytes --------------------------------------------------------------------------------


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _not_regular(mode: int, size: int) -> FileBytes:
    if stat.S_ISDIR(mode):
        return FileBytes(None, 0, "error", os.strerror(21))  # "Is a directory"
    kind = _kind(mode)
    reason = "not a regular file" if kind == "not a regular file" else f"not a regular file: {kind}"
    return FileBytes(None, size, "skipped", reason)


def read_file_bytes(root: str | Path, rel_path: str, limit: int) -> FileBytes:
    """The bytes of ``root/rel_path`` (``rel_path`` as the OS names it), at most ``limit``.

    The path is resolved first; one that leads out of ``root`` (a symlinked
    file or folder pointing elsewhere) is skipped unread. The type and size
    are checked before opening, so a FIFO, socket or device is never opened;
    the file is opened without following a last-moment symlink and without
    blocking, checked again on the open descriptor, and read in chunks that
    stop one byte past ``limit``, so a file that grows or is swapped for
    something endless mid-run costs at most ``limit`` bytes of memory.
    """
    real_root = os.path.realpath(root)
    path = os.path.join(root, rel_path)
    try:
        target = os.path.realpath(path, strict=True)
    except OSError as error:
        return FileBytes(None, 0, "error", os_reason(error))
    if not _inside(target, real_root):
        via = "a symlink" if os.path.islink(path) else "a symlinked folder"
        return FileBytes(None, 0, "skipped", f"{via} to a path outside the repository (not followed)")
    try:
        info = os.stat(target, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode):
            return _not_regular(info.st_mode, info.st_size)
        if info.st_size > limit:
            return FileBytes(None, info.st_size, "skipped", too_large(info.st_size, limit))
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOCTTY", 0)
        descriptor = os.open(target, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        return FileBytes(None, 0, "error", os_reason(error))
    try:
        opened = os.fstat(descriptor)
        if not stat.S_ISREG(opened.st_mode):  # swapped between the check and the open
            return _not_regular(opened.st_mode, opened.st_size)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(descriptor, min(READ_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        return FileBytes(None, 0, "error", os_reason(error))
    finally:
        os.close(descriptor)
    if size > limit:  # the file grew after it was checked
        grown = max(size, opened.st_size)
        return FileBytes(None, grown, "skipped", too_large(grown, limit))
    return FileBytes(b"".join(chunks), size)


# -- text -----------------------------------------------------------------------------------

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32 LE"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32 BE"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16 LE"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16 BE"),
)


def decode_text(data: bytes) -> DecodedText:
    """Text from bytes, as an editor would open them.

    A byte order mark decides (UTF-8, UTF-16 or UTF-32; the mark is dropped).
    Otherwise a NUL byte near the start means binary; valid UTF-8 is UTF-8;
    anything else is read with a single-byte legacy encoding (cp1252, or
    latin-1 for the bytes cp1252 leaves undefined) unless control bytes say
    it is binary. ``note`` records which encoding was used and why. Lone CR
    line ends (classic Mac) become LF, one byte for one, so byte offsets
    still match and line numbers are the ones an editor shows.
    """
    for mark, codec, label in _BOMS:
        if data.startswith(mark):
            try:
                text = data[len(mark) :].decode(codec)
            except UnicodeDecodeError as error:
                offset = error.start + len(mark)
                reason = f"not valid {label} after its byte order mark (offset {offset})"
                return DecodedText(None, codec, reason)
            if codec == "utf-8":
                note = "UTF-8 byte order mark removed; byte offsets count from after it"
            else:
                note = f"decoded as {label} (byte order mark); byte offsets count in its UTF-8 form"
            return _with_line_ends(DecodedText(text, codec, note))
    nul = data.find(b"\x00", 0, BINARY_SNIFF_BYTES)
    if nul >= 0:
        return DecodedText(None, "", f"binary file (NUL byte at offset {nul})")
    try:
        return _with_line_ends(DecodedText(data.decode("utf-8")))
    except UnicodeDecodeError as error:
        bad = f"byte 0x{data[error.start]:02x} at offset {error.start}"
    sniff = data[:BINARY_SNIFF_BYTES]
    controls = sum(sniff.count(byte) for byte in _CONTROL_BYTES)
    if controls > len(sniff) * _CONTROL_SHARE:
        reason = f"binary file (not UTF-8 and {controls} control bytes in its first 8 KiB)"
        return DecodedText(None, "", reason)
    for codec in LEGACY_ENCODINGS:
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            continue
        note = f"decoded as {codec} (not valid UTF-8: {bad}); byte offsets count in its UTF-8 form"
        return _with_line_ends(DecodedText(text, codec, note))
    raise AssertionError("latin-1 decodes every byte")  # pragma: no cover


def _with_line_ends(decoded: DecodedText) -> DecodedText:
    text = decoded.text or ""
    if "\r" not in text:
        return decoded
    text, lone = _LONE_CR.subn("\n", text)
    if not lone:
        return decoded
    note = "; ".join(n for n in (decoded.note, f"{lone} lone CR line ends read as line breaks") if n)
    return DecodedText(text, decoded.encoding, note)


# -- messages -------------------------------------------------------------------------------


def too_large(size: int, limit: int) -> str:
    return f"too large: {human_size(size)} > {human_size(limit)} limit"


def human_size(size: int) -> str:
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB"
    if size >= 1_000:
        return f"{size / 1_000:.1f} kB"
    return f"{size} B"


def os_reason(error: OSError) -> str:
    """The OS message without the path (the report already names the file)."""
    return error.strerror or str(error)
