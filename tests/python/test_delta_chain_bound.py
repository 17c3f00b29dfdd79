"""Delta chains bounded by the server, and deltas only from a serializer the saver can verify
(issue 34, items 4 and 5).

* Whatever a client does (one long-lived saver, a fresh saver per invoke, or its own calls of
  ``ai.put_checkpoint`` with a delta at every step), no stored value is more than
  ``ai._max_delta_depth()`` links from a whole value, and every checkpoint reads back equal.
* A serializer whose type says ``msgpack`` but whose bytes are something else (an envelope around
  msgpack, a map, an array with more bytes than its header counts) never gets a delta: what is read
  back is what LangGraph's stock PostgresSaver reads back, every message.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from psycopg.types.json import Jsonb
from typing_extensions import TypedDict

from agent_state.langgraph import AgentStateSaver, CompressedSerializer

pytestmark = pytest.mark.session_features("the stock saver's schema is named by the options startup parameter")


class Chat(TypedDict):
    messages: Annotated[list[Any], add_messages]


def _chat(checkpointer: Any, replies: int = 1) -> Any:
    """A reply per step until the list holds `replies` more than the input (one by default: two
    checkpoints per invoke, the input's and the reply's)."""

    def reply(state: Chat) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"reply {n}", id=f"a-{n}")]}

    def route(state: Chat) -> str:
        return "reply" if len(state["messages"]) % (replies + 1) else END

    builder = StateGraph(Chat)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_conditional_edges("reply", route, ["reply", END])
    return builder.compile(checkpointer=checkpointer)


def _bound(conn: psycopg.Connection[Any]) -> int:
    return int(conn.execute("select ai._max_delta_depth()").fetchone()[0])


def _links(conn: psycopg.Connection[Any], thread: str) -> int:
    """The most links a read of any stored value of the thread follows (counted on base_version)."""
    row = conn.execute(
        """
        with recursive chain as (
          select b.channel, b.base_version, 0 as n from ai.checkpoint_blobs b where b.thread_id = %(t)s
          union all
          select c.channel, b.base_version, c.n + 1 from chain c
          join ai.checkpoint_blobs b on b.thread_id = %(t)s and b.checkpoint_ns = ''
                                     and b.channel = c.channel and b.version = c.base_version
        )
        select coalesce(max(n), 0) from chain
        """,
        {"t": thread},
    ).fetchone()
    return int(row[0])


def _history(graph: Any, thread: str) -> list[list[str]]:
    """Every checkpoint's messages, newest first (the state LangGraph reads at each)."""
    config = {"configurable": {"thread_id": thread}}
    return [[m.content for m in s.values.get("messages", [])] for s in graph.get_state_history(config)]


@pytest.fixture
def tenant_conn(role_dsn: Any) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as c:
        yield c


@pytest.mark.parametrize("fresh", [False, True], ids=["one-saver", "fresh-saver-each-invoke"])
def test_one_turn_invokes_keep_every_chain_within_the_bound(
    fresh: bool, tenant_conn: Any, conn: Any, thread_id: str
) -> None:
    bound = _bound(conn)
    invokes = bound + 8  # two checkpoints each: twice the bound and more
    config = {"configurable": {"thread_id": thread_id}}
    saver = AgentStateSaver(tenant_conn)
    memory = _chat(InMemorySaver())
    for turn in range(invokes):
        if fresh:
            saver = AgentStateSaver(tenant_conn)
        question = {"messages": [HumanMessage(f"question {turn}", id=f"h-{turn}")]}
        _chat(saver).invoke(question, config)
        memory.invoke(question, config)
    assert _links(conn, thread_id) <= bound
    ours = _history(_chat(AgentStateSaver(tenant_conn)), thread_id)
    assert len(ours[0]) == 2 * invokes
    assert ours == _history(memory, thread_id)


