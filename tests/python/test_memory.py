"""Long-term memory through the client and the LangGraph store, sync and async: tenants, act_as,
PgBouncer, retrievals of memory items, a graph node's store, GraphRuns' pass-through."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypedDict

import psycopg
import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError
from psycopg_pool import ConnectionPool

from agent_state import AsyncClient, Client, errors
from agent_state.langgraph import AgentStateSaver, AgentStateStore, AsyncAgentStateStore, GraphRuns
from agent_state.memory import retrieval_documents


def _ns(thread_id: str, *labels: str) -> tuple[str, ...]:
    return ("test", thread_id, *labels)


def test_put_get_search_list_and_delete_through_the_client(client: Client, thread_id: str) -> None:
    ns = _ns(thread_id, "prefs")
    put = client.put_memory(ns, "theme", {"theme": "dark", "n": 9}, ttl=timedelta(hours=1))
    assert put.namespace == ns and put.expires_at is not None
    client.put_memory(ns, "lang", {"lang": "fr", "n": 10})
    got = client.get_memory(ns, "theme")
    assert got is not None and got.value == {"theme": "dark", "n": 9}
    assert [i.key for i in client.search_memory(ns, filter={"n": {"$lt": 10}})] == ["theme"]
    assert [i.key for i in client.search_memory(ns, query="dark")] == ["theme"]
    assert client.list_memory_namespaces(prefix=_ns(thread_id)) == [ns]
    assert client.delete_memory(ns, "theme") and client.get_memory(ns, "theme") is None


def test_the_async_client_is_the_same(dsn: str, thread_id: str) -> None:
    async def check() -> None:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            c = AsyncClient(conn)
            ns = _ns(thread_id)
            await c.put_memory(ns, "k", {"s": "9"})
            await c.put_memory(ns, "j", {"s": "10"})
            assert [i.key for i in await c.search_memory(ns, filter={"s": {"$gt": "10"}})] == ["k"]
            assert (await c.get_memory(ns, "k")) is not None
            assert await c.list_memory_namespaces(prefix=ns) == [ns]
            assert await c.delete_memory(ns, "k")

    asyncio.run(check())


def test_bad_arguments_raise_typed_errors(client: Client, thread_id: str) -> None:
    with pytest.raises(errors.InvalidArgument):
        client.search_memory(_ns(thread_id), filter={"n": {"$regex": "x"}})
    with pytest.raises(errors.TooLarge):
        client.put_memory(_ns(thread_id), "big", {"t": "x" * (2 << 20)})


def test_numbers_compare_as_numbers_and_strings_as_strings_in_the_store(
    conn: psycopg.Connection[Any], thread_id: str
) -> None:
    store = AgentStateStore(conn)
    ns = _ns(thread_id)
    store.put(ns, "nine", {"n": 9, "s": "9"})
    store.put(ns, "ten", {"n": 10, "s": "10"})
    assert [i.key for i in store.search(ns, filter={"n": {"$lt": 10}})] == ["nine"]
    assert [i.key for i in store.search(ns, filter={"s": {"$gt": "10"}})] == ["nine"]


def test_a_query_without_embeddings_ranks_by_full_text(conn: psycopg.Connection[Any], thread_id: str) -> None:
    store = AgentStateStore(conn)
    ns = _ns(thread_id)
    store.put(ns, "fox", {"text": "the quick brown fox"})
    store.put(ns, "dog", {"text": "a lazy dog"})
    found = store.search(ns, query="fox")
    assert [i.key for i in found] == ["fox"] and found[0].score is not None and found[0].score > 0


def test_vector_search_ranks_by_the_nearest_field(conn: psycopg.Connection[Any], thread_id: str) -> None:
    axes = {"red": [1.0, 0.0, 0.0], "green": [0.0, 1.0, 0.0], "blue": [0.0, 0.0, 1.0]}

    def embed(texts: list[str]) -> list[list[float]]:
        return [next((v for word, v in axes.items() if word in t), [0.3, 0.3, 0.3]) for t in texts]

    store = AgentStateStore(conn, index={"dims": 3, "embed": embed, "fields": ["text"]})
    ns = _ns(thread_id)
    store.put(ns, "r", {"text": "red apple"})
    store.put(ns, "g", {"text": "green apple"})
    store.put(ns, "plain", {"text": "blue"}, index=False)
    found = store.search(ns, query="red")
    assert [i.key for i in found] == ["r", "g"] and found[0].score == pytest.approx(1.0)


def test_a_tenant_never_sees_another_tenants_memory(role_dsn: Callable[[str], str], thread_id: str) -> None:
    with (
        psycopg.connect(role_dsn("tenant_a"), autocommit=True) as a,
        psycopg.connect(role_dsn("tenant_b"), autocommit=True) as b,
    ):
        ns = _ns(thread_id)
        AgentStateStore(a).put(ns, "k", {"who": "a"})
        store_b = AgentStateStore(b)
        assert store_b.get(ns, "k") is None and store_b.search(ns) == [] and store_b.list_namespaces(prefix=ns) == []
        store_b.put(ns, "k", {"who": "b"})
        item = AgentStateStore(a).get(ns, "k")
        assert item is not None and item.value == {"who": "a"}


def test_a_service_acting_for_an_end_user_keeps_that_users_memory(
    role_dsn: Callable[[str], str], thread_id: str
) -> None:
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as conn:
        service = Client(conn)
        ns = _ns(thread_id)
        with service.acting_as(f"user-{thread_id}") as bound:
            AgentStateStore(bound).put(ns, "k", {"v": 1})
        with service.acting_as(f"other-{thread_id}") as bound:
            assert AgentStateStore(bound).get(ns, "k") is None
        with service.acting_as(f"user-{thread_id}") as bound:
            item = AgentStateStore(bound).get(ns, "k")
            assert item is not None and item.value == {"v": 1}


def test_the_store_works_behind_pgbouncer_in_transaction_pooling(pooler_dsn: str, thread_id: str) -> None:
    with ConnectionPool(pooler_dsn, min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
        store = AgentStateStore(pool)
        ns = _ns(thread_id)
        for i in range(8):  # past psycopg's prepare threshold of 5
            store.put(ns, f"k{i}", {"i": i})
            assert store.get(ns, f"k{i}") is not None
            assert len(store.search(ns, filter={"i": {"$lte": i}}, limit=100)) == i + 1


def test_invalid_namespace_labels_are_refused_before_any_sql(conn: psycopg.Connection[Any]) -> None:
    store = AgentStateStore(conn)
    for namespace in (("a.b",), ("a", "")):
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "k", {})


def test_a_retrieval_of_memory_items_links_the_turn_to_what_it_read(client: Client, thread_id: str) -> None:
    store = AgentStateStore(client)
    ns = _ns(thread_id)
    store.put(ns, "diet", {"text": "vegetarian"})
    client.create_session(thread_id)
    client.append_message(thread_id, "user", "what should I cook?", turn=1)
    read = store.search(ns, query="vegetarian")
    client.record_retrieval(thread_id, 1, retrieval_documents(read))
    [retrieval] = client.get_turn_context(thread_id, 1).retrievals
    [doc] = retrieval["documents"]
    assert doc["source"] == "memory" and doc["namespace"] == list(ns) and doc["key"] == "diet" and doc["score"] > 0


class _State(TypedDict):
    user: str
    answer: str


def _graph() -> Any:
    def remember(state: _State, *, store: BaseStore) -> dict[str, Any]:
        ns = ("users", state["user"])
        seen = store.get(ns, "visits")
        visits = 1 + (seen.value["n"] if seen else 0)
        store.put(ns, "visits", {"n": visits})
        return {"answer": f"visit {visits}"}

    builder = StateGraph(_State)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", END)
    return builder


def test_a_graph_node_receives_the_store(conn: psycopg.Connection[Any], thread_id: str) -> None:
    store = AgentStateStore(conn)
    graph = _graph().compile(checkpointer=AgentStateSaver(conn), store=store)
    user = f"u-{thread_id}"
    assert graph.invoke({"user": user}, {"configurable": {"thread_id": thread_id}})["answer"] == "visit 1"
    assert graph.invoke({"user": user}, {"configurable": {"thread_id": f"{thread_id}-2"}})["answer"] == "visit 2"


def test_an_async_graph_node_receives_the_async_store(dsn: str, thread_id: str) -> None:
    async def check() -> None:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            store = AsyncAgentStateStore(conn)
            graph = _graph().compile(store=store)
            user = f"u-{thread_id}"
            # the sync node calls the store's sync methods from LangGraph's worker thread
            assert (await graph.ainvoke({"user": user}))["answer"] == "visit 1"
            item = await store.aget(("users", user), "visits")
            assert item is not None and item.value == {"n": 1}

    asyncio.run(check())


def test_graph_runs_pass_the_store_to_the_graph(conn: psycopg.Connection[Any]) -> None:
    store = AgentStateStore(conn)
    runs = GraphRuns(Client(conn), _graph().compile(), store=store)
    assert runs._graph_for(conn).store is store


def _cli(*args: str, dsn: str) -> Any:
    import os
    import subprocess
    import sys
    from pathlib import Path

    environment = {**os.environ, "DATABASE_URL": dsn}
    command = [str(Path(sys.executable).with_name("agent-state")), *args]
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=60, check=False)


def test_the_cli_lists_shows_and_removes_memory_per_namespace(role_dsn: Callable[[str], str], thread_id: str) -> None:
    import json

    dsn = role_dsn("tenant_a")
    with psycopg.connect(dsn, autocommit=True) as conn:
        Client(conn).put_memory(("cli", thread_id, "alice"), "prefs", {"theme": "dark"})
    listed = _cli("memory", "ls", f"cli/{thread_id}", "--json", dsn=dsn)
    assert listed.returncode == 0 and json.loads(listed.stdout) == [["cli", thread_id, "alice"]], listed.stderr
    items = _cli("memory", "ls", f"cli/{thread_id}", "--items", dsn=dsn)
    assert items.returncode == 0 and "prefs" in items.stdout and "dark" in items.stdout
    shown = _cli("memory", "show", f"cli/{thread_id}/alice", "prefs", dsn=dsn)
    assert shown.returncode == 0 and json.loads(shown.stdout) == {"theme": "dark"}
    assert _cli("memory", "rm", f"cli/{thread_id}/alice", "prefs", dsn=dsn).returncode == 0
    gone = _cli("memory", "show", f"cli/{thread_id}/alice", "prefs", dsn=dsn)
    assert gone.returncode == 2 and "no memory item" in gone.stderr
    assert _cli("memory", "ls", f"cli/{thread_id}", "--json", dsn=role_dsn("tenant_b")).stdout.strip() == "[]"


def test_an_owner_archives_and_restores_its_memory_intact_and_another_tenant_cannot(
    role_dsn: Callable[[str], str], thread_id: str
) -> None:
    ns = ("archive", thread_id, "alice")
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn_a:
        a = Client(conn_a)
        a.put_memory(ns, "prefs", {"theme": "dark"}, ttl=timedelta(days=30), embeddings={"theme": [0.5, 0.5]})
        a.put_memory(ns, "notes", {"text": "kilo lima"})
        before = {i.key: i for i in a.search_memory(ns)}
        with psycopg.connect(role_dsn("tenant_b"), autocommit=True) as conn_b:
            b = Client(conn_b)
            assert b.archive_memory(ns) == 0  # tenant b names tenant a's prefix: none of its items
            assert a.archive_memory(ns, max_items=1) == 1 and a.archive_memory(ns, max_items=1) == 1
            assert a.archive_memory(ns) == 0 and a.search_memory(ns) == []
            assert b.restore_memory(ns) == b.restore_memory() and b.restore_memory().restored == 0
        back = a.restore_memory(ns)
        assert (back.restored, back.superseded) == (2, 0)
        after = {i.key: i for i in a.search_memory(ns)}
        assert after == before  # value, created and updated times, expiry
        nearest = a.search_memory(ns, query_embedding=[1.0, 1.0])
        assert [i.key for i in nearest] == ["prefs"]  # the embedding came back too


def test_a_service_archives_and_restores_an_end_users_memory_async(
    role_dsn: Callable[[str], str], thread_id: str
) -> None:
    ns = ("archive", thread_id)

    async def check() -> None:
        async with await psycopg.AsyncConnection.connect(role_dsn("app_service"), autocommit=True) as conn:
            service = AsyncClient(conn)
            async with service.acting_as(f"user-{thread_id}") as user:
                await user.put_memory(ns, "k", {"v": 1})
                assert await user.archive_memory(ns) == 1
                assert await user.get_memory(ns, "k") is None
            assert await service.archive_memory(ns) == 0  # acting for nobody: its own memory
            async with service.acting_as(f"user-{thread_id}") as user:
                assert (await user.restore_memory(ns)).restored == 1
                got = await user.get_memory(ns, "k")
                assert got is not None and got.value == {"v": 1}

    asyncio.run(check())


def test_the_cli_archives_and_restores_a_namespace_batch_by_batch(
    role_dsn: Callable[[str], str], thread_id: str
) -> None:
    import json

    dsn = role_dsn("tenant_a")
    ns = ("cli-archive", thread_id)
    with psycopg.connect(dsn, autocommit=True) as conn:
        for i in range(5):
            Client(conn).put_memory(ns, f"k{i}", {"i": i})
    archived = _cli("memory", "archive", "/".join(ns), "--batch-size", "2", "--json", dsn=dsn)
    assert archived.returncode == 0 and json.loads(archived.stdout) == {"archived": 5}, archived.stderr
    assert _cli("memory", "ls", "/".join(ns), "--json", dsn=dsn).stdout.strip() == "[]"
    restored = _cli("memory", "restore", "/".join(ns), "--batch-size", "2", dsn=dsn)
    assert restored.returncode == 0 and "restored 5 memory items" in restored.stdout, restored.stdout + restored.stderr


def _wide(n: int, seed: int) -> str:
    """n random characters of four bytes each in UTF-8 (planes 1 to 16): incompressible, the most
    bytes a character can take."""
    import random

    rng = random.Random(seed)
    return "".join(chr(rng.randrange(0x10000, 0x10FFFF)) for _ in range(n))


def test_every_documented_maximum_of_an_item_is_stored_archived_and_restored(
    role_dsn: Callable[[str], str], thread_id: str
) -> None:
    # owner 255 bytes (63 four-byte characters: ai.act_as counts bytes), namespace 192 in all
    # (20 labels: 19 of 8 characters, one of 21, 19 separators), key 128, a vector's field 64:
    # every one at its limit, in random four-byte characters
    # (issue 37: 20 labels of 255 random characters and a 1,024-character key failed with 54000)
    owner, key, field = _wide(63, 1), _wide(128, 2), _wide(64, 3)
    ns = (*(_wide(8, 10 + i) for i in range(19)), _wide(21, 30))
    assert len("\x1f".join(ns)) == 192
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as conn, Client(conn).acting_as(owner) as bound:
        bound.put_memory(ns, key, {"text": "x"}, embeddings={field: [1.0, 0.5]})
        item = bound.get_memory(ns, key)
        assert item is not None and item.namespace == ns and item.key == key
        assert bound.archive_memory(ns[:1]) == 1 and bound.get_memory(ns, key) is None
        assert bound.restore_memory(ns[:1]).restored == 1
        assert bound.search_memory(ns, query_embedding=[1.0, 0.5])[0].key == key
        bound.delete_memory(ns, key)


@pytest.mark.parametrize(
    "namespace, key, embeddings",
    [
        (tuple("a" * 255 for _ in range(20)), "k", None),  # the namespace: 20 labels of 255
        (("a" * 96, "b" * 96), "k", None),  # 193 characters in all
        (("a",), "k" * 129, None),
        (("a",), "k" * 1024, None),  # the key
        (("a",), "k", {"f" * 65: [1.0]}),
    ],
    ids=["20x255-labels", "namespace-193", "key-129", "key-1024", "field-65"],
)
def test_a_value_past_a_documented_maximum_is_refused_with_as002(
    client: Client, namespace: tuple[str, ...], key: str, embeddings: dict[str, list[float]] | None
) -> None:
    with pytest.raises(errors.InvalidArgument):
        client.put_memory(namespace, key, {"v": 1}, embeddings=embeddings)
