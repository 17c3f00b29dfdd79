"""A small LangGraph graph for the saver tests: a -> b -> c -> d, plain Python nodes, no network.

(Crash and resume through the queue are tested with the durable graph-run API in
test_graph_runs.py and its worker, graph_run_worker.py.)
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    visited: Annotated[list[str], operator.add]


def node(name: str) -> Any:
    def run(state: State) -> dict[str, list[str]]:
        return {"visited": [name]}

    return run


def build(checkpointer: Any) -> Any:
    builder = StateGraph(State)
    for name in "abcd":
        builder.add_node(name, node(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    builder.add_edge("c", "d")
    builder.add_edge("d", END)
    return builder.compile(checkpointer=checkpointer)
