"""The stages wired together over a :class:`Store`: index a repository,
then build a named hierarchy with summaries.

Side effects live here and in the store; the stages themselves stay pure.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from hsc.chunk.ingest import walk_repository
from hsc.chunk.reading import read_file_bytes, stored_name
from hsc.chunk.tokens import TokenCounter
from hsc.embed import Embedder
from hsc.embed.definitions import file_definition_texts
from hsc.embed.pool import resolve_processes
from hsc.hierarchy.groups import HierarchyPlan, LeafTable, plan_hierarchy
from hsc.hierarchy.summarize import Summarizer, SummaryRequest
from hsc.index.estimate import record_rate
from hsc.index.file_pool import FileTask, load_files, resolve_workers
from hsc.index.outlines import mark_outlines_pending, outlines_mark, sync_outlines
from hsc.model import FileReport, ParsedFile, common_scope, content_hash
from hsc.params import CHUNK_FIELDS, Parameters, Settings
from hsc.search.lexical import leaf_term_text
from hsc.store import Store


@dataclass(frozen=True)
class Progress:
    stage: str  # "scan", "files", "embed", "hierarchy" or "summaries"
    done: int
    total: int
    message: str = ""


ProgressCallback = Callable[[Progress], None]


class Executor(Protocol):
    """Where files are cut and embedded when not in this machine's processes (hsc.index.ray_executor)."""

    @property
    def processes(self) -> int:
        """Encoders working at once: the embedding window grows with them."""
        ...

    def start(self) -> None: ...

    def load_files(self, root: Path, tasks: list[FileTask], settings: Settings) -> Iterator[ParsedFile]: ...


def _ignore(_: Progress) -> None:
    pass


@dataclass
class IndexReport:
    repository_id: int
    root: str
    files_seen: int = 0
    files_parsed: int = 0
    files_unchanged: int = 0
    files_skipped: int = 0
    files_failed: int = 0
    files_removed: int = 0
    leaves: int = 0
    leaves_embedded: int = 0
    leaves_from_cache: int = 0
    definitions_embedded: int = 0  # definition vectors (hsc.embed.definitions) made in this run
    outlines: int = 0  # outline vectors the repository has (hsc.index.outlines)
    outlines_embedded: int = 0  # of them, embedded in this run
    seconds: float = 0.0
    problems: list[FileReport] = field(default_factory=list)  # skipped and failed files, with reasons
    # Why the summaries of the hierarchies rebuilt in this run are not what was asked for ("" when they are).
    summariser_note: str = ""
    # Files written again or removed: the only ones whose groups and documents change.
    changed_paths: list[str] = field(default_factory=list)
    # Texts embedded in this run (leaves and their definitions) that are longer than the encoder's
    # window (``embedding_window`` word pieces) and so embedded from their start only; None: the
    # encoder does not count (torch).
    leaves_truncated: int | None = None
    embedding_window: int = 0
    bytes_parsed: int = 0  # of the files parsed in this run (the machine's rate: hsc.index.estimate)

    @property
    def changed(self) -> bool:
        return bool(self.files_parsed or self.files_removed)

    def to_json(self) -> dict[str, object]:
        """The counts, the time and the problems, as ``index --json`` prints them."""
        counts = {k: v for k, v in asdict(self).items() if k not in ("problems", "seconds")}
        return {
            **counts,
            "seconds": round(self.seconds, 3),
            "problems": [{"path": p.path, "status": p.status, "reason": p.reason} for p in self.problems],
        }


def ingestion_key(params: Parameters, settings: Settings) -> str:
    """Everything that decides a file's leaves; a file is re-cut when it changes (facts=4: JavaScript
    functions given by assignment are definitions; 5: a TypeScript function's doc above its first
    overload signature is its doc)."""
    return (
        f"{params.chunk_key()};tok={settings.tokenizer};"
        f"maxbytes={settings.max_file_bytes};maxline={settings.max_line_length};facts=5;data=1"
    )


def _file_hash(root: Path, rel_path: str, limit: int) -> str | None:
    """SHA-1 of the file as indexing would read it (safely, at most ``limit`` bytes)."""
    raw = read_file_bytes(root, rel_path, limit)
    return None if raw.data is None else hashlib.sha1(raw.data).hexdigest()


