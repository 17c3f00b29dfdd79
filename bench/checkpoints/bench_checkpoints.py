"""Checkpoints: LangGraph's PostgresSaver against AgentStateSaver, side by side in one run.

Same cluster, same realistic checkpoint (a messages channel of 20 LangChain messages of ~500
characters plus a few small channels, every channel at a new version each step), same LangGraph
serde on both sides. PostgresSaver runs in its usual set-up (one saver over a pool, shared by the
threads) and in its fastest (one saver, one connection, per thread); AgentStateSaver runs as an
ai_user tenant (RLS is paid) with one saver over a pool shared by the threads.

Prints operations per second (median of BENCH_REPEATS runs of BENCH_SECONDS each) and the ratios,
then checkpoint_lineage over a 10,000-deep chain against one index range scan over the same rows,
then the bytes stored per checkpoint. Run by bench/checkpoints.sh (make bench), which makes the
database of DATABASE_URL.
"""

from __future__ import annotations

import contextlib
import os
import random
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from agent_state.langgraph import AgentStateSaver

URL = os.environ["DATABASE_URL"]
SECONDS = float(os.environ.get("BENCH_SECONDS", "3"))
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
TENANT = "bench_ckpt_tenant"
PG_SCHEMA = "bench_langgraph"
CHAIN = int(os.environ.get("BENCH_CHAIN", "10000"))


def url_with(**params: str) -> str:
    extra = "&".join(f"{k}={v}" for k, v in params.items())
    return f"{URL}{'&' if '?' in URL else '?'}{extra}"


TENANT_URL = url_with(user=TENANT)
PG_URL = url_with(options=f"-csearch_path%3D{PG_SCHEMA}")


def setup() -> None:
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(
            f"do $$ begin if not exists (select from pg_roles where rolname = '{TENANT}') then "
            f"create role {TENANT} login; end if; end $$"
        )
        conn.execute(f"grant ai_user to {TENANT}")
        conn.execute(f"drop schema if exists {PG_SCHEMA} cascade")
        conn.execute(f"create schema {PG_SCHEMA}")
    with PostgresSaver.from_conn_string(PG_URL) as saver:
        saver.setup()


# -- the realistic checkpoint ---------------------------------------------------------------------

WORDS = [
    "agent",
    "tool",
    "search",
    "result",
    "plan",
    "step",
    "user",
    "answer",
    "hotel",
    "flight",
    "weather",
    "price",
    "city",
    "museum",
    "day",
    "morning",
    "evening",
    "train",
    "ticket",
    "booking",
    "review",
    "summary",
    "option",
    "compare",
    "choose",
    "because",
    "however",
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "for",
    "with",
    "on",
    "at",
    "by",
    "from",
    "about",
    "into",
    "over",
    "after",
    "before",
    "between",
]


def text(seed: int, size: int = 500) -> str:
    """~size characters of English-like prose, different for every seed (compresses like real text)."""
    rng = random.Random(seed)
    out: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(WORDS)
        out.append(word)
        length += len(word) + 1
    return " ".join(out)[:size]


TEXT = text(0)


# 32 different message histories, made once: the harness must not spend the time it measures.
MESSAGES = [
    [(HumanMessage if i % 2 == 0 else AIMessage)(content=text(step * 100 + i), id=f"m-{step}-{i}") for i in range(20)]
    for step in range(32)
]


def state(step: int) -> dict[str, Any]:
    return {
        "messages": MESSAGES[step % len(MESSAGES)],
        "step": step,
        "route": "tools" if step % 2 else "agent",
        "scratch": {"tool_calls": step % 3, "last_tool": "search", "notes": ["a", "b"]},
    }


def make_checkpoint(saver: BaseCheckpointSaver, previous: dict[str, Any] | None, step: int) -> tuple[Any, Any]:
    """A checkpoint whose every channel has a new version (as a step that touches them all)."""
    cp = empty_checkpoint()
    values = state(step)
    old = previous["channel_versions"] if previous else {}
    versions = {k: saver.get_next_version(old.get(k), None) for k in values}
    cp["channel_values"] = values
    cp["channel_versions"] = versions
    cp["versions_seen"] = {"agent": dict(versions), "tools": dict(versions)}
    return cp, versions


def metadata(step: int) -> dict[str, Any]:
    return {"source": "loop", "step": step, "parents": {}, "run_id": "bench"}


class Worker:
    """One graph thread: its own thread_id and chain of checkpoints."""

    def __init__(self, saver: BaseCheckpointSaver, thread_id: str):
        self.saver = saver
        self.thread_id = thread_id
        self.config: dict[str, Any] = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        self.previous: dict[str, Any] | None = None
        self.step = 0

    def put(self) -> None:
        cp, versions = make_checkpoint(self.saver, self.previous, self.step)
        self.config = self.saver.put(self.config, cp, metadata(self.step), versions)
        self.previous = cp
        self.step += 1

    def put_writes(self) -> None:
        self.saver.put_writes(
            self.config, [("messages", [AIMessage(content=TEXT)]), ("route", "agent")], str(uuid.uuid4())
        )

    def get_tuple(self) -> None:
        found = self.saver.get_tuple({"configurable": {"thread_id": self.thread_id, "checkpoint_ns": ""}})
        assert found is not None

    def list50(self) -> None:
        found = list(self.saver.list({"configurable": {"thread_id": self.thread_id}}, limit=50))
        assert len(found) == 50


