"""ai.distribute() on the formation (docs/scaling.md, "What ai.distribute() does")."""

from __future__ import annotations

import psycopg
import pytest
from formation import OWNER, connect, layout
from formation import thread as thread_id


def test_a_second_run_has_nothing_to_do() -> None:
    with connect(OWNER) as conn:
        row = conn.execute("select ai.distribute()").fetchone()
    assert row == ("distributed already: nothing to do",)


def test_the_tables_are_where_the_layout_puts_them() -> None:
    with connect("postgres") as conn:
        kinds = layout(conn)
        groups = dict(
            conn.execute("select logicalrelid::regclass::text, colocationid from pg_dist_partition").fetchall()
        )
    assert kinds["ai.agent_sessions"] == "by thread_id"
    per_thread = ("ai.checkpoints", "ai.checkpoint_blobs", "ai.session_messages", "ai.side_effects")
    for table in per_thread:
        assert kinds[table] == "by thread_id", table
        assert groups[table] == groups["ai.agent_sessions"], f"{table} is co-located with ai.agent_sessions"
    for table in ("ai.memory_items", "ai.memory_vectors", "ai_archive.memory_items"):
        assert kinds[table] == "by owner", table
        assert groups[table] == groups["ai.memory_items"]
    for table in ("ai.error_codes", "ai._archived_tables", "ai.formation_secret"):
        assert kinds[table] == "reference", table
    for table in ("ai.agent_jobs", "ai.agent_jobs_archive", "ai.job_fences", "ai.queue_workers"):
        assert table not in kinds, f"{table} stays a plain table of the coordinator"


def test_a_function_deployed_later_refuses_on_the_shards_until_distribute_runs_again() -> None:
    """A deploy after ai.distribute() replaces functions without the step that carries the identity:
    one that reaches a shard through its policies only (a router query here) fails closed (AS070),
    and works again once ai.distribute() has run."""
    thread = thread_id("late")
    with connect(OWNER) as owner, connect("tenant_a") as tenant:
        tenant.execute("select ai.create_session(%s)", (thread,))
        owner.execute(
            "create function ai.zz_session_owner(a_thread_id text) returns text language plpgsql stable"
            " security definer set search_path = pg_catalog, pg_temp as $$ declare v text; begin"
            " select s.owner into v from ai.agent_sessions s where s.thread_id = a_thread_id; return v; end $$"
        )
        try:
            owner.execute("grant execute on function ai.zz_session_owner(text) to ai_user")
            with pytest.raises(psycopg.Error) as exc:
                tenant.execute("select ai.zz_session_owner(%s)", (thread,))
            assert exc.value.sqlstate == "AS070"
            done = owner.execute("select ai.distribute()").fetchone()
            assert done == ("1 functions carry the caller's identity",)
            assert tenant.execute("select ai.zz_session_owner(%s)", (thread,)).fetchone() == ("tenant_a",)
            with connect("tenant_b") as other:
                assert other.execute("select ai.zz_session_owner(%s)", (thread,)).fetchone() == (None,)
        finally:
            owner.execute("drop function ai.zz_session_owner(text)")
