"""What the fence and the claim's thread lock cost a worker, per job, one client: claim_job +
complete_job alone; with one checkpoint written in its own transaction between them, unfenced;
and the same checkpoint fenced (job_id and fencing_token given: ai.fenced_write runs, and the
fence is checked again at commit). Two figures each: backend CPU (schedstat nanoseconds of the
serving backend, asynchronous commit, as in cpu_per_job.py: medians and minimums of interleaved
runs) and WAL bytes per job (pg_current_wal_insert_lsn before and after; steady on a busy machine,
as long as nothing else writes to the cluster meanwhile).

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
    " step_commit => row(%s, %s, 'sync')::ai.step_commit)"
)
LSN = "select pg_current_wal_insert_lsn()"
VARIANTS = ("claim + complete", "claim + put + complete", "claim + fenced put + complete")


def _loop(conn: psycopg.Connection[Any], variant: str, loops: int) -> int:
    done = 0
    for _ in range(loops):
        for job_id, token, thread in conn.execute(CLAIM_ONE, prepare=True).fetchall():
            if variant != VARIANTS[0]:
                fenced = variant == VARIANTS[2]
                with conn.transaction():
                    conn.execute(PUT, (thread, job_id if fenced else None, token if fenced else None), prepare=True)
            conn.execute(COMPLETE_ONE, (job_id, token), prepare=True)
            done += 1
    return done


def measure(admin: psycopg.Connection[Any], worker_dsn: str, fill_sql: str, variant: str) -> tuple[float, float]:
    loops = 1000
    _fill(admin, fill_sql, loops + 20)
    with psycopg.connect(worker_dsn, autocommit=True) as conn:
        conn.execute("set synchronous_commit = off")
        pid = conn.execute("select pg_backend_pid()").fetchone()[0]  # type: ignore[index]
        _loop(conn, variant, 20)  # plans cached, functions compiled
        lsn = admin.execute(LSN).fetchone()[0]  # type: ignore[index]
        start = _cpu(pid)
        done = _loop(conn, variant, loops)
        cpu = (_cpu(pid) - start) / done * 1e6
        wal = admin.execute("select pg_current_wal_insert_lsn() - %s::pg_lsn", (lsn,)).fetchone()[0]  # type: ignore[index]
        return cpu, float(wal) / done


def main() -> None:
    admin_dsn, worker_dsn, fill_path, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    fill_sql = Path(fill_path).read_text()
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        got: dict[str, list[tuple[float, float]]] = {v: [] for v in VARIANTS}
        for _ in range(repeats):
            for variant in VARIANTS:
                got[variant].append(measure(admin, worker_dsn, fill_sql, variant))
        for variant in VARIANTS:
            cpu = [c for c, _ in got[variant]]
            wal = [w for _, w in got[variant]]
            print(f"{variant:32} {statistics.median(cpu):8.1f} {min(cpu):8.1f} {statistics.median(wal):8.0f}")


if __name__ == "__main__":
    main()
