"""RetryPolicy: the calls that are safe to retry come back after a server restart or an
AdminShutdown, on a new connection; the others, and calls inside the caller's transaction, are
never retried. Issue 11, item 4: a Client over one connection never reconnected after a restart,
and over a pool AdminShutdown reached the caller. The restarts are real (this worktree's private
cluster, ``pg_ctl restart -m immediate``) and bounded."""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import dsn_as
from pgserver import require_private_cluster, restart_immediate
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from agent_state import (
    AsyncClient,
    Client,
    RetryPolicy,
    checkpoints,
    console_reads,
    evals,
    hitl,
    langgraph_saver,
    messages,
    queue,
    retention,
    retrievals,
    retry,
    sessions,
    side_effects,
    streams,
    usage,
)
from agent_state import client as client_module

FAST = RetryPolicy(attempts=60, first_delay=0.05, max_delay=0.5)


def _terminate(direct_dsn: str, user: str) -> int:
    """AdminShutdown (57P01) for every backend of ``user``, as a failover or an operator does."""
    with psycopg.connect(direct_dsn, autocommit=True) as admin:
        rows = admin.execute(
            "select pg_terminate_backend(pid) from pg_stat_activity where usename = %s and pid <> pg_backend_pid()",
            (user,),
        ).fetchall()
    return len(rows)


def test_single_connection_reconnects_after_a_server_restart(direct_dsn: str, thread_id: str) -> None:
    require_private_cluster(direct_dsn)
    tenant = dsn_as(direct_dsn, "tenant_a")
    with psycopg.connect(tenant, autocommit=True) as conn, psycopg.connect(tenant, autocommit=True) as plain_conn:
        client, plain = Client(conn, retry=FAST), Client(plain_conn)
        client.create_session(thread_id)
        first = client.append_message(thread_id, "user", {"text": "before"})
        restart_immediate(direct_dsn)

        again = client.append_message(thread_id, "user", {"text": "before"})  # the same message: a retry
        assert again.message.seq == first.message.seq and not again.inserted
        assert [m.seq for m in client.get_messages(thread_id)] == [1]
        assert client.source is not conn and not client.source.closed, "a new connection"
        assert client.source.autocommit
        with pytest.raises(psycopg.OperationalError):  # without a policy: as before, it stays broken
            plain.get_messages(thread_id)
        with pytest.raises(psycopg.OperationalError):
            plain.get_messages(thread_id)
    client.source.close()


def test_a_pool_retries_idempotent_calls_after_admin_shutdown_and_no_other(
    direct_dsn: str, role_dsn: Callable[[str], str], thread_id: str
) -> None:
    tenant = role_dsn("tenant_a")
    with ConnectionPool(tenant, min_size=3, max_size=3, kwargs={"autocommit": True}, open=True) as pool:
        pool.wait()
        client, plain = Client(pool, retry=FAST), Client(pool)
        client.create_session(thread_id)
        assert _terminate(direct_dsn, "tenant_a") >= 1
        with pytest.raises(psycopg.errors.AdminShutdown):
            plain.get_session(thread_id)  # without a policy the caller sees it (the issue)
        _terminate(direct_dsn, "tenant_a")
        assert client.get_session(thread_id).thread_id == thread_id
        assert client.append_message(thread_id, "user", {"text": "x"}).inserted
        with pool.connection() as a, pool.connection() as b, pool.connection() as c:
            for each in (a, b, c):  # known to reach the server: the next call's first round trip is its statement
                client_module.behind_pooler(each)
        _terminate(direct_dsn, "tenant_a")
        with pytest.raises(psycopg.OperationalError):
            client.record_event(thread_id, "not_idempotent")  # sent, may have committed: never run again
        assert client.get_events(thread_id, kinds=["not_idempotent"]) == [], "nothing recorded behind the caller's back"


def test_a_call_in_the_callers_transaction_is_never_retried(direct_dsn: str, thread_id: str) -> None:
    tenant = dsn_as(direct_dsn, "tenant_a")
    with psycopg.connect(tenant) as conn:
        client = Client(conn, retry=FAST)
        client.create_session(thread_id)
        with pytest.raises(psycopg.OperationalError), conn.transaction():
            client.get_session(thread_id)
            _terminate(direct_dsn, "tenant_a")
            client.get_session(thread_id)  # the transaction is gone: only the caller can replay it
        assert client.source is conn
        assert client.get_session(thread_id).thread_id == thread_id  # outside it: reconnected
        assert client.source is not conn
        client.source.close()


