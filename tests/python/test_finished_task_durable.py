"""A finished task never runs again, whatever the shape (issue 34, item 1), beside LangGraph's stock
PostgresSaver on the same graphs.

A run is stopped once another task can see ``work`` finished (the ``@task``'s caller went on, or
a sibling saw it run) and its writes reached the database (bounded wait on the row): by SIGKILL of
the process running it, or by cancelling it. Resumed by a fresh saver (only what reached the
database counts), ``work`` has run once: shapes ``@entrypoint`` + ``@task``, a StateGraph node
calling a ``@task``, parallel nodes, ``Send``, a subgraph whose node calls a ``@task``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from finished_task_graphs import SHAPES, build, first_input, runs  # noqa: E402

pytestmark = pytest.mark.session_features("the stock saver's schema is named by the options startup parameter")

KINDS = ("ours", "stock")
#: how long to wait for the finished task's writes to reach the database before stopping anyway
WRITES_SECONDS = 10.0


def _saver_dsn(kind: str, stock_dsn: str, role_dsn: Any) -> str:
    return stock_dsn if kind == "stock" else role_dsn("tenant_a")


def _writes_of_newest(kind: str, dsn: str, stock_dsn: str, thread: str) -> int:
    """Write rows on the newest checkpoint of any namespace of the thread."""
    conninfo, schema = (stock_dsn, sql.SQL("")) if kind == "stock" else (dsn, sql.SQL("ai."))
    query = sql.SQL(
        "select count(*) from {s}checkpoint_writes w where w.thread_id = %s and w.checkpoint_id ="
        " (select max(c.checkpoint_id) from {s}checkpoints c where c.thread_id = w.thread_id"
        " and c.checkpoint_ns = w.checkpoint_ns)"
    ).format(s=schema)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        row = conn.execute(query, (thread,)).fetchone()
    return int(row[0]) if row else 0


def _wait(condition: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def _resume(kind: str, shape: str, conninfo: str, directory: Path, thread: str) -> None:
    (directory / "release").touch()
    with ConnectionPool(conninfo, min_size=1, max_size=4, kwargs={"autocommit": True}) as pool:
        if kind == "stock":
            from langgraph.checkpoint.postgres import PostgresSaver

            saver: Any = PostgresSaver(pool)  # type: ignore[arg-type]
        else:
            saver = AgentStateSaver(pool)
        build(shape, directory, saver).invoke(None, {"configurable": {"thread_id": thread}}, durability="sync")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_finished_task_never_runs_again_after_sigkill(
    kind: str, shape: str, dsn: str, role_dsn: Any, stock_dsn: str, tmp_path: Path
) -> None:
    thread = f"finished-{shape}-{uuid.uuid4()}"
    conninfo = _saver_dsn(kind, stock_dsn, role_dsn)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "python"), env.get("PYTHONPATH", "")])
    worker = subprocess.Popen(
        [sys.executable, str(HERE / "finished_task_worker.py"), kind, shape, conninfo, thread, str(tmp_path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert _wait(lambda: (tmp_path / "after").exists() or worker.poll() is not None, 60.0)
        assert worker.poll() is None, worker.stderr.read().decode() if worker.stderr else ""
        _wait(lambda: _writes_of_newest(kind, dsn, stock_dsn, thread) > 0, WRITES_SECONDS)
    finally:
        worker.kill()
        worker.wait(10)
    assert runs(tmp_path) == ["work"]
    _resume(kind, shape, conninfo, tmp_path, thread)
    assert runs(tmp_path) == ["work"]


async def _acancel_and_resume(
    kind: str, shape: str, conninfo: str, directory: Path, thread: str, dsn: str, stock: str
) -> None:
    config: Any = {"configurable": {"thread_id": thread}}

    async def saver_on(pool: AsyncConnectionPool[Any]) -> Any:
        if kind == "stock":
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

            return AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        return AsyncAgentStateSaver(pool)

    async with AsyncConnectionPool(conninfo, min_size=1, max_size=4, kwargs={"autocommit": True}, open=False) as pool:
        graph = build(shape, directory, await saver_on(pool), asynchronous=True)
        run = asyncio.ensure_future(graph.ainvoke(first_input(shape), config, durability="sync"))
        deadline = time.monotonic() + 60.0
        while not (directory / "after").exists() and not run.done() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert not run.done(), run.exception() if run.done() else None
        deadline = time.monotonic() + WRITES_SECONDS
        while time.monotonic() < deadline:
            if await asyncio.to_thread(_writes_of_newest, kind, dsn, stock, thread) > 0:
                break
            await asyncio.sleep(0.02)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
    assert runs(directory) == ["work"]
    (directory / "release").touch()
    async with AsyncConnectionPool(conninfo, min_size=1, max_size=4, kwargs={"autocommit": True}, open=False) as pool:
        graph = build(shape, directory, await saver_on(pool), asynchronous=True)
        await graph.ainvoke(None, config, durability="sync")
    assert runs(directory) == ["work"]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_finished_task_never_runs_again_after_cancellation(
    kind: str, shape: str, dsn: str, role_dsn: Any, stock_dsn: str, tmp_path: Path
) -> None:
    thread = f"cancelled-{shape}-{uuid.uuid4()}"
    conninfo = _saver_dsn(kind, stock_dsn, role_dsn)
    asyncio.run(_acancel_and_resume(kind, shape, conninfo, tmp_path, thread, dsn, stock_dsn))
