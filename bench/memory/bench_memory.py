"""Long-term memory: LangGraph's PostgresStore against AgentStateStore, side by side in one run.

PostgresStore keeps its tables in a schema of its own (search_path) and is used as its docs show
(one store over a pool of autocommit connections). AgentStateStore runs as a tenant (a member of
ai_user: RLS and the function-only grants apply) over the same kind of pool. Both hold the same
items: BENCH_MEMORY_ITEMS in all, BENCH_MEMORY_TENANTS tenants (PostgresStore: a first namespace
label per tenant), 50 users per tenant. Each point runs for BENCH_SECONDS, one thread.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from typing import Any

import psycopg
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.postgres import PostgresStore
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from agent_state.langgraph import AgentStateStore

URL = os.environ["DATABASE_URL"]
ITEMS = int(os.environ.get("BENCH_MEMORY_ITEMS", "10000"))
TENANTS = int(os.environ.get("BENCH_MEMORY_TENANTS", "4"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "3"))
PG_SCHEMA = "bench_langgraph_store"
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


def url_with(**params: str) -> str:
    extra = "&".join(f"{k}={v}" for k, v in params.items())
    return f"{URL}{'&' if '?' in URL else '?'}{extra}"


def tenant(k: int) -> str:
    return f"bench_mem_t{k}"


def setup() -> None:
    with psycopg.connect(URL, autocommit=True) as conn:
        for k in range(TENANTS):
            conn.execute(
                f"do $$ begin if not exists (select from pg_roles where rolname = '{tenant(k)}') then "
                f"create role {tenant(k)} login; end if; end $$"
            )
            conn.execute(f"grant ai_user to {tenant(k)}")
        conn.execute(f"drop schema if exists {PG_SCHEMA} cascade")
        conn.execute(f"create schema {PG_SCHEMA}")


def value(i: int) -> dict[str, Any]:
    rng = random.Random(i)
    return {"n": i % 1000, "tag": f"t{i % 7}", "text": " ".join(rng.choice(WORDS) for _ in range(12))}


def load(store: BaseStore, prefix: tuple[str, ...], count: int) -> None:
    ops: list[Any] = []
    for i in range(count):
        ops.append(PutOp((*prefix, "users", f"u{i % 50}"), f"k{i}", value(i)))
        if len(ops) == 500:
            store.batch(ops)
            ops = []
    if ops:
        store.batch(ops)


def rate(call: Callable[[int], Any]) -> tuple[float, float]:
    """Calls per second and ms per call of call(i) for SECONDS."""
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < SECONDS:
        call(n)
        n += 1
    elapsed = time.perf_counter() - start
    return n / elapsed, 1000 * elapsed / n


def points(store: BaseStore, prefix: tuple[str, ...]) -> dict[str, tuple[float, float]]:
    per = ITEMS // TENANTS
    return {
        "put (update)": rate(lambda i: store.put((*prefix, "users", f"u{i % 50}"), f"k{(i * 50) % per}", value(i))),
        "get": rate(lambda i: store.get((*prefix, "users", f"u{i % 50}"), f"k{(i * 50 + i % 50) % per}")),
        "search filter ($gt, one user)": rate(
            lambda i: store.search((*prefix, "users", f"u{i % 50}"), filter={"n": {"$gt": 500}}, limit=10)
        ),
        "search filter (tag, all users)": rate(lambda i: store.search(prefix, filter={"tag": f"t{i % 7}"}, limit=10)),
        "search query (text)": rate(lambda i: store.search(prefix, query=WORDS[i % len(WORDS)], limit=10)),
    }


def main() -> None:
    setup()
    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    pg_url = url_with(options=f"-csearch_path%3D{PG_SCHEMA}")
    with ConnectionPool(pg_url, min_size=1, max_size=2, kwargs=kwargs) as pg_pool:
        pg = PostgresStore(pg_pool)  # type: ignore[arg-type]
        pg.setup()
        for k in range(TENANTS):
            load(pg, (f"t{k}",), ITEMS // TENANTS)
        pg_points = points(pg, ("t0",))
    for k in range(TENANTS):
        with ConnectionPool(url_with(user=tenant(k)), min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
            store = AgentStateStore(pool)
            load(store, (), ITEMS // TENANTS)
    with ConnectionPool(url_with(user=tenant(0)), min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
        ours_points = points(AgentStateStore(pool), ())
    print(f"memory: {ITEMS} items, {TENANTS} tenants ({ITEMS // TENANTS} each, 50 users each), {SECONDS:g} s per point")
    print(f"{'operation':34} {'PostgresStore/s':>16} {'ms':>7} {'AgentStateStore/s':>18} {'ms':>7} {'ours/theirs':>11}")
    for name, (theirs, theirs_ms) in pg_points.items():
        ours, ours_ms = ours_points[name]
        note = "  (PostgresStore ignores the query without an index)" if "query" in name else ""
        print(f"{name:34} {theirs:16.0f} {theirs_ms:7.2f} {ours:18.0f} {ours_ms:7.2f} {ours / theirs:10.2f}x{note}")


if __name__ == "__main__":
    main()
