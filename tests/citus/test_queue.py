"""The queue and human-in-the-loop across the coordinator and the shards (issue 40, docs/scaling.md).

The queue's tables (ai.agent_jobs, ...) are plain tables of the coordinator; the sessions, the
approvals and every other per-thread table are on the shards. What writes a session's status or an
approval from a job row, what reads the queue with a distributed table, what deletes a thread's
jobs (no foreign key cascades on a formation) and what NOTIFYs a worker's listener must work on a
formation as on one server, or refuse. Each test names the one-server behaviour it holds to.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest
from formation import connect, thread
from psycopg import sql
from psycopg.types.json import Jsonb

Row = tuple[object, ...]


def one(conn: psycopg.Connection[Row], query: str, params: tuple[object, ...] = ()) -> Row:
    row = conn.execute(query, params).fetchone()
    assert row is not None
    return row


def sqlstate_of(conn: psycopg.Connection[Row], query: str, params: tuple[object, ...] = ()) -> str | None:
    with pytest.raises(psycopg.Error) as exc:
        conn.execute(query, params)
    return exc.value.sqlstate


def session(role: str = "tenant_a") -> str:
    made = thread("q")
    with connect(role) as conn:
        conn.execute("select ai.create_session(%s)", (made,))
    return made


def queue_name() -> str:
    return f"cq-{uuid.uuid4().hex[:10]}"


def enqueue(thread_id: str, queue: str, **kw: object) -> int:
    args = ", ".join(f"{k} => %s" for k in kw)
    with connect("app_service") as conn:
        return int(
            str(
                one(
                    conn,
                    f"select job_id from ai.enqueue_job(%s, %s, %s{', ' + args if args else ''})",
                    (thread_id, Jsonb({"n": 1}), queue, *kw.values()),
                )[0]
            )
        )


def hold(job_id: int, queue: str) -> int:
    """The job IN_PROGRESS under a fresh token, claimed by ai.claim_job (each test makes the job it
    holds the only one its queue offers); returns the token."""
    with connect("app_service") as conn:
        row = conn.execute(
            "select job_id, fencing_token from ai.claim_job('cq-worker', '60 seconds', %s)", (queue,)
        ).fetchone()
    assert row is not None and row[0] == job_id
    return int(str(row[1]))


def status_of(job_id: int) -> str:
    with connect("app_service") as conn:
        return str(one(conn, "select status from ai.get_job(%s)", (job_id,))[0])


def session_status(thread_id: str, role: str = "tenant_a") -> str:
    with connect(role) as conn:
        return str(one(conn, "select status from ai.get_session(%s)", (thread_id,))[0])


# 1. The finishes and the human in the loop, from the coordinator's job rows to the shards -----------


def test_a_worker_finishes_its_jobs_on_the_formation() -> None:
    t, q = session(), queue_name()
    job = enqueue(t, q)
    with connect("app_service") as conn:
        token = hold(job, q)
        assert one(conn, "select status from ai.fail_job(%s, %s, 'boom', interval '0')", (job, token)) == ("PENDING",)
        token = hold(job, q)
        assert one(conn, "select status from ai.release_job(%s, %s)", (job, token)) == ("PENDING",)
        token = hold(job, q)
        assert one(conn, "select status from ai.snooze_job(%s, %s, now())", (job, token)) == ("PENDING",)
        token = hold(job, q)
        assert one(conn, "select status from ai.complete_job(%s, %s, %s)", (job, token, Jsonb({"ok": 1}))) == (
            "COMPLETED",
        )
    dead = enqueue(t, q, max_attempts=1)
    with connect("app_service") as conn:
        token = hold(dead, q)
        assert one(conn, "select status from ai.fail_job(%s, %s, 'boom')", (dead, token)) == ("FAILED",)
        assert one(conn, "select status from ai.retry_dead_job(%s)", (dead,)) == ("PENDING",)
    with connect("tenant_a") as conn:
        assert one(conn, "select status from ai.cancel_job(%s)", (dead,)) == ("CANCELLED",)
        outcomes = [r[0] for r in conn.execute("select outcome from ai.job_attempts(%s)", (job,))]
        assert outcomes == ["failed", "released", "released", "completed"]  # a snooze to now is a release
    later = enqueue(t, q)
    with connect("app_service") as conn:
        token = hold(later, q)
        assert one(conn, "select status from ai.snooze_job(%s, %s, now() + interval '1 hour')", (later, token)) == (
            "PENDING",
        )
        assert [r[0] for r in conn.execute("select outcome from ai.job_attempts(%s)", (later,))] == ["snoozed"]
    # complete_jobs: one job completed already under its token (a retry), one held
    batch = [enqueue(t, q)]
    with connect("app_service") as conn:
        tokens = [hold(batch[0], q)]
        conn.execute("select ai.complete_job(%s, %s)", (batch[0], tokens[0]))
        batch.append(enqueue(session(), q))
        tokens.append(hold(batch[1], q))
        done = [int(str(r[0])) for r in conn.execute("select ai.complete_jobs(%s, %s)", (batch, tokens))]
        assert sorted(done) == batch


@pytest.mark.parametrize(
    "decision",
    [{"approved": True}, {"approved": False, "reason": "no"}, {"approved": True, "edit": {"amount": 5}}],
    ids=["approve", "reject", "edit"],
)
def test_a_person_decides_what_a_job_waits_for(decision: dict[str, object]) -> None:
    """request_human writes the job (coordinator) and the session, approval and event (the
    thread's shard); resolve_human the same back: the job PENDING with the decision in its payload."""
    t, q = session(), queue_name()
    job = enqueue(t, q)
    token = hold(job, q)
    with connect("app_service") as conn:
        approval = one(conn, "select ai.request_human(%s, %s, 'cp-1', %s)", (job, token, Jsonb({"send": "mail"})))[0]
        assert [r[0] for r in conn.execute("select approval_id from ai.pending_approvals()").fetchall()].count(
            approval
        ) == 1
    assert status_of(job) == "AWAITING_HUMAN"
    assert session_status(t) == "waiting"
    with connect("tenant_a") as conn:
        mine = conn.execute("select approval_id, job_id from ai.pending_approvals()").fetchall()
        assert (approval, job) in mine
        assert one(conn, "select status from ai.get_approval(%s)", (approval,)) == ("pending",)
        assert one(conn, "select status, decision from ai.resolve_human(%s, 'cp-1', %s)", (t, Jsonb(decision))) == (
            "resolved",
            decision,
        )
        assert approval not in [r[0] for r in conn.execute("select approval_id from ai.pending_approvals()")]
        decided = conn.execute("select approval_id, status from ai.decided_approvals(thread_id => %s)", (t,)).fetchall()
        assert decided == [(approval, "resolved")]
    with connect("tenant_b") as conn:
        assert approval not in [r[0] for r in conn.execute("select approval_id from ai.pending_approvals()")]
    with connect("app_service") as conn:
        assert one(conn, "select status, payload -> 'human' -> 'decision' from ai.get_job(%s)", (job,)) == (
            "PENDING",
            decision,
        )
    assert session_status(t) == "active"


def test_cancelling_a_job_that_waits_for_a_person_closes_its_approval() -> None:
    """The status trigger on the coordinator's job row cancels the approval and makes the session
    active again on the thread's shard."""
    t, q = session(), queue_name()
    job = enqueue(t, q)
    token = hold(job, q)
    with connect("app_service") as conn:
        approval = one(conn, "select ai.request_human(%s, %s, 'cp-1')", (job, token))[0]
    with connect("tenant_a") as conn:
        assert one(conn, "select status from ai.cancel_job(%s)", (job,)) == ("CANCELLED",)
        assert one(conn, "select status, decided_by from ai.get_approval(%s)", (approval,)) == ("cancelled", "tenant_a")
        kinds = [r[0] for r in conn.execute("select kind from ai.get_events(%s)", (t,))]
        assert "approval_cancelled" in kinds
    assert session_status(t) == "active"


def test_a_request_whose_job_half_was_lost_is_taken_over_by_the_runs_next_request() -> None:
    """The pending approval kept and the job's AWAITING_HUMAN lost (a job moved back by hand; a
    coordinator crash between the worker's commit and its own when these transactions committed in
    one phase, before tests/citus/test_two_phase.py's two-phase commit). The run's next request
    (after its lease ran out and it was claimed again) takes the approval over instead of failing
    AS004 forever."""
    t, q = session(), queue_name()
    job = enqueue(t, q)
    with connect("app_service") as conn:
        approval = one(conn, "select ai.request_human(%s, %s, 'cp-1')", (job, hold(job, q)))[0]
    with connect("postgres") as conn:  # the job's half lost
        conn.execute("update ai.agent_jobs set status = 'PENDING', run_at = now() where job_id = %s", (job,))
    with connect("app_service") as conn:
        assert one(conn, "select ai.request_human(%s, %s, 'cp-2')", (job, hold(job, q))) == (approval,)
    assert status_of(job) == "AWAITING_HUMAN"
    with connect("tenant_a") as conn:
        assert [r[0] for r in conn.execute("select approval_id from ai.pending_approvals(max_rows => 10000)")].count(
            approval
        ) == 1
        assert one(conn, "select status from ai.resolve_human(%s, 'cp-2', '{}')", (t,)) == ("resolved",)
    assert status_of(job) == "PENDING"


def test_a_decision_whose_job_half_was_lost_reaches_the_job_on_the_next_click() -> None:
    """The approval resolved and the job still waiting without the decision (a job moved back by
    hand; a crash between the two halves when they committed in one phase). A second call gives
    the job the decision stored then (not the new one) and returns it."""
    t, q = session(), queue_name()
    job = enqueue(t, q)
    with connect("app_service") as conn:
        approval = one(conn, "select ai.request_human(%s, %s, 'cp-1')", (job, hold(job, q)))[0]
    with connect("tenant_a") as conn:
        conn.execute("select ai.resolve_human(%s, 'cp-1', %s)", (t, Jsonb({"approved": True})))
    with connect("postgres") as conn:  # the job's half lost
        conn.execute(
            "update ai.agent_jobs set status = 'AWAITING_HUMAN', payload = payload - 'human' where job_id = %s", (job,)
        )
    with connect("tenant_a") as conn:
        assert one(
            conn, "select approval_id, decision from ai.resolve_human(%s, 'cp-1', %s)", (t, Jsonb({"approved": False}))
        ) == (approval, {"approved": True})
    with connect("app_service") as conn:
        assert one(conn, "select status, payload -> 'human' -> 'decision' from ai.get_job(%s)", (job,)) == (
            "PENDING",
            {"approved": True},
        )


def test_the_session_status_is_set_on_its_shard() -> None:
    t = session()
    with connect("tenant_a") as conn:
        assert one(conn, "select status from ai.set_session_status(%s, 'waiting')", (t,)) == ("waiting",)
        assert one(conn, "select status from ai.set_session_status(%s, 'completed')", (t,)) == ("completed",)
        assert sqlstate_of(conn, "select ai.set_session_status(%s, 'active')", (t,)) == "AS004"
    with connect("tenant_b") as conn:
        assert sqlstate_of(conn, "select ai.set_session_status(%s, 'failed')", (t,)) == "AS001"


# 2. enqueue's session check: no foreign key on a formation --------------------------------------------


def test_enqueue_refuses_an_unknown_another_tenants_or_finished_thread() -> None:
    mine, theirs, q = session("tenant_a"), session("tenant_b"), queue_name()
    with connect("tenant_a") as conn:
        assert sqlstate_of(conn, "select ai.enqueue_job(%s, '{}', %s)", (thread("none"), q)) == "AS001"
        assert sqlstate_of(conn, "select ai.enqueue_job(%s, '{}', %s)", (theirs, q)) == "AS001"
        assert (
            sqlstate_of(conn, "select ai.enqueue_jobs(%s, %s, %s)", ([mine, theirs], [Jsonb({}), Jsonb({})], q))
            == "AS001"
        )
        conn.execute("select ai.set_session_status(%s, 'completed')", (mine,))
        assert sqlstate_of(conn, "select ai.enqueue_job(%s, '{}', %s)", (mine, q)) == "AS004"
    with connect("postgres") as conn:
        assert one(conn, "select count(*) from ai.agent_jobs where queue = %s", (q,)) == (0,)


# 3. delete_thread deletes the thread's jobs ------------------------------------------------------------


def test_deleting_a_thread_leaves_no_job_of_it() -> None:
    t, other, q = session(), session(), queue_name()
    done = enqueue(t, q)
    token = hold(done, q)
    with connect("app_service") as conn:
        conn.execute("select ai.complete_job(%s, %s)", (done, token))
    enqueue(t, q)
    enqueue(t, q, run_at="infinity")
    kept = enqueue(other, q)
    with connect("tenant_b") as conn:
        assert one(conn, "select ai.delete_thread(%s)", (t,)) == (False,)
    with connect("tenant_a") as conn:
        assert one(conn, "select ai.delete_thread(%s)", (t,)) == (True,)
    with connect("postgres") as conn:
        assert one(conn, "select count(*) from ai.agent_jobs where thread_id = %s", (t,)) == (0,)
        assert one(conn, "select count(*) from ai.agent_jobs where queue = %s", (q,)) == (1,)
    assert status_of(kept) == "PENDING"


def test_deleting_a_deleted_thread_again_deletes_the_jobs_its_first_delete_lost() -> None:
    """The tombstone kept and the delete of the jobs lost (a job put back by hand; a crash between
    the two halves when they committed in one phase). A second call (the thread is gone: it
    returns false) deletes them."""
    t, q = session(), queue_name()
    with connect("tenant_a") as conn:
        assert one(conn, "select ai.delete_thread(%s)", (t,)) == (True,)
    with connect("postgres") as conn:  # the delete of its jobs lost
        conn.execute(
            "insert into ai.agent_jobs (thread_id, owner, queue, run_at, created_at, updated_at)"
            " values (%s, 'tenant_a', %s, now(), now(), now())",
            (t, q),
        )
    with connect("tenant_b") as conn:
        assert one(conn, "select ai.delete_thread(%s)", (t,)) == (False,)
    with connect("postgres") as conn:
        assert one(conn, "select count(*) from ai.agent_jobs where thread_id = %s", (t,)) == (1,)
    with connect("tenant_a") as conn:
        assert one(conn, "select ai.delete_thread(%s)", (t,)) == (False,)
    with connect("postgres") as conn:
        assert one(conn, "select count(*) from ai.agent_jobs where thread_id = %s", (t,)) == (0,)


# 4. The queue read with the distributed tables --------------------------------------------------------


@pytest.fixture
def busy() -> Iterator[dict[str, object]]:
    """Two tenants' threads with jobs of one queue: tenant_a's completed, failed (once), waiting for
    a person and pending; tenant_b's pending."""
    q = queue_name()
    a, b = session("tenant_a"), session("tenant_b")
    jobs: list[int] = []
    with connect("app_service") as conn:
        # one at a time: each the only job a claim can take
        jobs.append(enqueue(a, q))
        conn.execute("select ai.complete_job(%s, %s)", (jobs[0], hold(jobs[0], q)))
        jobs.append(enqueue(a, q))
        conn.execute("select ai.fail_job(%s, %s, 'boom', interval '1 hour')", (jobs[1], hold(jobs[1], q)))
        jobs.append(enqueue(a, q))
        conn.execute("select ai.request_human(%s, %s, 'cp-1')", (jobs[2], hold(jobs[2], q)))
    theirs = enqueue(b, q)
    yield {"queue": q, "a": a, "b": b, "jobs": jobs, "theirs": theirs}


def test_find_jobs_lists_a_tenants_own_jobs_and_a_services_every_job(busy: dict[str, object]) -> None:
    q, jobs, theirs = busy["queue"], busy["jobs"], busy["theirs"]
    assert isinstance(jobs, list)
    with connect("tenant_a") as conn:
        mine = [r[0] for r in conn.execute("select job_id from ai.find_jobs(queue => %s)", (q,))]
        assert mine == sorted(jobs, reverse=True)
        assert [r[0] for r in conn.execute("select job_id from ai.list_jobs(queue => %s)", (q,))] == mine
        assert [
            r[0] for r in conn.execute("select job_id from ai.find_jobs(queue => %s, status => 'PENDING')", (q,))
        ] == [jobs[1]]
        assert [
            r[0]
            for r in conn.execute(
                "select job_id from ai.find_jobs(queue => %s, max_rows => 1, before_job_id => %s)", (q, jobs[2])
            )
        ] == [jobs[1]]
    with connect("app_service") as conn:
        every = [r[0] for r in conn.execute("select job_id from ai.find_jobs(queue => %s)", (q,))]
        assert every == sorted([*jobs, theirs], reverse=True)
        assert [
            r[0] for r in conn.execute("select job_id from ai.find_jobs(queue => %s, owner => 'tenant_b')", (q,))
        ] == [theirs]


def test_pending_approvals_read_the_approvals_and_their_jobs(busy: dict[str, object]) -> None:
    jobs = busy["jobs"]
    assert isinstance(jobs, list)
    with connect("tenant_a") as conn:
        assert [
            r[0] for r in conn.execute("select job_id from ai.pending_approvals() where thread_id = %s", (busy["a"],))
        ] == [jobs[2]]
    with connect("app_service") as conn:
        assert jobs[2] in [r[0] for r in conn.execute("select job_id from ai.pending_approvals(max_rows => 10000)")]
        # a job moved out of AWAITING_HUMAN by hand (a raw UPDATE) no longer waits
    with connect("postgres") as conn:
        conn.execute("update ai.agent_jobs set status = 'PENDING', lease_owner = null where job_id = %s", (jobs[2],))
    with connect("tenant_a") as conn:
        assert (
            conn.execute("select job_id from ai.pending_approvals() where thread_id = %s", (busy["a"],)).fetchall()
            == []
        )


def test_the_queue_figures_count_a_tenants_own_jobs(busy: dict[str, object]) -> None:
    q = busy["queue"]
    with connect("tenant_a") as conn:
        stats = one(conn, "select pending, in_progress, awaiting_human, completed from ai.queue_stats(%s)", (q,))
        assert stats == (1, 0, 1, 1)
        metrics = {
            (r[0], r[1].get("state")): r[2]
            for r in conn.execute("select metric, labels, value from ai.metrics()").fetchall()
            if isinstance(r[1], dict) and r[1].get("queue") == q
        }
        assert metrics[("agent_state_jobs", "PENDING")] == 1
        assert metrics[("agent_state_jobs", "AWAITING_HUMAN")] == 1
        assert one(conn, "select sum(completed) from ai.queue_throughput(%s)", (q,)) == (1,)
    with connect("app_service") as conn:
        assert one(conn, "select pending, awaiting_human from ai.queue_stats(%s)", (q,)) == (2, 1)
        names = {r[0] for r in conn.execute("select metric from ai.metrics()")}
        assert {"agent_state_jobs", "agent_state_side_effect_takeovers"} <= names
        assert one(conn, "select sum(completed) from ai.queue_throughput(%s)", (q,)) == (1,)
        assert one(conn, "select count(*) from ai.job_key_status(%s)", (q,)) == (2,)
        conn.execute("select * from ai.archive_backlog()")
        conn.execute("select * from ai.list_workers()")
        conn.execute("select * from ai.session_status_counts()")
        conn.execute("select ai.reap_expired(%s)", (q,))
    with connect("tenant_a") as conn:
        assert one(conn, "select count(*) from ai.job_key_status(%s)", (q,)) == (1,)


def test_a_threads_page_reads_its_jobs_with_its_rows(busy: dict[str, object]) -> None:
    """What the console's thread view and `agent-state show` call for one thread."""
    a, jobs = busy["a"], busy["jobs"]
    assert isinstance(jobs, list)
    with connect("tenant_a") as conn:
        items = conn.execute("select item, ref from ai.session_timeline(%s)", (a,)).fetchall()
        assert [r for r in items if r[0] == "job"] == [("job", str(j)) for j in jobs]
        newest = conn.execute("select item, ref from ai.session_timeline_newest(%s)", (a,)).fetchall()
        assert newest == list(reversed(items))
        assert one(conn, "select ai.session_timeline_total(%s)", (a,)) == (len(items),)
        assert one(conn, "select run_status from ai.thread_run_status(%s)", ([a],)) == ("waiting",)
        assert conn.execute("select * from ai.list_forks(%s)", (a,)).fetchall() == []
        assert [r[0] for r in conn.execute("select job_id from ai.list_jobs(thread_id => %s)", (a,))] == sorted(
            jobs, reverse=True
        )
        assert sqlstate_of(conn, "select * from ai.session_timeline(%s)", (busy["b"],)) == "AS001"


# 5. NOTIFY reaches a listener on the coordinator -------------------------------------------------------


def heard(listener: psycopg.Connection[Row], channel: str) -> bool:
    """Whether a notification on channel arrived, waiting at most 5 s."""
    return any(n.channel == channel for n in listener.notifies(timeout=5, stop_after=1))


def test_a_listener_on_the_coordinator_hears_the_queue_and_the_streams() -> None:
    t, q = session(), queue_name()
    with connect("app_service") as listener:
        channel = str(one(listener, "select ai.queue_channel(%s)", (q,))[0])
        listener.execute(sql.SQL("listen {}").format(sql.Identifier(channel)))
        job = enqueue(t, q)
        assert heard(listener, channel), "enqueue_job"
        token = hold(job, q)
        with connect("app_service") as conn:
            conn.execute("select ai.release_job(%s, %s)", (job, token))
        assert heard(listener, channel), "release_job"
        token = hold(job, q)
        with connect("app_service") as conn:
            conn.execute("select ai.request_human(%s, %s, 'cp-1')", (job, token))
        with connect("tenant_a") as conn:
            conn.execute("select ai.resolve_human(%s, 'cp-1', '{}')", (t,))
        assert heard(listener, channel), "resolve_human"
        with connect("app_service") as conn:
            conn.execute("select ai.enqueue_jobs(%s, %s, %s)", ([t], [Jsonb({})], q))
        assert heard(listener, channel), "enqueue_jobs"
    with connect("tenant_a") as listener:
        channel = str(one(listener, "select channel from ai.open_stream(%s, 'k')", (t,))[0])
        listener.execute(sql.SQL("listen {}").format(sql.Identifier(channel)))
        with connect("tenant_a") as conn:
            conn.execute("select ai.append_stream_chunks(%s, 'k', 1, %s)", (t, ["a", "b"]))
        assert heard(listener, channel), "append_stream_chunks"


def test_no_function_delegated_to_a_worker_raises_a_notify() -> None:
    """A function Citus runs on the worker that holds the thread (create_distributed_function with
    a distribution argument) would NOTIFY that worker's listeners, which no client listens to:
    every NOTIFY of the schema is raised by a function that runs on the coordinator."""
    with connect("postgres") as conn:
        delegated = conn.execute("""
            select p.oid::regprocedure::text from pg_dist_object o join pg_proc p on p.oid = o.objid
             where o.classid = 'pg_proc'::regclass and o.distribution_argument_index is not null
               and p.pronamespace = 'ai'::regnamespace and p.prosrc ~* '(pg_notify|\\mnotify\\M)'""").fetchall()
    assert delegated == []


# Each write of the human in the loop reaches the thread's one shard ------------------------------------


def remote_commands(role: str, query: str, params: tuple[object, ...]) -> list[str]:
    """The commands the coordinator sends to the workers for one call (citus.log_remote_commands)."""
    with connect(role) as conn:
        conn.execute("set citus.log_remote_commands = on")
        conn.execute("set client_min_messages = log")
        sent: list[str] = []
        conn.add_notice_handler(lambda d: sent.append(d.message_primary or ""))
        conn.execute(query, params)
    return [c for c in sent if c.startswith("issuing")]


def test_the_human_in_the_loop_writes_one_shard() -> None:
    """request_human, resolve_human and the cancel of a waiting job write the coordinator's job row
    and the thread's one shard: no statement goes to every shard (resolve_human's approval by its id
    alone did, with a PREPARE TRANSACTION on each of four connections). Those that write the job
    prepare that one worker (two-phase commit with the coordinator: tests/citus/test_two_phase.py);
    set_session_status writes the shard alone and prepares nothing."""
    t, q = session(), queue_name()
    job = enqueue(t, q)
    calls: list[tuple[str, str, Callable[[], tuple[object, ...]]]] = [
        ("app_service", "select ai.request_human(%s, %s, 'cp-1')", lambda: (job, hold(job, q))),
        ("tenant_a", "select ai.resolve_human(%s, 'cp-1', '{}')", lambda: (t,)),
        ("app_service", "select ai.request_human(%s, %s, 'cp-1')", lambda: (job, hold(job, q))),
        ("tenant_a", "select ai.cancel_job(%s)", lambda: (job,)),
        ("tenant_a", "select ai.set_session_status(%s, 'completed')", lambda: (t,)),
        ("tenant_a", "select ai.delete_thread(%s)", lambda: (t,)),
    ]
    for role, query, params in calls:
        sent = remote_commands(role, query, params())
        prepared = [c for c in sent if "PREPARE TRANSACTION" in c]
        assert len(prepared) == (0 if "set_session_status" in query else 1), (query, sent)
