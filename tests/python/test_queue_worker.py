"""Worker and AsyncWorker against the real database: completions, failures with retries, fenced
writes, lease loss seen by the handler, NOTIFY wake-up, and graceful shutdown."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool, ConnectionPool

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
    started, refused = threading.Event(), threading.Event()

    def handler(job: Job, ctx: JobContext) -> None:
        started.set()
        time.sleep(0.3)
        try:
            with ctx.fenced():
                pass
        except LeaseLost:
            refused.set()
            raise

    worker = Worker(pool, handler, queue, concurrency=1, poll_interval=0.05)
    thread = _run_in_thread(worker)
    assert started.wait(10)
    client.cancel_job(job.job_id)
    assert refused.wait(10), "the fenced write after the cancel was refused"
    worker.stop()
    thread.join(10)
    assert worker.stats.lost == 1 and client.get_job(job.job_id).status == "CANCELLED"


def test_renewal_keeps_a_long_job_and_reports_a_lost_lease(pool: ConnectionPool, queue: str) -> None:
    client = Client(pool)
    [job] = _jobs(client, queue, 1)
    lost_seen = threading.Event()

    def handler(job: Job, ctx: JobContext) -> None:
        time.sleep(1.2)  # four lease thirds: only renewals keep it
        assert not ctx.lease_lost
        with ctx.fenced():
            pass
        # now someone else takes it: the next renewal tells us
        with pool.connection() as conn:
            conn.execute("select ai.cancel_job(%s)", (job.job_id,))
        deadline = time.monotonic() + 5
        while not ctx.lease_lost and time.monotonic() < deadline:
            time.sleep(0.05)
        if ctx.lease_lost:
            lost_seen.set()

    Worker(pool, handler, queue, concurrency=1, lease=timedelta(seconds=0.9), poll_interval=0.05).run(
        drain=True, install_signal_handlers=False
    )
    assert lost_seen.is_set()
    assert client.get_job(job.job_id).status == "CANCELLED"


@pytest.mark.session_features("LISTEN (behind a transaction pooler the worker polls: docs/connections.md)")
def test_notify_wakes_an_idle_worker_long_before_its_poll(pool: ConnectionPool, queue: str) -> None:
    client = Client(pool)
    done = threading.Event()
    worker = Worker(pool, lambda job, ctx: done.set(), queue, concurrency=1, poll_interval=30)
    thread = _run_in_thread(worker)
    time.sleep(0.5)  # the worker is idle, listening; its next poll is 30 s away
    _jobs(client, queue, 1)
    woke = done.wait(10)
    worker.stop()
    thread.join(10)
    assert woke, "a notification woke the worker (polling alone would take 30 s)"


def test_stop_lets_running_handlers_finish_then_releases_the_rest(pool: ConnectionPool, queue: str) -> None:
    client = Client(pool)
    jobs = _jobs(client, queue, 4, threads=4)
    started = threading.Barrier(3)

    def handler(job: Job, ctx: JobContext) -> None:
        started.wait(10)
        time.sleep(0.2 if job.payload["n"] == 0 else 30)

    worker = Worker(pool, handler, queue, concurrency=2, prefetch=2, poll_interval=0.05, grace_period=1.0)
    thread = _run_in_thread(worker)
    started.wait(10)
    worker.stop()
    thread.join(15)
    assert not thread.is_alive()
    statuses = _statuses(client, jobs)
    assert statuses.count("COMPLETED") == 1, "the short handler finished within the grace period"
    assert statuses.count("PENDING") == 3, "the slow one and the two not started were released"
    assert all(client.get_job(j.job_id).attempts == 0 for j in jobs if client.get_job(j.job_id).status == "PENDING")
    assert worker.stats.released == 3


def test_async_worker(service_dsn: str, pool: ConnectionPool, queue: str) -> None:
    client = Client(pool)
    jobs = _jobs(client, queue, 12, threads=4)

    async def scenario() -> None:
        async with AsyncConnectionPool(service_dsn, min_size=1, max_size=6, kwargs={"autocommit": True}) as apool:

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
