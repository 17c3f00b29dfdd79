"""A worker stalled inside a fenced transaction that appended a message (a SIGSTOPped or
partitioned process) does not keep its thread from the next worker once its lease ends: appends
leave the session row alone, so the claim's thread lock (that row, FOR NO KEY UPDATE SKIP LOCKED)
is free, the reap or the claim takes the job back, and the stalled commit, when it comes, fails
with AS006 keeping nothing. (Before issue 20 every append updated the session row, and every
claim skipped the thread for as long as the stalled transaction stayed open.)

The stalled transaction's message insert is still in flight, so the new holder's own first append
to the thread waits for it to end (seq is gapless: the next number depends on whether that one
commits); docs/queue.md says so, and what ends it. Time is the frozen clock, per connection."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

pytestmark = pytest.mark.session_features("the frozen clock ai.frozen_now per connection")

T0 = "2031-06-01 00:00:00+00"
LATER = "2031-06-01 00:02:00+00"  # past the one-minute lease
OPTIONS = "-c lock_timeout=20s -c statement_timeout=20s"


def _connect(dsn: str, clock: str) -> psycopg.Connection[Any]:
    conn = psycopg.connect(dsn, autocommit=True, options=OPTIONS)
    conn.execute("select set_config('ai.frozen_now', %s, false)", (clock,))
    return conn


def test_a_stalled_fenced_transaction_that_appended_does_not_keep_its_thread_unclaimable(
    role_dsn: Callable[[str], str],
) -> None:
    queue = f"stall-{uuid.uuid4().hex[:8]}"
    thread_id = f"stall-{uuid.uuid4()}"
    with (
        _connect(role_dsn("tenant_a"), T0) as tenant,
        _connect(role_dsn("app_service"), T0) as stalled,
        _connect(role_dsn("app_service"), LATER) as other,
    ):
        tenant.execute("select ai.create_session(%s)", (thread_id,))
        job_id = tenant.execute("select (ai.enqueue_job(%s, queue => %s)).job_id", (thread_id, queue)).fetchone()[0]  # type: ignore[index]
        row = stalled.execute(
            "select job_id, fencing_token from ai.claim_job('a', '1 minute', %s)", (queue,)
        ).fetchone()
        assert row is not None and row[0] == job_id
        token = row[1]
        stalled.execute("begin")
        stalled.execute("select ai.fenced_write(%s, %s)", (job_id, token))
        stalled.execute(
            "select ai.append_message_idempotent(%s, 'assistant', '\"from the stalled worker\"')", (thread_id,)
        )
        try:
            # The lease ends (the other worker's clock is past it); a reap puts the job back.
            assert other.execute("select ai.reap_expired(%s)", (queue,)).fetchone() == (1,)
            claimed = other.execute(
                "select job_id, fencing_token from ai.claim_job('b', '1 minute', %s)", (queue,)
            ).fetchone()
            assert claimed is not None, "the thread is claimable again once the lease ended"
            assert claimed[0] == job_id and claimed[1] == token + 1
        finally:
            with pytest.raises(psycopg.Error) as caught:
                stalled.execute("commit")
        assert caught.value.sqlstate == "AS006", caught.value
        other.execute("begin")
        other.execute("select ai.fenced_write(%s, %s)", (job_id, token + 1))
        other.execute("select ai.append_message_idempotent(%s, 'assistant', '\"from the new holder\"')", (thread_id,))
        other.execute("commit")
        messages = tenant.execute("select seq, content from ai.get_messages(%s)", (thread_id,)).fetchall()
        assert messages == [(1, "from the new holder")], "the stalled worker's message was not kept"
