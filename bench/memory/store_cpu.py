"""The server's CPU per store call: LangGraph's PostgresStore against AgentStateStore, each through
its own Python class (bench_memory.py's points: put of an existing key, get, the searches), and
AgentStateStore again over other databases (copies with other memory functions: paired A/B).

Each store runs over a pool of one connection, so one backend serves it; what is counted is that
backend's CPU (/proc/<pid>/schedstat: the server must run on this machine), not the wall clock,
which time spent waiting for a core on a loaded machine would decide. ROUNDS interleaved rounds
(every store in turn) of CALLS calls per point; prints medians of the CPU us per call and of the
per-round ratios ours / PostgresStore's (in the first database). Run on a database
`bench/memory.sh` kept (BENCH_KEEP=1), as a superuser URL:

  DATABASE_URL=postgresql:///agent_state_bench_memory [BENCH_POINTS=put,search] \\
    bench/memory/store_cpu.py [ROUNDS [CALLS [OTHER_DB ...]]]
"""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
from collections.abc import Callable
from typing import Any

import psycopg
from bench_memory import URL, ours, points, theirs  # type: ignore[import-not-found]

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 7
CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 300
OTHERS = sys.argv[3:]
#: only the points whose names start with one of these (comma-separated), e.g. "put,search query"
POINTS = [p for p in os.environ.get("BENCH_POINTS", "").split(",") if p]


def cpu_ns(pid: int) -> int:
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def backends(admin: psycopg.Connection[Any], user: str | None) -> list[int]:
    """The client backends of a store: its pool's connections (one, calls in sequence) to admin's
    database, of that user (None: the superuser admin is, admin's own backend left out)."""
    rows = admin.execute(
        "select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend'"
        " and usename = coalesce(%s, current_user) and pid <> pg_backend_pid()",
        (user,),
    ).fetchall()
    return [int(r[0]) for r in rows]


def cpu(pids: list[int]) -> int:
    return sum(cpu_ns(p) for p in pids)


def main() -> None:
    urls = {"ours": URL} | {f"ours@{u.rsplit('/', 1)[-1]}": u for u in OTHERS}
    with theirs(URL) as pg, contextlib.ExitStack() as stack:
        admins = {url: stack.enter_context(psycopg.connect(url, autocommit=True)) for url in urls.values()}
        sides: dict[str, tuple[psycopg.Connection[Any], str | None, dict[str, Callable[[int], Any]]]] = {
            "PostgresStore": (admins[URL], None, points(pg, ("t0",)))
        }
        for name, url in urls.items():
            sides[name] = (admins[url], "bench_mem_t0", points(stack.enter_context(ours(url)), ()))
        pids: dict[str, list[int]] = {}
        for name, (admin, user, pts) in sides.items():
            for call in pts.values():  # the pools' connections open, the statements prepared
                for i in range(5):
                    call(i)
            pids[name] = backends(admin, user)
        got: dict[str, dict[str, list[float]]] = {n: {} for n in sides}
        for r in range(ROUNDS):
            for point in sides["PostgresStore"][2]:
                if POINTS and not any(point.startswith(p) for p in POINTS):
                    continue
                for name, (_, _, pts) in sides.items():
                    call = pts[point]
                    t0 = cpu(pids[name])
                    for i in range(r * CALLS, (r + 1) * CALLS):
                        call(i)
                    got[name].setdefault(point, []).append((cpu(pids[name]) - t0) / CALLS / 1e3)
        print("backends:", {n: len(p) for n, p in pids.items()})
    names = list(sides)
    print(
        f"server CPU us per call, median of {ROUNDS} rounds of {CALLS};"
        " ratios to PostgresStore (and to ours) per round, median"
    )
    print(
        f"{'point':34}"
        + "".join(f"{n:>22}" for n in names)
        + "".join(f"{n + '/PG':>24}" for n in names[1:])
        + "".join(f"{n + '/ours':>24}" for n in names[2:])
    )
    for point in got["PostgresStore"]:
        base = got["PostgresStore"][point]
        row = f"{point:34}" + "".join(f"{statistics.median(got[n][point]):22.1f}" for n in names)
        row += "".join(
            f"{statistics.median(x / b for x, b in zip(got[n][point], base, strict=True)):24.2f}" for n in names[1:]
        )
        row += "".join(
            f"{statistics.median(x / b for x, b in zip(got[n][point], got['ours'][point], strict=True)):24.2f}"
            for n in names[2:]
        )
        print(row)


if __name__ == "__main__":
    main()
