"""A lease across a promotion (issue 41 item 2; docs/queue.md, "Leases and outages").

A job is claimed with a 5 s lease, shorter than an unplanned failover takes, by a Worker whose
handler is still running when the primary is killed (SIGKILL of its keeper and postmaster) and the
standby promoted. Another Worker serves the same queue all along. Its lease ran out while no
primary could be reached, as after a restart: the holder reconnects through the multi-host URL
and completes it with its token. The job ran once, in attempt 1, and is COMPLETED by its holder.
(Before: the other Worker's first claim on the new primary took it, attempt 2, and ran it again.)

The other Worker first completes a job enqueued after the promotion, so its claims have reached
the new primary (a claim takes a lease that ran out before a due job: the held job would have been
taken first) before the holder's handler is let go. The old primary rejoins at the end, so the
formation is healthy for the next test. Every wait is bounded.
"""

from __future__ import annotations

import signal
import subprocess
import time
import uuid
from pathlib import Path

import psycopg
from formation import HA_DIR, PORT, ha, healthy, primary_port, spawn_worker, url, wait

from agent_state import Client

HERE = Path(__file__).resolve().parent
LEASE = 5.0  # ha_worker.LEASE
FAILOVER_SECONDS = 180


def _runs(logdir: Path, job_id: int) -> list[tuple[int, int]]:
    """(fencing token, pid) of each run of the job's handler."""
    path = logdir / "runs.log"
    if not path.exists():
        return []
    found = []
    for line in path.read_text().splitlines():
        job, token, pid = (int(x) for x in line.split())
        if job == job_id:
            found.append((token, pid))
    return found


def _job(job_id: int) -> tuple[str, int, int, object] | None:
    """status, attempts, fencing_token, result of the job, read on the primary."""
    with psycopg.connect(url("postgres"), autocommit=True) as admin:
        row = admin.execute(
            "select status, attempts, fencing_token, result from ai.agent_jobs where job_id = %s", (job_id,)
        ).fetchone()
    return None if row is None else (str(row[0]), int(row[1]), int(row[2]), row[3])


def _writable() -> bool:
    with psycopg.connect(url("postgres", connect_timeout=1), autocommit=True) as conn:
        row = conn.execute("select not pg_is_in_recovery()").fetchone()
    return bool(row and row[0])


def _enqueue(thread: str, queue: str, payload: dict[str, object]) -> int:
    with psycopg.connect(url("tenant_a"), autocommit=True) as conn:
        client = Client(conn)
        client.create_session(thread)
        return int(client.enqueue_job(thread, payload, queue).job_id)


def test_a_lease_that_ran_out_during_an_unplanned_failover_is_completed_by_its_holder_in_one_attempt() -> None:
    start = time.monotonic()
    wait(healthy, 120, "a healthy formation")
    run = uuid.uuid4().hex[:8]
    logdir = HA_DIR / "logs" / f"promotion-{run}"
    logdir.mkdir(parents=True, exist_ok=True)
    queue, service = f"ha-p-{run}", url("app_service")
    held = _enqueue(f"ha-p-held-{run}", queue, {"hold": True})
    workers = [spawn_worker(["hold", service, queue, str(logdir)], logdir, "holder")]
    victim = 0
    try:
        wait(lambda: len(_runs(logdir, held)) == 1, 60, "the holder's handler started")
        [(token, holder_pid)] = _runs(logdir, held)
        workers.append(spawn_worker(["hold", service, queue, str(logdir)], logdir, "other"))
        before = _enqueue(f"ha-p-before-{run}", queue, {})
        wait(lambda: (_job(before) or ("",))[0] == "COMPLETED", 60, "the other worker completed a job")

        victim = primary_port() - PORT
        t0 = time.monotonic()
        ha("kill", str(victim))
        writable = wait(_writable, FAILOVER_SECONDS, "a writable primary after the kill")
        assert writable - t0 > LEASE, "the failover must outlast the lease for this test to mean anything"
        after = _enqueue(f"ha-p-after-{run}", queue, {})

        def claimed_on_the_new_primary() -> bool:
            # the other worker completed a job there, or (the rule broken) took the held one first
            return (_job(after) or ("",))[0] == "COMPLETED" or len(_runs(logdir, held)) > 1

        done = wait(claimed_on_the_new_primary, 60, "a job completed on the new primary")
        (logdir / "go").touch()  # the holder's handler returns: the Worker completes with its token
        completed = wait(lambda: (_job(held) or ("",))[0] == "COMPLETED", 60, "the held job completed")

        state = _job(held)
        assert state is not None
        status, attempts, final_token, result = state
        runs = _runs(logdir, held)
        print(
            f"\nkill -> writable {writable - t0:.1f} s (lease {LEASE:.0f} s); writable -> a job of the other"
            f" worker completed {done - writable:.1f} s; -> the held job completed {completed - done:.1f} s;"
            f" runs {runs}, attempts {attempts}, token {token} -> {final_token}; {time.monotonic() - start:.0f} s"
        )
        assert runs == [(token, holder_pid)], f"the handler ran again: {runs}"
        assert (status, attempts, final_token) == ("COMPLETED", 1, token), state
        assert isinstance(result, dict) and result.get("pid") == holder_pid, f"completed by its holder: {result}"
    finally:
        for w in workers:
            if w.poll() is None:
                w.send_signal(signal.SIGTERM)
        for w in workers:
            try:
                w.wait(20)
            except subprocess.TimeoutExpired:
                w.kill()
        if victim:
            ha("start", str(victim))
            wait(healthy, FAILOVER_SECONDS, "the old primary rejoined")