@dataclass
class PendingChanges:
    """Files whose content on disk differs from what the index holds."""

    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.added) + len(self.modified) + len(self.removed)


EXCLUDES_KEY = "exclude_patterns:{repository_id}"


def stored_excludes(store: Store, repository_id: int) -> list[str]:
    """The ``--exclude`` patterns a repository was last indexed with (kept for re-runs)."""
    return json.loads(store.meta(EXCLUDES_KEY.format(repository_id=repository_id)) or "[]")  # type: ignore[no-any-return]


def pending_changes(
    store: Store, repository_id: int, root: Path, settings: Settings | None = None
) -> PendingChanges:
    """What the next incremental index of ``root`` would re-read: the same
    walk and content hashes as :func:`index_repository`, nothing written."""
    root = root.resolve()
    limit = (settings or Settings()).max_file_bytes
    paths = list(walk_repository(root, excludes=stored_excludes(store, repository_id)))
    known = store.file_states(repository_id)
    changes = PendingChanges(removed=sorted(set(known) - {stored_name(path) for path in paths}))
    for rel_path in paths:
        name = stored_name(rel_path)
        state = known.get(name)
        if state is None:
            changes.added.append(name)
        elif state["content_hash"] != _file_hash(root, rel_path, limit):
            changes.modified.append(name)
    return changes


