"""AgentStateSession with the real OpenAI Agents SDK (no network: a scripted model)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from agents.memory import Session
from agents.memory.session_settings import SessionSettings
from psycopg_pool import AsyncConnectionPool

from agent_state import Conflict
from agent_state.openai_agents import AgentStateSession, item_role

HERE = Path(__file__).parent


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def _pool(dsn: str) -> AsyncConnectionPool:
    pool = AsyncConnectionPool(dsn, kwargs={"autocommit": True}, min_size=1, max_size=8, open=False)
    await pool.open()
    return pool


def test_it_is_a_session_of_the_sdk(dsn: str, thread_id: str) -> None:
    async def check() -> None:
        pool = await _pool(dsn)
        try:
            assert isinstance(AgentStateSession(thread_id, pool), Session)
        finally:
            await pool.close()

    run(check())


def test_items_round_trip_in_order_with_limits(role_dsn: Any, thread_id: str) -> None:
    items = [
        {"role": "user", "content": "hello"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "42"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
    ]

    async def check() -> None:
        pool = await _pool(role_dsn("tenant_a"))
        try:
            session = AgentStateSession(thread_id, pool)
            assert await session.get_items() == []
            await session.add_items(items[:2])
            await session.add_items(items[2:])
            assert await session.get_items() == items
            assert await session.get_items(limit=2) == items[2:]
            limited = AgentStateSession(thread_id, pool, session_settings=SessionSettings(limit=1))
            assert await limited.get_items() == items[3:]
        finally:
            await pool.close()

    run(check())


def test_item_roles() -> None:
    assert item_role({"role": "developer", "content": "x"}) == "system"
    assert item_role({"type": "function_call"}) == "tool_call"
    assert item_role({"type": "computer_call_output"}) == "tool_result"
    assert item_role({"type": "reasoning", "summary": []}) == "assistant"


def test_pop_and_clear_hide_items_but_keep_the_messages(dsn: str, role_dsn: Any, thread_id: str) -> None:
    async def check() -> None:
        pool = await _pool(role_dsn("tenant_a"))
        try:
            session = AgentStateSession(thread_id, pool)
            assert await session.pop_item() is None
            await session.add_items([{"role": "user", "content": str(i)} for i in range(3)])
            assert await session.pop_item() == {"role": "user", "content": "2"}
            assert [i["content"] for i in await session.get_items()] == ["0", "1"]
            await session.clear_session()
            assert await session.get_items() == []
            assert await session.pop_item() is None
            await session.add_items([{"role": "user", "content": "again"}])
            assert await session.get_items() == [{"role": "user", "content": "again"}]
        finally:
            await pool.close()

    run(check())
    with psycopg.connect(dsn) as conn:
        stored = conn.execute("select count(*) from ai.session_messages where thread_id = %s", (thread_id,)).fetchone()
    assert stored == (4,)


def test_a_tenant_sees_only_its_own_sessions(role_dsn: Any, thread_id: str) -> None:
    async def check() -> None:
        a = await _pool(role_dsn("tenant_a"))
        b = await _pool(role_dsn("tenant_b"))
        try:
            await AgentStateSession(thread_id, a).add_items([{"role": "user", "content": "secret"}])
            intruder = AgentStateSession(thread_id, b)
            assert await intruder.get_items() == []
            assert await intruder.pop_item() is None
            await intruder.clear_session()
            with pytest.raises(Conflict):  # AS005: the id is another tenant's; no write goes through
                await intruder.add_items([{"role": "user", "content": "mine"}])
            assert await AgentStateSession(thread_id, a).get_items() == [{"role": "user", "content": "secret"}]
        finally:
            await a.close()
            await b.close()

    run(check())


def test_concurrent_add_items_keep_every_item_once(dsn: str, thread_id: str) -> None:
    async def check() -> None:
        pool = await _pool(dsn)
        try:
            writers = [AgentStateSession(thread_id, pool) for _ in range(8)]
            await asyncio.gather(
                *(
                    w.add_items([{"role": "user", "content": f"{n}-{i}"} for i in range(5)])
                    for n, w in enumerate(writers)
                )
            )
            items = await AgentStateSession(thread_id, pool).get_items()
            assert sorted(i["content"] for i in items) == sorted(f"{n}-{i}" for n in range(8) for i in range(5))
            for n in range(8):  # each batch is one transaction: its items stay together and in order
                mine = [i["content"] for i in items if i["content"].startswith(f"{n}-")]
                assert mine == [f"{n}-{i}" for i in range(5)]
        finally:
            await pool.close()

    run(check())


def test_add_items_resent_after_a_lost_reply_writes_nothing_twice(dsn: str, thread_id: str) -> None:
    """The first send commits but its connection dies before the reply is read; the resend with
    the same keys returns the committed items instead of appending them again."""

    async def check() -> None:
        pool = await _pool(dsn)
        try:
            session = AgentStateSession(thread_id, pool)
            client = session._shared
            assert client is not None
            original = client.append_messages
            calls = {"n": 0}

            async def lossy(thread: str, messages: Any) -> Any:
                result = await original(thread, messages)
                calls["n"] += 1
                if calls["n"] == 1:
                    raise psycopg.OperationalError("server closed the connection unexpectedly")
                return result

            client.append_messages = lossy  # type: ignore[method-assign]
            await session.add_items([{"role": "user", "content": "once"}, {"role": "user", "content": "once"}])
            assert calls["n"] == 2
            assert await session.get_items() == [{"role": "user", "content": "once"}] * 2
        finally:
            await pool.close()

    run(check())


def test_a_conversation_survives_a_process_restart_between_turns(dsn: str, thread_id: str) -> None:
    def turn(text: str) -> str:
        done = subprocess.run(
            [sys.executable, str(HERE / "openai_agents_turn.py"), dsn, thread_id, text],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    # Turn 1: user, tool call, tool output -> the model answers having seen 3 items.
    assert turn("first question") == "saw 3 items"
    # Turn 2, in a new process: the 4 stored items + the new user message, call and output = 7.
    assert turn("second question") == "saw 7 items"

    async def items() -> list[Any]:
        pool = await _pool(dsn)
        try:
            return await AgentStateSession(thread_id, pool).get_items()
        finally:
            await pool.close()

    stored = run(items())
    assert [item_role(i) for i in stored] == ["user", "tool_call", "tool_result", "assistant"] * 2
