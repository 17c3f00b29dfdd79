"""Checkpoint reads that depend on their own thread only (issue 34 item 3, issue 41 item 6).

1. **Thread reads** at 200, 1,000 and 3,000 steps (one message appended per step, one invoke),
   AgentStateSaver (delta-stored messages) beside LangGraph's stock PostgresSaver, both with the
   other tenant's rows of the crowd below present: median of get_tuple of the newest checkpoint.
2. **Durable runs as the database fills**: a 24-node chain (1 ms per node, a message appended per
   node) run as GraphRuns jobs by graph_worker (the Worker, in this process), and the same graph
   invoked through AgentStateSaver in the caller's process, with 10 k, 100 k and 1 M checkpoints
   (and as many delta-stored channel values, of the same channel name) of other threads of
   another tenant in the tables: steps per second of each.

3. **One-turn invokes** (issue 34 item 4): N invokes of a one-reply graph on one thread (two
   checkpoints each, one saver), then the median get_tuple of the newest checkpoint, ours beside
   PostgresSaver, with the most links a read of the thread follows.
4. **Delta chain depth** (BENCH_READ_DEPTHS, off by default): for each bound, ai._max_delta_depth()
   replaced (in this bench's database only) and the one-turn invokes run again: the read of the
   checkpoint deepest in its chain, bytes stored and WAL per invoke; the trade the bound is chosen
   from (docs/benchmarks.md, "Delta chain depth"). The deployed bound is put back after.

The crowd is loaded in bulk SQL (generate_series) as the database's owner. Run by
bench/checkpoint_reads.sh (DATABASE_URL: its own database). Sizes: BENCH_READ_STEPS ("200 1000
3000"), BENCH_READ_CROWDS ("10000 100000 1000000"), BENCH_READ_RUNS (graph runs per point, 8),
BENCH_REPEATS (3), BENCH_READ_INVOKES ("600"), BENCH_READ_DEPTHS ("", e.g. "8 16 32 64 128"),
BENCH_READ_DEPTH_INVOKES (300).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import uuid
from typing import Annotated, Any

import psycopg
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from psycopg.conninfo import make_conninfo
from psycopg_pool import ConnectionPool
from typing_extensions import TypedDict

from agent_state import Client
from agent_state.graph_runs import GraphRuns, graph_worker
from agent_state.langgraph import AgentStateSaver

URL = os.environ["DATABASE_URL"]
STEPS = [int(n) for n in os.environ.get("BENCH_READ_STEPS", "200 1000 3000").split()]
CROWDS = [int(n) for n in os.environ.get("BENCH_READ_CROWDS", "10000 100000 1000000").split()]
RUNS = int(os.environ.get("BENCH_READ_RUNS", "8"))
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
INVOKES = [int(n) for n in os.environ.get("BENCH_READ_INVOKES", "600").split()]
DEPTHS = [int(n) for n in os.environ.get("BENCH_READ_DEPTHS", "").split()]
DEPTH_INVOKES = int(os.environ.get("BENCH_READ_DEPTH_INVOKES", "300"))
NODES = 24
TENANT, WORKER, CROWD_TENANT = "bench_reads_tenant", "bench_reads_worker", "bench_reads_crowd"
PG_SCHEMA = "bench_reads_pg"
TENANT_URL = make_conninfo(URL, user=TENANT)
WORKER_URL = make_conninfo(URL, user=WORKER)
PG_URL = make_conninfo(URL, options=f"-csearch_path={PG_SCHEMA}")
CROWD_THREADS = 1000  # the crowd's checkpoints spread over this many threads
#: when each node of the chain started: steps/s is timed from the first node to the last, so a
#: worker's start-up and shutdown (its pool, its drain check) are not counted, as in bench/queue
STAMPS: list[float] = []


class Chat(TypedDict):
    messages: Annotated[list[Any], add_messages]


def _long_thread(saver: Any, steps: int) -> Any:
    def step(state: Chat) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"step {n}: a reply of about the length of a sentence or two.", id=f"m{n}")]}

    b = StateGraph(Chat)
    b.add_node("step", step)
    b.add_edge(START, "step")
    b.add_conditional_edges("step", lambda s: END if len(s["messages"]) >= steps else "step", ["step", END])
    return b.compile(checkpointer=saver)


def _chain(saver: Any = None) -> Any:
    def node(state: Chat) -> dict[str, Any]:
        STAMPS.append(time.time())
        time.sleep(0.001)
        n = len(state["messages"])
        return {"messages": [AIMessage(f"node {n}", id=f"m{n}")]}

    b = StateGraph(Chat)
    for i in range(NODES):
        b.add_node(f"n{i}", node)
        b.add_edge(START if i == 0 else f"n{i - 1}", f"n{i}")
    b.add_edge(f"n{NODES - 1}", END)
    return b.compile(checkpointer=saver)


def setup() -> None:
    with psycopg.connect(URL, autocommit=True) as conn:
        for role, group in ((TENANT, "ai_user"), (WORKER, "ai_service"), (CROWD_TENANT, "ai_user")):
            conn.execute(
                f"do $$ begin if not exists (select from pg_roles where rolname = '{role}') then "
                f"create role {role} login; end if; end $$"
            )
            conn.execute(f"grant {group} to {role}")
        conn.execute(f"drop schema if exists {PG_SCHEMA} cascade")
        conn.execute(f"create schema {PG_SCHEMA}")
    with PostgresSaver.from_conn_string(PG_URL) as saver:
        saver.setup()


def crowd_to(total: int, have: int) -> int:
    """Another tenant's checkpoints up to ``total`` (each with a delta-stored 'messages' value and
    a pending write), in bulk; returns ``total``."""
    if total <= have:
        return have
    with psycopg.connect(URL, autocommit=True) as conn:
        if have == 0:
            conn.execute(f"set session authorization {CROWD_TENANT}")
            conn.execute("select ai.create_session('crowd-' || t) from generate_series(1, %s) t", (CROWD_THREADS,))
            conn.execute("reset session authorization")
        per, lo = total // CROWD_THREADS, have // CROWD_THREADS
        rows = "from ai.agent_sessions s, generate_series(%s::int, %s::int) v where s.thread_id like 'crowd-%%'"
        with conn.transaction():
            if conn.execute("select rolsuper from pg_roles where rolname = current_user").fetchone()[0]:  # type: ignore[index]
                conn.execute("set local session_replication_role = replica")  # valid rows: no per-row FK checks
            conn.execute(
                "insert into ai.checkpoint_blobs (thread_id, checkpoint_ns, channel, version, owner, type, blob,"
                " base_version) select s.thread_id, '', 'messages', lpad(v::text, 8, '0'), s.owner, 'msgpack',"
                " '\\x91a178'::bytea, case when v > 1 then lpad((v - 1)::text, 8, '0') end " + rows,
                (lo + 1, per),
            )
            conn.execute(
                "insert into ai.checkpoints (thread_id, checkpoint_ns, checkpoint_id, owner, type, checkpoint,"
                " channel_versions) select s.thread_id, '', lpad(v::text, 8, '0'), s.owner, 'msgpack', '\\x80'::bytea,"
                " jsonb_build_object('messages', lpad(v::text, 8, '0')) " + rows,
                (lo + 1, per),
            )
            conn.execute(
                "insert into ai.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, owner,"
                " channel, type, blob) select s.thread_id, '', lpad(v::text, 8, '0'), 't', 0, s.owner, 'messages',"
                " 'msgpack', '\\x90'::bytea " + rows,
                (lo + 1, per),
            )
        conn.execute("vacuum analyze ai.checkpoint_blobs, ai.checkpoints, ai.checkpoint_writes, ai.agent_sessions")
    return total


def median_read(saver: Any, thread: str, calls: int = 15) -> float:
    config = {"configurable": {"thread_id": thread}}
    saver.get_tuple(config)
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        saver.get_tuple(config)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def thread_reads() -> None:
    print(f"\nthread reads: get_tuple of the newest checkpoint, ms (median of 15; {CROWDS[0]:,} checkpoints of another"
          " tenant present)")  # fmt: skip
    print(f"{'steps':>6} {'AgentStateSaver':>16} {'PostgresSaver':>14} {'ratio':>6}")
    with (
        ConnectionPool(TENANT_URL, min_size=1, max_size=2, kwargs={"autocommit": True}) as pool,
        psycopg.connect(PG_URL, autocommit=True) as pg,
    ):
        ours, stock = AgentStateSaver(pool), PostgresSaver(pg)
        for steps in STEPS:
            thread = f"reads-{steps}-{uuid.uuid4().hex[:6]}"
            config = {"configurable": {"thread_id": thread}, "recursion_limit": steps + 10}
            start = {"messages": [HumanMessage("hi", id="m0")]}
            _long_thread(ours, steps).invoke(start, config, durability="sync")
            # stock writes the whole list at every step (O(n^2) bytes): its newest checkpoint, which
            # is what get_tuple reads, is the same with one save at the end
            _long_thread(stock, steps).invoke(start, config, durability="exit")
            a, b = median_read(ours, thread), median_read(stock, thread)
            print(f"{steps:>6} {a:>16.1f} {b:>14.1f} {a / b:>6.2f}", flush=True)


def _one_turn(saver: Any) -> Any:
    def reply(state: Chat) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"reply {n}: a reply of about the length of a sentence or two.", id=f"a{n}")]}

    b = StateGraph(Chat)
    b.add_node("reply", reply)
    b.add_edge(START, "reply")
    b.add_edge("reply", END)
    return b.compile(checkpointer=saver)


def _invoke_turns(saver: Any, thread: str, turns: int) -> None:
    graph, config = _one_turn(saver), {"configurable": {"thread_id": thread}}
    for turn in range(turns):
        graph.invoke({"messages": [HumanMessage(f"question {turn}", id=f"h{turn}")]}, config, durability="sync")


def _links(conn: psycopg.Connection[Any], thread: str) -> tuple[int, str | None]:
    """The most links a read of the thread's messages follows, and a checkpoint whose read follows them."""
    row = conn.execute(
        """
        with recursive chain as (
          select b.version as head, b.base_version, 0 as n from ai.checkpoint_blobs b
          where b.thread_id = %(t)s and b.channel = 'messages'
          union all
          select c.head, b.base_version, c.n + 1 from chain c
          join ai.checkpoint_blobs b on b.thread_id = %(t)s and b.checkpoint_ns = '' and b.channel = 'messages'
                                     and b.version = c.base_version
        ), deepest as (select head, n from chain order by n desc limit 1)
        select d.n, (select c.checkpoint_id from ai.checkpoints c where c.thread_id = %(t)s
                     and c.channel_versions ->> 'messages' = d.head order by c.checkpoint_id limit 1)
        from deepest d
        """,
        {"t": thread},
    ).fetchone()
    assert row is not None
    return int(row[0]), row[1]


