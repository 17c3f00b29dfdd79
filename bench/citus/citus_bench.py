"""The capacity workload on one node and on a Citus formation, in one run (issue 40, docs/scaling.md).

The durable runs of bench/capacity/capacity.py (its ``ours`` stack, its fleet: a tenant enqueues, a
worker claims, saves LangGraph's checkpoints with the step's messages, records a side effect every
fifth node, renews its leases, completes), at one level of concurrent runs and one run length, on:

* ``one node``: a database of its own on DATABASE_URL's server (bench/citus.sh deploys it);
* ``formation``: the formation's database (deployed and distributed by ``make citus-deploy``),
  through its coordinator.

Two workloads on each (BENCH_CITUS_MODES):

* ``runs``: the capacity workload end to end (the queue on the coordinator, the threads' rows on
  the shards);
* ``writes``: the per-thread work alone, as a tenant, with no queue: a session, then per node the
  step's pending writes and checkpoint (the saver, unfenced), its two messages
  (append_message_idempotent, a call each) and an event every fifth node. It is
  what a formation runs where the queue's calls do not run yet, and the share of a run that the
  workers take.

First it tries each call of a run's life once on each target and prints what worked (a call that
fails on a target prints its SQLSTATE and message): the table says which steps a formation runs.

Per node of each target (the one node; the coordinator and each worker), over the measured window:
CPU (the node's postgres processes, from /proc: the nodes run on this machine), WAL bytes
(pg_current_wal_flush_lsn), transactions that wrote (COMMIT records), two-phase commits (PREPARE
records; pg_walinspect's pg_get_wal_stats), transactions (pg_stat_database: flushed by each
backend at most once a second, so a window's count is short by up to a second of it), rows
written (pg_stat_database), and statements received (pg_stat_statements' calls, where it is
loaded). Each per node step and, for the coordinator, per run (per step times the nodes per run).

    python citus_bench.py OUT_JSON
with, in the environment: ONE_ADMIN, ONE_TENANT, ONE_WORKER (DSNs of the one node's bench database:
a superuser, the tenant, the worker), CITUS_ADMIN, CITUS_TENANT, CITUS_WORKER (the coordinator's),
CITUS_WORKER_ADMINS (the workers' superuser DSNs, comma separated); BENCH_CITUS_LEVEL (concurrent
runs, 20), _NODES (nodes per run, 24), _WARMUP (10 s), _WINDOW (20 s), _MODES (runs,writes),
_TARGETS (one,formation).
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "capacity"))
import capacity as cap  # noqa: E402  (bench/capacity/capacity.py: the workload)

LEVEL = int(os.environ.get("BENCH_CITUS_LEVEL", "20"))
NODES = int(os.environ.get("BENCH_CITUS_NODES", "24"))
WARMUP = float(os.environ.get("BENCH_CITUS_WARMUP", "10"))
WINDOW = float(os.environ.get("BENCH_CITUS_WINDOW", "20"))
MODES = os.environ.get("BENCH_CITUS_MODES", "runs,writes").split(",")
TARGETS = os.environ.get("BENCH_CITUS_TARGETS", "one,formation").split(",")


# -- the per-thread writes alone ---------------------------------------------------------------


class Writes(cap.Ours):
    """The ``writes`` workload: the per-thread calls of a run, as the tenant, no queue: the fleet's
    enqueue makes the session, its claim takes the next one made, renewals and completion do
    nothing, the side effect is an event."""

    batched_renewals = False

    def __init__(self, queue: str, tenant_dsn: str, worker_dsn: str) -> None:
        super().__init__(queue, tenant_dsn, worker_dsn, "writes")
        # the step's messages in calls of their own (append_message_idempotent, one each): a formation
        # refuses put_checkpoint's mirrored messages today (a multi-row INSERT ... SELECT is a COPY,
        # which row level security refuses on the shards)
        self.mirror = False
        self.made: collections.deque[tuple[int, None, str, int]] = collections.deque()
        self.ids = 0

    async def open(self) -> None:
        await super().open()
        await self.pool.close()  # type: ignore[union-attr]
        self.pool = AsyncConnectionPool(
            self.tenant_dsn, min_size=cap.POOL_EACH, max_size=cap.POOL_EACH, kwargs={"autocommit": True}, open=False
        )
        await self.pool.open(wait=True)
        self.saver = type(self.saver)(self.pool)

    def config(self, run: cap.Run) -> dict[str, Any]:
        return cap.Stack.config(self, run)

    async def enqueue(self, thread: str, no: int) -> int:
        async with self.tenant.connection() as conn:
            await conn.execute("select from ai.create_session(%s)", (thread,))
        self.ids += 1
        self.made.append((self.ids, None, thread, no))
        return self.ids

    async def claim(self) -> tuple[int, int | None, str, int] | None:
        return self.made.popleft() if self.made else None

    async def renew(self, runs: list[cap.Run]) -> None:
        return None

    async def append(self, run: cap.Run, step: int, msgs: list[dict[str, Any]], in_step: bool = False) -> None:
        async with self.pool.connection() as conn:  # type: ignore[union-attr]
            for msg in msgs:  # one call per message, no job
                await conn.execute(
                    "select from ai.append_message_idempotent(%s, %s, %s, %s, %s)",
                    (run.thread, msg["role"], Jsonb({"text": msg["content"]}), step, msg["id"]),
                )

    async def side_effect(self, run: cap.Run, step: int) -> None:
        async with self.pool.connection() as conn:  # type: ignore[union-attr]
            await conn.execute("select from ai.record_event(%s, 'tool_call', %s)", (run.thread, Jsonb({"step": step})))

    async def complete(self, run: cap.Run) -> None:
        return None


# -- each call of a run, once ------------------------------------------------------------------


async def try_steps(tenant_dsn: str, worker_dsn: str) -> list[tuple[str, str]]:
    """Each call of a durable run's life once, in order; (step, 'ok' or 'SQLSTATE: message')."""
    from langgraph.checkpoint.base import empty_checkpoint

    from agent_state.langgraph import AsyncAgentStateSaver

    got: list[tuple[str, str]] = []
    queue = f"citus-steps-{uuid.uuid4().hex[:6]}"
    thread = f"{queue}-1"
    state: dict[str, Any] = {}

    async def step(name: str, dsn: str, fn: Any) -> None:
        try:
            async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
                await fn(conn)
            got.append((name, "ok"))
        except Exception as e:  # the table reports it
            code = getattr(e, "sqlstate", None) or type(e).__name__
            got.append((name, f"{code}: {str(e).splitlines()[0][:90]}"))

    async def one(conn: Any, sql: str, args: tuple[Any, ...]) -> Any:
        return await (await conn.execute(sql, args)).fetchone()

    async def create(conn: Any) -> None:
        await conn.execute("select ai.create_session(%s)", (thread,))

    async def enqueue(conn: Any) -> None:
        state["job"] = (await one(conn, "select (ai.enqueue_job(%s, %s, %s)).job_id", (thread, Jsonb({}), queue)))[0]

    async def claim(conn: Any) -> None:
        row = await one(conn, "select job_id, fencing_token from ai.claim_job('citus-bench', '30 s', %s)", (queue,))
        if row is None:
            raise RuntimeError("nothing claimed")
        state["token"] = row[1]

    def saver_step(fenced: bool) -> Any:
        async def put(conn: Any) -> None:
            saver = AsyncAgentStateSaver(conn)
            conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ""}
            if fenced:
                conf.update(job_id=state.get("job"), fencing_token=state.get("token"))
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"messages": [{"role": "user", "content": "hi"}]}
            checkpoint["channel_versions"] = {"messages": saver.get_next_version(None, None)}
            done = await saver.aput({"configurable": conf}, checkpoint, {"step": 0}, checkpoint["channel_versions"])
            await saver.aput_writes(done, [("messages", [{"role": "ai", "content": "ok"}])], str(uuid.uuid4()))
            state["checkpoint"] = done

        return put

    async def get_tuple(conn: Any) -> None:
        if await AsyncAgentStateSaver(conn).aget_tuple(state["checkpoint"]) is None:
            raise RuntimeError("no checkpoint read back")

    async def append(conn: Any) -> None:
        await conn.execute(
            "select ai.append_message_idempotent(%s, 'user', %s, 1, %s, null, %s, %s)",
            (thread, Jsonb({"text": "hi"}), "k1", state.get("job"), state.get("token")),
        )

    async def side_effect(conn: Any) -> None:
        for fn, arg in (("begin_side_effect", {"to": "x"}), ("finish_side_effect", {"id": 1})):
            await conn.execute(
                f"select ai.{fn}(%s, 'email:1', %s, %s, %s)", (thread, Jsonb(arg), state.get("job"), state.get("token"))
            )

    async def renew(conn: Any) -> None:
        await conn.execute(
            "select ai.renew_leases('citus-bench', %s, %s, '30 s')", ([state.get("job")], [state.get("token")])
        )

    async def complete(conn: Any) -> None:
        await conn.execute("select ai.complete_job(%s, %s, %s)", (state.get("job"), state.get("token"), Jsonb({})))

    async def event(conn: Any) -> None:
        await conn.execute("select ai.record_event(%s, 'tool_call', '{}')", (thread,))

    async def messages(conn: Any) -> None:
        await conn.execute("select count(*) from ai.get_messages(%s)", (thread,))

    await step("create_session (tenant)", tenant_dsn, create)
    await step("enqueue_job (tenant)", tenant_dsn, enqueue)
    await step("claim_job (worker)", worker_dsn, claim)
    await step("put + put_writes, fenced (worker)", worker_dsn, saver_step(True))
    await step("append_message_idempotent, fenced", worker_dsn, append)
    await step("begin/finish_side_effect, fenced", worker_dsn, side_effect)
    await step("renew_leases (worker)", worker_dsn, renew)
    await step("get_tuple (worker)", worker_dsn, get_tuple)
    await step("complete_job (worker)", worker_dsn, complete)
    await step("put + put_writes, unfenced (tenant)", tenant_dsn, saver_step(False))
    await step("record_event (tenant)", tenant_dsn, event)
    await step("get_messages (tenant)", tenant_dsn, messages)
    return got


