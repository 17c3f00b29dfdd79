"""Backend CPU time per job: the functions against the bare SQL of the design, one client.

Throughput on a shared machine moves with everyone else's disk flushes; the CPU the serving
backend spends per job (nanoseconds on CPU from /proc/<pid>/schedstat, same machine only) moves
less, so it shows what fencing, the one-thread rule and RLS cost. Commits are asynchronous here
(synchronous_commit off for this session) so flush waits do not blur it. On a shared VM even that
varies by a third from run to run, so runs are interleaved and both the median and the minimum
(the run least disturbed by neighbours) are printed.

    python cpu_per_job.py ADMIN_DSN WORKER_DSN FILL_SQL REPEATS
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

import psycopg

BARE_CLAIM = """update bench_queue.jobs set status = 'IN_PROGRESS', attempts = attempts + 1, lease_owner = 'w',
  lease_expires_at = now() + interval '60 seconds', updated_at = now()
  where job_id in (select job_id from bench_queue.jobs where status = 'PENDING' and queue = 'bench' and run_at <= now()
                   order by priority desc, run_at, job_id limit %s for update skip locked) returning job_id"""
BARE_COMPLETE = """update bench_queue.jobs set status = 'COMPLETED', lease_owner = null, lease_expires_at = null,
  finished_at = now(), updated_at = now() where job_id = any(%s)"""
CLAIM_ONE = "select job_id, fencing_token from ai.claim_job('w', '60 seconds', 'bench')"
COMPLETE_ONE = "select 1 from ai.complete_job(%s, %s)"
CLAIM_MANY = "select job_id, fencing_token from ai.claim_jobs('w', '60 seconds', 'bench', %s)"
COMPLETE_MANY = "select count(*) from ai.complete_jobs(%s, %s)"


def _cpu(pid: int) -> float:
    """Seconds the process has run on a CPU (schedstat counts nanoseconds; /proc/<pid>/stat ticks)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9


def _fill(admin: psycopg.Connection[Any], fill_sql: str, n: int) -> None:
    code = "\n".join(line for line in fill_sql.splitlines() if not line.lstrip().startswith("--"))
    # statements end at a semicolon outside a $$-quoted body (fill.sql has a DO block)
    statement = ""
    for i, part in enumerate(code.replace(":n", str(n)).split("$$")):
        if i % 2:  # inside $$ ... $$
            statement += "$$" + part + "$$"
            continue
        pieces = part.split(";")
        pieces[0] = statement + pieces[0]  # the statement the $$ body is part of goes on
        for s in pieces[:-1]:
            if s.strip():
                admin.execute(s)
        statement = pieces[-1]
    if statement.strip():
        admin.execute(statement)


def _loop(conn: psycopg.Connection[Any], ours: bool, per: int, loops: int) -> int:
    done = 0
    for _ in range(loops):
        if ours and per == 1:
            rows = conn.execute(CLAIM_ONE, prepare=True).fetchall()
            for row in rows:
                conn.execute(COMPLETE_ONE, row, prepare=True)
        elif ours:
            rows = conn.execute(CLAIM_MANY, (per,), prepare=True).fetchall()
            conn.execute(COMPLETE_MANY, ([r[0] for r in rows], [r[1] for r in rows]), prepare=True)
        else:
            rows = conn.execute(BARE_CLAIM, (per,), prepare=True).fetchall()
            conn.execute(BARE_COMPLETE, ([r[0] for r in rows],), prepare=True)
        done += len(rows)
    return done


def measure(admin: psycopg.Connection[Any], worker_dsn: str, fill_sql: str, ours: bool, per: int) -> float:
    loops = 2000 if per == 1 else 100
    _fill(admin, fill_sql, loops * per + 20 * per)
    with psycopg.connect(worker_dsn, autocommit=True) as conn:
        conn.execute("set synchronous_commit = off")
        pid = conn.execute("select pg_backend_pid()").fetchone()[0]  # type: ignore[index]
        _loop(conn, ours, per, 20)  # plans cached, functions compiled
        start = _cpu(pid)
        done = _loop(conn, ours, per, loops)
        return (_cpu(pid) - start) / done * 1e6


def main() -> None:
    admin_dsn, worker_dsn, fill_path, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    fill_sql = Path(fill_path).read_text()
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        for per in (1, 100):
            bare, ours = [], []
            for _ in range(repeats):
                bare.append(measure(admin, worker_dsn, fill_sql, False, per))
                ours.append(measure(admin, worker_dsn, fill_sql, True, per))
            b, o = statistics.median(bare), statistics.median(ours)
            label = "claim_job + complete_job" if per == 1 else "claim_jobs(100) + complete_jobs"
            lo_b, lo_o = min(bare), min(ours)
            print(f"{label:32} {b:8.1f} {o:8.1f} {b / o:7.2f} | {lo_b:8.1f} {lo_o:8.1f} {lo_b / lo_o:7.2f}")


if __name__ == "__main__":
    main()
