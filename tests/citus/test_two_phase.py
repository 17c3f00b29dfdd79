"""One transaction across the coordinator's queue and a worker commits in two phases (issue 40;
docs/scaling.md, "Atomic across the queue and a worker").

The queue's tables (ai.agent_jobs, ...) are plain tables of the coordinator and a thread's rows
are on one worker. A claim (the thread's fence), a finish, request_human, resolve_human, the
cancel of a waiting job and delete_thread write both in one transaction, which on one server is
atomic. Citus knows no plain table of the coordinator, so without more it commits the worker in
one phase in its pre-commit callback and then the coordinator: a coordinator crash between the
two kept the worker's half. On a formation ai.distribute() adds a trigger to the queue's tables
that makes such a transaction prepare the worker (PREPARE TRANSACTION, recorded in
pg_dist_transaction on the coordinator), commit the coordinator, then COMMIT PREPARED; a crash
before the coordinator's commit is rolled back by Citus' recovery. A node step (a delegated
put_checkpoint or append, one worker, no queue table) stays one phase.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from collections.abc import Callable

import psycopg
import pytest
from formation import OWNER, PORT, WORKER_PORTS, connect, database_url, drop_database, thread, url, worker_of
from psycopg.types.json import Jsonb
from test_delegation import remote_commands

from agent_state import schema

Row = tuple[object, ...]


def one(conn: psycopg.Connection[Row], query: str, params: tuple[object, ...] = ()) -> Row:
    row = conn.execute(query, params).fetchone()
    assert row is not None
    return row


def session() -> str:
    t = thread("tp")
    with connect("tenant_a") as conn:
        conn.execute("select ai.create_session(%s)", (t,))
    return t


def enqueue(t: str, queue: str) -> int:
    with connect("app_service") as conn:
        return int(str(one(conn, "select job_id from ai.enqueue_job(%s, '{}', %s)", (t, queue))[0]))


def claim(queue: str) -> tuple[int, int]:
    with connect("app_service") as conn:
        row = one(conn, "select job_id, fencing_token from ai.claim_job('tp-worker', '60 seconds', %s)", (queue,))
    return int(str(row[0])), int(str(row[1]))


def prepares(sent: list[str]) -> list[str]:
    return [s for s in sent if "PREPARE TRANSACTION" in s]


# 1. What prepares and what does not ------------------------------------------------------------------


def _claim(t: str, q: str) -> tuple[str, str, tuple[object, ...]]:
    enqueue(t, q)
    return "app_service", "select ai.claim_job('tp-worker', '60 seconds', %s)", (q,)


def _complete(t: str, q: str) -> tuple[str, str, tuple[object, ...]]:
    enqueue(t, q)
    return "app_service", "select ai.complete_job(%s, %s)", claim(q)


def _fail(t: str, q: str) -> tuple[str, str, tuple[object, ...]]:
    enqueue(t, q)
    return "app_service", "select ai.fail_job(%s, %s, 'boom', interval '0')", claim(q)


def _request_human(t: str, q: str) -> tuple[str, str, tuple[object, ...]]:
    enqueue(t, q)
    return "app_service", "select ai.request_human(%s, %s, 'cp-1')", claim(q)


def _waiting(t: str, q: str) -> int:
    job = enqueue(t, q)
    with connect("app_service") as conn:
        conn.execute("select ai.request_human(%s, %s, 'cp-1')", claim(q))
    return job


def _resolve_human(t: str, q: str) -> tuple[str, str, tuple[object, ...]]:
    _waiting(t, q)
    return "tenant_a", "select ai.resolve_human(%s, 'cp-1', %s)", (t, Jsonb({"approved": True}))


def _cancel_waiting(t: str, q: str) -> tuple[str, str, tuple[object, ...]]:
    return "tenant_a", "select ai.cancel_job(%s)", (_waiting(t, q),)


def _delete_thread(t: str, q: str) -> tuple[str, str, tuple[object, ...]]:
    enqueue(t, q)
    return "tenant_a", "select ai.delete_thread(%s)", (t,)


@pytest.mark.parametrize(
    "make",
    [_claim, _complete, _fail, _request_human, _resolve_human, _cancel_waiting, _delete_thread],
    ids=["claim", "complete", "fail", "request_human", "resolve_human", "cancel_waiting", "delete_thread"],
)
def test_a_call_that_writes_the_queue_and_the_threads_worker_prepares_that_worker(
    make: Callable[[str, str], tuple[str, str, tuple[object, ...]]],
) -> None:
    """One PREPARE TRANSACTION, on the worker that holds the thread, then its COMMIT PREPARED: the
    worker's half is prepared before the coordinator commits, and recorded there."""
    t, q = session(), f"tp-{uuid.uuid4().hex[:10]}"
    role, query, params = make(t, q)
    port = worker_of(t)
    with connect(role) as conn, remote_commands(conn) as sent:
        conn.execute(query, params)
    prepared = prepares(sent)
    assert len(prepared) == 1 and f"@127.0.0.1:{port} " in prepared[0], sent
    assert any("COMMIT PREPARED" in s and f"@127.0.0.1:{port} " in s for s in sent), sent


