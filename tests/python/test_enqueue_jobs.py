"""Batch enqueue through the Python client (issue 41 item 4): ``enqueue_jobs`` is one round trip
of ``ai.enqueue_jobs``, answers each job as ``enqueue_job`` would, in the input's order, and maps
the SQL errors to the same typed exceptions; the sync and async clients agree."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest

from agent_state import AsyncClient, Client, NewJob, NotFound, TooLarge
from agent_state import retry as retry_rules
from agent_state.queue import MAX_ENQUEUE_BATCH


@pytest.fixture
def service(role_dsn: Callable[[str], str]) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as conn:
        yield conn


@pytest.fixture
def queue() -> str:
    return f"qb-{uuid.uuid4().hex[:12]}"


def test_a_batch_is_answered_job_by_job_in_order(service: psycopg.Connection[Any], queue: str) -> None:
    client = Client(service)
    threads = [client.create_session().thread_id for _ in range(3)]
    earlier = client.enqueue_job(threads[0], {"n": 0}, queue=queue, idempotency_key="k0")
    later = datetime.now(timezone.utc) + timedelta(hours=1)
    jobs = client.enqueue_jobs(
        [
            NewJob(threads[0], {"n": 1}, idempotency_key="k0"),  # used before: the first job
            NewJob(threads[1], {"n": 2}, run_at=later, priority=5, idempotency_key="k2"),
            NewJob(threads[2], {"n": 3}),
            NewJob(threads[1], {"n": 4}, idempotency_key="k2"),  # repeated in the call
        ],
        queue=queue,
        max_attempts=2,
    )
    assert [j.payload for j in jobs] == [{"n": 0}, {"n": 2}, {"n": 3}, {"n": 2}]
    assert jobs[0].job_id == earlier.job_id and jobs[3].job_id == jobs[1].job_id
    assert jobs[1].priority == 5 and jobs[1].run_at == later and jobs[2].max_attempts == 2
    assert {j.thread_id for j in jobs} == set(threads) and {j.queue for j in jobs} == {queue}
    assert jobs[2].idempotency_key  # a job without a key gets one of the call's own, as enqueue_job
    assert client.enqueue_jobs([], queue=queue) == []


def test_one_bad_job_fails_the_batch_and_writes_nothing(service: psycopg.Connection[Any], queue: str) -> None:
    client = Client(service)
    thread = client.create_session().thread_id
    with pytest.raises(NotFound):
        client.enqueue_jobs([NewJob(thread), NewJob(f"missing-{uuid.uuid4()}")], queue=queue)
    with pytest.raises(TooLarge):
        client.enqueue_jobs([NewJob(thread)] * (MAX_ENQUEUE_BATCH + 1), queue=queue)
    assert client.queue_stats(queue) == []


def test_the_async_client_enqueues_the_same_batch(role_dsn: Callable[[str], str], queue: str) -> None:
    async def run() -> list[Any]:
        async with await psycopg.AsyncConnection.connect(role_dsn("app_service"), autocommit=True) as conn:
            client = AsyncClient(conn)
            thread = (await client.create_session()).thread_id
            jobs = await client.enqueue_jobs([NewJob(thread, {"i": i}) for i in range(MAX_ENQUEUE_BATCH)], queue=queue)
            return [j.payload["i"] for j in jobs]

    assert asyncio.run(run()) == list(range(MAX_ENQUEUE_BATCH))


def test_a_batch_is_retried_after_a_lost_answer_only_when_every_job_has_a_key() -> None:
    safe = retry_rules.IDEMPOTENT["enqueue_jobs"]
    assert safe((["t"], [{}], "q", [None], [0], ["k"], 5))
    assert not safe((["t", "u"], [{}, {}], "q", [None, None], [0, 0], ["k", None], 5))
