"""The queue's claim on a Citus formation (issue 40, item 2; docs/scaling.md, "The claim").

The claim runs on the coordinator, where ai.agent_jobs lives. On one server its per-thread lock is
the thread's row of ai.agent_sessions (FOR NO KEY UPDATE SKIP LOCKED, in the pick query); on a
formation that table is distributed and Citus refuses to lock its rows from a query of the
coordinator's table (0A000, "could not create distributed plan"). ai.distribute() gives the
claim a lock of the coordinator instead, that no tenant can take for another's thread. Each test
uses a queue of its own (other files share the formation's database).
"""

from __future__ import annotations

import uuid

from formation import connect, thread
from psycopg.types.json import Jsonb


def queue() -> str:
    return f"q-{uuid.uuid4().hex[:10]}"


def enqueue(role: str, thread_id: str, q: str, *, new: bool = True) -> int:
    with connect(role) as conn:
        if new:
            conn.execute("select ai.create_session(%s)", (thread_id,))
        row = conn.execute("select (ai.enqueue_job(%s, %s, %s)).job_id", (thread_id, Jsonb({"n": 1}), q)).fetchone()
    assert row is not None
    return int(str(row[0]))


def test_a_worker_claims_and_completes_a_tenants_job() -> None:
    q, t = queue(), thread("claim")
    job = enqueue("tenant_a", t, q)
    with connect("app_service") as conn:
        row = conn.execute(
            "select job_id, fencing_token, status from ai.claim_job('w-claim', '1 minute', %s)", (q,)
        ).fetchone()
        assert row is not None and row[0] == job and row[2] == "IN_PROGRESS"
        conn.execute("select ai.complete_job(%s, %s)", (job, row[1]))
    with connect("tenant_a") as conn:
        assert conn.execute("select status from ai.get_job(%s)", (job,)).fetchone() == ("COMPLETED",)


def test_claim_jobs_takes_one_job_per_thread_across_the_shards() -> None:
    q = queue()
    threads = [thread("batch") for _ in range(6)]
    jobs = {t: enqueue("tenant_b", t, q) for t in threads}
    enqueue("tenant_b", threads[0], q, new=False)  # a sibling: waits until the first one is done
    with connect("app_service") as conn:
        got = conn.execute(
            "select thread_id, job_id from ai.claim_jobs('w-batch', '1 minute', %s, 100)", (q,)
        ).fetchall()
    assert {str(r[0]): r[1] for r in got} == jobs, "every thread's first job, once"
    assert len(got) == len(jobs)


def test_a_second_claimer_skips_a_thread_another_claim_holds() -> None:
    """Two claimers at once, each of a different job of one idle thread: one takes it, the other
    skips the thread (no wait, no unique violation of agent_jobs_one_running_per_thread)."""
    q, t = queue(), thread("pair")
    first = enqueue("tenant_a", t, q)
    enqueue("tenant_a", t, q, new=False)
    with connect("app_service") as a, connect("app_service") as b:
        a.autocommit = False
        b.execute("set statement_timeout = '20s'")
        ga = a.execute("select job_id from ai.claim_jobs('w-pa', '1 minute', %s, 10)", (q,)).fetchall()
        gb = b.execute("select job_id from ai.claim_jobs('w-pb', '1 minute', %s, 10)", (q,)).fetchall()
        a.commit()
    assert ga == [(first,)]
    assert gb == [], "the thread is held by the open claim: skipped, not waited for"


def test_a_tenants_lock_does_not_hold_off_a_claim() -> None:
    """A tenant cannot take the claim's per-thread lock: whatever advisory lock it holds, the
    job of another tenant's thread is claimed."""
    q, t = queue(), thread("victim")
    job = enqueue("tenant_b", t, q)
    with connect("tenant_a") as spy, connect("app_service") as w:
        spy.autocommit = False
        spy.execute("select pg_advisory_xact_lock(1634296929, hashtext(%s))", (t,))
        spy.execute("select pg_advisory_xact_lock(hashtextextended(%s, 0))", (t,))
        spy.execute("select pg_advisory_xact_lock(hashtext(%s))", (t,))
        got = w.execute("select job_id from ai.claim_job('w-v', '1 minute', %s)", (q,)).fetchall()
        spy.rollback()
    assert got == [(job,)]
