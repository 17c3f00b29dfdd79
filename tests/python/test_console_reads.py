"""ai.queue_throughput through the client, sync and async: the jobs finished per queue and bucket."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import psycopg

from agent_state import AsyncClient, Client, QueueThroughput


def test_queue_throughput_counts_finished_jobs_per_bucket(role_dsn) -> None:  # type: ignore[no-untyped-def]
    queue, thread = f"throughput-{uuid.uuid4().hex[:8]}", f"throughput-{uuid.uuid4()}"
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as conn:
        service = Client(conn)
        with service.acting_as("tenant_a") as a:
            a.create_session(thread)
            a.enqueue_job(thread, {}, queue)
        job = service.claim_job("w", timedelta(minutes=1), queue)
        assert job is not None
        service.complete_job(job.job_id, job.fencing_token)
        with service.acting_as("tenant_a") as a:
            a.enqueue_job(thread, {"n": 2}, queue, max_attempts=1)
        job = service.claim_job("w", timedelta(minutes=1), queue)
        assert job is not None
        service.fail_job(job.job_id, job.fencing_token, "boom")
        [row] = service.queue_throughput(queue, since=timedelta(hours=1), bucket=timedelta(hours=1))
        assert isinstance(row, QueueThroughput)
        assert (row.queue, row.completed, row.failed) == (queue, 1, 1)
        assert row.mean_latency is not None and row.max_latency is not None and row.max_latency >= row.mean_latency

    async def read() -> list[QueueThroughput]:
        async with await psycopg.AsyncConnection.connect(role_dsn("tenant_a"), autocommit=True) as aconn:
            return await AsyncClient(aconn).queue_throughput(queue, timedelta(hours=1), timedelta(hours=1))

    assert [(r.completed, r.failed) for r in asyncio.run(read())] == [(1, 1)]  # the tenant's own
    with psycopg.connect(role_dsn("tenant_b"), autocommit=True) as conn:
        assert Client(conn).queue_throughput(queue) == []  # not another tenant's


def test_session_status_counts_and_list_streams(role_dsn) -> None:  # type: ignore[no-untyped-def]
    thread = f"console-reads-{uuid.uuid4()}"
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        a = Client(conn)
        before = a.session_status_counts()
        a.create_session(thread)
        a.open_stream(thread, "answer")
        a.append_stream_chunks(thread, "answer", 1, ["hel", "lo"])
        after = a.session_status_counts()
        assert after.get("active", 0) == before.get("active", 0) + 1
        assert set(after) <= {"active", "waiting", "completed", "failed", "cancelled"}
        [stream] = a.list_streams(thread)
        assert (stream.stream_key, stream.status, stream.last_chunk) == ("answer", "open", 2)

    async def read() -> tuple[dict[str, int], list[str]]:
        async with await psycopg.AsyncConnection.connect(role_dsn("tenant_a"), autocommit=True) as aconn:
            client = AsyncClient(aconn)
            return await client.session_status_counts("tenant_a"), [
                s.stream_key for s in await client.list_streams(thread)
            ]

    counts, keys = asyncio.run(read())
    assert counts == after and keys == ["answer"]
    with psycopg.connect(role_dsn("tenant_b"), autocommit=True) as conn:
        assert Client(conn).session_status_counts("tenant_a") == {}  # another owner's: none seen
