"""Worker and AsyncWorker against the real database: completions, failures with retries, fenced
writes, lease loss seen by the handler, NOTIFY wake-up, and graceful shutdown."""

from __future__ import annotations

import asyncio
import queue as queue_module
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool, ConnectionPool
from waiting import WAIT, DatabaseClock, listening, wait_until

from agent_state import AsyncJobContext, AsyncWorker, Client, Job, JobContext, LeaseLost, Worker


@pytest.fixture
def service_dsn(role_dsn: Callable[[str], str]) -> str:
    return role_dsn("app_service")


@pytest.fixture
def pool(service_dsn: str) -> Iterator[ConnectionPool]:
    with ConnectionPool(service_dsn, min_size=1, max_size=8, kwargs={"autocommit": True}, open=True) as p:
        yield p


@pytest.fixture
def queue() -> str:
    return f"w-{uuid.uuid4().hex[:12]}"


def _jobs(client: Client, queue: str, n: int, threads: int = 1, **kwargs: Any) -> list[Job]:
    names = [f"t-{uuid.uuid4()}" for _ in range(threads)]
    for name in names:
        client.create_session(name)
    return [client.enqueue_job(names[i % threads], {"n": i}, queue=queue, **kwargs) for i in range(n)]


def _statuses(client: Client, jobs: list[Job]) -> list[str]:
    return [client.get_job(j.job_id).status for j in jobs]


def _run_in_thread(worker: Worker, **kwargs: Any) -> threading.Thread:
    thread = threading.Thread(target=worker.run, kwargs={"install_signal_handlers": False, **kwargs}, daemon=True)
    thread.start()
    return thread


def test_worker_completes_every_job_with_the_handlers_result(pool: ConnectionPool, queue: str) -> None:
    client = Client(pool)
    jobs = _jobs(client, queue, 30, threads=6)
    seen: list[int] = []

    def handler(job: Job, ctx: JobContext) -> dict[str, Any]:
        seen.append(job.job_id)
        return {"double": job.payload["n"] * 2}

    stats = Worker(pool, handler, queue, concurrency=3, poll_interval=0.05).run(
        drain=True, install_signal_handlers=False
    )
    assert stats.completed == 30 and sorted(seen) == sorted(j.job_id for j in jobs)
    assert [client.get_job(j.job_id).result for j in jobs] == [{"double": 2 * i} for i in range(30)]


def test_handler_errors_fail_the_job_and_it_is_retried_until_attempts_are_spent(
    pool: ConnectionPool, queue: str
) -> None:
    client = Client(pool)
    [job] = _jobs(client, queue, 1, max_attempts=2)
    calls: list[int] = []

    def handler(job: Job, ctx: JobContext) -> None:
        calls.append(job.attempts)
        if job.attempts == 1:
            client.fail_job(job.job_id, job.fencing_token, "first try", timedelta(0))
            ctx.finished = True
            return
        raise RuntimeError("broken")

    Worker(pool, handler, queue, concurrency=1, poll_interval=0.05).run(drain=True, install_signal_handlers=False)
    final = client.get_job(job.job_id)
    assert calls == [1, 2]
    assert (final.status, final.attempts, final.last_error) == ("FAILED", 2, "RuntimeError: broken")


def test_fenced_writes_and_completion_commit_together(pool: ConnectionPool, dsn: str, queue: str) -> None:
    table = f"effects_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"create table public.{table} (job_id bigint, token bigint)")
        admin.execute(f"grant insert, select on public.{table} to app_service")
    client = Client(pool)
    jobs = _jobs(client, queue, 10, threads=10)

    def handler(job: Job, ctx: JobContext) -> None:
        with ctx.fenced() as conn:
            conn.execute(f"insert into public.{table} values (%s, %s)", (job.job_id, job.fencing_token))
            ctx.complete({"written": True}, conn)

    stats = Worker(pool, handler, queue, concurrency=2, poll_interval=0.05).run(
        drain=True, install_signal_handlers=False
    )
    assert stats.completed == 10
    with pool.connection() as conn:
        rows = conn.execute(f"select job_id, token from public.{table} order by job_id").fetchall()
    assert rows == [(j.job_id, 1) for j in jobs]


