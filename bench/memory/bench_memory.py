"""Long-term memory: LangGraph's PostgresStore against AgentStateStore, side by side in one run.

PostgresStore keeps its tables in a schema of its own (search_path) and is used as its docs show
(one store over a pool of autocommit connections). AgentStateStore runs as a tenant (a member of
ai_user: RLS and the function-only grants apply) over the same kind of pool. Both hold the same
items: BENCH_MEMORY_ITEMS in all, BENCH_MEMORY_TENANTS tenants (PostgresStore: a first namespace
label per tenant), 50 users per tenant. Every call is tenant 0's, one thread.

  prepare    the tenants' roles, PostgresStore's schema and tables (its own setup())
  load-put   both stores filled through put() (bench/memory.sh loads in bulk SQL as a superuser)
  measure    each point for BENCH_SECONDS, PostgresStore and ours in turn, BENCH_REPEATS rounds
             (medians); with BENCH_MEMORY_EMPTY_URL (a copy of the database holding tenant 0's
             items only) also tenant 0's calls there and here in turn: the other tenants' items
             at 0 and at full size.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.postgres import PostgresStore
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from agent_state.langgraph import AgentStateStore

URL = os.environ["DATABASE_URL"]
EMPTY_URL = os.environ.get("BENCH_MEMORY_EMPTY_URL", "")
ITEMS = int(os.environ.get("BENCH_MEMORY_ITEMS", "10000"))
TENANTS = int(os.environ.get("BENCH_MEMORY_TENANTS", "4"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "3"))
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
PG_SCHEMA = "bench_langgraph_store"
USERS = 50
WORDS = [
    "apple",
    "banana",
    "cherry",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
]


def url_with(base: str, **params: str) -> str:
    extra = "&".join(f"{k}={v}" for k, v in params.items())
    return f"{base}{'&' if '?' in base else '?'}{extra}"


def tenant(k: int) -> str:
    return f"bench_mem_t{k}"


def prepare() -> None:
    with psycopg.connect(URL, autocommit=True) as conn:
        for k in range(TENANTS):
            conn.execute(
                f"do $$ begin if not exists (select from pg_roles where rolname = '{tenant(k)}') then "
                f"create role {tenant(k)} login; end if; end $$"
            )
            conn.execute(f"grant ai_user to {tenant(k)}")
        conn.execute(f"drop schema if exists {PG_SCHEMA} cascade")
        conn.execute(f"create schema {PG_SCHEMA}")
    with theirs(URL) as pg:
        pg.setup()


def value(i: int) -> dict[str, Any]:
    rng = random.Random(i)
    return {"n": i % 1000, "tag": f"t{i % 7}", "text": " ".join(rng.choice(WORDS) for _ in range(12))}


def load(store: BaseStore, prefix: tuple[str, ...], count: int) -> None:
    ops: list[Any] = []
    for i in range(count):
        ops.append(PutOp((*prefix, "users", f"u{i % USERS}"), f"k{i}", value(i)))
        if len(ops) == 500:
            store.batch(ops)
            ops = []
    if ops:
        store.batch(ops)


@contextmanager
def theirs(base: str) -> Iterator[PostgresStore]:
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    url = url_with(base, options=f"-csearch_path%3D{PG_SCHEMA}")
    with ConnectionPool(url, min_size=1, max_size=2, kwargs=kwargs) as pool:
        yield PostgresStore(pool)  # type: ignore[arg-type]


@contextmanager
def ours(base: str, k: int = 0) -> Iterator[AgentStateStore]:
    with ConnectionPool(url_with(base, user=tenant(k)), min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
        yield AgentStateStore(pool)


def load_put() -> None:
    with theirs(URL) as pg:
        for k in range(TENANTS):
            load(pg, (f"t{k}",), ITEMS // TENANTS)
    for k in range(TENANTS):
        with ours(URL, k) as store:
            load(store, (), ITEMS // TENANTS)


def rate(call: Callable[[int], Any]) -> float:
    """ms per call of call(i), called for SECONDS (after a few unmeasured calls)."""
    for i in range(3):
        call(i)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < SECONDS:
        call(n)
        n += 1
    return 1000 * (time.perf_counter() - start) / n


def points(store: BaseStore, prefix: tuple[str, ...]) -> dict[str, Callable[[int], Any]]:
    per = ITEMS // TENANTS
    return {
        "put (update)": lambda i: store.put(
            (*prefix, "users", f"u{i % USERS}"), f"k{(i * USERS + i % USERS) % per}", value(i)
        ),
        "get": lambda i: store.get((*prefix, "users", f"u{i % USERS}"), f"k{(i * USERS + i % USERS) % per}"),
        "search filter ($gt, one user)": lambda i: store.search(
            (*prefix, "users", f"u{i % USERS}"), filter={"n": {"$gt": 500}}, limit=10
        ),
        "search filter (tag, all users)": lambda i: store.search(prefix, filter={"tag": f"t{i % 7}"}, limit=10),
        "search query (text)": lambda i: store.search(prefix, query=WORDS[i % len(WORDS)], limit=10),
    }


def in_turn(a: dict[str, Callable[[int], Any]], b: dict[str, Callable[[int], Any]]) -> dict[str, tuple[float, float]]:
    """Median ms per call of each point of a and of b, measured in turn, REPEATS rounds (the
    order flips each round), so a load that comes and goes on the machine falls on both."""
    found: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in a}
    for r in range(REPEATS):
        for name in a:
            if r % 2 == 0:
                found[name][0].append(rate(a[name]))
                found[name][1].append(rate(b[name]))
            else:
                found[name][1].append(rate(b[name]))
                found[name][0].append(rate(a[name]))
    return {name: (statistics.median(x), statistics.median(y)) for name, (x, y) in found.items()}


def load_average() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def measure() -> None:
    per = ITEMS // TENANTS
    print(f"memory: {ITEMS} items, {TENANTS} tenants ({per} each, {USERS} users each), {SECONDS:g} s per point, "
          f"median of {REPEATS} rounds in turn; {load_average()}")  # fmt: skip
    with theirs(URL) as pg, ours(URL) as store:
        found = in_turn(points(pg, ("t0",)), points(store, ()))
    print(f"{'operation':34} {'PostgresStore/s':>16} {'ms':>7} {'AgentStateStore/s':>18} {'ms':>7} {'ours/theirs':>11}")
    for name, (theirs_ms, ours_ms) in found.items():
        note = "  (PostgresStore ignores the query without an index)" if "query" in name else ""
        print(f"{name:34} {1000 / theirs_ms:16.0f} {theirs_ms:7.2f} {1000 / ours_ms:18.0f} {ours_ms:7.2f} "
              f"{theirs_ms / ours_ms:10.2f}x{note}")  # fmt: skip
    if EMPTY_URL:
        others = per * (TENANTS - 1)
        print(f"tenant 0's calls ({per} items) with the other tenants holding 0 and {others} items, "
              "in turn (ms per call):")  # fmt: skip
        print(f"{'operation':34} {'ours: 0':>9} {'full':>8} {'ratio':>6}   "
              f"{'PostgresStore: 0':>16} {'full':>8} {'ratio':>6}")  # fmt: skip
        with ours(EMPTY_URL) as empty, ours(URL) as full:
            ours_found = in_turn(points(empty, ()), points(full, ()))
        with theirs(EMPTY_URL) as empty_pg, theirs(URL) as full_pg:
            theirs_found = in_turn(points(empty_pg, ("t0",)), points(full_pg, ("t0",)))
        for name, (e, f) in ours_found.items():
            te, tf = theirs_found[name]
            print(f"{name:34} {e:9.2f} {f:8.2f} {f / e:6.2f}   {te:16.2f} {tf:8.2f} {tf / te:6.2f}")
    print(f"({load_average()} at the end)")


if __name__ == "__main__":
    {"prepare": prepare, "load-put": load_put, "measure": measure}[sys.argv[1]]()
