"""AsyncWorker does what Worker does (issue 14): prefetch, batched completion, ``ctx.fail()``,
graceful shutdown with a grace period, lease renewal for a handler that outlives its lease.

No test races a sleep against a lease: the renewal test freezes the database clock
(``ai.frozen_now``, set on every connection the worker's pool hands out) and moves it itself,
always within the lease the database shows, and waits for the renewal the move calls for. Other
waits are on conditions (an event, a row's state), each bounded by WAIT."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool

from agent_state import AsyncClient, AsyncJobContext, AsyncWorker, Client, Job, WorkerStats

WAIT = 20.0  # seconds: the bound on every wait for a condition


@pytest.fixture
def service_dsn(role_dsn: Callable[[str], str]) -> str:
    return role_dsn("app_service")


@pytest.fixture
def queue() -> str:
    return f"aw-{uuid.uuid4().hex[:12]}"


def _enqueue(service_dsn: str, queue: str, n: int) -> list[int]:
    """n jobs, each on its own thread (jobs of one thread run one at a time)."""
    with psycopg.connect(service_dsn, autocommit=True) as conn:
        sync = Client(conn)
        ids = []
        for i in range(n):
            thread = f"aw-{uuid.uuid4()}"
            sync.create_session(thread)
            ids.append(sync.enqueue_job(thread, {"n": i}, queue=queue).job_id)
        return ids


def _jobs(dsn: str, ids: list[int]) -> list[tuple[str, int, str | None]]:
    """(status, attempts, last_error) of each job, read as the superuser."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "select job_id, status, attempts, last_error from ai.agent_jobs where job_id = any(%s)", (ids,)
        ).fetchall()
    by_id = {r[0]: (r[1], r[2], r[3]) for r in rows}
    return [by_id[i] for i in ids]


