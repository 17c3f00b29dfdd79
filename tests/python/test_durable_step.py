"""The durable step in one call, and list channels written once (issue 20, items 1 and 2).

* A step of one task is one call of ``ai.put_checkpoint`` on the server: its pending writes, the
  checkpoint and the values travel together (counted in ``pg_stat_user_functions``).
* A list channel that only grew (``add_messages``, ``operator.add``) is stored as the appended
  items: the bytes per step stay flat over 200 steps, where a whole value grows with the list.
* What is read back is what LangGraph holds in memory, at every checkpoint of the history, after a
  rewrite of the list (an item removed by id), after a fork, a prune and a copy.
* A step of several tasks keeps per-task writes: a finished sibling never runs again.
"""

from __future__ import annotations

import asyncio
import json
import operator
import random
import uuid
from collections.abc import Iterator
from typing import Annotated, Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from psycopg_pool import AsyncConnectionPool, ConnectionPool
from typing_extensions import TypedDict
from waiting import wait_until

from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver

STEPS = 200


class Chat(TypedDict):
    messages: Annotated[list[Any], add_messages]
    turn: int


def _text(turn: int) -> str:
    # incompressible, so that a whole value's size shows its length (pglz would hide repeats)
    return random.Random(turn).randbytes(300).hex()


def _chat(checkpointer: Any, steps: int = STEPS, remove_at: int | None = None) -> Any:
    def reply(state: Chat) -> dict[str, Any]:
        turn = state["turn"]
        if turn == remove_at:  # a rewritten list: the first message removed by id
            return {"messages": [RemoveMessage(id=state["messages"][0].id)], "turn": turn + 1}
        return {"messages": [AIMessage(_text(turn), id=f"m-{turn}")], "turn": turn + 1}

    def route(state: Chat) -> str:
        return "reply" if state["turn"] < steps else END

    builder = StateGraph(Chat)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_conditional_edges("reply", route, ["reply", END])
    return builder.compile(checkpointer=checkpointer)


def _run(graph: Any, thread: str, steps: int = STEPS) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}, "recursion_limit": steps + 10}
    return graph.invoke({"messages": [HumanMessage("hi", id="m-start")], "turn": 0}, config, durability="sync")


