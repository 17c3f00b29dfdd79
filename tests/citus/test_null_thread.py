"""A NULL thread_id from a tenant's psql crashes nothing (issue 40: a tenant "sees and disturbs
only its own rows" on every node; docs/scaling.md, "A NULL thread_id").

Citus delegates a call of a distributed function, alone in its statement, to the worker that holds
the shard of its distribution argument, and hashes that argument while the statement is planned,
before the function runs: a NULL there crashed the coordinator's backend (Citus 13.2.2, SIGSEGV),
and the postmaster then reset every connection of every tenant. ai.distribute() therefore delegates
no function a tenant calls by its public name: each delegated write is an SQL wrapper that the
planner inlines, whose check of thread_id raises AS002 while the statement is planned, around a
strict entry that the planner folds to NULL on a NULL argument before Citus sees it
(ai._formation_delegate). These tests crashed the coordinator before it.
"""

from __future__ import annotations

import psycopg
import pytest
from formation import OWNER, PORT, WORKER_PORTS, connect, thread
from psycopg.types.json import Jsonb

CALLS: list[tuple[str, tuple[object, ...]]] = [
    ("select ai.put_checkpoint(%s, '', 'c1', null, 'json', %s)", (b"{}",)),
    ("select ai.put_writes(%s, '', 'c1', 't1', '{0}', '{ch}', '{json}', %s)", ([b"\x01"],)),
    ("select ai.append_message_idempotent(%s, 'user', %s)", (Jsonb("x"),)),
    ("select * from ai.begin_side_effect(%s, 'k')", ()),
    ("select ai.finish_side_effect(%s, 'k', '{}', null, 1)", ()),
    ("select * from ai.abandon_side_effect(%s, 'k', null, 1)", ()),
    ("select * from ai.append_messages(%s, %s)", (Jsonb([{"role": "user", "content": "x"}]),)),
]


def _started(port: int) -> object:
    with connect("postgres", port) as conn:
        row = conn.execute("select pg_postmaster_start_time()").fetchone()
    assert row is not None
    return row[0]


def _still_up(bystander: psycopg.Connection[tuple[object, ...]], started: dict[int, object]) -> None:
    """No node restarted, and a connection made before the calls still answers."""
    assert bystander.execute("select 1").fetchone() == (1,)
    assert {port: _started(port) for port in started} == started


@pytest.fixture
def bystander() -> object:
    with connect("tenant_b") as conn:
        yield conn


@pytest.mark.parametrize(("call", "rest"), CALLS, ids=[c.split("ai.")[1].split("(")[0] for c, _ in CALLS])
@pytest.mark.parametrize("port", [PORT, WORKER_PORTS[0]], ids=["coordinator", "worker"])
def test_a_null_thread_id_is_refused_with_as002_and_no_node_restarts(
    call: str, rest: tuple[object, ...], port: int, bystander: psycopg.Connection[tuple[object, ...]]
) -> None:
    started = {p: _started(p) for p in [PORT, *WORKER_PORTS]}
    with connect("tenant_a", port) as conn:
        with pytest.raises(psycopg.Error) as exc:
            conn.execute(call, (None, *rest))
        assert exc.value.sqlstate == "AS002" and "thread_id must not be NULL" in str(exc.value), exc.value
        # a prepared statement planned for its values: the NULL is a value from the sixth on too
        for _ in range(7):
            with pytest.raises(psycopg.Error) as exc:
                conn.execute(call, (None, *rest), prepare=True)
            assert exc.value.sqlstate == "AS002", exc.value
    _still_up(bystander, started)


def test_an_entry_called_by_its_name_with_a_null_does_nothing(
    bystander: psycopg.Connection[tuple[object, ...]],
) -> None:
    """The entries Citus delegates are strict: a NULL argument is folded to NULL while the call is
    planned, so Citus never hashes it, and nothing runs."""
    started = {p: _started(p) for p in [PORT, *WORKER_PORTS]}
    t = thread("null")
    with connect("tenant_a") as conn:
        conn.execute("select ai.create_session(%s)", (t,))
        for call, args in (
            (
                "select ai._delegated_put_writes(%s, row('', 'c1', 't1', '{0}', '{ch}', '{json}',"
                " array['\\x01'::bytea], null, null, null)::ai._delegated_put_writes_args)",
                (None,),
            ),
            ("select ai._delegated_begin_side_effect(%s, null)", (None,)),
            ("select ai._delegated_begin_side_effect(%s, null)", (t,)),
            ("select * from ai._delegated_abandon_side_effect(%s, null)", (t,)),
        ):
            row = conn.execute(call, args).fetchone()
            assert row is not None and all(v is None for v in row), (call, args, row)
        with pytest.raises(psycopg.Error) as exc:
            conn.execute("select * from ai.get_side_effect(%s, 'k')", (t,))
        assert exc.value.sqlstate == "AS001", exc.value  # nothing reserved
    _still_up(bystander, started)


