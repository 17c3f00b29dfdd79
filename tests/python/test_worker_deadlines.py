"""Deadlines and snooze in the Workers (issue 38 items 1 and 4): the sync and async Workers stop a
handler at its attempt's deadline (asyncio cancellation; a thread's ``ctx.cancelled()`` and a
context that refuses), never renew past it, and the server's fence refuses what the handler still
sends; the next claim retries the job, and dead-letters it after its last attempt with "deadline
exceeded" in its history. A handler that meets a rate limit snoozes its job without spending an
attempt.

The database clock is frozen (``ai.frozen_now``, set on every connection the worker's pool hands
out) and moved by the test only: a retry happens when the test moves the clock past the deadline
the database shows, never when a sleep happens to outlast a lease. The worker's own deadline is
the job's timeout of its monotonic clock (a fraction of a second here). Every other wait is on a
condition, bounded by WAIT."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from agent_state import (
    AsyncJobContext,
    AsyncWorker,
    Client,
    DeadlineExceeded,
    Job,
    JobContext,
    LeaseLost,
    Snooze,
    Worker,
)

WAIT = 20.0  # seconds: the bound on every wait for a condition
T0 = datetime.fromisoformat("2031-01-01T00:00:00+00:00")
TIMEOUT = timedelta(seconds=0.3)  # each attempt's run timeout

pytestmark = pytest.mark.session_features("the frozen clock ai.frozen_now is a session setting")


@pytest.fixture
def service_dsn(role_dsn: Callable[[str], str]) -> str:
    return role_dsn("app_service")


@pytest.fixture
def queue() -> str:
    return f"dl-{uuid.uuid4().hex[:12]}"


class Clock:
    """The database's frozen clock, as every connection of the test and the worker sees it."""

    def __init__(self) -> None:
        self.now = T0

    def set_on(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute("select set_config('ai.frozen_now', %s, false)", (self.now.isoformat(),))

    async def aset_on(self, conn: psycopg.AsyncConnection[Any]) -> None:
        await conn.execute("select set_config('ai.frozen_now', %s, false)", (self.now.isoformat(),))


def _enqueue(service_dsn: str, clock: Clock, queue: str, **options: Any) -> int:
    with psycopg.connect(service_dsn, autocommit=True) as conn:
        clock.set_on(conn)
        client = Client(conn)
        thread = f"dl-{uuid.uuid4()}"
        client.create_session(thread)
        return client.enqueue_job(thread, {}, queue=queue, **options).job_id


def _job(service_dsn: str, clock: Clock, job_id: int) -> Job:
    with psycopg.connect(service_dsn, autocommit=True) as conn:
        clock.set_on(conn)
        return Client(conn).get_job(job_id)


def _outcomes(service_dsn: str, job_id: int) -> list[tuple[str, str | None]]:
    with psycopg.connect(service_dsn, autocommit=True) as conn:
        return [(a.outcome, a.error) for a in Client(conn).job_attempts(job_id)]


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _late_write(service_dsn: str, clock: Clock, job_id: int, token: int) -> str:
    """What the server answers a write of the holder of ``token`` now (a fenced_write)."""
    with psycopg.connect(service_dsn, autocommit=True) as conn:
        clock.set_on(conn)
        try:
            Client(conn).fenced_write(job_id, token)
        except LeaseLost:
            return "refused"
        return "accepted"


def _check_retried_then_dead_lettered(
    service_dsn: str, clock: Clock, job_id: int, timed_out: Callable[[], int], cancelled: Callable[[], int]
) -> None:
    """The shared script: attempt 1 is stopped by the worker at its deadline, while the database
    (frozen) still shows its lease; its late write is refused once the clock reaches the deadline;
    the next claim retries it (attempt 2, stopped too), and the one after dead-letters it."""
    _until(lambda: timed_out() == 1 and cancelled() == 1, "the worker to stop attempt 1 at its deadline")
    job = _job(service_dsn, clock, job_id)
    assert (job.status, job.attempts, job.fencing_token) == ("IN_PROGRESS", 1, 1)
    assert job.lease_expires_at == T0 + TIMEOUT, "the lease ends at the attempt's deadline, not the lease's"
    assert _late_write(service_dsn, clock, job_id, 1) == "accepted", "before the deadline (database clock)"
    clock.now = T0 + TIMEOUT
    assert _late_write(service_dsn, clock, job_id, 1) == "refused", "the hung handler's late write"
    _until(lambda: timed_out() == 2 and cancelled() == 2, "attempt 2, stopped at its deadline")
    job = _job(service_dsn, clock, job_id)
    assert (job.status, job.attempts, job.fencing_token) == ("IN_PROGRESS", 2, 2)
    clock.now = T0 + 2 * TIMEOUT
    _until(lambda: _job(service_dsn, clock, job_id).status == "FAILED", "the dead letter after the last attempt")
    job = _job(service_dsn, clock, job_id)
    assert job.last_error == "deadline exceeded: attempt 2 ran out of time"
    assert _outcomes(service_dsn, job_id) == [("deadline_exceeded", "deadline exceeded")] * 2


def test_async_worker_cancels_a_handler_that_never_returns_at_its_deadline(service_dsn: str, queue: str) -> None:
    clock = Clock()
    job_id = _enqueue(service_dsn, clock, queue, max_attempts=2, timeout=TIMEOUT)
    cancelled: list[int] = []

    async def handler(job: Job, ctx: AsyncJobContext) -> None:
        assert ctx.deadline == job.claimed_at + TIMEOUT  # type: ignore[operator]
        try:
            await asyncio.Event().wait()  # a model call that never answers
        except asyncio.CancelledError:
            cancelled.append(job.fencing_token)
            raise

    async def run() -> None:
        pool = AsyncConnectionPool(
            service_dsn, min_size=1, max_size=6, kwargs={"autocommit": True}, open=False, check=clock.aset_on
        )
        async with pool:
            worker = AsyncWorker(pool, handler, queue, concurrency=1, poll_interval=0.05, listen=False)
            task = asyncio.create_task(worker.run(install_signal_handlers=False))
            try:
                await asyncio.to_thread(
                    _check_retried_then_dead_lettered,
                    service_dsn,
                    clock,
                    job_id,
                    lambda: worker.stats.timed_out,
                    lambda: len(cancelled),
                )
            finally:
                worker.stop()
                await asyncio.wait_for(task, WAIT)
            assert (worker.stats.completed, worker.stats.failed, worker.stats.timed_out) == (0, 0, 2)

    asyncio.run(run())
    assert cancelled == [1, 2]


def test_sync_worker_flags_a_thread_at_its_deadline_and_its_context_refuses(service_dsn: str, queue: str) -> None:
    clock = Clock()
    job_id = _enqueue(service_dsn, clock, queue, max_attempts=2, timeout=TIMEOUT)
    stopped: list[str] = []

    def handler(job: Job, ctx: JobContext) -> None:
        while not ctx.cancelled():  # a thread cannot be cancelled: it looks between steps
            time.sleep(0.005)
        try:
            with ctx.fenced():
                stopped.append("written")
        except DeadlineExceeded:
            stopped.append("refused at once")

    with ConnectionPool(service_dsn, min_size=1, max_size=6, kwargs={"autocommit": True}, check=clock.set_on) as pool:
        worker = Worker(pool, handler, queue, concurrency=1, poll_interval=0.05, listen=False)
        thread = threading.Thread(target=lambda: worker.run(install_signal_handlers=False))
        thread.start()
        try:
            _check_retried_then_dead_lettered(
                service_dsn, clock, job_id, lambda: worker.stats.timed_out, lambda: len(stopped)
            )
        finally:
            worker.stop()
            thread.join(WAIT)
    assert not thread.is_alive()
    assert stopped == ["refused at once"] * 2
    assert (worker.stats.completed, worker.stats.failed, worker.stats.timed_out) == (0, 0, 2)


def _check_snoozed_then_run(service_dsn: str, clock: Clock, job_id: int, runs: Callable[[], int]) -> None:
    def snoozed() -> bool:
        job = _job(service_dsn, clock, job_id)
        return (job.status, job.fencing_token) == ("PENDING", 1)

    _until(snoozed, "the snooze")
    job = _job(service_dsn, clock, job_id)
    assert (job.attempts, job.run_at, job.fencing_token) == (0, T0 + timedelta(seconds=30), 1)
    assert _outcomes(service_dsn, job_id) == [("snoozed", None)]
    assert _late_write(service_dsn, clock, job_id, 1) == "refused", "the snoozer's token is dead"
    time.sleep(0.2)  # a few polls: nothing takes the job before its time (not a lease race)
    assert runs() == 1
    clock.now = T0 + timedelta(seconds=30)
    _until(lambda: _job(service_dsn, clock, job_id).status == "COMPLETED", "the run after the snooze")
    assert _job(service_dsn, clock, job_id).attempts == 1, "the snooze spent no attempt"


def test_async_handler_raises_snooze_and_runs_again_at_its_time_without_spending_an_attempt(
    service_dsn: str, queue: str
) -> None:
    clock = Clock()
    job_id = _enqueue(service_dsn, clock, queue, max_attempts=1)
    runs: list[int] = []

    async def handler(job: Job, ctx: AsyncJobContext) -> str:
        runs.append(job.fencing_token)
        if len(runs) == 1:
            raise Snooze(30)  # a 429 with retry_after: 30
        return "done"

    async def run() -> None:
        pool = AsyncConnectionPool(
            service_dsn, min_size=1, max_size=6, kwargs={"autocommit": True}, open=False, check=clock.aset_on
        )
        async with pool:
            worker = AsyncWorker(pool, handler, queue, concurrency=1, poll_interval=0.05, listen=False)
            task = asyncio.create_task(worker.run(install_signal_handlers=False))
            try:
                await asyncio.to_thread(_check_snoozed_then_run, service_dsn, clock, job_id, lambda: len(runs))
            finally:
                worker.stop()
                await asyncio.wait_for(task, WAIT)
            assert (worker.stats.snoozed, worker.stats.completed, worker.stats.failed) == (1, 1, 0)

    asyncio.run(run())
    assert runs == [1, 2]


def test_sync_handler_snoozes_through_its_context(service_dsn: str, queue: str) -> None:
    clock = Clock()
    job_id = _enqueue(service_dsn, clock, queue, max_attempts=1)
    runs: list[int] = []

    def handler(job: Job, ctx: JobContext) -> str | None:
        runs.append(job.fencing_token)
        if len(runs) == 1:
            ctx.snooze(timedelta(seconds=30))
            return None
        return "done"

    with ConnectionPool(service_dsn, min_size=1, max_size=6, kwargs={"autocommit": True}, check=clock.set_on) as pool:
        worker = Worker(pool, handler, queue, concurrency=1, poll_interval=0.05, listen=False)
        thread = threading.Thread(target=lambda: worker.run(install_signal_handlers=False))
        thread.start()
        try:
            _check_snoozed_then_run(service_dsn, clock, job_id, lambda: len(runs))
        finally:
            worker.stop()
            thread.join(WAIT)
    assert runs == [1, 2]
    assert (worker.stats.snoozed, worker.stats.completed) == (1, 1)


def test_graph_runs_pass_their_deadlines_to_their_job(role_dsn: Callable[[str], str], queue: str) -> None:
    """A graph run's job carries the deadlines its start was given (sync and async GraphRuns)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from graph_run_worker import build

    from agent_state import AsyncClient
    from agent_state.langgraph import AsyncGraphRuns, GraphRuns

    deadline, start_by = (
        datetime.fromisoformat("2099-01-01T00:00:00+00:00"),
        datetime.fromisoformat("2098-01-01T00:00:00+00:00"),
    )
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        job = GraphRuns(Client(conn), build(), queue=queue).start(
            f"dl-{uuid.uuid4()}", {"log": ["input"]}, timeout=TIMEOUT, deadline=deadline, start_by=start_by
        )
    assert (job.timeout, job.deadline, job.start_by) == (TIMEOUT, deadline, start_by)

    async def astart() -> Job:
        async with await psycopg.AsyncConnection.connect(role_dsn("tenant_a"), autocommit=True) as conn:
            runs = AsyncGraphRuns(AsyncClient(conn), build(), queue=queue)
            return await runs.start(f"dl-{uuid.uuid4()}", {"log": ["input"]}, timeout=TIMEOUT, deadline=deadline)

    job = asyncio.run(astart())
    assert (job.timeout, job.deadline, job.start_by) == (TIMEOUT, deadline, None)


def test_the_run_story_tells_a_deadline_and_a_snooze() -> None:
    """The console's run page and ``agent-state show`` (run_story.py) name a deadline exceeded,
    not a lease that expired, and a snooze as an attempt given back."""
    from agent_state.run_story import attempt_story

    def attempt(n: int, outcome: str, token: int) -> dict[str, Any]:
        at = T0 + n * TIMEOUT
        return {
            "attempt": n,
            "worker": f"w{n}",
            "fencing_token": token,
            "claimed_at": at,
            "lease_expires_at": at + TIMEOUT,
            "ended_at": at + TIMEOUT,
            "outcome": outcome,
            "error": None,
        }

    story = attempt_story(
        {"max_attempts": 3},
        [attempt(1, "snoozed", 1), attempt(1, "deadline_exceeded", 2), attempt(2, "in_progress", 3)],
    )
    assert story[0]["text"].startswith("snoozed") and not story[0]["counted"]
    assert story[1]["text"] == (
        "deadline exceeded at 2031-01-01 00:00:00 UTC (its run timeout or the job's deadline); taken over by w2"
        " (fencing token 3): the fence refuses w1's writes with token 2 from then on"
    )
    assert story[1]["counted"]


def test_bad_deadlines_raise_typed_errors(service_dsn: str, role_dsn: Callable[[str], str], queue: str) -> None:
    """AS002 (InvalidArgument) for a deadline that cannot hold, AS007 (PermissionDenied) for a
    queue's defaults set by anyone but an operator, 42501 for a tenant (no privilege at all)."""
    from agent_state import InvalidArgument, NewJob, PermissionDenied

    clock = Clock()
    with psycopg.connect(service_dsn, autocommit=True) as conn:
        clock.set_on(conn)
        client = Client(conn)
        thread = client.create_session().thread_id
        for bad in ({"timeout": timedelta(0)}, {"deadline": T0}, {"start_by": T0 - timedelta(seconds=1)}):
            with pytest.raises(InvalidArgument):
                client.enqueue_job(thread, {}, queue=queue, **bad)
        batch = client.enqueue_jobs(
            [NewJob(thread, timeout=timedelta(seconds=5), start_by=T0 + timedelta(hours=1)), NewJob(thread)],
            queue=queue,
        )
        assert [(j.timeout, j.start_by) for j in batch] == [
            (timedelta(seconds=5), T0 + timedelta(hours=1)),
            (None, None),
        ]
        client.set_queue_deadlines(queue, timeout=timedelta(minutes=1))
        assert client.enqueue_job(thread, {}, queue=queue).timeout == timedelta(minutes=1)
        client.set_queue_deadlines(queue)  # all None: no defaults any more
        assert client.enqueue_job(thread, {}, queue=queue).timeout is None
        with client.acting_as("tenant_a") as bound, pytest.raises(PermissionDenied):
            bound.set_queue_deadlines(queue, timeout=timedelta(hours=1))
    with (
        psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        Client(conn).set_queue_deadlines(queue, timeout=timedelta(hours=1))
