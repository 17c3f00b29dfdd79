"""One node per step (issue 40, item 3; docs/scaling.md, "One node per step").

ai.distribute() makes the per-thread writes distributed functions co-located with
ai.agent_sessions: put_checkpoint (with its writes and messages), put_writes, the appends and the
side-effect ledger. A call of one of them, alone in its statement outside a transaction block, is
sent whole to the worker that holds the thread and runs there as the caller: the coordinator only
routes it, the fence is checked on that worker (ai.thread_fences), and nothing commits in two
phases. These tests read what the coordinator sent (citus.log_remote_commands) and attack the
identity under delegation as tests/citus/test_identity.py attacks it through the coordinator.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from formation import WORKER_PORTS, connect, thread, url, worker_of
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint
from psycopg.types.json import Jsonb

from agent_state.langgraph_saver import AgentStateSaver

# the client's own call (python/agent_state/checkpoints.py, PUT_CHECKPOINT)
PUT_CHECKPOINT = (
    "select ai.put_checkpoint(%s, %s, %s, %s, %s, %b, %s, %s,"
    " channel_values => row(%s, %s, %s, %b, %s)::ai.checkpoint_values,"
    " writes => row(%s, %s, %s, %s, %s, %b)::ai.task_writes,"
    " messages => %s,"
    " step_commit => row(%s, %s, %s)::ai.step_commit) as id"
)


def step_args(t: str, parent: str | None, job: int | None, token: int | None) -> tuple[object, ...]:
    """A node step: a checkpoint, a value, a message, and (with a parent) the task's held write."""
    writes = ("task-1", "", [0], ["messages"], ["json"], [b'"w"']) if parent else (None,) * 6
    return (
        t, "", None, parent, "json", b'{"v": 1}', Jsonb({"step": 1}), Jsonb({"messages": "1"}),
        ["messages"], ["1"], ["json"], [b'["hi"]'], None,
        *writes,
        Jsonb([{"role": "assistant", "content": "step", "idempotency_key": f"m-{uuid.uuid4().hex}"}]),
        job, token, None,
    )  # fmt: skip


def first_checkpoint(t: str, job: int, token: int) -> str:
    with connect("app_service") as conn:
        row = conn.execute(PUT_CHECKPOINT, step_args(t, None, job, token)).fetchone()
    assert row is not None
    return str(row[0])


@contextmanager
def remote_commands(conn: psycopg.Connection[tuple[object, ...]]) -> Iterator[list[str]]:
    """The commands the coordinator sends to the workers while the block runs, as logged by
    citus.log_remote_commands ("issuing <command>", with the worker's port in its detail)."""
    seen: list[str] = []

    def handler(d: psycopg.errors.Diagnostic) -> None:
        if d.message_primary and d.message_primary.startswith("issuing "):
            seen.append(f"{d.message_detail or ''} {d.message_primary}")

    conn.execute("set citus.log_remote_commands = on")
    conn.execute("set client_min_messages = log")
    conn.add_notice_handler(handler)
    try:
        yield seen
    finally:
        conn.remove_notice_handler(handler)
        conn.execute("reset client_min_messages")
        conn.execute("reset citus.log_remote_commands")


def claimed(t: str) -> tuple[int, int]:
    q = f"d-{uuid.uuid4().hex[:10]}"
    with connect("tenant_a") as conn:
        conn.execute("select ai.create_session(%s)", (t,))
        conn.execute("select ai.enqueue_job(%s, '{}', %s)", (t, q))
    with connect("app_service") as conn:
        row = conn.execute("select job_id, fencing_token from ai.claim_job('w-d', '1 minute', %s)", (q,)).fetchone()
    assert row is not None
    return int(str(row[0])), int(str(row[1]))


def test_the_per_thread_writes_are_distributed_functions_colocated_with_the_sessions() -> None:
    with connect("postgres") as conn:
        rows = conn.execute(
            "select p.proname, o.distribution_argument_index, o.colocationid = ("
            "  select colocationid from pg_dist_partition where logicalrelid = 'ai.agent_sessions'::regclass)"
            " from pg_dist_object o join pg_proc p on o.classid = 'pg_proc'::regclass and o.objid = p.oid"
            " where p.pronamespace = 'ai'::regnamespace and o.distribution_argument_index is not null"
            " order by 1"
        ).fetchall()
    # each through its strict entry (ai._formation_delegate); append_messages, set-returning, is not
    assert rows == [
        ("_delegated_abandon_side_effect", 0, True),
        ("_delegated_append_message_idempotent", 0, True),
        ("_delegated_begin_side_effect", 0, True),
        ("_delegated_finish_side_effect", 0, True),
        ("_delegated_put_checkpoint", 0, True),
        ("_delegated_put_writes", 0, True),
    ]


