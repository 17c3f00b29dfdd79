"""A step's messages racing another append of the thread (issue 34 item 8): ai.put_checkpoint
inserts a step's new messages in one statement, numbered after the thread's newest message; an
append of the same thread in an open transaction has taken that number, so the step's insert
waits for it (the unique key of seq), and once it commits, the step appends through
ai.append_messages instead, after it: every message is kept, seqs gapless, the step's in order.
The race is made deterministic: the step starts once the append is in, the test waits (bounded)
until the step waits on a lock, then commits the append.
"""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb
from waiting import waits_on_a_lock

pytestmark = pytest.mark.session_features("waits on the step's backend pid in pg_stat_activity")

WAIT_SECONDS = 10.0


def test_a_step_racing_an_append_of_its_thread_appends_after_it_and_loses_nothing(role_dsn: Any, dsn: str) -> None:
    tenant = role_dsn("tenant_a")
    thread = f"step-race-{uuid.uuid4()}"
    messages = [
        {"role": "assistant", "content": {"content": "first"}, "idempotency_key": f"{thread}-1"},
        {"role": "assistant", "content": {"content": "second"}, "idempotency_key": f"{thread}-2"},
    ]
    with (
        psycopg.connect(tenant, autocommit=True) as step,
        psycopg.connect(tenant) as other,
        psycopg.connect(dsn, autocommit=True) as observer,
    ):
        step.execute("select ai.create_session(%s)", (thread,))
        # each call of the step's connection in a transaction block of its own: on a Citus formation
        # a test role may freeze the clock, and its autocommit call alone, delegated to the thread's
        # worker, would be refused there (AS072, docs/scaling.md); one server runs it the same way
        with step.transaction():
            step.execute("select ai.append_message_idempotent(%s, 'user', '\"hi\"')", (thread,))
        other.execute("select ai.append_message_idempotent(%s, 'user', '\"in between\"')", (thread,))  # open
        pid = step.execute("select pg_backend_pid()").fetchone()[0]  # type: ignore[index]
        failed: list[BaseException] = []
        done = threading.Event()

        def put() -> None:
            try:
                with step.transaction():
                    step.execute(
                        "select ai.put_checkpoint(%s, '', 'c1', null, 'test', '\\x01', '{}', '{}', messages => %s)",
                        (thread, Jsonb(messages)),
                    )
            except BaseException as e:
                failed.append(e)
            finally:
                done.set()

        runner = threading.Thread(target=put)
        runner.start()
        waited = False
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline and not done.is_set():
            if waits_on_a_lock(observer, pid):
                waited = True
                break
            time.sleep(0.01)
        other.commit()
        runner.join(WAIT_SECONDS)
        assert not runner.is_alive()
        assert not failed, failed
        assert waited, "the step did not wait for the append in flight"
        rows = step.execute("select seq, content from ai.get_messages(%s) order by seq", (thread,)).fetchall()
    assert [r[0] for r in rows] == [1, 2, 3, 4]
    assert [r[1] for r in rows] == ["hi", "in between", {"content": "first"}, {"content": "second"}]