def test_cancelled_job_stops_its_handlers_writes(pool: ConnectionPool, queue: str) -> None:
    client = Client(pool)
    [job] = _jobs(client, queue, 1)
    started, cancelled, refused = threading.Event(), threading.Event(), threading.Event()

    def handler(job: Job, ctx: JobContext) -> None:
        started.set()
        if not cancelled.wait(WAIT):  # the fenced write comes after the cancel, whatever the speed
            return
        try:
            with ctx.fenced():
                pass
        except LeaseLost:
            refused.set()
            raise

    worker = Worker(pool, handler, queue, concurrency=1, poll_interval=0.05)
    thread = _run_in_thread(worker)
    try:
        assert started.wait(WAIT), "the handler started"
        client.cancel_job(job.job_id)
        cancelled.set()
        assert refused.wait(WAIT), "the fenced write after the cancel was refused"
    finally:
        cancelled.set()
        worker.stop()
        thread.join(WAIT)
    assert not thread.is_alive()
    assert worker.stats.lost == 1 and client.get_job(job.job_id).status == "CANCELLED"


def _lease_expires_at(admin: psycopg.Connection[Any], job_id: int) -> datetime | None:
    row = admin.execute("select lease_expires_at from ai.agent_jobs where job_id = %s", (job_id,)).fetchone()
    assert row is not None
    return row[0]  # type: ignore[no-any-return]


