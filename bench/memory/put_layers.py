"""A memory put, layer by layer: the server's CPU per ai.put_memory with one part of it taken out.

Each variant is a copy of a database ``bench/memory.sh`` kept (BENCH_KEEP=1; tenant 0's items
and PostgresStore's table) with one change made as the superuser (an index dropped, the CHECK
dropped, RLS off, the embeddings' delete taken out of the function, ...), or a different call
(index_texts empty: no search text). Every variant's ai.put_memory and PostgresStore's upsert (in
the same copy) are measured in turn, ROUNDS interleaved rounds of CALLS random existing keys of
tenant 0, each call its own transaction; the backend's CPU from /proc/<pid>/schedstat (the server
must run on this machine). Prints the median CPU us per call and the median of the per-round ratios
to PostgresStore's upsert. The copies are dropped at the end.

  DATABASE_URL=postgresql:///agent_state_bench_memory_empty bench/memory/put_layers.py [ROUNDS [CALLS]]

(ablations for measuring only: none of them is a change to make as such, each breaks a guarantee.)
"""

from __future__ import annotations

import os
import random
import re
import statistics
import sys
from typing import Any

import psycopg

URL = os.environ["DATABASE_URL"]
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 7
CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
ITEMS = int(os.environ.get("BENCH_MEMORY_ITEMS", "10000")) // int(os.environ.get("BENCH_MEMORY_TENANTS", "4"))
# the same calls as put_cpu.py's
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from put_cpu import OURS, THEIRS, VALUE  # noqa: E402

OURS_NO_TEXT = "select ai.put_memory(array['users', %s], %s, %s::jsonb, index_texts => '{}')"


def no_vector_delete(c: psycopg.Connection[Any]) -> None:
    src = c.execute("select pg_get_functiondef('ai.put_memory(text[],text,jsonb,interval,text[],jsonb)'::regprocedure)")
    row = src.fetchone()
    assert row is not None
    body = re.sub(r"\n  delete from ai\.memory_vectors v [^\n]*\n", "\n", row[0])
    assert body != row[0]
    c.execute(body)


#: name -> (SQL run as the superuser in the copy, or a function of the connection; the call)
VARIANTS: dict[str, tuple[Any, str]] = {
    "as is": ("", OURS),
    "index_texts empty (no search text)": ("", OURS_NO_TEXT),
    "no GIN on value": ("drop index ai.memory_items_value", OURS),
    "no GIN on search text": ("drop index ai.memory_items_search_text", OURS),
    "no newest index": ("drop index ai.memory_items_newest", OURS),
    "no CHECK": ("alter table ai.memory_items drop constraint memory_items_row_check", OURS),
    "no RLS": (
        "alter table ai.memory_items no force row level security;"
        " alter table ai.memory_items disable row level security;"
        " alter table ai.memory_vectors no force row level security;"
        " alter table ai.memory_vectors disable row level security",
        OURS,
    ),
    "no embeddings' delete": (no_vector_delete, OURS),
    "no SET search_path": ("alter function ai.put_memory(text[],text,jsonb,interval,text[],jsonb) reset all", OURS),
    "only PK (no index but the key, no CHECK, no text)": (
        "drop index ai.memory_items_value; drop index ai.memory_items_search_text;"
        " drop index ai.memory_items_newest; drop index ai.memory_items_expiry;"
        " alter table ai.memory_items drop constraint memory_items_row_check",
        OURS_NO_TEXT,
    ),
}


def cpu_ns(pid: int) -> int:
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def main() -> None:
    admin = psycopg.connect(URL, autocommit=True)
    template = admin.info.dbname
    admin.execute(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = %s and pid <> pg_backend_pid()",
        (template,),
    )
    conn_admin = psycopg.connect(URL, dbname="postgres", autocommit=True)
    admin.close()
    sides: dict[str, tuple[psycopg.Connection[Any], psycopg.Connection[Any], str]] = {}
    for k, (name, (change, call)) in enumerate(VARIANTS.items()):
        db = f"{template}_layer{k}"
        conn_admin.execute(f'drop database if exists "{db}" with (force)')
        conn_admin.execute(f'create database "{db}" template "{template}"')
        sup = psycopg.connect(URL, dbname=db, autocommit=True)
        if callable(change):
            change(sup)
        elif change:
            sup.execute(change)
        sup.execute("vacuum analyze ai.memory_items")
        tenant = psycopg.connect(URL, dbname=db, user="bench_mem_t0", autocommit=True)
        sides[name] = (sup, tenant, call)
    got: dict[str, list[float]] = {n: [] for n in sides}
    ratio: dict[str, list[float]] = {n: [] for n in sides}
    theirs_all: list[float] = []
    try:
        for _ in range(ROUNDS):
            for name, (sup, tenant, call) in sides.items():
                per: dict[str, float] = {}
                for who, conn, sql, ns in (("theirs", sup, THEIRS, "t0.users.u"), ("ours", tenant, call, "u")):
                    keys = [random.randrange(ITEMS) for _ in range(CALLS)]
                    args = [(f"{ns}{i % 50}", f"k{i}", VALUE % (i % 1000, i % 7)) for i in keys]
                    for a in args[:20]:
                        conn.execute(sql, a, prepare=True)
                    pid = conn.info.backend_pid
                    t0 = cpu_ns(pid)
                    for a in args:
                        conn.execute(sql, a, prepare=True)
                    per[who] = (cpu_ns(pid) - t0) / CALLS / 1e3
                got[name].append(per["ours"])
                ratio[name].append(per["ours"] / per["theirs"])
                theirs_all.append(per["theirs"])
    finally:
        for k, (sup, tenant, _) in enumerate(sides.values()):
            sup.close()
            tenant.close()
            conn_admin.execute(f'drop database if exists "{template}_layer{k}" with (force)')
    print(f"PostgresStore upsert: {statistics.median(theirs_all):.1f} us CPU per call (median of all rounds)")
    print(f"{'ai.put_memory, us CPU per call, median of ' + str(ROUNDS):56} {'us':>7} {'/theirs':>8}")
    for name in sides:
        print(f"{name:56} {statistics.median(got[name]):7.1f} {statistics.median(ratio[name]):8.2f}")


if __name__ == "__main__":
    main()