def test_a_fenced_step_goes_whole_to_the_worker_that_holds_the_thread() -> None:
    """put_checkpoint with its writes and messages, fenced: one statement to one worker, no
    transaction block, no PREPARE TRANSACTION (no two-phase commit)."""
    t = thread("step")
    job, token = claimed(t)
    parent = first_checkpoint(t, job, token)
    port = worker_of(t)
    with connect("app_service") as conn, remote_commands(conn) as sent:
        conn.execute(PUT_CHECKPOINT, step_args(t, parent, job, token))
    assert len(sent) == 1, sent
    assert f"@127.0.0.1:{port} " in sent[0] and "SELECT ai._delegated_put_checkpoint(" in sent[0], sent
    assert not any("PREPARE TRANSACTION" in s or "BEGIN" in s for s in sent), sent
    with connect("tenant_a") as conn:
        assert conn.execute("select count(*) from ai.get_messages(%s)", (t,)).fetchone() == (2,)


@pytest.mark.parametrize(
    ("call", "args"),
    [
        ("select ai.append_message_idempotent(%s, 'user', %s)", lambda t: (t, Jsonb("x"))),
        ("select outcome from ai.begin_side_effect(%s, 'k1')", lambda t: (t,)),
    ],
)
def test_an_append_and_the_ledger_go_to_the_worker_that_holds_the_thread(call: str, args: object) -> None:
    t = thread("one")
    with connect("tenant_a") as conn:
        conn.execute("select ai.create_session(%s)", (t,))
    port = worker_of(t)
    with connect("tenant_a") as conn, remote_commands(conn) as sent:
        conn.execute(call, args(t))  # type: ignore[operator]
    assert len(sent) == 1 and f"@127.0.0.1:{port} " in sent[0], sent


def test_a_zombies_delegated_step_is_refused_on_the_worker() -> None:
    t = thread("zstep")
    job, token = claimed(t)
    parent = first_checkpoint(t, job, token)
    with connect("app_service") as conn:
        conn.execute("select ai.complete_job(%s, %s)", (job, token))
        with pytest.raises(psycopg.Error) as exc:
            conn.execute(PUT_CHECKPOINT, step_args(t, parent, job, token))
    assert exc.value.sqlstate == "AS006"
    with connect("tenant_a") as conn:
        assert conn.execute("select count(*) from ai.get_messages(%s)", (t,)).fetchone() == (1,)


def test_a_tenants_delegated_call_for_another_tenants_thread_is_refused() -> None:
    theirs = thread("theirs")
    with connect("tenant_b") as conn:
        conn.execute("select ai.create_session(%s)", (theirs,))
    with connect("tenant_a") as conn:
        for call, args in (
            ("select ai.append_messages(%s, %s)", (theirs, Jsonb([{"role": "user", "content": "x"}]))),
            ("select ai.append_message_idempotent(%s, 'user', %s)", (theirs, Jsonb("x"))),
            ("select outcome from ai.begin_side_effect(%s, 'k1')", (theirs,)),
            (PUT_CHECKPOINT, step_args(theirs, None, None, None)),
        ):
            with pytest.raises(psycopg.Error) as exc:
                conn.execute(call, args)
            assert exc.value.sqlstate == "AS001", call
    with connect("tenant_b") as conn:
        assert conn.execute("select count(*) from ai.get_messages(%s)", (theirs,)).fetchone() == (0,)


def test_a_service_acting_for_a_tenant_stays_that_tenant_on_the_worker() -> None:
    """act_as holds for its transaction: a call in that transaction is not delegated alone (it
    carries the identity through the coordinator), so the worker still sees the tenant acted for."""
    mine, theirs = thread("mine"), thread("theirs")
    with connect("tenant_a") as conn:
        conn.execute("select ai.create_session(%s)", (mine,))
    with connect("tenant_b") as conn:
        conn.execute("select ai.create_session(%s)", (theirs,))
    with connect("app_service") as conn, conn.transaction():
        conn.execute("select ai.act_as('tenant_a')")
        conn.execute("select ai.append_messages(%s, %s)", (mine, Jsonb([{"role": "user", "content": "ok"}])))
        with pytest.raises(psycopg.Error) as exc, conn.transaction():
            conn.execute("select ai.append_messages(%s, %s)", (theirs, Jsonb([{"role": "user", "content": "x"}])))
        assert exc.value.sqlstate == "AS001"
        with pytest.raises(psycopg.Error) as exc, conn.transaction():
            conn.execute(PUT_CHECKPOINT, step_args(theirs, None, None, None))
        assert exc.value.sqlstate == "AS001"
    with connect("tenant_b") as conn:
        assert conn.execute("select count(*) from ai.get_messages(%s)", (theirs,)).fetchone() == (0,)
    with connect("tenant_a") as conn:
        assert conn.execute("select owner from ai.get_session(%s)", (mine,)).fetchone() == ("tenant_a",)


def test_a_step_with_several_messages_is_written_on_the_worker() -> None:
    """The saver mirrors a step's new messages into put_checkpoint (several, each keyed): one
    INSERT ... SELECT on the thread's worker."""
    t = thread("msgs")
    job, token = claimed(t)
    parent = first_checkpoint(t, job, token)
    args = list(step_args(t, parent, job, token))
    args[19] = Jsonb(
        [{"role": "user", "content": f"m{i}", "idempotency_key": f"k-{uuid.uuid4().hex}"} for i in range(3)]
    )
    with connect("app_service") as conn:
        conn.execute(PUT_CHECKPOINT, tuple(args))
    with connect("tenant_a") as conn:
        assert conn.execute("select count(*) from ai.get_messages(%s)", (t,)).fetchone() == (4,)


