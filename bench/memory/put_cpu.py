"""The server's CPU per memory put: ai.put_memory and a batch_memory put against PostgresStore's upsert.

Each call is its own transaction (autocommit, prepared), as the stores make them; what is counted
is the CPU time of the serving backend (utime + stime of /proc/<pid>/stat before and after a run
of calls), not the wall clock: on a machine other jobs load, time spent waiting for a core does
not count, so two trees can be compared while others run. The server must run on this machine.
Run it on a database `bench/memory.sh` kept (BENCH_KEEP=1: tenant 0's items and PostgresStore's
table), as a superuser URL (the tenant's calls connect as bench_mem_t0):

  DATABASE_URL=postgresql:///agent_state_bench_memory bench/memory/put_cpu.py [ROUNDS [CALLS]]

Prints the median over ROUNDS (default 5) of the CPU ms per call over CALLS (default 2000) random
existing keys of tenant 0, the three in turn. The /proc counters tick every 10 ms, so a run of
2000 calls resolves 0.005 ms.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
from collections.abc import Callable
from typing import Any

import psycopg

URL = os.environ["DATABASE_URL"]
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
ITEMS = int(os.environ.get("BENCH_MEMORY_ITEMS", "10000")) // int(os.environ.get("BENCH_MEMORY_TENANTS", "4"))
VALUE = '{"n": %d, "tag": "t%d", "text": "apple banana cherry delta echo foxtrot golf hotel india juliet kilo lima"}'
TICK = os.sysconf("SC_CLK_TCK")

THEIRS = (
    "insert into bench_langgraph_store.store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes)"
    " values (%s, %s, %s::jsonb, now(), now(), null, null) on conflict (prefix, key) do update"
    " set value = excluded.value, updated_at = current_timestamp, expires_at = excluded.expires_at,"
    " ttl_minutes = excluded.ttl_minutes"
)
OURS = "select ai.put_memory(array['users', %s], %s, %s::jsonb)"
BATCH = (
    "select ai.batch_memory(jsonb_build_array(jsonb_build_object('op', 'put', 'namespace',"
    " jsonb_build_array('users', %s::text), 'key', %s::text, 'value', %s::jsonb)))"
)


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def connect(user: str | None) -> tuple[psycopg.Connection[Any], int]:
    conn = psycopg.connect(URL, user=user, autocommit=True) if user else psycopg.connect(URL, autocommit=True)
    row = conn.execute("select pg_backend_pid()").fetchone()
    assert row is not None
    return conn, int(row[0])


def main() -> None:
    def theirs(i: int) -> tuple[str, str, str]:
        return f"t0.users.u{i % 50}", f"k{i}", VALUE % (i % 1000, i % 7)

    def ours(i: int) -> tuple[str, str, str]:
        return f"u{i % 50}", f"k{i}", VALUE % (i % 1000, i % 7)

    calls: dict[str, tuple[tuple[psycopg.Connection[Any], int], str, Callable[[int], tuple[str, str, str]]]] = {
        "PostgresStore upsert": (connect(None), THEIRS, theirs),
        "ai.put_memory": (connect("bench_mem_t0"), OURS, ours),
        "ai.batch_memory put": (connect("bench_mem_t0"), BATCH, ours),
    }
    results: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(ROUNDS):
        for name, ((conn, pid), query, args) in calls.items():
            keys = [random.randrange(ITEMS) for _ in range(CALLS)]
            for i in keys[:20]:  # prepared and warm
                conn.execute(query, args(i), prepare=True)
            before = cpu_seconds(pid)
            for i in keys:
                conn.execute(query, args(i), prepare=True)
            results[name].append((cpu_seconds(pid) - before) / CALLS * 1000)
    for name, values in results.items():
        shown = " ".join(f"{v:.3f}" for v in values)
        print(f"{name:22s} {statistics.median(values):.3f} ms CPU per call (rounds: {shown})")


if __name__ == "__main__":
    main()
