"""No tenant can stop archiving for the others, nor block a restore (issue 37, item 2).

The issue's sequence, with two tenants and the operator: an archived thread id stays reserved, so
re-creating it is refused (AS005) and every sweep goes on; a duplicate made before ids were
reserved (set up here as the superuser) is skipped, listed and left hot while the other tenants'
sessions move, by ai.archive_sessions and by ai.archive_all_sessions alike."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from waiting import waits_on_a_lock

from agent_state import Client
from agent_state.errors import Conflict, NotFound


def _finished(client: Client, thread_id: str) -> None:
    client.create_session(thread_id)
    client.append_message(thread_id, "user", {"text": thread_id})
    client.set_session_status(thread_id, "completed")


def test_a_tenant_re_creating_its_archived_thread_stops_no_sweep(
    role_dsn: Callable[[str], str], conn: psycopg.Connection[Any]
) -> None:
    t = f"arch-t-{uuid.uuid4().hex[:8]}"
    other = f"arch-b-{uuid.uuid4().hex[:8]}"
    with (
        psycopg.connect(role_dsn("tenant_a"), autocommit=True) as ca,
        psycopg.connect(role_dsn("tenant_b"), autocommit=True) as cb,
        psycopg.connect(role_dsn("app_service"), autocommit=True) as cs,
    ):
        a, b, operator = Client(ca), Client(cb), Client(cs)
        # Tenant A creates thread T and completes it; the operator archives it.
        _finished(a, t)
        assert t in {s.thread_id for s in operator.archive_sessions(timedelta(0), 1000)}
        # A creates T again: refused, the id is the archived session's until it is restored.
        with pytest.raises(Conflict, match="archived"):
            a.create_session(t)
        # Nothing is stuck: tenant B's finished session is archived by the next sweep, and by the
        # procedure the docs schedule.
        _finished(b, other)
        assert other in {s.thread_id for s in operator.archive_sessions(timedelta(0), 1000)}
        _finished(b, other + "-2")
        cs.execute("call ai.archive_all_sessions('0 seconds', 1000)")
        archived = "select count(*) from ai_archive.agent_sessions where thread_id = %s"
        assert conn.execute(archived, (other + "-2",)).fetchone() == (1,)
        # and the operator's restore of T goes through; T is A's again, and free once more.
        assert operator.restore_session(t).owner == "tenant_a"
        assert a.get_session(t).status == "completed"


def test_another_tenant_cannot_take_an_archived_id_so_the_restore_goes_through(
    role_dsn: Callable[[str], str], conn: psycopg.Connection[Any]
) -> None:
    t = f"arch-x-{uuid.uuid4().hex[:8]}"
    with (
        psycopg.connect(role_dsn("tenant_a"), autocommit=True) as ca,
        psycopg.connect(role_dsn("tenant_b"), autocommit=True) as cb,
        psycopg.connect(role_dsn("app_service"), autocommit=True) as cs,
    ):
        a, b, operator = Client(ca), Client(cb), Client(cs)
        _finished(a, t)
        operator.archive_sessions(timedelta(0), 1000)
        with pytest.raises(Conflict, match="not available"):
            b.create_session(t)  # told only that the id is taken, as for a hot id of A's
        with pytest.raises(NotFound):
            b.put_checkpoint(t, "", None, None, "json", b"{}")  # LangGraph's first write to a thread
        assert operator.restore_session(t).thread_id == t
        owner = conn.execute("select owner from ai.agent_sessions where thread_id = %s", (t,)).fetchone()
        assert owner == ("tenant_a",)


def test_a_duplicate_made_before_ids_were_reserved_is_skipped_listed_and_the_rest_archived(
    role_dsn: Callable[[str], str], conn: psycopg.Connection[Any]
) -> None:
    t = f"arch-d-{uuid.uuid4().hex[:8]}"
    other = f"arch-o-{uuid.uuid4().hex[:8]}"
    with (
        psycopg.connect(role_dsn("tenant_a"), autocommit=True) as ca,
        psycopg.connect(role_dsn("tenant_b"), autocommit=True) as cb,
        psycopg.connect(role_dsn("app_service"), autocommit=True) as cs,
    ):
        a, b, operator = Client(ca), Client(cb), Client(cs)
        _finished(a, t)
        operator.archive_sessions(timedelta(0), 1000)
        # What 0.1.0 allowed: T re-created by A and completed while the first T is archived.
        conn.execute("delete from ai_archive.archived_thread_ids where thread_id = %s", (t,))
        _finished(a, t)
        conn.execute("insert into ai_archive.archived_thread_ids values (%s)", (t,))
        _finished(b, other)

        notices: list[str] = []
        cs.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        moved = {s.thread_id for s in operator.archive_sessions(timedelta(0), 1000)}
        assert other in moved and t not in moved, "the other tenant's session moves, the duplicate stays"
        assert any(t in n for n in notices), "the sweep warns about the session it left hot"
        listed = "select owner, sqlstate, constraint_name from ai.archive_skips() where thread_id = %s"
        skip = cs.execute(listed, (t,)).fetchone()
        assert skip == ("tenant_a", "23505", "agent_sessions_pkey")
        cs.execute("call ai.archive_all_sessions('0 seconds', 1)")  # batches of one end, the duplicate last
        # the command line says so too
        cli = subprocess.run(
            [str(Path(sys.executable).with_name("agent-state")), "archive", "--older-than", "0s", "--quiet"],
            capture_output=True, text=True, timeout=60, check=False,
            env={**os.environ, "DATABASE_URL": role_dsn("app_service")},
        )  # fmt: skip
        assert cli.returncode == 0, cli.stderr
        assert "could not be moved and stay hot: select * from ai.archive_skips()" in cli.stdout
        assert conn.execute("select count(*) from ai.agent_sessions where thread_id = %s", (t,)).fetchone() == (1,)
        # The archived T is still A's to restore once the hot duplicate is gone.
        assert a.delete_thread(t)
        assert operator.restore_session(t).owner == "tenant_a"
        # and the skip is no longer listed: its hot duplicate is gone (no sweep reports it again)
        assert cs.execute(listed, (t,)).fetchone() is None


@pytest.mark.session_features("waits on the racing backend's pid in pg_stat_activity")
def test_a_create_racing_the_archive_of_its_id_is_refused_once_the_archive_commits(
    role_dsn: Callable[[str], str], conn: psycopg.Connection[Any]
) -> None:
    t = f"arch-r-{uuid.uuid4().hex[:8]}"
    with (
        psycopg.connect(role_dsn("tenant_a"), autocommit=True) as ca,
        psycopg.connect(role_dsn("tenant_b"), autocommit=True) as cb,
        psycopg.connect(role_dsn("app_service")) as cs,
    ):
        _finished(Client(ca), t)
        # The sweep holds T's hot row (archived, deleted, not committed yet) ...
        archived = cs.execute("select thread_id from ai.archive_sessions('0 seconds', 1000)").fetchall()
        assert (t,) in archived
        pid = cb.info.backend_pid
        outcome: list[BaseException | None] = []

        def create() -> None:
            try:
                Client(cb).create_session(t)
                outcome.append(None)
            except BaseException as error:
                outcome.append(error)

        racer = threading.Thread(target=create, daemon=True)
        racer.start()
        # ... while tenant B's create of T waits on that row (a lock wait, seen in pg_stat_activity)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if waits_on_a_lock(conn, pid):
                break
            time.sleep(0.02)
        else:
            pytest.fail("the racing create never waited on the archived row")
        cs.commit()
        racer.join(20)
        assert len(outcome) == 1 and isinstance(outcome[0], Conflict), outcome
        hot = conn.execute("select count(*) from ai.agent_sessions where thread_id = %s", (t,)).fetchone()
        assert hot == (0,), "the create left no hot session beside the archived one"
