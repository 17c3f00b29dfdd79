"""Human in the loop from Python, with real processes: a worker pauses a job for a person and
exits; three days later (the database clock, moved with ai.frozen_now) the owner resolves it; a
new process claims the job and resumes with the decision (the same through LangGraph's own
interrupt() / Command(resume=...): test_graph_runs.py, durable graph runs). Plus the client
calls and their errors. Bounded: each process is given at most 60 seconds."""

from __future__ import annotations

import asyncio
import json
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
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from agent_state import (
    AlreadyResolved,
    AsyncClient,
    AsyncJobContext,
    AsyncWorker,
    Client,
    Job,
    JobContext,
    NotWaiting,
    PermissionDenied,
    SideEffectCall,
    StaleCheckpoint,
    Worker,
    human_decision,
)

pytestmark = pytest.mark.session_features("the frozen clock ai.frozen_now is a session setting (set_config, PGOPTIONS)")

HERE = Path(__file__).resolve().parent


def _run_worker(dsn: str, queue: str, frozen: str) -> list[dict[str, Any]]:
    """Runs one worker process to completion (it drains the queue and exits); its JSON lines."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "python"), env.get("PYTHONPATH", "")])
    env["PGOPTIONS"] = f"-c ai.frozen_now={frozen}"  # the process's database clock
    done = subprocess.run(
        [sys.executable, str(HERE / "hitl_worker.py"), dsn, queue],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return [json.loads(line) for line in done.stdout.decode().splitlines() if line.startswith("{")]


def _as(role_dsn: Callable[[str], str], role: str, frozen: str) -> psycopg.Connection[Any]:
    conn = psycopg.connect(role_dsn(role), autocommit=True)
    conn.execute("select set_config('ai.frozen_now', %s, false)", (frozen,))
    return conn


DAY0, DAY3 = "2030-01-01T00:00:00Z", "2030-01-04T00:00:00Z"


def test_a_person_resolves_three_days_after_the_pausing_worker_is_gone(role_dsn: Callable[[str], str]) -> None:
    queue, thread = f"hitl-{uuid.uuid4().hex[:8]}", f"hitl-{uuid.uuid4()}"
    with _as(role_dsn, "tenant_a", DAY0) as conn:
        tenant = Client(conn)
        tenant.create_session(thread)
        job = tenant.enqueue_job(thread, {"task": "refund"}, queue=queue)

    [paused] = _run_worker(role_dsn("app_service"), queue, DAY0)  # the process has exited

    with _as(role_dsn, "tenant_a", DAY3) as conn:
        tenant = Client(conn)
        assert tenant.get_job(job.job_id).status == "AWAITING_HUMAN"
        assert tenant.get_session(thread).status == "waiting"
        [waiting] = [a for a in tenant.pending_approvals() if a.thread_id == thread]
        assert waiting.approval_id == paused["paused"] and waiting.action == {"refund": 30}
        approval = tenant.resolve_human(thread, "step-1", {"approved": True, "note": "ok"})
        assert approval.decided_by == "tenant_a" and approval.decided_at.year == 2030 and approval.decided_at.day == 4
        with pytest.raises(AlreadyResolved):
            tenant.resolve_human(thread, "step-1", {"approved": False})

    [] = _run_worker(role_dsn("app_service"), queue, DAY3)
    with _as(role_dsn, "tenant_a", DAY3) as conn:
        finished = Client(conn).get_job(job.job_id)
        assert finished.status == "COMPLETED" and finished.attempts == 1
        assert finished.result["decision"] == {"approved": True, "note": "ok"}
        assert finished.result["resumed_by"] != paused["pid"], "another process resumed it"
        kinds = [e.kind for e in Client(conn).get_events(thread)]
        assert kinds.count("pending_approval") == 1 and kinds.count("human_resolved") == 1


def test_resolve_errors_change_nothing(role_dsn: Callable[[str], str]) -> None:
    queue, thread = f"hitl-{uuid.uuid4().hex[:8]}", f"hitl-{uuid.uuid4()}"
    with _as(role_dsn, "tenant_a", DAY0) as a, _as(role_dsn, "app_service", DAY0) as s:
        tenant, service = Client(a), Client(s)
        tenant.create_session(thread)
        with pytest.raises(NotWaiting):
            tenant.resolve_human(thread, "c1", {})
        job = tenant.enqueue_job(thread, {}, queue=queue)
        claimed = service.claim_job("w", queue=queue)
        assert claimed is not None and claimed.job_id == job.job_id
        service.request_human(claimed.job_id, claimed.fencing_token, "c1", {"x": 1})
        with pytest.raises(PermissionDenied):
            service.resolve_human(thread, "c1", {})
        with pytest.raises(StaleCheckpoint):
            tenant.resolve_human(thread, "c0", {})
        with service.acting_as("tenant_a") as acting:
            assert acting.resolve_human(thread, "c1", {"ok": True}).decided_for == "tenant_a"
        assert tenant.get_job(job.job_id).payload["human"]["decision"] == {"ok": True}


def test_workers_pause_and_resume_with_side_effects_sync_and_async(role_dsn: Callable[[str], str]) -> None:
    """ctx.side_effect and ctx.request_human in a Worker and an AsyncWorker: the charge made before
    the pause is not made again after the resume, and the stats count the pause."""

    queue, thread = f"hitl-{uuid.uuid4().hex[:8]}", f"hitl-{uuid.uuid4()}"
    service = role_dsn("app_service")
    charges: list[str] = []

    def handler(job: Job, ctx: JobContext) -> Any:
        @ctx.side_effect("charge", job.job_id)
        def charge(call: SideEffectCall) -> dict[str, Any]:
            charges.append(call.key)
            return {"charged": len(charges)}

        receipt = charge()
        human = human_decision(job.payload)
        if human is None:
            ctx.request_human("c1", {"receipt": receipt})
            return None
        return {"receipt": receipt, "decision": human["decision"]}

    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        tenant = Client(conn)
        tenant.create_session(thread)
        job = tenant.enqueue_job(thread, {}, queue=queue)
        with ConnectionPool(service, min_size=1, max_size=4, kwargs={"autocommit": True}) as pool:
            first = Worker(pool, handler, queue, concurrency=1, lease=timedelta(seconds=30), poll_interval=0.05)
            assert first.run(drain=True, install_signal_handlers=False).paused == 1
            tenant.resolve_human(thread, "c1", {"go": True})
            second = Worker(pool, handler, queue, concurrency=1, lease=timedelta(seconds=30), poll_interval=0.05)
            assert second.run(drain=True, install_signal_handlers=False).completed == 1
        assert tenant.get_job(job.job_id).result == {"receipt": {"charged": 1}, "decision": {"go": True}}
        assert len(charges) == 1, "the charge made before the pause was not made again"

        # the same with the async worker and the async client methods
        thread2 = f"hitl-{uuid.uuid4()}"
        tenant.create_session(thread2)
        job2 = tenant.enqueue_job(thread2, {}, queue=queue)
        async_charges: list[str] = []

        async def ahandler(job: Job, ctx: AsyncJobContext) -> Any:
            async def charge(call: SideEffectCall) -> dict[str, Any]:
                async_charges.append(call.key)
                return {"charged": len(async_charges)}

            receipt = await ctx.side_effect("charge", job.job_id).arun(charge)
            human = human_decision(job.payload)
            if human is None:
                await ctx.request_human("c1", {"receipt": receipt})
                return None
            return {"receipt": receipt, "decision": human["decision"]}

        async def scenario() -> None:
            async with AsyncConnectionPool(service, min_size=1, max_size=4, kwargs={"autocommit": True}) as apool:
                stats = await AsyncWorker(apool, ahandler, queue, concurrency=1, poll_interval=0.05).run(
                    drain=True, install_signal_handlers=False
                )
                assert stats.paused == 1
                aclient = AsyncClient(apool)
                [pending] = [a for a in await aclient.pending_approvals() if a.thread_id == thread2]
                assert pending.action == {"receipt": {"charged": 1}}
                assert (await aclient.get_approval(pending.approval_id)).status == "pending"
                async with aclient.acting_as("tenant_a") as acting:
                    assert (await acting.resolve_human(thread2, "c1", {"go": 2})).decided_for == "tenant_a"
                stats = await AsyncWorker(apool, ahandler, queue, concurrency=1, poll_interval=0.05).run(
                    drain=True, install_signal_handlers=False
                )
                assert stats.completed == 1

        asyncio.run(scenario())
        assert tenant.get_job(job2.job_id).result == {"receipt": {"charged": 1}, "decision": {"go": 2}}
        assert len(async_charges) == 1


def _waiting_job(role_dsn: Callable[[str], str], tag: str) -> tuple[str, int, str]:
    """A fresh thread of tenant_a whose job waits for a person at checkpoint c1."""
    queue, thread = f"{tag}-{uuid.uuid4().hex[:8]}", f"{tag}-{uuid.uuid4()}"
    with _as(role_dsn, "tenant_a", DAY0) as a, _as(role_dsn, "app_service", DAY0) as s:
        Client(a).create_session(thread)
        job = Client(a).enqueue_job(thread, {}, queue=queue)
        claimed = Client(s).claim_job("w", queue=queue)
        assert claimed is not None and claimed.job_id == job.job_id
        approval_id = Client(s).request_human(claimed.job_id, claimed.fencing_token, "c1", {"x": 1})
    return thread, job.job_id, approval_id


def test_cancelling_a_waiting_job_cancels_its_approval_and_the_session_is_active_again(
    role_dsn: Callable[[str], str],
) -> None:
    thread, job_id, approval_id = _waiting_job(role_dsn, "hitl-cancel")
    with _as(role_dsn, "tenant_a", DAY3) as conn:
        tenant = Client(conn)
        assert [a.approval_id for a in tenant.pending_approvals() if a.thread_id == thread] == [approval_id]
        assert tenant.cancel_job(job_id).status == "CANCELLED"
        approval = tenant.get_approval(approval_id)
        assert (approval.status, approval.decision, approval.decided_by) == ("cancelled", None, "tenant_a")
        assert approval.decided_at is not None and approval.decided_at.day == 4
        assert tenant.get_session(thread).status == "active"
        assert [a for a in tenant.pending_approvals() if a.thread_id == thread] == []
        with pytest.raises(NotWaiting, match=f"was cancelled with job {job_id}"):
            tenant.resolve_human(thread, "c1", {"approved": True})
        kinds = [e.kind for e in tenant.get_events(thread)]
        assert kinds.count("approval_cancelled") == 1 and "human_resolved" not in kinds


def _wait_until_blocked(watcher: psycopg.Connection[Any], pid: int) -> None:
    """Until the backend pid waits for a lock (at most 10 seconds)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        row = watcher.execute("select wait_event_type from pg_stat_activity where pid = %s", (pid,)).fetchone()
        if row and row[0] == "Lock":
            return
        time.sleep(0.01)
    raise AssertionError(f"backend {pid} never waited for a lock")


