"""The pool and async paths, and tenant isolation seen from Python with real login roles."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from agent_state import AsyncClient, Client, NotFound, PermissionDenied


def test_pool_client(dsn: str, thread_id: str) -> None:
    with ConnectionPool(dsn, min_size=1, max_size=2, kwargs={"autocommit": True}, open=True) as pool:
        client = Client(pool)
        client.create_session(thread_id)
        assert client.append_message(thread_id, "user", "via pool").message.seq == 1
        assert client.get_session(thread_id).last_seq == 1


def test_async_client_over_connection_and_pool(dsn: str, thread_id: str) -> None:
    async def scenario() -> None:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            client = AsyncClient(conn)
            await client.create_session(thread_id)
            first = await client.append_message(thread_id, "user", {"n": 1}, turn=1)
            retry = await client.append_message(thread_id, "user", {"n": 1}, turn=1)
            assert first.inserted and not retry.inserted and retry.message == first.message
            await client.record_event(thread_id, "tool_call", {"x": 1})
            assert [e.kind for e in await client.get_events(thread_id)] == [
                "start",
                "tool_call",
            ]
            with pytest.raises(NotFound):
                await client.get_session("nope")
        async with AsyncConnectionPool(dsn, min_size=1, max_size=4, kwargs={"autocommit": True}) as pool:
            client = AsyncClient(pool)
            results = await asyncio.gather(*(client.append_message(thread_id, "user", {"n": i}) for i in range(2, 12)))
            assert sorted(r.message.seq for r in results) == list(range(2, 12))
            assert (await client.get_session(thread_id)).last_seq == 11
            assert (await client.set_session_status(thread_id, "completed")).status == "completed"
            assert (await client.get_messages(thread_id, after_seq=10))[0].seq == 11
            assert await client.now() is not None

    asyncio.run(scenario())


@pytest.mark.session_features("a session-level set_config of ai.acting_owner")
def test_tenants_see_only_their_own_threads(role_dsn: Callable[[str], str], thread_id: str) -> None:
    with (
        psycopg.connect(role_dsn("tenant_a"), autocommit=True) as a,
        psycopg.connect(role_dsn("tenant_b"), autocommit=True) as b,
    ):
        tenant_a, tenant_b = Client(a), Client(b)
        assert tenant_a.create_session(thread_id).owner == "tenant_a"
        tenant_a.append_message(thread_id, "user", "secret")
        with pytest.raises(NotFound):
            tenant_b.get_session(thread_id)
        with pytest.raises(NotFound):
            tenant_b.get_messages(thread_id)
        with pytest.raises(NotFound):
            tenant_b.append_message(thread_id, "user", "intrusion")
        # Spoofing the acting owner is ignored for a plain tenant.
        b.execute("select set_config('ai.acting_owner', 'tenant_a', false)")
        with pytest.raises(NotFound):
            tenant_b.get_session(thread_id)
        with pytest.raises(PermissionDenied), tenant_b.acting_as("tenant_a"):
            pass
        assert [m.content for m in tenant_a.get_messages(thread_id)] == ["secret"]


def test_service_acts_for_an_end_user(role_dsn: Callable[[str], str], thread_id: str) -> None:
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as s:
        service = Client(s)
        with service.acting_as("user-42") as as_user:
            session = as_user.create_session(thread_id)
            as_user.append_message(thread_id, "user", "hello")
        assert session.owner == "user-42"
        # Outside the block the service sees every tenant again.
        assert service.get_session(thread_id).owner == "user-42"
        with service.acting_as("user-43") as other_user, pytest.raises(NotFound):
            other_user.get_session(thread_id)


def test_role_without_grants_is_refused(role_dsn: Callable[[str], str]) -> None:
    with (
        psycopg.connect(role_dsn("outsider"), autocommit=True) as o,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        Client(o).create_session()
