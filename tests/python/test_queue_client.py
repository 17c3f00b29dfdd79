"""The queue through the Python client: one call per SQL function, typed rows, typed errors,
NOTIFY folded per transaction, and a reclaim fencing out an open fenced transaction."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from psycopg import sql
from waiting import notifications_until

from agent_state import AsyncClient, Client, InvalidArgument, InvalidTransition, Job, LeaseLost, NotFound

MINUTE = timedelta(minutes=1)


@pytest.fixture
def service(role_dsn: Callable[[str], str]) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as conn:
        yield conn


@pytest.fixture
def queue() -> str:
    return f"q-{uuid.uuid4().hex[:12]}"


def test_enqueue_claim_renew_complete_round_trip(service: psycopg.Connection[Any], thread_id: str, queue: str) -> None:
    client = Client(service)
    client.create_session(thread_id)
    job = client.enqueue_job(thread_id, {"step": 1}, queue=queue, priority=3)
    assert isinstance(job, Job) and job.status == "PENDING" and job.payload == {"step": 1}
    assert client.enqueue_job(thread_id, {"step": 2}, queue=queue, idempotency_key="k").job_id == (
        client.enqueue_job(thread_id, {"step": 3}, queue=queue, idempotency_key="k").job_id
    )

    claimed = client.claim_job("w1", MINUTE, queue)
    assert claimed is not None and claimed.job_id == job.job_id
    assert (claimed.status, claimed.attempts, claimed.fencing_token, claimed.lease_owner) == ("IN_PROGRESS", 1, 1, "w1")
    assert client.renew_lease(job.job_id, claimed.fencing_token, MINUTE) > claimed.lease_expires_at
    assert client.fenced_write(job.job_id, claimed.fencing_token) is not None
    done = client.complete_job(job.job_id, claimed.fencing_token, {"ok": True})
    assert (done.status, done.result) == ("COMPLETED", {"ok": True})
    assert client.get_job(job.job_id) == done
    stats = {s.queue: s for s in client.queue_stats(queue)}
    assert (stats[queue].completed, stats[queue].pending) == (1, 1)


def test_errors_are_typed(service: psycopg.Connection[Any], thread_id: str, queue: str) -> None:
    client = Client(service)
    client.create_session(thread_id)
    job = client.enqueue_job(thread_id, queue=queue, max_attempts=1)
    claimed = client.claim_job("w", MINUTE, queue)
    assert claimed is not None
    with pytest.raises(LeaseLost):
        client.complete_job(job.job_id, claimed.fencing_token + 1)
    with pytest.raises(NotFound):
        client.renew_lease(-1, 1)
    with pytest.raises(InvalidArgument):
        client.claim_jobs("w", MINUTE, queue, 0)
    with pytest.raises(InvalidTransition):
        client.retry_dead_job(job.job_id)
    failed = client.fail_job(job.job_id, claimed.fencing_token, "boom")
    assert (failed.status, failed.last_error) == ("FAILED", "boom")
    assert client.retry_dead_job(job.job_id).status == "PENDING"
    assert client.cancel_job(job.job_id).status == "CANCELLED"


def test_batch_claim_and_completion(service: psycopg.Connection[Any], queue: str) -> None:
    client = Client(service)
    threads = [f"t-{uuid.uuid4()}" for _ in range(5)]
    for t in threads:
        client.create_session(t)
        client.enqueue_job(t, queue=queue)
        client.enqueue_job(t, queue=queue)
    batch = client.claim_jobs("w", MINUTE, queue, 100)
    assert sorted(j.thread_id for j in batch) == sorted(threads), "one job per thread"
    lost = batch[0]
    done = client.complete_jobs([(j.job_id, j.fencing_token + (j is lost), {"n": i}) for i, j in enumerate(batch)])
    assert sorted(done) == sorted(j.job_id for j in batch if j is not lost)
    assert client.release_job(lost.job_id, lost.fencing_token).attempts == 0


@pytest.mark.session_features("LISTEN")
def test_notifications_are_folded_per_transaction_and_queue(
    dsn: str, service: psycopg.Connection[Any], thread_id: str, queue: str
) -> None:
    client = Client(service)
    client.create_session(thread_id)
    channel = {q: service.execute("select ai.queue_channel(%s)", (q,)).fetchone()[0] for q in (queue, queue + "-other")}  # type: ignore[index]
    with psycopg.connect(dsn, autocommit=True) as listener:
        for name in channel.values():
            listener.execute(sql.SQL("listen {}").format(sql.Identifier(name)))
        with service.transaction():
            for n in range(5):
                client.enqueue_job(thread_id, {"n": n}, queue=queue)
            client.enqueue_job(thread_id, queue=queue + "-other")
        client.enqueue_job(thread_id, queue=queue, run_at=client.now() + timedelta(hours=1))
        notes = notifications_until(listener, service)  # all of them, however slow the delivery
    assert sorted(notes) == sorted((c, "") for c in channel.values()), (
        "one per queue for the transaction, none for a future job"
    )
    assert all(queue not in c for c in channel.values()), "the channel does not name the queue"


@pytest.mark.session_features("the frozen clock ai.frozen_now is a session setting")
def test_a_reclaim_fences_out_the_open_fenced_transaction(
    dsn: str, role_dsn: Callable[[str], str], thread_id: str, queue: str
) -> None:
    with (
        psycopg.connect(role_dsn("app_service"), autocommit=True) as a,
        psycopg.connect(role_dsn("app_service"), autocommit=True) as b,
    ):
        # a's clock stands still: its one-second lease never ends for a itself, so only the
        # reclaim can make its commit fail (and fenced_write cannot refuse early on a slow day)
        a.execute("select set_config('ai.frozen_now', clock_timestamp()::text, false)")
        first, second = Client(a), Client(b)
        first.create_session(thread_id)
        job = first.enqueue_job(thread_id, queue=queue)
        held = first.claim_job("w1", timedelta(seconds=1), queue)
        assert held is not None
        committing = False
        with pytest.raises(psycopg.Error) as caught, a.transaction():
            first.fenced_write(job.job_id, held.fencing_token)
            b.execute("select set_config('ai.frozen_now', (clock_timestamp() + interval '1 hour')::text, false)")
            reclaimed = second.claim_job("w2", MINUTE, queue)
            assert reclaimed is not None, "expired: reclaimed though the fenced transaction is open"
            assert reclaimed.fencing_token == held.fencing_token + 1
            a.execute("select 1")  # the zombie's write would go here; its commit fails
            committing = True
        assert committing, f"the commit is what failed, not an earlier statement: {caught.value}"
        assert caught.value.sqlstate == "AS006"


def test_async_client(dsn: str, role_dsn: Callable[[str], str], thread_id: str, queue: str) -> None:
    async def scenario() -> None:
        async with await psycopg.AsyncConnection.connect(role_dsn("app_service"), autocommit=True) as conn:
            client = AsyncClient(conn)
            await client.create_session(thread_id)
            job = await client.enqueue_job(thread_id, {"a": 1}, queue=queue)
            claimed = await client.claim_job("w", MINUTE, queue)
            assert claimed is not None and claimed.job_id == job.job_id
            assert await client.claim_job("w", MINUTE, queue) is None
            await client.renew_lease(job.job_id, claimed.fencing_token)
            assert (await client.complete_job(job.job_id, claimed.fencing_token, [1])).result == [1]
            with pytest.raises(LeaseLost):
                await client.fenced_write(job.job_id, claimed.fencing_token)
            assert (await client.queue_stats(queue))[0].completed == 1

    asyncio.run(scenario())


def _two_held(client: Client, queue: str) -> list[Job]:
    for _ in range(2):
        t = f"t-{uuid.uuid4()}"
        client.create_session(t)
        client.enqueue_job(t, queue=queue)
    return client.claim_jobs("w", MINUTE, queue, 10)


def test_renew_leases_renews_every_held_lease_in_one_call_and_leaves_lost_ones_out(
    service: psycopg.Connection[Any], queue: str
) -> None:
    client = Client(service)
    a, b = _two_held(client, queue)
    renewed = client.renew_leases("w", [(a.job_id, a.fencing_token), (b.job_id, b.fencing_token + 1)], 2 * MINUTE)
    assert list(renewed) == [a.job_id], "b's stale token: left out, not raised"
    assert renewed[a.job_id] > a.lease_expires_at
    assert client.get_job(a.job_id).lease_expires_at == renewed[a.job_id]
    assert client.get_job(b.job_id).lease_expires_at == b.lease_expires_at
    assert client.renew_leases("other-worker", [(a.job_id, a.fencing_token)]) == {}
    with pytest.raises(InvalidArgument):
        client.renew_leases("w", [(a.job_id, a.fencing_token)], timedelta(0))


def test_renew_leases_async_twin(service: psycopg.Connection[Any], role_dsn: Callable[[str], str], queue: str) -> None:
    a, b = _two_held(Client(service), queue)

    async def go() -> dict[int, Any]:
        async with await psycopg.AsyncConnection.connect(role_dsn("app_service"), autocommit=True) as conn:
            client = AsyncClient(conn)
            with pytest.raises(InvalidArgument):
                await client.renew_leases("", [(a.job_id, a.fencing_token)])
            return await client.renew_leases("w", [(a.job_id, a.fencing_token), (b.job_id, b.fencing_token)], MINUTE)

    renewed = asyncio.run(go())
    assert sorted(renewed) == sorted([a.job_id, b.job_id])
    assert all(renewed[j.job_id] >= j.lease_expires_at for j in (a, b))
