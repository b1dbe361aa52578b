"""Whatever is on the disk, ingestion reads nothing it should not, never
blocks, never holds more than the size limit, and loses no other file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hsc.api import Index
from hsc.chunk.ingest import load_file, walk_repository
from hsc.chunk.reading import os_name, read_file_bytes, stored_name
from hsc.chunk.tokens import get_counter
from hsc.params import Parameters, Settings

COUNTER = get_counter()
SECRET = "def leaked_secret():\n    return 'the password is hunter2'\n"
CODE = "def add(a, b):\n    return a + b\n"


def load(root: Path, rel_path: str, settings: Settings | None = None):
    return load_file(root, rel_path, Parameters(), settings or Settings(), COUNTER).report


@pytest.fixture()
def outside_and_repo(tmp_path: Path) -> tuple[Path, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(SECRET)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "add.py").write_text(CODE)
    return outside, repo


def test_a_symlinked_file_pointing_outside_is_not_read(outside_and_repo) -> None:
    outside, repo = outside_and_repo
    (repo / "link.py").symlink_to(outside / "secret.py")
    (repo / "inside_link.py").symlink_to(repo / "add.py")
    (repo / "zero.py").symlink_to("/dev/zero")
    assert list(walk_repository(repo)) == ["add.py", "inside_link.py", "link.py", "zero.py"]
    link = load(repo, "link.py")
    assert link.status == "skipped"
    assert link.reason == "a symlink to a path outside the repository (not followed)"
    assert load(repo, "zero.py").reason == link.reason
    assert load(repo, "inside_link.py").status == "indexed"  # a link within the repository is fine


def test_a_path_through_a_folder_swapped_for_a_symlink_is_not_read(outside_and_repo) -> None:
    outside, repo = outside_and_repo
    (repo / "pkg").symlink_to(outside)  # as if pkg/ were replaced after the walk listed pkg/secret.py
    report = load(repo, "pkg/secret.py")
    assert (report.status, report.reason) == (
        "skipped",
        "a symlinked folder to a path outside the repository (not followed)",
    )


def test_devices_fifos_and_sockets_are_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    assert load(tmp_path, "pipe.py").reason == "not a regular file: a named pipe (FIFO)"
    if os.geteuid() == 0:  # only root may make a device node: a copy of /dev/zero inside the tree
        os.mknod(tmp_path / "zero.py", stat.S_IFCHR | 0o666, os.makedev(1, 5))
        assert load(tmp_path, "zero.py").reason == "not a regular file: a device"
    import socket

    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock.py"))
        assert load(tmp_path, "sock.py").reason == "not a regular file: a socket"


def test_a_file_swapped_for_a_fifo_after_the_check_does_not_block(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "swap.py"
    path.write_text(CODE)
    real_open = os.open

    def swap_then_open(target, flags, *args):
        if str(target).endswith("swap.py"):
            os.unlink(target)
            os.mkfifo(target)  # nobody will ever write to it
        return real_open(target, flags, *args)

    monkeypatch.setattr(os, "open", swap_then_open)
    raw = read_file_bytes(tmp_path, "swap.py", 1000)
    assert (raw.data, raw.status, raw.reason) == (None, "skipped", "not a regular file: a named pipe (FIFO)")


def test_a_file_that_grows_while_read_stops_at_the_limit(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "grows.py"
    path.write_text(CODE)
    real_open = os.open

    def grow_then_open(target, flags, *args):
        descriptor = real_open(target, flags, *args)
        if str(target).endswith("grows.py"):
            with open(target, "ab") as writer:  # another process appends 5 MB after hsc checked the size
                writer.write(b"x = 1\n" * 900_000)
        return descriptor

    monkeypatch.setattr(os, "open", grow_then_open)
    raw = read_file_bytes(tmp_path, "grows.py", 10_000)
    assert raw.data is None and raw.reason == "too large: 5.4 MB > 10.0 kB limit"


def test_file_names_that_are_not_utf8_are_stored_losslessly() -> None:
    for name in ["caf\udce9.py", "plain.py", "back\\slash.py", "mixed\\x41\udcff.py", "ünï.py"]:
        shown = stored_name(name)
        shown.encode("utf-8")  # storable
        assert os_name(shown) == name
    assert stored_name("caf\udce9.py") == "caf\\xe9.py"
    assert stored_name("back\\slash.py") == "back\\\\slash.py"
    assert stored_name("x\\xe9.py") != stored_name("x\udce9.py")  # no two names meet


def test_a_repository_of_hostile_files_indexes_the_rest(outside_and_repo, tmp_path, embedder) -> None:
    outside, repo = outside_and_repo
    (repo / "link.py").symlink_to(outside / "secret.py")
    (repo / "linked_dir").symlink_to(outside)
    os.mkfifo(repo / "pipe.py")
    odd = os.fsdecode(b"caf\xe9.py")
    (repo / odd).write_text("def brew_coffee():\n    return 'espresso'\n")
    (repo / "bad_unreadable.py").symlink_to(repo / "missing.py")
    with Index.open(tmp_path / "index.db", embedder=embedder) as index:
        report = index.index(repo)
        problems = {p.path: (p.status, p.reason) for p in report.problems}
        assert problems == {
            "bad_unreadable.py": ("error", "No such file or directory"),
            "link.py": ("skipped", "a symlink to a path outside the repository (not followed)"),
            "pipe.py": ("skipped", "not a regular file: a named pipe (FIFO)"),
        }
        indexed = {row["path"] for row in index.files() if row["status"] == "indexed"}
        assert indexed == {"add.py", "caf\\xe9.py"}
        assert all("hunter2" not in leaf["text"] for leaf in index.leaves())
        hit = index.query("make espresso coffee").results[0]
        assert hit.path == "caf\\xe9.py"
        # A file swapped for a FIFO between two runs: the unchanged-file check must not block on it.
        (repo / "add.py").unlink()
        os.mkfifo(repo / "add.py")
        again = index.index(repo)
        # caf\xe9.py; the others have no bytes to compare, so they are checked again
        assert again.files_unchanged == 1
        assert ("add.py", "skipped") in {(p.path, p.status) for p in again.problems}
        assert [row["path"] for row in index.files() if row["status"] == "indexed"] == ["caf\\xe9.py"]
