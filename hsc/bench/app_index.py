"""The index the app benchmark drives: a synthetic repository written
straight through the :class:`~hsc.store.Store` (no embedding), or a real
folder indexed once and kept."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from hsc.model import Definition, FileReport, ImportBinding, Leaf, LeafFacts
from hsc.params import Parameters, Settings
from hsc.search.lexical import leaf_term_text


def synthetic_leaf(path: str, scope: str, line: int, tokens: int, number: int) -> Leaf:
    body = "\n".join(f"    value_{k} = compute_{number}(value_{k - 1}, {k})" for k in range(1, 9))
    text = f"def {scope.rsplit('.', 1)[-1]}(value_0):\n{body}\n    return value_8\n"
    return Leaf(
        path=path,
        language="python",
        node_type="function_definition",
        scope=scope,
        start_byte=0,
        end_byte=len(text),
        start_line=line,
        end_line=line + 10,
        text=text,
        token_count=tokens,
    )


def synthetic_facts(
    paths: list[str], number: int, leaves: list[Leaf], first_row: int
) -> tuple[list[Definition], list[LeafFacts], list[ImportBinding]]:
    """Facts for a synthetic file, so that context packs have uses to resolve: each leaf's function
    uses the one before it, the first one the previous file's last, imported by name."""
    from hsc.chunk.parse import module_name

    module = module_name(paths[number])
    definitions, facts = [], []
    for offset, leaf in enumerate(leaves):
        name = f"function_{first_row + offset}"
        signature = f"def {name}(value_0)"
        definitions.append(
            Definition("function", name, f"{module}.{name}", signature, "", leaf.start_line, leaf.end_line)
        )
        facts.append(LeafFacts((), (name,), (f"function_{first_row + offset - 1}", "value_0")))
    bindings = []
    if number and first_row:
        previous = f"function_{first_row - 1}"
        bindings.append(ImportBinding(previous, module_name(paths[number - 1]), previous, 0, 1))
    return definitions, facts, bindings


def write_synthetic_index(
    database: Path, leaves: int = 20_000, seed: int = 0, settings: Settings | None = None
) -> dict[str, Any]:
    """A repository of ``leaves`` synthetic leaves in files of 5 to 60 leaves,
    in folders of about 20 files, with topic-structured vectors (as
    :func:`hsc.bench.perf.synthetic_table`), and its ``default`` hierarchy.

    Written through the Store as the pipeline writes a real one, so the app
    cannot tell the difference; nothing is embedded.
    """
    from hsc.api import CHUNK_FIELDS, Index
    from hsc.bench.perf import synthetic_table
    from hsc.hierarchy.summarize import DigestSummarizer
    from hsc.index.pipeline import ingestion_key
    from hsc.store import Store

    params, settings = Parameters(), settings or Settings()
    table = synthetic_table(leaves, seed=seed)
    root = f"/synthetic/repository-{leaves}"
    store = Store(database)
    store.vector_storage = settings.vector_storage
    repository_id = store.upsert_repository(root, f"synthetic-{leaves}")
    key, model = ingestion_key(params, settings), settings.embedding_model
    files = int(table.file_index[-1]) + 1
    paths = [f"pkg_{f // 200}/sub_{f // 20 % 10}/module_{f}.py" for f in range(files)]
    starts = np.searchsorted(table.file_index, np.arange(files + 1))
    for number, path in enumerate(paths):
        rows = range(int(starts[number]), int(starts[number + 1]))
        file_leaves = [
            synthetic_leaf(
                path,
                f"pkg.module_{number}.Class_{row // 7}.function_{row}",
                12 * (row - rows.start) + 1,
                int(table.token_counts[row]),
                row,
            )
            for row in rows
        ]
        store.save_vectors(
            model, {leaf.content_hash: table.vectors[row] for leaf, row in zip(file_leaves, rows)}
        )
        size = sum(len(leaf.text) for leaf in file_leaves)
        report = FileReport(path, "python", "indexed", "", size, f"synthetic-{number}")
        definitions, facts, bindings = synthetic_facts(paths, number, file_leaves, rows.start)
        store.replace_file(
            repository_id,
            report,
            file_leaves,
            key,
            model,
            definitions,
            facts,
            terms_of=leaf_term_text,
            bindings=bindings,
        )
    store.update_repository(
        repository_id,
        embedding_model=model,
        tokenizer=settings.tokenizer,
        chunk_key=key,
        parameters=json.dumps({f: getattr(params, f) for f in CHUNK_FIELDS}),
        indexed_at=time.time(),
    )
    index = Index(store, settings, summarizer=DigestSummarizer())
    hierarchy = index.build(repository_id, params)
    index.close()
    return {"root": root, "files": files, "leaves": leaves, "groups": hierarchy["group_count"]}


def prepare_index(database: Path, leaves: int, path: Path | None) -> dict[str, Any]:
    """The index to drive the app on: kept in ``database`` when it already holds
    it (a real folder is embedded once, minutes for ten thousand leaves), else built there."""
    from hsc.api import Index

    root = str(path.resolve()) if path is not None else f"/synthetic/repository-{leaves}"
    if database.exists():
        with Index.open(database) as index:
            known = next((r for r in index.repositories() if r["root"] == root), None)
            if known is not None and known["indexed_at"]:
                groups = index.hierarchies(int(known["id"]))
                return {
                    "root": root,
                    "files": known["file_count"],
                    "leaves": known["leaf_count"],
                    "groups": groups[0]["group_count"] if groups else 0,
                    "reused": True,
                }
    if path is None:
        return write_synthetic_index(database, leaves)
    with Index.open(database) as index:
        report = index.index(path)
        hierarchy = index.hierarchies(report.repository_id)[0]
    return {
        "root": root,
        "files": report.files_seen,
        "leaves": report.leaves,
        "groups": hierarchy["group_count"],
    }
