"""Backend CPU per job of a worker that writes one checkpoint per job: claim_job, put_checkpoint
in its own transaction, complete_job; the checkpoint written unfenced and fenced (job_id and
fencing_token given, so ai.fenced_write runs and the fence is checked again at commit). The
difference is what the fence costs a worker's write. Same method as cpu_per_job.py (schedstat
nanoseconds of the serving backend, asynchronous commit, interleaved runs, medians and minimums).

    python fence_cost.py ADMIN_DSN WORKER_DSN FILL_SQL REPEATS
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

import psycopg
from cpu_per_job import _cpu, _fill

CLAIM_ONE = "select job_id, fencing_token, thread_id from ai.claim_job('w', '60 seconds', 'bench')"
COMPLETE_ONE = "select 1 from ai.complete_job(%s, %s)"
PUT = (
    "select ai.put_checkpoint(%s, '', null, null, 'msgpack', '\\x00010203'::bytea, '{}', '{}',"
    " '{}', '{}', '{}', '{}', %s, %s)"
)


def _loop(conn: psycopg.Connection[Any], fenced: bool, loops: int) -> int:
    done = 0
    for _ in range(loops):
        for job_id, token, thread in conn.execute(CLAIM_ONE, prepare=True).fetchall():
            with conn.transaction():
                conn.execute(PUT, (thread, job_id if fenced else None, token if fenced else None), prepare=True)
            conn.execute(COMPLETE_ONE, (job_id, token), prepare=True)
            done += 1
    return done


def measure(admin: psycopg.Connection[Any], worker_dsn: str, fill_sql: str, fenced: bool) -> float:
    loops = 1000
    _fill(admin, fill_sql, loops + 20)
    with psycopg.connect(worker_dsn, autocommit=True) as conn:
        conn.execute("set synchronous_commit = off")
        pid = conn.execute("select pg_backend_pid()").fetchone()[0]  # type: ignore[index]
        _loop(conn, fenced, 20)  # plans cached, functions compiled
        start = _cpu(pid)
        done = _loop(conn, fenced, loops)
        return (_cpu(pid) - start) / done * 1e6


def main() -> None:
    admin_dsn, worker_dsn, fill_path, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    fill_sql = Path(fill_path).read_text()
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        plain, fenced = [], []
        for _ in range(repeats):
            plain.append(measure(admin, worker_dsn, fill_sql, False))
            fenced.append(measure(admin, worker_dsn, fill_sql, True))
        p, f = statistics.median(plain), statistics.median(fenced)
        label = "claim + put_checkpoint + complete"
        lo_p, lo_f = min(plain), min(fenced)
        print(f"{label:36} {p:8.1f} {f:8.1f} {p / f:7.2f} | {lo_p:8.1f} {lo_f:8.1f} {lo_p / lo_f:7.2f}")


if __name__ == "__main__":
    main()