def test_a_client_sending_deltas_past_the_bound_gets_chains_within_it(
    tenant_conn: Any, conn: Any, thread_id: str
) -> None:
    """Through the SQL API: a delta at every step, never a whole value after the first."""
    bound = _bound(conn)
    serde = JsonPlusSerializer()
    steps = 3 * bound
    messages = [AIMessage(f"message {i}", id=f"m-{i}") for i in range(steps + 1)]
    parent = None
    for step in range(steps + 1):
        items = messages[:1] if step == 0 else messages[step : step + 1]
        type_, blob = serde.dumps_typed(items)
        version = f"{step:06}"
        # in a transaction block: a lone autocommit call of tenant_a, which may freeze the test
        # clock, is refused on a Citus formation's worker (AS072, docs/scaling.md); one server alike
        with tenant_conn.transaction():
            parent = tenant_conn.execute(
                "select ai.put_checkpoint(%s, '', %s, %s, 'test', '\\x01'::bytea, '{}', %s,"
                " channel_values => row(array['messages'], array[%s], array[%s], array[%s]::bytea[],"
                " array[%s])::ai.checkpoint_values)",
                (
                    thread_id,
                    f"c{step:06}",
                    parent,
                    Jsonb({"messages": version}),
                    version,
                    type_,
                    blob,
                    None if step == 0 else f"{step - 1:06}",
                ),
            ).fetchone()[0]
    assert _links(conn, thread_id) <= bound
    for step in range(steps + 1):
        row = tenant_conn.execute(
            "select blob_types[1], blobs[1] from ai.get_checkpoint(%s, '', %s)", (thread_id, f"c{step:06}")
        ).fetchone()
        assert serde.loads_typed((row[0], row[1])) == messages[: step + 1], step


# ----- item 5: a serializer whose type name lies ---------------------------------------------------


class _Lying:
    """LangGraph's serializer, its msgpack bytes changed on the way out and back: the type still
    says "msgpack", so only the bytes can tell."""

    def __init__(self) -> None:
        self.inner = JsonPlusSerializer()

    def wrap(self, data: bytes) -> bytes:
        raise NotImplementedError

    def unwrap(self, data: bytes) -> bytes:
        raise NotImplementedError

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        type_, data = self.inner.dumps_typed(obj)
        return (type_, self.wrap(data)) if type_ == "msgpack" else (type_, data)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        type_, blob = data
        return self.inner.loads_typed((type_, self.unwrap(blob) if type_ == "msgpack" else blob))


class Envelope(_Lying):
    """A one-item msgpack array around the real bytes: an array, but not of the list's items."""

    def wrap(self, data: bytes) -> bytes:
        return b"\x91" + data

    def unwrap(self, data: bytes) -> bytes:
        return data[1:]


class Mapped(_Lying):
    """msgpack, but a map ({"v": value}), not an array."""

    def wrap(self, data: bytes) -> bytes:
        return b"\x81\xa1v" + data

    def unwrap(self, data: bytes) -> bytes:
        return data[3:]


class Trailer(_Lying):
    """An array followed by a byte its header does not count (a checksum, say)."""

    def wrap(self, data: bytes) -> bytes:
        return data + b"\xc0"

    def unwrap(self, data: bytes) -> bytes:
        return data[:-1]


SERDES = {"envelope": Envelope, "map": Mapped, "trailer": Trailer}


@pytest.mark.parametrize("serde", list(SERDES))
def test_a_serializer_whose_type_name_lies_reads_back_every_message_as_stock_does(
    serde: str, tenant_conn: Any, conn: Any, stock_dsn: str, thread_id: str
) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver

    replies = 30
    question = {"messages": [HumanMessage("question", id="h-0")]}
    config = {"configurable": {"thread_id": thread_id}, "recursion_limit": 100}
    ours = _chat(AgentStateSaver(tenant_conn, serde=SERDES[serde]()), replies)
    ours.invoke(question, config)
    with PostgresSaver.from_conn_string(stock_dsn) as saver:
        saver.serde = SERDES[serde]()  # type: ignore[assignment]
        stock = _chat(saver, replies)
        stock.invoke(question, config)
        expected = _history(stock, thread_id)
    assert len(expected[0]) == replies + 1
    fresh = _chat(AgentStateSaver(tenant_conn, serde=SERDES[serde]()), replies)
    assert _history(fresh, thread_id) == expected
    deltas = conn.execute(
        "select count(*) from ai.checkpoint_blobs where thread_id = %s and base_version is not null", (thread_id,)
    ).fetchone()[0]
    assert deltas == 0


@pytest.mark.parametrize("serde", [JsonPlusSerializer, CompressedSerializer])
def test_the_serializers_the_saver_knows_still_make_deltas(
    serde: Any, tenant_conn: Any, conn: Any, thread_id: str
) -> None:
    replies = 30
    question = {"messages": [HumanMessage("question", id="h-0")]}
    config = {"configurable": {"thread_id": thread_id}, "recursion_limit": 100}
    _chat(AgentStateSaver(tenant_conn, serde=serde()), replies).invoke(question, config)
    memory = _chat(InMemorySaver(), replies)
    memory.invoke(question, config)
    assert _history(_chat(AgentStateSaver(tenant_conn, serde=serde()), replies), thread_id) == _history(
        memory, thread_id
    )
    deltas = conn.execute(
        "select count(*) from ai.checkpoint_blobs where thread_id = %s and base_version is not null", (thread_id,)
    ).fetchone()[0]
    assert deltas >= replies - 1
