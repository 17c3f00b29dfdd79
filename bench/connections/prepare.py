"""What never preparing would cost: the client's statements (``select * from ai.f(...)``) run on
one connection with a server-side prepared statement (psycopg's default after five executions,
what the client does on a direct connection) against the same statements unprepared (what the
client does behind a pooler, and would do everywhere if it never prepared), interleaved, median
of REPEATS runs of CALLS calls each; the prepared direct run is the baseline. Through the private
PgBouncer (transaction pooling) only the unprepared form can run at all.

    python bench/connections/prepare.py DATABASE_URL [POOLER_URL]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import uuid
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row

CALLS = int(os.environ.get("BENCH_CALLS", "2000"))
REPEATS = int(os.environ.get("BENCH_REPEATS", "7"))


def as_tenant(url: str) -> str:
    params: dict[str, Any] = conninfo_to_dict(url)
    params["user"] = os.environ.get("BENCH_TENANT", "tenant_a")
    return make_conninfo(**params)


def run(url: str, prepare: bool, sql: str, args: Any) -> float:
    with psycopg.connect(url, autocommit=True) as conn, conn.cursor(row_factory=dict_row) as cur:
        for _ in range(10):  # warm: the plan cache of the functions, and psycopg's prepare
            cur.execute(sql, args(), prepare=prepare)
            cur.fetchall()
        start = time.perf_counter()
        for _ in range(CALLS):
            cur.execute(sql, args(), prepare=prepare)
            cur.fetchall()
        return CALLS / (time.perf_counter() - start)


def main() -> None:
    url = as_tenant(sys.argv[1])
    pooler = as_tenant(sys.argv[2]) if len(sys.argv) > 2 else None
    thread = f"bench-prep-{uuid.uuid4()}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("select ai.create_session(%s, '{}')", (thread,))
    counter = iter(range(10**9))
    cases = {
        "get_session": ("select * from ai.get_session(%s)", lambda: (thread,)),
        "append_message (new key)": (
            "select * from ai.append_message_idempotent(%s, %s, %s::jsonb, %s, %s, %s)",
            lambda: (thread, "user", '{"t": 1}', None, f"k{next(counter)}", None),
        ),
    }
    print(f"calls per second, one connection, median of {REPEATS} x {CALLS} calls (interleaved)")
    print(f"{'call':26} {'path':34} {'calls/s':>9} {'ratio':>7}  (ratio: against the first line)")
    for name, (sql, args) in cases.items():
        modes = [("direct, prepared (the client)", url, True), ("direct, unprepared", url, False)]
        if pooler:
            modes.append(("PgBouncer, unprepared (the client)", pooler, False))
        results: dict[str, list[float]] = {m[0]: [] for m in modes}
        for _ in range(REPEATS):
            for label, target, prepare in modes:
                results[label].append(run(target, prepare, sql, args))
        base = statistics.median(results[modes[0][0]])
        for label, _, _ in modes:
            value = statistics.median(results[label])
            print(f"{name:26} {label:34} {value:9.0f} {value / base:6.2f}x")


if __name__ == "__main__":
    main()
