"""Fair shares (issue 38 item 2), two figures (bench/fairness.sh makes the databases):

1. latency: another tenant's jobs, from enqueue to claim, p50 and p99, while one tenant holds
   nothing (queue fair-idle: the worker idles), 10,000 due jobs (fair-shallow: the worker is
   busy) or BACKLOG due jobs (fair-busy), each topped up before its round. One worker claims
   (claim_jobs, one job) and completes in a tight loop while tenant B enqueues a job every 20 ms.
   Rounds alternate; the medians of the rounds' p50 and p99 are printed, and their ratios. With
   BASE_DSN set, one round with the backlog on the base schema too (today's claim: B waits
   behind the backlog).
2. cpu: backend CPU per claim_jobs(1) + complete_job, base schema against head, at 1, 100 and
   10,000 keys (jobs spread round robin over the keys; base has no keys: the same jobs), paired
   and interleaved, medians of the rounds, from /proc/<backend pid>/schedstat (same host).

Usage: python bench/fairness/fairness.py latency HEAD_DSN [BASE_DSN]
       python bench/fairness/fairness.py cpu BASE_DSN HEAD_DSN
The DSNs are superuser DSNs of databases prepared by bench/fairness.sh (roles bench_worker,
bench_tenant_b; sessions bq-0..9999 of bench_worker and fb-0..99 of bench_tenant_b).
Environment: BENCH_ROUNDS (3), BENCH_SECONDS (5), FAIR_BACKLOG (100000), FAIR_CLAIMS (2000)."""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time
from typing import Any

import psycopg

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "5"))
BACKLOG = int(os.environ.get("FAIR_BACKLOG", "100000"))
CLAIMS = int(os.environ.get("FAIR_CLAIMS", "2000"))


def has_keys(c: psycopg.Connection[Any]) -> bool:
    return c.execute(
        "select exists (select from pg_attribute where attrelid = 'ai.agent_jobs'::regclass and attname = 'vtime')"
    ).fetchone()[0]  # type: ignore[index]


def fill(dsn: str, queue: str, n: int, keys: int, owner_prefix: str = "bq-") -> None:
    """n due jobs of queue over the 10,000 threads of bench_worker, key 'k' || (i % keys) and the
    vtimes enqueue would give them (head); loaded directly (RLS lifted in this transaction only)."""
    with psycopg.connect(dsn) as c:
        keyed = has_keys(c)
        c.execute("alter table ai.agent_jobs no force row level security")
        if keyed:
            c.execute(
                "insert into ai.agent_jobs (thread_id, owner, queue, run_at, created_at, updated_at, key, vtime)"
                " select %s || (i %% 10000), 'bench_worker', %s, now(), now(), now(), 'k' || (i %% %s),"
                "        coalesce((select max(vtime) from ai.agent_jobs where queue = %s and status = 'PENDING'), 0)"
                "        + (i / %s) + 1"
                " from generate_series(0, %s - 1) i",
                (owner_prefix, queue, keys, queue, keys, n),
            )
        else:
            c.execute(
                "insert into ai.agent_jobs (thread_id, owner, queue, run_at, created_at, updated_at)"
                " select %s || (i %% 10000), 'bench_worker', %s, now(), now(), now() from generate_series(0, %s - 1) i",
                (owner_prefix, queue, n),
            )
        c.execute("alter table ai.agent_jobs force row level security")
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("vacuum analyze ai.agent_jobs")


def clear(dsn: str, queue: str) -> None:
    with psycopg.connect(dsn) as c:
        c.execute("alter table ai.agent_jobs no force row level security")
        c.execute("delete from ai.agent_jobs where queue = %s", (queue,))
        c.execute("alter table ai.agent_jobs force row level security")
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("vacuum analyze ai.agent_jobs")


def pending(dsn: str, queue: str) -> int:
    with psycopg.connect(dsn) as c:
        return c.execute(
            "select count(*) from ai.agent_jobs where queue = %s and status = 'PENDING'", (queue,)
        ).fetchone()[0]  # type: ignore[index]