@pytest.mark.parametrize("first", ["cancel", "resolve"])
def test_a_cancel_and_a_resolve_of_one_job_queue_on_the_job_and_never_deadlock(
    dsn: str, role_dsn: Callable[[str], str], first: str
) -> None:
    """The job row is held by a third transaction while a cancel and a resolve queue on it, in
    either order. Both lock the job first (then the session, then the approval), so the one
    queued first wins and the other sees its outcome. Had resolve_human locked the session and
    the approval before the job, the cancel's trigger would
    wait for the session while the resolve waits for the job: a deadlock (40P01)."""
    thread, job_id, approval_id = _waiting_job(role_dsn, "hitl-race")
    outcomes: dict[str, Any] = {}

    def run(name: str, call: Callable[[], Any]) -> None:
        try:
            outcomes[name] = call()
        except Exception as exc:  # recorded, and asserted on below
            outcomes[name] = exc

    with (
        psycopg.connect(dsn, autocommit=True) as watcher,
        psycopg.connect(dsn) as holder,
        _as(role_dsn, "tenant_a", DAY3) as canceller,
        _as(role_dsn, "tenant_a", DAY3) as resolver,
    ):
        holder.execute("select from ai.agent_jobs where job_id = %s for no key update", (job_id,))
        calls = {
            "cancel": (canceller, lambda: Client(canceller).cancel_job(job_id)),
            "resolve": (resolver, lambda: Client(resolver).resolve_human(thread, "c1", {"approved": True})),
        }
        order = [first, "resolve" if first == "cancel" else "cancel"]
        threads = []
        for name in order:
            conn, call = calls[name]
            t = threading.Thread(target=run, args=(name, call))
            t.start()
            threads.append(t)
            _wait_until_blocked(watcher, conn.info.backend_pid)
        holder.rollback()  # lets the queue go
        for t in threads:
            t.join(timeout=30)
            assert not t.is_alive()

    with _as(role_dsn, "tenant_a", DAY3) as conn:
        tenant = Client(conn)
        approval = tenant.get_approval(approval_id)
        assert tenant.get_job(job_id).status == "CANCELLED"
        assert tenant.get_session(thread).status == "active"
    if first == "cancel":
        assert isinstance(outcomes["cancel"], Job) and outcomes["cancel"].status == "CANCELLED"
        assert isinstance(outcomes["resolve"], NotWaiting), outcomes["resolve"]
        assert "was cancelled" in str(outcomes["resolve"])
        assert approval.status == "cancelled"
    else:
        assert getattr(outcomes["resolve"], "status", None) == "resolved", outcomes["resolve"]
        assert isinstance(outcomes["cancel"], Job) and outcomes["cancel"].status == "CANCELLED"
        assert approval.status == "resolved" and approval.decision == {"approved": True}
