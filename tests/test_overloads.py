"""TypeScript overload signatures joined to the implementation they declare
(overload_signatures='joined'); 'seed' keeps each run of signatures a statement of the file's scope."""

from __future__ import annotations

from test_parse import assert_covers

from hsc.chunk.parse import cut_file
from hsc.chunk.tokens import get_counter
from hsc.params import Parameters

COUNTER = get_counter()

# Shaped like an RxJS operator module: overloads above the implementation, a deprecation comment
# among them, the doc comment above the first one; then a class with an overloaded method.
OPERATOR = """\
import { OperatorFunction } from '../types';
import { operate } from '../util/lift';

// Section comment, parted from what follows by a blank line.

/** Applies a given project function to each value and emits the results. */
export function map<T, R>(project: (value: T, index: number) => R): OperatorFunction<T, R>;
/** @deprecated Use a closure instead of a thisArg. */
export function map<T, R, A>(project: (this: A, v: T, i: number) => R, thisArg: A): OperatorFunction<T, R>;
export function map<T, R>(project: (value: T, index: number) => R, thisArg?: any): OperatorFunction<T, R> {
  return operate((source, subscriber) => {
    let index = 0;
    source.subscribe((value: T) => subscriber.next(project.call(thisArg, value, index++)));
  });
}

export function first<T>(): OperatorFunction<T, T>;
export function last<T>(predicate?: (value: T) => boolean): OperatorFunction<T, T> {
  return operate((source, subscriber) => source.subscribe(subscriber));
}

export abstract class Scheduler {
  /** Schedules a unit of work to run later. */
  schedule(work: () => void): Subscription;
  schedule(work: () => void, delay: number): Subscription;
  schedule(work: () => void, delay = 0): Subscription {
    const action = new Action(this, work);
    return action.schedule(delay);
  }

  abstract now(): number;
}

export interface Clock {
  now(): number;
  now(offset: number): number;
}
"""


def cut(option: str, maximum: int = 256):
    params = Parameters(
        minimum_chunk_token_length=0,
        leaf_minimums="",
        maximum_chunk_token_length=maximum,
        overload_signatures=option,
    )
    made = cut_file(OPERATOR, "operators/map.ts", "typescript", params, COUNTER)
    assert_covers(OPERATOR, made.leaves)
    return made


def leaves(option: str, maximum: int = 256) -> list:
    return cut(option, maximum).leaves


def line(text: str) -> int:
    return next(number for number, got in enumerate(OPERATOR.splitlines(), start=1) if got.startswith(text))


def holding(found: list, number: int):
    return next(leaf for leaf in found if leaf.start_line <= number <= leaf.end_line)


def test_joined_overloads_are_one_unit_named_by_the_implementation():
    joined = leaves("joined")
    unit = holding(joined, line("export function map<T, R>(project: (value: T, index: number) => R, thisArg"))
    # From the doc comment above the first signature to the implementation's closing brace.
    assert unit.start_line == line("/** Applies a given project")
    assert unit.end_line == line("export function first") - 2
    assert unit.scope == "operators.map.map" and unit.node_type == "function_declaration"
    # The section comment parted by a blank line stays out; so does a signature of another name.
    assert holding(joined, line("// Section comment")).scope == "operators.map"
    assert holding(joined, line("export function first")).scope == "operators.map"
    assert holding(joined, line("export function last")).scope == "operators.map.last"


def test_seed_keeps_the_signatures_a_statement_of_the_files_scope():
    seed = leaves("seed")
    signature = holding(seed, line("export function map<T, R>(project: (value: T, index: number) => R): "))
    assert signature.scope == "operators.map"
    implementation = holding(
        seed, line("export function map<T, R>(project: (value: T, index: number) => R, thisArg")
    )
    assert implementation.start_line == line(
        "export function map<T, R>(project: (value: T, index: number) => R, thisArg"
    )
    assert implementation.scope == "operators.map.map"


def test_a_methods_overloads_join_it_and_signatures_with_no_body_stay_apart():
    # A maximum small enough that each member of the class is a unit of its own.
    joined, seed = leaves("joined", maximum=40), leaves("seed", maximum=40)
    first = line("  schedule(work: () => void): Subscription;")
    assert holding(joined, first).scope == "operators.map.Scheduler.schedule"
    assert holding(seed, first).scope == "operators.map.Scheduler"
    # An abstract method and an interface's signatures declare no implementation: cut as before.
    for number in (line("  abstract now()"), line("  now(offset: number)")):
        assert holding(joined, number).scope == holding(seed, number).scope


def test_a_split_implementation_keeps_its_signatures_in_its_first_piece():
    pieces = [leaf for leaf in leaves("joined", maximum=40) if leaf.scope == "operators.map.map"]
    assert len(pieces) > 1
    assert pieces[0].start_line == line("/** Applies a given project")
    assert pieces[-1].end_line == line("export function first") - 2


def test_the_option_is_part_of_the_chunk_key_and_leaves_other_languages_alone():
    joined, seed = Parameters(), Parameters(overload_signatures="seed")
    assert joined.overload_signatures == "joined"  # the default
    assert "overloads=joined" in joined.chunk_key() and "overloads" not in seed.chunk_key()
    python = "def f(a):\n    return a\n\n\ndef f(a, b):\n    return a + b\n"
    cuts = [cut_file(python, "m.py", "python", p, COUNTER).leaves for p in (joined, seed)]
    assert [(leaf.start_line, leaf.scope) for leaf in cuts[0]] == [
        (leaf.start_line, leaf.scope) for leaf in cuts[1]
    ]


def test_joined_gives_the_implementation_the_doc_above_its_first_signature():
    docs = {option: {d.scope: d for d in cut(option).definitions} for option in ("joined", "seed")}
    joined, seed = docs["joined"], docs["seed"]
    # The implementation's lines are its own either way; only its doc comes from above the signatures.
    assert (
        joined["operators.map.map"].start_line
        == seed["operators.map.map"].start_line
        == line("export function map<T, R>(project: (value: T, index: number) => R, thisArg")
    )
    applies = "Applies a given project function to each value and emits the results."
    assert joined["operators.map.map"].doc == applies
    assert joined["operators.map.Scheduler.schedule"].doc == "Schedules a unit of work to run later."
    assert seed["operators.map.map"].doc == seed["operators.map.Scheduler.schedule"].doc == ""
    # No signature of its name above it, no borrowed doc: `last` follows `first`'s signature.
    assert joined["operators.map.last"].doc == ""