def latency_round(dsn: str, queue: str) -> tuple[float, float, int, int]:
    """(p50 ms, p99 ms, B's jobs claimed, B's jobs enqueued) of one round."""
    stop = threading.Event()
    worker_dsn = dsn + ("&" if "?" in dsn else "?") + "user=bench_worker"
    tenant_dsn = dsn + ("&" if "?" in dsn else "?") + "user=bench_tenant_b"
    started = time.time()

    def work() -> None:
        with psycopg.connect(worker_dsn, autocommit=True) as c:
            c.execute("set synchronous_commit = off")
            while not stop.is_set():
                row = c.execute(
                    "select job_id, fencing_token from ai.claim_jobs('w', '60 seconds', %s, 1)", (queue,)
                ).fetchone()
                if row is not None:
                    c.execute("select ai.complete_job(%s, %s)", (row[0], row[1]))

    t = threading.Thread(target=work)
    t.start()
    sent = 0
    with psycopg.connect(tenant_dsn, autocommit=True) as c:
        c.execute("set synchronous_commit = off")
        end = time.monotonic() + SECONDS
        while time.monotonic() < end:
            c.execute("select ai.enqueue_job(%s, '{}', %s)", (f"fb-{sent % 100}", queue))
            sent += 1
            time.sleep(0.02)
    time.sleep(0.5)  # the last jobs' claims
    stop.set()
    t.join()
    with psycopg.connect(dsn) as c:
        rows = c.execute(
            "select extract(epoch from claimed_at - created_at) * 1000 from ai.agent_jobs where queue = %s"
            " and owner = 'bench_tenant_b' and created_at >= to_timestamp(%s) and claimed_at is not null",
            (queue, started),
        ).fetchall()
        c.execute("alter table ai.agent_jobs no force row level security")
        c.execute(
            "update ai.agent_jobs set status = 'CANCELLED', finished_at = now(), lease_owner = null,"
            " lease_expires_at = null where queue = %s and owner = 'bench_tenant_b'"
            " and status in ('PENDING', 'IN_PROGRESS')",
            (queue,),
        )
        c.execute("alter table ai.agent_jobs force row level security")
    ms = sorted(r[0] for r in rows)
    if not ms:
        return float("nan"), float("nan"), 0, sent
    return (
        float(ms[len(ms) // 2]),
        float(ms[min(len(ms) - 1, int(len(ms) * 0.99))]),
        len(ms),
        sent,
    )


SHALLOW = 10000


def latency(head: str, base: str | None) -> None:
    scenarios = {  # name -> (queue, the other tenant's due jobs kept in it)
        "idle": ("fair-idle", 0),
        "busy": ("fair-shallow", SHALLOW),
        "backlog": ("fair-busy", BACKLOG),
    }
    for queue, _ in scenarios.values():
        clear(head, queue)
    res: dict[str, list[tuple[float, float, int, int]]] = {name: [] for name in scenarios}
    for _ in range(ROUNDS):
        for name, (queue, depth) in scenarios.items():
            left = pending(head, queue)
            if left < depth:
                fill(head, queue, depth - left, 1)
            res[name].append(latency_round(head, queue))
    print(f"another tenant's job, enqueue to claim (ms), one worker, {SECONDS:g} s rounds, medians of {ROUNDS}:")
    print(f"{'one tenant holds':<40} {'p50':>8} {'p99':>8} {'claimed':>12}")
    med = {}
    for name, rs in res.items():
        p50 = statistics.median(r[0] for r in rs)
        p99 = statistics.median(r[1] for r in rs)
        med[name] = (p50, p99)
        depth = scenarios[name][1]
        label = "nothing (the worker idles)" if not depth else f"{depth:,} due jobs (the worker busy)"
        print(f"{label:<40} {p50:8.2f} {p99:8.2f} {sum(r[2] for r in rs):>6}/{sum(r[3] for r in rs):<5}")
    for other in ("busy", "idle"):
        b, o = med["backlog"], med[other]
        print(f"{BACKLOG:,} against {other}: p50 {b[0] / o[0]:.2f}x, p99 {b[1] / o[1]:.2f}x")
    if base:
        clear(base, "fair-busy")
        fill(base, "fair-busy", BACKLOG, 1)
        p50, p99, got, sent = latency_round(base, "fair-busy")
        shown = f", p50 {p50:.2f} p99 {p99:.2f}" if got else " (all still behind the backlog)"
        print(f"base (today's claim), {BACKLOG:,} backlog: B's jobs claimed {got}/{sent} in the round{shown}")


def cpu_ns(pid: int) -> int:
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def cpu_round(dsn: str, keys: int) -> float:
    """µs of backend CPU per claim + complete."""
    clear(dsn, "fair-cpu")
    fill(dsn, "fair-cpu", CLAIMS + CLAIMS // 2, keys)
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute("set synchronous_commit = off")
        c.execute("set role bench_worker")
        pid = c.info.backend_pid
        t0, done = cpu_ns(pid), 0
        for _ in range(CLAIMS):
            row = c.execute(
                "select job_id, fencing_token from ai.claim_jobs('w', '60 seconds', 'fair-cpu', 1)"
            ).fetchone()
            if row is None:
                break
            c.execute("select ai.complete_job(%s, %s)", (row[0], row[1]))
            done += 1
        spent = cpu_ns(pid) - t0
    return spent / 1000 / max(done, 1)


def cpu(base: str, head: str) -> None:
    res: dict[tuple[int, str], list[float]] = {}
    for _ in range(ROUNDS):
        for keys in (1, 100, 10000):
            for name, dsn in (("base", base), ("head", head)):
                res.setdefault((keys, name), []).append(cpu_round(dsn, keys))
    print(f"backend CPU per claim_jobs(1) + complete_job (µs), {CLAIMS} claims, medians of {ROUNDS} paired rounds:")
    print(f"{'keys':>6} {'base':>8} {'head':>8} {'head/base':>10}")
    for keys in (1, 100, 10000):
        b = statistics.median(res[(keys, "base")])
        h = statistics.median(res[(keys, "head")])
        print(f"{keys:>6} {b:8.1f} {h:8.1f} {h / b:10.2f}")


if __name__ == "__main__":
    if sys.argv[1] == "latency":
        latency(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    elif sys.argv[1] == "cpu":
        cpu(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)