def test_a_node_step_and_the_queues_own_calls_stay_one_phase() -> None:
    """A delegated node step (one statement to one worker) and calls that write the queue only
    (enqueue, a lease renewal, a claim that finds nothing) prepare nothing: no two-phase commit
    where no transaction spans the coordinator's queue and a worker."""
    t, q = session(), f"tp-{uuid.uuid4().hex[:10]}"
    calls: list[tuple[str, str, Callable[[], tuple[object, ...]]]] = [
        ("app_service", "select ai.enqueue_job(%s, '{}', %s)", lambda: (t, q)),
        ("app_service", "select ai.renew_lease(%s, %s, '60 seconds')", lambda: claim(q)),
        ("app_service", "select ai.claim_job('tp-worker', '60 seconds', %s)", lambda: (q,)),  # none left
        ("tenant_a", "select ai.append_messages(%s, %s)", lambda: (t, Jsonb([{"role": "user", "content": "x"}]))),
        ("tenant_a", "select ai.append_message_idempotent(%s, 'user', %s)", lambda: (t, Jsonb("y"))),
    ]
    for role, query, params in calls:
        args = params()
        with connect(role) as conn, remote_commands(conn) as sent:
            conn.execute(query, args)
        assert prepares(sent) == [], (query, sent)


def test_the_two_phase_table_is_an_empty_citus_local_table_no_tenant_reaches() -> None:
    with connect("postgres") as conn:
        assert one(
            conn,
            "select partmethod, (select groupid from pg_dist_placement p join pg_dist_shard s using (shardid)"
            "  where s.logicalrelid = d.logicalrelid)"
            " from pg_dist_partition d where logicalrelid = 'ai.formation_two_phase'::regclass",
        ) == ("n", 0)  # a Citus local table: its one shard on the coordinator (group 0)
        assert one(conn, "select count(*) from ai.formation_two_phase") == (0,)
        assert one(
            conn,
            "select relrowsecurity, relforcerowsecurity from pg_class where oid = 'ai.formation_two_phase'::regclass",
        ) == (True, True)
        triggers = {
            str(r[0])
            for r in conn.execute(
                "select tgrelid::regclass::text from pg_trigger"
                " where tgname = 'formation_two_phase' and not tgisinternal"
            )
        }
        assert {"ai.agent_jobs", "ai.agent_jobs_archive", "ai_archive.agent_jobs"} <= triggers, triggers
    for role in ("tenant_a", "app_service"):
        with connect(role) as conn:
            for query in ("select * from ai.formation_two_phase", "delete from ai.formation_two_phase"):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(query)


def test_distribute_refuses_a_formation_whose_coordinator_is_not_in_its_metadata() -> None:
    """Without citus_set_coordinator_host the coordinator holds no shard of its own: the
    two-phase table cannot be a Citus local table there, and the queue's transactions with a worker
    would commit in one phase. ai.distribute() refuses (AS071) and distributes nothing."""
    name = f"nocoord_{uuid.uuid4().hex[:8]}"
    for port in [PORT, *WORKER_PORTS]:
        with psycopg.connect(database_url("postgres", "postgres", port), autocommit=True) as admin:
            admin.execute(f'create database "{name}" owner {OWNER}')
        with psycopg.connect(database_url("postgres", name, port), autocommit=True) as conn:
            conn.execute("set client_min_messages = warning")
            conn.execute("create extension citus")
    try:
        with psycopg.connect(database_url("postgres", name), autocommit=True) as conn:
            for port in WORKER_PORTS:  # the workers only
                conn.execute("select citus_add_node('127.0.0.1', %s)", (port,))
            with pytest.raises(Exception) as exc:  # psycopg's or the client's: by its SQLSTATE
                schema.deploy(conn)  # deploys, then ai.distribute()
            assert getattr(exc.value, "sqlstate", None) == "AS071", exc.value
            assert conn.execute("select count(*) from pg_dist_partition").fetchone() == (0,)
    finally:
        drop_database(name)


# 2. A coordinator crash between the worker's PREPARE and the coordinator's commit ----------------------