# -- what each node did ------------------------------------------------------------------------


class Node:
    def __init__(self, name: str, dsn: str) -> None:
        self.name, self.dsn = name, dsn

    async def open(self) -> None:
        self.conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
        row = await (
            await self.conn.execute(
                "select pg_backend_pid(),"
                " exists (select from pg_extension where extname = 'pg_walinspect'),"
                " exists (select from pg_extension where extname = 'pg_stat_statements')"
                "   and 'pg_stat_statements' = any (string_to_array("
                "     replace(current_setting('shared_preload_libraries'), ' ', ''), ','))"
            )
        ).fetchone()
        assert row is not None
        self.postmaster = cap.postmaster_of(row[0])
        self.walinspect, self.statements = bool(row[1]), bool(row[2])

    async def snapshot(self) -> dict[str, Any]:
        await self.conn.execute("select pg_stat_clear_snapshot()")
        row = await (
            await self.conn.execute(
                "select pg_current_wal_flush_lsn(), xact_commit + xact_rollback,"
                " tup_inserted + tup_updated + tup_deleted"
                " from pg_stat_database where datname = current_database()"
            )
        ).fetchone()
        assert row is not None
        calls = None
        if self.statements:
            got = await (
                await self.conn.execute(
                    "select coalesce(sum(calls), 0) from pg_stat_statements s join pg_database d on d.oid = s.dbid"
                    " where d.datname = current_database()"
                )
            ).fetchone()
            calls = float(got[0]) if got else None
        return {
            "lsn": row[0],
            "xacts": float(row[1]),
            "rows": float(row[2]),
            "calls": calls,
            "cpu": cap._server_cpu(self.postmaster),
        }

    async def delta(self, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
        row = await (await self.conn.execute("select pg_wal_lsn_diff(%s, %s)", (b["lsn"], a["lsn"]))).fetchone()
        assert row is not None
        out: dict[str, Any] = {
            "node": self.name,
            "cpu_s": b["cpu"] - a["cpu"],
            "wal_bytes": float(row[0]),
            "xacts": b["xacts"] - a["xacts"],
            "rows_written": b["rows"] - a["rows"],
            "statements": None if a["calls"] is None else b["calls"] - a["calls"],
            "commits": None,
            "prepares": None,
        }
        if self.walinspect and out["wal_bytes"] == 0:
            out["commits"] = out["prepares"] = 0.0
        elif self.walinspect:
            stats = await (
                await self.conn.execute(
                    'select "resource_manager/record_type", count from pg_get_wal_stats(%s, %s, true)',
                    (a["lsn"], b["lsn"]),
                )
            ).fetchall()
            kinds = {str(k): float(n) for k, n in stats}
            out["commits"] = kinds.get("Transaction/COMMIT", 0.0) + kinds.get("Transaction/COMMIT_PREPARED", 0.0)
            out["prepares"] = kinds.get("Transaction/PREPARE", 0.0)
        return out

    async def close(self) -> None:
        await self.conn.close()


async def measure(target: str, mode: str, dsns: dict[str, str], nodes: list[Node]) -> dict[str, Any]:
    queue = f"citus-{target.replace(' ', '')}-{mode}-{uuid.uuid4().hex[:6]}"
    stack: cap.Stack
    if mode == "writes":
        stack = Writes(queue, dsns["tenant"], dsns["worker"])
    else:
        stack = cap.Ours(queue, dsns["tenant"], dsns["worker"], "ours")
    point = cap.Point(mode, LEVEL, NODES)
    await stack.open()
    start_at = time.time() + 0.5
    times = (start_at, start_at + WARMUP + 1.0, start_at + WARMUP + 1.0 + WINDOW)
    snaps: list[list[dict[str, Any]]] = []

    async def at_start() -> None:
        snaps.append([await n.snapshot() for n in nodes])

    async def at_end() -> None:
        await asyncio.sleep(1.1)  # the backends' statistics flush (at most once a second)
        snaps.append([await n.snapshot() for n in nodes])

    t0 = time.perf_counter()
    await cap.drive(stack, LEVEL, NODES, point, times, at_start, at_end)
    elapsed = time.perf_counter() - t0
    await stack.close()
    steps = max(point.steps, 1)
    per_node = []
    for n, a, b in zip(nodes, snaps[0], snaps[1], strict=True):
        d = await n.delta(a, b)
        d["per_step"] = {
            k: (None if d[k] is None else d[k] / steps)
            for k in ("cpu_s", "wal_bytes", "xacts", "rows_written", "statements", "commits", "prepares")
        }
        per_node.append(d)
    return {
        "target": target,
        "mode": mode,
        "level": LEVEL,
        "nodes_per_run": NODES,
        "window": WINDOW,
        "steps": point.steps,
        "steps_per_s": point.steps / WINDOW,
        "completed": point.completed,
        "save_p50": cap.pct(point.saves, 0.5),
        "save_p99": cap.pct(point.saves, 0.99),
        "errors": point.errors,
        "elapsed": elapsed,
        "per_node": per_node,
    }


def fmt(value: float | None, scale: float = 1.0, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value * scale:.{digits}f}"


def print_point(r: dict[str, Any]) -> None:
    errors = ", ".join(f"{k} x{n}" for k, n in r["errors"].items()) or "none"
    print(
        f"\n{r['target']} / {r['mode']}: {r['level']} concurrent runs of {r['nodes_per_run']} nodes;"
        f" {r['steps']} node steps in {r['window']:.0f} s ({r['steps_per_s']:.1f}/s), {r['completed']} runs completed;"
        f" save p50 {r['save_p50']:.1f} ms, p99 {r['save_p99']:.1f} ms; errors: {errors}"
    )
    print(
        f"  {'node':<14} {'CPU ms/step':>11} {'WAL B/step':>10} {'xacts/step':>10} {'commits/step':>12}"
        f" {'2PC/step':>8} {'rows/step':>9} {'stmts/step':>10}"
    )
    for d in r["per_node"]:
        p = d["per_step"]
        print(
            f"  {d['node']:<14} {fmt(p['cpu_s'], 1000, 2):>11} {fmt(p['wal_bytes'], 1, 0):>10}"
            f" {fmt(p['xacts'], 1, 2):>10}"
            f" {fmt(p['commits'], 1, 2):>12} {fmt(p['prepares'], 1, 2):>8} {fmt(p['rows_written'], 1, 1):>9}"
            f" {fmt(p['statements'], 1, 2):>10}"
        )


def model(points: list[dict[str, Any]]) -> dict[str, Any] | None:
    """docs/scaling.md, "A model": the terms from the ``runs`` points, and the runs carried per core
    of a node by one node and by a coordinator with N workers of its size."""
    runs = {p["target"]: p for p in points if p["mode"] == "runs" and p["steps"] > 0}
    if "formation" not in runs:
        return None
    nodes = runs["formation"]["per_node"]
    c_c = nodes[0]["per_step"]["cpu_s"] * 1000
    workers = [n["per_step"]["cpu_s"] * 1000 for n in nodes[1:]]
    c_w = sum(workers)
    k = max(workers) / c_w * len(workers) if c_w else float("nan")
    t = sum(cap.NODE_SECONDS) / 2 + runs["formation"]["save_p50"] / 1000  # the model's call and the save
    out: dict[str, Any] = {
        "c_c_ms": c_c,
        "c_w_ms": c_w,
        "k": k,
        "T_s": t,
        "coordinator_per_run": {
            "cpu_ms": c_c * NODES,
            "wal_bytes": nodes[0]["per_step"]["wal_bytes"] * NODES,
        },
        "runs_per_core": {f"{n} workers": t * min(1000 / c_c, n * 1000 / (k * c_w)) for n in (1, 2, 4, 8)},
    }
    if "one node" in runs:
        c_1 = runs["one node"]["per_node"][0]["per_step"]["cpu_s"] * 1000
        out["c_1_ms"] = c_1
        out["runs_per_core"]["one node"] = (
            (sum(cap.NODE_SECONDS) / 2 + runs["one node"]["save_p50"] / 1000) * 1000 / c_1
        )
    return out


async def main() -> None:
    out = Path(sys.argv[1])
    env = os.environ
    targets: dict[str, dict[str, Any]] = {}
    if "one" in TARGETS:
        targets["one node"] = {
            "dsns": {"tenant": env["ONE_TENANT"], "worker": env["ONE_WORKER"]},
            "nodes": [Node("one node", env["ONE_ADMIN"])],
        }
    if "formation" in TARGETS:
        workers = [w for w in env.get("CITUS_WORKER_ADMINS", "").split(",") if w]
        targets["formation"] = {
            "dsns": {"tenant": env["CITUS_TENANT"], "worker": env["CITUS_WORKER"]},
            "nodes": [Node("coordinator", env["CITUS_ADMIN"])]
            + [Node(f"worker {i}", w) for i, w in enumerate(workers, 1)],
        }
    results: dict[str, Any] = {
        "level": LEVEL,
        "nodes_per_run": NODES,
        "warmup": WARMUP,
        "window": WINDOW,
        "steps": {},
        "points": [],
    }
    print("Each call of a run, once (ok, or its SQLSTATE):")
    for name, t in targets.items():
        results["steps"][name] = await try_steps(t["dsns"]["tenant"], t["dsns"]["worker"])
    names = list(targets)
    print(f"  {'call':<40} " + " ".join(f"{n:<32}" for n in names))
    for i, (call, _) in enumerate(results["steps"][names[0]]):
        print(f"  {call:<40} " + " ".join(f"{results['steps'][n][i][1][:32]:<32}" for n in names))
    for name, t in targets.items():
        for n in t["nodes"]:
            await n.open()
        for mode in MODES:
            r = await measure(name, mode, t["dsns"], t["nodes"])
            results["points"].append(r)
            print_point(r)
        for n in t["nodes"]:
            await n.close()
    results["model"] = model(results["points"])
    if results["model"] is not None:
        m = results["model"]
        print(
            f"\nmodel (docs/scaling.md): c_1 {fmt(m.get('c_1_ms'), 1, 2)} ms, c_c {m['c_c_ms']:.2f} ms,"
            f" c_w {m['c_w_ms']:.2f} ms CPU per node step, k {m['k']:.2f}, T {m['T_s']:.2f} s;"
            f" the coordinator per run of {NODES} nodes: {m['coordinator_per_run']['cpu_ms']:.0f} ms CPU,"
            f" {m['coordinator_per_run']['wal_bytes'] / 1024:.1f} KB WAL"
        )
        print("  runs carried per core of a node: " + ", ".join(f"{k} {v:.0f}" for k, v in m["runs_per_core"].items()))
    out.write_text(json.dumps(results, indent=1))
    print(f"\ncitus bench: figures in {out}")


if __name__ == "__main__":
    asyncio.run(main())
