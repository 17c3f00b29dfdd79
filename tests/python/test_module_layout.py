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


def _imports(path: Path) -> set[str]:
    """The package modules a module imports, anywhere in it (``from . import x`` names module x)."""
    names: set[str] = set()
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                names.add(node.module.split(".")[0])
            else:
                names.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agent_state."):
            names.add(node.module.split(".")[1])  # type: ignore[union-attr]
    names.discard(path.stem)
    return names


def test_the_package_has_no_import_cycle() -> None:
    graph = {p.stem: _imports(p) for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
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


def test_no_module_re_exports_below_its_code() -> None:
    for path in PACKAGE.glob("*.py"):
        assert "noqa: E402" not in path.read_text(), path.name


def test_langgraph_is_where_the_langgraph_names_are_imported_from() -> None:
    assert facade.AgentStateSaver is langgraph_saver.AgentStateSaver
    assert facade.AsyncAgentStateSaver is langgraph_saver.AsyncAgentStateSaver
    assert facade.CompressedSerializer is serde.CompressedSerializer
    for name in ("GraphRuns", "AsyncGraphRuns", "graph_worker", "async_graph_worker", "job_context"):
        assert getattr(facade, name) is getattr(graph_runs, name)
    assert sorted(facade.__all__) == sorted(n for n in vars(facade) if not n.startswith("_") and n != "annotations")
    assert "langgraph" not in _imports(PACKAGE / "graph_runs.py") | _imports(PACKAGE / "langgraph_saver.py")
