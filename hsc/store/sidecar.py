"""Side files that open a large index fast: a repository's leaf table (its
vectors as a float32 ``.npy`` read memory-mapped, its other columns in an
``.npz``, its scopes read on first use), a hierarchy's group of every leaf,
the HNSW graph over its groups, and its regions with their pooled vectors.

The SQLite database stays the truth; these are caches beside the HNSW files.
Each file's name carries a digest of the stamp of what it was made from
(:meth:`hsc.store.Store.leaf_stamp`, plus the hierarchy's row for the groups,
the graph and the regions),
so a stale file is never read: a changed database asks for another name, and
the missing file is made again from SQLite. Files are written under a
temporary name and renamed, so a killed run leaves none half-written; a
folder that cannot be written just means no cache.
"""

from __future__ import annotations

import glob
import hashlib
import mmap
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Protocol, overload

import numpy as np

from hsc.hierarchy.groups import DefinitionVectors, LeafTable

_SCOPE_SEPARATOR = "\0"
# A side file is written only when the disk has this many times its size free.
SPARE_ROOM = 4


def digest(stamp: str) -> str:
    return hashlib.sha256(stamp.encode()).hexdigest()[:16]


class LazyScopes(Sequence[str]):
    """Scopes read from their file the first time one is asked for: a query
    needs none of them, and 10^6 of them take a while to split."""

    def __init__(self, load: Callable[[], list[str]], count: int) -> None:
        self._load = load
        self._count = count
        self._values: list[str] | None = None

    def _all(self) -> list[str]:
        if self._values is None:
            self._values = self._load()
        return self._values

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        return self._all()[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())


class SavedGraph(Protocol):
    """What :class:`hsc.search.two_stage.MidLevelIndex` offers to be kept here."""

    count: int

    def save(self, path: Path) -> None: ...


