"""CompressedSerializer: large values zlib-compressed in the client, read back as LangGraph wrote them."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from psycopg_pool import ConnectionPool
from typing_extensions import TypedDict

from agent_state.langgraph import AgentStateSaver, CompressedSerializer

LONG = [HumanMessage(f"question {i}: " + "where is the museum and when does it open " * 20) for i in range(10)]


def test_a_large_value_is_stored_compressed_and_read_back() -> None:
    serde = CompressedSerializer()
    type_, data = serde.dumps_typed(LONG)
    plain_type, plain = JsonPlusSerializer().dumps_typed(LONG)
    assert type_ == plain_type + "+zlib"
    assert len(data) < len(plain) / 3
    assert serde.loads_typed((type_, data)) == LONG


def test_a_small_value_is_stored_as_langgraph_makes_it() -> None:
    value = {"step": 3, "route": "tools"}
    assert CompressedSerializer().dumps_typed(value) == JsonPlusSerializer().dumps_typed(value)


def test_values_written_without_it_are_read() -> None:
    assert CompressedSerializer().loads_typed(JsonPlusSerializer().dumps_typed(LONG)) == LONG


def test_bad_options_raise() -> None:
    with pytest.raises(ValueError):
        CompressedSerializer(level=10)


class State(TypedDict):
    messages: Annotated[list, add_messages]


def _graph(checkpointer: Any) -> Any:
    def answer(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage("the museum opens at nine in the morning " * 20)]}

    builder = StateGraph(State)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer)


def test_a_thread_mixes_both_and_reads_back(role_dsn: Any, dsn: str) -> None:
    thread = {"configurable": {"thread_id": f"zlib-{uuid.uuid4()}"}}
    with ConnectionPool(role_dsn("tenant_a"), min_size=1, max_size=1, kwargs={"autocommit": True}) as pool:
        _graph(AgentStateSaver(pool)).invoke({"messages": LONG[:5]}, thread)
        graph = _graph(AgentStateSaver(pool, serde=CompressedSerializer()))
        graph.invoke({"messages": LONG[5:]}, thread)
        messages = graph.get_state(thread).values["messages"]
        assert [m.content for m in messages if isinstance(m, HumanMessage)] == [m.content for m in LONG]
        assert len(messages) == 12
    with psycopg.connect(dsn) as su:
        types = {
            row[0]
            for row in su.execute(
                "select type from ai.checkpoint_blobs where thread_id = %s", (thread["configurable"]["thread_id"],)
            )
        }
    assert "msgpack+zlib" in types and "msgpack" in types
