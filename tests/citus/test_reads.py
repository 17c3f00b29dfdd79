"""Reads and per-function queries on a Citus formation, as a tenant through the coordinator (issue 40).

Whole rows passed to functions (``lateral ai._checkpoint_tuple(c)``, ``ai._session_as_read(s)``,
``ai._stream_state``) do not plan on the shards, VOLATILE ``ai.now()`` in an UPDATE of a distributed
table is refused by Citus, and the test clock (``ai.frozen_now``) must reach the shards signed with
the caller's identity or not at all. Each test here failed on the formation before its fix
(docs/scaling.md, "What runs on a formation").
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import islice

import psycopg
import pytest
from formation import CLOCK_SERVICE, CLOCK_TENANT, connect, thread, url, worker_of
from langgraph.checkpoint.base import empty_checkpoint
from psycopg.types.json import Jsonb

from agent_state.langgraph_saver import AgentStateSaver


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


def _stamps(t: str) -> tuple[object, ...]:
    """A thread's times on the shards (as the superuser): the session's, the messages', the hidden marks'."""
    with connect("postgres") as conn:
        row = conn.execute(
            "select (select created_at from ai.agent_sessions where thread_id = %s),"
            " (select array_agg(distinct created_at) from ai.session_messages where thread_id = %s),"
            " (select array_agg(distinct hidden_at) from ai.hidden_messages where thread_id = %s)",
            (t, t, t),
        ).fetchone()
    assert row is not None
    return tuple(row)


def test_a_frozen_clock_stamps_what_a_call_writes_on_the_shards() -> None:
    """Every function reads ai.now() once on the caller's node and sends the value: no statement a shard
    runs calls the clock (a shard would read its own wall clock, and a VOLATILE call keeps Citus from
    running an INSERT ... SELECT there: hide_messages went through COPY, refused under RLS)."""
    t = thread("ck")
    with connect(CLOCK_TENANT) as conn, conn.transaction():
        conn.execute("select set_config('ai.frozen_now', %s, true)", (FROZEN.isoformat(),))
        conn.execute("select ai.create_session(%s)", (t,))
        conn.execute("select ai.append_messages(%s, %s)", (t, Jsonb([{"role": "user", "content": "x"}])))
        assert conn.execute("select ai.hide_messages(%s)", (t,)).fetchone() == (1,)
    assert _stamps(t) == (FROZEN, [FROZEN], [FROZEN])


def test_a_frozen_clock_decides_what_the_memory_sweep_deletes() -> None:
    base = datetime(1999, 1, 3, tzinfo=UTC)  # this test's own days: no other test's items expire then

    def at(conn: psycopg.Connection[tuple[object, ...]], when: datetime) -> None:
        conn.execute("select set_config('ai.frozen_now', %s, true)", (when.isoformat(),))

    with connect(CLOCK_SERVICE) as conn, conn.transaction():  # what an earlier run left
        at(conn, base - timedelta(days=1))
        for _ in range(100):
            row = conn.execute("select ai.sweep_memory(1000)").fetchone()
            if row is not None and row[0] < 1000:
                break
    with connect(CLOCK_SERVICE) as conn, conn.transaction():
        conn.execute("select ai.act_as('tenant_a')")
        at(conn, base)
        conn.execute("select ai.put_memory(%s, 'k', '{}', ttl => interval '1 hour')", ([thread("ms")],))
        at(conn, base + timedelta(minutes=35))
        assert conn.execute("select ai.sweep_memory()").fetchone() == (0,)
        at(conn, base + timedelta(hours=6))
        assert conn.execute("select ai.sweep_memory()").fetchone() == (1,)
    # acting for nobody: every owner's expired items, each owner's on its own shard
    with connect(CLOCK_SERVICE) as conn, conn.transaction():
        at(conn, base)
        for owner in ("tenant_a", "tenant_b"):
            conn.execute("select ai.act_as(%s)", (owner,))
            conn.execute("select ai.put_memory(%s, 'k', '{}', ttl => interval '1 hour')", ([thread("ms")],))
        conn.execute("select ai.act_as(null)")
        at(conn, base + timedelta(hours=6))
        assert conn.execute("select ai.sweep_memory(1)").fetchone() == (1,)
        assert conn.execute("select ai.sweep_memory(1000)").fetchone() == (1,)


def test_a_tenant_cannot_move_the_shards_clock(tenant_c: str) -> None:
    t = thread("ck")
    with connect(tenant_c) as conn, conn.transaction():
        conn.execute("select set_config('ai.frozen_now', %s, true)", (FROZEN.isoformat(),))
        # sent on to the shards by hand, as Citus sends the carried identity: no shard reads it
        conn.execute("set local citus.propagate_set_commands = local")
        conn.execute(f"set local ai.frozen_now = '{FROZEN.isoformat()}'")
        conn.execute("select ai.create_session(%s)", (t,))
        conn.execute("select ai.append_messages(%s, %s)", (t, Jsonb([{"role": "user", "content": "x"}])))
        conn.execute("select ai.hide_messages(%s)", (t,))
    session, messages, hidden = _stamps(t)
    assert isinstance(session, datetime) and session.year >= 2026
    assert isinstance(messages, list) and messages[0].year >= 2026
    assert isinstance(hidden, list) and hidden[0].year >= 2026


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
        # three copies and three forks, the first of each on a worker other than the source's (drawn
        # until one is: six random ids all on the source's worker, 1 run in 64 with two workers,
        # failed this test once)
        here = worker_of(src)
        far = list(islice((t for t in (thread("cp") for _ in range(200)) if worker_of(t) != here), 2))
        assert len(far) == 2
        targets = [far[0], thread("cp"), thread("cp"), far[1], thread("cp"), thread("cp")]
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
        forks = conn.execute("select fork_thread_id, from_checkpoint_id from ai.list_forks(%s)", (src,)).fetchall()
        assert sorted(forks) == sorted([(t, None) for t in targets[:3]] + [(t, ids[0]) for t in targets[3:]])
    with psycopg.connect(url("tenant_b"), autocommit=True) as conn, pytest.raises(psycopg.Error) as exc:
        conn.execute("select ai.copy_thread(%s, %s)", (src, thread("cp")))
    assert exc.value.sqlstate == "AS001"


def test_the_delta_channel_history_reads_a_thread_on_its_shard() -> None:
    t = thread("dh")
    with psycopg.connect(url("tenant_a"), autocommit=True) as conn:
        ids = _saved_thread(conn, t)
        rows = conn.execute(
            "select channel, kind, from_checkpoint_id from ai.delta_channel_history(%s, '', %s, '{steps}')", (t, ids[1])
        ).fetchall()
        assert rows and {r[0] for r in rows} == {"steps"}
        assert rows[0][2] == ids[0]
    with psycopg.connect(url("tenant_b"), autocommit=True) as conn:
        assert conn.execute(
            "select count(*) from ai.delta_channel_history(%s, '', null, '{steps}')", (t,)
        ).fetchone() == (0,)


GRAIN_CALLS = [
    ("record_usage", "select ai.record_usage(%(t)s, 'u1', 'm', 10, 20, 0.5)"),
    ("usage_summary", "select count(*) from ai.usage_summary(now() - interval '1 day', now() + interval '1 day')"),
    ("record_retrieval", 'select ai.record_retrieval(%(t)s, 1, \'[{"id": "d"}]\')'),
    ("get_turn_context", "select ai.get_turn_context(%(t)s, 1)"),
    ("record_eval_run", "select ai.record_eval_run(%(t)s, 'cand', true)"),
    ("get_eval_runs", "select count(*) from ai.get_eval_runs(%(t)s)"),
    ("get_eval_runs across threads", "select count(*) from ai.get_eval_runs()"),
    ("record_compaction", "select ai.record_compaction(%(t)s, 'sum', 1)"),
    ("context_window", "select ai.context_window(%(t)s, 1000)"),
    ("put_memory", "select ai.put_memory(%(ns)s, 'k', '{\"a\": 1}', index_texts => '{hello}')"),
    ("get_memory", "select count(*) from ai.get_memory(%(ns)s, 'k', refresh_ttl => true)"),
    ("search_memory", "select count(*) from ai.search_memory(%(ns)s, query => 'hello')"),
    ("list_memory_namespaces", "select count(*) from ai.list_memory_namespaces(%(ns)s)"),
    (
        "batch_memory",
        "select ai.batch_memory(jsonb_build_array("
        "jsonb_build_object('op', 'get', 'namespace', %(ns)s::text[], 'key', 'k')))",
    ),
    ("delete_memory", "select ai.delete_memory(%(ns)s, 'k')"),
]


def test_usage_retrievals_evals_compaction_and_memory_as_a_tenant() -> None:
    """Each per-thread grain (and the memory store, by owner) through the coordinator, as a tenant.

    In one transaction rolled back at the end, each call in a savepoint of its own: nothing stays
    behind for the pgTAP files make test-citus runs next, which count usage across the database."""
    t = thread("gr")
    args = {"t": t, "ns": [t]}
    failed = {}
    with connect("tenant_a") as conn, conn.transaction(force_rollback=True):
        conn.execute("select ai.create_session(%s)", (t,))
        for content in ("x", "y"):
            conn.execute("select ai.append_messages(%s, %s)", (t, Jsonb([{"role": "user", "content": content}])))
        for name, sql in GRAIN_CALLS:
            try:
                with conn.transaction():
                    conn.execute(sql, args).fetchall()
            except psycopg.Error as e:
                failed[name] = f"{e.sqlstate}: {e}".splitlines()[0]
    assert failed == {}


def test_a_memory_read_that_refreshes_the_ttl_extends_it_on_the_owners_shard() -> None:
    ns = [thread("mr")]
    with connect(CLOCK_TENANT) as conn, conn.transaction():
        conn.execute("select set_config('ai.frozen_now', %s, true)", (FROZEN.isoformat(),))
        conn.execute("select ai.put_memory(%s, 'k', '{}', ttl => interval '1 hour', index_texts => '{hello}')", (ns,))
        later = FROZEN.replace(minute=30)
        conn.execute("select set_config('ai.frozen_now', %s, true)", (later.isoformat(),))
        expiry = later.replace(hour=later.hour + 1)
        assert conn.execute("select expires_at from ai.get_memory(%s, 'k', refresh_ttl => true)", (ns,)).fetchall() == [
            (expiry,)
        ]
        latest = later.replace(minute=45)
        conn.execute("select set_config('ai.frozen_now', %s, true)", (latest.isoformat(),))
        found = conn.execute(
            "select key, expires_at from ai.search_memory(%s, query => 'hello', refresh_ttl => true)", (ns,)
        ).fetchall()
        assert found == [("k", latest.replace(hour=latest.hour + 1))]


def test_archive_and_restore_move_a_thread_across_the_shards() -> None:
    t = thread("ar")
    with psycopg.connect(url("tenant_a"), autocommit=True) as conn:
        _saved_thread(conn, t)
        conn.execute("select ai.append_messages(%s, %s)", (t, Jsonb([{"role": "user", "content": "x"}])))
        conn.execute("select ai.set_session_status(%s, 'completed')", (t,))
    with connect("app_service") as conn:
        moved: dict[str, object] = {}
        for _ in range(100):  # bounded: a batch moves the oldest first, tenant_a's earlier tests' too
            with conn.transaction():
                conn.execute("select ai.act_as('tenant_a')")
                batch = conn.execute(
                    "select thread_id, rows_moved from ai.archive_sessions(interval '0', 100)"
                ).fetchall()
            moved.update({str(r[0]): r[1] for r in batch})
            if t in moved or not batch:
                break
        assert moved.get(t) == {
            "checkpoints": 2,
            "checkpoint_blobs": 2,
            "checkpoint_writes": 1,
            "session_events": 2,
            "session_messages": 1,
        }
    with connect("tenant_a") as conn, pytest.raises(psycopg.Error) as exc:
        conn.execute("select ai.get_session(%s)", (t,))
    assert exc.value.sqlstate == "AS001"
    with connect("app_service") as conn, conn.transaction():
        conn.execute("select ai.act_as('tenant_a')")
        assert conn.execute("select status, last_seq from ai.restore_session(%s)", (t,)).fetchone() == ("completed", 1)
    with psycopg.connect(url("tenant_a"), autocommit=True) as conn:
        got = AgentStateSaver(conn).get_tuple({"configurable": {"thread_id": t, "checkpoint_ns": ""}})
        assert got is not None and got.checkpoint["channel_values"] == {"steps": ["one", "two"]}


def test_prune_keeps_the_newest_checkpoint_whole_on_the_threads_shard() -> None:
    kept, emptied, idle = thread("pr"), thread("pr"), thread("pr")
    with psycopg.connect(url("tenant_a"), autocommit=True) as conn:
        for t in (kept, emptied, idle):
            _saved_thread(conn, t)
        assert conn.execute("select ai.prune_checkpoints(%s)", ([kept],)).fetchone() == (1,)
        assert conn.execute("select ai.prune_checkpoints(%s, 'delete')", ([emptied],)).fetchone() == (2,)
        saver = AgentStateSaver(conn)
        listed = list(saver.list({"configurable": {"thread_id": kept}}))
        assert [c.checkpoint["channel_values"] for c in listed] == [{"steps": ["one", "two"]}]
        assert [w[1:] for w in listed[0].pending_writes or []] == [("steps", ["three"])]
        assert list(saver.list({"configurable": {"thread_id": emptied}})) == []
        # every idle thread of the tenant, batch after batch (bounded)
        after = None
        for _ in range(100):
            row = conn.execute(
                "select pruned, next_thread_id from ai.prune_idle_threads(interval '0', max_threads => 50,"
                " after_thread_id => %s)",
                (after,),
            ).fetchone()
            assert row is not None
            after = row[1]
            if after is None:
                break
        assert len(list(saver.list({"configurable": {"thread_id": idle}}))) == 1


def test_delete_for_runs_deletes_a_runs_checkpoints_on_every_shard() -> None:
    threads = [thread("dr") for _ in range(4)]  # across both workers
    with psycopg.connect(url("tenant_a"), autocommit=True) as conn:
        saver = AgentStateSaver(conn)
        run = f"run-{threads[0]}"
        for t in threads:
            config = {"configurable": {"thread_id": t, "checkpoint_ns": ""}}
            config = saver.put(config, empty_checkpoint(), {"run_id": "other"}, {})
            saver.put(config, empty_checkpoint(), {"run_id": run}, {})
        assert conn.execute("select ai.delete_for_runs(%s)", ([run],)).fetchone() == (4,)
        for t in threads:
            listed = list(saver.list({"configurable": {"thread_id": t}}))
            assert [c.metadata.get("run_id") for c in listed] == ["other"]
