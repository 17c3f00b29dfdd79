"""Round trips, two-phase commits and latency of the hot path on the Citus formation (issue 40,
item 3; docs/scaling.md, "One node per step").

Against a formation made by `make citus-deploy` (scripts/citus.sh), as a worker (app_service) does
it: claim a tenant's job, write node steps for it (ai.put_checkpoint with the task's pending write,
a channel value and a message, fenced by the job), complete it. For each call:

* what the coordinator sent to the workers (citus.log_remote_commands, read from the notices of the
  caller's own connection): statements, distinct workers, COMMITs sent to them (a transaction on
  that worker each), PREPARE TRANSACTION (a two-phase commit);
* the median latency of N calls.

A delegated call is one statement sent outside a transaction block: the worker commits it by
itself (no COMMIT sent, no round trip for it).

A step is measured twice: alone in its statement (autocommit: delegated to the thread's worker) and
inside a transaction block (BEGIN; step; COMMIT: not delegated, through the coordinator, as every
per-thread write was before ai.distribute() delegated them). ONE_SERVER_DSN (an app_service URL
of a deployed single server, e.g. the private cluster's agent_state_test) times the same step
there. tenant_a and app_service must not be members of ai_test_clock on the formation (scripts/citus.sh
grants it for the pgTAP files): a delegated call of a role that may freeze the test clock is
refused (AS072, docs/scaling.md); first `revoke ai_test_clock from tenant_a, tenant_b, app_service`
on the coordinator, as tests/citus/conftest.py does, and grant it back after.

    .venv/bin/python scripts/citus_step_cost.py [N]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable

import psycopg
from psycopg.types.json import Jsonb

PORT = int(os.environ.get("CITUS_PORT", "6200"))
WORKERS = int(os.environ.get("CITUS_WORKERS", "2"))
NODES = [PORT + n for n in range(WORKERS + 1)]

PUT_CHECKPOINT = (
    "select ai.put_checkpoint(%s, %s, %s, %s, %s, %b, %s, %s,"
    " channel_values => row(%s, %s, %s, %b, %s)::ai.checkpoint_values,"
    " writes => row(%s, %s, %s, %s, %s, %b)::ai.task_writes,"
    " messages => %s,"
    " step_commit => row(%s, %s, %s)::ai.step_commit) as id"
)


def url(user: str, port: int = PORT) -> str:
    return f"postgresql://{user}@127.0.0.1:{port}/agent_state"


def step_args(t: str, parent: str | None, job: int, token: int, n: int, messages: bool = True) -> tuple[object, ...]:
    message = [{"role": "assistant", "content": f"step {n}", "idempotency_key": f"m-{uuid.uuid4().hex}"}]
    writes = ("task-1", "", [0], ["messages"], ["json"], [b'"w"']) if parent else (None,) * 6
    return (
        t, "", None, parent, "json", b'{"v": %d}' % n, Jsonb({"step": n}), Jsonb({"messages": str(n)}),
        ["messages"], [str(n)], ["json"], [b'["hi"]'], None,
        *writes,
        Jsonb(message) if messages else None,
        job, token, None,
    )  # fmt: skip


class Remote:
    """The remote commands logged on a connection (citus.log_remote_commands)."""

    def __init__(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        self.sent: list[str] = []
        conn.execute("set citus.log_remote_commands = on")
        conn.execute("set client_min_messages = log")
        conn.add_notice_handler(self._on)

    def _on(self, d: psycopg.errors.Diagnostic) -> None:
        if d.message_primary and d.message_primary.startswith("issuing "):
            self.sent.append(f"{d.message_detail or ''} {d.message_primary}")

    def take(self) -> tuple[int, int, int, int]:
        """(statements, workers, COMMITs, PREPARE TRANSACTIONs) since the last take."""
        sent, self.sent = self.sent, []
        workers = {s.split("@", 1)[1].split(" ", 1)[0] for s in sent if "@" in s}
        commits = sum(s.endswith("issuing COMMIT") or "COMMIT PREPARED" in s for s in sent)
        return len(sent), len(workers), commits, sum("PREPARE TRANSACTION" in s for s in sent)


def median_ms(times: list[float]) -> float:
    return round(statistics.median(times) * 1000, 2)


def measure(n: int) -> None:
    q = f"cost-{uuid.uuid4().hex[:8]}"
    threads = [f"cost-{uuid.uuid4().hex[:12]}" for _ in range(n)]
    with psycopg.connect(url("tenant_a"), autocommit=True) as t:
        for th in threads:
            t.execute("select ai.create_session(%s)", (th,))
            t.execute("select ai.enqueue_job(%s, '{}', %s)", (th, q))
    rows: list[tuple[str, tuple[int, int, int, int], list[float]]] = []

    with psycopg.connect(url("app_service"), autocommit=True) as conn:
        remote = Remote(conn)

        def run(name: str, calls: list[Callable[[], object]]) -> None:
            times, seen = [], []
            for call in calls:
                remote.take()
                start = time.perf_counter()
                call()
                times.append(time.perf_counter() - start)
                seen.append(remote.take())
            assert len(set(seen)) == 1, f"{name}: not the same remote commands each time: {set(seen)}"
            rows.append((name, seen[0], times))

        jobs: dict[str, tuple[int, int]] = {}

        def claim() -> None:
            row = conn.execute(
                "select thread_id, job_id, fencing_token from ai.claim_job('w-cost', '5 minutes', %s)", (q,)
            ).fetchone()
            assert row is not None
            jobs[str(row[0])] = (int(str(row[1])), int(str(row[2])))

        run("claim_job", [claim] * n)
        parents: dict[str, str] = {}
        for th in threads:  # a first checkpoint each: the steps below hold a write for it
            job, token = jobs[th]
            row = conn.execute(PUT_CHECKPOINT, step_args(th, None, job, token, 0)).fetchone()
            assert row is not None
            parents[th] = str(row[0])

        def step(th: str, k: int, block: bool, messages: bool) -> Callable[[], object]:
            def call() -> None:
                job, token = jobs[th]
                if block:
                    with conn.transaction():
                        conn.execute(PUT_CHECKPOINT, step_args(th, parents[th], job, token, k, messages))
                else:
                    conn.execute(PUT_CHECKPOINT, step_args(th, parents[th], job, token, k, messages))

            return call

        # a step's messages (INSERT ... SELECT into session_messages) plan only on the worker: through
        # the coordinator Citus sends them as COPY, which row level security refuses (0A000)
        run("step + writes + message, autocommit (delegated)", [step(th, 1, False, True) for th in threads])
        run("step + writes, autocommit (delegated)", [step(th, 2, False, False) for th in threads])
        run("step + writes in BEGIN/COMMIT (via the coordinator)", [step(th, 3, True, False) for th in threads])

        def complete(th: str) -> Callable[[], object]:
            return lambda: conn.execute("select ai.complete_job(%s, %s)", jobs[th])

        run("complete_job", [complete(th) for th in threads])

    print(f"formation: coordinator :{NODES[0]}, workers {', '.join(':' + str(p) for p in NODES[1:])}; N = {n}")
    print("call | statements to workers | workers | worker commits | PREPARE TRANSACTION | median ms")
    for name, (stmts, workers, commits, prepares), times in rows:
        print(f"{name} | {stmts} | {workers} | {commits} | {prepares} | {median_ms(times)}")


def one_server(dsn: str, n: int) -> None:
    q = f"cost-{uuid.uuid4().hex[:8]}"
    times: list[float] = []
    plain: list[float] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for _ in range(n):
            th = f"cost-{uuid.uuid4().hex[:12]}"
            conn.execute("select ai.create_session(%s)", (th,))
            conn.execute("select ai.enqueue_job(%s, '{}', %s)", (th, q))
            row = conn.execute(
                "select job_id, fencing_token from ai.claim_job('w-cost', '5 minutes', %s)", (q,)
            ).fetchone()
            assert row is not None
            job, token = int(str(row[0])), int(str(row[1]))
            parent = conn.execute(PUT_CHECKPOINT, step_args(th, None, job, token, 0)).fetchone()
            assert parent is not None
            start = time.perf_counter()
            conn.execute(PUT_CHECKPOINT, step_args(th, str(parent[0]), job, token, 1))
            times.append(time.perf_counter() - start)
            start = time.perf_counter()
            conn.execute(PUT_CHECKPOINT, step_args(th, str(parent[0]), job, token, 2, False))
            plain.append(time.perf_counter() - start)
            conn.execute("select ai.complete_job(%s, %s)", (job, token))
    print(f"one server: step + writes + message, autocommit | median ms {median_ms(times)}")
    print(f"one server: step + writes, autocommit | median ms {median_ms(plain)}")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    measure(n)
    if os.environ.get("ONE_SERVER_DSN"):
        one_server(os.environ["ONE_SERVER_DSN"], n)


if __name__ == "__main__":
    main()
