"""The client's keys (issue 38 item 5): enqueue(key=...), enqueue_jobs with NewJob.key, the
operator's set_job_key and everyone's job_key_status, sync and async; a tenant may not call
set_job_key (no EXECUTE), a service acting for one gets PermissionDenied (AS007), and a tenant
sees only its own keys."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

import psycopg
import pytest

from agent_state import AsyncClient, Client, InvalidArgument, NewJob, PermissionDenied


def test_a_tenant_keys_its_jobs_and_reads_only_its_own_keys(role_dsn: Callable[[str], str]) -> None:
    queue = f"keys-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        a = Client(conn)
        threads = [f"ka-{uuid.uuid4()}" for _ in range(3)]
        for t in threads:
            a.create_session(t)
        assert a.enqueue_job(threads[0], queue=queue).key == "@tenant_a"
        jobs = a.enqueue_jobs([NewJob(threads[1], key="openai"), NewJob(threads[2])], queue=queue)
        assert [j.key for j in jobs] == ["openai", "@tenant_a"]
        with pytest.raises(InvalidArgument):
            a.enqueue_job(threads[0], queue=queue, key="@tenant_b")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # no EXECUTE for tenants
            a.set_job_key(queue, "@tenant_a", max_in_flight=100)
    with psycopg.connect(role_dsn("tenant_b"), autocommit=True) as conn:
        b = Client(conn)
        t = f"kb-{uuid.uuid4()}"
        b.create_session(t)
        b.enqueue_job(t, queue=queue, key="openai")
        assert [(k.key, k.backlog) for k in b.job_key_status(queue)] == [("openai", 1)]
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as conn:
        ops = Client(conn)
        with pytest.raises(PermissionDenied), conn.transaction():  # a service acting for a tenant
            conn.execute("select ai.act_as('tenant_a')")
            ops.set_job_key(queue, "@tenant_a", max_in_flight=100)
        ops.set_job_key(queue, "openai", max_in_flight=2, rate_per_minute=60)
        keys = {k.key: k for k in ops.job_key_status(queue)}
        assert keys["openai"].backlog == 2 and keys["openai"].max_in_flight == 2
        assert keys["openai"].tokens == 1.0 and keys["@tenant_a"].backlog == 2


def test_async_client_sets_and_reads_keys(role_dsn: Callable[[str], str]) -> None:
    queue = f"akeys-{uuid.uuid4().hex[:8]}"

    async def scenario() -> None:
        async with await psycopg.AsyncConnection.connect(role_dsn("app_service"), autocommit=True) as conn:
            ops = AsyncClient(conn)
            await ops.set_job_key(queue, "anthropic", weight=3, max_in_flight=4)
            [row] = await ops.job_key_status(queue)
            assert (row.key, row.weight, row.max_in_flight, row.in_flight, row.backlog) == ("anthropic", 3, 4, 0, 0)
            await ops.set_job_key(queue, "anthropic")  # the defaults clear it
            assert await ops.job_key_status(queue) == []

    asyncio.run(scenario())
