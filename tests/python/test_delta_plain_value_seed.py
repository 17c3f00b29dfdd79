"""LangGraph's plain-value seed tests for DeltaChannel histories (langgraph-checkpoint-postgres's
tests/test_delta_plain_value_seed.py), on every saver variant: sync and async, one connection and
a pool. A value stored before a channel became a DeltaChannel is the seed of its history, whether
it went to a blob row (a list) or stayed inline in the checkpoint (a primitive)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import Checkpoint, empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver

CHANNEL = "items"
VARIANTS = ["sync-connection", "sync-pool", "sync-pipeline", "async-connection", "async-pool", "async-pipeline"]


def _chain(put: Callable[..., Any], put_writes: Callable[..., Any], seed_value: Any) -> dict[str, Any]:
    """The upstream chain: the value at step 1, then steps that store nothing; a write each."""
    thread_id = str(uuid.uuid4())
    parent: dict[str, Any] | None = None
    for step in range(4):
        config: dict[str, Any] = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        if parent is not None:
            config["configurable"]["checkpoint_id"] = parent["configurable"]["checkpoint_id"]
        cp: Checkpoint = empty_checkpoint()
        cp["id"] = str(uuid6(clock_seq=step))
        new_versions: dict[str, Any] = {}
        if step == 1:
            cp["channel_values"][CHANNEL] = seed_value
            cp["channel_versions"][CHANNEL] = "v1"
            new_versions[CHANNEL] = "v1"
        else:
            cp["channel_versions"][CHANNEL] = f"v{step}"
        parent = put(config, cp, {"source": "loop", "step": step, "parents": {}}, new_versions)
        put_writes(parent, [(CHANNEL, f"w{step}")], str(uuid.uuid4()))
    assert parent is not None
    return parent


def _history(variant: str, dsn: str, seed_value: Any) -> dict[str, Any]:
    if variant.startswith("sync"):
        if variant == "sync-pool":
            with ConnectionPool(dsn, min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
                saver = AgentStateSaver(pool)
                head = _chain(saver.put, saver.put_writes, seed_value)
                return dict(saver.get_delta_channel_history(config=head, channels=[CHANNEL])[CHANNEL])
        if variant == "sync-pipeline":
            with AgentStateSaver.from_conn_string(dsn, pipeline=True) as saver:
                head = _chain(saver.put, saver.put_writes, seed_value)
                return dict(saver.get_delta_channel_history(config=head, channels=[CHANNEL])[CHANNEL])
        with psycopg.connect(dsn, autocommit=True) as conn:
            saver = AgentStateSaver(conn)
            head = _chain(saver.put, saver.put_writes, seed_value)
            return dict(saver.get_delta_channel_history(config=head, channels=[CHANNEL])[CHANNEL])

    async def run() -> dict[str, Any]:
        async def chain(saver: AsyncAgentStateSaver) -> dict[str, Any]:
            head: dict[str, Any] | None = None
            thread_id = str(uuid.uuid4())
            for step in range(4):
                config: dict[str, Any] = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
                if head is not None:
                    config["configurable"]["checkpoint_id"] = head["configurable"]["checkpoint_id"]
                cp: Checkpoint = empty_checkpoint()
                cp["id"] = str(uuid6(clock_seq=step))
                new_versions: dict[str, Any] = {}
                if step == 1:
                    cp["channel_values"][CHANNEL] = seed_value
                    cp["channel_versions"][CHANNEL] = "v1"
                    new_versions[CHANNEL] = "v1"
                else:
                    cp["channel_versions"][CHANNEL] = f"v{step}"
                head = dict(await saver.aput(config, cp, {"source": "loop", "step": step, "parents": {}}, new_versions))
                await saver.aput_writes(head, [(CHANNEL, f"w{step}")], str(uuid.uuid4()))
            assert head is not None
            return dict((await saver.aget_delta_channel_history(config=head, channels=[CHANNEL]))[CHANNEL])

        if variant == "async-pool":
            async with AsyncConnectionPool(
                dsn, min_size=1, max_size=2, kwargs={"autocommit": True}, open=False
            ) as pool:
                return await chain(AsyncAgentStateSaver(pool))
        if variant == "async-pipeline":
            async with AsyncAgentStateSaver.from_conn_string(dsn, pipeline=True) as saver:
                return await chain(saver)
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            return await chain(AsyncAgentStateSaver(conn))

    return asyncio.run(run())


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("seed_value", [[10, 20], 42, "x", 3.5, True], ids=repr)
def test_a_plain_value_before_the_first_write_is_the_seed(variant: str, seed_value: Any, role_dsn: Any) -> None:
    entry = _history(variant, role_dsn("tenant_a"), seed_value)
    assert entry.get("seed", "<missing>") == seed_value
    assert [w[2] for w in entry["writes"]] == ["w1", "w2"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_an_inline_none_is_no_seed_and_replays_from_empty(variant: str, role_dsn: Any) -> None:
    entry = _history(variant, role_dsn("tenant_a"), None)
    assert "seed" not in entry