def test_every_function_citus_delegates_is_strict_and_returns_one_value() -> None:
    """The invariant that keeps a NULL from Citus' hash: the planner folds a call of a strict,
    not set-returning function with a NULL argument to NULL; no other function is delegated."""
    with connect("postgres") as conn:
        rows = conn.execute(
            "select p.oid::regprocedure::text, p.proisstrict, p.proretset"
            " from pg_dist_object o join pg_proc p on o.classid = 'pg_proc'::regclass and o.objid = p.oid"
            " where o.distribution_argument_index is not null order by 1"
        ).fetchall()
    assert rows, "nothing delegated"
    assert [r for r in rows if not r[1] or r[2]] == [], rows


SHAPES = [
    "select ai.append_message_idempotent((select null::text), 'user', '\"x\"')",
    "with x as (select null::text as t) select ai.append_message_idempotent(x.t, 'user', '\"x\"') from x",
    "select ai.append_message_idempotent(nullif(current_setting('application_name'),"
    " current_setting('application_name')), 'user', '\"x\"')",
    "select ai.append_message_idempotent(coalesce(null, null::text), 'user', '\"x\"')",
    "select ai.append_message_idempotent(thread_id => null, role => 'user', content => '\"x\"')",
    "select (ai.begin_side_effect(null::varchar, 'k')).outcome",
]


@pytest.mark.parametrize("call", SHAPES, ids=["subquery", "cte", "stable", "folded", "named", "varchar"])
def test_a_null_thread_id_in_any_shape_of_statement_is_as002(
    call: str, bystander: psycopg.Connection[tuple[object, ...]]
) -> None:
    """A NULL that is not a value while the statement is planned (a subquery, a CTE's column, a
    stable expression) is not delegated: the check raises when the call runs."""
    started = {p: _started(p) for p in [PORT, *WORKER_PORTS]}
    with connect("tenant_a") as conn:
        with pytest.raises(psycopg.Error) as exc:
            conn.execute(call)
        assert exc.value.sqlstate == "AS002" and "thread_id must not be NULL" in str(exc.value), exc.value
    _still_up(bystander, started)


def test_an_entry_called_by_its_name_for_another_tenants_thread_is_refused() -> None:
    """The entry runs the body as the caller would: another tenant's thread is unknown (AS001)."""
    theirs = thread("theirs")
    with connect("tenant_b") as conn:
        conn.execute("select ai.create_session(%s)", (theirs,))
    with connect("tenant_a") as conn:
        for call in (
            "select ai._delegated_append_message_idempotent(%s, row('user', '\"x\"', null, null, null, null, null)"
            "::ai._delegated_append_message_idempotent_args)",
            "select ai._delegated_begin_side_effect(%s, row('k', '{}', null, null, '5 minutes')"
            "::ai._delegated_begin_side_effect_args)",
        ):
            with pytest.raises(psycopg.Error) as exc:
                conn.execute(call, (theirs,))
            assert exc.value.sqlstate == "AS001", (call, exc.value)
    with connect("tenant_b") as conn:
        assert conn.execute("select count(*) from ai.get_messages(%s)", (theirs,)).fetchone() == (0,)


def test_a_formation_delegated_by_an_older_distribute_is_made_safe_by_the_next_run(
    bystander: psycopg.Connection[tuple[object, ...]],
) -> None:
    """Before the wrappers, ai.distribute() delegated each write by its public name, and
    append_messages too: the next run wraps the one and stops delegating the other."""
    put_writes = "ai.put_writes(text,text,text,text,integer[],text[],text[],bytea[],text,bigint,bigint)"
    body = "ai._delegated_put_writes_body(text,text,text,text,integer[],text[],text[],bytea[],text,bigint,bigint)"
    with connect(OWNER) as owner:
        owner.execute("set client_min_messages = warning")
        row = owner.execute("select pg_get_functiondef(%s::regprocedure)", (body,)).fetchone()
        assert row is not None
        # the formation as the older ai.distribute() left it
        owner.execute(str(row[0]).replace("FUNCTION ai._delegated_put_writes_body(", "FUNCTION ai.put_writes("))
        for fn in (put_writes, "ai.append_messages(text,jsonb)"):
            owner.execute(
                "select create_distributed_function(%s, 'thread_id', colocate_with => 'ai.agent_sessions')", (fn,)
            )
        done = owner.execute("select ai.distribute()").fetchone()
    assert done is not None
    lines = str(done[0]).splitlines()
    assert f"{put_writes}: delegated to the worker that holds the thread (ai._delegated_put_writes)" in lines, lines
    assert "ai.append_messages(text,jsonb): not delegated" in lines, lines
    test_every_function_citus_delegates_is_strict_and_returns_one_value()
    started = {p: _started(p) for p in [PORT, *WORKER_PORTS]}
    with connect("tenant_a") as conn, pytest.raises(psycopg.Error) as exc:
        conn.execute(CALLS[1][0], (None, *CALLS[1][1]))
    assert exc.value.sqlstate == "AS002", exc.value
    _still_up(bystander, started)