@pytest.fixture
def saver(role_dsn: Any) -> Iterator[AgentStateSaver]:
    with ConnectionPool(role_dsn("tenant_a"), min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
        yield AgentStateSaver(pool)


def _history(graph: Any, thread: str) -> list[tuple[int, list[Any]]]:
    found = graph.get_state_history({"configurable": {"thread_id": thread}})
    return [(s.metadata["step"], [(m.id, m.content) for m in s.values.get("messages", [])]) for s in found]


def test_a_list_channel_that_only_grows_is_stored_as_its_new_items(saver: AgentStateSaver, conn: Any) -> None:
    thread = f"delta-{uuid.uuid4()}"
    _run(_chat(saver), thread)
    # the bytes each version holds, or the write it names holds (a delta equal to the node's write)
    sizes = [
        n
        for (n,) in conn.execute(
            "select coalesce(pg_column_size(b.blob), pg_column_size(w.blob)) from ai.checkpoint_blobs b"
            " left join ai.checkpoint_writes w on w.thread_id = b.thread_id and w.checkpoint_ns = b.checkpoint_ns"
            "  and w.checkpoint_id = b.write_checkpoint_id and w.task_id = b.write_task_id and w.idx = b.write_idx"
            " where b.thread_id = %s and b.channel = 'messages' order by b.version",
            (thread,),
        ).fetchall()
    ]
    assert len(sizes) > STEPS
    # flat: the last steps write what the first ones did (one message), not the whole list again
    early, late = sorted(sizes[2:22])[10], sorted(sizes[-20:])[10]
    assert late < 2 * early, (early, late)
    deltas, named = conn.execute(
        "select count(*), count(write_task_id) from ai.checkpoint_blobs where thread_id = %s and channel = 'messages'"
        " and base_version is not null",
        (thread,),
    ).fetchone()
    # each delta is the node's new message, its pending write: stored once, as that write
    assert named == deltas, (named, deltas)
    # every version a delta but the first, and one whole value every ai._max_delta_depth() + 1
    bound = conn.execute("select ai._max_delta_depth()").fetchone()[0]
    assert deltas >= STEPS - 1 - STEPS // (bound + 1)


def test_what_is_read_back_is_what_langgraph_holds_at_every_checkpoint(saver: AgentStateSaver) -> None:
    thread = f"delta-{uuid.uuid4()}"
    ours, memory = _chat(saver, steps=30), _chat(InMemorySaver(), steps=30)
    assert _run(ours, thread, 30) == _run(memory, thread, 30)
    assert _history(ours, thread) == _history(memory, thread)
    # and by a saver that never saw the thread (nothing remembered: the database rebuilds it)
    fresh = _chat(AgentStateSaver(saver.conn), steps=30)
    assert _history(fresh, thread) == _history(memory, thread)


def test_a_rewritten_list_falls_back_to_a_whole_value(saver: AgentStateSaver, conn: Any) -> None:
    thread = f"delta-{uuid.uuid4()}"
    ours, memory = _chat(saver, steps=12, remove_at=6), _chat(InMemorySaver(), steps=12, remove_at=6)
    assert _run(ours, thread, 12) == _run(memory, thread, 12)
    assert _history(ours, thread) == _history(memory, thread)
    whole = conn.execute(
        "select count(*) from ai.checkpoint_blobs"
        " where thread_id = %s and channel = 'messages' and base_version is null",
        (thread,),
    ).fetchone()[0]
    assert whole >= 2  # the first value, and the one after the removal


def test_a_fork_a_copy_and_a_prune_keep_the_values_whole(saver: AgentStateSaver) -> None:
    thread, copy = f"delta-{uuid.uuid4()}", f"delta-copy-{uuid.uuid4()}"
    graph = _chat(saver, steps=20)
    _run(graph, thread, 20)
    expected = graph.get_state({"configurable": {"thread_id": thread}}).values
    # time travel: continue from a checkpoint in the middle (a fork within the thread)
    middle = [s for s in graph.get_state_history({"configurable": {"thread_id": thread}}) if s.metadata["step"] == 10]
    forked = graph.update_state(middle[0].config, {"messages": [AIMessage("fork", id="m-fork")]})
    state = graph.get_state(forked).values
    assert [m.id for m in state["messages"]][-2:] == ["m-9", "m-fork"]
    assert len(state["messages"]) == 12
    saver.copy_thread(thread, copy)
    assert (
        graph.get_state({"configurable": {"thread_id": copy}}).values
        == graph.get_state({"configurable": {"thread_id": thread}}).values
    )
    saver.prune([thread], strategy="keep_latest")
    after = AgentStateSaver(saver.conn).get_tuple({"configurable": {"thread_id": thread}})
    assert after is not None
    latest = graph.get_state({"configurable": {"thread_id": thread}}).values
    assert after.checkpoint["channel_values"]["messages"] == latest["messages"]
    assert expected["messages"][:10] == latest["messages"][:10]


class Fan(TypedDict):
    done: Annotated[list[str], operator.add]


def test_a_finished_sibling_never_runs_again(saver: AgentStateSaver, tmp_path: Any) -> None:
    runs: dict[str, int] = {"b": 0, "c": 0}
    fail = tmp_path / "fail-c"
    fail.write_text("1")

    def b(state: Fan) -> dict[str, Any]:
        runs["b"] += 1
        return {"done": ["b"]}

    def c(state: Fan) -> dict[str, Any]:
        runs["c"] += 1
        if fail.exists():
            fail.unlink()
            raise RuntimeError("c crashed")
        return {"done": ["c"]}

    builder = StateGraph(Fan)
    builder.add_node("a", lambda s: {"done": ["a"]})
    builder.add_node("b", b)
    builder.add_node("c", c)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("a", "c")
    builder.add_edge("b", END)
    builder.add_edge("c", END)
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": f"fan-{uuid.uuid4()}"}}
    with pytest.raises(RuntimeError):
        graph.invoke({"done": []}, config, durability="sync")
    # another saver (another process): only what reached the database counts
    again = builder.compile(checkpointer=AgentStateSaver(saver.conn))
    assert sorted(again.invoke(None, config, durability="sync")["done"]) == ["a", "b", "c"]
    assert runs == {"b": 1, "c": 2}


def _function_calls(conn: Any, names: list[str]) -> dict[str, int]:
    """The calls of each function the server counted; on a Citus formation, the sum over its nodes
    (a call delegated to the worker that holds its thread runs, and is counted, there), and a
    delegated write's calls are those of its body (ai._delegated_<name>_body: the public name is an
    SQL wrapper that the planner inlines, ai._formation_delegate)."""
    conn.execute("select pg_stat_clear_snapshot()")
    counted = "select funcname, calls from pg_stat_user_functions where schemaname = 'ai' and funcname = any(%s)"
    calls = {name: 0 for name in names}
    if conn.execute("select exists (select from pg_extension where extname = 'citus')").fetchone()[0]:
        on_a_node = (
            "select coalesce(jsonb_object_agg(f.name, f.calls), '{}') from ("
            " select regexp_replace(funcname, '^_delegated_(.*)_body$', '\\1') as name, sum(calls) as calls"
            " from pg_stat_user_functions where schemaname = 'ai' group by 1) f"
            " where f.name in (" + ", ".join(f"'{name}'" for name in names) + ")"
        )
        for (result,) in conn.execute("select result from run_command_on_all_nodes(%s)", (on_a_node,)):
            for name, count in json.loads(result).items():
                calls[name] += count
        return calls
    return calls | dict(conn.execute(counted, (names,)).fetchall())


@pytest.mark.session_features(reason="the backend's function statistics are flushed when it exits")
def test_a_step_of_one_task_is_one_call_on_the_server(dsn: str, conn: Any) -> None:
    # a login of its own whose calls the server counts (track_functions, a superuser's setting)
    role = "step_counter"
    if not conn.execute("select 1 from pg_roles where rolname = %s", (role,)).fetchone():
        conn.execute(f"create role {role} login in role ai_user")
    conn.execute(f"alter role {role} set track_functions = 'pl'")
    names = ["put_checkpoint", "put_writes", "get_checkpoint", "fenced_write", "append_message_idempotent"]
    before = _function_calls(conn, names)
    steps = 12
    params = psycopg.conninfo.conninfo_to_dict(dsn) | {"user": role}
    with psycopg.connect(**params, autocommit=True) as own:
        _run(_chat(AgentStateSaver(own), steps=steps), f"count-{uuid.uuid4()}", steps)
    # an input checkpoint and one per step; the database counts once the backend has exited
    wait_until(
        lambda: _function_calls(conn, names)["put_checkpoint"] - before["put_checkpoint"] >= steps + 1,
        "the exited backend's function statistics",
    )
    after = _function_calls(conn, names)
    calls = {name: after[name] - before[name] for name in names}
    assert calls["put_checkpoint"] == steps + 2  # the input, the __start__ step, one per reply
    # the input step's writes may race its checkpoint (LangGraph sends both at once); no other
    assert calls["put_writes"] <= 1, calls
    assert calls["get_checkpoint"] == 1, calls
    assert calls["fenced_write"] == calls["append_message_idempotent"] == 0, calls


def test_the_async_saver_stores_deltas_and_reads_them_back(role_dsn: Any, conn: Any) -> None:
    thread = f"delta-async-{uuid.uuid4()}"

    async def run() -> tuple[Any, Any]:
        async with AsyncConnectionPool(
            role_dsn("tenant_a"), min_size=1, max_size=2, kwargs={"autocommit": True}, open=False
        ) as pool:
            graph = _chat(AsyncAgentStateSaver(pool), steps=25)
            config = {"configurable": {"thread_id": thread}, "recursion_limit": 40}
            final = await graph.ainvoke(
                {"messages": [HumanMessage("hi", id="m-start")], "turn": 0}, config, durability="sync"
            )
            state = await graph.aget_state({"configurable": {"thread_id": thread}})
            return final, state.values

    final, read = asyncio.run(run())
    assert read == final
    assert final == _run(_chat(InMemorySaver(), steps=25), thread, 25)
    deltas = conn.execute(
        "select count(*) from ai.checkpoint_blobs where thread_id = %s and base_version is not null", (thread,)
    ).fetchone()[0]
    assert deltas >= 24


def test_mirrored_messages_reach_the_thread_in_the_same_call(role_dsn: Any, conn: Any) -> None:
    thread = f"mirror-{uuid.uuid4()}"
    with ConnectionPool(role_dsn("tenant_a"), min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
        graph = _chat(AgentStateSaver(pool, mirror_messages="messages"), steps=5)
        _run(graph, thread, 5)
        # a retried put (the same checkpoint again) appends nothing twice
        graph.invoke(None, {"configurable": {"thread_id": thread}})
    rows = conn.execute(
        "select role, content ->> 'content', idempotency_key from ai.session_messages"
        " where thread_id = %s order by seq",
        (thread,),
    ).fetchall()
    assert [r[0] for r in rows] == ["user"] + ["assistant"] * 5
    assert [r[2] for r in rows] == ["lg:m-start"] + [f"lg:m-{t}" for t in range(5)]
    assert rows[1][1] == _text(0)


def test_archive_and_restore_keep_a_thread_of_deltas_whole(saver: AgentStateSaver, client: Any) -> None:
    from datetime import timedelta

    from agent_state import Client

    thread = f"delta-archived-{uuid.uuid4()}"
    graph = _chat(saver, steps=10)
    _run(graph, thread, 10)
    expected = graph.get_state({"configurable": {"thread_id": thread}}).values
    Client(saver.conn).set_session_status(thread, "completed")
    moved: list[str] = []
    while batch := client.archive_sessions(timedelta(0), 1000):
        moved += [m.thread_id for m in batch]
    assert thread in moved
    assert AgentStateSaver(saver.conn).get_tuple({"configurable": {"thread_id": thread}}) is None
    client.restore_session(thread)
    fresh = _chat(AgentStateSaver(saver.conn), steps=10)
    assert fresh.get_state({"configurable": {"thread_id": thread}}).values == expected
