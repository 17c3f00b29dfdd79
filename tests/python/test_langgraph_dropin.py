"""The swap from PostgresSaver: AgentStateSaver on whatever connection or pool the user already has
(any row factory, prepare_threshold, pipeline mode, autocommit or not), from_conn_string and setup()."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from psycopg.rows import dict_row, namedtuple_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


def _checkpoint(values: dict[str, Any]) -> Any:
    cp = empty_checkpoint()
    cp["channel_values"] = values
    cp["channel_versions"] = {k: "1" for k in values}
    return cp


def _round_trip(saver: AgentStateSaver, thread_id: str) -> None:
    """put, put_writes, get_tuple, list, copy and delete: every read path that turns rows into tuples."""
    cp = _checkpoint({"messages": ["hello"] * 3, "n": 1})
    stored = saver.put(_config(thread_id), cp, {"source": "loop", "step": 0}, {"messages": "1", "n": "1"})
    saver.put_writes(stored, [("messages", ["next"]), ("__resume__", "yes")], "task-1")
    found = saver.get_tuple(_config(thread_id))
    assert found is not None
    assert found.checkpoint["channel_values"] == {"messages": ["hello"] * 3, "n": 1}
    assert sorted(found.pending_writes) == sorted([("task-1", "messages", ["next"]), ("task-1", "__resume__", "yes")])
    assert [t.checkpoint["id"] for t in saver.list(_config(thread_id))] == [cp["id"]]
    saver.copy_thread(thread_id, f"{thread_id}-copy")
    assert saver.get_tuple(_config(f"{thread_id}-copy")) is not None
    saver.delete_thread(f"{thread_id}-copy")
    saver.prune([thread_id])


async def _around_trip(saver: AsyncAgentStateSaver, thread_id: str) -> None:
    cp = _checkpoint({"messages": ["hello"] * 3, "n": 1})
    stored = await saver.aput(_config(thread_id), cp, {"source": "loop", "step": 0}, {"messages": "1", "n": "1"})
    await saver.aput_writes(stored, [("messages", ["next"])], "task-1")
    found = await saver.aget_tuple(_config(thread_id))
    assert found is not None
    assert found.checkpoint["channel_values"] == {"messages": ["hello"] * 3, "n": 1}
    assert found.pending_writes == [("task-1", "messages", ["next"])]
    assert [t.checkpoint["id"] async for t in saver.alist(_config(thread_id))] == [cp["id"]]
    await saver.acopy_thread(thread_id, f"{thread_id}-copy")
    await saver.adelete_thread(f"{thread_id}-copy")
    await saver.aprune([thread_id])


@pytest.mark.parametrize("row_factory", [dict_row, namedtuple_row], ids=["dict_row", "namedtuple_row"])
def test_sync_saver_works_on_a_connection_with_any_row_factory(role_dsn: Any, thread_id: str, row_factory: Any) -> None:
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True, row_factory=row_factory) as conn:
        _round_trip(AgentStateSaver(conn), thread_id)


def test_sync_saver_works_on_a_dict_row_pool_as_langgraph_documents_it(role_dsn: Any, thread_id: str) -> None:
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    with ConnectionPool(role_dsn("tenant_a"), min_size=1, max_size=2, kwargs=kwargs, open=True) as pool:
        _round_trip(AgentStateSaver(pool), thread_id)


def test_async_saver_works_on_a_dict_row_connection_and_pool(role_dsn: Any, thread_id: str) -> None:
    async def run() -> None:
        kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
        async with await psycopg.AsyncConnection.connect(role_dsn("tenant_a"), **kwargs) as conn:
            await _around_trip(AsyncAgentStateSaver(conn), thread_id)
        async with AsyncConnectionPool(role_dsn("tenant_a"), min_size=1, max_size=2, kwargs=kwargs, open=False) as pool:
            await _around_trip(AsyncAgentStateSaver(pool), f"{thread_id}-pool")

    asyncio.run(run())


def test_a_node_that_interrupts_twice_resumes_to_the_end(role_dsn: Any, thread_id: str) -> None:
    """Defect 1: the node's completion writes two __resume__ writes (same task, same idx) at once."""
    from langgraph.graph import START, StateGraph
    from langgraph.types import Command, interrupt
    from typing_extensions import TypedDict

    class State(TypedDict):
        answers: list[str]

    def ask(state: State) -> State:
        first = interrupt("first?")
        second = interrupt("second?")
        return {"answers": [first, second]}

    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        graph = (
            StateGraph(State).add_node("ask", ask).add_edge(START, "ask").compile(checkpointer=AgentStateSaver(conn))
        )
        config = {"configurable": {"thread_id": thread_id}}
        graph.invoke({"answers": []}, config)
        graph.invoke(Command(resume="a"), config)
        assert graph.invoke(Command(resume="b"), config) == {"answers": ["a", "b"]}