def _median_ms(call: Any, calls: int = 15) -> float:
    call()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def _median_read_at(saver: Any, thread: str, checkpoint_id: str | None) -> float:
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}}
    return _median_ms(lambda: saver.get_tuple(config))


def invoke_reads() -> None:
    print("\none-turn invokes on one thread (two checkpoints each): get_tuple of the newest checkpoint, ms (median"
          " of 15; most of it is LangGraph's decoding of the list, on both sides), ai.get_checkpoint alone (the"
          " server's read, rows fetched undecoded), and the most links a read of the thread follows")  # fmt: skip
    print(f"{'invokes':>8} {'AgentStateSaver':>16} {'PostgresSaver':>14} {'ratio':>6} {'get_checkpoint':>15}"
          f" {'links':>6}")  # fmt: skip
    with (
        ConnectionPool(TENANT_URL, min_size=1, max_size=2, kwargs={"autocommit": True}) as pool,
        psycopg.connect(PG_URL, autocommit=True) as pg,
        psycopg.connect(URL, autocommit=True) as admin,
    ):
        ours, stock = AgentStateSaver(pool), PostgresSaver(pg)
        for turns in INVOKES:
            thread = f"invokes-{turns}-{uuid.uuid4().hex[:6]}"
            _invoke_turns(ours, thread, turns)
            _invoke_turns(stock, thread, turns)
            a, b = median_read(ours, thread), median_read(stock, thread)
            links, _ = _links(admin, thread)
            with pool.connection() as conn:
                raw = _median_ms(lambda t=thread: conn.execute("select * from ai.get_checkpoint(%s)", (t,)).fetchall())
            print(f"{turns:>8} {a:>16.1f} {b:>14.1f} {a / b:>6.2f} {raw:>15.2f} {links:>6}", flush=True)


