"""Defects LangGraph's own test suites found in the savers (`make test-upstream`), one test each.

tests/upstream/langgraph/README.md lists the upstream test that found each one.
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from psycopg_pool import AsyncConnectionPool

from agent_state.errors import InvalidArgument
from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver


def _root(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


def test_prune_with_an_unknown_strategy_raises_value_error_and_changes_nothing(role_dsn: Any, thread_id: str) -> None:
    """As PostgresSaver.prune: a caller catching ValueError (LangGraph's contract) catches ours."""
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        saver = AgentStateSaver(conn)
        saver.put(_root(thread_id), empty_checkpoint(), {"source": "input", "step": -1}, {})
        with pytest.raises(ValueError, match="keep_all") as raised:
            saver.prune([thread_id], strategy="keep_all")
        assert isinstance(raised.value, InvalidArgument)
        assert len([*saver.list(_root(thread_id))]) == 1


def test_async_prune_with_an_unknown_strategy_raises_value_error(role_dsn: Any, thread_id: str) -> None:
    async def scenario() -> None:
        async with AsyncConnectionPool(role_dsn("tenant_a"), min_size=1, kwargs={"autocommit": True}) as pool:
            saver = AsyncAgentStateSaver(pool)
            await saver.aput(_root(thread_id), empty_checkpoint(), {"source": "input", "step": -1}, {})
            with pytest.raises(ValueError, match="keep_all"):
                await saver.aprune([thread_id], strategy="keep_all")
            assert len([t async for t in saver.alist(_root(thread_id))]) == 1

    asyncio.run(scenario())


def _committed_checkpoints(dsn: str, thread_id: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as other:
        rows = other.execute("select count(*) from ai.checkpoints where thread_id = %s", (thread_id,)).fetchall()
        return int(rows[0][0])


def test_put_on_a_pipeline_mode_connection_is_committed_when_it_returns(
    dsn: str, role_dsn: Any, thread_id: str
) -> None:
    """As PostgresSaver(conn, pipe=...): LangGraph's test_prune found writes left in the pipeline."""
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn, conn.pipeline():
        saver = AgentStateSaver(conn)
        saver.put(_root(thread_id), empty_checkpoint(), {"source": "input", "step": -1}, {})
        assert _committed_checkpoints(dsn, thread_id) == 1  # seen by another connection (the owner's)
        saver.prune([thread_id], strategy="delete")
        assert _committed_checkpoints(dsn, thread_id) == 0


def test_async_put_on_a_pipeline_mode_connection_is_committed_when_it_returns(
    dsn: str, role_dsn: Any, thread_id: str
) -> None:
    async def scenario() -> None:
        conn = await psycopg.AsyncConnection.connect(role_dsn("tenant_a"), autocommit=True)
        async with conn, conn.pipeline():
            saver = AsyncAgentStateSaver(conn)
            await saver.aput(_root(thread_id), empty_checkpoint(), {"source": "input", "step": -1}, {})
            assert _committed_checkpoints(dsn, thread_id) == 1
            await saver.aprune([thread_id], strategy="delete")
            assert _committed_checkpoints(dsn, thread_id) == 0

    asyncio.run(scenario())
