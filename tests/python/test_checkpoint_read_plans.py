"""A checkpoint read's cost depends on its own thread only (issue 34 item 3, issue 41 item 6).

A tenant's thread of channel values stored as a delta chain (one message appended per step) is
read while another tenant holds about a million channel values (of the same channel name, where
the chain's links used to look) and a hundred thousand checkpoints and pending writes. Every
statement the read runs, the nested ones included (``_checkpoint_tuple``, ``_rebuilt_value``'s
walk of the chain, ``delta_channel_history``), is explained by auto_explain into the client's
notices, and every scan of the checkpoint tables must be an index scan whose index condition
holds ``thread_id``: a scan that applies the thread as a filter reads every thread's rows. (The
wall-clock figures are in docs/benchmarks.md, bench/checkpoint_reads.sh: speed is not asserted.)
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Annotated, Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from psycopg_pool import ConnectionPool
from typing_extensions import TypedDict

from agent_state.langgraph import AgentStateSaver

pytestmark = pytest.mark.session_features

OTHER_THREADS, VALUES_PER_THREAD, CHECKPOINTS_PER_THREAD = 1000, 1000, 100
STEPS = 30
CHECKPOINT_TABLES = {"checkpoints", "checkpoint_blobs", "checkpoint_writes"}


class Chat(TypedDict):
    messages: Annotated[list[Any], add_messages]
    turn: int


def _chat(saver: AgentStateSaver) -> Any:
    def reply(state: Chat) -> dict[str, Any]:
        return {"messages": [AIMessage(f"reply {state['turn']}", id=f"m-{state['turn']}")], "turn": state["turn"] + 1}

    builder = StateGraph(Chat)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_conditional_edges("reply", lambda s: "reply" if s["turn"] < STEPS else END, ["reply", END])
    return builder.compile(checkpointer=saver)


@pytest.fixture(scope="module")
def crowded_thread(module_dsn: str, module_role_dsn: Any) -> Iterator[str]:
    """Tenant B's million channel values, loaded once in bulk (generate_series; the rows are valid,
    so the foreign keys' per-row checks are skipped for the load), then tenant A's delta thread."""
    tag = uuid.uuid4().hex[:8]
    others, thread = f"plans-b-{tag}", f"plans-a-{tag}"
    with psycopg.connect(module_dsn, autocommit=True) as conn:
        conn.execute("set session authorization tenant_b")
        conn.execute("select ai.create_session(%s || '-' || t) from generate_series(1, %s) t", (others, OTHER_THREADS))
        conn.execute("reset session authorization")
        with conn.transaction():
            conn.execute("set local session_replication_role = replica")
            conn.execute(
                "insert into ai.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, owner, type, blob,"
                " base_version)"
                " select s.thread_id, '', 'messages', lpad(v::text, 8, '0'), s.owner, 'msgpack', '\\x91a178'::bytea,"
                "        case when v > 1 then lpad((v - 1)::text, 8, '0') end"
                " from ai.agent_sessions s, generate_series(1, %s) v where s.thread_id like %s || '-%%'",
                (VALUES_PER_THREAD, others),
            )
            conn.execute(
                "insert into ai.checkpoints (thread_id, checkpoint_ns, checkpoint_id, owner, type, checkpoint,"
                " channel_versions)"
                " select s.thread_id, '', lpad(v::text, 8, '0'), s.owner, 'msgpack', '\\x80'::bytea,"
                "        jsonb_build_object('messages', lpad(v::text, 8, '0'))"
                " from ai.agent_sessions s, generate_series(1, %s) v where s.thread_id like %s || '-%%'",
                (CHECKPOINTS_PER_THREAD, others),
            )
            conn.execute(
                "insert into ai.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, owner,"
                " channel, type, blob)"
                " select s.thread_id, '', lpad(v::text, 8, '0'), 't', 0, s.owner, 'messages', 'msgpack', '\\x90'::bytea"
                " from ai.agent_sessions s, generate_series(1, %s) v where s.thread_id like %s || '-%%'",
                (CHECKPOINTS_PER_THREAD, others),
            )
        conn.execute("analyze ai.checkpoint_blobs, ai.checkpoints, ai.checkpoint_writes, ai.agent_sessions")
    with ConnectionPool(module_role_dsn("tenant_a"), min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
        _chat(AgentStateSaver(pool)).invoke(
            {"messages": [HumanMessage("hi", id="m-start")], "turn": 0},
            {"configurable": {"thread_id": thread}, "recursion_limit": STEPS + 10},
            durability="sync",
        )
    yield thread
    with psycopg.connect(module_dsn, autocommit=True) as conn:
        conn.execute("delete from ai.agent_sessions where thread_id like %s", (f"plans-%-{tag}%",))


def _plans(dsn: str, query: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
    """The plans of every statement the call runs, nested ones included, as tenant_a runs it on a
    long-lived connection (past the five custom plans a PL/pgSQL statement gets before its cached
    plan may turn generic)."""
    notices: list[str] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("load 'auto_explain'")
        for setting, value in [("log_min_duration", "0"), ("log_nested_statements", "on"),
                               ("log_level", "notice"), ("log_format", "json")]:  # fmt: skip
            conn.execute(f"set auto_explain.{setting} = {value}")
        conn.execute("set session authorization tenant_a")
        for _ in range(6):
            conn.execute(query, params).fetchall()
        conn.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        assert conn.execute(query, params).fetchall(), query
    plans = [json.loads(n.split("plan:", 1)[1]) for n in notices if "plan:" in n]
    assert plans, "auto_explain reported no plan"
    return plans


def _nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", []):
        yield from _nodes(child)


def _scans_without_the_thread(plans: list[dict[str, Any]]) -> list[str]:
    bad = []
    for plan in plans:
        for node in _nodes(plan["Plan"]):
            if node.get("Relation Name") not in CHECKPOINT_TABLES:
                continue
            cond = node.get("Index Cond") or node.get("Recheck Cond") or ""
            probe = node["Node Type"] in ("Index Scan", "Index Only Scan", "Bitmap Heap Scan")
            if not probe or "thread_id" not in cond:
                bad.append(f"{plan['Query Text'].strip()[:120]!r}: {node['Node Type']} on {node['Relation Name']}"
                           f" (index condition {cond or 'none'}, filter {node.get('Filter', 'none')})")  # fmt: skip
    return bad


@pytest.mark.parametrize(
    ("what", "query"),
    [
        ("get_checkpoint", "select * from ai.get_checkpoint(%s)"),
        ("list_checkpoints", "select * from ai.list_checkpoints(%s, '', null, 10)"),
        ("delta_channel_history", "select * from ai.delta_channel_history(%s, '', null, array['messages'])"),
    ],
)
def test_a_delta_threads_read_probes_its_own_thread_among_a_million_rows_of_others(
    module_dsn: str, crowded_thread: str, what: str, query: str
) -> None:
    plans = _plans(module_dsn, query, (crowded_thread,))
    if what != "delta_channel_history":
        # the chain's walk was explained: the test reads what it means to
        assert any("with recursive chain" in p["Query Text"] for p in plans), f"{what}: no delta chain was rebuilt"
    assert _scans_without_the_thread(plans) == [], what
