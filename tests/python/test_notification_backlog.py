"""A listener that stops reading holds the cluster's notification queue (issue 21, defect 7).

Postgres keeps every notification until each backend that LISTENs has read past it, and a backend
reads only between transactions. So one LISTENing session left inside a transaction (or whose
client stops reading its socket) pins the queue: it fills as others notify, and at 100 % every
transaction that notifies (an enqueue, resolve_human, a stream batch) fails at commit, in every
database of the cluster. Bounded here: a few megabytes of notifications, not the 8 GB queue.
What the worker does about it: its LISTEN connection is autocommit and read by a loop of its own,
and a guard thread drops it when that loop stops reading (python/agent_state/worker.py,
LISTEN_STALL); `agent-state status` reports the queue's fill (docs/operations.md, "Watching a fleet").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import uuid
from typing import Any

import psycopg
import pytest
from conftest import dsn_as
from psycopg_pool import AsyncConnectionPool
from test_cli import run
from waiting import WAIT, listening, wait_until

import agent_state.worker as worker_module
from agent_state import AsyncJobContext, AsyncWorker, Client, Job

pytestmark = pytest.mark.session_features  # LISTEN needs a server session


def _usage(conn: psycopg.Connection[object]) -> float:
    row = conn.execute("select pg_catalog.pg_notification_queue_usage()").fetchone()
    assert row is not None
    return float(row[0])  # type: ignore[arg-type]


def _flood(conn: psycopg.Connection[object], channel: str) -> None:
    # 4,000 notifications of 1 kB in one transaction: about 4 MB of queue
    conn.execute("select pg_catalog.pg_notify(%s, repeat('x', 1000) || n) from generate_series(1, 4000) n", (channel,))


def test_a_stalled_listener_pins_the_notification_queue_until_it_reads_or_goes(direct_dsn: str) -> None:
    channel = f"backlog_{uuid.uuid4().hex[:8]}"
    with (
        psycopg.connect(direct_dsn, autocommit=True) as admin,
        psycopg.connect(direct_dsn, autocommit=True) as reader,
        contextlib.closing(psycopg.connect(direct_dsn)) as stalled,
    ):
        reader.execute(f'listen "{channel}"')
        stalled.execute(f'listen "{channel}"')
        stalled.commit()
        stalled.execute("select 1")  # inside a transaction from now on: it reads nothing
        before = _usage(admin)
        _flood(admin, channel)
        # the reading listener has everything; the queue still holds it for the stalled one
        heard = wait_until(lambda: list(reader.notifies(timeout=0.2, stop_after=1)), "the reader to hear one")
        assert heard
        pinned = _usage(admin)
        assert pinned > before
        _flood(admin, channel)
        assert _usage(admin) > pinned, "the queue grows while the stalled listener reads nothing"
        found = run("status", "--json", dsn=direct_dsn)
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["fleet"]["notification_queue_usage"] > 0
        # dropping the stalled listener (what idle_in_transaction_session_timeout does) frees it
        stalled_pid = stalled.info.backend_pid
        admin.execute("select pg_catalog.pg_terminate_backend(%s::int)", (stalled_pid,))
        for _ in reader.notifies(timeout=0.5):  # the reader drains what is left for it
            pass

        def freed() -> bool:
            admin.execute("select pg_catalog.pg_notify(%s, 'tick')", (channel,))  # a notify advances the tail
            for _ in reader.notifies(timeout=0.2):
                pass
            return _usage(admin) < pinned

        wait_until(freed, "the notification queue to empty once the stalled listener is gone")


def test_a_worker_whose_event_loop_stops_drops_its_listen_connection_and_listens_again(
    direct_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An AsyncWorker's handler that blocks the event loop (a sync call inside an async handler)
    stops the loop's LISTEN reader too: the guard, a thread of its own, drops that connection after
    LISTEN_STALL seconds, and the worker listens again once its loop runs."""
    monkeypatch.setattr(worker_module, "LISTEN_STALL", 1.0)
    queue = f"stall-{uuid.uuid4().hex[:8]}"
    service, tenant = dsn_as(direct_dsn, "app_service"), dsn_as(direct_dsn, "tenant_a")
    with psycopg.connect(service, autocommit=True) as conn:
        row = conn.execute("select ai.queue_channel(%s)", (queue,)).fetchone()
        assert row is not None
        channel = row[0]
    release = threading.Event()
    ran = threading.Event()
    state: dict[str, Any] = {}

    async def handler(job: Job, ctx: AsyncJobContext) -> None:
        ran.set()
        release.wait(WAIT)  # blocks the event loop, on purpose

    def run_worker() -> None:
        async def main() -> None:
            async with AsyncConnectionPool(
                service, min_size=1, max_size=4, kwargs={"autocommit": True}, open=False
            ) as pool:
                worker = AsyncWorker(pool, handler, queue, concurrency=1, poll_interval=0.2)
                state["worker"], state["loop"] = worker, asyncio.get_running_loop()
                await worker.run(install_signal_handlers=False)

        asyncio.run(main())

    runner = threading.Thread(target=run_worker)
    runner.start()
    try:
        with psycopg.connect(direct_dsn, autocommit=True) as admin, psycopg.connect(tenant, autocommit=True) as t:
            wait_until(lambda: listening(admin, channel), "the worker's LISTEN")
            thread = f"stall-{uuid.uuid4().hex[:8]}"
            Client(t).create_session(thread)
            Client(t).enqueue_job(thread, {}, queue=queue)
            wait_until(ran.is_set, "the handler to block the event loop")
            wait_until(lambda: not listening(admin, channel), "the blocked worker's LISTEN to be dropped")
            release.set()
            wait_until(lambda: listening(admin, channel), "the worker to LISTEN again")
    finally:
        release.set()
        if "loop" in state:
            state["loop"].call_soon_threadsafe(state["worker"].stop)
        runner.join(WAIT)
