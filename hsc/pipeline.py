"""The stages wired together over a :class:`Store`: index a repository,
then build a named hierarchy with summaries.

Side effects live here and in the store; the stages themselves stay pure.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hsc.embed import Embedder
from hsc.hierarchy import HierarchyPlan, LeafTable, plan_hierarchy
from hsc.ingest import load_file, walk_repository
from hsc.model import FileReport, ParsedFile, common_scope
from hsc.params import Parameters, Settings
from hsc.store import Store
from hsc.summarize import Summarizer, SummaryRequest
from hsc.tokens import TokenCounter


@dataclass(frozen=True)
class Progress:
    stage: str  # "scan", "files", "embed", "hierarchy" or "summaries"
    done: int
    total: int
    message: str = ""


ProgressCallback = Callable[[Progress], None]


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
    seconds: float = 0.0
    problems: list[FileReport] = field(default_factory=list)  # skipped and failed files, with reasons
    # Files written again or removed: the only ones whose groups and documents change.
    changed_paths: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.files_parsed or self.files_removed)


def ingestion_key(params: Parameters, settings: Settings) -> str:
    """Everything that decides a file's leaves; a file is re-cut when it changes."""
    return (
        f"{params.chunk_key()};tok={settings.tokenizer};"
        f"maxbytes={settings.max_file_bytes};maxline={settings.max_line_length}"
    )


def _file_hash(path: Path) -> str | None:
    try:
        return hashlib.sha1(path.read_bytes()).hexdigest()
    except OSError:
        return None


def index_repository(
    store: Store,
    root: Path,
    params: Parameters,
    settings: Settings,
    counter: TokenCounter,
    get_embedder: Callable[[], Embedder],
    progress: ProgressCallback | None = None,
    vector_key: str | None = None,
) -> IndexReport:
    """Bring the store's copy of ``root`` up to date, embedding only leaves
    whose (model, content hash) is not cached yet. ``vector_key`` names the
    encoder in the vector cache (default: the model's name, the torch backend's key).

    Files are written one transaction each, after their vectors are saved, so
    a killed run resumes where it stopped: the next run finds those files
    unchanged and carries on with the rest.
    """
    progress = progress or _ignore
    started = time.perf_counter()
    root = root.resolve()
    repository_id = store.upsert_repository(str(root), root.name)
    report = IndexReport(repository_id, str(root))
    model = vector_key or settings.embedding_model
    key = ingestion_key(params, settings)

    progress(Progress("scan", 0, 0, f"scanning {root}"))
    walk_problems: list[FileReport] = []
    paths = list(
        walk_repository(
            root, on_error=lambda path, reason: walk_problems.append(FileReport(path, None, "error", reason))
        )
    )
    known = store.file_states(repository_id)
    report.files_seen = len(paths)
    progress(Progress("scan", len(paths), len(paths), f"{len(paths)} files"))

    pending: list[ParsedFile] = []
    pending_leaves = 0
    window = max(params.embedding_batch_size * 8, 64)

    def flush() -> None:
        nonlocal pending, pending_leaves
        _embed_and_write(store, repository_id, pending, key, model, params, get_embedder, report, progress)
        pending, pending_leaves = [], 0

    for number, rel_path in enumerate(paths, start=1):
        state = known.get(rel_path)
        same_settings = state and state["chunk_key"] == key and state["embedding_model"] == model
        if same_settings and state["content_hash"] and state["content_hash"] == _file_hash(root / rel_path):
            report.files_unchanged += 1
            if state["status"] != "indexed":
                report.files_skipped += 1
                report.problems.append(
                    FileReport(rel_path, state["language"], state["status"], state["reason"], state["size"])
                )
            progress(Progress("files", number, len(paths), rel_path))
            continue
        parsed = load_file(root, rel_path, params, settings, counter)
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
        progress(Progress("files", number, len(paths), rel_path))
    flush()

    for problem in walk_problems:
        report.files_failed += 1
        report.problems.append(problem)
    gone = sorted(set(known) - set(paths))
    if gone:
        store.delete_files(repository_id, gone)
        report.files_removed = len(gone)
        report.changed_paths += gone
    report.leaves = sum(f["leaf_count"] for f in store.files(repository_id))
    store.update_repository(
        repository_id,
        embedding_model=model,
        tokenizer=settings.tokenizer,
        chunk_key=key,
        parameters=json.dumps(
            {
                "minimum_chunk_token_length": params.minimum_chunk_token_length,
                "maximum_chunk_token_length": params.maximum_chunk_token_length,
            }
        ),
        indexed_at=time.time(),
    )
    report.seconds = time.perf_counter() - started
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
    cached = store.cached_vectors(model, (leaf.content_hash for leaf in leaves))
    missing: dict[str, str] = {}
    for leaf in leaves:
        if leaf.content_hash not in cached:
            missing.setdefault(leaf.content_hash, leaf.embedding_text)
    report.leaves_from_cache += len(leaves) - sum(1 for leaf in leaves if leaf.content_hash in missing)
    if missing:
        embedder = get_embedder()
        texts = list(missing.values())
        vectors = embedder.embed(
            texts,
            batch_size=params.embedding_batch_size,
            on_batch=lambda done, total: progress(
                Progress("embed", done, total, f"batch {done}/{total} of {len(texts)} leaves")
            ),
        )
        # Vectors first: a file row is only written once its vectors exist.
        store.save_vectors(model, dict(zip(missing, vectors)))
        report.leaves_embedded += len(missing)
    for parsed in parsed_files:
        store.replace_file(repository_id, parsed.report, parsed.leaves, key, model)
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

    def leaf_texts(start: int, end: int) -> tuple[list[str], list[str]]:
        ids = table.leaf_ids[start:end].tolist()
        return [leaf_rows[i]["text"] for i in ids], [leaf_rows[i]["scope"] for i in ids]

    requests: list[tuple[str, int, SummaryRequest]] = []
    needs = plan.needs_summary
    for ordinal in range(plan.group_count):
        if needs[ordinal]:
            group = plan.group(ordinal)
            texts, scopes = leaf_texts(group.leaf_start, group.leaf_end)
            path = table.paths[group.file_index]
            requests.append(
                (
                    "mid",
                    ordinal,
                    SummaryRequest(
                        "group",
                        path,
                        files[path]["language"] or "text",
                        common_scope(scopes),
                        texts,
                        scopes,
                        budget,
                    ),
                )
            )
    for ordinal in range(plan.document_count):
        document = plan.document(ordinal)
        texts, scopes = leaf_texts(document.leaf_start, document.leaf_end)
        requests.append(
            (
                "top",
                ordinal,
                SummaryRequest(
                    "document",
                    document.path,
                    files[document.path]["language"] or "text",
                    common_scope(scopes),
                    texts,
                    scopes,
                    budget,
                ),
            )
        )

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