def index_repository(
    store: Store,
    root: Path,
    params: Parameters,
    settings: Settings,
    counter: TokenCounter,
    get_embedder: Callable[[], Embedder],
    progress: ProgressCallback | None = None,
    vector_key: str | None = None,
    excludes: list[str] | None = None,
    executor: Executor | None = None,
) -> IndexReport:
    """Bring the store's copy of ``root`` up to date, embedding only leaves
    whose (model, content hash) is not cached yet. ``vector_key`` names the
    encoder in the vector cache (default: the model's name, the torch backend's key).

    Files are written one transaction each, after their vectors are saved, so
    a killed run resumes where it stopped: the next run finds those files
    unchanged and carries on with the rest.

    ``excludes``: gitignore patterns of paths to leave out (besides ``.hscignore``), kept
    with the repository for the next runs; None: the ones kept.

    ``executor``: cuts the files in place of this machine's worker processes (``get_embedder``
    then gives its encoder); started only when there are files to cut.
    """
    progress = progress or _ignore
    started = time.perf_counter()
    root = root.resolve()
    repository_id = store.upsert_repository(str(root), root.name)
    report = IndexReport(repository_id, str(root))
    if excludes is None:
        excludes = stored_excludes(store, repository_id)
    else:
        store.set_meta(EXCLUDES_KEY.format(repository_id=repository_id), json.dumps(list(excludes)))
    model = vector_key or settings.embedding_model
    key = ingestion_key(params, settings)

    progress(Progress("scan", 0, 0, f"scanning {root}"))
    walk_problems: list[FileReport] = []
    paths = list(
        walk_repository(
            root,
            on_error=lambda path, reason: walk_problems.append(FileReport(path, None, "error", reason)),
            excludes=excludes,
        )
    )
    known = store.file_states(repository_id)
    report.files_seen = len(paths)
    progress(Progress("scan", len(paths), len(paths), f"{len(paths)} files"))

    # Unchanged files first (their bytes hashed here), then the rest cut in
    # order, by worker processes when there are many, while this process embeds.
    tasks: list[FileTask] = []
    done = 0
    for rel_path in paths:
        name = stored_name(rel_path)
        state = known.get(name)
        same_settings = state and state["chunk_key"] == key and state["embedding_model"] == model
        raw = None
        if same_settings and state["content_hash"]:
            # The same safe read as ingestion: type and size first, never more than the limit.
            raw = read_file_bytes(root, rel_path, settings.max_file_bytes)
            if raw.data is not None and hashlib.sha1(raw.data).hexdigest() == state["content_hash"]:
                report.files_unchanged += 1
                if state["status"] != "indexed":
                    report.files_skipped += 1
                    report.problems.append(
                        FileReport(name, state["language"], state["status"], state["reason"], state["size"])
                    )
                done += 1
                progress(Progress("files", done, len(paths), name))
                continue
        tasks.append(FileTask(rel_path, raw))

    # The outline rows matched every file before this run when its mark was this option's value:
    # then only the files it writes or removes need theirs made again.
    outlines_before = outlines_mark(store, repository_id)
    if tasks:
        mark_outlines_pending(store, repository_id)
    if executor is not None and tasks:
        executor.start()
    pending: list[ParsedFile] = []
    pending_leaves = 0
    # Leaves embedded together: full batches across small files, enough of them for every encoder process.
    # (Always this size: on an accelerator onnx-int8 quantises each batch with its own range, so
    # other windows would give other vectors. On the CPU each row runs alone and they cannot.)
    encoders = executor.processes if executor is not None else resolve_processes(settings.encode_processes)
    window = max(params.embedding_batch_size * 8, 64) * encoders

    loading = 0.0  # seconds spent making the encoder (an ONNX export the first time): not the rate's

    def loaded_embedder() -> Embedder:
        nonlocal loading
        asked = time.perf_counter()
        try:
            return get_embedder()
        finally:
            loading += time.perf_counter() - asked

    def flush() -> None:
        nonlocal pending, pending_leaves
        _embed_and_write(store, repository_id, pending, key, model, params, loaded_embedder, report, progress)
        pending, pending_leaves = [], 0

    if executor is not None:
        loaded = executor.load_files(root, tasks, settings)
    else:
        loaded = load_files(root, tasks, params, settings, counter, resolve_workers(settings.index_workers))
    for parsed in loaded:
        if parsed.report.status == "indexed":
            report.bytes_parsed += parsed.report.size
        if parsed.report.status == "skipped":
            report.files_skipped += 1
            report.problems.append(parsed.report)
        elif parsed.report.status == "error":
            report.files_failed += 1
            report.problems.append(parsed.report)
        pending.append(parsed)
        pending_leaves += len(parsed.leaves)
        if pending_leaves >= window:
            flush()
        done += 1
        progress(Progress("files", done, len(paths), parsed.report.path))
    flush()

    for problem in walk_problems:
        report.files_failed += 1
        report.problems.append(problem)
    gone = sorted(set(known) - {stored_name(path) for path in paths})
    if gone:
        mark_outlines_pending(store, repository_id)
        store.delete_files(repository_id, gone)
        report.files_removed = len(gone)
        report.changed_paths += gone
    # Leaves written by an hsc from before terms were indexed with them get theirs now.
    store.sync_leaf_terms(repository_id, leaf_term_text)
    report.outlines, report.outlines_embedded = sync_outlines(
        store,
        repository_id,
        model,
        params,
        loaded_embedder,
        bool(report.changed_paths),
        report.changed_paths if outlines_before == params.region_outlines else None,
    )
    report.leaves = sum(f["leaf_count"] for f in store.files(repository_id))
    store.update_repository(
        repository_id,
        embedding_model=model,
        tokenizer=settings.tokenizer,
        chunk_key=key,
        parameters=json.dumps({name: getattr(params, name) for name in CHUNK_FIELDS}),
        indexed_at=time.time(),
    )
    report.seconds = time.perf_counter() - started
    record_rate(store, report.leaves_embedded, report.seconds - loading)
    return report


