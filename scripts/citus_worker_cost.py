"""What a delegated call costs on the worker that holds its thread (docs/scaling.md, "One node per
step"; cmsg's note on the identity's carry there).

Against a formation made by `make citus-deploy` (scripts/citus.sh): N delegated calls of tenant_a
through the coordinator in autocommit (append_message_idempotent, then put_checkpoint with one
message), timed on the worker by pg_stat_user_functions: the call's total time, that of its body
(the function as deployed: the rest is the strict entry Citus delegates, ai._formation_delegate)
and that of ai._formation_caller (the identity's carry) in it, per call. Sets track_functions = pl on the
workers (ALTER SYSTEM, a superuser's step) for the run and resets it after. Each measure waits
11 s before and after the calls: an idle backend flushes its statistics within 10 s. tenant_a
must not be a member of ai_test_clock (a delegated call of a role that may freeze the test clock
is refused, AS072, docs/scaling.md): first `revoke ai_test_clock from tenant_a, tenant_b,
app_service` on the coordinator, as tests/citus/conftest.py does, and grant it back after.

    .venv/bin/python scripts/citus_worker_cost.py [N]
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Callable

import psycopg
from psycopg.types.json import Jsonb

PORT = int(os.environ.get("CITUS_PORT", "6200"))
WORKERS = [PORT + n for n in range(1, int(os.environ.get("CITUS_WORKERS", "2")) + 1)]
# a delegated write runs on the worker as its strict entry (ai._delegated_<name>) calling the
# function as deployed (ai._delegated_<name>_body): the public name is an SQL wrapper the
# coordinator's planner inlines (ai._formation_delegate); the entry's own time is the layer's cost
STATS = (
    "select f.funcname, f.calls, f.total_time from pg_stat_user_functions f where f.schemaname = 'ai'"
    " and f.funcname in ('_delegated_append_message_idempotent', '_delegated_append_message_idempotent_body',"
    " '_delegated_put_checkpoint', '_delegated_put_checkpoint_body', '_formation_caller')"
)


def connect(user: str, port: int = PORT) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(f"postgresql://{user}@127.0.0.1:{port}/agent_state", autocommit=True)


def track(value: str | None) -> None:
    for port in WORKERS:
        with connect("postgres", port) as admin:
            admin.execute(
                "alter system reset track_functions"
                if value is None
                else f"alter system set track_functions = '{value}'"
            )
            admin.execute("select pg_reload_conf()")


Stats = dict[str, tuple[int, float]]


def stats(port: int) -> Stats:
    with connect("postgres", port) as admin:
        return {str(r[0]): (int(str(r[1])), float(str(r[2]))) for r in admin.execute(STATS).fetchall()}


def worker_of(thread_id: str) -> int:
    """The port of the worker that holds the thread's shard."""
    with connect("postgres") as admin:
        row = admin.execute(
            "select nodeport from citus_shards where table_name = 'ai.agent_sessions'::regclass"
            " and shardid = get_shard_id_for_distribution_column('ai.agent_sessions', %s::text)",
            (thread_id,),
        ).fetchone()
    assert row is not None
    return int(str(row[0]))


def main(n: int) -> None:
    t = f"wcost-{uuid.uuid4().hex[:12]}"
    with connect("tenant_a") as conn:
        conn.execute("select ai.create_session(%s)", (t,))
    worker = worker_of(t)
    calls: list[tuple[str, str, Callable[[int], tuple[object, ...]]]] = [
        (
            "append_message_idempotent",
            "select ai.append_message_idempotent(%s, 'user', %s)",
            lambda i: (t, Jsonb(f"m{i}")),
        ),
        (
            "put_checkpoint",
            "select ai.put_checkpoint(%s, '', %s, null, 'json', '\\x7b7d', '{}', '{}', messages => %s)",
            lambda i: (t, f"c{i}", Jsonb([{"role": "user", "content": f"s{i}", "idempotency_key": uuid.uuid4().hex}])),
        ),
    ]
    track("pl")
    try:
        with connect("tenant_a") as conn:
            for name, sql, args in calls:
                time.sleep(11)
                before = stats(worker)
                for i in range(n):
                    conn.execute(sql, args(i))
                time.sleep(11)
                after = stats(worker)

                def delta(fn: str, k: int, a: Stats = after, b: Stats = before) -> float:
                    return a.get(fn, (0, 0.0))[k] - b.get(fn, (0, 0.0))[k]

                entry, body = f"_delegated_{name}", f"_delegated_{name}_body"
                made = int(delta(entry, 0)) or 1
                print(
                    f"{name}: {made} calls on worker :{worker}, {delta(entry, 1) / made:.3f} ms each,"
                    f" of it the body {delta(body, 1) / made:.3f} ms (the entry's own"
                    f" {(delta(entry, 1) - delta(body, 1)) / made:.3f} ms),"
                    f" ai._formation_caller {delta('_formation_caller', 1) / made:.2f} ms"
                    f" ({delta('_formation_caller', 0) / made:.0f} calls each)"
                )
    finally:
        track(None)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
