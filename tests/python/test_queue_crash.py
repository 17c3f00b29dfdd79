"""Crash test with real processes: workers killed with SIGKILL mid-job, others frozen with
SIGSTOP past their one-second lease and resumed (zombies). At the end every job is COMPLETED
exactly once, none is lost, the side-effect table written through fenced_write holds exactly one
row per job (the one written under the job's final fencing token), and zombies' writes were
refused. Bounded: it gives up after CRASH_TEST_SECONDS (default 90) and always cleans up."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from agent_state import Client

HERE = Path(__file__).resolve().parent
JOBS = int(os.environ.get("CRASH_TEST_JOBS", "2000"))
PROCESSES = 3
DEADLINE = float(os.environ.get("CRASH_TEST_SECONDS", "90"))


def _spawn(dsn: str, queue: str, table: str, logdir: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "python"), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, str(HERE / "queue_crash_worker.py"), dsn, queue, table, str(logdir)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def test_sigkill_and_sigstop_zombies_never_double_fire(
    dsn: str, role_dsn: Callable[[str], str], tmp_path: Path
) -> None:
    rng = random.Random(int(os.environ.get("CRASH_TEST_SEED", "0")) or None)
    queue, table = f"crash-{uuid.uuid4().hex[:8]}", f"crash_effects_{uuid.uuid4().hex[:8]}"
    service = role_dsn("app_service")
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"create table public.{table} (job_id bigint not null, token bigint not null, pid int not null)")
        admin.execute(f"grant insert, select on public.{table} to app_service")
    with psycopg.connect(service, autocommit=True) as conn:
        client = Client(conn)
        threads = [f"crash-{uuid.uuid4()}" for _ in range(200)]
        with conn.transaction():
            for t in threads:
                client.create_session(t)
            for i in range(JOBS):
                client.enqueue_job(threads[i % len(threads)], {"n": i}, queue=queue, max_attempts=1000)

    procs = [_spawn(service, queue, table, tmp_path) for _ in range(PROCESSES)]
    kills = stops = 0
    start = time.monotonic()
    try:
        with psycopg.connect(
            dsn, autocommit=True, prepare_threshold=None
        ) as conn:  # the observer: the superuser reads the tables
            while time.monotonic() - start < DEADLINE:
                left = conn.execute(
                    "select count(*) from ai.agent_jobs where queue = %s and status <> 'COMPLETED'", (queue,)
                ).fetchone()
                if left is not None and left[0] == 0:
                    break
                time.sleep(rng.uniform(0.2, 0.5))
                victim = rng.randrange(len(procs))
                freeze = stops == 0 or (kills > 0 and rng.random() < 0.5)
                if freeze:
                    # Freeze a process that holds jobs right now (worker ids carry the pid), so a
                    # zombie really wakes up with work in hand; a process still starting holds none.
                    holders = {
                        int(r[0])
                        for r in conn.execute(
                            "select distinct split_part(lease_owner, ':', 2) from ai.agent_jobs"
                            " where queue = %s and status = 'IN_PROGRESS'",
                            (queue,),
                        )
                    }
                    busy = [i for i, p in enumerate(procs) if p.pid in holders]
                    if not busy:
                        continue
                    victim = rng.choice(busy)
                if not freeze:
                    procs[victim].send_signal(signal.SIGKILL)
                    procs[victim].wait()
                    procs[victim] = _spawn(service, queue, table, tmp_path)
                    kills += 1
                else:
                    procs[victim].send_signal(signal.SIGSTOP)
                    time.sleep(rng.uniform(1.3, 2.0))  # past the one-second lease
                    procs[victim].send_signal(signal.SIGCONT)
                    stops += 1
            elapsed = time.monotonic() - start
            # let the last zombie wake up and try its writes
            time.sleep(1.5)
            jobs: dict[int, Any] = {
                r[0]: r[1:]
                for r in conn.execute(
                    "select job_id, status, fencing_token, result from ai.agent_jobs where queue = %s", (queue,)
                )
            }
            effects = conn.execute(f"select job_id, token, pid from public.{table}").fetchall()
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()

    assert elapsed < DEADLINE, f"not all jobs completed within {DEADLINE} s"
    assert kills > 0 and stops > 0
    assert len(jobs) == JOBS and all(status == "COMPLETED" for status, _, _ in jobs.values()), "no job lost"
    per_job: dict[int, list[tuple[int, int]]] = {}
    for job_id, token, pid in effects:
        per_job.setdefault(job_id, []).append((token, pid))
    assert sorted(per_job) == sorted(jobs), "a side effect for every job"
    doubles = {j: rows for j, rows in per_job.items() if len(rows) != 1}
    assert not doubles, f"jobs whose side effect happened more than once: {list(doubles.items())[:5]}"
    for job_id, [(token, pid)] in per_job.items():
        _, final_token, result = jobs[job_id]
        assert token == final_token, "the one side effect was written under the job's final token"
        assert result == {"pid": pid}, "by the process that completed it"
    rejected = [line.split() for f in tmp_path.glob("rejected-*.log") for line in f.read_text().splitlines()]
    assert rejected, "zombies tried to write after losing their lease, and were refused"
    for job_id, token in rejected:
        assert int(token) < jobs[int(job_id)][1], "a refused write always held a stale token"