def depth_trade() -> None:
    print(f"\ndelta chain depth: {DEPTH_INVOKES} one-turn invokes per bound (ai._max_delta_depth() replaced in this"
          " database); read of the deepest checkpoint, ms (median of 15); per invoke: WAL and stored bytes of"
          " 'messages'")  # fmt: skip
    print(f"{'bound':>6} {'links':>6} {'read ms':>8} {'WAL B/invoke':>13} {'stored B/invoke':>16}")
    with (
        ConnectionPool(TENANT_URL, min_size=1, max_size=2, kwargs={"autocommit": True}) as pool,
        psycopg.connect(URL, autocommit=True) as admin,
    ):
        deployed = admin.execute("select pg_get_functiondef('ai._max_delta_depth()'::regprocedure)").fetchone()[0]  # type: ignore[index]
        saver = AgentStateSaver(pool)
        try:
            for bound in DEPTHS:
                admin.execute(
                    "create or replace function ai._max_delta_depth() returns integer language sql immutable"
                    f" parallel safe set search_path = pg_catalog, pg_temp as $$ select {int(bound)} $$"
                )
                thread = f"depth-{bound}-{uuid.uuid4().hex[:6]}"
                lsn = admin.execute("select pg_current_wal_insert_lsn()").fetchone()[0]  # type: ignore[index]
                _invoke_turns(saver, thread, DEPTH_INVOKES)
                wal = admin.execute("select pg_current_wal_insert_lsn() - %s::pg_lsn", (lsn,)).fetchone()[0]  # type: ignore[index]
                stored = admin.execute(
                    "select sum(pg_column_size(blob)) from ai.checkpoint_blobs where thread_id = %s"
                    " and channel = 'messages'",
                    (thread,),
                ).fetchone()[0]  # type: ignore[index]
                links, deepest = _links(admin, thread)
                read = _median_read_at(saver, thread, deepest)
                print(f"{bound:>6} {links:>6} {read:>8.2f} {float(wal) / DEPTH_INVOKES:>13,.0f}"
                      f" {float(stored) / DEPTH_INVOKES:>16,.0f}", flush=True)  # fmt: skip
        finally:
            admin.execute(deployed)


