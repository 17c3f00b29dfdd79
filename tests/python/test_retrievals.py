"""Retrieved context per turn through the client, sync and async."""

from __future__ import annotations

import asyncio

import psycopg

from agent_state import AsyncClient, Client


def test_a_turn_reads_back_with_its_messages_and_documents(client: Client, thread_id: str) -> None:
    client.create_session(thread_id)
    client.append_message(thread_id, "user", "what is fencing?", turn=1)
    first = client.record_retrieval(thread_id, 1, [{"id": "queue.md#fencing", "score": 0.91}])
    again = client.record_retrieval(thread_id, 1, [{"id": "queue.md#fencing", "score": 0.91}])
    client.append_message(thread_id, "assistant", "a token that rejects a zombie", turn=1)
    assert first.inserted and not again.inserted and again.retrieval_id == first.retrieval_id
    context = client.get_turn_context(thread_id, 1)
    assert [m["content"] for m in context.messages] == ["what is fencing?", "a token that rejects a zombie"]
    assert [r["documents"] for r in context.retrievals] == [[{"id": "queue.md#fencing", "score": 0.91}]]


def test_async_twin(dsn: str, thread_id: str) -> None:
    async def check() -> None:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            c = AsyncClient(conn)
            await c.create_session(thread_id)
            await c.record_retrieval(thread_id, 2, [{"id": "a"}], idempotency_key="search-1")
            context = await c.get_turn_context(thread_id, 2)
            assert context.turn == 2 and context.messages == [] and len(context.retrievals) == 1

    asyncio.run(check())


def test_a_fork_carries_the_retrievals_recorded_up_to_its_checkpoint(client: Client, thread_id: str) -> None:
    client.create_session(thread_id)
    client.record_retrieval(thread_id, 1, [{"id": "before", "score": 0.5}])
    checkpoint = client.put_checkpoint(thread_id, "", None, None, "msgpack", b"\x01")
    client.record_retrieval(thread_id, 2, [{"id": "after"}])
    fork = client.fork_thread(thread_id, checkpoint, f"{thread_id}-fork")
    assert client.get_turn_context(fork, 1).retrievals == client.get_turn_context(thread_id, 1).retrievals != []
    assert client.get_turn_context(fork, 2).retrievals == []


def test_a_fork_carries_the_retrievals_async(dsn: str, thread_id: str) -> None:
    async def check() -> None:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            c = AsyncClient(conn)
            await c.create_session(thread_id)
            await c.record_retrieval(thread_id, 1, [{"id": "before"}])
            checkpoint = await c.put_checkpoint(thread_id, "", None, None, "msgpack", b"\x01")
            fork = await c.fork_thread(thread_id, checkpoint, f"{thread_id}-fork")
            assert [r["documents"] for r in (await c.get_turn_context(fork, 1)).retrievals] == [[{"id": "before"}]]

    asyncio.run(check())
