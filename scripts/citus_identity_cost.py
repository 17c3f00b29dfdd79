"""What the carried identity costs on the Citus formation (docs/scaling.md, "What the identity costs").

Run against a formation made by `make citus-deploy` (scripts/citus.sh): medians of N runs of a
tenant's ai.get_session in autocommit, two in one transaction, an empty intermediate result, and a
router SELECT by the superuser. Optionally the same get_session against one server (ONE_SERVER_DSN:
a tenant_a connection to a deployed test database, e.g. the private cluster's agent_state_test).

    .venv/bin/python scripts/citus_identity_cost.py [N]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable

import psycopg

PORT = int(os.environ.get("CITUS_PORT", "6200"))


def median_ms(fn: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def get_session_cost(dsn: str, n: int) -> tuple[float, float]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("select (ai.create_session()).thread_id").fetchone()
        assert row is not None
        thread = str(row[0])

        def two() -> None:
            with conn.transaction():
                conn.execute("select ai.get_session(%s)", (thread,)).fetchall()
                conn.execute("select ai.get_session(%s)", (thread,)).fetchall()

        one = median_ms(lambda: conn.execute("select ai.get_session(%s)", (thread,)).fetchall(), n)
        return one, median_ms(two, n)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    one, two = get_session_cost(f"postgresql://tenant_a@127.0.0.1:{PORT}/agent_state", n)
    print(f"formation: get_session {one} ms, two get_session in one transaction {two} ms")
    with psycopg.connect(f"postgresql://postgres@127.0.0.1:{PORT}/agent_state", autocommit=True) as conn:
        row = conn.execute("select thread_id from ai.agent_sessions limit 1").fetchone()
        assert row is not None
        router = median_ms(
            lambda: conn.execute("select * from ai.agent_sessions where thread_id = %s", (row[0],)).fetchall(), n
        )
        empty = median_ms(
            lambda: conn.execute("select create_intermediate_result('x', 'select 1 where false')").fetchall(), n
        )
    print(f"formation: superuser router select {router} ms, empty intermediate result {empty} ms")
    if os.environ.get("ONE_SERVER_DSN"):
        one, two = get_session_cost(os.environ["ONE_SERVER_DSN"], n)
        print(f"one server: get_session {one} ms, two get_session in one transaction {two} ms")


if __name__ == "__main__":
    main()
