"""Paired A/B of one durable step's call shape (issue 34 item 7): a 24-node LangGraph graph run
with ``AgentStateSaver`` by two checkouts of the package, each against a database deployed from
its own ``sql/ai.sql``, alternating short rounds in one run.

    python bench/ab/step_shape.py A_PYTHONPATH A_URL B_PYTHONPATH B_URL [ROUNDS] [INVOKES]

Each round runs, for A then B (the order alternating between rounds), a fresh process that invokes
the graph INVOKES times (each a new thread: 24 node steps, one add_messages list growing by one
message a node, durability "sync"), and prints its wall time per step and the server's time in
``ai.put_checkpoint`` per call (``pg_stat_user_functions``: the databases need
``track_functions = 'pl'``). The figure that counts is the median of B/A over the rounds; the
machine is shared, so single figures are noise.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

NODES = 24

CHILD = r"""
import json, sys, time, uuid
from typing import Annotated, Any
import psycopg
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from psycopg_pool import ConnectionPool
from typing_extensions import TypedDict
from agent_state.langgraph import AgentStateSaver

url, invokes, nodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

class S(TypedDict):
    messages: Annotated[list[Any], add_messages]

def node(i):
    def run(state: S) -> dict[str, Any]:
        return {"messages": [AIMessage(f"node {i} " + "x" * 200, id=str(uuid.uuid4()))]}
    return run

def usage(conn):
    row = conn.execute("select coalesce(sum(calls), 0), coalesce(sum(self_time), 0) from pg_stat_user_functions"
                       " where schemaname = 'ai' and funcname = 'put_checkpoint'").fetchone()
    conn.execute("select pg_stat_clear_snapshot()")
    return row

with (
    psycopg.connect(url, autocommit=True) as admin,
    ConnectionPool(url, min_size=1, max_size=2, kwargs={"autocommit": True}) as pool,
):
    b = StateGraph(S)
    for i in range(nodes):
        b.add_node(f"n{i}", node(i))
        b.add_edge(START if i == 0 else f"n{i - 1}", f"n{i}")
    b.add_edge(f"n{nodes - 1}", END)
    graph = b.compile(checkpointer=AgentStateSaver(pool))
    graph.invoke({"messages": [HumanMessage("warm", id=str(uuid.uuid4()))]},
                 {"configurable": {"thread_id": f"ab-warm-{uuid.uuid4()}"}}, durability="sync")
    time.sleep(0.6)  # the statistics of the warm-up reach the view (stats_fetch_consistency)
    calls0, ms0 = usage(admin)
    t0 = time.perf_counter()
    for _ in range(invokes):
        graph.invoke({"messages": [HumanMessage("hi", id=str(uuid.uuid4()))]},
                     {"configurable": {"thread_id": f"ab-{uuid.uuid4()}"}}, durability="sync")
    wall = time.perf_counter() - t0
    time.sleep(0.6)
    calls1, ms1 = usage(admin)
    calls = max(int(calls1 - calls0), 1)
    print(json.dumps({"ms_per_step": wall * 1000 / (invokes * (nodes + 1)),
                      "server_us_per_put": float(ms1 - ms0) * 1000 / calls, "puts": calls}))
"""


def run(pythonpath: str, url: str, invokes: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": pythonpath}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, url, str(invokes), str(NODES)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    a_path, a_url, b_path, b_url = sys.argv[1:5]
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 7
    invokes = int(sys.argv[6]) if len(sys.argv) > 6 else 20
    ratios: dict[str, list[float]] = {"ms_per_step": [], "server_us_per_put": []}
    for r in range(rounds):
        order = [("A", a_path, a_url), ("B", b_path, b_url)]
        if r % 2:
            order.reverse()
        got = {name: run(path, url, invokes) for name, path, url in order}
        for k in ratios:
            ratios[k].append(got["B"][k] / got["A"][k])
        print(f"round {r + 1}: A {got['A']}  B {got['B']}", flush=True)
    for k, v in ratios.items():
        print(f"{k}: B/A median {statistics.median(v):.3f} (min {min(v):.3f}, max {max(v):.3f}, {len(v)} rounds)")


if __name__ == "__main__":
    main()
