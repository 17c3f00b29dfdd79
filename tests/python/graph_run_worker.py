"""The graph of the durable-run tests (test_graph_runs.py), and a worker process that runs it.

``a -> b -> c -> approve -> d``. Node b sends an "email" through the side-effect ledger; approve
calls ``interrupt()`` when asked to. Every node that finishes appends "<node> <pid>" to NODE_LOG,
and the email tool appends "email <pid>" to SENT_LOG, so a test sees which node ran where, and
how often. Knobs (arguments of ``build``, environment variables in the worker process):

- BLOCK_AT=<node>: the node prints "<node> started" and blocks forever (the test SIGKILLs here;
  in b, after the email was sent);
- FAIL_ONCE_AT=<node>: the node raises the first time (a marker file next to NODE_LOG remembers);
- APPROVAL=1: approve asks a person (``interrupt``).

``python graph_run_worker.py DSN QUEUE sync|async``: a graph_worker (or async_graph_worker)
drains the queue and exits (with KEEP_RUNNING=1: runs until killed, after printing "running").
PGOPTIONS may freeze the process's database clock.
"""

from __future__ import annotations

import asyncio
import operator
import os
import sys
import threading
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from agent_state import SideEffectCall
from agent_state.langgraph import async_graph_worker, graph_worker, job_context


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def _append(path: str | None, line: str) -> None:
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def build(
    *,
    mode: str = "sync",
    block_at: str | None = None,
    fail_once_at: str | None = None,
    approval: bool = False,
    node_log: str | None = None,
    sent_log: str | None = None,
    blocker: threading.Event | None = None,
    started: threading.Event | None = None,
) -> Any:
    """The test graph (not compiled with a checkpointer: GraphRuns binds one). ``blocker``: the
    blocking node waits on it (in-process tests) instead of forever; ``started`` is set when it
    begins waiting."""

    def pause(name: str) -> None:
        if block_at != name:
            return
        print(f"{name} started", flush=True)
        if started is not None:
            started.set()
        (blocker or threading.Event()).wait()

    def maybe_fail(name: str) -> None:
        if fail_once_at != name or node_log is None:
            return
        marker = Path(node_log + f".failed-{name}")
        if not marker.exists():
            marker.touch()
            raise RuntimeError(f"{name} failed once")

    def done(name: str, extra: str = "") -> dict[str, list[str]]:
        _append(node_log, f"{name} {os.getpid()}")
        return {"log": [f"{name}{extra} by {os.getpid()}"]}

    def simple(name: str) -> Any:
        def run(state: State) -> dict[str, list[str]]:
            maybe_fail(name)
            pause(name)
            return done(name)

        return run

    def send(call: SideEffectCall) -> dict[str, Any]:
        _append(sent_log, f"email {os.getpid()}")
        return {"sent_by": os.getpid()}

    def b_sync(state: State, config: RunnableConfig) -> dict[str, list[str]]:
        receipt = job_context(config).side_effect("email", "report").run(send)
        pause("b")
        return done("b", f" (email sent by {receipt['sent_by']})")

    async def b_async(state: State, config: RunnableConfig) -> dict[str, list[str]]:
        async def asend(call: SideEffectCall) -> dict[str, Any]:
            return send(call)

        receipt = await job_context(config).side_effect("email", "report").arun(asend)
        if block_at == "b":
            print("b started", flush=True)
            if started is not None:
                started.set()
            await asyncio.Event().wait()  # blocks this run, not the event loop (renewals go on)
        return done("b", f" (email sent by {receipt['sent_by']})")

    def approve(state: State) -> dict[str, list[str]]:
        if not approval:
            return done("approve")
        answer = interrupt({"send": "report", "to": "alice"})
        return done("approve", f" ({answer})")

    builder = StateGraph(State)
    builder.add_node("a", simple("a"))
    builder.add_node("b", b_async if mode == "async" else b_sync)
    builder.add_node("c", simple("c"))
    builder.add_node("approve", approve)
    builder.add_node("d", simple("d"))
    builder.add_edge(START, "a")
    for x, y in [("a", "b"), ("b", "c"), ("c", "approve"), ("approve", "d")]:
        builder.add_edge(x, y)
    builder.add_edge("d", END)
    return builder.compile()


def main() -> None:
    dsn, queue, mode = sys.argv[1:4]
    graph = build(
        mode=mode,
        block_at=os.environ.get("BLOCK_AT") or None,
        fail_once_at=os.environ.get("FAIL_ONCE_AT") or None,
        approval=os.environ.get("APPROVAL") == "1",
        node_log=os.environ.get("NODE_LOG"),
        sent_log=os.environ.get("SENT_LOG"),
    )
    options: dict[str, Any] = {"lease": timedelta(seconds=30), "poll_interval": 0.1, "listen": False}
    # KEEP_RUNNING=1: runs until killed instead of draining (a worker already there when another dies)
    drain = os.environ.get("KEEP_RUNNING") != "1"
    if not drain:
        print("running", flush=True)
    if mode == "async":
        worker = async_graph_worker(dsn, graph, queue=queue, **options)
        asyncio.run(worker.run(drain=drain, install_signal_handlers=False))
    else:
        graph_worker(dsn, graph, queue=queue, **options).run(drain=drain, install_signal_handlers=False)


if __name__ == "__main__":
    main()
