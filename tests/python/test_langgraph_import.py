"""import_from_postgres_saver: threads written by LangGraph's real PostgresSaver, in a database of
their own on the test server, copied into agent-state; what AgentStateSaver then reads equals what
PostgresSaver reads, including pending sends of checkpoints from LangGraph before format v4."""

from __future__ import annotations

import asyncio
import operator
import uuid
from collections.abc import Iterator
from typing import Annotated, Any

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.serde.types import TASKS
from langgraph.graph import START, StateGraph
from langgraph.types import Command, Send, interrupt
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row
from typing_extensions import TypedDict

from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver
from agent_state.langgraph_import import import_from_postgres_saver

# In the pooled run these tests connect to the server itself (see the marker's reason).
pytestmark = pytest.mark.session_features(
    "the source is LangGraph's PostgresSaver, which prepares statements on the server"
)


class State(TypedDict):
    items: Annotated[list[str], operator.add]


def _graph(checkpointer: Any) -> Any:
    """Fan-out with Send (pending sends), then a node that interrupts twice."""

    def fan(state: State) -> list[Send]:
        return [Send("work", {"items": [f"w{i}"]}) for i in range(3)]

    def work(state: State) -> State:
        return {"items": [state["items"][0].upper()]}

    def ask(state: State) -> State:
        return {"items": [interrupt("first?"), interrupt("second?")]}

    def inner(state: State) -> State:
        return {"items": ["sub"]}

    subgraph = StateGraph(State).add_node("inner", inner).add_edge(START, "inner").compile()
    builder = StateGraph(State).add_node("work", work).add_node("sub", subgraph).add_node("ask", ask)
    builder.add_conditional_edges(START, fan, ["work"]).add_edge("work", "sub").add_edge("sub", "ask")
    return builder.compile(checkpointer=checkpointer)


@pytest.fixture
def source_dsn(dsn: str) -> Iterator[str]:
    """An empty database with PostgresSaver's tables, as its setup() makes them."""
    name = f"agent_state_lg_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
        params: dict[str, Any] = conninfo_to_dict(dsn)
        params["dbname"] = name
        url = make_conninfo(**params)
        try:
            with PostgresSaver.from_conn_string(url) as saver:
                saver.setup()
            yield url
        finally:
            admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


def _old_format_thread(saver: PostgresSaver, thread_id: str) -> str:
    """A parent checkpoint with two TASKS writes and a child in format v1 (LangGraph before v4)."""
    parent = empty_checkpoint()
    parent["v"] = 1
    parent["channel_values"] = {"items": ["a"]}
    parent["channel_versions"] = {"items": saver.get_next_version(None, None)}
    base = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    stored = saver.put(base, parent, {"source": "loop", "step": 0}, parent["channel_versions"])
    saver.put_writes(stored, [(TASKS, Send("work", {"n": 1})), (TASKS, Send("work", {"n": 2}))], "task-1")
    child = empty_checkpoint()
    child["v"] = 1
    child["channel_values"] = {"items": ["a", "b"]}
    child["channel_versions"] = {"items": saver.get_next_version(parent["channel_versions"]["items"], None)}
    saver.put(stored, child, {"source": "loop", "step": 1}, child["channel_versions"])
    return child["id"]