def _embed_and_write(
    store: Store,
    repository_id: int,
    parsed_files: list[ParsedFile],
    key: str,
    model: str,
    params: Parameters,
    get_embedder: Callable[[], Embedder],
    report: IndexReport,
    progress: ProgressCallback,
) -> None:
    leaves = [leaf for parsed in parsed_files for leaf in parsed.leaves]
    # The texts each leaf is embedded by besides its own (hsc.embed.definitions), file by file,
    # each leaf's as {content hash: text}.
    held = [
        [
            {content_hash(text): text for text in texts}
            for texts in file_definition_texts(p.leaves, p.definitions)
        ]
        if params.definition_vectors == "best"
        else []
        for p in parsed_files
    ]
    extra = {h: text for per_leaf in held for texts in per_leaf for h, text in texts.items()}
    cached = store.cached_vectors(model, [leaf.content_hash for leaf in leaves] + list(extra))
    missing: dict[str, str] = {}
    for leaf in leaves:
        if leaf.content_hash not in cached:
            missing.setdefault(leaf.content_hash, leaf.embedding_text)
    leaves_missing = len(missing)
    for text_hash, text in extra.items():
        if text_hash not in cached:
            missing.setdefault(text_hash, text)
    report.leaves_from_cache += len(leaves) - sum(1 for leaf in leaves if leaf.content_hash in missing)
    if missing:
        embedder = get_embedder()
        texts = list(missing.values())
        truncated_before = getattr(embedder, "truncated", None)
        what = "leaves" if len(texts) == leaves_missing else "leaves and definitions"
        vectors = embedder.embed(
            texts,
            batch_size=params.embedding_batch_size,
            on_batch=lambda done, total: progress(
                Progress("embed", done, total, f"batch {done}/{total} of {len(texts)} {what}")
            ),
        )
        if truncated_before is not None:
            report.leaves_truncated = (report.leaves_truncated or 0) + embedder.truncated - truncated_before
            report.embedding_window = int(getattr(embedder, "max_seq_length", 0))
        # Vectors first: a file row is only written once its vectors exist.
        store.save_vectors(model, dict(zip(missing, vectors)))
        report.leaves_embedded += leaves_missing
        report.definitions_embedded += len(missing) - leaves_missing
    for parsed, per_leaf in zip(parsed_files, held):
        store.replace_file(
            repository_id,
            parsed.report,
            parsed.leaves,
            key,
            model,
            parsed.definitions,
            parsed.facts,
            terms_of=leaf_term_text,
            bindings=parsed.bindings,
            definition_hashes=[list(texts) for texts in per_leaf],
        )
        report.changed_paths.append(parsed.report.path)
        if parsed.report.status == "indexed":
            report.files_parsed += 1


# -- hierarchy -------------------------------------------------------------------