def test_the_ledger_sees_a_live_holder_and_takes_over_a_finished_jobs_reservation_on_the_worker() -> None:
    """begin_side_effect asks whether a reservation's holder is alive: without a job its
    reserved_until, with one the job's fence on the thread's worker (its row on the coordinator
    is out of reach there)."""
    t = thread("ledger")
    job, token = claimed(t)
    with connect("tenant_a") as conn:
        assert conn.execute("select outcome from ai.begin_side_effect(%s, 'solo')", (t,)).fetchone() == ("execute",)
        assert conn.execute("select outcome from ai.begin_side_effect(%s, 'solo')", (t,)).fetchone() == ("busy",)
    with connect("app_service") as conn:
        got = conn.execute("select outcome from ai.begin_side_effect(%s, 'held', '{}', %s, %s)", (t, job, token))
        assert got.fetchone() == ("execute",)
    with connect("tenant_a") as conn:
        assert conn.execute("select outcome from ai.begin_side_effect(%s, 'held')", (t,)).fetchone() == ("busy",)
    with connect("app_service") as conn:
        conn.execute("select ai.complete_job(%s, %s)", (job, token))
    with connect("tenant_a") as conn:
        row = conn.execute("select outcome, taken_over from ai.begin_side_effect(%s, 'held')", (t,)).fetchone()
    assert row == ("execute", True)


def test_a_step_with_messages_inside_a_transaction_block_is_written_through_the_coordinator() -> None:
    """Inside BEGIN/COMMIT Citus does not delegate: the step's messages go through the coordinator,
    where a multi-row INSERT ... SELECT into ai.session_messages is a COPY, which RLS refuses
    (0A000 "COPY FROM not supported with row-level security"). The saver's puts with mirrored
    messages, two steps in the caller's transaction."""
    t = thread("dm")
    with psycopg.connect(url("tenant_a")) as conn:
        saver = AgentStateSaver(conn, mirror_messages="messages")
        config: RunnableConfig = {"configurable": {"thread_id": t, "checkpoint_ns": ""}}
        version = None
        with conn.transaction():
            for n, said in enumerate((["hi", "yo"], ["hi", "yo", "so"])):
                cp = empty_checkpoint()
                cp["channel_values"] = {"messages": [{"role": "user", "content": c} for c in said]}
                version = saver.get_next_version(version, None)
                cp["channel_versions"] = {"messages": version}
                config = saver.put(config, cp, {"step": n}, cp["channel_versions"])
        conn.commit()
        rows = conn.execute("select seq, content ->> 'content' from ai.get_messages(%s)", (t,)).fetchall()
    assert rows == [(1, "hi"), (2, "yo"), (3, "so")]


def test_a_call_on_a_worker_carries_no_identity_so_what_leaves_that_worker_is_refused() -> None:
    """On a worker (a delegated call, or a login there) a call runs on that worker's shards as the
    caller and carries no identity (the carry's coordinated transaction and signed SET LOCAL cost a
    delegated call about a quarter of its worker CPU). What such a call sends to another node then
    arrives there as the schema owner without an identity: refused (AS070), never the owner's rows.
    A tenant logged in on the worker that does not hold its thread: its read of that thread, and
    its write in a transaction block, are refused and write nothing; a write alone in its statement
    is delegated on to the thread's worker, where it runs as the caller (another tenant: AS001)."""
    t = thread("far")
    with connect("tenant_a") as conn:
        conn.execute("select ai.create_session(%s)", (t,))
        conn.execute("select ai.append_message_idempotent(%s, 'user', %s)", (t, Jsonb("hi")))
    other = next(p for p in WORKER_PORTS if p != worker_of(t))
    with connect("tenant_a", other) as conn:
        with pytest.raises(psycopg.Error) as exc:
            conn.execute("select seq from ai.get_messages(%s)", (t,)).fetchall()
        assert exc.value.sqlstate == "AS070"
        with pytest.raises(psycopg.Error) as exc, conn.transaction():
            conn.execute("select ai.append_message_idempotent(%s, 'user', %s)", (t, Jsonb("x")))
        assert exc.value.sqlstate == "AS070"
        conn.execute("select ai.append_message_idempotent(%s, 'user', %s)", (t, Jsonb("y")))
    with connect("tenant_b", other) as conn, pytest.raises(psycopg.Error) as exc:
        conn.execute("select ai.append_message_idempotent(%s, 'user', %s)", (t, Jsonb("z")))
    assert exc.value.sqlstate == "AS001"
    # on the worker that holds it, the same login reads and writes it as its own
    with connect("tenant_a", worker_of(t)) as conn:
        conn.execute("select ai.append_message_idempotent(%s, 'user', %s)", (t, Jsonb("w")))
        rows = conn.execute("select seq, content from ai.get_messages(%s)", (t,)).fetchall()
    assert rows == [(1, "hi"), (2, "y"), (3, "w")]