async def _until(condition: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + WAIT
    while not await condition():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


async def _held_by(dsn: str, worker_id: str) -> int:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cur = await conn.execute(
            "select count(*) from ai.agent_jobs where status = 'IN_PROGRESS' and lease_owner = %s", (worker_id,)
        )
        row = await cur.fetchone()
        assert row is not None
        return int(row[0])


def _pool(service_dsn: str, **kwargs: Any) -> AsyncConnectionPool:
    return AsyncConnectionPool(service_dsn, min_size=1, max_size=8, kwargs={"autocommit": True}, open=False, **kwargs)


def test_prefetch_claims_up_to_concurrency_plus_prefetch_and_runs_them_all(
    dsn: str, service_dsn: str, queue: str
) -> None:
    ids = _enqueue(service_dsn, queue, 6)
    release = asyncio.Event()
    running, most = [0], [0]

    async def handler(job: Job, ctx: AsyncJobContext) -> int:
        running[0] += 1
        most[0] = max(most[0], running[0])
        await release.wait()
        running[0] -= 1
        return job.job_id

    async def _held(n: int) -> bool:
        return await _held_by(dsn, "prefetcher") == n

    async def run() -> WorkerStats:
        async with _pool(service_dsn) as pool:
            worker = AsyncWorker(
                pool,
                handler,
                queue,
                concurrency=1,
                prefetch=3,
                poll_interval=0.05,
                listen=False,
                worker_id="prefetcher",
            )
            task = asyncio.create_task(worker.run(drain=True, install_signal_handlers=False))
            await _until(lambda: _held(4), "the worker to hold concurrency + prefetch = 4 jobs")
            assert [s for s, _, _ in _jobs(dsn, ids)].count("PENDING") == 2, "no more than 4 claimed"
            release.set()
            return await asyncio.wait_for(task, WAIT)

    stats = asyncio.run(run())
    assert most[0] == 1, "concurrency 1: one handler at a time, the prefetched ones wait"
    assert (stats.claimed, stats.completed) == (6, 6)
    assert [s for s, _, _ in _jobs(dsn, ids)] == ["COMPLETED"] * 6


class Counting:
    """The worker's client, counting the completion calls (``complete_jobs``, or
    ``complete_and_claim`` with the next claim); the first waits until
    every handler has returned, so the others are queued behind it and go in one more call."""

    def __init__(self, client: AsyncClient, handlers: int, returned: list[int]):
        self._client = client
        self._handlers = handlers
        self._returned = returned
        self.complete_jobs_calls: list[int] = []
        self.complete_job_calls = 0

    async def _first(self, done: list[tuple[int, int, Any]]) -> None:
        if not self.complete_jobs_calls:

            async def all_returned() -> bool:
                return self._returned[0] == self._handlers

            await _until(all_returned, "every handler to return")
        self.complete_jobs_calls.append(len(done))

    async def complete_jobs(self, done: list[tuple[int, int, Any]]) -> list[int]:
        await self._first(done)
        return await self._client.complete_jobs(done)

    async def complete_and_claim(self, *args: Any) -> tuple[list[int], list[Job]]:
        """The completions with the next claim, in one round trip (issue 41 item 5)."""
        await self._first(args[4])
        return await self._client.complete_and_claim(*args)

    async def complete_job(self, *args: Any, **kwargs: Any) -> Job:
        self.complete_job_calls += 1
        return await self._client.complete_job(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_completions_are_sent_in_batches(dsn: str, service_dsn: str, queue: str) -> None:
    ids = _enqueue(service_dsn, queue, 5)
    returned = [0]

    async def handler(job: Job, ctx: AsyncJobContext) -> dict[str, int]:
        returned[0] += 1
        return {"job": job.job_id}

    async def run() -> tuple[WorkerStats, Counting]:
        async with _pool(service_dsn) as pool:
            worker = AsyncWorker(pool, handler, queue, concurrency=5, prefetch=0, poll_interval=0.05, listen=False)
            counting = Counting(worker.client, 5, returned)
            worker.client = counting  # type: ignore[assignment]  # a proxy with the client's methods
            stats = await asyncio.wait_for(worker.run(drain=True, install_signal_handlers=False), WAIT)
            return stats, counting

    stats, counting = asyncio.run(run())
    assert counting.complete_job_calls == 0, "no completion one job at a time"
    assert sum(counting.complete_jobs_calls) == 5 and len(counting.complete_jobs_calls) <= 2, (
        f"five completions in at most two round trips, not {counting.complete_jobs_calls}"
    )
    assert stats.completed == 5
    with psycopg.connect(dsn, autocommit=True) as conn:
        results = conn.execute("select job_id, result from ai.agent_jobs where job_id = any(%s)", (ids,)).fetchall()
    assert sorted(results) == [(i, {"job": i}) for i in ids]


def test_ctx_fail_fails_the_job_with_the_handlers_error_and_retry_in(dsn: str, service_dsn: str, queue: str) -> None:
    [job_id] = _enqueue(service_dsn, queue, 1)
    seen: list[bool] = []

    async def handler(job: Job, ctx: AsyncJobContext) -> None:
        await ctx.fail("upstream said no", retry_in=timedelta(hours=1))
        seen.append(ctx.finished)

    async def run() -> WorkerStats:
        async with _pool(service_dsn) as pool:
            worker = AsyncWorker(pool, handler, queue, concurrency=1, poll_interval=0.05, listen=False)
            return await asyncio.wait_for(worker.run(drain=True, install_signal_handlers=False), WAIT)

    stats = asyncio.run(run())
    assert seen == [True]
    assert _jobs(dsn, [job_id]) == [("PENDING", 1, "upstream said no")]
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "select run_at - now() > interval '50 minutes' from ai.agent_jobs where job_id = %s", (job_id,)
        )
        assert row.fetchone() == (True,), "retried after retry_in, not at once"
    assert (stats.failed, stats.completed, stats.lost) == (1, 0, 0)


def test_stop_lets_the_running_job_finish_releases_the_prefetched_one_and_claims_nothing_more(
    dsn: str, service_dsn: str, queue: str
) -> None:
    ids = _enqueue(service_dsn, queue, 3)
    started: list[int] = []
    first_started, release = asyncio.Event(), asyncio.Event()

    async def handler(job: Job, ctx: AsyncJobContext) -> str:
        started.append(job.job_id)
        first_started.set()
        await release.wait()
        return "done"

    async def run() -> WorkerStats:
        async with _pool(service_dsn) as pool:
            worker = AsyncWorker(
                pool, handler, queue, concurrency=1, prefetch=1, poll_interval=0.05, listen=False, worker_id="stopper"
            )
            task = asyncio.create_task(worker.run(install_signal_handlers=False))
            await asyncio.wait_for(first_started.wait(), WAIT)

            async def two_held() -> bool:
                return await _held_by(dsn, "stopper") == 2

            await _until(two_held, "the running job and the prefetched one")
            worker.stop()
            release.set()
            return await asyncio.wait_for(task, WAIT)

    stats = asyncio.run(run())
    assert len(started) == 1, "the prefetched job never started after stop()"
    statuses = dict(zip(ids, _jobs(dsn, ids), strict=True))
    assert statuses[started[0]] == ("COMPLETED", 1, None), "the running job finished"
    assert sorted(v for k, v in statuses.items() if k != started[0]) == [("PENDING", 0, None)] * 2, (
        "the prefetched job was released (its attempt not counted) and the third never claimed"
    )
    assert (stats.claimed, stats.completed, stats.released) == (2, 1, 1)


def test_a_handler_past_the_grace_period_is_released_and_its_context_refuses(
    dsn: str, service_dsn: str, queue: str
) -> None:
    [job_id] = _enqueue(service_dsn, queue, 1)
    started = asyncio.Event()
    contexts: list[AsyncJobContext] = []

    async def handler(job: Job, ctx: AsyncJobContext) -> None:
        contexts.append(ctx)
        started.set()
        await asyncio.Event().wait()  # never returns by itself

    async def run() -> WorkerStats:
        async with _pool(service_dsn) as pool:
            worker = AsyncWorker(
                pool, handler, queue, concurrency=1, poll_interval=0.05, listen=False, grace_period=0.1
            )
            task = asyncio.create_task(worker.run(install_signal_handlers=False))
            await asyncio.wait_for(started.wait(), WAIT)
            worker.stop()
            return await asyncio.wait_for(task, WAIT)

    stats = asyncio.run(run())
    assert _jobs(dsn, [job_id]) == [("PENDING", 0, None)], "released: back to PENDING, the attempt not counted"
    assert (stats.released, stats.completed, stats.lost) == (1, 0, 0)
    assert contexts[0].lease_lost


T0 = datetime.fromisoformat("2031-01-01T00:00:00+00:00")


@pytest.mark.session_features("the frozen clock ai.frozen_now is a session setting")
def test_renewal_keeps_a_job_its_handler_runs_past_the_first_lease(dsn: str, service_dsn: str, queue: str) -> None:
    """Lease 1.5 s of the frozen clock. The test moves the clock to 1 s before the end the database
    shows, waits until the worker has renewed from there, and again, four times: the job ends up
    held 5.5 s of that clock past its claim (over three leases), and completes with its first
    fencing token."""
    [job_id] = _enqueue(service_dsn, queue, 1)
    lease = timedelta(seconds=1.5)
    clock = [T0]
    started, finish = asyncio.Event(), asyncio.Event()
    fenced_ok: list[bool] = []

    async def frozen(conn: psycopg.AsyncConnection[Any]) -> None:
        await conn.execute("select set_config('ai.frozen_now', %s, false)", (clock[0].isoformat(),))

    async def handler(job: Job, ctx: AsyncJobContext) -> int:
        started.set()
        await finish.wait()
        async with ctx.fenced():
            fenced_ok.append(not ctx.lease_lost)
        return job.fencing_token

    async def expiry() -> datetime:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            cur = await conn.execute("select lease_expires_at from ai.agent_jobs where job_id = %s", (job_id,))
            row = await cur.fetchone()
            assert row is not None and row[0] is not None
            return row[0]  # type: ignore[no-any-return]

    async def run() -> WorkerStats:
        async with _pool(service_dsn, check=frozen) as pool:
            worker = AsyncWorker(pool, handler, queue, concurrency=1, lease=lease, poll_interval=0.05, listen=False)
            task = asyncio.create_task(worker.run(drain=True, install_signal_handlers=False))
            await asyncio.wait_for(started.wait(), WAIT)
            assert await expiry() == T0 + lease
            async with await psycopg.AsyncConnection.connect(service_dsn, autocommit=True) as rival:
                for step in range(1, 5):
                    clock[0] = T0 + step * timedelta(seconds=1)  # within the lease the database shows
                    renewed_to = clock[0] + lease

                    async def renewed() -> bool:
                        return await expiry() == renewed_to  # noqa: B023 (awaited in this iteration)

                    await _until(renewed, f"a renewal from the clock at T0 + {step} s")
                    await rival.execute("select set_config('ai.frozen_now', %s, false)", (clock[0].isoformat(),))
                    taken = await AsyncClient(rival).claim_jobs("rival", lease, queue, 1)
                    assert taken == [], "nobody else can claim a renewed job"
            finish.set()
            return await asyncio.wait_for(task, WAIT)

    stats = asyncio.run(run())
    assert clock[0] > T0 + 2 * lease, "the handler ran past two leases of the frozen clock"
    assert fenced_ok == [True]
    assert (stats.completed, stats.lost) == (1, 0)
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("select status, fencing_token, result from ai.agent_jobs where job_id = %s", (job_id,))
        assert row.fetchone() == ("COMPLETED", 1, 1)


def test_a_cancelled_job_is_seen_lost_by_the_next_renewal(dsn: str, service_dsn: str, queue: str) -> None:
    [job_id] = _enqueue(service_dsn, queue, 1)
    started = asyncio.Event()
    refused: list[bool] = []

    async def handler(job: Job, ctx: AsyncJobContext) -> None:
        started.set()

        async def lost() -> bool:
            return ctx.lease_lost

        await _until(lost, "the renewal to report the lease lost")
        try:
            async with ctx.fenced():
                refused.append(False)
        except Exception as error:  # LeaseLost
            refused.append(type(error).__name__ == "LeaseLost")
            raise

    async def run() -> WorkerStats:
        async with _pool(service_dsn) as pool:
            worker = AsyncWorker(
                pool, handler, queue, concurrency=1, lease=timedelta(seconds=3), poll_interval=0.05, listen=False
            )
            task = asyncio.create_task(worker.run(drain=True, install_signal_handlers=False))
            await asyncio.wait_for(started.wait(), WAIT)
            async with await psycopg.AsyncConnection.connect(service_dsn, autocommit=True) as conn:
                await AsyncClient(conn).cancel_job(job_id)
            return await asyncio.wait_for(task, WAIT)

    stats = asyncio.run(run())
    assert refused == [True]
    assert stats.lost == 1
    assert _jobs(dsn, [job_id])[0][0] == "CANCELLED"


@pytest.mark.session_features("LISTEN (behind a transaction pooler the worker polls: docs/connections.md)")
def test_notify_wakes_an_idle_async_worker_long_before_its_poll(dsn: str, service_dsn: str, queue: str) -> None:
    """The worker polls every 60 s; a job enqueued once its LISTEN is in place (seen in
    pg_stat_activity, not assumed after a sleep) runs at once."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("select ai.queue_channel(%s)", (queue,)).fetchone()
        assert row is not None
        listen = f'listen "{row[0]}"'
    done = asyncio.Event()

    async def handler(job: Job, ctx: AsyncJobContext) -> None:
        done.set()

    async def listening() -> bool:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            cur = await conn.execute(
                "select count(*) from pg_stat_activity where datname = current_database() and query = %s", (listen,)
            )
            found = await cur.fetchone()
            return found is not None and found[0] == 1

    async def run() -> bool:
        async with _pool(service_dsn) as pool:
            worker = AsyncWorker(pool, handler, queue, concurrency=1, poll_interval=60)
            task = asyncio.create_task(worker.run(install_signal_handlers=False))
            await _until(listening, "the worker's LISTEN")
            await asyncio.to_thread(_enqueue, service_dsn, queue, 1)
            try:
                await asyncio.wait_for(done.wait(), WAIT)
                woke = True
            except asyncio.TimeoutError:
                woke = False
            worker.stop()
            await asyncio.wait_for(task, WAIT)
            return woke

    assert asyncio.run(run()), "a notification woke the worker (its poll is a minute away)"


def test_a_handler_that_raises_cancelled_error_itself_fails_its_job_and_keeps_its_slot(
    dsn: str, service_dsn: str, queue: str
) -> None:
    """A CancelledError the worker did not cause (a timeout inside the handler that escaped) is
    the handler's failure: the job is failed, the slot runs the next job, a drain ends."""
    ids = _enqueue(service_dsn, queue, 2)

    async def handler(job: Job, ctx: AsyncJobContext) -> str:
        if job.job_id == ids[0]:
            raise asyncio.CancelledError("escaped")
        return "ok"

    async def run() -> WorkerStats:
        async with _pool(service_dsn) as pool:
            worker = AsyncWorker(pool, handler, queue, concurrency=1, prefetch=0, poll_interval=0.05, listen=False)
            return await asyncio.wait_for(worker.run(drain=True, install_signal_handlers=False), WAIT)

    stats = asyncio.run(run())
    assert (stats.failed, stats.completed) == (1, 1)
    assert _jobs(dsn, ids) == [("PENDING", 1, "CancelledError: escaped"), ("COMPLETED", 1, None)]