def summary_budget(params: Parameters) -> int:
    """Summaries are a third of the merged limit, between 64 and 256 tokens."""
    return max(64, min(256, params.maximum_merged_chunk_token_length // 3))


@dataclass
class HierarchyRows:
    """A planned hierarchy as the store writes it; ``mid[i]["parent"]`` and
    ``memberships`` (leaf id, mid row) index into these lists."""

    plan: HierarchyPlan
    mid: list[dict[str, Any]]
    top: list[dict[str, Any]]
    memberships: list[tuple[int, int]]
    counts: dict[str, int]


def build_hierarchy(
    store: Store,
    repository_id: int,
    table: LeafTable,
    params: Parameters,
    name: str,
    model: str,
    summarizer: Summarizer,
    progress: ProgressCallback | None = None,
) -> tuple[int, HierarchyPlan]:
    """Plan the hierarchy, summarise what needs it (cached), and store it."""
    rows = plan_rows(store, repository_id, table, params, summarizer, progress or _ignore)
    hierarchy_id = store.save_hierarchy(
        repository_id, name, asdict(params), model, rows.counts, rows.mid, rows.top, rows.memberships
    )
    return hierarchy_id, rows.plan


def update_hierarchy(
    store: Store,
    hierarchy_id: int,
    repository_id: int,
    changed: LeafTable,
    changed_paths: list[str],
    params: Parameters,
    summarizer: Summarizer,
    progress: ProgressCallback | None = None,
) -> HierarchyPlan:
    """Re-plan only the files in ``changed_paths`` (``changed`` holds their
    leaves) and swap their groups and documents into the stored hierarchy.

    Exact: boundaries fall at every file edge and smoothing never reaches
    across one, so a file's groups depend on its own leaves alone."""
    rows = plan_rows(store, repository_id, changed, params, summarizer, progress or _ignore)
    store.replace_hierarchy_files(
        hierarchy_id, repository_id, changed_paths, rows.mid, rows.top, rows.memberships
    )
    return rows.plan


def plan_rows(
    store: Store,
    repository_id: int,
    table: LeafTable,
    params: Parameters,
    summarizer: Summarizer,
    progress: ProgressCallback,
) -> HierarchyRows:
    """Plan the hierarchy of ``table`` and make its rows, with summaries (cached)."""
    plan = plan_hierarchy(table, params)
    progress(Progress("hierarchy", 1, 1, f"{plan.group_count} groups in {plan.document_count} files"))
    leaf_rows = store.leaves_by_id(table.leaf_ids.tolist())
    files = {row["path"]: row for row in store.files(repository_id)}
    budget = summary_budget(params)

    definitions = store.definitions(repository_id)
    leaf_facts = store.leaf_facts(table.leaf_ids.tolist())

    def request(
        kind: str, path: str, start: int, end: int, first_line: int, last_line: int
    ) -> SummaryRequest:
        """What the summariser gets for leaves ``start..end`` of the table: their text and the
        stored facts of the syntax tree (no file is parsed again)."""
        ids = table.leaf_ids[start:end].tolist()
        scopes = [leaf_rows[i]["scope"] for i in ids]
        facts = [leaf_facts.get(i) for i in ids]
        return SummaryRequest(
            kind,
            path,
            files[path]["language"] or "text",
            common_scope(scopes),
            [leaf_rows[i]["text"] for i in ids],
            scopes,
            budget,
            tuple(d for d in definitions.get(path, []) if first_line <= d.start_line <= last_line),
            tuple(f for f in facts if f is not None) if all(f is not None for f in facts) else (),
        )

    requests: list[tuple[str, int, SummaryRequest]] = []
    needs = plan.needs_summary
    for ordinal in range(plan.group_count):
        if needs[ordinal]:
            group = plan.group(ordinal)
            path = table.paths[group.file_index]
            made_request = request(
                "group", path, group.leaf_start, group.leaf_end, group.start_line, group.end_line
            )
            requests.append(("mid", ordinal, made_request))
    for ordinal in range(plan.document_count):
        document = plan.document(ordinal)
        made_request = request(
            "document",
            document.path,
            document.leaf_start,
            document.leaf_end,
            document.start_line,
            document.end_line,
        )
        requests.append(("top", ordinal, made_request))

    made: dict[tuple[str, int], tuple[str, str, str]] = {}
    for done, (level, ordinal, request) in enumerate(requests, start=1):
        digest = request.content_hash()
        if store.summary(summarizer.name, summarizer.model, digest) is not None:
            made[(level, ordinal)] = (summarizer.name, summarizer.model, digest)
        else:
            summary = summarizer.summarise(request)
            store.save_summary(summary.summariser, summary.model, digest, summary.text, summary.note)
            made[(level, ordinal)] = (summary.summariser, summary.model, digest)
        progress(Progress("summaries", done, len(requests), request.path))

    def summary_columns(level: str, ordinal: int) -> dict[str, str | None]:
        summariser, summary_model, digest = made.get((level, ordinal), (None, None, None))
        return {"summariser": summariser, "summary_model": summary_model, "summary_hash": digest}

    top_rows = []
    for ordinal in range(plan.document_count):
        document = plan.document(ordinal)
        top_rows.append(
            {
                "file_id": files[document.path]["id"],
                "start_line": document.start_line,
                "end_line": document.end_line,
                "token_count": document.token_count,
                "leaf_count": document.leaf_end - document.leaf_start,
                **summary_columns("top", ordinal),
            }
        )
    document_of_group = np.repeat(
        np.arange(plan.document_count), plan.document_group_ends - plan.document_group_starts
    )
    mid_rows = []
    for ordinal in range(plan.group_count):
        group = plan.group(ordinal)
        mid_rows.append(
            {
                "file_id": files[table.paths[group.file_index]]["id"],
                "start_line": group.start_line,
                "end_line": group.end_line,
                "token_count": group.token_count,
                "leaf_count": group.leaf_count,
                "parent": int(document_of_group[ordinal]),
                **summary_columns("mid", ordinal),
            }
        )
    group_of_leaf = plan.group_of_leaf()
    memberships = list(zip(table.leaf_ids.tolist(), group_of_leaf.tolist()))
    counts = {
        "leaves": len(table),
        "groups": plan.group_count,
        "documents": plan.document_count,
        "topic_boundaries": plan.segmentation.topic_boundary_count,
    }
    return HierarchyRows(plan, mid_rows, top_rows, memberships, counts)
