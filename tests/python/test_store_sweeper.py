"""The stores' TTL sweeper, sync and async, over one connection and over a pool: it deletes the
expired items, and the store's block stops it when it ends (the sync store over a pool left its
thread running before the two halves were generated from one source)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import psycopg
import pytest
from langgraph.store.base import TTLConfig

from agent_state.langgraph import AgentStateStore, AsyncAgentStateStore

TTL: TTLConfig = {"default_ttl": 60, "sweep_interval_minutes": 0.001}  # a sweep every 60 ms
POOLS = [None, {"min_size": 1, "max_size": 2}]


def _expire(conn: psycopg.Connection[Any], namespace: tuple[str, ...]) -> None:
    """The items of a namespace expired a second ago (as the table's owner would see it after a minute)."""
    conn.execute("update ai.memory_items set expires_at = now() - interval '1 second' where namespace = %s",
                 (list(namespace),))  # fmt: skip


def _left(conn: psycopg.Connection[Any], namespace: tuple[str, ...]) -> int:
    row = conn.execute("select count(*) from ai.memory_items where namespace = %s", (list(namespace),)).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("pool_config", POOLS, ids=["connection", "pool"])
def test_the_sync_sweeper_deletes_expired_items_and_stops_with_the_store(
    dsn: str, conn: psycopg.Connection[Any], thread_id: str, pool_config: dict[str, int] | None
) -> None:
    namespace = ("sweep", thread_id)
    with AgentStateStore.from_conn_string(dsn, ttl=TTL, pool_config=pool_config) as store:
        store.put(namespace, "old", {"n": 1})
        store.put(namespace, "kept", {"n": 2}, ttl=None)
        _expire(conn, namespace)
        conn.execute("update ai.memory_items set expires_at = null where key = 'kept' and namespace = %s",
                     (list(namespace),))  # fmt: skip
        sweeper = store.start_ttl_sweeper()
        assert store.start_ttl_sweeper() is sweeper  # a running sweeper is returned as it is
        deadline = time.monotonic() + 30
        while _left(conn, namespace) != 1:
            assert time.monotonic() < deadline, "the sweeper did not delete the expired item within 30 s"
            time.sleep(0.05)
        assert not sweeper.done()
    assert sweeper.done()
    assert store.stop_ttl_sweeper() is True


@pytest.mark.parametrize("pool_config", POOLS, ids=["connection", "pool"])
def test_the_async_sweeper_deletes_expired_items_and_stops_with_the_store(
    dsn: str, conn: psycopg.Connection[Any], thread_id: str, pool_config: dict[str, int] | None
) -> None:
    namespace = ("sweep", thread_id)

    async def check() -> None:
        async with AsyncAgentStateStore.from_conn_string(dsn, ttl=TTL, pool_config=pool_config) as store:
            await store.aput(namespace, "old", {"n": 1})
            _expire(conn, namespace)
            sweeper = await store.start_ttl_sweeper()
            assert await store.start_ttl_sweeper() is sweeper
            deadline = time.monotonic() + 30
            while _left(conn, namespace) != 0:
                assert time.monotonic() < deadline, "the sweeper did not delete the expired item within 30 s"
                await asyncio.sleep(0.05)
            assert not sweeper.done()
        assert sweeper.done()
        assert await store.stop_ttl_sweeper() is True

    asyncio.run(check())


def test_without_a_ttl_config_the_sweeper_ends_at_once(dsn: str) -> None:
    with AgentStateStore.from_conn_string(dsn) as store:
        store.start_ttl_sweeper().result(timeout=30)
