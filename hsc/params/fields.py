"""How a parameter or setting is declared and checked: :func:`_p` (a field with its help, stage and
allowed values), :class:`SettingError`, the checks, and the names of the choices that a stage and the
parameters both name."""

from __future__ import annotations

import dataclasses
import math
import numbers
import re
from dataclasses import field, fields
from typing import Any


def _p(
    default: Any,
    help: str,
    stage: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    choices: tuple[str, ...] | None = None,
) -> Any:
    """A field with its help, stage and allowed values (``minimum``/``maximum``
    inclusive, or ``choices``); :func:`check_fields` enforces them, and the
    CLI and the app show them."""
    metadata = {"help": help, "stage": stage, "minimum": minimum, "maximum": maximum, "choices": choices}
    return field(default=default, metadata=metadata)


class SettingError(ValueError):
    """A parameter or setting with a value it does not allow; ``name`` says which."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


# Choices that a stage and the parameters both name live here, below every stage that reads them.
# Where stage 3 cuts (hsc.hierarchy.boundaries).
BOUNDARY_RULES = ("valley", "threshold", "structure")
# How stage 5 answers a query (hsc.search.two_stage).
RETRIEVAL_MODES = ("two-stage", "flat", "hybrid", "hybrid-flat")

# How stage 1 treats a short piece of a split definition (hsc.chunk.packing.Packer.merge_small).
FRAGMENT_MERGING = ("balance", "seed")
# Whether a leaf holding definitions inside it also gets a vector per such definition
# (hsc.embed.definitions), its cosine the best of its vectors' (hsc.search.two_stage).
DEFINITION_VECTORS = ("best", "off")
# How nested regions share a query's region answers (hsc.search.regions.rank_regions): "separate"
# keeps the better-scored of a region and one inside it, "all" lists both.
REGION_NESTING = ("all", "separate")
# Which levels a query's regions are drawn from ("type": definitions of a type kind alone, nested ones
# too; hsc.search.region_table.ANSWER_TYPE_KINDS), and whether a definition inside another is one.
REGION_LEVELS = (
    "file+definition",
    "folder+file+definition+group",
    "definition",
    "file+definition+group",
    "type",
)
REGION_DEFINITIONS = ("outermost", "containers", "all")
# Class-level lexical evidence in a region's score (hsc.search.region_terms): "off" = the vectors
# and the best leaf alone (as before); else BM25 over each definition's and file's whole text, its
# names (an outline: its scope's, its methods' and attributes' names) or both.
REGION_LEXICAL = ("off", "text+names", "names", "text")
# Outline vectors of the definitions that hold others (hsc.embed.outlines), made
# when a repository is indexed: "evidence" adds their cosine to a listed definition's score
# (hsc.search.region_outlines); "off" makes none, and regions are scored as before.
REGION_OUTLINES = ("evidence", "off")
# Name evidence (hsc.search.region_names): "evidence" adds the share of a listed region's own name
# the query matches to its score; "off" scores regions as before.
REGION_NAMES = ("evidence", "off")
# Whether a type's members declared outside its lines in its file (Go's methods with its receiver,
# Rust's impl blocks) count as its own when its region is scored (hsc.search.regions): "outside"
# does, "inside" holds a definition to the leaves its lines overlap, as before.
REGION_MEMBERS = ("outside", "inside")
# What tells a module question in the context pack (hsc.search.module_rule): where the top hits lie
# (the first one tried), the file ranking's best file by a margin over the second, the region list
# putting a file first (by a margin over its best definition), the best file scoring within a margin
# of its own best hit (its pooled vector fits the question nearly as well as its best leaf).
CONTEXT_MODULE_RULES = ("file-over-leaf", "top-hits", "file-margin", "region-first")
# What a scope says beyond the file's path and the definitions' names (hsc.chunk.grammar, hsc.chunk.parse).
SCOPE_NAMES = ("path", "language")
# Where a Python string statement right after an assignment (its PEP 257 attribute docstring) goes.
ATTRIBUTE_DOCSTRINGS = ("joined", "seed")
# Where TypeScript's overload signatures go: with the implementation they declare, or units of their own.
OVERLOAD_SIGNATURES = ("joined", "seed")
# How a Java file named after its top-level type (Bridge.java, class Bridge) names that type in scopes.
JAVA_CLASS_SCOPES = ("once", "seed")
# How many results a query that joins split definitions' pieces hands back (hsc.search.answers).
JOINED_RESULTS = ("full", "seed")

_LANGUAGE_MINIMUM = re.compile(r"\s*([a-z][a-z0-9_+#-]*)\s*=\s*(\d+)\s*")


def language_minimums(value: str) -> dict[str, int]:
    """``"rust=128, go=64"`` as ``{"rust": 128, "go": 64}`` (leaf_minimums); a one-line error else."""
    out: dict[str, int] = {}
    for item in filter(str.strip, value.split(",")):
        match = _LANGUAGE_MINIMUM.fullmatch(item)
        if match is None:
            raise SettingError(
                "leaf_minimums", f"leaf_minimums: {item.strip()!r} is not LANGUAGE=N (e.g. 'rust=128')"
            )
        out[match.group(1)] = int(match.group(2))
    return out


_TYPE_WORDS = {"int": "an integer", "float": "a number", "str": "a string"}


def _kind(annotation: Any) -> str:
    return str(annotation).replace("'", "")


def _shown(value: Any) -> str:
    kind = {list: "a list ", dict: "a table ", bool: "a boolean "}.get(type(value), "")
    return f"{kind}{value!r}"


def allowed(f: dataclasses.Field) -> str:
    """The allowed values of a field, in words: "an integer >= 1", "'valley' or 'threshold'"."""
    meta = f.metadata
    if meta.get("choices"):
        return " or ".join(repr(choice) for choice in meta["choices"])
    words = _TYPE_WORDS.get(_kind(f.type), _kind(f.type))
    low, high = meta.get("minimum"), meta.get("maximum")
    if low is not None and high is not None:
        return f"{words} from {low} to {high}"
    if low is not None:
        return f"{words} >= {low}"
    if high is not None:
        return f"{words} <= {high}"
    return words


def _check_value(f: dataclasses.Field, value: Any) -> None:
    kind = _kind(f.type)
    is_bool = isinstance(value, bool)
    if kind == "int":
        ok = isinstance(value, numbers.Integral) and not is_bool
    elif kind == "float":
        ok = isinstance(value, numbers.Real) and not is_bool and math.isfinite(value)
    else:
        ok = isinstance(value, str)
    meta = f.metadata
    if ok and meta.get("choices"):
        ok = str(value).strip().lower() in meta["choices"]
    if ok and meta.get("minimum") is not None:
        ok = value >= meta["minimum"]
    if ok and meta.get("maximum") is not None:
        ok = value <= meta["maximum"]
    if not ok:
        raise SettingError(f.name, f"{f.name} must be {allowed(f)}, got {_shown(value)}")


def check_fields(obj: Any) -> None:
    """Every field of a parameters or settings dataclass against its declared type and range."""
    for f in fields(obj):
        _check_value(f, getattr(obj, f.name))
