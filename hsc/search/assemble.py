"""Filling a token budget: ranked hits, the rest of the definitions they are pieces of, and the
definitions they use, in the order the policy says, without repeating a line.

Pure apart from what :class:`CodeSource` reads (file lines, definitions, the resolver): the
Index supplies one over its database, the benchmark the same one over its corpus.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from hsc.chunk.tokens import TokenCounter
from hsc.model import Definition
from hsc.search.context import ContextPack, ContextSpan
from hsc.search.module_rule import Leveled, ModuleQuestion, Ranked, module_question
from hsc.search.reasons import hit_reason

MEMO_SIZE = 100_000  # token counts a source keeps
FUNCTION_KINDS = frozenset({"function", "method", "constructor"})
CLASS_KINDS = frozenset(
    {"class", "struct", "interface", "trait", "enum", "record", "type", "impl"}
    | {"object", "protocol", "extension"}  # Kotlin and Scala objects, Swift protocols and extensions
)


@dataclass(frozen=True)
class Hit:
    """One ranked leaf (lines 1-based, inclusive)."""

    leaf_id: int
    path: str
    start_line: int
    end_line: int
    score: float
    rank: int  # its place among the pack's hits (the policy's counts: lead and dependency hits)
    tokens_hint: int = 0  # the leaf's stored token count: a hit far above what is left is not counted
    scope: str = ""
    # Its rank and why it was found as the query's table shows them (hsc.search.reasons): the pieces
    # of one split definition share their answer's rank. 0: ``rank``.
    shown_rank: int = 0
    why: str = ""

    @property
    def answer_rank(self) -> int:
        return self.shown_rank or self.rank


@dataclass(frozen=True)
class Dependency:
    """A definition a span uses: where it is, which lines to show (a class gives its skeleton,
    several runs), and through which name it was found."""

    path: str
    definition: Definition
    runs: tuple[tuple[int, int], ...]  # the lines to show, in order
    via: str  # "pkg.mod.apply calls pkg.util.clamp"


class CodeSource(Protocol):
    """What the assembler reads about the repository."""

    def lines(self, path: str) -> list[str]: ...  # the file's lines, without line ends

    def definitions(self, path: str) -> list[Definition]: ...

    def dependencies(self, path: str, start_line: int, end_line: int) -> list[Dependency]: ...

    # (path, first line, last line) -> the tokens of those lines: counted once per source (the same
    # hits come back query after query); the source empties it when it changes.
    token_memo: dict[tuple[str, int, int], int]


@dataclass(frozen=True)
class PackPolicy:
    """How a budget is shared: the ``context_*`` parameters of :class:`hsc.params.Parameters`
    (their help says what each does; hsc.search.contexts.policy_of makes one from them)."""

    lead_hits: int  # hits placed before any dependency
    dependency_hits: int  # the top hits whose definitions are completed and dependencies pulled in
    depth: int  # hops along uses
    uses_share: float  # at most this share of the budget for uses and outlines
    outline_tokens: int  # a dependency longer than this is given as its outline
    complete_tokens: int  # a split hit's definition is completed when its rest is at most this
    # A top hit inside a class (or other container) brings the outermost one: whole within this many
    # tokens, else its outline; 0 = never (the pack as before; hsc.params context_enclosing_tokens).
    enclosing_tokens: int = 0
    # A module question (hsc.search.module_rule) keeps this many tokens for its file's outline; 0 =
    # never (hsc.params context_file_outline_tokens), told by this rule (context_module_rule) with this
    # margin (context_module_margin).
    file_outline_tokens: int = 0
    module_rule: str = "file-over-leaf"
    module_margin: float = -0.04


def top_level(definitions: list[Definition]) -> list[Definition]:
    """The definitions no other (but the file's own) holds, in line order."""
    named = [d for d in definitions if d.kind not in ("file", "namespace", "module")]
    return sorted(
        (
            d
            for d in named
            if not any(
                o is not d
                and o.start_line <= d.start_line
                and o.end_line >= d.end_line
                and (o.start_line, -o.end_line) < (d.start_line, -d.end_line)
                for o in named
            )
        ),
        key=lambda d: d.start_line,
    )


def fits_roughly(hit: Hit, left: int) -> bool:
    """Whether a hit may fit in ``left`` tokens, judged by its stored count before its lines are
    counted exactly (a leaf's own count differs from its lines' by its indentation, a few tokens)."""
    return hit.tokens_hint <= 1.25 * left + 16


def _holding(
    definitions: list[Definition], start: int, end: int, kinds: frozenset[str], innermost: bool
) -> Definition | None:
    """The innermost (else outermost) definition of ``kinds`` that holds lines ``start..end`` and
    reaches beyond them; of definitions starting on one line, the last listed when innermost."""
    best = None
    for definition in definitions:
        if definition.kind not in kinds:
            continue
        holds = definition.start_line <= start and definition.end_line >= end
        larger = definition.start_line < start or definition.end_line > end
        if not (holds and larger):
            continue
        if (
            best is None
            or (innermost and definition.start_line >= best.start_line)
            or (not innermost and definition.start_line < best.start_line)
        ):
            best = definition
    return best


def definition_holding(definitions: list[Definition], start: int, end: int) -> Definition | None:
    """The innermost function or method that holds lines ``start..end`` and reaches beyond them."""
    return _holding(definitions, start, end, FUNCTION_KINDS, innermost=True)


def outline_text(definition: Definition) -> str:
    """A definition's stand-in: its signature and the first sentence of its doc."""
    signature = definition.signature or f"{definition.kind} {definition.name}"
    return f"{signature}  # {definition.doc}" if definition.doc else signature


@dataclass
class _Filling:
    """The pack as it grows: lines taken per file, spans, tokens."""

    budget: int
    counter: TokenCounter
    source: CodeSource
    taken: dict[str, set[int]] = field(default_factory=dict)
    spans: list[ContextSpan] = field(default_factory=list)
    used: int = 0
    uses_used: int = 0

    def free_runs(self, path: str, start: int, end: int) -> list[tuple[int, int]]:
        taken = self.taken.get(path, set())
        runs: list[tuple[int, int]] = []
        for line in range(start, end + 1):
            if line in taken:
                continue
            if runs and runs[-1][1] == line - 1:
                runs[-1] = (runs[-1][0], line)
            else:
                runs.append((line, line))
        return runs

    def text_of(self, path: str, start: int, end: int) -> str:
        return "\n".join(self.source.lines(path)[start - 1 : end])

    def cost(self, path: str, runs: Iterable[tuple[int, int]]) -> list[tuple[int, int, str, int]]:
        out = []
        for start, end in runs:
            text = self.text_of(path, start, end)
            if text.strip():
                memo = self.source.token_memo
                key = (path, start, end)
                if key not in memo:
                    if len(memo) >= MEMO_SIZE:
                        memo.clear()
                    memo[key] = self.counter.count(text)
                out.append((start, end, text, memo[key]))
        return out

    def place(
        self,
        path: str,
        runs: Iterable[tuple[int, int]],
        role: str,
        reason: str,
        leaf_ids: tuple[str, ...] = (),
        score: float | None = None,
        limit: int | None = None,
    ) -> bool:
        """Add the free parts of ``runs`` whole, if they fit the budget (and ``limit`` more tokens)."""
        return self.put(path, self.pieces(path, runs), role, reason, leaf_ids, score, limit)

    def pieces(self, path: str, runs: Iterable[tuple[int, int]]) -> list[tuple[int, int, str, int]]:
        """(start, end, text, tokens) of the parts of ``runs`` not placed yet."""
        return [piece for start, end in runs for piece in self.cost(path, self.free_runs(path, start, end))]

    def put(
        self,
        path: str,
        pieces: list[tuple[int, int, str, int]],
        role: str,
        reason: str,
        leaf_ids: tuple[str, ...] = (),
        score: float | None = None,
        limit: int | None = None,
    ) -> bool:
        if not pieces:
            return False
        tokens = sum(piece[3] for piece in pieces)
        if self.used + tokens > self.budget or (limit is not None and tokens > limit):
            return False
        for start, end, text, count in pieces:
            self.spans.append(ContextSpan(path, start, end, role, count, text, leaf_ids, score, reason))
            self.taken.setdefault(path, set()).update(range(start, end + 1))
        self.used += tokens
        return True

    def place_outline(self, path: str, definition: Definition, reason: str, limit: int | None) -> bool:
        if self.free_runs(path, definition.start_line, definition.end_line) != [
            (definition.start_line, definition.end_line)
        ]:
            return False  # part of it is shown already
        text = outline_text(definition)
        count = self.counter.count(text)
        if self.used + count > self.budget or (limit is not None and count > limit):
            return False
        self.spans.append(
            ContextSpan(
                path, definition.start_line, definition.end_line, "outline", count, text, (), None, reason
            )
        )
        self.taken.setdefault(path, set()).update(range(definition.start_line, definition.end_line + 1))
        self.used += count
        return True


def assemble_pack(
    query: str,
    mode: str,
    budget: int,
    hits: list[Hit],
    source: CodeSource,
    counter: TokenCounter,
    policy: PackPolicy,
    files: Sequence[Ranked] = (),
    regions: Sequence[Leveled] = (),
) -> ContextPack:
    """The pack for ``hits`` (best first) within ``budget`` tokens under ``policy``; ``files`` and
    ``regions``: the query's file ranking and region list, best first, for the module rules that
    read them (hsc.search.module_rule.needs_ranking)."""
    filling = _Filling(budget, counter, source)
    pending: list[Hit] = []  # placed hits whose dependencies are still to come
    module = (
        module_question(hits, policy.module_rule, files, regions, policy.module_margin)
        if policy.file_outline_tokens
        else None
    )
    if module is not None:  # kept for the file's outline, placed last over what is not shown
        filling.budget -= min(policy.file_outline_tokens, budget)

    def dependencies_of(hit: Hit) -> None:
        frontier = [(hit.path, hit.start_line, hit.end_line)]
        completed = definition_holding(source.definitions(hit.path), hit.start_line, hit.end_line)
        if completed is not None:
            frontier = [(hit.path, completed.start_line, completed.end_line)]
        seen: set[tuple[str, int]] = set()
        for _hop in range(policy.depth):
            following = []
            for path, start, end in frontier:
                for dependency in source.dependencies(path, start, end):
                    key = (dependency.path, dependency.definition.start_line)
                    if key in seen:
                        continue
                    seen.add(key)
                    if place_dependency(dependency):
                        following.append((dependency.path, *dependency.runs[0]))
            frontier = following

    def place_dependency(dependency: Dependency) -> bool:
        room = int(policy.uses_share * budget) - filling.uses_used
        if room <= 0:
            return False
        before = filling.used
        definition = dependency.definition
        pieces = filling.pieces(dependency.path, dependency.runs)
        placed = False
        if sum(piece[3] for piece in pieces) <= policy.outline_tokens:
            placed = filling.put(dependency.path, pieces, "uses", dependency.via, limit=room)
        if not placed:  # the whole is longer than outline_tokens, or than the room left
            whole = sum(piece[3] for piece in pieces)
            allowed = min(room, policy.outline_tokens, filling.budget - filling.used)  # less any outline kept
            reason = (
                f"outline of {definition.kind} {definition.scope} ({whole:,} tokens whole, {allowed:,} "
                f"allowed): {dependency.via}"
            )
            placed = filling.place_outline(dependency.path, definition, reason, room)
        filling.uses_used += filling.used - before
        return placed and definition.kind in FUNCTION_KINDS

    for hit in hits:
        if filling.used >= budget:
            break
        if not fits_roughly(hit, budget - filling.used):
            continue
        leaf_ids = (f"leaf:{hit.leaf_id}",)
        reason = hit_reason(hit.answer_rank, hit.why)
        placed = filling.place(hit.path, [(hit.start_line, hit.end_line)], "hit", reason, leaf_ids, hit.score)
        if not placed:
            continue
        if hit.rank <= policy.dependency_hits:
            complete_definition(filling, hit, policy)
            if policy.enclosing_tokens:
                bring_container(filling, hit, policy)
            pending.append(hit)
        if hit.rank >= policy.lead_hits:
            for waiting in pending:
                dependencies_of(waiting)
            pending = []
    for waiting in pending:
        dependencies_of(waiting)
    if module is not None:
        filling.budget = budget
        file_outline(filling, module, policy.file_outline_tokens)
    spans = join_adjacent(reading_order(filling.spans), counter)
    return ContextPack(query, budget, mode, tuple(spans))


def file_outline(filling: _Filling, module: ModuleQuestion, tokens: int) -> None:
    """The outline of the file a module question asks about: each top-level definition not shown
    yet (none of its lines in the pack) as its signature and doc, in line order, within ``tokens``."""
    reason = f"outline of the file {module.path}: a module question ({module.why})"
    spent = filling.used
    for definition in top_level(filling.source.definitions(module.path)):
        if filling.used - spent >= tokens:
            break
        filling.place_outline(module.path, definition, reason, tokens - (filling.used - spent))


def complete_definition(filling: _Filling, hit: Hit, policy: PackPolicy) -> None:
    """The rest of the function a hit is one piece of, when it fits; else the lines around the hit
    (the definition's header and the pieces next to it), as many as ``complete_tokens`` allow."""
    definition = definition_holding(filling.source.definitions(hit.path), hit.start_line, hit.end_line)
    if definition is None:
        return
    reason = f"rest of {definition.scope} (rank {hit.answer_rank})"
    runs = [(definition.start_line, definition.end_line)]
    if filling.place(hit.path, runs, "definition", reason, limit=policy.complete_tokens):
        return
    # Too long: its first line (the header), then lines on either side of the hit, growing outwards.
    spent = filling.used
    header_end = min(definition.start_line, hit.start_line - 1)
    if header_end >= definition.start_line:
        filling.place(hit.path, [(definition.start_line, header_end)], "definition", reason)
    step = 8
    above, below = hit.start_line - 1, hit.end_line + 1
    while above > header_end or below <= definition.end_line:
        grew = False
        for upwards in (True, False):
            room = policy.complete_tokens - (filling.used - spent)
            if upwards and above > header_end:
                start = max(header_end + 1, above - step + 1)
                grew |= filling.place(hit.path, [(start, above)], "definition", reason, limit=room)
                above = start - 1
            elif not upwards and below <= definition.end_line:
                end = min(definition.end_line, below + step - 1)
                grew |= filling.place(hit.path, [(below, end)], "definition", reason, limit=room)
                below = end + 1
        if not grew:
            break


def container_holding(definitions: list[Definition], start: int, end: int) -> Definition | None:
    """The outermost class-like definition (CLASS_KINDS) that holds lines ``start..end`` and reaches
    beyond them."""
    return _holding(definitions, start, end, CLASS_KINDS, innermost=False)


def bring_container(filling: _Filling, hit: Hit, policy: PackPolicy) -> None:
    """The class a hit lies in, whole when its lines not shown yet take at most
    ``enclosing_tokens``, else its outline in place of its first line (when that is not shown yet:
    the rest of the class stays free for later hits)."""
    container = container_holding(filling.source.definitions(hit.path), hit.start_line, hit.end_line)
    if container is None:
        return
    named = f" (hit {hit.scope or hit.path} lines {hit.start_line}-{hit.end_line})"
    reason = f"{container.scope}, which holds rank {hit.answer_rank}{named}"
    runs = [(container.start_line, container.end_line)]
    if filling.place(hit.path, runs, "definition", reason, limit=policy.enclosing_tokens):
        return
    # The whole does not fit (more than enclosing_tokens, or than the budget left): its outline, which
    # says so and names the hit it stands beside.
    whole = sum(piece[3] for piece in filling.pieces(hit.path, runs))
    left = min(policy.enclosing_tokens, filling.budget - filling.used)
    outline = f"outline of {container.kind} {reason}; the rest takes {whole:,} tokens, {left:,} allowed"
    header = replace(container, end_line=container.start_line)
    filling.place_outline(hit.path, header, outline, None)


def reading_order(spans: list[ContextSpan]) -> list[ContextSpan]:
    """Files in the order their first span was chosen; each file's spans by line."""
    first: dict[str, int] = {}
    for position, span in enumerate(spans):
        first.setdefault(span.path, position)
    return sorted(spans, key=lambda span: (first[span.path], span.start_line))


def join_adjacent(spans: list[ContextSpan], counter: TokenCounter) -> list[ContextSpan]:
    """Spans in reading order with each run of touching spans of one file, role and reason made one
    (a split definition completed in steps reads as one span), where the joined lines count no more
    tokens than the parts did, so the pack stays within its budget and each count stays exact."""
    out: list[ContextSpan] = []
    for span in spans:
        last = out[-1] if out else None
        if (
            last is not None
            and (last.path, last.role, last.reason) == (span.path, span.role, span.reason)
            and last.end_line + 1 == span.start_line
        ):
            text = last.text + "\n" + span.text
            tokens = counter.count(text)
            if tokens <= last.tokens + span.tokens:
                leaf_ids = last.leaf_ids + tuple(i for i in span.leaf_ids if i not in last.leaf_ids)
                out[-1] = replace(last, end_line=span.end_line, tokens=tokens, text=text, leaf_ids=leaf_ids)
                continue
        out.append(span)
    return out


@dataclass(frozen=True)
class Piece:
    """Lines to place as they are, for the simple assemblers (leaves, groups, windows)."""

    path: str
    start_line: int
    end_line: int
    role: str = "hit"
    reason: str = ""
    leaf_ids: tuple[str, ...] = ()
    score: float | None = None


def fill_in_order(
    query: str, mode: str, budget: int, pieces: Iterable[Piece], source: CodeSource, counter: TokenCounter
) -> ContextPack:
    """Each piece's lines not placed yet, in order, while they fit (one that does not is skipped)."""
    filling = _Filling(budget, counter, source)
    for piece in pieces:
        if filling.used >= budget:
            break
        runs = [(piece.start_line, piece.end_line)]
        filling.place(piece.path, runs, piece.role, piece.reason, piece.leaf_ids, piece.score)
    return ContextPack(query, budget, mode, tuple(reading_order(filling.spans)))


def leaves_in_rank_order(
    query: str, mode: str, budget: int, hits: list[Hit], source: CodeSource, counter: TokenCounter
) -> ContextPack:
    """The baseline: ranked leaves, whole, until the budget is full (no dependencies)."""
    pieces = (
        Piece(
            hit.path,
            hit.start_line,
            hit.end_line,
            "hit",
            f"rank {hit.rank}",
            (f"leaf:{hit.leaf_id}",),
            hit.score,
        )
        for hit in hits
    )
    return fill_in_order(query, mode, budget, pieces, source, counter)
