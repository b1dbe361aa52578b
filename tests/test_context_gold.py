"""The context benchmark's gold (Python's ast, apart from hsc's facts) and its scores."""

from __future__ import annotations

import textwrap

from hsc.quality.context_metrics import paired_interval, score_pack
from hsc.quality.gold import Package, package_of
from hsc.search.context import ContextPack, ContextSpan

FILES = {
    "pkg/__init__.py": "from .util import clamp\n",
    "pkg/util.py": """
        def clamp(value, low, high):
            return max(low, min(value, high))
        """,
    "pkg/base.py": """
        class Shape:
            sides = 0

            def __init__(self, name):
                self.name = name

            def describe(self):
                return self.name

            def other(self):
                return 1
        """,
    "pkg/shapes.py": """
        from pkg import clamp
        from .base import Shape as Base
        from . import util


        class Square(Base):
            def area(self, side):
                total = clamp(side, 0, 10) + util.clamp(1, 2, 3)
                return total + len(super().describe()) + len(self.describe())


        def make():
            return Square("x")
        """,
}


def package() -> Package:
    return Package({path: textwrap.dedent(text).lstrip("\n") for path, text in FILES.items()})


def test_gold_follows_imports_re_exports_self_and_bases():
    found = package().dependencies("pkg/shapes.py", 7)  # def area
    assert set(found) == {("pkg/util.py", 1), ("pkg/base.py", 7)}  # clamp (twice), Shape.describe
    assert found[("pkg/base.py", 7)] == frozenset({7, 8})


def test_gold_gives_a_class_by_header_fields_and_constructor():
    found = package().dependencies("pkg/shapes.py", 12)  # def make -> Square
    square = found[("pkg/shapes.py", 6)]
    assert square == frozenset({6})  # header only: Square has no fields or constructor of its own
    found = package().dependencies("pkg/shapes.py", 7)
    assert ("pkg/base.py", 1) not in found


def test_gold_reads_the_original_files(tmp_path):
    for path, text in FILES.items():
        target = tmp_path / "src" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"))
    read = package_of([(tmp_path / "src" / "pkg", "pkg")])
    assert read.dependencies("pkg/shapes.py", 7) == package().dependencies("pkg/shapes.py", 7)


def test_scores_count_code_lines_not_outlines():
    spans = (
        ContextSpan("a.py", 1, 10, "hit", 50, "x"),
        ContextSpan("b.py", 1, 8, "uses", 20, "y"),
        ContextSpan("c.py", 1, 30, "outline", 5, "z"),
    )
    pack = ContextPack("q", 100, "hybrid", spans)
    scores = score_pack(pack, "a.py", set(range(5, 21)), {"b.py": set(range(1, 11)), "c.py": {1, 2}})
    assert scores["hit"] is False  # 6 of 16 target lines
    assert abs(scores["coverage"] - 8 / 12) < 1e-9
    assert scores["full"] is False and scores["tokens"] == 75
    assert abs(scores["precision"] - (6 + 8) / 18) < 1e-9
    whole = score_pack(pack, "a.py", set(range(1, 11)), {"b.py": set(range(1, 9))})
    assert whole["hit"] and whole["full"] and whole["coverage"] == 1.0


def test_paired_interval_brackets_a_clear_difference():
    better = [1.0] * 80 + [0.0] * 20
    worse = [1.0] * 50 + [0.0] * 50
    interval = paired_interval(better, worse)
    assert interval["difference"] == 0.3 and 0.15 < interval["low"] < 0.3 < interval["high"] < 0.45