def wait_for(what: str, check: Callable[[], bool], seconds: float = 60) -> None:
    """Polls ``check`` until it holds (a condition, not a guess at a duration), at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def coordinator_accepts() -> bool:
    try:
        with connect("postgres") as conn:
            conn.execute("select 1 from pg_dist_node limit 1")
        return True
    except psycopg.OperationalError:
        return False


def job_row(job: int) -> Row:
    with connect("postgres") as conn:
        return one(conn, "select status, fencing_token, attempts from ai.agent_jobs where job_id = %s", (job,))


def fence(t: str) -> Row | None:
    with connect("postgres") as conn:
        return conn.execute(
            "select job_id, fencing_token, held from ai.thread_fences where thread_id = %s", (t,)
        ).fetchone()


def test_a_coordinator_crash_after_the_worker_prepared_a_claim_loses_both_halves() -> None:
    """The claim's transaction is stopped where a crash would hurt most: the worker's half is on
    its way (the worker backend serving it is stopped with SIGSTOP, so the coordinator waits on
    the command it sent at commit), and the coordinator is killed (SIGKILL: a crash restart) before
    its own commit. The worker's backend then runs what it was sent. With two-phase commit that
    was PREPARE TRANSACTION: the worker holds a prepared transaction the coordinator has no record
    of, and Citus' recovery rolls it back, so the fence and the job are both as before the claim and
    the job is claimed again. (One phase sent COMMIT: the fence moved and the job stayed PENDING.)"""
    t, q = session(), f"tp-{uuid.uuid4().hex[:10]}"
    job = enqueue(t, q)
    with connect("app_service") as conn:  # a first attempt, so that the thread has a fence
        conn.execute("select ai.fail_job(%s, %s, 'once', interval '0')", claim(q))
    before_job, before_fence = job_row(job), fence(t)
    assert before_job[0] == "PENDING" and before_fence is not None and before_fence[2] is False
    port = worker_of(t)

    claimer = psycopg.connect(url("app_service"))  # a transaction block: begin ... commit
    stopped: int | None = None
    try:
        assert one(claimer, "select job_id from ai.claim_job('tp-crash', '60 seconds', %s)", (q,)) == (job,)
        pid, gpid = one(claimer, "select pg_backend_pid(), citus_backend_gpid()")
        with psycopg.connect(url("postgres", port), autocommit=True) as worker:
            serving = worker.execute(
                "select pid from pg_stat_activity where application_name = %s and state = 'idle in transaction'",
                (f"citus_internal gpid={gpid}",),
            ).fetchall()
        assert len(serving) == 1, serving
        stopped = int(str(serving[0][0]))
        os.kill(stopped, signal.SIGSTOP)
        outcome: list[BaseException | None] = []

        def commit() -> None:
            try:
                claimer.commit()
                outcome.append(None)
            except BaseException as e:  # the backend is killed under it
                outcome.append(e)

        committing = threading.Thread(target=commit, daemon=True)
        committing.start()

        def waits_on_the_worker() -> bool:
            with connect("postgres") as conn:
                row = conn.execute(
                    "select state, wait_event_type from pg_stat_activity where pid = %s", (pid,)
                ).fetchone()
            return row is not None and row[0] == "active" and row[1] in ("Client", "Extension")

        wait_for("the claim's commit to wait on the stopped worker", waits_on_the_worker)
        os.kill(int(str(pid)), signal.SIGKILL)  # the coordinator crashes (and restarts)
        committing.join(60)
        assert outcome and outcome[0] is not None, "the claim's commit returned: it was not cut short"
        wait_for("the coordinator to accept connections again", coordinator_accepts, 120)
        os.kill(stopped, signal.SIGCONT)  # the worker runs what the coordinator sent before it died
        with psycopg.connect(url("postgres", port), autocommit=True) as worker:
            wait_for(
                "the worker's backend to end",
                lambda: (
                    worker.execute("select count(*) from pg_stat_activity where pid = %s", (stopped,)).fetchone()
                    == (0,)
                ),
            )
            stopped = None
            prepared = [
                str(r[0])
                for r in worker.execute(
                    "select gid from pg_prepared_xacts where gid like %s", (f"citus\\_0\\_{pid}\\_%",)
                )
            ]
        with connect("postgres") as conn:
            conn.execute("select recover_prepared_transactions()")
        # both halves as before the claim
        assert fence(t) == before_fence, "the worker kept the claim's fence: its half was committed alone"
        assert job_row(job) == before_job
        assert prepared, "the worker had no prepared transaction: the crash was not between the two phases"
        with psycopg.connect(url("postgres", port), autocommit=True) as worker:
            left = worker.execute("select gid from pg_prepared_xacts where gid = any (%s)", (prepared,)).fetchall()
            assert left == [], "the prepared transaction was not rolled back"
        # and the job is claimed again, under a newer token
        again, token = claim(q)
        assert again == job and token > int(str(before_job[1]))
        assert fence(t) == (job, token, True)
        with connect("app_service") as conn:
            conn.execute("select ai.complete_job(%s, %s)", (job, token))
    finally:
        if stopped is not None:
            os.kill(stopped, signal.SIGCONT)
        claimer.close()
        wait_for("the coordinator to accept connections", coordinator_accepts, 120)
