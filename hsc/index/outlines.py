"""Outline vectors made when a repository is indexed (``region_outlines``; hsc.embed.outlines).

After the files are written, every file's definition outlines are made from what the store already holds
(its definitions, its leaves' lines; nothing is parsed again), the ones whose text is not in
the vector cache are embedded, and the repository's outline rows are replaced in one
transaction. An outline whose text is unchanged keeps its cached vector, so a run that changed
nothing embeds nothing. With ``region_outlines = off`` the rows are removed: the regions are
then scored as before.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from hsc.embed import Embedder
from hsc.embed.outlines import FILE_KEY, file_outlines, module_scope
from hsc.model import content_hash
from hsc.params import Parameters
from hsc.search.region_outlines import OFF_KEY
from hsc.store import Store
from hsc.store.outlines import OutlineRow

# Outlines for every outermost definition that holds others, in one leaf or more (a file's own
# outline measured no help as evidence: it is not made).
MIN_LEAVES = 1
PENDING = "pending"  # the meta value while a run's files and its outline rows may disagree


# A run that changed at most this many files makes their outlines alone (their rows read by path);
# a larger one reads the whole repository's, and keeps its queries' path lists short.
MAX_CHANGED_READ_ALONE = 256


def repository_outlines(
    store: Store, repository_id: int, paths: Collection[str] | None = None
) -> dict[tuple[str, int, int], str]:
    """(path, first line, last line) -> outline text of every outline the repository has, or
    the files ``paths`` have."""
    definitions = store.definitions(repository_id, paths)
    out: dict[tuple[str, int, int], str] = {}
    for path, (scopes, starts, ends) in store.leaf_lines(repository_id, paths).items():
        found = definitions.get(path, [])
        scope = module_scope(path, found, scopes)
        for (start, end), text in file_outlines(scope, found, starts, ends, MIN_LEAVES).items():
            if (start, end) != FILE_KEY:
                out[(path, start, end)] = text
    return out


def outlines_mark(store: Store, repository_id: int) -> str | None:
    """The value of ``region_outlines`` the repository's outline rows were last made for, or
    :data:`PENDING` while a run may have written files since (None: never made)."""
    return store.meta(OFF_KEY.format(repository_id=repository_id))


def mark_outlines_pending(store: Store, repository_id: int) -> None:
    """Before a run writes or removes a file: the outline rows are then out of date until
    :func:`sync_outlines` ends, so a run killed in between leaves the mark and the next run
    makes them again even when it has no file left to write."""
    store.set_meta(OFF_KEY.format(repository_id=repository_id), PENDING)


def sync_outlines(
    store: Store,
    repository_id: int,
    model: str,
    params: Parameters,
    get_embedder: Callable[[], Embedder],
    changed: bool = True,
    changed_paths: Collection[str] | None = None,
) -> tuple[int, int]:
    """Make the repository's outline rows match its files; (outlines, texts embedded now).
    ``changed`` False (no file written or removed in this run): nothing is read when the rows
    were made for the same value of the option. ``changed_paths``: the files this run wrote or
    removed, when the rows matched every other file before it (the mark it replaced was this
    value of the option): only theirs are made again (None: every file's)."""
    key = OFF_KEY.format(repository_id=repository_id)
    if not changed and store.meta(key) == params.region_outlines:
        return store.outline_count(repository_id), 0
    if params.region_outlines == "off":
        store.replace_outlines(repository_id, [])
        store.set_meta(key, "off")
        return 0, 0
    if changed_paths is not None and len(changed_paths) > MAX_CHANGED_READ_ALONE:
        changed_paths = None
    texts = repository_outlines(store, repository_id, changed_paths)
    hashes = {span: content_hash(text) for span, text in texts.items()}
    cached = store.cached_vectors(model, hashes.values())
    missing = {h: texts[span] for span, h in hashes.items() if h not in cached}
    if missing:
        vectors = get_embedder().embed(list(missing.values()), batch_size=params.embedding_batch_size)
        store.save_vectors(model, dict(zip(missing, vectors)))  # vectors first, then the rows
    rows: list[OutlineRow] = [(path, start, end, h) for (path, start, end), h in hashes.items()]
    store.replace_outlines(repository_id, rows, changed_paths)
    store.set_meta(key, params.region_outlines)  # last: a run killed before it makes them again
    return store.outline_count(repository_id), len(missing)
