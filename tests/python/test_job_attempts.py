"""The attempt history through the client, sync and async: a failure then a success, each attempt
with its worker and outcome, recorded by the transaction that ended it."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import psycopg

from agent_state import AsyncClient, Client


def test_a_retried_job_lists_its_attempts(client: Client, thread_id: str) -> None:
    queue = f"attempts-{uuid.uuid4()}"
    client.create_session(thread_id)
    job = client.enqueue_job(thread_id, {"n": 1}, queue)
    first = client.claim_job("worker-a", timedelta(minutes=1), queue)
    assert first is not None and client.job_attempts(job.job_id)[-1].outcome == "in_progress"
    client.fail_job(first.job_id, first.fencing_token, "the model timed out", timedelta(0))
    second = client.claim_job("worker-b", timedelta(minutes=1), queue)
    assert second is not None
    client.complete_job(second.job_id, second.fencing_token, {"ok": True})
    attempts = client.job_attempts(job.job_id)
    assert [(a.attempt, a.worker, a.outcome, a.error) for a in attempts] == [
        (1, "worker-a", "failed", "the model timed out"),
        (2, "worker-b", "completed", None),
    ]
    assert all(a.claimed_at is not None and a.ended_at is not None for a in attempts)
    stats = [s for s in client.queue_stats(queue)]
    assert (stats[0].failed_attempts, stats[0].expired_attempts) == (1, 0)


def test_async_twin(dsn: str, thread_id: str) -> None:
    async def check() -> None:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            c = AsyncClient(conn)
            queue = f"attempts-{uuid.uuid4()}"
            await c.create_session(thread_id)
            job = await c.enqueue_job(thread_id, {}, queue)
            held = await c.claim_job("worker-a", timedelta(minutes=1), queue)
            assert held is not None
            await c.complete_job(held.job_id, held.fencing_token)
            assert [a.outcome for a in await c.job_attempts(job.job_id)] == ["completed"]

    asyncio.run(check())
