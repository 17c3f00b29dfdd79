"""Concurrent first writes of a new thread by the same owner: each returns the one session row.

The failure (23505 on agent_sessions_thread_owner when ON CONFLICT named only the primary key)
needs both inserts past their conflict check before either inserts its index entry, a window of
microseconds that no lock can hold open. So each pair of calls races on fresh thread ids, in
rounds of two kinds: released together by a barrier, and released together by the rollback of
a third transaction whose uncommitted row of the same thread both wait for (seen in
pg_stat_activity). Bounded: a fixed number of rounds, each call under a statement timeout.
Before the fix this failed within the first rounds on every pair (several per hundred rounds).
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

import psycopg
import pytest
from waiting import wait_until, waits_on_a_lock

# In the pooled run these tests connect to the server itself (see the marker's reason).
pytestmark = pytest.mark.session_features("lock waits watched by backend pid in pg_stat_activity")

CALLS = {
    "create_session": "select ai.create_session(%(t)s)",
    "put_checkpoint": "select ai.put_checkpoint(%(t)s, '', %(c)s, null, 'test', '\\x01'::bytea)",
    "put_writes": (
        "select ai.put_writes(%(t)s, '', 'c0', %(c)s, array[0], array['a'], array['t'], array['\\x01']::bytea[])"
    ),
}
ROUNDS = 400


def _wait_until_blocked(admin: psycopg.Connection[Any], pids: list[int]) -> None:
    """Until every backend in pids waits for a lock (the third transaction's row)."""

    def blocked() -> bool:
        return all(waits_on_a_lock(admin, pid) for pid in pids)

    wait_until(blocked, "the racing writes to wait for the uncommitted row", interval=0.002)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("create_session", "create_session"),
        ("put_checkpoint", "put_writes"),  # LangGraph's background put racing its put_writes
        ("put_writes", "put_writes"),
        ("create_session", "put_checkpoint"),
    ],
)
def test_concurrent_first_writes_of_a_new_thread_both_succeed(
    role_dsn: Any, conn: psycopg.Connection[Any], first: str, second: str
) -> None:
    dsn = role_dsn("tenant_a")
    with (
        psycopg.connect(dsn) as holder,
        psycopg.connect(dsn, autocommit=True) as one,
        psycopg.connect(dsn, autocommit=True) as two,
    ):
        for c in (one, two):
            c.execute("set statement_timeout = '20s'")
        threads: list[str] = []
        for round_ in range(ROUNDS):
            thread_id = f"race-{uuid.uuid4()}"
            threads.append(thread_id)
            barrier = threading.Barrier(2, timeout=20)
            held = round_ % 2 == 1
            if held:
                holder.execute("select ai.create_session(%s)", (thread_id,))
            failures: list[str] = []

            def call(
                c: psycopg.Connection[Any],
                name: str,
                key: str,
                tid: str = thread_id,
                gate: threading.Barrier | None = None if held else barrier,
                out: list[str] = failures,
            ) -> None:
                try:
                    if gate is not None:
                        gate.wait()
                    c.execute(CALLS[name], {"t": tid, "c": key})
                except psycopg.Error as error:
                    out.append(f"{name}: {error.sqlstate} {error}")

            runners = [
                threading.Thread(target=call, args=(one, first, "c1")),
                threading.Thread(target=call, args=(two, second, "c2")),
            ]
            for r in runners:
                r.start()
            if held:
                try:
                    _wait_until_blocked(conn, [one.info.backend_pid, two.info.backend_pid])
                finally:
                    holder.rollback()
            for r in runners:
                r.join(30)
            assert not any(r.is_alive() for r in runners)
            assert failures == [], f"round {round_} ({'released by a rollback' if held else 'barrier'})"

    # As the owner of the schema: one session of tenant_a and one start event per thread.
    # (the two counts side by side, not one a subquery of the other's select list: Citus cannot
    # push that down across the shards)
    rows = conn.execute(
        "select s.sessions, s.tenant_a, e.starts"
        " from (select count(*) as sessions, count(*) filter (where owner = 'tenant_a') as tenant_a"
        "       from ai.agent_sessions where thread_id = any(%s)) s,"
        " (select count(*) as starts from ai.session_events e where e.thread_id = any(%s) and e.kind = 'start') e",
        (threads, threads),
    ).fetchone()
    assert rows == (ROUNDS, ROUNDS, ROUNDS)


def test_restoring_a_thread_while_its_id_is_being_created_raises_as041_not_23505(
    dsn: str, conn: psycopg.Connection[Any], thread_id: str
) -> None:
    from datetime import timedelta

    from agent_state import Client
    from agent_state.errors import AgentStateError

    client = Client(conn)
    client.create_session(thread_id)
    client.set_session_status(thread_id, "completed")
    assert thread_id in {m.thread_id for m in client.archive_sessions(timedelta(0), 10000)}
    # An archived id stays reserved (create_session answers AS005), so a hot session of that id is
    # a row that 0.1.0 let a create make: written here as the table's owner, not committed.
    with psycopg.connect(dsn) as creator, psycopg.connect(dsn, autocommit=True) as restorer:
        restorer.execute("set statement_timeout = '20s'")
        creator.execute("insert into ai.agent_sessions (thread_id, owner) values (%s, 'tenant_a')", (thread_id,))
        outcome: list[Any] = []

        def restore() -> None:
            try:
                outcome.append(Client(restorer).restore_session(thread_id))
            except (psycopg.Error, AgentStateError) as error:
                outcome.append(error)

        runner = threading.Thread(target=restore)
        runner.start()
        try:
            _wait_until_blocked(conn, [restorer.info.backend_pid])
        finally:
            creator.commit()
            runner.join(30)
        assert not runner.is_alive()
    assert len(outcome) == 1 and getattr(outcome[0], "sqlstate", None) == "AS041", repr(outcome)
    archived = conn.execute("select count(*) from ai_archive.agent_sessions where thread_id = %s", (thread_id,))
    assert archived.fetchone() == (1,), "the archived copy stays where it was"