def _span() -> float:
    """Seconds from the first node's start to the last node's start, over the steps between."""
    assert len(STAMPS) == RUNS * NODES, len(STAMPS)
    return (max(STAMPS) - min(STAMPS)) * RUNS * NODES / (RUNS * NODES - 1)


def steps_per_second(crowd: int) -> tuple[float, float]:
    """(graph_worker, AgentStateSaver in the caller's process): steps/s of RUNS runs of the chain."""
    tag = uuid.uuid4().hex[:6]
    graph = _chain()
    with psycopg.connect(TENANT_URL, autocommit=True) as conn:
        runs = GraphRuns(Client(conn), graph, queue=f"reads-{tag}")
        for i in range(RUNS):
            runs.start(f"gw-{tag}-{i}", {"messages": [{"type": "human", "content": "go", "id": "m0"}]})
    worker = graph_worker(WORKER_URL, graph, queue=f"reads-{tag}", poll_interval=0.05, listen=False)
    STAMPS.clear()
    stats = worker.run(drain=True, install_signal_handlers=False)  # opens and closes its pool
    worker_s = _span()
    assert stats.completed == RUNS, stats
    with ConnectionPool(TENANT_URL, min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
        saver = AgentStateSaver(pool)
        local = _chain(saver)
        with psycopg.connect(TENANT_URL, autocommit=True) as conn:
            for i in range(RUNS):
                Client(conn).create_session(f"local-{tag}-{i}")
        STAMPS.clear()
        for i in range(RUNS):
            local.invoke({"messages": [HumanMessage("go", id="m0")]},
                         {"configurable": {"thread_id": f"local-{tag}-{i}"}}, durability="sync")  # fmt: skip
        local_s = _span()
    return RUNS * NODES / worker_s, RUNS * NODES / local_s


def main() -> None:
    setup()
    have = crowd_to(CROWDS[0], 0)
    if STEPS:
        thread_reads()
    if INVOKES:
        invoke_reads()
    if DEPTHS:
        depth_trade()
    print(f"\ndurable runs: {NODES}-node chain, 1 ms per node, {RUNS} runs a point, steps per second"
          f" (median of {REPEATS})")  # fmt: skip
    print(f"{'other checkpoints':>18} {'graph_worker':>13} {'saver in process':>17} {'ratio':>6}")
    for crowd in CROWDS:
        have = crowd_to(crowd, have)
        got = [steps_per_second(crowd) for _ in range(REPEATS)]
        w, s = statistics.median(g[0] for g in got), statistics.median(g[1] for g in got)
        print(f"{crowd:>18,} {w:>13.0f} {s:>17.0f} {w / s:>6.2f}", flush=True)
    print("(the crowd: checkpoints of 1,000 threads of another tenant, each with a delta-stored 'messages' value and a"
          " pending write; graph_worker: GraphRuns jobs run by the Worker in this process, concurrency 1; timed from"
          " the first node's start to the last's, start-up and shutdown not counted)")  # fmt: skip
    load = os.getloadavg()
    print(f"(load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})")


if __name__ == "__main__":
    sys.exit(main())