# -- connection modes ------------------------------------------------------------------------------


@pytest.mark.parametrize("prepare_threshold", [None, 0, 5], ids=["never", "always", "default"])
def test_saver_works_whatever_the_prepare_threshold(role_dsn: Any, thread_id: str, prepare_threshold: Any) -> None:
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True, prepare_threshold=prepare_threshold) as conn:
        for _ in range(2):  # the second round runs prepared statements when the threshold allows
            _round_trip(AgentStateSaver(conn), f"{thread_id}-{_}")


def test_saver_works_in_pipeline_mode(role_dsn: Any, thread_id: str) -> None:
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn, conn.pipeline():
        _round_trip(AgentStateSaver(conn), thread_id)


def test_outside_autocommit_each_call_commits_and_inside_a_transaction_it_joins_it(
    role_dsn: Any, conn: psycopg.Connection[Any], thread_id: str
) -> None:
    with psycopg.connect(role_dsn("tenant_a")) as tenant:  # autocommit off, as psycopg's default
        saver = AgentStateSaver(tenant)
        _round_trip(saver, thread_id)
        assert tenant.info.transaction_status == psycopg.pq.TransactionStatus.IDLE, "no transaction left open"
        # Inside the caller's open transaction: the checkpoint is written only when the caller commits.
        tenant.execute("select 1")
        cp = _checkpoint({"n": 1})
        saver.put(_config(f"{thread_id}-tx"), cp, {"source": "loop", "step": 0}, {"n": "1"})
        seen = conn.execute("select count(*) from ai.checkpoints where thread_id = %s", (f"{thread_id}-tx",))
        assert seen.fetchone() == (0,)
        tenant.rollback()
        assert saver.get_tuple(_config(f"{thread_id}-tx")) is None
        tenant.rollback()


def test_saver_works_over_a_pool_of_connections_outside_autocommit(role_dsn: Any, thread_id: str) -> None:
    with ConnectionPool(role_dsn("tenant_a"), min_size=1, max_size=2, open=True) as pool:  # psycopg's defaults
        _round_trip(AgentStateSaver(pool), thread_id)


# -- from_conn_string and setup --------------------------------------------------------------------


def test_from_conn_string_runs_the_postgres_saver_snippet_with_the_class_name_changed(
    role_dsn: Any, thread_id: str
) -> None:
    for pipeline in (False, True):
        with AgentStateSaver.from_conn_string(role_dsn("tenant_a"), pipeline=pipeline) as checkpointer:
            status = checkpointer.setup()
            assert status.compatible and status.deployed
            assert checkpointer.conn.prepare_threshold is None and checkpointer.conn.autocommit
            assert checkpointer.conn.row_factory is dict_row  # PostgresSaver's, for code that reuses .conn
            _round_trip(checkpointer, f"{thread_id}-{pipeline}")


def test_async_from_conn_string_and_setup(role_dsn: Any, thread_id: str) -> None:
    async def run() -> None:
        for pipeline in (False, True):
            async with AsyncAgentStateSaver.from_conn_string(role_dsn("tenant_a"), pipeline=pipeline) as checkpointer:
                assert (await checkpointer.setup()).compatible
                assert checkpointer.conn.prepare_threshold is None and checkpointer.conn.row_factory is dict_row
                await _around_trip(checkpointer, f"{thread_id}-{pipeline}")

    asyncio.run(run())
