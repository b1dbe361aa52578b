"""The package's layout: one package per stage, no import circles (type-only and
function-level imports included), and the public import paths still answer."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import hsc

PACKAGE_ROOT = Path(hsc.__file__).parent
STAGE_PACKAGES = ("chunk", "embed", "hierarchy", "search", "store", "index", "explore")


def module_files(root: Path) -> dict[str, Path]:
    """Every module under ``root`` (a package folder) by its dotted name."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports, anywhere in its body
    (under ``if TYPE_CHECKING``, inside functions). ``from a.b import c`` counts as
    importing ``a.b.c`` when that is a module, else ``a.b``."""
    modules = module_files(root)
    top = root.name

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [
                    f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules else node.module
                    for alias in node.names
                ]
            else:
                continue
            for target in targets:
                if target == top or target.startswith(top + "."):
                    found = owner(target)
                    if found and found != name:
                        edges.add(found)
        graph[name] = edges
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in order:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], order[nxt])
        if low[node] == order[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return cycles


def test_the_cycle_finder_sees_type_only_and_function_level_circles(tmp_path: Path) -> None:
    package = tmp_path / "toy"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from toy.sub import b\n")
    (package / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy.a import thing\n"
    )
    (package / "c.py").write_text("def f():\n    import toy.d\n")
    (package / "d.py").write_text("from toy import c\n")
    (package / "e.py").write_text("import toy.a\n")
    assert import_cycles(import_graph(package)) == [["toy.a", "toy.sub.b"], ["toy.c", "toy.d"]]


def test_hsc_has_no_import_circles() -> None:
    graph = import_graph(PACKAGE_ROOT)
    assert "hsc.search.two_stage" in graph and "hsc.hierarchy.groups" in graph["hsc.search.two_stage"]
    assert import_cycles(graph) == []


def test_one_package_per_stage_and_few_loose_modules() -> None:
    loose = sorted(path.name for path in PACKAGE_ROOT.glob("*.py"))
    assert len(loose) <= 10, loose
    for name in STAGE_PACKAGES:
        package = importlib.import_module(f"hsc.{name}")
        doc = package.__doc__ or ""
        assert len(doc.split()) >= 25, f"hsc.{name} says too little of what it does"


def test_public_import_paths_still_answer() -> None:
    from hsc import Index, IndexReport, NodeView, Parameters, QueryResponse, QueryResult, Settings
    from hsc.embed import DEFAULT_BACKEND, EncoderSpec, make_embedder, spec_for
    from hsc.hierarchy import HierarchyPlan, LeafTable, mean_pool, plan_hierarchy

    assert Index.__module__ == "hsc.api"
    assert (Parameters.__module__, Settings.__module__) == ("hsc.params.parameters", "hsc.params.settings")
    assert IndexReport.__module__ == "hsc.index.pipeline"
    assert {NodeView.__module__, QueryResponse.__module__, QueryResult.__module__} == {"hsc.search.results"}
    assert make_embedder.__module__ == "hsc.embed.factory"
    assert EncoderSpec.__module__ == spec_for.__module__ == "hsc.embed.base" and DEFAULT_BACKEND
    homes = {HierarchyPlan.__module__, LeafTable.__module__, plan_hierarchy.__module__, mean_pool.__module__}
    assert homes == {"hsc.hierarchy.groups"}
