"""What the coordinator pays to inline a delegated write's SQL wrapper (docs/scaling.md, "A NULL
`thread_id`").

On a formation made by `make citus-deploy`: the same begin_side_effect of tenant_a, N times each
way in alternation, through its public name (the wrapper, which the coordinator's planner inlines
and whose thread_id check it evaluates) and through its entry ai._delegated_begin_side_effect
called by name (the same call Citus delegates, without the inlining). Both go to the same worker
and do the same there; the difference is the coordinator's. Wall-clock latency by the client, in
autocommit; medians and 90th percentiles. tenant_a must be outside ai_test_clock (AS072
otherwise): the script revokes it and grants it back.

    CITUS_PORT=6200 .venv/bin/python scripts/citus_inline_cost.py [N]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import uuid

import psycopg

PORT = int(os.environ.get("CITUS_PORT", "6200"))
CALLS = {
    "wrapper": "select ai.begin_side_effect(%s, 'k', '{}')",
    "entry": "select ai._delegated_begin_side_effect(%s, row('k', '{}', null, null, '5 minutes')"
    "::ai._delegated_begin_side_effect_args)",
}


def connect(user: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(f"postgresql://{user}@127.0.0.1:{PORT}/agent_state", autocommit=True)


def main(n: int) -> None:
    with connect("postgres") as admin:
        admin.execute("revoke ai_test_clock from tenant_a")
        try:
            with connect("tenant_a") as conn:
                t = f"inline-{uuid.uuid4().hex[:12]}"
                conn.execute("select ai.create_session(%s)", (t,))
                took: dict[str, list[float]] = {name: [] for name in CALLS}
                for i in range(n):
                    for name in sorted(CALLS, reverse=bool(i % 2)):
                        start = time.perf_counter()
                        conn.execute(CALLS[name], (t,)).fetchone()
                        took[name].append((time.perf_counter() - start) * 1000)
        finally:
            admin.execute("grant ai_test_clock to tenant_a")
    for name, ms in took.items():
        print(f"{name}: median {statistics.median(ms):.3f} ms, p90 {sorted(ms)[int(len(ms) * 0.9)]:.3f} ms ({n} calls)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1500)
