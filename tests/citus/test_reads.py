"""Reads and per-function queries on a Citus formation, as a tenant through the coordinator (issue 40).

Whole rows passed to functions (``lateral ai._checkpoint_tuple(c)``, ``ai._session_as_read(s)``,
``ai._stream_state``) do not plan on the shards, VOLATILE ``ai.now()`` in an UPDATE of a distributed
table is refused by Citus, and the test clock (``ai.frozen_now``) must reach the shards signed with
the caller's identity or not at all. Each test here failed on the formation before its fix
(docs/scaling.md, "What runs on a formation").
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import psycopg
import pytest
from formation import connect, thread, url, worker_of
from langgraph.checkpoint.base import empty_checkpoint
from psycopg.types.json import Jsonb

from agent_state.langgraph_saver import AgentStateSaver


@pytest.fixture
def tenant_c() -> Iterator[str]:
    """A tenant that may not freeze the clock (no ai_test_clock), as every tenant of a production cluster."""
    with connect("postgres") as conn:
        conn.execute(
            "do $$ begin if not exists (select from pg_roles where rolname = 'tenant_c') then"
            " create role tenant_c login; end if; end $$"
        )
        conn.execute("grant ai_user to tenant_c")
    yield "tenant_c"


def test_the_saver_gets_and_lists_checkpoints_as_a_tenant_through_the_coordinator() -> None:
    t, other = thread("sv"), thread("sv")
    with psycopg.connect(url("tenant_a"), autocommit=True) as conn:
        saver = AgentStateSaver(conn)
        config = {"configurable": {"thread_id": t, "checkpoint_ns": ""}}
        first = empty_checkpoint()
        first["channel_values"] = {"steps": ["one"]}
        first["channel_versions"] = {"steps": saver.get_next_version(None, None)}
        c1 = saver.put(config, first, {"step": 1}, first["channel_versions"])
        saver.put_writes(c1, [("steps", ["two"])], "task-1")
        second = empty_checkpoint()
        second["channel_values"] = {"steps": ["one", "two"]}
        second["channel_versions"] = {"steps": saver.get_next_version(first["channel_versions"]["steps"], None)}
        c2 = saver.put(c1, second, {"step": 2}, second["channel_versions"])

        latest = saver.get_tuple(config)
        assert latest is not None
        assert latest.config["configurable"]["checkpoint_id"] == c2["configurable"]["checkpoint_id"]
        assert latest.checkpoint["channel_values"] == {"steps": ["one", "two"]}
        older = saver.get_tuple(c1)
        assert older is not None
        assert older.checkpoint["channel_values"] == {"steps": ["one"]}
        assert [w[1:] for w in older.pending_writes or []] == [("steps", ["two"])]
        listed = list(saver.list({"configurable": {"thread_id": t}}))
        assert [c.config["configurable"]["checkpoint_id"] for c in listed] == [
            c2["configurable"]["checkpoint_id"],
            c1["configurable"]["checkpoint_id"],
        ]
        assert listed[1].checkpoint["channel_values"] == {"steps": ["one"]}
        # across threads: the tenant's own, newest first, never another tenant's
        everywhere = [c.config["configurable"]["thread_id"] for c in saver.list(None, limit=1000)]
        assert t in everywhere
    with psycopg.connect(url("tenant_b"), autocommit=True) as conn:
        saver = AgentStateSaver(conn)
        saver.put({"configurable": {"thread_id": other, "checkpoint_ns": ""}}, empty_checkpoint(), {}, {})
        assert saver.get_tuple({"configurable": {"thread_id": t, "checkpoint_ns": ""}}) is None
        assert list(saver.list({"configurable": {"thread_id": t}})) == []
        assert t not in [c.config["configurable"]["thread_id"] for c in saver.list(None, limit=1000)]


def test_list_and_find_sessions_as_a_tenant_compute_last_seq_and_see_no_other_tenant() -> None:
    a, b = thread("ls"), thread("ls")
    with connect("tenant_a") as conn:
        conn.execute("select ai.create_session(%s, config => %s)", (a, Jsonb({"tag": a})))
        for content in ("x", "y"):
            conn.execute("select ai.append_messages(%s, %s)", (a, Jsonb([{"role": "user", "content": content}])))
    with connect("tenant_b") as conn:
        conn.execute("select ai.create_session(%s)", (b,))
    with connect("tenant_a") as conn:
        rows = conn.execute("select thread_id, owner, last_seq from ai.list_sessions(max_rows => 10000)").fetchall()
        assert (a, "tenant_a", 2) in rows
        assert {r[1] for r in rows} == {"tenant_a"}
        found = conn.execute(
            "select thread_id, last_seq from ai.find_sessions(meta_path => '{tag}', meta_value => %s)", (a,)
        ).fetchall()
        assert found == [(a, 2)]
        assert conn.execute("select count(*) from ai.find_sessions(owner => 'tenant_b')").fetchone() == (0,)
    with connect("app_service") as conn:
        owners = {r[0] for r in conn.execute("select owner from ai.list_sessions(max_rows => 10000)").fetchall()}
        assert {"tenant_a", "tenant_b"} <= owners


def test_a_stream_opens_lists_finishes_and_abandons_as_a_tenant() -> None:
    t = thread("st")
    with connect("tenant_a") as conn:
        conn.execute("select ai.create_session(%s)", (t,))
        conn.execute("select ai.open_stream(%s, 's1')", (t,))
        conn.execute("select ai.append_stream_chunks(%s, 's1', 1, '{he,llo}')", (t,))
        conn.execute("select ai.open_stream(%s, 's2')", (t,))
        assert conn.execute("select stream_key from ai.list_streams(%s)", (t,)).fetchall() == [("s1",), ("s2",)]
        assert conn.execute("select status, stale from ai.get_stream(%s, 's1')", (t,)).fetchone() == ("open", False)
        conn.execute("select ai.finish_stream(%s, 's1')", (t,))
        conn.execute("select ai.abandon_stream(%s, 's2')", (t,))
        assert conn.execute("select stream_key, status from ai.list_streams(%s)", (t,)).fetchall() == [
            ("s1", "finished"),
            ("s2", "abandoned"),
        ]
        assert conn.execute("select content from ai.get_messages(%s)", (t,)).fetchall() == [("hello",)]
    with connect("tenant_b") as conn, pytest.raises(psycopg.Error) as exc:
        conn.execute("select ai.get_stream(%s, 's1')", (t,))
    assert exc.value.sqlstate == "AS001"


FROZEN = datetime(2001, 2, 3, 4, 5, 6, tzinfo=UTC)


def test_a_frozen_clock_reaches_the_shards_for_a_role_that_may_freeze_it() -> None:
    t = thread("ck")
    with connect("tenant_a") as conn, conn.transaction():
        conn.execute("select set_config('ai.frozen_now', %s, true)", (FROZEN.isoformat(),))
        conn.execute("select ai.create_session(%s)", (t,))
        conn.execute("select ai.append_messages(%s, %s)", (t, Jsonb([{"role": "user", "content": "x"}])))
        assert conn.execute("select created_at from ai.get_session(%s)", (t,)).fetchone() == (FROZEN,)
        assert conn.execute("select created_at from ai.get_messages(%s)", (t,)).fetchone() == (FROZEN,)
        # moved within the transaction: the shards follow
        later = FROZEN.replace(year=2002)
        conn.execute("select set_config('ai.frozen_now', %s, true)", (later.isoformat(),))
        conn.execute("select ai.append_messages(%s, %s)", (t, Jsonb([{"role": "user", "content": "y"}])))
        assert conn.execute("select max(created_at) from ai.get_messages(%s)", (t,)).fetchone() == (later,)


def test_a_tenant_cannot_move_the_shards_clock(tenant_c: str) -> None:
    t = thread("ck")
    with connect(tenant_c) as conn, conn.transaction():
        conn.execute("select set_config('ai.frozen_now', %s, true)", (FROZEN.isoformat(),))
        # what Citus would send on with the carried identity, set by hand: no signature holds it
        conn.execute("set local citus.propagate_set_commands = local")
        conn.execute(f"set local ai.frozen_now = '{FROZEN.isoformat()}'")
        conn.execute("select ai.create_session(%s)", (t,))
        conn.execute("select ai.append_messages(%s, %s)", (t, Jsonb([{"role": "user", "content": "x"}])))
        row = conn.execute("select created_at from ai.get_messages(%s)", (t,)).fetchone()
        assert row is not None and row[0] != FROZEN and row[0].year >= 2026
        session = conn.execute("select created_at from ai.get_session(%s)", (t,)).fetchone()
        assert session is not None and session[0] != FROZEN


def _saved_thread(conn: psycopg.Connection[tuple[object, ...]], t: str) -> list[str]:
    """Two checkpoints of one thread through the saver (values stored as deltas of the first); their ids."""
    saver = AgentStateSaver(conn)
    config = {"configurable": {"thread_id": t, "checkpoint_ns": ""}}
    ids = []
    version = None
    for n, steps in enumerate((["one"], ["one", "two"])):
        cp = empty_checkpoint()
        cp["channel_values"] = {"steps": steps}
        version = saver.get_next_version(version, None)
        cp["channel_versions"] = {"steps": version}
        config = saver.put(config, cp, {"step": n}, cp["channel_versions"])
        ids.append(config["configurable"]["checkpoint_id"])
    saver.put_writes(config, [("steps", ["three"])], "task-1")
    return ids


def test_copy_and_fork_reach_a_thread_on_another_worker() -> None:
    src = thread("cp")
    with psycopg.connect(url("tenant_a"), autocommit=True) as conn:
        ids = _saved_thread(conn, src)
        conn.execute("select ai.record_retrieval(%s, 1, %s)", (src, Jsonb([{"id": "doc-1"}])))
        # targets on every worker (the ids hash across the shards), so at least one copy crosses workers
        targets = [thread("cp") for _ in range(6)]
        workers = {worker_of(t) for t in targets} | {worker_of(src)}
        assert len(workers) > 1
        saver = AgentStateSaver(conn)
        for target in targets[:3]:
            assert conn.execute("select ai.copy_thread(%s, %s)", (src, target)).fetchone() == (2,)
            got = saver.get_tuple({"configurable": {"thread_id": target, "checkpoint_ns": ""}})
            assert got is not None and got.checkpoint["channel_values"] == {"steps": ["one", "two"]}
            assert [w[1:] for w in got.pending_writes or []] == [("steps", ["three"])]
        for target in targets[3:]:
            row = conn.execute("select ai.fork_thread(%s, %s, %s)", (src, ids[0], target)).fetchone()
            assert row == (target,)
            listed = list(saver.list({"configurable": {"thread_id": target}}))
            assert [c.checkpoint["channel_values"] for c in listed] == [{"steps": ["one"]}]
            assert conn.execute("select count(*) from ai.get_turn_context(%s, 1)", (target,)).fetchone() is not None
    with psycopg.connect(url("tenant_b"), autocommit=True) as conn, pytest.raises(psycopg.Error) as exc:
        conn.execute("select ai.copy_thread(%s, %s)", (src, thread("cp")))
    assert exc.value.sqlstate == "AS001"
