"""Graphs of every shape whose finished task must never run again (issue 34, item 1): used by
test_finished_task_durable.py, in its process and in the worker it kills (finished_task_worker.py).

Each graph runs ``work`` once (a ``@task``, a node or a ``Send`` target), which appends a line to
``<dir>/runs``; then another task that can see it finished (the caller of the ``@task``, or a
sibling that waits for the ``runs`` file) touches ``<dir>/after`` and waits until ``<dir>/release``
exists: the test kills or cancels the run there, then creates ``release`` and resumes.
"""

from __future__ import annotations

import asyncio
import operator
import time
from pathlib import Path
from typing import Annotated, Any

from langgraph.func import entrypoint, task
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from typing_extensions import TypedDict

SHAPES = ("entrypoint", "node_task", "parallel", "send", "subgraph")


class Fan(TypedDict):
    done: Annotated[list[str], operator.add]


def _ran(directory: Path, name: str) -> None:
    with (directory / "runs").open("a") as f:
        f.write(name + "\n")


def _hold(directory: Path) -> None:
    (directory / "after").touch()
    while not (directory / "release").exists():
        time.sleep(0.02)


async def _ahold(directory: Path) -> None:
    (directory / "after").touch()
    while not (directory / "release").exists():
        await asyncio.sleep(0.02)


def runs(directory: Path) -> list[str]:
    path = directory / "runs"
    return path.read_text().split() if path.exists() else []


def build(shape: str, directory: Path, checkpointer: Any, *, asynchronous: bool = False) -> Any:
    """The graph of that shape, compiled with the checkpointer."""

    @task
    def work(n: int) -> str:
        _ran(directory, "work")
        return f"worked {n}"

    def wait_for_work() -> None:
        while not runs(directory):
            time.sleep(0.02)

    if shape == "entrypoint":
        if asynchronous:

            @entrypoint(checkpointer=checkpointer)
            async def amain(inputs: dict[str, Any]) -> str:
                found = await work(1)
                await _ahold(directory)
                return str(found)

            return amain

        @entrypoint(checkpointer=checkpointer)
        def main(inputs: dict[str, Any]) -> str:
            found = work(1).result()
            _hold(directory)
            return found

        return main

    if shape in ("node_task", "subgraph"):

        def caller(state: Fan) -> dict[str, Any]:
            found = work(1).result()
            _hold(directory)
            return {"done": [found]}

        async def acaller(state: Fan) -> dict[str, Any]:
            found = await work(1)
            await _ahold(directory)
            return {"done": [found]}

        inner = StateGraph(Fan)
        inner.add_node("caller", acaller if asynchronous else caller)
        inner.add_edge(START, "caller")
        inner.add_edge("caller", END)
        if shape == "node_task":
            return inner.compile(checkpointer=checkpointer)
        outer = StateGraph(Fan)
        outer.add_node("sub", inner.compile())
        outer.add_edge(START, "sub")
        outer.add_edge("sub", END)
        return outer.compile(checkpointer=checkpointer)

    def node_work(state: Any) -> dict[str, Any]:
        _ran(directory, "work")
        return {"done": ["work"]}

    def sibling(state: Any) -> dict[str, Any]:
        wait_for_work()
        _hold(directory)
        return {"done": ["sibling"]}

    async def asibling(state: Any) -> dict[str, Any]:
        while not runs(directory):
            await asyncio.sleep(0.02)
        await _ahold(directory)
        return {"done": ["sibling"]}

    builder = StateGraph(Fan)
    builder.add_node("a", lambda s: {"done": ["a"]})
    builder.add_node("work", node_work)
    builder.add_node("sibling", asibling if asynchronous else sibling)
    builder.add_edge(START, "a")
    if shape == "parallel":
        builder.add_edge("a", "work")
        builder.add_edge("a", "sibling")
    elif shape == "send":
        builder.add_conditional_edges("a", lambda s: [Send("work", s), Send("sibling", s)], ["work", "sibling"])
    else:
        raise ValueError(shape)
    builder.add_edge("work", END)
    builder.add_edge("sibling", END)
    return builder.compile(checkpointer=checkpointer)


def first_input(shape: str) -> Any:
    return {"go": 1} if shape == "entrypoint" else {"done": []}
