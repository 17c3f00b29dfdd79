"""What the NULL-proof shape of a delegated write costs (docs/scaling.md, "A NULL `thread_id`").

On a formation made by `make citus-deploy`: A, a write through its public name (the SQL wrapper
that the coordinator's planner inlines, the strict entry ai._delegated_<name> that Citus delegates,
then the body); B, the body called by its own name and delegated directly, as every delegated
write was before (ai.distribute() never leaves it so: this script delegates it for the run and
puts it back after, since a tenant's NULL to it would crash the coordinator). Interleaved rounds
of N calls of tenant_a in autocommit, each measured by the client's wall clock and, on the worker
that holds the thread, by pg_stat_user_functions (the entry's and the body's time; track_functions
= pl for the run). Each measure waits 11 s before and after: an idle backend flushes its
statistics within 10 s. tenant_a must be outside ai_test_clock (AS072 otherwise): the script
revokes it and grants it back.

    CITUS_PORT=6200 .venv/bin/python scripts/citus_wrapper_ab.py [N] [ROUNDS]
"""

from __future__ import annotations

import statistics
import sys
import time
import uuid
from collections.abc import Callable

from citus_worker_cost import WORKERS, connect, worker_of
from psycopg.types.json import Jsonb

BODIES = {
    "append_message_idempotent": "text,text,jsonb,integer,text,integer,bigint,bigint",
    "put_checkpoint": "text,text,text,text,text,bytea,jsonb,jsonb,"
    "ai.checkpoint_values,ai.task_writes,jsonb,ai.step_commit",
}
CALLS: dict[str, tuple[str, Callable[[str, int], tuple[object, ...]]]] = {
    "append_message_idempotent": ("(%s, 'user', %s)", lambda t, i: (t, Jsonb(f"m{i}"))),
    "put_checkpoint": (
        "(%s, '', %s, null, 'json', '\\x7b7d', '{}', '{}', messages => %s)",
        lambda t, i: (t, f"c{i}-{uuid.uuid4().hex[:6]}", Jsonb([{"role": "user", "content": f"s{i}"}])),
    ),
}


def on_workers(sql: str) -> None:
    for port in WORKERS:
        with connect("postgres", port) as admin:
            admin.execute(sql)
            admin.execute("select pg_reload_conf()")


def stats(port: int) -> dict[str, tuple[int, float]]:
    with connect("postgres", port) as admin:
        rows = admin.execute(
            "select funcname, calls, total_time from pg_stat_user_functions where schemaname = 'ai'"
            " and funcname like '\\_delegated\\_%'"
        ).fetchall()
    return {str(r[0]): (int(str(r[1])), float(str(r[2]))) for r in rows}


def delegate_bodies(directly: bool) -> None:
    with connect("agent_state_owner") as owner:
        for name, args in BODIES.items():
            body = f"ai._delegated_{name}_body({args})"
            if directly:
                owner.execute(
                    "select create_distributed_function(%s, 'thread_id', colocate_with => 'ai.agent_sessions')", (body,)
                )
                owner.execute(f"grant execute on function {body} to ai_user")
            else:
                owner.execute(f"revoke execute on function {body} from ai_user")
                owner.execute("select create_distributed_function(%s)", (body,))


def main(n: int, rounds: int) -> None:
    with connect("postgres") as admin:
        admin.execute("revoke ai_test_clock from tenant_a")
    on_workers("alter system set track_functions = 'pl'")
    delegate_bodies(True)
    results: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    try:
        for _ in range(rounds):
            for name, (args_sql, args) in CALLS.items():
                for shape in ("wrapper", "body"):
                    t = f"wab-{uuid.uuid4().hex[:12]}"
                    with connect("tenant_a") as conn:
                        conn.execute("select ai.create_session(%s)", (t,))
                        worker = worker_of(t)
                        fn = f"ai.{name}" if shape == "wrapper" else f"ai._delegated_{name}_body"
                        time.sleep(11)
                        before = stats(worker)
                        start = time.perf_counter()
                        for i in range(n):
                            conn.execute(f"select {fn}{args_sql}", args(t, i))
                        wall = (time.perf_counter() - start) / n * 1000
                    time.sleep(11)
                    after = stats(worker)

                    def ms(
                        f: str, a: dict[str, tuple[int, float]] = after, b: dict[str, tuple[int, float]] = before
                    ) -> float:
                        return (a.get(f, (0, 0.0))[1] - b.get(f, (0, 0.0))[1]) / n

                    body, entry = ms(f"_delegated_{name}_body"), ms(f"_delegated_{name}")
                    results.setdefault((name, shape), []).append((wall, entry or body, body))
                    print(
                        f"{name} {shape}: client {wall:.2f} ms, worker {entry or body:.3f} ms (body {body:.3f})",
                        flush=True,
                    )
    finally:
        delegate_bodies(False)
        on_workers("alter system reset track_functions")
        with connect("postgres") as admin:
            admin.execute("grant ai_test_clock to tenant_a")
    for (name, shape), rows in sorted(results.items()):
        print(
            f"median {name} {shape}: client {statistics.median(r[0] for r in rows):.2f} ms,"
            f" worker {statistics.median(r[1] for r in rows):.3f} ms,"
            f" body {statistics.median(r[2] for r in rows):.3f} ms"
            f" ({len(rows)} rounds of {n})"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200, int(sys.argv[2]) if len(sys.argv) > 2 else 3)
