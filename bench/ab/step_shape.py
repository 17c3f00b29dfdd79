"""Paired A/B of one durable step (issue 34 items 7 and 8): a 24-node LangGraph graph run with
``AgentStateSaver`` by two checkouts of the package, each against a database deployed from its
own ``sql/ai.sql``, and with LangGraph's stock ``PostgresSaver`` (STOCK_URL: a database of its
own, set up by the bench), alternating short rounds in one run.

    python bench/ab/step_shape.py A_PYTHONPATH A_URL B_PYTHONPATH B_URL [ROUNDS] [INVOKES] [STOCK_URL]

Each round runs, for A, B (and stock), the order rotating between rounds, a fresh process that
invokes the graph INVOKES times (each a new thread: 24 node steps, one add_messages list growing
by one message a node, the node's message with an id, durability "sync") on one connection, and
prints per node step: wall time, the server's CPU (the connection's backend, from
``/proc/<pid>/schedstat``: the bench and the server share the machine), WAL bytes
(``pg_current_wal_lsn``: a private cluster, nothing else writing) and, for ours, the time in
``ai.put_checkpoint`` (``pg_stat_user_functions``: ``track_functions = 'pl'``). The figures that
count are the medians over the rounds of B/A and of each against stock; the machine is shared, so
single figures are noise. NODES (environment, default 24) sets the graph's length.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

NODES = int(os.environ.get("NODES", "24"))

CHILD = r"""
import json, sys, time, uuid
from typing import Annotated, Any
import psycopg
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

url, invokes, nodes, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

class S(TypedDict):
    messages: Annotated[list[Any], add_messages]

def node(i):
    def run(state: S) -> dict[str, Any]:
        return {"messages": [AIMessage(f"node {i} " + "x" * 200, id=str(uuid.uuid4()))]}
    return run

def put_usage(admin):
    if kind == "stock":
        return 0, 0.0
    row = admin.execute("select coalesce(sum(calls), 0), coalesce(sum(self_time), 0) from pg_stat_user_functions"
                        " where schemaname = 'ai' and funcname = 'put_checkpoint'").fetchone()
    admin.execute("select pg_stat_clear_snapshot()")
    return row

def cpu_ns(pid):
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])

with (
    psycopg.connect(url, autocommit=True) as admin,
    psycopg.connect(url, autocommit=True, prepare_threshold=0, row_factory=psycopg.rows.dict_row) as conn,
):
    if kind == "stock":
        from langgraph.checkpoint.postgres import PostgresSaver
        saver = PostgresSaver(conn)
        saver.setup()
    else:
        from agent_state.langgraph import AgentStateSaver
        conn.row_factory = psycopg.rows.tuple_row
        saver = AgentStateSaver(conn)
    pid = conn.execute("select pg_backend_pid() as pid").fetchone()
    pid = pid["pid"] if isinstance(pid, dict) else pid[0]
    b = StateGraph(S)
    for i in range(nodes):
        b.add_node(f"n{i}", node(i))
        b.add_edge(START if i == 0 else f"n{i - 1}", f"n{i}")
    b.add_edge(f"n{nodes - 1}", END)
    graph = b.compile(checkpointer=saver)
    graph.invoke({"messages": [HumanMessage("warm", id=str(uuid.uuid4()))]},
                 {"configurable": {"thread_id": f"ab-warm-{uuid.uuid4()}"}}, durability="sync")
    time.sleep(0.6)  # the statistics of the warm-up reach the view (stats_fetch_consistency)
    calls0, ms0 = put_usage(admin)
    lsn0 = admin.execute("select pg_current_wal_lsn()").fetchone()[0]
    cpu0 = cpu_ns(pid)
    t0 = time.perf_counter()
    for _ in range(invokes):
        graph.invoke({"messages": [HumanMessage("hi", id=str(uuid.uuid4()))]},
                     {"configurable": {"thread_id": f"ab-{uuid.uuid4()}"}}, durability="sync")
    wall = time.perf_counter() - t0
    cpu = cpu_ns(pid) - cpu0
    wal = admin.execute("select pg_current_wal_lsn() - %s::pg_lsn", (str(lsn0),)).fetchone()[0]
    time.sleep(0.6)
    calls1, ms1 = put_usage(admin)
    steps = invokes * (nodes + 1)
    calls = max(int(calls1 - calls0), 1)
    print(json.dumps({"ms_per_step": wall * 1000 / steps, "server_us_per_step": cpu / 1000 / steps,
                      "wal_per_step": float(wal) / steps, "put_us": float(ms1 - ms0) * 1000 / calls}))
"""

FIGURES = ("ms_per_step", "server_us_per_step", "wal_per_step", "put_us")


def run(pythonpath: str, url: str, invokes: int, kind: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": pythonpath}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, url, str(invokes), str(NODES), kind],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    figures: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return figures


def main() -> None:
    a_path, a_url, b_path, b_url = sys.argv[1:5]
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 7
    invokes = int(sys.argv[6]) if len(sys.argv) > 6 else 20
    stock_url = sys.argv[7] if len(sys.argv) > 7 else None
    sides = [("A", a_path, a_url, "ours"), ("B", b_path, b_url, "ours")]
    if stock_url:
        sides.append(("stock", a_path, stock_url, "stock"))
    ratios: dict[str, dict[str, list[float]]] = {}
    for r in range(rounds):
        order = sides[r % len(sides) :] + sides[: r % len(sides)]
        got = {name: run(path, url, invokes, kind) for name, path, url, kind in order}
        pairs = [("B/A", "B", "A")] + ([("A/stock", "A", "stock"), ("B/stock", "B", "stock")] if stock_url else [])
        for label, x, y in pairs:
            for k in FIGURES:
                if got[y][k]:
                    ratios.setdefault(label, {}).setdefault(k, []).append(got[x][k] / got[y][k])
        print(
            f"round {r + 1}: "
            + "  ".join(f"{n} {json.dumps({k: round(v, 1) for k, v in got[n].items()})}" for n in got),
            flush=True,
        )
    for label, figures in ratios.items():
        for k, v in figures.items():
            print(
                f"{label} {k}: median {statistics.median(v):.3f} (min {min(v):.3f}, max {max(v):.3f}, {len(v)} rounds)"
            )


if __name__ == "__main__":
    main()
