"""The package's modules import one way (issue 22): no import cycle among them, at the top of a
module or inside a function, so no module re-exports another at its bottom (``noqa: E402``) or
imports it back lazily. ``agent_state.langgraph`` is where an application imports LangGraph
things from; the modules it gathers never import it."""

from __future__ import annotations

import ast
from pathlib import Path

import agent_state.langgraph as facade
from agent_state import graph_runs, langgraph_saver, serde

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "agent_state"


def _module(path: Path) -> str:
    """A module's dotted name inside the package: ``client``, ``console.app`` (a package: its name)."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module(p): p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}


def _imports(path: Path) -> set[str]:
    """The package modules a module imports, anywhere in it (at the top or inside a function: a
    deferred import hides a cycle, it does not break one), resolved to dotted names:
    ``from . import x`` in ``console/app.py`` names ``console.x``, ``from .. import errors``
    names ``errors``. A subpackage's ``__init__`` is not counted as imported by its own modules."""
    modules = _modules()
    here = _module(path).split(".") if _module(path) else []
    package = here if path.name == "__init__.py" else here[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            prefix = [*base, *(node.module.split(".") if node.module else [])]
            targets = [".".join([*prefix, a.name]) for a in node.names] if not node.module else []
            found = [t for t in targets if t in modules]
            names.update(found or [".".join(prefix)])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agent_state."):
            names.add(node.module.removeprefix("agent_state."))  # type: ignore[union-attr]
        elif isinstance(node, ast.Import):
            names.update(a.name.removeprefix("agent_state.") for a in node.names if a.name.startswith("agent_state."))
    resolved = set()
    for name in names:  # ``from .core import X``: the module core, or the package it is in
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name:
            resolved.add(name)
    me = _module(path)
    return {n for n in resolved if n != me and not me.startswith(n + ".") and n != ""}


def _graph() -> dict[str, set[str]]:
    return {name: _imports(path) for name, path in _modules().items() if name}


def test_the_package_has_no_import_cycle() -> None:
    graph = _graph()
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == "done":
            return
        assert state.get(name) != "open", "import cycle: " + " -> ".join([*path, name])
        state[name] = "open"
        for other in sorted(graph.get(name, ())):
            visit(other, [*path, name])
        state[name] = "done"

    for name in sorted(graph):
        visit(name, [])


def test_the_layout_reads_subpackages_and_deferred_imports() -> None:
    graph = _graph()
    assert "console.app" in graph and "console.pages" in graph  # subpackages are read
    assert "console.core" in graph["console.pages"]  # the pages stand on the core...
    assert "console.app" not in graph["console.pages"]  # ...never on the app that routes to them
    assert "console" in graph["cli"]  # cli's console import sits inside a function: still counted
    assert "errors" in graph["console.core"]  # ``from .. import errors`` resolves to the top package


def test_no_module_re_exports_below_its_code() -> None:
    for path in PACKAGE.rglob("*.py"):
        assert "noqa: E402" not in path.read_text(), path.relative_to(PACKAGE)


def test_langgraph_is_where_the_langgraph_names_are_imported_from() -> None:
    assert facade.AgentStateSaver is langgraph_saver.AgentStateSaver
    assert facade.AsyncAgentStateSaver is langgraph_saver.AsyncAgentStateSaver
    assert facade.CompressedSerializer is serde.CompressedSerializer
    for name in ("GraphRuns", "AsyncGraphRuns", "graph_worker", "async_graph_worker", "job_context"):
        assert getattr(facade, name) is getattr(graph_runs, name)
    assert sorted(facade.__all__) == sorted(n for n in vars(facade) if not n.startswith("_") and n != "annotations")
    assert "langgraph" not in _imports(PACKAGE / "graph_runs.py") | _imports(PACKAGE / "langgraph_saver.py")
