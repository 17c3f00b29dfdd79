"""Capacity: how many durable agent runs one Postgres carries, against the stock stack (issues 16, 20).

A simulated fleet of agent runs with a scripted model (a sleep of 1-2 s instead of an LLM call
per node). Each run, on each stack:

* arrives at a steady rate (enqueued by a tenant), and is claimed by a worker that has room
  (claim latency: from the enqueue's commit to the claim's return);
* saves LangGraph's input checkpoint, then per node: the node's pending writes and the step's
  checkpoint (a growing message list, a counter, a short plan string, a small scratch dict that
  changes every third step; only changed channels are passed as new versions, as LangGraph does),
  the step's two new messages appended to the messages table, and every fifth node a side effect
  recorded (reserve, then record the result);
* renews its lease every LEASE/3 seconds while it runs, and completes with a small result.

Stacks (same cluster, same run, levels interleaved, every point on a fresh queue):

* ``ours``: agent_state end to end with every guarantee on, as the Worker runs a graph:
  AsyncAgentStateSaver (fenced checkpoints and writes, RLS, synchronous commit), ai.claim_job,
  ai.renew_leases (one statement per worker and tick for every lease it holds), side effects
  through ai.begin_side_effect / ai.finish_side_effect (fenced), ai.complete_job. The step's
  messages: where the saver takes ``mirror_messages`` (issue 20), the saver appends the new items
  of the ``messages`` channel to ai.session_messages in the step's own call (no separate append);
  else one fenced ai.append_message_idempotent call per message where it takes the job and token
  (issue 20), else ai.fenced_write + the appends in one transaction (v0.1.0).
  BENCH_CAPACITY_MIRROR=0 forces the separate appends. With the mirror, ours' node save holds
  the step's messages; stock's does not (its INSERT follows the save): the save latencies then
  favour stock;
* ``ours-lz4`` (only when named in BENCH_CAPACITY_STACKS): ``ours`` with the checkpoint columns
  compressed by LZ4 for that point only (ALTER ... SET COMPRESSION, put back after): the A/B of
  the compression choice, CPU against WAL bytes;
* ``stock-saver-per-run``: ``stock`` with one AsyncPostgresSaver per run instead of one per
  process: AsyncPostgresSaver holds an asyncio lock around every call, even over a pool, so the
  runs of one process save one at a time; this variant shows the stock database work without
  that lock;
* ``stock``: LangGraph's AsyncPostgresSaver (one per process, as a compiled graph has), a bare
  SKIP LOCKED jobs table whose lease is renewed by UPDATE, a plain messages table and a
  side-effect table, each with a unique idempotency key; no fencing, no RLS.

Per point: WARMUP seconds to reach a steady state (the first wave of runs starts part way
through, with the history it would have), then WINDOW seconds measured: node-save latency (the
step's put_writes + put, what a ``durability="sync"`` step waits for), claim latency, server CPU
(every process of the cluster, from /proc schedstat, plus the reaped children's times) and WAL
(pg_current_wal_lsn) per node step, table+index growth (per node step, times the nodes per run = per run),
the share of HOT updates of the jobs table, errors, and the driver's own CPU and event-loop lag.

    python capacity.py ADMIN_DSN TENANT_DSN WORKER_DSN STOCK_DSN OUT_JSON
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import random
import statistics
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from agent_state.langgraph import AsyncAgentStateSaver

LEVELS = [int(x) for x in os.environ.get("BENCH_CAPACITY_LEVELS", "50,100,200,400").split(",")]
STACKS = os.environ.get("BENCH_CAPACITY_STACKS", "ours,stock-saver-per-run,stock").split(",")
WARMUP = float(os.environ.get("BENCH_CAPACITY_WARMUP", "10"))
WINDOW = float(os.environ.get("BENCH_CAPACITY_WINDOW", "20"))
# run lengths, nodes per run: at each, every level and stack
NODE_COUNTS = [int(x) for x in os.environ.get("BENCH_CAPACITY_NODES", "24,96").split(",")]
LEASE = float(os.environ.get("BENCH_CAPACITY_LEASE", "15"))
POOL = int(os.environ.get("BENCH_CAPACITY_POOL", "20"))
# 0: the ours stack appends its messages in calls of their own even where the saver can mirror them
MIRROR = os.environ.get("BENCH_CAPACITY_MIRROR", "1") != "0" and (
    "mirror_messages" in inspect.signature(AsyncAgentStateSaver.__init__).parameters
)
# driver processes: each runs its share of a point's runs on a queue of its own (pools of POOL/PROCS)
PROCS = max(1, int(os.environ.get("BENCH_CAPACITY_PROCS", "1")))
POOL_EACH = max(1, POOL // PROCS)
SIDE_EFFECT_EVERY = 5
NODE_SECONDS = (1.0, 2.0)
LIMIT_MS = 50.0
# The level whose WAL is broken down by relation (pg_walinspect): where each stack's bytes go.
WAL_LEVEL = int(os.environ.get("BENCH_CAPACITY_WAL_LEVEL", "50"))
STOCK_SCHEMA = "bench_stock"
WORKER_ID = "capacity-worker"

# Message texts: English-like words, so they compress as conversation text does. Built once.
_SENTENCE = (
    "the agent reads the report and calls a tool to fetch the latest figures then summarises what changed since "
    "the last run for the user who asked about revenue growth customer churn and the forecast for next quarter "
    "including risks assumptions sources and a short list of follow up questions"
)
_WORDS = _SENTENCE.split()
_rng = random.Random(16)
TEXTS = [" ".join(_rng.choice(_WORDS) for _ in range(_rng.randint(40, 220))) for _ in range(200)]


ROLES = (("human", "user"), ("ai", "assistant"), ("tool", "tool_result"))


def message(run_no: int, i: int) -> dict[str, Any]:
    """A message as a plain dict (what the serde stores is the same size as a LangChain message's);
    ``role`` and ``id`` are what the saver's message mirror reads (the id is its idempotency key)."""
    kind, role = ROLES[i % 3]
    return {"type": kind, "role": role, "id": f"m-{run_no}-{i}", "content": TEXTS[(run_no * 31 + i) % len(TEXTS)]}


# -- measurements ----------------------------------------------------------------------------------


def _server_cpu(postmaster: int | None) -> float:
    """Seconds on CPU of the whole cluster: live children (schedstat ns) + reaped children + postmaster
    (NaN when the server is not on this machine)."""
    if postmaster is None:
        return float("nan")
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
            if ppid == postmaster:
                total += int(Path(f"/proc/{entry}/schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            continue  # exited meanwhile
    stat = Path(f"/proc/{postmaster}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    ticks = os.sysconf("SC_CLK_TCK")
    total += sum(int(x) for x in fields[11:15]) / ticks  # utime stime cutime cstime (reaped children)
    return total


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Point:
    stack: str
    level: int
    nodes: int
    saves: list[float] = field(default_factory=list)
    puts: list[float] = field(default_factory=list)
    claims: list[float] = field(default_factory=list)
    steps: int = 0
    completed: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    lag: list[float] = field(default_factory=list)
    running: list[int] = field(default_factory=list)

    def error(self, what: str, e: BaseException) -> None:
        key = f"{what}: {type(e).__name__}"
        self.errors[key] = self.errors.get(key, 0) + 1
        if self.errors[key] == 1:
            print(f"  [{self.stack} {self.level}] {what}: {e!r}"[:300], file=sys.stderr)


# -- the stacks ------------------------------------------------------------------------------------


class Run:
    __slots__ = (
        "checkpoint_id",
        "finishing",
        "job_id",
        "messages",
        "no",
        "nodes",
        "saver",
        "scratch",
        "thread",
        "token",
        "versions",
    )

    def __init__(self, job_id: int, token: int | None, thread: str, no: int, done: int, nodes: int) -> None:
        self.job_id, self.token, self.thread, self.no = job_id, token, thread, no
        self.messages = [message(no, i) for i in range(done)]
        self.nodes = nodes
        self.versions: dict[str, Any] = {}
        self.checkpoint_id: str | None = None
        self.scratch = {"tool": "search", "attempt": 0}
        self.saver: Any = None
        self.finishing = False  # complete_job sent: a renewal racing it may find the job done


class Stack:
    """One stack's calls; subclasses fill them in. ``saver`` is a LangGraph checkpointer."""

    name = ""
    batched_renewals = False
    jobs_table = ""
    tables_sql = ""

    def __init__(self, queue: str) -> None:
        self.queue = queue
        self.held: dict[int, Run] = {}  # the fleet's runs in flight
        self.saver: Any = None
        self.pool: AsyncConnectionPool | None = None

    def config(self, run: Run) -> dict[str, Any]:
        return {"configurable": {"thread_id": run.thread, "checkpoint_ns": "", "checkpoint_id": run.checkpoint_id}}

    async def save(self, run: Run, step: int, new: list[dict[str, Any]], point: Point | None) -> None:
        """LangGraph's order for a step: the task's pending writes, then the step's checkpoint."""
        t0 = time.perf_counter()
        config = self.config(run)
        saver = run.saver or self.saver
        if run.checkpoint_id is not None and new:
            # as LangGraph passes them for a node's own writes in a durability="sync" run: the task
            # path of a PULL task and the run's durability (the savers hold only such writes)
            writes_config = {"configurable": {**config["configurable"], "__pregel_durability": "sync"}}
            await saver.aput_writes(
                writes_config, [("messages", new), ("step", step)], str(uuid.uuid4()), "~__pregel_pull, agent"
            )
        t1 = time.perf_counter()
        checkpoint = empty_checkpoint()
        checkpoint["id"] = str(uuid6(clock_seq=step + 1))
        # as a StateGraph's step: the state channels written, and the edge to the next node
        # (branch:to:agent, the one trigger: the saver sends a step of one task in one call)
        changed = ["messages", "step", "branch:to:agent"] + (["scratch"] if step % 3 == 0 else [])
        if step < 0:
            changed = ["messages", "step", "scratch", "plan", "__start__"]
        new_versions = {}
        for channel in changed:
            run.versions[channel] = saver.get_next_version(run.versions.get(channel), None)
            new_versions[channel] = run.versions[channel]
        run.scratch["attempt"] = step
        checkpoint["channel_values"] = {
            "messages": run.messages,
            "step": step,
            "plan": "research, draft, review",
            "scratch": run.scratch,
        }
        checkpoint["channel_versions"] = dict(run.versions)
        checkpoint["versions_seen"] = {"agent": {"messages": run.versions["messages"]}}
        checkpoint["updated_channels"] = changed
        metadata = {"source": "loop" if step >= 0 else "input", "step": step, "parents": {}}
        next_config = await saver.aput(config, checkpoint, metadata, new_versions)
        run.checkpoint_id = next_config["configurable"]["checkpoint_id"]
        if point is not None:
            t2 = time.perf_counter()
            point.saves.append((t2 - t0) * 1000)
            point.puts.append((t2 - t1) * 1000)

    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def enqueue(self, thread: str, no: int) -> int: ...
    async def claim(self) -> tuple[int, int | None, str, int] | None: ...
    async def renew(self, runs: list[Run]) -> None: ...
    async def append(self, run: Run, step: int, msgs: list[dict[str, Any]], in_step: bool = False) -> None:
        """The messages of a step (``in_step``: right after its save) or a single append."""

    async def side_effect(self, run: Run, step: int) -> None: ...
    async def complete(self, run: Run) -> None: ...


class Ours(Stack):
    name = "ours"
    batched_renewals = True
    jobs_table = "ai.agent_jobs"

    def __init__(self, queue: str, tenant_dsn: str, worker_dsn: str, name: str) -> None:
        super().__init__(queue)
        self.tenant_dsn, self.worker_dsn = tenant_dsn, worker_dsn
        self.name = name
        self.mirror = MIRROR
        self.fenced_append = False  # ai.append_message_idempotent takes the job and its token

    async def open(self) -> None:
        self.tenant = AsyncConnectionPool(
            self.tenant_dsn, min_size=2, max_size=4, kwargs={"autocommit": True}, open=False
        )
        self.pool = AsyncConnectionPool(
            self.worker_dsn, min_size=POOL_EACH, max_size=POOL_EACH, kwargs={"autocommit": True}, open=False
        )
        await self.tenant.open(wait=True)
        await self.pool.open(wait=True)
        if self.mirror:
            self.saver = AsyncAgentStateSaver(self.pool, mirror_messages="messages")  # type: ignore[call-arg]
        else:
            self.saver = AsyncAgentStateSaver(self.pool)
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                "select coalesce(max(pronargs), 0) >= 8 from pg_proc"
                " where proname = 'append_message_idempotent' and pronamespace = 'ai'::regnamespace"
            )
            self.fenced_append = bool((await cur.fetchone())[0])  # type: ignore[index]

    async def close(self) -> None:
        await self.pool.close()
        await self.tenant.close()

    def config(self, run: Run) -> dict[str, Any]:
        config = super().config(run)
        config["configurable"].update(job_id=run.job_id, fencing_token=run.token)
        return config

    async def enqueue(self, thread: str, no: int) -> int:
        async with self.tenant.connection() as conn, conn.transaction():
            await conn.execute("select from ai.create_session(%s)", (thread,))
            cur = await conn.execute(
                "select job_id from ai.enqueue_job(%s, %s, %s)", (thread, Jsonb({"graph_input": {"n": no}}), self.queue)
            )
            return (await cur.fetchone())[0]  # type: ignore[index]

    async def claim(self) -> tuple[int, int | None, str, int] | None:
        async with self.pool.connection() as conn:  # type: ignore[union-attr]
            cur = await conn.execute(
                "select job_id, fencing_token, thread_id, (payload->'graph_input'->>'n')::int"
                " from ai.claim_job(%s, %s::interval, %s)",
                (WORKER_ID, f"{LEASE} seconds", self.queue),
            )
            return await cur.fetchone()

    async def renew(self, runs: list[Run]) -> None:
        async with self.pool.connection() as conn:  # type: ignore[union-attr]
            cur = await conn.execute(
                "select job_id from ai.renew_leases(%s, %s, %s, %s::interval)",
                (WORKER_ID, [r.job_id for r in runs], [r.token for r in runs], f"{LEASE} seconds"),
            )
            renewed = {row[0] for row in await cur.fetchall()}
            lost = [r for r in runs if r.job_id not in renewed and not r.finishing]
            if lost:  # a run that completed meanwhile is not a lost lease
                raise RuntimeError(f"{len(lost)} leases lost")

    async def append(self, run: Run, step: int, msgs: list[dict[str, Any]], in_step: bool = False) -> None:
        if in_step and self.mirror:
            return  # the step's put appended them
        async with self.pool.connection() as conn:  # type: ignore[union-attr]
            if self.fenced_append:  # one call per message, the fence inside (autocommit)
                for msg in msgs:
                    await conn.execute(
                        "select from ai.append_message_idempotent(%s, %s, %s, %s, %s, null, %s, %s)",
                        (
                            run.thread,
                            msg["role"],
                            Jsonb({"text": msg["content"]}),
                            step,
                            msg["id"],
                            run.job_id,
                            run.token,
                        ),
                    )
                return
            async with conn.transaction():
                await conn.execute("select ai.fenced_write(%s, %s)", (run.job_id, run.token))
                for msg in msgs:
                    await conn.execute(
                        "select from ai.append_message_idempotent(%s, %s, %s, %s, %s)",
                        (run.thread, msg["role"], Jsonb({"text": msg["content"]}), step, msg["id"]),
                    )

    async def side_effect(self, run: Run, step: int) -> None:
        key = f"email:{run.thread}:{step}"
        async with self.pool.connection() as conn:  # type: ignore[union-attr]
            await conn.execute(
                "select from ai.begin_side_effect(%s, %s, %s, %s, %s)",
                (run.thread, key, Jsonb({"to": "user@example.com"}), run.job_id, run.token),
            )
            await conn.execute(
                "select from ai.finish_side_effect(%s, %s, %s, %s, %s)",
                (run.thread, key, Jsonb({"message_id": key}), run.job_id, run.token),
            )

    async def complete(self, run: Run) -> None:
        async with self.pool.connection() as conn:  # type: ignore[union-attr]
            await conn.execute(
                "select from ai.complete_job(%s, %s, %s)", (run.job_id, run.token, Jsonb({"answer": "done"}))
            )


class Stock(Stack):
    name = "stock"
    jobs_table = f"{STOCK_SCHEMA}.jobs"

    def __init__(self, queue: str, stock_dsn: str, name: str = "stock") -> None:
        super().__init__(queue)
        self.dsn = stock_dsn
        self.name = name

    async def save(self, run: Run, step: int, new: list[dict[str, Any]], point: Point | None) -> None:
        if self.name == "stock-saver-per-run" and run.saver is None:
            run.saver = AsyncPostgresSaver(self.pool)  # type: ignore[arg-type]
        await super().save(run, step, new, point)

    async def open(self) -> None:
        kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
        self.pool = AsyncConnectionPool(self.dsn, min_size=POOL_EACH, max_size=POOL_EACH, kwargs=kwargs, open=False)
        self.tenant = AsyncConnectionPool(self.dsn, min_size=2, max_size=4, kwargs={"autocommit": True}, open=False)
        await self.pool.open(wait=True)
        await self.tenant.open(wait=True)
        self.saver = AsyncPostgresSaver(self.pool)  # type: ignore[arg-type]

    async def close(self) -> None:
        await self.pool.close()  # type: ignore[union-attr]
        await self.tenant.close()

    async def enqueue(self, thread: str, no: int) -> int:
        async with self.tenant.connection() as conn:
            cur = await conn.execute(
                "insert into jobs (thread_id, queue, payload) values (%s, %s, %s) returning job_id",
                (thread, self.queue, Jsonb({"graph_input": {"n": no}})),
            )
            return (await cur.fetchone())[0]  # type: ignore[index]

    async def claim(self) -> tuple[int, int | None, str, int] | None:
        async with self.pool.connection() as conn:  # type: ignore[union-attr]
            cur = await conn.execute(
                "update jobs set status = 'IN_PROGRESS', attempts = attempts + 1, lease_owner = %s,"
                " lease_expires_at = now() + %s::interval, updated_at = now()"
                " where job_id = (select job_id from jobs where status = 'PENDING' and queue = %s and run_at <= now()"
                "   order by priority desc, run_at, job_id limit 1 for update skip locked)"
                " returning job_id, thread_id, (payload->'graph_input'->>'n')::int as n",
                (WORKER_ID, f"{LEASE} seconds", self.queue),
            )
            row = await cur.fetchone()
            return None if row is None else (row["job_id"], None, row["thread_id"], row["n"])

    async def renew(self, runs: list[Run]) -> None:
        (run,) = runs
        async with self.pool.connection() as conn:  # type: ignore[union-attr]
            cur = await conn.execute(
                "update jobs set lease_expires_at = now() + %s::interval, updated_at = now()"
                " where job_id = %s and lease_owner = %s and status = 'IN_PROGRESS'",
                (f"{LEASE} seconds", run.job_id, WORKER_ID),
            )
            if cur.rowcount != 1:
                raise RuntimeError("lease lost")

    async def append(self, run: Run, step: int, msgs: list[dict[str, Any]], in_step: bool = False) -> None:
        """One INSERT of the step's messages (one row each)."""
        values = ", ".join(["(%s, %s, %s, %s)"] * len(msgs))
        params: list[Any] = []
        for msg in msgs:
            params += [run.thread, msg["role"], Jsonb({"text": msg["content"]}), msg["id"]]
        async with self.pool.connection() as conn:  # type: ignore[union-attr]
            await conn.execute(
                f"insert into messages (thread_id, role, content, idempotency_key) values {values}"
                " on conflict (thread_id, idempotency_key) do nothing",
                params,
            )

    async def side_effect(self, run: Run, step: int) -> None:
        key = f"email:{run.thread}:{step}"
        async with self.pool.connection() as conn:  # type: ignore[union-attr]
            await conn.execute(
                "insert into side_effects (thread_id, idempotency_key, request) values (%s, %s, %s)"
                " on conflict (thread_id, idempotency_key) do nothing",
                (run.thread, key, Jsonb({"to": "user@example.com"})),
            )
            await conn.execute(
                "update side_effects set result = %s, finished_at = now()"
                " where thread_id = %s and idempotency_key = %s",
                (Jsonb({"message_id": key}), run.thread, key),
            )

    async def complete(self, run: Run) -> None:
        async with self.pool.connection() as conn:  # type: ignore[union-attr]
            await conn.execute(
                "update jobs set status = 'COMPLETED', result = %s, lease_owner = null, lease_expires_at = null,"
                " finished_at = now(), updated_at = now() where job_id = %s and lease_owner = %s",
                (Jsonb({"answer": "done"}), run.job_id, WORKER_ID),
            )


# -- the fleet -------------------------------------------------------------------------------------


class Fleet:
    def __init__(self, stack: Stack, level: int, nodes: int, point: Point) -> None:
        self.stack, self.level, self.nodes, self.point = stack, level, nodes, point
        self.run_seconds = nodes * sum(NODE_SECONDS) / 2  # the mean run length: arrivals keep LEVEL runs going
        self.enqueued: dict[int, float] = {}
        self.held: dict[int, Run] = stack.held
        self.measuring = False
        self.tasks: set[asyncio.Task[Any]] = set()
        self.no = 0

    def spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def arrive(self, first_wave: bool) -> None:
        self.no += 1
        no = self.no
        thread = f"{self.stack.queue}-{no}"  # the queue names the stack, point and driver process
        try:
            job_id = await self.stack.enqueue(thread, no)
        except Exception as e:
            self.point.error("enqueue", e)
            return
        self.enqueued[job_id] = time.perf_counter()
        # the worker has room (LISTEN/NOTIFY would wake it): it claims at once
        done = random.randrange(self.nodes) if first_wave else 0
        self.spawn(self.claim_and_run(done))

    async def claim_and_run(self, done: int) -> None:
        got = None
        for _ in range(20):
            try:
                got = await self.stack.claim()
            except Exception as e:
                self.point.error("claim", e)
            if got is not None:
                break
            await asyncio.sleep(0.05)
        if got is None:
            return
        job_id, token, thread, no = got
        if self.measuring:
            self.point.claims.append((time.perf_counter() - self.enqueued.pop(job_id, time.perf_counter())) * 1000)
        run = Run(job_id, token, thread, no, 2 * done, self.nodes - done)
        self.held[job_id] = run
        renewer = None if self.stack.batched_renewals else asyncio.create_task(self.renew_one(run))
        try:
            try:
                await self.stack.save(run, -1, [], None)  # the input checkpoint
            except Exception as e:
                self.point.error("input checkpoint", e)
                return
            for step in range(run.nodes):
                await asyncio.sleep(random.uniform(*NODE_SECONDS))  # the scripted model
                new = [message(no, len(run.messages)), message(no, len(run.messages) + 1)]
                run.messages = run.messages + new  # a new list per step, as LangGraph's reducer makes
                try:
                    await self.stack.save(run, step, new, self.point if self.measuring else None)
                except Exception as e:
                    self.point.error("save", e)
                    return
                if self.measuring:
                    self.point.steps += 1
                try:
                    await self.stack.append(run, step, new, in_step=True)
                    if step % SIDE_EFFECT_EVERY == SIDE_EFFECT_EVERY - 1:
                        await self.stack.side_effect(run, step)
                except Exception as e:
                    self.point.error("append/side effect", e)
            run.finishing = True
            try:
                await self.stack.complete(run)
                if self.measuring:
                    self.point.completed += 1
            except Exception as e:
                self.point.error("complete", e)
        finally:
            self.held.pop(job_id, None)
            if renewer is not None:
                renewer.cancel()

    async def renew_one(self, run: Run) -> None:
        await asyncio.sleep(random.uniform(0, LEASE / 3))
        while True:
            try:
                await self.stack.renew([run])
            except Exception as e:
                if not run.finishing:
                    self.point.error("renew", e)
            await asyncio.sleep(LEASE / 3)

    async def renew_all(self) -> None:
        """The batched renewal: every second, one statement for the leases due (renewed LEASE/3 ago)."""
        last: dict[int, float] = {}
        while True:
            await asyncio.sleep(1.0)
            now = time.perf_counter()
            due = [r for r in list(self.held.values()) if now - last.setdefault(r.job_id, now) >= LEASE / 3]
            for i in range(0, len(due), 1000):
                try:
                    await self.stack.renew(due[i : i + 1000])
                except Exception as e:
                    self.point.error("renew", e)
            for r in due:
                last[r.job_id] = now

    async def arrivals(self) -> None:
        interval = self.run_seconds / self.level
        next_at = time.perf_counter()
        while True:
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
            self.spawn(self.arrive(False))

    async def ticker(self) -> None:
        """Event-loop lag (how late a 100 ms sleep wakes) and the number of runs held, while measuring."""
        while True:
            t = time.perf_counter()
            await asyncio.sleep(0.1)
            if self.measuring:
                self.point.lag.append((time.perf_counter() - t - 0.1) * 1000)
                self.point.running.append(len(self.held))


# WAL bytes of a window by the relation of each record's first block (heap, TOAST or index; a
# toast table is named after its table), else by the record's kind (commits, ...).
WAL_BY_RELATION = """
with r as (
  select record_length, resource_manager, record_type,
         (regexp_match(block_ref, 'rel \\d+/\\d+/(\\d+)'))[1]::oid as filenode
  from pg_get_wal_records_info(%s, %s))
select coalesce(case when t.oid is not null then 'toast of ' || t.relname::text end,
                c.relnamespace::regnamespace::text || '.' || c.relname,
                r.resource_manager || ' ' || r.record_type) as what,
       sum(r.record_length) as bytes
from r
left join pg_class c on c.relfilenode = r.filenode and r.filenode <> 0
left join pg_class t on t.reltoastrelid = c.oid
group by 1 order by 2 desc
"""


COMPRESSED = (("checkpoints", "checkpoint"), ("checkpoint_blobs", "blob"), ("checkpoint_writes", "blob"))


async def compression(admin: psycopg.AsyncConnection[Any]) -> dict[tuple[str, str], str]:
    """The compression of each checkpoint value column as deployed ('' for the server's default)."""
    got = {}
    for table, column in COMPRESSED:
        cur = await admin.execute(
            "select attcompression from pg_attribute where attrelid = %s::regclass and attname = %s",
            (f"ai.{table}", column),
        )
        code = (await cur.fetchone())[0]  # type: ignore[index]
        got[(table, column)] = {"p": "pglz", "l": "lz4"}.get(code, "default")
    return got


async def set_compression(admin: psycopg.AsyncConnection[Any], methods: dict[tuple[str, str], str]) -> None:
    for (table, column), method in methods.items():  # constant names from COMPRESSED
        await admin.execute(f"alter table ai.{table} alter column {column} set compression {method}")


async def checkpoint(admin: psycopg.AsyncConnection[Any]) -> None:
    """CHECKPOINT, so every window starts as far from one (full-page images); a superuser or a member
    of pg_checkpoint may: without it the windows start where they fall."""
    with contextlib.suppress(psycopg.errors.InsufficientPrivilege):
        await admin.execute("checkpoint")


def make_stack(name: str, queue: str, tenant_dsn: str, worker_dsn: str, stock_dsn: str) -> Stack:
    if name.startswith("stock"):
        return Stock(queue, stock_dsn, name)
    return Ours(queue, tenant_dsn, worker_dsn, name)


async def sleep_until(t: float) -> None:
    await asyncio.sleep(max(0.0, t - time.time()))


async def drive(
    stack: Stack,
    share: int,
    nodes: int,
    point: Point,
    times: tuple[float, float, float],
    at_start: Any = None,
    at_end: Any = None,
) -> float:
    """This process's share of a point: ``share`` concurrent runs from ``times[0]`` (wall clock),
    measured from ``times[1]`` to ``times[2]``; awaits ``at_start``/``at_end`` (the snapshots) at
    those instants. Returns the driver's CPU seconds in the window."""
    start_at, measure_at, end_at = times
    await sleep_until(start_at)
    fleet = Fleet(stack, share, nodes, point)
    # the first wave: its runs at once, each part way through (so completions spread out)
    await asyncio.gather(*(fleet.arrive(True) for _ in range(share)))
    background = [asyncio.create_task(fleet.arrivals()), asyncio.create_task(fleet.ticker())]
    if stack.batched_renewals:
        background.append(asyncio.create_task(fleet.renew_all()))
    await sleep_until(measure_at)
    if at_start is not None:
        await at_start()
    cpu = time.process_time()
    fleet.measuring = True
    await sleep_until(end_at)
    fleet.measuring = False
    cpu = time.process_time() - cpu
    if at_end is not None:
        await at_end()
    for task in background + list(fleet.tasks):
        task.cancel()
    await asyncio.gather(*background, *fleet.tasks, return_exceptions=True)
    return cpu


async def child(args: dict[str, Any]) -> None:
    """One more driver process (BENCH_CAPACITY_PROCS): its share of the point, its figures to a file."""
    stack = make_stack(args["stack"], args["queue"], *args["dsns"])
    point = Point(stack.name, args["share"], args["nodes"])
    await stack.open()
    cpu = await drive(stack, args["share"], args["nodes"], point, tuple(args["times"]))  # type: ignore[arg-type]
    await stack.close()
    Path(args["out"]).write_text(json.dumps({**point.__dict__, "driver": cpu}))


async def measure_point(
    name: str,
    level: int,
    nodes: int,
    dsns: tuple[str, str, str],
    admin: psycopg.AsyncConnection[Any],
    postmaster: int | None,
    wal_by: bool,
) -> dict[str, Any]:
    queue = f"cap-{name}-{nodes}-{level}-{uuid.uuid4().hex[:6]}"
    stack = make_stack(name, queue, *dsns)
    point = Point(name, level, nodes)
    deployed = await compression(admin)
    if stack.name == "ours-lz4":
        await set_compression(admin, dict.fromkeys(deployed, "lz4"))
    await checkpoint(admin)
    # the other driver processes' shares, each on a queue of its own, on the same wall clock
    shares = [level // PROCS + (1 if i < level % PROCS else 0) for i in range(PROCS)]
    start_at = time.time() + (3.0 if PROCS > 1 else 0.5)  # the children's imports and pools
    times = (start_at, start_at + WARMUP + 1.0, start_at + WARMUP + 1.0 + WINDOW)
    children = []
    outs = []
    for i, share in enumerate(shares[1:], 1):
        out = Path(f"/tmp/agent_state_capacity_{os.getpid()}_{i}.json")
        outs.append(out)
        spec = {"stack": name, "queue": f"{queue}-{i}", "share": share, "nodes": nodes, "times": times, "dsns": dsns}
        children.append(
            await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--child", json.dumps({**spec, "out": str(out)})
            )
        )
    await stack.open()

    async def snapshot() -> dict[str, Any]:
        cur = await admin.execute(
            "select pg_current_wal_lsn(), (select wal_fpi from pg_stat_wal),"
            " (select coalesce(sum(pg_total_relation_size(c.oid)), 0) from pg_class c"
            "  where c.relkind = 'r' and c.relnamespace = any(%s::regnamespace[])),"
            " (select n_tup_upd from pg_stat_user_tables where relid = %s::regclass),"
            " (select n_tup_hot_upd from pg_stat_user_tables where relid = %s::regclass)",
            (["ai"] if stack.name.startswith("ours") else [STOCK_SCHEMA], stack.jobs_table, stack.jobs_table),
        )
        lsn, fpi, size, upd, hot = await cur.fetchone()  # type: ignore[misc]
        return {
            "lsn": lsn,
            "fpi": float(fpi),
            "size": float(size),
            "upd": upd,
            "hot": hot,
            "cpu": _server_cpu(postmaster),
            "t": time.perf_counter(),
        }

    snaps: list[dict[str, Any]] = []

    async def at_start() -> None:
        await admin.execute("select pg_stat_clear_snapshot()")
        snaps.append(await snapshot())

    async def at_end() -> None:
        await admin.execute("select pg_stat_clear_snapshot()")
        await asyncio.sleep(0.5)  # the stats collector's flush interval is 0.5-1 s for the update counters
        snaps.append(await snapshot())

    driver = await drive(stack, shares[0], nodes, point, times, at_start, at_end)
    await stack.close()
    for proc, out in zip(children, outs, strict=True):
        await proc.wait()
        got = json.loads(out.read_text())
        out.unlink()
        for key in ("saves", "puts", "claims", "lag", "running"):
            getattr(point, key).extend(got[key])
        point.steps += got["steps"]
        point.completed += got["completed"]
        for kind, n in got["errors"].items():
            point.errors[kind] = point.errors.get(kind, 0) + n
        driver += got["driver"]
    a, b = snaps
    if stack.name == "ours-lz4":
        await set_compression(admin, deployed)
    cur = await admin.execute("select pg_wal_lsn_diff(%s, %s)", (b["lsn"], a["lsn"]))
    wal = float((await cur.fetchone())[0])  # type: ignore[index]
    steps = max(point.steps, 1)
    by_relation: dict[str, float] = {}
    if level == WAL_LEVEL and wal_by:
        try:
            cur = await admin.execute(WAL_BY_RELATION, (a["lsn"], b["lsn"]))
            by_relation = {name: float(nbytes) / steps for name, nbytes in await cur.fetchall()}
        except psycopg.errors.InsufficientPrivilege:
            pass  # pg_get_wal_records_info: a superuser or pg_read_server_files
    upd = (b["upd"] or 0) - (a["upd"] or 0)
    return {
        "stack": stack.name,
        "nodes": nodes,
        "level": level,
        "mirror": isinstance(stack, Ours) and stack.mirror,
        "running": statistics.mean(point.running) * PROCS if point.running else 0,
        "steps": point.steps,
        "steps_per_s": point.steps / WINDOW,
        "completed": point.completed,
        "save_p50": pct(point.saves, 0.50),
        "save_p99": pct(point.saves, 0.99),
        "put_p99": pct(point.puts, 0.99),
        "claim_p50": pct(point.claims, 0.50),
        "claim_p99": pct(point.claims, 0.99),
        "cpu_ms_per_step": (b["cpu"] - a["cpu"]) / steps * 1000,
        "server_cores": (b["cpu"] - a["cpu"]) / (b["t"] - a["t"]),
        "wal_per_step": wal / steps,
        "fpi_per_step": (b["fpi"] - a["fpi"]) / steps,
        "growth_per_run": (b["size"] - a["size"]) / steps * nodes,
        "hot_share": ((b["hot"] or 0) - (a["hot"] or 0)) / upd if upd else float("nan"),
        "errors": sum(point.errors.values()),
        "error_kinds": point.errors,
        "driver_ms_per_step": driver / steps * 1000,
        "driver_cores": driver / WINDOW,
        "procs": PROCS,
        "lag_p99": pct(point.lag, 0.99),
        "wal_by_relation": by_relation,
    }


def postmaster_of(backend: int) -> int | None:
    """The postmaster's pid, when the server runs on this machine (its CPU is read from /proc)."""
    try:
        stat = Path(f"/proc/{backend}/stat").read_text()
        return int(stat[stat.rindex(")") + 2 :].split()[1])
    except (OSError, ValueError, IndexError):
        print("capacity bench: the server is not on this machine: no server CPU", file=sys.stderr)
        return None


async def main() -> None:
    admin_dsn, tenant_dsn, worker_dsn, stock_dsn, out = sys.argv[1:6]
    results: list[dict[str, Any]] = []
    async with await psycopg.AsyncConnection.connect(admin_dsn, autocommit=True) as admin:
        cur = await admin.execute(
            "select pg_backend_pid(), exists (select from pg_extension where extname = 'pg_walinspect')"
        )
        backend, wal_by = await cur.fetchone()  # type: ignore[misc]
        postmaster = postmaster_of(backend)
        async with await psycopg.AsyncConnection.connect(stock_dsn, autocommit=True) as conn:
            await AsyncPostgresSaver(conn).setup()  # type: ignore[arg-type]
        print(f"ours: messages {'in the step (mirror_messages)' if MIRROR else 'appended in calls of their own'}")
        header = (
            f"{'stack':<20} {'nodes':>5} {'runs':>5} {'held':>5} {'steps/s':>7} {'save p50':>8} {'p99':>7} "
            f"{'claim p50':>9} {'p99':>7} {'CPU ms/step':>11} {'WAL B/step':>10} {'FPI/step':>8} {'growth/run':>10} "
            f"{'HOT':>5} {'errors':>6} {'driver ms/step':>14} {'lag p99':>7}"
        )
        print(header, flush=True)
        k = 0
        for nodes in NODE_COUNTS:
            for level in LEVELS:
                order = STACKS if k % 2 == 0 else list(reversed(STACKS))  # interleaved, alternating order
                k += 1
                for name in order:
                    dsns = (tenant_dsn, worker_dsn, stock_dsn)
                    r = await measure_point(name, level, nodes, dsns, admin, postmaster, wal_by)
                    results.append(r)
                    print(
                        f"{r['stack']:<20} {nodes:>5} {level:>5} {r['running']:>5.0f} {r['steps_per_s']:>7.1f} "
                        f"{r['save_p50']:>8.1f} {r['save_p99']:>7.1f} {r['claim_p50']:>9.1f} {r['claim_p99']:>7.1f} "
                        f"{r['cpu_ms_per_step']:>11.2f} "
                        f"{r['wal_per_step']:>10.0f} {r['fpi_per_step']:>8.2f} {r['growth_per_run']:>10.0f} "
                        f"{r['hot_share']:>5.2f} {r['errors']:>6} {r['driver_ms_per_step']:>14.2f} "
                        f"{r['lag_p99']:>7.1f}",
                        flush=True,
                    )
    Path(out).write_text(
        json.dumps(
            {
                "levels": LEVELS,
                "node_counts": NODE_COUNTS,
                "window": WINDOW,
                "warmup": WARMUP,
                "lease": LEASE,
                "pool": POOL,
                "mirror": MIRROR,
                "procs": PROCS,
                "results": results,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        asyncio.run(child(json.loads(sys.argv[2])))
    else:
        asyncio.run(main())
