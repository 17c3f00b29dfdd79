"""A long-lived saver's per-thread memory is bounded, by count and by bytes (issue 34, item 6).

Threads that stop at ``interrupt()`` (a step whose put never comes) and threads with big lists
leave at most ``MAX_REMEMBERED_THREADS`` threads in the saver's step plan (one ``_Thread`` each:
its lists, last checkpoint, step of one task, held writes), and at most ``MAX_REMEMBERED_BYTES`` of
remembered list values; ``delete_thread`` forgets a thread whole. The bounds are lowered for the
test (the same code paths as 1,024 threads and 64 MiB).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt
from psycopg_pool import ConnectionPool
from typing_extensions import TypedDict

from agent_state import langgraph_saver
from agent_state.langgraph import AgentStateSaver

THREADS = 12


class Chat(TypedDict):
    messages: Annotated[list[Any], add_messages]


@pytest.fixture
def saver(role_dsn: Any) -> Iterator[AgentStateSaver]:
    with ConnectionPool(role_dsn("tenant_a"), min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
        yield AgentStateSaver(pool)


def _graph(checkpointer: Any, size: int) -> Any:
    def reply(state: Chat) -> dict[str, Any]:
        return {"messages": [AIMessage("x" * size, id=str(uuid.uuid4()))]}

    def ask(state: Chat) -> dict[str, Any]:
        answer = interrupt("continue?")
        return {"messages": [HumanMessage(str(answer), id=str(uuid.uuid4()))]}

    builder = StateGraph(Chat)
    builder.add_node("reply", reply)
    builder.add_node("ask", ask)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=checkpointer)


def _per_thread(saver: AgentStateSaver) -> dict[str, int]:
    """How many threads the saver remembers, and how many of them hold each kind of state."""
    threads = saver._plan.threads.values()
    return {
        "threads": len(threads),
        **{name: sum(1 for t in threads if getattr(t, name)) for name in ("lists", "last", "one_task", "held")},
    }


def _threads_in(saver: AgentStateSaver) -> set[str]:
    return {key[0] for key in saver._plan.threads}


def _remembered_bytes(saver: AgentStateSaver) -> int:
    return sum(r.nbytes for t in saver._plan.threads.values() for r in t.lists.values())


def test_threads_stopped_at_an_interrupt_leave_at_most_the_bound(
    saver: AgentStateSaver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(langgraph_saver, "MAX_REMEMBERED_THREADS", 4)
    graph = _graph(saver, 10)
    for _ in range(THREADS):
        config = {"configurable": {"thread_id": f"bound-{uuid.uuid4()}"}}
        graph.invoke({"messages": [HumanMessage("hi", id=str(uuid.uuid4()))]}, config, durability="sync")
        assert graph.get_state(config).next == ("ask",)
        assert all(n <= 4 for n in _per_thread(saver).values()), _per_thread(saver)


def test_remembered_lists_are_bounded_by_bytes(saver: AgentStateSaver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(langgraph_saver, "MAX_REMEMBERED_BYTES", 50_000)
    graph = _graph(saver, 20_000)
    for _ in range(THREADS):
        config = {"configurable": {"thread_id": f"bytes-{uuid.uuid4()}"}}
        graph.invoke({"messages": [HumanMessage("hi", id=str(uuid.uuid4()))]}, config, durability="sync")
        assert saver._plan.remembered_bytes <= 50_000
        assert saver._plan.remembered_bytes == _remembered_bytes(saver)
    assert len(saver._plan.threads) < THREADS


def test_delete_thread_forgets_the_thread_everywhere(saver: AgentStateSaver) -> None:
    graph = _graph(saver, 10)
    thread = f"forget-{uuid.uuid4()}"
    config = {"configurable": {"thread_id": thread}}
    graph.invoke({"messages": [HumanMessage("hi", id=str(uuid.uuid4()))]}, config, durability="sync")
    assert thread in _threads_in(saver)
    saver.delete_thread(thread)
    assert thread not in _threads_in(saver)
    assert saver._plan.remembered_bytes == _remembered_bytes(saver)
