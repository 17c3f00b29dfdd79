"""Per call, one connection, paired A/B: the fenced append, a plain INSERT, a lease renewal (its
HOT share), begin+finish side effect, fenced_write twice in one transaction. Prints the backend's
CPU microseconds per call (/proc/<pid>/schedstat; synchronous_commit off, so the loop is not
paced by fsync) and WAL bytes per call (pg_current_wal_lsn difference, the loop's own statements
included).
Usage: python bench/ab/fence_per_call.py DSN_BASE DSN_HEAD [N]   (superuser DSNs of two databases)
The base schema has no fenced append signature: there the fenced append is BEGIN; fenced_write;
append; COMMIT (what a 0.1.0 worker sends)."""

from __future__ import annotations

import sys
import time
import uuid
from typing import Any

import psycopg


def lsn(c: psycopg.Connection[Any]) -> int:
    return c.execute("select pg_current_wal_lsn() - '0/0'::pg_lsn").fetchone()[0]  # type: ignore[index]


def setup(c: psycopg.Connection[Any]) -> tuple[str, int, int]:
    c.execute("set synchronous_commit = off")
    c.execute(
        "create table if not exists public.plain_insert"
        " (thread_id text, seq bigint, content jsonb, primary key (thread_id, seq))"
    )
    t = f"ab-{uuid.uuid4()}"
    q = f"abq-{uuid.uuid4().hex[:8]}"
    c.execute("set role tenant_a")
    c.execute("select ai.create_session(%s)", (t,))
    c.execute("select ai.enqueue_job(%s, queue => %s)", (t, q))
    c.execute("set role app_service")
    j, tok = c.execute("select job_id, fencing_token from ai.claim_job('ab', '1 hour', %s)", (q,)).fetchone()  # type: ignore[misc]
    return t, j, tok


def cpu_ns(pid: int) -> int:
    """The backend's CPU time so far (/proc/<pid>/schedstat: the server runs on this machine)."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def measure(c: psycopg.Connection[Any], label: str, fn: Any, n: int) -> tuple[float, float]:
    """(backend CPU microseconds, WAL bytes) per call."""
    pid = c.info.backend_pid
    for _ in range(50):
        fn()
    w0, t0 = lsn(c), cpu_ns(pid)
    for _ in range(n):
        fn()
    t1, w1 = cpu_ns(pid), lsn(c)
    return (t1 - t0) / n / 1e3, (w1 - w0) / n


def run(dsn: str, n: int, fenced_one_call: bool) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    with psycopg.connect(dsn, autocommit=True) as c:
        t, j, tok = setup(c)
        i = [0]

        def plain() -> None:
            i[0] += 1
            c.execute("reset role")
            c.execute("insert into public.plain_insert values (%s, %s, %s)", (t, i[0], '"x"'))
            c.execute("set role app_service")

        def append() -> None:
            i[0] += 1
            if fenced_one_call:
                c.execute(
                    "select ai.append_message_idempotent(%s, 'assistant', %s, job_id => %s, fencing_token => %s)",
                    (t, f'"m{i[0]}"', j, tok),
                )
            else:
                with c.transaction():
                    c.execute("select ai.fenced_write(%s, %s)", (j, tok))
                    c.execute("select ai.append_message_idempotent(%s, 'assistant', %s)", (t, f'"m{i[0]}"'))

        def renew() -> None:
            c.execute("select ai.renew_lease(%s, %s, '1 hour')", (j, tok))

        def twice() -> None:
            with c.transaction():
                c.execute("select ai.fenced_write(%s, %s)", (j, tok))
                c.execute("select ai.fenced_write(%s, %s)", (j, tok))

        def side_effect() -> None:
            i[0] += 1
            k = f"se-{i[0]}-{uuid.uuid4().hex[:6]}"
            c.execute("select ai.begin_side_effect(%s, %s, '{}', %s, %s)", (t, k, j, tok))
            c.execute("select ai.finish_side_effect(%s, %s, '{\"ok\": true}', %s, %s)", (t, k, j, tok))

        # plain insert measured without the role switches' cost: subtract a role-switch-only loop
        def roles() -> None:
            c.execute("reset role")
            c.execute("set role app_service")

        r = measure(c, "roles", roles, n)
        p = measure(c, "plain", plain, n)
        out["plain INSERT (one row, PK)"] = (p[0] - r[0], p[1] - r[1])
        out["fenced append"] = measure(c, "append", append, n)
        c.execute("reset role")
        h0 = c.execute(
            "select n_tup_upd, n_tup_hot_upd from pg_stat_user_tables where relid = 'ai.agent_jobs'::regclass"
        ).fetchone()
        c.execute("set role app_service")
        out["renew_lease"] = measure(c, "renew", renew, n)
        c.execute("reset role")
        time.sleep(0.6)  # stats flush (PG 15 reports at most every 0.5 s... of an idle backend)
        c.execute("select pg_stat_force_next_flush()")
        h1 = c.execute(
            "select n_tup_upd, n_tup_hot_upd from pg_stat_user_tables where relid = 'ai.agent_jobs'::regclass"
        ).fetchone()
        out["renew HOT share"] = ((h1[1] - h0[1]) / max(1, h1[0] - h0[0]), 0.0)  # type: ignore[index]
        c.execute("set role app_service")
        out["fenced_write twice in one tx"] = measure(c, "twice", twice, n)
        try:
            out["begin+finish side effect"] = measure(c, "se", side_effect, n // 2)
        except psycopg.Error as e:
            print("side effect:", e, file=sys.stderr)
    return out


if __name__ == "__main__":
    base, head = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    rb = run(base, n, False)
    rh = run(head, n, True)
    print(f"{'per call':32} {'base CPU':>9} {'head CPU':>9} {'base WAL':>9} {'head WAL':>9}")
    for k in rb:
        b, h = rb[k], rh.get(k, (0.0, 0.0))
        print(f"{k:32} {b[0]:9.1f} {h[0]:9.1f} {b[1]:9.0f} {h[1]:9.0f}")
