"""The console's reads through the client, sync and async: ai.queue_throughput (the jobs finished per
queue and bucket), ai.session_status_counts, ai.list_streams, ai.list_forks."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import psycopg
import pytest

from agent_state import AsyncClient, Client, Fork, NotFound, QueueThroughput


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


def test_list_forks_names_the_checkpoint_each_fork_started_from(role_dsn) -> None:  # type: ignore[no-untyped-def]
    thread = f"console-forks-{uuid.uuid4()}"
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        a = Client(conn)
        a.create_session(thread)
        first = a.put_checkpoint(thread, "", "c1", None, "msgpack", b"\x01")
        a.put_checkpoint(thread, "", "c2", first, "msgpack", b"\x02")
        fork = a.fork_thread(thread, first)
        a.copy_thread(thread, f"{thread}-copy")
        forks = a.list_forks(thread)
        assert [(f.fork_thread_id, f.from_checkpoint_id, f.owner) for f in forks] == [
            (fork, first, "tenant_a"),
            (f"{thread}-copy", None, "tenant_a"),
        ]
        assert isinstance(forks[0], Fork) and forks[0].replay_job_id is None
        assert [f.fork_thread_id for f in a.list_forks(thread, 1, fork)] == [f"{thread}-copy"]

    async def read() -> list[str]:
        async with await psycopg.AsyncConnection.connect(role_dsn("tenant_a"), autocommit=True) as aconn:
            return [f.fork_thread_id for f in await AsyncClient(aconn).list_forks(thread, max_rows=1)]

    assert asyncio.run(read()) == [fork]
    with psycopg.connect(role_dsn("tenant_b"), autocommit=True) as conn, pytest.raises(NotFound):
        Client(conn).list_forks(thread)  # another tenant's thread: unknown