def _history(saver: Any, thread_id: str) -> list[tuple[Any, ...]]:
    """Every checkpoint of every namespace, as the saver reads it."""
    out = []
    for t in saver.list({"configurable": {"thread_id": thread_id}}):
        out.append(
            (
                t.config["configurable"]["checkpoint_ns"],
                t.config["configurable"]["checkpoint_id"],
                t.checkpoint["channel_values"],
                t.checkpoint["channel_versions"],
                t.metadata,
                (t.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
                sorted(map(repr, t.pending_writes or [])),
            )
        )
    return sorted(out, key=lambda row: (row[0], row[1]))


def test_imported_threads_read_as_postgres_saver_reads_them_and_a_rerun_changes_nothing(
    source_dsn: str, role_dsn: Any, conn: psycopg.Connection[Any]
) -> None:
    graph_thread, old_thread = f"lg-{uuid.uuid4()}", f"lg-old-{uuid.uuid4()}"
    with psycopg.connect(source_dsn, autocommit=True, row_factory=dict_row) as src_conn:
        reference = PostgresSaver(src_conn)
        graph = _graph(reference)
        config = {"configurable": {"thread_id": graph_thread}}
        graph.invoke({"items": []}, config)
        graph.invoke(Command(resume="r1"), config)  # still waiting for the second answer
        old_child = _old_format_thread(reference, old_thread)
        expected = {t: _history(reference, t) for t in (graph_thread, old_thread)}
        assert {row[0] for row in expected[graph_thread]} != {""}, "the subgraph's namespace is imported too"
        converted = reference.get_tuple({"configurable": {"thread_id": old_thread, "checkpoint_ns": ""}})
        assert converted is not None and converted.checkpoint["channel_values"][TASKS] == [
            Send("work", {"n": 1}),
            Send("work", {"n": 2}),
        ]

    with (
        psycopg.connect(source_dsn) as source,  # not autocommit: only read
        psycopg.connect(role_dsn("tenant_a"), autocommit=True) as target,
    ):
        report = import_from_postgres_saver(source, target)
        assert sorted(report.threads) == sorted([graph_thread, old_thread])
        assert report.checkpoints == len(expected[graph_thread]) + len(expected[old_thread])
        saver = AgentStateSaver(target)
        for thread_id, history in expected.items():
            assert _history(saver, thread_id) == history, thread_id
        mine = saver.get_tuple({"configurable": {"thread_id": old_thread, "checkpoint_ns": ""}})
        assert mine is not None and mine.config["configurable"]["checkpoint_id"] == old_child
        assert mine.checkpoint["channel_values"][TASKS] == converted.checkpoint["channel_values"][TASKS]
        assert mine.checkpoint["channel_versions"] == converted.checkpoint["channel_versions"]

        async def aread() -> Any:
            async with await psycopg.AsyncConnection.connect(role_dsn("tenant_a"), autocommit=True) as aconn:
                asaver = AsyncAgentStateSaver(aconn)
                return [t async for t in asaver.alist({"configurable": {"thread_id": old_thread, "checkpoint_ns": ""}})]

        newest = asyncio.run(aread())[0]
        assert newest.checkpoint["channel_values"] == converted.checkpoint["channel_values"], "async twin converts too"

        counts = (
            "select (select count(*) from ai.checkpoints where thread_id = any(%(t)s)),"
            " (select count(*) from ai.checkpoint_blobs where thread_id = any(%(t)s)),"
            " (select count(*) from ai.checkpoint_writes where thread_id = any(%(t)s))"
        )
        before = conn.execute(counts, {"t": [graph_thread, old_thread]}).fetchone()
        again = import_from_postgres_saver(source, target, thread_ids=[graph_thread])
        assert again.threads == [graph_thread]
        assert conn.execute(counts, {"t": [graph_thread, old_thread]}).fetchone() == before
        assert _history(saver, graph_thread) == expected[graph_thread]
        owners = conn.execute(
            "select distinct owner from ai.agent_sessions where thread_id = any(%s)", ([graph_thread, old_thread],)
        ).fetchall()
        assert owners == [("tenant_a",)]

        # The imported run goes on where it stopped, now on agent-state.
        result = _graph(saver).invoke(Command(resume="r2"), {"configurable": {"thread_id": graph_thread}})
        assert {"W0", "W1", "W2", "r1", "r2", "sub"} <= set(result["items"])
    with psycopg.connect(source_dsn, autocommit=True, row_factory=dict_row) as src_conn:
        config = {"configurable": {"thread_id": graph_thread}}
        same = _graph(PostgresSaver(src_conn)).invoke(Command(resume="r2"), config)
        assert result == same, "the same run as it would have gone on in PostgresSaver"


def test_a_service_imports_for_an_end_user_with_owner(source_dsn: str, role_dsn: Any) -> None:
    """A service acts for one end user per thread transaction (``owner=``): an acting owner lasts one
    transaction (docs/security.md), so the v0.1.0 way, ``ai.act_as(owner, false)`` first, raises AS002."""
    thread_id = f"imp-owner-{uuid.uuid4()}"
    with PostgresSaver.from_conn_string(source_dsn) as saver:
        _old_format_thread(saver, thread_id)
    with (
        psycopg.connect(source_dsn, autocommit=True) as source,
        psycopg.connect(role_dsn("app_service"), autocommit=True) as target,
    ):
        with pytest.raises(psycopg.Error) as refused:
            target.execute("select ai.act_as('end-user-7', false)")
        assert refused.value.sqlstate == "AS002"
        report = import_from_postgres_saver(source, target, thread_ids=[thread_id], owner="end-user-7")
        assert report.threads == [thread_id]
        owner = target.execute("select owner from ai.get_session(%s)", (thread_id,)).fetchone()
        assert owner == ("end-user-7",)
