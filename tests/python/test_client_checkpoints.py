"""Client and AsyncClient methods of the checkpoint functions: one SQL call each, rows as dataclasses."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from agent_state import (
    AsyncClient,
    ChannelValue,
    CheckpointRow,
    Client,
    InvalidArgument,
    LineageStep,
    NotFound,
    PendingWrite,
    PruneBatch,
    ThreadDeleted,
)


@pytest.fixture
def tenant(role_dsn: Any) -> Any:
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        yield Client(conn)


def test_put_get_list_lineage_fork_and_delete(tenant: Client, thread_id: str) -> None:
    first = tenant.put_checkpoint(
        thread_id, "", None, None, "msgpack", b"\x01", {"step": 0}, {"m": "1"}, [ChannelValue("m", "1", "t", b"\xaa")]
    )
    second = tenant.put_checkpoint(thread_id, "", None, first, "msgpack", b"\x02", {"step": 1}, {"m": "1"})
    assert first < second and len(second) == 26  # ULIDs, in time order
    assert tenant.put_writes(thread_id, "", second, "task", [PendingWrite(0, "m", "t", b"\xbb")]) == 1

    row = tenant.get_checkpoint(thread_id)
    assert isinstance(row, CheckpointRow)
    assert (row.checkpoint_id, row.parent_checkpoint_id, row.blobs, row.write_blobs) == (
        second,
        first,
        [b"\xaa"],
        [b"\xbb"],
    )
    assert tenant.get_checkpoint(thread_id, "", "missing") is None
    assert [r.checkpoint_id for r in tenant.list_checkpoints(thread_id, "", max_rows=1)] == [second]
    lineage = tenant.checkpoint_lineage(thread_id, second)
    assert lineage and isinstance(lineage[0], LineageStep)
    assert [(s.checkpoint_id, s.parent_checkpoint_id, s.depth) for s in lineage] == [
        (second, first, 0),
        (first, None, 1),
    ]
    now = tenant.now()
    assert len(tenant.checkpoints_between(thread_id, now - timedelta(hours=1), now + timedelta(hours=1))) == 2

    fork = tenant.fork_thread(thread_id, first)
    assert [r.checkpoint_id for r in tenant.list_checkpoints(fork)] == [first]
    assert tenant.copy_thread(thread_id, f"{thread_id}-copy") == 2
    assert tenant.prune_checkpoints([f"{thread_id}-copy"]) == 1
    assert tenant.prune_idle_threads(timedelta(days=1)) == PruneBatch(pruned=0, next_thread_id=None)
    assert tenant.delete_for_runs(["no-such-run"]) == 0
    assert tenant.delete_thread(thread_id) is True
    with pytest.raises(ThreadDeleted):
        tenant.put_checkpoint(thread_id, "", None, None, "msgpack", b"\x03")
    assert tenant.ulid_time(tenant.ulid()) <= tenant.now()


def test_errors_are_typed(tenant: Client, thread_id: str) -> None:
    with pytest.raises(InvalidArgument):
        tenant.checkpoint_lineage(thread_id, "x", direction="up")
    with pytest.raises(NotFound):
        tenant.fork_thread("no-such-thread", "x")


def test_async_client_has_the_same_methods(role_dsn: Any, thread_id: str) -> None:
    async def scenario() -> None:
        async with await psycopg.AsyncConnection.connect(role_dsn("tenant_a"), autocommit=True) as conn:
            client = AsyncClient(conn)
            cid = await client.put_checkpoint(thread_id, "", "c1", None, "msgpack", b"\x01")
            row = await client.get_checkpoint(thread_id)
            assert row is not None and row.checkpoint_id == cid == "c1"
            assert [s.checkpoint_id for s in await client.checkpoint_lineage(thread_id, "c1")] == ["c1"]
            assert await client.delete_thread(thread_id) is True

    asyncio.run(scenario())
