"""A worker process of the failover test (test_failover.py), on the formation's multi-host URL.

``python ha_worker.py jobs URL QUEUE EFFECTS API_DSN API_TABLE LOGDIR``: an agent_state.Worker.
Each job calls a tool through the side-effect ledger (``ctx.side_effect``): the tool is an
external API, a table on another server (API_DSN, which no failover touches), where every call
lands as a row (key, taken_over, pid). Then, in one fenced transaction, the job writes its effect
row (public.EFFECTS: job_id, token, pid), a message and a checkpoint to its thread, and completes.
A write refused for a lost lease is logged to LOGDIR/rejected-<pid>.log.

``python ha_worker.py graph URL QUEUE API_DSN API_TABLE``: a graph_worker running a -> tool -> b,
the tool node sending an "email" through the same ledger.

``python ha_worker.py hold URL QUEUE LOGDIR``: a Worker of one handler at a time, for
test_promotion_lease.py: each run of a job appends "job_id fencing_token pid" to LOGDIR/runs.log;
a job whose payload has "hold" runs until LOGDIR/go exists (at most 10 minutes), any other
returns at once. Each completes with {"pid": pid}.

All run until SIGTERM.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from datetime import timedelta
from typing import Annotated, Any, TypedDict

import psycopg
from psycopg_pool import ConnectionPool

from agent_state import Client, Job, JobContext, LeaseLost, SideEffectCall, Worker

LEASE = timedelta(seconds=5)


def api_call(api_dsn: str, table: str, call: SideEffectCall, job_id: int) -> dict[str, Any]:
    """The external API: one row per call it receives (its own server, its own transaction)."""
    with psycopg.connect(api_dsn, autocommit=True) as api:
        api.execute(
            f"insert into public.{table} (key, taken_over, pid, job_id) values (%s, %s, %s, %s)",
            (call.key, call.taken_over, os.getpid(), job_id),
        )
    return {"sent_by": os.getpid()}


def jobs(url: str, queue: str, effects: str, api_dsn: str, api_table: str, logdir: str) -> None:
    pid = os.getpid()
    rejected = open(os.path.join(logdir, f"rejected-{pid}.log"), "a", buffering=1)  # noqa: SIM115

    def handler(job: Job, ctx: JobContext) -> None:
        ctx.side_effect("charge", job.job_id).run(lambda call: api_call(api_dsn, api_table, call, job.job_id))
        try:
            with ctx.fenced() as conn:
                conn.execute(
                    f"insert into public.{effects} (job_id, token, pid) values (%s, %s, %s)",
                    (job.job_id, job.fencing_token, pid),
                )
                client = Client(conn)
                client.append_message(job.thread_id, "assistant", {"job": job.job_id}, idempotency_key=f"j{job.job_id}")
                cid = f"{job.job_id:012d}"
                client.put_checkpoint(job.thread_id, "", cid, None, "json", b"{}", {"job": job.job_id}, {}, [])
                ctx.complete({"pid": pid}, conn)
        except LeaseLost:
            rejected.write(f"{job.job_id} {job.fencing_token}\n")
            raise

    with ConnectionPool(
        url, min_size=2, max_size=8, kwargs={"autocommit": True}, check=ConnectionPool.check_connection, open=True
    ) as pool:
        Worker(pool, handler, queue, concurrency=4, prefetch=2, lease=LEASE, poll_interval=0.2, grace_period=2).run()


def hold(url: str, queue: str, logdir: str) -> None:
    pid = os.getpid()
    runs = open(os.path.join(logdir, "runs.log"), "a", buffering=1)  # noqa: SIM115
    go = os.path.join(logdir, "go")

    def handler(job: Job, ctx: JobContext) -> dict[str, int]:
        runs.write(f"{job.job_id} {job.fencing_token} {pid}\n")
        if isinstance(job.payload, dict) and job.payload.get("hold"):
            deadline = time.monotonic() + 600
            while not os.path.exists(go) and time.monotonic() < deadline:
                time.sleep(0.1)
        return {"pid": pid}

    with ConnectionPool(
        url, min_size=1, max_size=4, kwargs={"autocommit": True}, check=ConnectionPool.check_connection, open=True
    ) as pool:
        Worker(pool, handler, queue, concurrency=1, prefetch=0, lease=LEASE, poll_interval=0.2, grace_period=2).run()


class State(TypedDict):
    log: Annotated[list[str], lambda a, b: a + b]


def build_graph(api_dsn: str, api_table: str) -> Any:
    """a -> tool -> b; the tool sends an "email" through the ledger."""
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph import END, START, StateGraph

    from agent_state.langgraph import job_context

    def a(state: State) -> dict[str, list[str]]:
        return {"log": ["a"]}

    def tool(state: State, config: RunnableConfig) -> dict[str, list[str]]:
        ctx = job_context(config)
        receipt = ctx.side_effect("email", "report").run(
            lambda call: api_call(api_dsn, api_table, call, ctx.job.job_id)
        )
        return {"log": [f"email by {receipt['sent_by']}"]}

    def b(state: State) -> dict[str, list[str]]:
        return {"log": ["b"]}

    builder = StateGraph(State)
    builder.add_node("a", a)
    builder.add_node("tool", tool)
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_edge("a", "tool")
    builder.add_edge("tool", "b")
    builder.add_edge("b", END)
    return builder.compile()


def graph(url: str, queue: str, api_dsn: str, api_table: str) -> None:
    from agent_state.langgraph import graph_worker

    graph_worker(url, build_graph(api_dsn, api_table), queue=queue, concurrency=2, lease=LEASE, poll_interval=0.2).run()


def _exit_with_parent() -> None:
    """SIGTERM to itself when the test process that started it is gone (killed by a timeout)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True).start()


if __name__ == "__main__":
    _exit_with_parent()
    if sys.argv[1] == "jobs":
        jobs(*sys.argv[2:8])
    elif sys.argv[1] == "hold":
        hold(*sys.argv[2:5])
    else:
        graph(*sys.argv[2:6])
