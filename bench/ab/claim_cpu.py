"""Backend CPU per claim_job + complete_job, base schema against this tree's, paired (issue 20
item 5). Each round fills N due jobs (bench/queue/fill.sql; bench/queue/setup.sql run first) with
RUNNING other jobs of the queue held IN_PROGRESS (the new claim's expired-lease probe reads them),
then claims and completes them one by one on one connection (synchronous_commit off).
Usage: python bench/ab/claim_cpu.py DSN_BASE DSN_HEAD [N] [RUNNING] [ROUNDS]   (superuser DSNs)"""

from __future__ import annotations

import pathlib
import subprocess
import sys
from typing import Any

import psycopg

HERE = pathlib.Path(__file__).resolve().parent.parent


def cpu_ns(pid: int) -> int:
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def psql(dsn: str, *args: str) -> None:
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", dsn, *args], check=True, capture_output=True)


def one(dsn: str, n: int, running: int) -> float:
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(
            "update ai.agent_jobs set status = 'COMPLETED', finished_at = now(), lease_owner = null,"
            " lease_expires_at = null where queue = 'bench' and status in ('IN_PROGRESS', 'PENDING')"
        )
    if running:
        psql(dsn, "-v", f"n={running}", "-f", str(HERE / "queue/fill.sql"))
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("set role bench_worker")
            c.execute("select count(*) from ai.claim_jobs('holder', '1 hour', 'bench', %s)", (running,))
    psql(dsn, "-v", f"n={n}", "-f", str(HERE / "queue/fill.sql"))
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("set synchronous_commit = off")
        c.execute("set role bench_worker")
        pid = c.info.backend_pid
        t0, done = cpu_ns(pid), 0
        for _ in range(n):
            row: Any = c.execute(
                "select job_id, fencing_token from ai.claim_job('w', '60 seconds', 'bench')"
            ).fetchone()
            if row is None:
                break
            c.execute("select 1 from ai.complete_job(%s, %s)", row)
            done += 1
        return (cpu_ns(pid) - t0) / max(done, 1) / 1e3


if __name__ == "__main__":
    base, head = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    running = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    for dsn in (base, head):
        psql(dsn, "-f", str(HERE / "queue/setup.sql"))
    print(f"claim+complete backend CPU us, {running} running jobs in the queue")
    print(f"{'round':6} {'base':>8} {'head':>8}")
    for r in range(rounds):
        print(f"{r + 1:<6} {one(base, n, running):8.1f} {one(head, n, running):8.1f}")
