"""What two-phase commit between the coordinator's queue and a worker costs (issue 40;
docs/scaling.md, "Atomic across the queue and a worker").

Against a formation made by `make citus-deploy` (scripts/citus.sh): rounds with the trigger that
makes those transactions two-phase (ai.distribute()'s `formation_two_phase` on the queue's tables)
enabled and disabled, interleaved on the same formation (on, off, on, off, ...), so that the
machine's load moves both alike. Each round, as a worker (app_service) does it, for N threads:
enqueue, claim, renew the lease, a delegated node step (put_checkpoint with its write and a
message), complete. For each call: what the coordinator sent to the workers
(citus.log_remote_commands: statements, PREPARE TRANSACTION) and its latency; printed per mode as
the median of the rounds' medians (and each round's, to see the spread), and the median of the
differences between each round with the trigger and the round after it without.

    .venv/bin/python scripts/citus_two_phase_cost.py [N] [ROUNDS]

The trigger is enabled again at the end (and on an error).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable

import psycopg
from citus_step_cost import PUT_CHECKPOINT, Remote, step_args  # this script's neighbour: the same step

PORT = int(os.environ.get("CITUS_PORT", "6200"))
NODES = [PORT + n for n in range(int(os.environ.get("CITUS_WORKERS", "2")) + 1)]
QUEUE_TABLES = (
    "ai.agent_jobs",
    "ai.agent_jobs_archive",
    "ai.job_fences",
    "ai.notify_key",
    "ai.queue_workers",
    "ai.lease_timelines",
    "ai_archive.agent_jobs",
    "ai_archive.agent_jobs_archive",
)
CALLS = ("enqueue_job", "claim_job", "renew_lease", "node step (delegated)", "complete_job")


def url(user: str, port: int = PORT) -> str:
    return f"postgresql://{user}@127.0.0.1:{port}/agent_state"


def set_trigger(on: bool) -> None:
    with psycopg.connect(url("postgres"), autocommit=True) as conn, conn.transaction():
        for table in QUEUE_TABLES:
            conn.execute(f"alter table {table} {'enable' if on else 'disable'} trigger formation_two_phase")


Result = dict[str, tuple[tuple[int, int], float, tuple[float, float]]]


def one_round(n: int) -> Result:
    """Each call's (statements, prepares) (the same for every call, checked), median seconds, and
    median WAL bytes written (the coordinator's, the workers' together) around it."""
    q = f"tpc-{uuid.uuid4().hex[:8]}"
    threads = [f"tpc-{uuid.uuid4().hex[:12]}" for _ in range(n)]
    with psycopg.connect(url("tenant_a"), autocommit=True) as tenant:
        for th in threads:
            tenant.execute("select ai.create_session(%s)", (th,))
    seen: dict[str, list[tuple[int, int]]] = {c: [] for c in CALLS}
    times: dict[str, list[float]] = {c: [] for c in CALLS}
    wal: dict[str, list[tuple[int, int]]] = {c: [] for c in CALLS}
    nodes = [psycopg.connect(url("postgres", port), autocommit=True) for port in NODES]

    def lsns() -> list[int]:
        out = []
        for node in nodes:
            row = node.execute("select pg_current_wal_insert_lsn() - '0/0'::pg_lsn").fetchone()
            assert row is not None
            out.append(int(str(row[0])))
        return out

    with psycopg.connect(url("app_service"), autocommit=True) as conn:
        remote = Remote(conn)

        def timed(name: str, call: Callable[[], object]) -> object:
            remote.take()
            before = lsns()
            start = time.perf_counter()
            out = call()
            times[name].append(time.perf_counter() - start)
            after = lsns()
            wal[name].append((after[0] - before[0], sum(after[1:]) - sum(before[1:])))
            statements, _, _, prepares = remote.take()
            seen[name].append((statements, prepares))
            return out

        for th in threads:
            timed("enqueue_job", lambda th=th: conn.execute("select ai.enqueue_job(%s, '{}', %s)", (th, q)))
        held: list[tuple[str, int, int]] = []
        for _ in threads:
            row = timed(
                "claim_job",
                lambda: conn.execute(
                    "select thread_id, job_id, fencing_token from ai.claim_job('w-tpc', '5 minutes', %s)", (q,)
                ).fetchone(),
            )
            assert isinstance(row, tuple)
            held.append((str(row[0]), int(str(row[1])), int(str(row[2]))))
        for th, job, token in held:
            timed("renew_lease", lambda j=job, k=token: conn.execute("select ai.renew_lease(%s, %s)", (j, k)))
            first = conn.execute(PUT_CHECKPOINT, step_args(th, None, job, token, 0)).fetchone()
            assert first is not None
            timed(
                "node step (delegated)",
                lambda th=th, p=str(first[0]), j=job, k=token: conn.execute(PUT_CHECKPOINT, step_args(th, p, j, k, 1)),
            )
            timed("complete_job", lambda j=job, k=token: conn.execute("select ai.complete_job(%s, %s)", (j, k)))
    for node in nodes:
        node.close()
    out: Result = {}
    for name in CALLS:
        kinds = set(seen[name])
        assert len(kinds) == 1, f"{name}: not the same remote commands each time: {kinds}"
        out[name] = (
            kinds.pop(),
            statistics.median(times[name]),
            (statistics.median(w[0] for w in wal[name]), statistics.median(w[1] for w in wal[name])),
        )
    return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    results: dict[bool, list[Result]] = {True: [], False: []}
    try:
        one_round(5)  # warm the connections' caches and the plans once
        for r in range(rounds):
            on = r % 2 == 0
            set_trigger(on)
            results[on].append(one_round(n))
    finally:
        set_trigger(True)
    print(f"formation :{PORT}; N = {n} calls of each per round, {rounds} rounds interleaved (on, off, ...)")
    print(
        "call | two-phase | statements to workers | PREPARE TRANSACTION | WAL bytes: coordinator, workers"
        " | median ms (rounds' medians)"
    )
    for name in CALLS:
        # each round with the trigger against the round after it without (paired: the same load)
        paired = [(a[name][1] - b[name][1]) * 1000 for a, b in zip(results[True], results[False], strict=False)]
        print(f"{name} | on - off, paired rounds | | | | {round(statistics.median(paired), 2)}")
        for on in (True, False):
            kinds = {r[name][0] for r in results[on]}
            per_round = [round(r[name][1] * 1000, 2) for r in results[on]]
            (stmts, prepares) = kinds.pop() if len(kinds) == 1 else (-1, -1)
            coordinator = statistics.median(r[name][2][0] for r in results[on])
            workers = statistics.median(r[name][2][1] for r in results[on])
            print(
                f"{name} | {'on' if on else 'off'} | {stmts} | {prepares} | {coordinator:.0f}, {workers:.0f} | "
                f"{round(statistics.median(per_round), 2)} ({', '.join(map(str, per_round))})"
            )


if __name__ == "__main__":
    main()
