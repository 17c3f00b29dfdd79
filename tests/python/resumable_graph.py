"""A small LangGraph graph for the crash test: a -> b -> c -> d, plain Python nodes, no network.

Run as a script: ``python resumable_graph.py DSN THREAD_ID start|resume``. With BLOCK_AT_C=1 the
node c blocks, so the parent process can kill this one in the middle of the run; ``resume``
invokes the graph with no input, which continues from the last checkpoint of the thread.
"""

from __future__ import annotations

import json
import operator
import os
import sys
import time
from typing import Annotated, Any, TypedDict

import psycopg
from langgraph.graph import END, START, StateGraph

from agent_state.langgraph import AgentStateSaver


class State(TypedDict):
    visited: Annotated[list[str], operator.add]


def node(name: str) -> Any:
    def run(state: State) -> dict[str, list[str]]:
        if name == "c" and os.environ.get("BLOCK_AT_C") == "1":
            print("c started", flush=True)
            time.sleep(3600)  # the parent kills the process here
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


def main() -> None:
    dsn, thread_id, mode = sys.argv[1:4]
    with psycopg.connect(dsn, autocommit=True) as conn:
        graph = build(AgentStateSaver(conn))
        config = {"configurable": {"thread_id": thread_id}}
        result = graph.invoke({"visited": []} if mode == "start" else None, config)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
