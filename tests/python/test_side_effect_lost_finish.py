"""A tool's result whose storing is lost with the connection (issue 31, item 1).

On a failover, a tool guarded by the ledger ran twice with ``taken_over = false``: the tool
returned, ``finish_side_effect`` lost its connection (``OutcomeUnknown``), and the helper then
*abandoned* the reservation, so the next ``begin_side_effect`` answered "execute" as if nothing
had happened outside. The contract: a tool either ran once, or its rerun is flagged
``taken_over``. So a finish lost with its connection is tried again (it is idempotent), and when
it cannot be confirmed the reservation is left to its lease, never abandoned.

The connection is ended between the tool and its finish: the tool takes a SHARE lock on
``ai.side_effects`` (from the test's own connection) before it returns, so the finish waits on
that lock; the test ends the waiting backend (``pg_terminate_backend``), waited on as a
condition, then lets go. Directly and through the private PgBouncer, sync and async, with a
plain ``side_effect`` and inside a Worker's job. The lease of a reservation left behind is passed
with the frozen clock (``ai.frozen_now``) on the rerun's connection, never by sleeping."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from conftest import dsn_as
from waiting import wait_until, waits_on_a_lock

from agent_state import AsyncClient, Client, RetryPolicy, side_effect
from agent_state.errors import OutcomeUnknown

pytestmark = pytest.mark.session_features(
    "pg_terminate_backend of the test's own backends, a table lock held by the test, the frozen clock on the rerun"
)

ROLE = "tenant_a"
#: Tries of the finish, each ended: the helper's retries run out.
TWO = RetryPolicy(attempts=2, first_delay=0.0, max_delay=0.0, jitter=0.0)


class _FinishKiller:
    """``arm()``, called by the tool: locks ``ai.side_effects`` against writes, then, in a thread,
    ends the next ``times`` backends of ROLE (in this database) that wait on that lock, and lets
    go of the lock."""

    def __init__(self, direct_dsn: str, times: int, role: str = ROLE):
        self.direct_dsn, self.times, self.role = direct_dsn, times, role
        self.killed: list[int] = []
        self.thread: threading.Thread | None = None
        self.failure: BaseException | None = None

    def arm(self) -> None:
        admin = psycopg.connect(self.direct_dsn, autocommit=True)
        admin.execute("begin")
        admin.execute("lock table ai.side_effects in share mode")
        self.thread = threading.Thread(target=self._run, args=(admin,), daemon=True)
        self.thread.start()

    def _run(self, admin: psycopg.Connection[Any]) -> None:
        try:
            with psycopg.connect(self.direct_dsn, autocommit=True) as watch:
                for _ in range(self.times):

                    def waiting() -> Any:
                        backends = watch.execute(
                            "select pid from pg_stat_activity where usename = %s and datname = current_database()",
                            (self.role,),
                        ).fetchall()
                        return next((pid for (pid,) in backends if waits_on_a_lock(watch, pid)), None)

                    pid = wait_until(waiting, f"a finish of {self.role} waiting on ai.side_effects")
                    admin.execute("select pg_terminate_backend(%s::int)", (pid,))
                    wait_until(
                        lambda pid=pid: (
                            not watch.execute("select 1 from pg_stat_activity where pid = %s", (pid,)).fetchone()
                        ),
                        "the finish's backend ended",
                    )
                    self.killed.append(pid)
        except BaseException as error:  # reported by join()
            self.failure = error
        finally:
            admin.execute("commit")
            admin.close()

    def join(self) -> None:
        assert self.thread is not None, "the tool ran"
        self.thread.join(60)
        assert not self.thread.is_alive()
        if self.failure is not None:
            raise self.failure
        assert len(self.killed) == self.times


@pytest.fixture(params=["direct", "pooler"])
def url(request: pytest.FixtureRequest, direct_dsn: str) -> str:
    if request.param == "direct":
        return dsn_as(direct_dsn, ROLE)
    return dsn_as(request.getfixturevalue("pooler_dsn"), ROLE)


@contextmanager
def _later(direct_dsn: str) -> Iterator[Client]:
    """A client of ROLE whose clock is past every reservation of the test (the rerun)."""
    with psycopg.connect(dsn_as(direct_dsn, ROLE), autocommit=True) as conn:
        later = datetime.now(timezone.utc) + timedelta(hours=1)
        conn.execute("select set_config('ai.frozen_now', %s, false)", (later.isoformat(),))
        yield Client(conn)


def _thread(direct_dsn: str) -> str:
    thread_id = f"lost-finish-{uuid.uuid4()}"
    with Client.from_conn_string(dsn_as(direct_dsn, ROLE)) as client:
        client.create_session(thread_id)
    return thread_id


def test_a_finish_lost_with_its_connection_is_tried_again_and_the_tool_runs_once(url: str, direct_dsn: str) -> None:
    thread_id = _thread(direct_dsn)
    killer = _FinishKiller(direct_dsn, times=1)
    runs: list[bool] = []

    def tool(call: Any) -> dict[str, Any]:
        runs.append(call.taken_over)
        killer.arm()
        return {"charged": 100}

    with Client.from_conn_string(url) as client:
        assert side_effect(client, thread_id, "charge", "u1").run(tool) == {"charged": 100}
        killer.join()
        assert side_effect(client, thread_id, "charge", "u1").run(tool) == {"charged": 100}, "the stored result"
    with _later(direct_dsn) as later:
        assert side_effect(later, thread_id, "charge", "u1").run(tool) == {"charged": 100}
        assert later.get_side_effect(thread_id, side_effect(later, thread_id, "charge", "u1").key).status == "done"
    assert runs == [False], "the tool ran once"


def test_an_async_finish_lost_with_its_connection_is_tried_again_and_the_tool_runs_once(
    url: str, direct_dsn: str
) -> None:
    thread_id = _thread(direct_dsn)
    killer = _FinishKiller(direct_dsn, times=1)
    runs: list[bool] = []

    async def tool(call: Any) -> dict[str, Any]:
        runs.append(call.taken_over)
        await asyncio.to_thread(killer.arm)
        return {"charged": 100}

    async def main() -> None:
        async with AsyncClient.from_conn_string(url) as client:
            assert await side_effect(client, thread_id, "charge", "u1").arun(tool) == {"charged": 100}
            await asyncio.to_thread(killer.join)
            assert await side_effect(client, thread_id, "charge", "u1").arun(tool) == {"charged": 100}

    asyncio.run(main())
    assert runs == [False], "the tool ran once"


@pytest.mark.parametrize("api", ["sync", "async"])
def test_an_unconfirmed_finish_is_never_abandoned_and_the_rerun_is_flagged(url: str, direct_dsn: str, api: str) -> None:
    thread_id = _thread(direct_dsn)
    killer = _FinishKiller(direct_dsn, times=TWO.attempts or 0)
    runs: list[bool] = []

    def tool(call: Any) -> dict[str, Any]:
        runs.append(call.taken_over)
        if len(runs) == 1:
            killer.arm()
        return {"charged": 100}

    if api == "sync":
        with Client.from_conn_string(url, retry=None) as client, pytest.raises(OutcomeUnknown, match="taken_over"):
            side_effect(client, thread_id, "charge", "u1", retry=TWO).run(tool)
    else:

        async def atool(call: Any) -> dict[str, Any]:
            return await asyncio.to_thread(tool, call)

        async def main() -> None:
            async with AsyncClient.from_conn_string(url, retry=None) as client:
                with pytest.raises(OutcomeUnknown, match="taken_over"):
                    await side_effect(client, thread_id, "charge", "u1", retry=TWO).arun(atool)

        asyncio.run(main())
    killer.join()
    with _later(direct_dsn) as later:
        key = side_effect(later, thread_id, "charge", "u1").key
        assert later.get_side_effect(thread_id, key).status == "reserved", "left to its lease, not abandoned"
        assert side_effect(later, thread_id, "charge", "u1").run(tool) == {"charged": 100}
    assert runs == [False, True], "the rerun is flagged taken_over"


def test_a_lost_finish_inside_a_worker_job_is_tried_again_and_the_tool_runs_once(direct_dsn: str) -> None:
    """In a Worker's job (fenced on the claim): the first finish is ended, the retry lands."""
    from psycopg_pool import ConnectionPool

    from agent_state import Worker

    queue = f"lost-finish-{uuid.uuid4().hex[:8]}"
    killer = _FinishKiller(direct_dsn, times=1, role="app_service")
    runs: list[bool] = []
    service = dsn_as(direct_dsn, "app_service")
    thread_id = f"lost-finish-{uuid.uuid4()}"

    def handler(job: Any, ctx: Any) -> None:
        def tool(call: Any) -> dict[str, Any]:
            runs.append(call.taken_over)
            killer.arm()
            return {"sent": True}

        ctx.side_effect("mail", job.payload["to"]).run(tool)

    with Client.from_conn_string(service) as client:
        client.create_session(thread_id)
        job_id = client.enqueue_job(thread_id, {"to": "a@example.com"}, queue=queue).job_id
    with ConnectionPool(service, kwargs={"autocommit": True}, min_size=1, max_size=4, open=True) as pool:
        worker = Worker(pool, handler, queue=queue, concurrency=1, listen=False, poll_interval=0.05)
        done = threading.Thread(target=lambda: worker.run(drain=True, install_signal_handlers=False), daemon=True)
        done.start()
        done.join(60)
        assert not done.is_alive()
    killer.join()
    with Client.from_conn_string(service) as client:
        assert client.get_job(job_id).status == "COMPLETED"
    assert runs == [False], "the tool ran once"