class SideFiles:
    """The side files of one database, in ``folder`` (the HNSW files' folder)."""

    def __init__(self, folder: Path, stem: str) -> None:
        self.folder = folder
        self.stem = stem

    def _name(self, kind: str, owner: str, stamp: str, suffix: str) -> Path:
        return self.folder / f"{self.stem}-{owner}-{kind}-{digest(stamp)}{suffix}"

    def _replace_others(self, owner: str, kind: str, keep: str) -> None:
        """Remove this owner's files of ``kind`` made from other stamps (stale)."""
        for path in self.folder.glob(f"{glob.escape(self.stem)}-{owner}-{kind}-*"):
            if digest(keep) not in path.name and not path.name.endswith(".tmp"):
                path.unlink(missing_ok=True)

    def _write(self, path: Path, write: Callable[[Path], None]) -> None:
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            write(temporary)
            temporary.replace(path)
        finally:
            temporary.unlink(missing_ok=True)

    # -- a repository's leaf table ----------------------------------------------------------

    def load_table(self, repository_id: int, stamp: str) -> LeafTable | None:
        """The leaf table saved for exactly this stamp, vectors memory-mapped; None if there is none."""
        owner = f"r{repository_id}"
        columns_path = self._name("leaves", owner, stamp, ".npz")
        vectors_path = self._name("leaves", owner, stamp, ".npy")
        scopes_path = self._name("leaves", owner, stamp, ".scopes")
        try:
            with np.load(columns_path, allow_pickle=False) as columns:
                if str(columns["stamp"]) != stamp:
                    return None
                leaf_ids = columns["leaf_ids"]
                file_index = columns["file_index"]
                paths = columns["paths"].tolist()
                start_lines, end_lines = columns["start_lines"], columns["end_lines"]
                token_counts = columns["token_counts"]
                # A set saved before definition vectors existed was saved for a database without any.
                definition_rows = columns.get("definition_rows")
            # A plain array over the mapped pages (a memmap subclass would leak into every result).
            vectors = (
                np.load(vectors_path, mmap_mode="r").view(np.ndarray)
                if len(leaf_ids)
                else np.zeros((0, 0), np.float32)
            )
            if len(vectors) != len(leaf_ids):
                return None
            definitions = DefinitionVectors()
            if definition_rows is not None and len(definition_rows):
                definition_vectors = np.load(
                    self._name("leaves", owner, stamp, ".definitions.npy"), mmap_mode="r"
                ).view(np.ndarray)
                if len(definition_vectors) != len(definition_rows):
                    return None
                definitions = DefinitionVectors(definition_rows, definition_vectors)
            # Mapped now, read on first use: a writer may replace the file before a scope is
            # asked for, and a mapping (like the vectors') keeps the bytes this stamp was saved with.
            scopes = _mapped(scopes_path)
        except (OSError, ValueError, KeyError):
            return None

        def read_scopes() -> list[str]:
            return scopes[:].decode("utf-8").split(_SCOPE_SEPARATOR) if leaf_ids.size else []

        return LeafTable(
            leaf_ids=leaf_ids,
            file_index=file_index,
            paths=paths,
            scopes=LazyScopes(read_scopes, len(leaf_ids)),  # type: ignore[arg-type]
            start_lines=start_lines,
            end_lines=end_lines,
            token_counts=token_counts,
            vectors=vectors,
            definitions=definitions,
        )

    def save_table(self, repository_id: int, stamp: str, table: LeafTable) -> bool:
        """Save ``table`` as read at ``stamp``; False when the folder cannot be written."""
        owner = f"r{repository_id}"
        scopes = _SCOPE_SEPARATOR.join(table.scopes)
        if scopes.count(_SCOPE_SEPARATOR) != max(len(table) - 1, 0):
            return False  # a scope holding the separator could not be read back
        # Written only with room to spare: a cache must never take the space the database needs.
        needed = (
            (table.vectors.size + table.definitions.vectors.size) * 4 + len(scopes) + 64 * len(table) + 4096
        )
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._replace_others(owner, "leaves", stamp)  # stale copies go first, freeing their space
            if shutil.disk_usage(self.folder).free < SPARE_ROOM * needed:
                return False
            if len(table):
                vectors = np.ascontiguousarray(table.vectors, dtype=np.float32)
                self._write(self._name("leaves", owner, stamp, ".npy"), lambda p: _save_npy(p, vectors))
            if len(table.definitions):
                extra = np.ascontiguousarray(table.definitions.vectors, dtype=np.float32)
                self._write(
                    self._name("leaves", owner, stamp, ".definitions.npy"), lambda p: _save_npy(p, extra)
                )
            self._write(
                self._name("leaves", owner, stamp, ".scopes"),
                lambda p: p.write_text(scopes, encoding="utf-8"),
            )
            # The columns last: they name the stamp, so they are what makes the set whole.
            self._write(
                self._name("leaves", owner, stamp, ".npz"),
                lambda p: _save_npz(
                    p,
                    stamp=np.array(stamp),
                    leaf_ids=table.leaf_ids,
                    file_index=table.file_index,
                    paths=np.array(table.paths, dtype=str),
                    start_lines=table.start_lines,
                    end_lines=table.end_lines,
                    token_counts=table.token_counts,
                    definition_rows=table.definitions.rows,
                ),
            )
        except OSError:
            # A set left incomplete (a full disk) is never read, so it should not hold space either.
            for path in self.folder.glob(f"{glob.escape(self.stem)}-{owner}-leaves-{digest(stamp)}*"):
                path.unlink(missing_ok=True)
            return False
        return True

    # -- a hierarchy's group of every leaf -----------------------------------------------------

    def load_owners(self, hierarchy_id: int, stamp: str, count: int) -> np.ndarray | None:
        try:
            owners = np.load(self._name("owners", f"h{hierarchy_id}", stamp, ".npy"), allow_pickle=False)
        except (OSError, ValueError):
            return None
        return owners if len(owners) == count else None

    def save_owners(self, hierarchy_id: int, stamp: str, owners: np.ndarray) -> None:
        owner = f"h{hierarchy_id}"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._write(self._name("owners", owner, stamp, ".npy"), lambda p: _save_npy(p, owners))
            self._replace_others(owner, "owners", stamp)
        except OSError:
            pass

    # -- a hierarchy's regions (hsc.search.regions): their columns and pooled vectors -------------

    def load_regions(self, hierarchy_id: int, stamp: str) -> tuple[dict[str, np.ndarray], np.ndarray] | None:
        """The region columns and vectors saved for exactly this stamp (vectors memory-mapped);
        None if there are none or they do not match."""
        owner = f"h{hierarchy_id}"
        try:
            arrays = self._stamped_arrays("regions", owner, stamp)
            if arrays is None:
                return None
            vectors = np.load(self._name("regions", owner, stamp, ".npy"), mmap_mode="r").view(np.ndarray)
        except (OSError, ValueError, KeyError):
            return None
        columns = [array for array in arrays.values() if array.ndim == 1]  # the 2-D ones: other vectors
        if vectors.ndim != 2 or any(len(column) != len(vectors) for column in columns):
            return None
        return arrays, vectors

    def save_regions(
        self, hierarchy_id: int, stamp: str, arrays: dict[str, np.ndarray], vectors: np.ndarray
    ) -> bool:
        """Save a hierarchy's regions made at ``stamp``; older ones of it go first. False when the
        folder cannot be written or has no room to spare (the regions are then pooled per process)."""
        owner = f"h{hierarchy_id}"
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        needed = vectors.nbytes + sum(column.nbytes for column in arrays.values()) + 4096
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._replace_others(owner, "regions", stamp)
            if not len(vectors) or shutil.disk_usage(self.folder).free < SPARE_ROOM * needed:
                return False
            self._write(self._name("regions", owner, stamp, ".npy"), lambda p: _save_npy(p, vectors))
            # The columns last: they name the stamp, so they are what makes the pair whole.
            self._write(
                self._name("regions", owner, stamp, ".npz"),
                lambda p: _save_npz(p, stamp=np.array(stamp), **arrays),
            )
        except OSError:
            for path in self.folder.glob(f"{glob.escape(self.stem)}-{owner}-regions-{digest(stamp)}*"):
                path.unlink(missing_ok=True)
            return False
        return True

    # -- a hierarchy's region terms (hsc.search.region_terms): sparse term counts, vocabulary ----

    def load_region_terms(self, hierarchy_id: int, stamp: str) -> dict[str, np.ndarray] | None:
        """The region term arrays saved for exactly this stamp; None if there are none."""
        try:
            return self._stamped_arrays("region-terms", f"h{hierarchy_id}", stamp)
        except (OSError, ValueError, KeyError):
            return None

    def _stamped_arrays(self, kind: str, owner: str, stamp: str) -> dict[str, np.ndarray] | None:
        """The arrays of ``owner``'s ``kind`` file saved at ``stamp`` (None when the file names
        another); raises what reading it raises, for the caller to treat as no file."""
        with np.load(self._name(kind, owner, stamp, ".npz"), allow_pickle=False) as saved:
            if str(saved["stamp"]) != stamp:
                return None
            return {name: saved[name] for name in saved.files if name != "stamp"}

    def save_region_terms(self, hierarchy_id: int, stamp: str, arrays: dict[str, np.ndarray]) -> bool:
        """Save a hierarchy's region terms made at ``stamp`` (older ones go first); False when the
        folder cannot be written or has no room to spare (they are then made per process)."""
        owner = f"h{hierarchy_id}"
        path = self._name("region-terms", owner, stamp, ".npz")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._replace_others(owner, "region-terms", stamp)
            needed = sum(array.nbytes for array in arrays.values()) + 4096
            if shutil.disk_usage(self.folder).free < SPARE_ROOM * needed:
                return False
            self._write(path, lambda p: _save_npz(p, stamp=np.array(stamp), **arrays))
        except OSError:
            path.unlink(missing_ok=True)
            return False
        return True

    # -- the HNSW graph over a hierarchy's groups ----------------------------------------------

    def graph_path(self, hierarchy_id: int, stamp: str) -> Path:
        """The HNSW file of this hierarchy at exactly this state (same stamp as its owners): an
        update in place keeps the id and may keep the number of groups, never the stamp."""
        return self._name("hnsw", f"h{hierarchy_id}", stamp, ".bin")

    def save_graph(self, hierarchy_id: int, stamp: str, graph: SavedGraph, dimension: int) -> bool:
        """Save ``graph`` made at ``stamp``; older ones of this hierarchy go first. False when
        the folder cannot be written or has no room to spare."""
        owner = f"h{hierarchy_id}"
        # hnswlib's file: each element's vector, its level-0 links (2M), label and header.
        needed = graph.count * (4 * dimension + 2 * 16 * 4 + 64) + 4096
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._replace_others(owner, "hnsw", stamp)
            self._unnamed_graph(hierarchy_id).unlink(missing_ok=True)
            if shutil.disk_usage(self.folder).free < SPARE_ROOM * needed:
                return False
            graph.save(self.graph_path(hierarchy_id, stamp))
        except (OSError, RuntimeError):  # hnswlib reports a failed write as a RuntimeError
            self.graph_path(hierarchy_id, stamp).unlink(missing_ok=True)
            return False
        return True

    def _unnamed_graph(self, hierarchy_id: int) -> Path:
        """Where hsc kept a hierarchy's graph before it was named by its stamp."""
        return self.folder / f"{self.stem}-h{hierarchy_id}.bin"

    def forget_hierarchy(self, hierarchy_id: int) -> None:
        """Remove every side file of a hierarchy (owners, graphs, regions, their terms; any state)."""
        for kind in ("owners", "hnsw", "regions", "region-terms"):
            for path in self.folder.glob(f"{glob.escape(self.stem)}-h{hierarchy_id}-{kind}-*"):
                path.unlink(missing_ok=True)
        self._unnamed_graph(hierarchy_id).unlink(missing_ok=True)


def _mapped(path: Path) -> bytes | mmap.mmap:
    """A file's bytes, mapped read-only (an empty file, which cannot be mapped, as b"")."""
    with path.open("rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            return b""
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


def _save_npy(path: Path, array: np.ndarray) -> None:
    with path.open("wb") as handle:  # a file object: np.save would add ".npy" to a name
        np.save(handle, array, allow_pickle=False)


def _save_npz(path: Path, **arrays: np.ndarray) -> None:
    with path.open("wb") as handle:
        np.savez(handle, **arrays)