# -- the set-ups ----------------------------------------------------------------------------------


class Setup:
    """Makes the savers for n threads, and closes what it opened."""

    def __init__(self, name: str, make: Callable[[int], tuple[list[BaseCheckpointSaver], list[Any]]]):
        self.name = name
        self.make = make


def pg_shared(n: int) -> tuple[list[BaseCheckpointSaver], list[Any]]:
    pool = ConnectionPool(
        PG_URL,
        min_size=n,
        max_size=n,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        open=True,
    )
    saver = PostgresSaver(pool)
    return [saver] * n, [pool]


def pg_per_thread(n: int) -> tuple[list[BaseCheckpointSaver], list[Any]]:
    conns = [psycopg.connect(PG_URL, autocommit=True, prepare_threshold=0, row_factory=dict_row) for _ in range(n)]
    return [PostgresSaver(c) for c in conns], conns


def ours_shared(n: int) -> tuple[list[BaseCheckpointSaver], list[Any]]:
    pool = ConnectionPool(TENANT_URL, min_size=n, max_size=n, kwargs={"autocommit": True}, open=True)
    saver = AgentStateSaver(pool)
    return [saver] * n, [pool]


SETUPS = [
    Setup("PostgresSaver, one saver over a pool (usual)", pg_shared),
    Setup("PostgresSaver, one saver per thread (fastest)", pg_per_thread),
    Setup("AgentStateSaver, one saver over a pool", ours_shared),
]
OPERATIONS = os.environ.get("BENCH_OPERATIONS", "put put_writes get_tuple list50").split()
THREADS = [int(n) for n in os.environ.get("BENCH_THREADS", "1 8").split()]


def settle() -> None:
    """Vacuum and analyze both sides' tables before a point, so neither is measured while
    autovacuum works on what the previous point wrote (on 2 cores that decides a point)."""
    tables = [f"{PG_SCHEMA}.checkpoints", f"{PG_SCHEMA}.checkpoint_blobs", f"{PG_SCHEMA}.checkpoint_writes"]
    tables += ["ai.checkpoints", "ai.checkpoint_blobs", "ai.checkpoint_writes", "ai.agent_sessions"]
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(f"vacuum (analyze) {', '.join(tables)}")


def run_point(setup: Setup, threads: int, operation: str) -> float:
    """Operations per second: median over REPEATS runs of SECONDS each."""
    settle()
    savers, closeables = setup.make(threads)
    try:
        workers = [Worker(s, f"bench-{uuid.uuid4()}") for s in savers]
        for w in workers:  # every thread has 50 checkpoints to read, list and write on
            for _ in range(50):
                w.put()
        results = []
        for _ in range(REPEATS):
            counts = [0] * threads
            stop = threading.Event()
            start = threading.Barrier(threads + 1)

            def loop(
                i: int, w: Worker, counts: list[int] = counts, stop: threading.Event = stop, start: Any = start
            ) -> None:
                op = getattr(w, operation)
                start.wait()
                while not stop.is_set():
                    op()
                    counts[i] += 1

            pool = [threading.Thread(target=loop, args=(i, w)) for i, w in enumerate(workers)]
            for t in pool:
                t.start()
            start.wait()
            began = time.perf_counter()
            time.sleep(SECONDS)
            stop.set()
            for t in pool:
                t.join()
            results.append(sum(counts) / (time.perf_counter() - began))
        return statistics.median(results)
    finally:
        for c in closeables:
            c.close()


def throughput() -> None:
    print(f"operations per second (median of {REPEATS} x {SECONDS:g}s), same run, same cluster")
    header = f"{'operation':<11} {'threads':>7} " + " ".join(f"{s.name.split(',')[0][:15]:>15}" for s in SETUPS)
    print(f"{'':<20}" + "   ".join(f"[{i}] {s.name}" for i, s in enumerate(SETUPS)))
    print(header.replace("PostgresSaver  ", "[0] usual      ", 1))
    rows = []
    for threads in THREADS:
        for operation in OPERATIONS:
            figures = [run_point(s, threads, operation) for s in SETUPS]
            rows.append((operation, threads, figures))
            usual, fastest, ours = figures
            print(
                f"{operation:<11} {threads:>7} {usual:>12.0f}/s {fastest:>12.0f}/s {ours:>12.0f}/s"
                f"   ours/usual {ours / usual:5.2f}x   ours/fastest {ours / fastest:5.2f}x",
                flush=True,
            )


# -- lineage --------------------------------------------------------------------------------------