def test_async_client_over_a_connection_and_a_pool(direct_dsn: str, thread_id: str) -> None:
    tenant = dsn_as(direct_dsn, "tenant_a")

    async def main() -> None:
        conn = await psycopg.AsyncConnection.connect(tenant, autocommit=True)
        client = AsyncClient(conn, retry=FAST)
        await client.create_session(thread_id)
        _terminate(direct_dsn, "tenant_a")
        assert (await client.get_session(thread_id)).thread_id == thread_id
        assert client.source is not conn
        await client.source.close()
        async with AsyncConnectionPool(tenant, min_size=2, max_size=2, kwargs={"autocommit": True}) as pool:
            await pool.wait()
            client = AsyncClient(pool, retry=FAST)
            _terminate(direct_dsn, "tenant_a")
            assert (await client.append_message(thread_id, "user", {"text": "y"})).inserted
            async with pool.connection() as a, pool.connection() as b:
                for each in (a, b):  # known to reach the server: the next call's first round trip is its statement
                    await client_module.abehind_pooler(each)
            _terminate(direct_dsn, "tenant_a")
            with pytest.raises(psycopg.OperationalError):
                await client.record_event(thread_id, "not_idempotent")  # sent, may have committed: never run again

    asyncio.run(main())


def _client_functions() -> set[str]:
    """Every ai function a client method calls (the statements of client.py, its mixins and the
    LangGraph savers, which call through the client)."""
    names = set()
    for module in (
        client_module, sessions, messages, checkpoints, evals, retention, queue, side_effects, hitl, usage, retrievals,
        streams, langgraph_saver, console_reads,
    ):  # fmt: skip
        for value in vars(module).values():
            sql = value if isinstance(value, str) and value.lstrip().lower().startswith("select") else None
            sql = sql or getattr(value, "sql", None)
            if isinstance(sql, str) and (name := retry.function_of(sql)):
                names.add(name)
    return names


def test_every_client_call_is_classified_and_the_docs_name_them() -> None:
    calls = _client_functions()
    assert len(calls) > 40
    assert calls == set(retry.IDEMPOTENT) | set(retry.NOT_RETRIED), "each call: retried or not, with a reason"
    assert not set(retry.IDEMPOTENT) & set(retry.NOT_RETRIED)
    docs = (Path(__file__).resolve().parents[2] / "docs" / "connections.md").read_text()
    for name in calls:
        assert re.search(rf"`{name}`", docs), f"docs/connections.md names {name}"


@pytest.mark.parametrize(
    ("sql", "params", "expected"),
    [
        (sessions.CREATE_SESSION.sql, ("t", None), True),
        (sessions.CREATE_SESSION.sql, (None, None), False),  # a retry would make a second session
        (queue.ENQUEUE_JOB.sql, ("t", {}, "q", None, 0, 5, "key"), True),
        (queue.ENQUEUE_JOB.sql, ("t", {}, "q", None, 0, 5, None), False),
        (sessions.RECORD_EVENT.sql, ("t", "k", None), False),
        (queue.COMPLETE_JOB.sql, (1, 1, None), True),  # idempotent under the same token (issue 41)
        (queue.CLAIM_JOBS.sql, ("w", None, "q", 1, "request"), True),  # a retry answers the same jobs
        (queue.CLAIM_JOBS.sql, ("w", None, "q", 1, None), False),  # without a request id: new jobs
        (checkpoints.GET_CHECKPOINT.sql, ("t", "", None), True),
    ],
)
def test_idempotence_depends_on_the_arguments(sql: str, params: tuple[Any, ...], expected: bool) -> None:
    assert retry.is_idempotent(sql, params) is expected


def test_policy_delays_grow_are_capped_and_jittered() -> None:
    delays = list(RetryPolicy(attempts=8, first_delay=0.1, max_delay=1.0, jitter=0.5).delays())
    assert len(delays) == 7
    assert all(0.05 <= d <= 0.1 for d in delays[:1]) and all(0.5 <= d <= 1.0 for d in delays[4:])
    assert inspect.signature(Client).parameters["retry"].default is None
    with pytest.raises(ValueError):
        RetryPolicy(attempts=0)


def test_a_connection_its_owner_closed_is_not_reopened(direct_dsn: str) -> None:
    conn = psycopg.connect(dsn_as(direct_dsn, "tenant_a"), autocommit=True)
    conn.close()
    client = Client(conn, retry=RetryPolicy(attempts=3, first_delay=5.0))  # a retry would take 5 s
    with pytest.raises(psycopg.OperationalError, match="closed"):
        client.now()
    assert client.source is conn


def test_the_default_policy_rides_out_a_failover_and_never_sleeps_more_than_a_second() -> None:
    """Issue 31, item 3: an unplanned failover made the standby writable 51-55 s after the
    primary died (pg_auto_failover's defaults), so the default keeps trying for two minutes;
    once the database is writable, the next try is at most a second away."""
    policy = RetryPolicy()
    assert policy.timeout >= 120 and policy.attempts is None and policy.max_delay <= 1.0
    delays = list(policy.delays())
    assert max(delays) <= 1.0 and 115 <= sum(delays) <= 120, "as many tries as fit in two minutes"
    assert list(RetryPolicy(timeout=5).delays()) and sum(RetryPolicy(timeout=5).delays()) <= 5
    assert retry.is_read_only_error(psycopg.errors.ReadOnlySqlTransaction("cannot execute INSERT"))
    assert retry.is_connection_error(psycopg.errors.ReadOnlySqlTransaction("cannot execute INSERT"))
    assert retry.is_idempotent(side_effects.FINISH_SIDE_EFFECT.sql, ("t", "k", {}, None, 1)), "the same finish again"