def _count(admin: psycopg.Connection[Any], queue: str, status: str) -> int:
    row = admin.execute(
        "select count(*) from ai.agent_jobs where queue = %s and status = %s", (queue, status)
    ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.session_features("the frozen clock ai.frozen_now, set on every connection of the worker's pool")
def test_renewal_keeps_a_long_job_and_reports_a_lost_lease(service_dsn: str, dsn: str, queue: str) -> None:
    """The database clock moves only when the test moves it, a step of half a lease at a time and
    only once the previous step's renewal is seen: the handler holds the job across three steps
    (past its first lease) and still writes fenced; after a cancel, a renewal tells it the lease
    is lost."""
    lease = timedelta(seconds=0.9)  # the worker renews every 0.3 s of real time
    clock = DatabaseClock(datetime.now(timezone.utc))
    held, moved = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def handler(job: Job, ctx: JobContext) -> None:
        held.set()
        if not moved.wait(WAIT):
            return
        seen["kept"] = not ctx.lease_lost
        with ctx.fenced():  # on a clock past the first lease: only the renewals kept it
            seen["fenced"] = True
        with pool.connection() as conn:  # now someone else takes it: the next renewal tells us
            conn.execute("select ai.cancel_job(%s)", (job.job_id,))
        deadline = time.monotonic() + WAIT
        while not ctx.lease_lost and time.monotonic() < deadline:
            time.sleep(0.01)
        seen["lost"] = ctx.lease_lost

    with (
        ConnectionPool(
            service_dsn, min_size=1, max_size=8, kwargs={"autocommit": True}, check=clock.check, open=True
        ) as pool,
        psycopg.connect(dsn, autocommit=True) as admin,
    ):
        client = Client(pool)
        [job] = _jobs(client, queue, 1)
        worker = Worker(pool, handler, queue, concurrency=1, lease=lease, poll_interval=0.05)
        thread = _run_in_thread(worker, drain=True)
        try:
            assert held.wait(WAIT), "the worker claimed the job"
            first_expiry = _lease_expires_at(admin, job.job_id)
            assert first_expiry == clock.now + lease
            for _ in range(3):
                now = clock.advance(lease / 2)  # less than a lease: the last renewal still holds

                def renewed(now: datetime = now) -> bool:
                    expiry = _lease_expires_at(admin, job.job_id)
                    assert expiry is not None, "the job is still held"
                    return expiry >= now + lease

                wait_until(renewed, f"a renewal of the lease on the clock {now}")
            assert clock.now > first_expiry, "the handler now runs past its first lease"
        finally:
            moved.set()
            thread.join(WAIT)
        assert not thread.is_alive()
        assert seen == {"kept": True, "fenced": True, "lost": True}, seen
        assert worker.stats.lost == 1
        assert client.get_job(job.job_id).status == "CANCELLED"


@pytest.mark.session_features("LISTEN (behind a transaction pooler the worker polls: docs/connections.md)")
def test_notify_wakes_an_idle_worker_long_before_its_poll(service_dsn: str, dsn: str, queue: str) -> None:
    """The job is enqueued only once the worker's LISTEN has committed and its first claim came
    back empty; its next poll is an hour away, so only the notification can wake it."""
    done = threading.Event()
    kwargs = {"autocommit": True, "application_name": queue}
    with (
        ConnectionPool(service_dsn, min_size=1, max_size=8, kwargs=kwargs, open=True) as pool,
        psycopg.connect(dsn, autocommit=True) as admin,
    ):
        client = Client(pool)
        [channel] = admin.execute("select ai.queue_channel(%s)", (queue,)).fetchone()  # type: ignore[misc]
        worker = Worker(pool, lambda job, ctx: done.set(), queue, concurrency=1, poll_interval=3600)
        thread = _run_in_thread(worker)
        try:
            wait_until(lambda: listening(admin, channel), "the worker's LISTEN on its queue's channel")
            wait_until(
                lambda: (
                    admin.execute(
                        "select count(*) from pg_stat_activity where datname = current_database()"
                        " and application_name = %s and state = 'idle'"
                        " and query like '%%ai.claim_job%%'",
                        (queue,),
                    ).fetchone()
                    != (0,)
                ),
                "the worker's first claim, which finds nothing",
            )
            _jobs(client, queue, 1)
            woke = done.wait(WAIT)
        finally:
            worker.stop()
            thread.join(WAIT)
    assert not thread.is_alive()
    assert woke, "a notification woke the worker (its next poll was an hour away)"


def test_stop_lets_a_running_handler_finish_then_releases_the_jobs_not_started(
    pool: ConnectionPool, dsn: str, queue: str
) -> None:
    """The running handler finishes when the test lets it, which is after the worker has
    released the two jobs it prefetched: it is inside the grace period, and its job completes."""
    client = Client(pool)
    jobs = _jobs(client, queue, 3, threads=3)
    started, finish = threading.Event(), threading.Event()
    ran: list[int] = []

    def handler(job: Job, ctx: JobContext) -> None:
        ran.append(job.job_id)
        started.set()
        finish.wait(WAIT)

    worker = Worker(pool, handler, queue, concurrency=1, prefetch=2, poll_interval=0.05, grace_period=WAIT)
    with psycopg.connect(dsn, autocommit=True) as admin:
        thread = _run_in_thread(worker)
        try:
            assert started.wait(WAIT), "a handler started"
            wait_until(lambda: _count(admin, queue, "IN_PROGRESS") == 3, "the worker holding all three jobs")
            worker.stop()
            wait_until(lambda: _count(admin, queue, "PENDING") >= 2, "the two jobs not started going back to PENDING")
            assert _count(admin, queue, "IN_PROGRESS") == 1, "the running handler's job is held through the grace"
        finally:
            finish.set()
            thread.join(WAIT)
    assert not thread.is_alive()
    [running] = ran
    finished = {j.job_id: client.get_job(j.job_id) for j in jobs}
    assert finished[running].status == "COMPLETED", "the running handler finished within the grace period"
    assert [(f.status, f.attempts) for i, f in finished.items() if i != running] == [("PENDING", 0)] * 2
    assert (worker.stats.completed, worker.stats.released) == (1, 2)


def test_stop_releases_a_handler_that_outlives_the_grace_period(pool: ConnectionPool, dsn: str, queue: str) -> None:
    """The handler is held until the worker has returned, so it outlives any grace period: its
    job and the one prefetched go back to PENDING, and its late fenced write is refused."""
    client = Client(pool)
    jobs = _jobs(client, queue, 2, threads=2)
    started, finish, refused = threading.Event(), threading.Event(), threading.Event()

    def handler(job: Job, ctx: JobContext) -> None:
        started.set()
        finish.wait(WAIT)
        try:
            with ctx.fenced():
                pass
        except LeaseLost:
            refused.set()

    worker = Worker(pool, handler, queue, concurrency=1, prefetch=1, poll_interval=0.05, grace_period=0.1)
    with psycopg.connect(dsn, autocommit=True) as admin:
        thread = _run_in_thread(worker)
        try:
            assert started.wait(WAIT), "a handler started"
            wait_until(lambda: _count(admin, queue, "IN_PROGRESS") == 2, "the worker holding both jobs")
            worker.stop()
            thread.join(WAIT)
            assert not thread.is_alive(), "the worker returned without waiting for the handler"
        finally:
            finish.set()
    assert [(j.status, j.attempts) for j in (client.get_job(j.job_id) for j in jobs)] == [("PENDING", 0)] * 2
    assert worker.stats.released == 2
    assert refused.wait(WAIT), "the released handler's late fenced write was refused"


@pytest.mark.session_features("the frozen clock ai.frozen_now, set on every connection of the worker's pool")
def test_async_worker(service_dsn: str, pool: ConnectionPool, queue: str) -> None:
    """The worker's clock stands still, so the failed job's retry (due a backoff later) never
    comes due during the run, however long the other jobs take."""
    client = Client(pool)
    jobs = _jobs(client, queue, 12, threads=4)
    clock = DatabaseClock(client.now())  # after every job's run_at

    async def scenario() -> None:
        async with AsyncConnectionPool(
            service_dsn, min_size=1, max_size=6, kwargs={"autocommit": True}, check=clock.acheck
        ) as apool:

            async def handler(job: Job, ctx: AsyncJobContext) -> Any:
                if job.payload["n"] == 0:
                    raise ValueError("zero")
                if job.payload["n"] == 1:
                    async with ctx.fenced() as conn:
                        await ctx.complete({"fenced": True}, conn)
                    return None
                await asyncio.sleep(0.01)
                return job.payload["n"]

            stats = await AsyncWorker(apool, handler, queue, concurrency=3, poll_interval=0.05).run(
                drain=True, install_signal_handlers=False
            )
            assert (stats.completed, stats.failed) == (11, 1)

    asyncio.run(scenario())
    finished = [client.get_job(j.job_id) for j in jobs]
    assert finished[0].status == "PENDING" and finished[0].last_error == "ValueError: zero"
    assert finished[1].result == {"fenced": True}
    assert [f.result for f in finished[2:]] == list(range(2, 12))


class _OutcomeAfterTheEnd(queue_module.Queue[Any]):
    """The completion queue with a handler's outcome held back until shutdown has queued its end
    marker (at most a bounded wait): the order in which a worker that books the handler as done
    before queuing its outcome loses the outcome."""

    def __init__(self) -> None:
        super().__init__()
        self.ended = threading.Event()

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        if item is None:
            self.ended.set()
        else:
            self.ended.wait(2.0)  # a correct worker cannot reach the end marker first: this times out
        super().put(item, block, timeout)


def test_a_handler_that_returns_as_the_worker_stops_still_completes_its_job(pool: ConnectionPool, queue: str) -> None:
    client = Client(pool)
    [job] = _jobs(client, queue, 1)
    workers: list[Worker] = []

    def handler(job: Job, ctx: JobContext) -> dict[str, Any]:
        workers[0].stop()
        return {"done": True}

    worker = Worker(pool, handler, queue=queue, worker_id="w-end", concurrency=1, prefetch=0, poll_interval=0.05)
    worker._done = _OutcomeAfterTheEnd()
    workers.append(worker)
    worker.run(install_signal_handlers=False)
    assert client.get_job(job.job_id).status == "COMPLETED"


class _Calls:
    """The worker's client, counting the jobs claimed apart (``claim_jobs``) and with the
    completions (``complete_and_claim``)."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self.claimed_apart = 0
        self.claimed_with_completions = 0

    def claim_jobs(self, *args: Any, **kwargs: Any) -> list[Job]:
        jobs = self._client.claim_jobs(*args, **kwargs)
        self.claimed_apart += len(jobs)
        return jobs

    def complete_and_claim(self, *args: Any, **kwargs: Any) -> tuple[list[int], list[Job]]:
        done, jobs = self._client.complete_and_claim(*args, **kwargs)
        self.claimed_with_completions += len(jobs)
        return done, jobs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


@pytest.mark.parametrize("prefetch", [0, None])
def test_a_finished_handlers_completion_carries_the_claim_that_refills_its_place(
    pool: ConnectionPool, queue: str, prefetch: int | None
) -> None:
    """Issue 41 item 5: the completer sends the completions and the next claim in one round trip
    and one transaction (ai.complete_and_claim), not a completion and a claim of its own each."""
    client = Client(pool)
    _jobs(client, queue, 40, threads=40)
    worker = Worker(pool, lambda job, ctx: None, queue, concurrency=2, prefetch=prefetch, poll_interval=0.05)
    calls = _Calls(worker.client)
    worker.client = calls  # type: ignore[assignment]  # a proxy with the client's methods
    stats = worker.run(drain=True, install_signal_handlers=False)
    assert stats.completed == 40
    assert calls.claimed_apart + calls.claimed_with_completions == 40
    assert calls.claimed_with_completions >= 20, (
        f"most jobs claimed with a completion: {calls.claimed_with_completions} of 40 (apart: {calls.claimed_apart})"
    )
