"""The frozen test clock under delegation (issue 40: "act_as and the test clock reach the shards,
or the call is refused"; docs/scaling.md, "The test clock under delegation").

A delegated call (put_checkpoint, put_writes, the idempotent append, the side-effect ledger, alone in an
autocommit statement) runs whole on the worker that holds its thread and reads ai.now() there,
where a session-level ``SET ai.frozen_now`` made on the coordinator never arrives (Citus sends a
SET LOCAL of a transaction block only, and a call in a transaction block is not delegated).
Nothing on the worker can tell whether the coordinator's session froze the clock, so a delegated
call by a role that may freeze it (a member of ai_test_clock, a superuser included, where that
role exists) is refused there with AS072. In a transaction block the call runs through the
coordinator, which reads the clock and sends its values; the client sends a refused call again in
a form Citus does not delegate, to the same effect. A role that may not freeze the clock (every
role of a production cluster) is never refused.
"""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
import pytest
from formation import CLOCK_SERVICE, CLOCK_TENANT, connect, thread, url, worker_of
from langgraph.checkpoint.base import empty_checkpoint
from psycopg.types.json import Jsonb

from agent_state import Client
from agent_state.langgraph_saver import AgentStateSaver

FROZEN = datetime(2002, 3, 4, 5, 6, 7, tzinfo=UTC)


def message(content: str = "x") -> Jsonb:
    return Jsonb(content)


def _message_times(t: str) -> list[datetime]:
    """The created_at of the thread's messages, in order (as the superuser, from the shard)."""
    with connect("postgres") as conn:
        rows = conn.execute(
            "select created_at from ai.session_messages where thread_id = %s order by seq", (t,)
        ).fetchall()
    return [row[0] for row in rows]  # type: ignore[misc]


def _session(user: str, t: str) -> None:
    with connect(user) as conn:
        conn.execute("select ai.create_session(%s)", (t,))


def test_a_session_level_freeze_then_a_delegated_call_is_refused_not_run_on_the_wall_clock() -> None:
    """The silent case: before, the append ran on the worker with its wall clock."""
    t = thread("clk")
    _session(CLOCK_TENANT, t)
    with connect(CLOCK_TENANT) as conn:
        conn.execute("select set_config('ai.frozen_now', %s, false)", (FROZEN.isoformat(),))
        with pytest.raises(psycopg.Error) as refused:
            conn.execute("select ai.append_message_idempotent(%s, 'user', %s)", (t, message()))
        assert refused.value.sqlstate == "AS072", refused.value
        assert "transaction block" in str(refused.value)
    assert _message_times(t) == []


def test_a_delegated_call_of_a_role_that_may_freeze_the_clock_is_refused_even_unfrozen() -> None:
    """The worker cannot tell a frozen clock on the coordinator from none: the role decides."""
    t = thread("clk")
    _session(CLOCK_SERVICE, t)
    for user in (CLOCK_SERVICE, "postgres"):
        with connect(user) as conn, pytest.raises(psycopg.Error) as refused:
            conn.execute("select ai.append_message_idempotent(%s, 'user', %s)", (t, message()))
        assert refused.value.sqlstate == "AS072", (user, refused.value)
    assert _message_times(t) == []


def test_the_same_call_in_a_transaction_block_gets_the_frozen_time_on_the_shard() -> None:
    t = thread("clk")
    _session(CLOCK_TENANT, t)
    with connect(CLOCK_TENANT) as conn:
        conn.execute("select set_config('ai.frozen_now', %s, false)", (FROZEN.isoformat(),))
        with conn.transaction():
            conn.execute("select ai.append_message_idempotent(%s, 'user', %s)", (t, message()))
    assert _message_times(t) == [FROZEN]


def test_the_client_sends_a_refused_call_again_not_delegated_and_it_gets_the_frozen_time() -> None:
    t = thread("clk")
    _session(CLOCK_TENANT, t)
    with connect(CLOCK_TENANT) as conn:
        conn.execute("select set_config('ai.frozen_now', %s, false)", (FROZEN.isoformat(),))
        client = Client(conn)
        client.append_message(t, "user", "x")
        saver = AgentStateSaver(conn)
        config = {"configurable": {"thread_id": t, "checkpoint_ns": ""}}
        saved = saver.put(config, empty_checkpoint(), {"step": 1}, {})
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    assert _message_times(t) == [FROZEN]
    with connect("postgres") as conn:
        row = conn.execute(
            "select created_at from ai.checkpoints where thread_id = %s and checkpoint_id = %s",
            (t, saved["configurable"]["checkpoint_id"]),
        ).fetchone()
    assert row == (FROZEN,)


def test_a_role_that_may_not_freeze_the_clock_is_delegated_as_before(tenant_c: str) -> None:
    t = thread("clk")
    _session(tenant_c, t)
    with connect(tenant_c) as conn:
        conn.execute("select set_config('ai.frozen_now', %s, false)", (FROZEN.isoformat(),))  # moves nothing
        conn.execute("select ai.append_message_idempotent(%s, 'user', %s)", (t, message()))
    (stamp,) = _message_times(t)
    assert stamp.year >= 2026


def test_a_login_on_the_worker_that_holds_the_thread_keeps_its_own_frozen_clock() -> None:
    """A direct login on a worker is no delegated call: its own session's clock, frozen or not."""
    t = thread("clk")
    _session(CLOCK_TENANT, t)
    port = worker_of(t)
    with psycopg.connect(url(CLOCK_TENANT, port), autocommit=True) as conn:
        conn.execute("select ai.append_message_idempotent(%s, 'user', %s)", (t, message("before")))
        conn.execute("select set_config('ai.frozen_now', %s, false)", (FROZEN.isoformat(),))
        conn.execute("select ai.append_message_idempotent(%s, 'user', %s)", (t, message("frozen")))
    first, second = _message_times(t)
    assert first.year >= 2026
    assert second == FROZEN
