"""Archiving under failure: a backend killed in the middle of a batch loses and duplicates
nothing; then the archive and a restore keep every row."""

from __future__ import annotations

import threading
import time
import uuid
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from waiting import waits_on_a_lock

from agent_state import Client


def _counts(conn: psycopg.Connection[Any], prefix: str) -> dict[str, tuple[int, int]]:
    """Per thread: (hot rows, archived rows) over sessions, messages and events."""
    rows = conn.execute(
        """
        select t, sum(hot)::int, sum(arch)::int from (
          select thread_id t, 1 hot, 0 arch from ai.agent_sessions where thread_id like %(p)s
          union all select thread_id, 1, 0 from ai.session_messages where thread_id like %(p)s
          union all select thread_id, 1, 0 from ai.session_events where thread_id like %(p)s
          union all select thread_id, 0, 1 from ai_archive.agent_sessions where thread_id like %(p)s
          union all select thread_id, 0, 1 from ai_archive.session_messages where thread_id like %(p)s
          union all select thread_id, 0, 1 from ai_archive.session_events where thread_id like %(p)s
        ) x group by t
        """,
        {"p": prefix + "%"},
    ).fetchall()
    return {t: (hot, arch) for t, hot, arch in rows}


@pytest.mark.session_features("kills the backend of one connection by its pid")
def test_a_backend_killed_mid_batch_loses_and_duplicates_nothing(dsn: str, conn: psycopg.Connection[Any]) -> None:
    prefix = f"arch-{uuid.uuid4().hex[:8]}-"
    client = Client(conn)
    threads = [f"{prefix}{i}" for i in range(20)]
    for t in threads:
        client.create_session(t)
    conn.execute(
        "select ai.append_message_idempotent(t, 'user', to_jsonb(i))"
        " from unnest(%s::text[]) t, generate_series(1, 25) i",
        (threads,),
    )
    for t in threads:
        client.set_session_status(t, "completed")
    before = _counts(conn, prefix)
    assert all(hot == 28 and arch == 0 for hot, arch in before.values())  # session + 25 messages + 2 events

    # Hold the archive's events table so the batch stops half-way (sessions and messages copied),
    # then kill the backend running it.
    blocker = psycopg.connect(dsn)
    blocker.execute("lock table ai_archive.session_events in share mode")
    victim = psycopg.connect(dsn, autocommit=True)
    pid = victim.info.backend_pid
    outcome: list[BaseException | None] = []

    def archive() -> None:
        try:
            victim.execute("select * from ai.archive_sessions('0 seconds', 1000)")
            outcome.append(None)
        except BaseException as error:  # the connection dies under it
            outcome.append(error)

    worker = threading.Thread(target=archive, daemon=True)
    worker.start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if waits_on_a_lock(conn, pid):
            break
        time.sleep(0.05)
    else:
        pytest.fail("the archive batch never reached the blocked table")
    copied_so_far = conn.execute(
        "select count(*) from ai_archive.session_messages where thread_id like %s", (prefix + "%",)
    ).fetchone()
    assert copied_so_far == (0,), "uncommitted copies must be invisible"
    assert conn.execute("select pg_terminate_backend(%s::int)", (pid,)).fetchone() == (True,)
    worker.join(timeout=20)
    blocker.rollback()
    blocker.close()
    victim.close()
    assert outcome and isinstance(outcome[0], psycopg.OperationalError)

    # Nothing moved, nothing lost, nothing doubled.
    assert _counts(conn, prefix) == before

    # A clean run moves every session whole; restore brings one back whole.
    moved = []
    while batch := client.archive_sessions(timedelta(0), 7):
        moved += [m.thread_id for m in batch if m.thread_id.startswith(prefix)]
    assert sorted(moved) == sorted(threads)
    assert _counts(conn, prefix) == {t: (0, 28) for t in threads}
    assert client.restore_session(threads[0]).status == "completed"
    assert _counts(conn, prefix)[threads[0]] == (28, 0)
    assert [m.seq for m in client.get_messages(threads[0])] == list(range(1, 26))


def test_archive_all_sessions_commits_batch_after_batch(dsn: str, conn: psycopg.Connection[Any]) -> None:
    prefix = f"all-{uuid.uuid4().hex[:8]}-"
    client = Client(conn)
    threads = [f"{prefix}{i}" for i in range(5)]
    for t in threads:
        client.create_session(t)
        client.append_message(t, "user", "bye")
        client.set_session_status(t, "cancelled")
    # A procedure that commits: called outside any transaction block, in batches of two.
    with psycopg.connect(dsn, autocommit=True) as caller:
        caller.execute("call ai.archive_all_sessions('0 seconds', 2)")
    assert _counts(conn, prefix) == {t: (0, 4) for t in threads}  # session, message, 2 events
    with pytest.raises(psycopg.errors.InvalidTransactionTermination), psycopg.connect(dsn) as in_transaction:
        in_transaction.execute("select 1")  # opens a transaction block
        in_transaction.execute("call ai.archive_all_sessions('0 seconds', 2)")


def test_a_session_being_written_is_skipped_not_waited_for(dsn: str, conn: psycopg.Connection[Any]) -> None:
    prefix = f"busy-{uuid.uuid4().hex[:8]}-"
    client = Client(conn)
    busy, idle = f"{prefix}busy", f"{prefix}idle"
    for t in (busy, idle):
        client.create_session(t)
        client.set_session_status(t, "completed")
    # A writer holds the busy session (a late event or checkpoint in flight takes this lock too).
    with psycopg.connect(dsn) as writer:
        writer.execute("select from ai.agent_sessions where thread_id = %s for key share", (busy,))
        conn.execute("set lock_timeout = '5s'")  # a wait would fail the test instead of hanging it
        try:
            moved = {m.thread_id for m in client.archive_sessions(timedelta(0), 10000)}
        finally:
            conn.execute("reset lock_timeout")
        assert idle in moved and busy not in moved
        writer.rollback()
    moved_later = {m.thread_id for m in client.archive_sessions(timedelta(0), 10000)}
    assert busy in moved_later, "picked up on the next call, once the writer is done"
