"""Answers lost on claim, complete and enqueue are safe to retry by construction (issue 41, item 3).

The connection breaks after the server committed and before the answer arrives (a proxy holds
the answer back and closes the connection once the commit is done: answer_drop.py). Before,
the client raised OutcomeUnknown: a claim left its jobs waiting out the lease, a completion
was not retried, and an enqueue that a producer retried made a second job. Now a claim carries a
request id and its retry answers with the same jobs under the same tokens; a completion under the
same token answers again with what it completed; an enqueue without a key gets one from the
client. A client with a retry policy (the default ``ONCE`` of ``from_conn_string``) retries them
and the caller never sees the break. Sync and async."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from answer_drop import AnswerDrop

from agent_state import AsyncClient, Client

pytestmark = pytest.mark.session_features("a proxy to the server itself that drops a connection after a commit")

MINUTE = timedelta(minutes=1)
ROLE = "app_service"


@pytest.fixture
def proxy(direct_dsn: str) -> Iterator[AnswerDrop]:
    with AnswerDrop(direct_dsn) as p:
        yield p


@pytest.fixture
def admin(direct_dsn: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(direct_dsn, autocommit=True) as conn:
        yield conn


def _queue() -> str:
    return f"lost-{uuid.uuid4().hex[:12]}"


def _jobs(admin: psycopg.Connection[Any], queue: str) -> list[tuple[int, str, int]]:
    return admin.execute(
        "select job_id, status, fencing_token from ai.agent_jobs where queue = %s order by job_id", (queue,)
    ).fetchall()


def _threads(client: Client, n: int) -> list[str]:
    return [client.create_session(f"lost-{uuid.uuid4()}").thread_id for _ in range(n)]


def test_an_enqueue_whose_answer_was_lost_is_retried_and_makes_one_job(
    proxy: AnswerDrop, admin: psycopg.Connection[Any]
) -> None:
    queue = _queue()
    with Client.from_conn_string(proxy.dsn(ROLE)) as client:
        (thread,) = _threads(client, 1)
        proxy.arm("ai.enqueue_job(")
        job = client.enqueue_job(thread, {"n": 1}, queue=queue)
    assert proxy.dropped.is_set(), "the first answer was lost"
    assert [(j[0], j[1]) for j in _jobs(admin, queue)] == [(job.job_id, "PENDING")], "one job, the one answered"


def test_a_claim_whose_answer_was_lost_answers_the_same_jobs_under_the_same_tokens(
    proxy: AnswerDrop, admin: psycopg.Connection[Any]
) -> None:
    queue = _queue()
    with Client.from_conn_string(proxy.dsn(ROLE)) as client:
        for thread in _threads(client, 3):
            client.enqueue_job(thread, queue=queue)
        proxy.arm("ai.claim_jobs(")
        claimed = client.claim_jobs("w-lost", MINUTE, queue, 2)
    assert proxy.dropped.is_set(), "the first answer was lost"
    held = [(j[0], j[2]) for j in _jobs(admin, queue) if j[1] == "IN_PROGRESS"]
    assert sorted((j.job_id, j.fencing_token) for j in claimed) == held, "the jobs the first try took, no others"
    assert len(held) == 2


def test_a_completion_whose_answer_was_lost_is_retried_and_answers_completed(
    proxy: AnswerDrop, admin: psycopg.Connection[Any]
) -> None:
    queue = _queue()
    with Client.from_conn_string(proxy.dsn(ROLE)) as client:
        a, b, c = _threads(client, 3)
        for thread in (a, b, c):
            client.enqueue_job(thread, queue=queue)
        one, two, three = client.claim_jobs("w-lost", MINUTE, queue, 3)
        proxy.arm("ai.complete_job(")
        done = client.complete_job(one.job_id, one.fencing_token, {"n": 1})
        assert proxy.dropped.is_set(), "the first answer was lost"
        assert (done.status, done.result) == ("COMPLETED", {"n": 1})
        proxy.arm("ai.complete_jobs(")
        ids = client.complete_jobs([(two.job_id, two.fencing_token, 2), (three.job_id, three.fencing_token, 3)])
        assert proxy.dropped.is_set(), "the first answer was lost"
    assert sorted(ids) == sorted([two.job_id, three.job_id]), "the retry answers with the jobs completed"
    assert {j[1] for j in _jobs(admin, queue)} == {"COMPLETED"}


def test_a_completion_and_claim_whose_answer_was_lost_answers_the_same_completions_and_jobs(
    proxy: AnswerDrop, admin: psycopg.Connection[Any]
) -> None:
    """ai.complete_and_claim (issue 41 item 5: the Worker's completions carry its next claim):
    the retry answers with the jobs completed and the same jobs claimed, under the same tokens."""
    queue = _queue()
    with Client.from_conn_string(proxy.dsn(ROLE)) as client:
        a, b, c = _threads(client, 3)
        for thread in (a, b, a, c):  # a and b first
            client.enqueue_job(thread, queue=queue)
        first, second = client.claim_jobs("w-lost", MINUTE, queue, 2)
        proxy.arm("ai.complete_and_claim(")
        done, claimed = client.complete_and_claim(
            "w-lost",
            MINUTE,
            queue,
            5,
            [(first.job_id, first.fencing_token, 1), (second.job_id, second.fencing_token, 2)],
        )
        assert proxy.dropped.is_set(), "the first answer was lost"
    assert sorted(done) == sorted([first.job_id, second.job_id]), "the retry answers with the jobs completed"
    held = [(j[0], j[2]) for j in _jobs(admin, queue) if j[1] == "IN_PROGRESS"]
    assert sorted((j.job_id, j.fencing_token) for j in claimed) == held, "the jobs the first try took, no others"
    assert len(held) == 2, "a's second job (its thread freed by the completion) and c's"


def test_the_async_client_retries_lost_claims_completions_and_enqueues(
    proxy: AnswerDrop, admin: psycopg.Connection[Any]
) -> None:
    queue = _queue()

    async def scenario() -> None:
        async with AsyncClient.from_conn_string(proxy.dsn(ROLE)) as client:
            threads = [(await client.create_session(f"lost-{uuid.uuid4()}")).thread_id for _ in range(2)]
            proxy.arm("ai.enqueue_job(")
            first = await client.enqueue_job(threads[0], queue=queue)
            assert proxy.dropped.is_set()
            await client.enqueue_job(threads[1], queue=queue)
            assert len(_jobs(admin, queue)) == 2, "the lost enqueue made one job"
            proxy.arm("ai.claim_jobs(")
            claimed = await client.claim_jobs("w-lost", MINUTE, queue, 1)
            assert proxy.dropped.is_set()
            held = [(j[0], j[2]) for j in _jobs(admin, queue) if j[1] == "IN_PROGRESS"]
            assert [(j.job_id, j.fencing_token) for j in claimed] == held
            proxy.arm("ai.complete_jobs(")
            ids = await client.complete_jobs([(claimed[0].job_id, claimed[0].fencing_token, None)])
            assert proxy.dropped.is_set()
            assert ids == [claimed[0].job_id]
            assert first.job_id in {j[0] for j in _jobs(admin, queue)}

    asyncio.run(scenario())