def lineage() -> None:
    thread = f"bench-chain-{uuid.uuid4()}"
    with psycopg.connect(TENANT_URL, autocommit=True) as conn:
        # a CHAIN-deep chain, its rows interleaved with those of 4 other threads
        conn.execute(
            """
            do $$
            declare
              v_parent text;
              v_id text;
              v_others text[] := array[%(t)s || '-o1', %(t)s || '-o2', %(t)s || '-o3', %(t)s || '-o4'];
              v_other text;
            begin
              for i in 1 .. %(n)s loop
                v_id := ai.put_checkpoint(%(t)s, '', null, v_parent, 'bench', '\\x00', '{}');
                v_parent := v_id;
                foreach v_other in array v_others loop
                  perform ai.put_checkpoint(v_other, '', null, null, 'bench', '\\x00', '{}');
                end loop;
              end loop;
            end $$
            """.replace("%(t)s", f"'{thread}'").replace("%(n)s", str(CHAIN))
        )
        head = conn.execute("select checkpoint_id from ai.get_checkpoint(%s, '', null)", (thread,))
        head_id = head.fetchone()[0]  # type: ignore[index]

        def timed(sql: str, on: psycopg.Connection[Any]) -> float:
            runs = []
            for _ in range(max(5, REPEATS * 3)):
                began = time.perf_counter()
                rows = on.execute(sql, (thread, head_id)).fetchall()
                runs.append(time.perf_counter() - began)
                assert len(rows) == CHAIN, len(rows)
            return statistics.median(runs) * 1000

        walk = timed("select * from ai.checkpoint_lineage(%s, %s)", conn)
    # The bare scan: a tenant may not read the table, so it runs as the role of DATABASE_URL (a
    # superuser, or the schema owner, whose forced RLS is lifted for this rolled-back transaction).
    with psycopg.connect(URL) as su:
        su.execute("alter table ai.checkpoints no force row level security")
        scan = timed(
            "select checkpoint_id, parent_checkpoint_id, created_at, metadata from ai.checkpoints "
            "where thread_id = %s and checkpoint_ns = '' and checkpoint_id <= %s order by checkpoint_id desc",
            su,
        )
        su.rollback()
    print(f"\ncheckpoint_lineage over a {CHAIN}-deep chain (rows interleaved with 4 other threads'):")
    print(f"  index range scan of the same {CHAIN} rows  {scan:8.1f} ms")
    print(f"  ai.checkpoint_lineage (ancestors)          {walk:8.1f} ms   {walk / scan:5.2f}x the range scan")


# -- bytes per checkpoint -------------------------------------------------------------------------


def _disk_bytes(conn: psycopg.Connection[Any], tables: list[str]) -> int:
    with contextlib.suppress(psycopg.errors.InsufficientPrivilege):  # a superuser or pg_checkpoint may
        conn.execute("checkpoint")  # nothing pending in shared buffers' accounting
    sql = " + ".join(f"pg_total_relation_size('{t}')" for t in tables)
    return int(conn.execute(f"select {sql}").fetchone()[0])  # type: ignore[index]


def bytes_per_checkpoint() -> None:
    """Growth of the tables (heap, TOAST and indexes) per checkpoint, n checkpoints on a fresh thread."""
    n = 200
    pg_tables = [f"{PG_SCHEMA}.checkpoints", f"{PG_SCHEMA}.checkpoint_blobs", f"{PG_SCHEMA}.checkpoint_writes"]
    our_tables = ["ai.checkpoints", "ai.checkpoint_blobs", "ai.checkpoint_writes"]
    figures = {}
    with psycopg.connect(URL, autocommit=True) as su:
        before = _disk_bytes(su, pg_tables)
        with psycopg.connect(PG_URL, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
            w = Worker(PostgresSaver(conn), f"bench-bytes-{uuid.uuid4()}")
            for _ in range(n):
                w.put()
        figures["PostgresSaver"] = (_disk_bytes(su, pg_tables) - before) / n
        before = _disk_bytes(su, our_tables)
        with psycopg.connect(TENANT_URL, autocommit=True) as conn:
            w = Worker(AgentStateSaver(conn), f"bench-bytes-{uuid.uuid4()}")
            for _ in range(n):
                w.put()
        figures["AgentStateSaver"] = (_disk_bytes(su, our_tables) - before) / n
    pg, ours = figures["PostgresSaver"], figures["AgentStateSaver"]
    print(f"\nbytes on disk per checkpoint (growth of heap + TOAST + indexes over {n} checkpoints):")
    print(f"  PostgresSaver    {pg:9.0f} B")
    print(f"  AgentStateSaver  {ours:9.0f} B   {ours / pg:5.2f}x")


def main() -> None:
    setup()
    parts = sys.argv[1:] or ["throughput", "lineage", "bytes"]
    if "throughput" in parts:
        throughput()
    if "lineage" in parts:
        lineage()
    if "bytes" in parts:
        bytes_per_checkpoint()


if __name__ == "__main__":
    main()
