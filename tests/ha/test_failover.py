"""A real failover (issue 31): a pg_auto_failover formation (scripts/ha.sh; `make test-ha`), a mixed
load on the multi-host URL with ``target_session_attrs=read-write``, a planned failover
(``pg_autoctl perform failover``), then an unplanned one (SIGKILL of the primary's keeper and
postmaster) after which the old primary rejoins. Afterwards:

- every acknowledged write is on the new primary (enqueues, messages, checkpoints of the
  ``from_conn_string`` saver, graph runs started, and each job's fenced writes);
- no tool call guarded by the side-effect ledger ran twice unless the later call was flagged
  ``taken_over`` (the tool is an external API on another server, which sees every call);
- no write with a stale lease was accepted: each job's effect row is there once, under its final
  fencing token;
- the worker processes started first finished every job (no restart), and every client thread
  wrote again after each failover without a restart, its calls never giving up (RetryPolicy()).

Recovery times are printed: kill (or the failover command) -> a writable primary (probed once
every 0.2 s on the multi-host URL) -> the first acknowledged write. The log of acknowledged writes
is .ha/logs/acked-<run>.jsonl, removed when the test passes. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from formation import (
    CONSOLE_PASSWORD,
    HA_DIR,
    NODES,
    PORT,
    ROOT,
    ha,
    healthy,
    nodes,
    primary_port,
    spawn_worker,
    url,
    wait,
)
from langgraph.checkpoint.base import empty_checkpoint
from psycopg_pool import ConnectionPool
from starlette.testclient import TestClient

from agent_state import Client, RetryPolicy
from agent_state.console import create_app
from agent_state.langgraph import AgentStateSaver, GraphRuns

HERE = Path(__file__).resolve().parent
API_DSN = os.environ.get("AGENT_STATE_EFFECTS_DSN", "postgresql:///agent_state")
FAILOVER_SECONDS = 180  # each failover and rejoin, at most
PROGRESS = 20  # acknowledged writes of each kind between the steps


@dataclass
class Load:
    """What the clients were told was done, when, and what went wrong on the way."""

    path: Path
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    acked: dict[str, list[tuple[float, Any]]] = field(default_factory=dict)  # kind -> (when, what)
    gave_up: list[str] = field(default_factory=list)  # calls whose RetryPolicy() ran out
    failures: list[BaseException] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.log = self.path.open("a", buffering=1)

    def ack(self, kind: str, what: Any) -> None:
        now = time.monotonic()
        with self.lock:
            self.acked.setdefault(kind, []).append((now, what))
            self.log.write(json.dumps({"t": now, "kind": kind, "what": what}) + "\n")

    def count(self, kind: str, after: float = 0.0) -> int:
        with self.lock:
            return sum(1 for t, _ in self.acked.get(kind, []) if t > after)

    def first_of(self, kind: str, t0: float) -> float | None:
        with self.lock:
            times = [t for t, _ in self.acked.get(kind, []) if t > t0]
        return min(times) if times else None

    def first_after(self, t0: float) -> float | None:
        with self.lock:
            times = [t for rows in self.acked.values() for t, _ in rows if t > t0]
        return min(times) if times else None


def _retrying(load: Load, kind: str, call: Callable[[], Any]) -> Any:
    """The call, again with the same arguments (each is idempotent) until it is acknowledged;
    each error means a RetryPolicy() gave up."""
    while not load.stop.is_set():
        try:
            return call()
        except (psycopg.Error, OSError) as error:
            with load.lock:
                load.gave_up.append(f"{kind}: {type(error).__name__}: {str(error).strip()[:160]}")
            time.sleep(0.5)
    return None


def _appender(load: Load) -> None:
    # over a connection of the caller's: psycopg keeps only the host it reached, so the client is
    # given the URL to reconnect through (all the hosts, target_session_attrs)
    conninfo = url("tenant_a")
    client = Client(psycopg.connect(conninfo, autocommit=True), retry=RetryPolicy(), conninfo=conninfo)
    thread = f"ha-m-{uuid.uuid4()}"
    _retrying(load, "message", lambda: client.create_session(thread))
    i = 0
    while not load.stop.is_set():
        append = lambda i=i: client.append_message(thread, "user", {"i": i}, idempotency_key=f"m{i}")  # noqa: E731
        if _retrying(load, "message", append):
            load.ack("message", [thread, i])
        i += 1
        time.sleep(0.05)


def _saver(load: Load) -> None:
    thread = f"ha-c-{uuid.uuid4()}"
    with AgentStateSaver.from_conn_string(url("tenant_a"), retry=RetryPolicy()) as saver:
        n = 0
        while not load.stop.is_set():
            cp = empty_checkpoint()
            cp["id"] = f"1ef{n:013d}"
            cp["channel_values"] = {"n": n}
            cp["channel_versions"] = {"n": f"{n:08d}"}
            config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
            metadata: Any = {"source": "loop", "step": n, "parents": {}}
            new = {"n": f"{n:08d}"}
            if _retrying(load, "checkpoint", lambda: saver.put(config, cp, metadata, new)):  # noqa: B023
                load.ack("checkpoint", [thread, cp["id"]])
            n += 1
            time.sleep(0.05)


def _enqueuer(load: Load, pool: ConnectionPool, queue: str) -> None:
    client = Client(pool, retry=RetryPolicy())
    threads = [f"ha-q-{uuid.uuid4()}" for _ in range(10)]
    for t in threads:
        _retrying(load, "job", lambda t=t: client.create_session(t))
    i = 0
    while not load.stop.is_set():
        job = _retrying(
            load,
            "job",
            lambda i=i: client.enqueue_job(
                threads[i % 10], {"n": i}, queue, max_attempts=1000, idempotency_key=f"j{i}"
            ),
        )
        if job is not None:
            load.ack("job", job.job_id)
        i += 1
        time.sleep(0.05)


def _graph_starter(load: Load, pool: ConnectionPool, queue: str, api_table: str) -> None:
    sys.path.insert(0, str(HERE))
    from ha_worker import build_graph

    client = Client(pool, retry=RetryPolicy())
    runs = GraphRuns(client, build_graph(API_DSN, api_table), queue=queue)
    i = 0
    while not load.stop.is_set():
        thread = f"ha-g-{i}-{uuid.uuid4()}"
        job = _retrying(load, "graph run", lambda: runs.start(thread, {"log": ["in"]}))  # noqa: B023
        if job is not None:
            load.ack("graph run", job.job_id)
        i += 1
        time.sleep(1.0)


def _guarded(load: Load, target: Callable[..., None], *args: Any) -> threading.Thread:
    def run() -> None:
        try:
            target(load, *args)
        except BaseException as error:
            load.failures.append(error)
            load.stop.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


class Probe:
    """Once every 0.2 s: may a new session write (the multi-host URL finds a read-write node)?"""

    def __init__(self) -> None:
        self.seen: list[tuple[float, bool]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            t = time.monotonic()
            try:
                with psycopg.connect(url("postgres", connect_timeout=1), autocommit=True) as conn:
                    row = conn.execute("select not pg_is_in_recovery()").fetchone()
                    ok = bool(row and row[0])
            except psycopg.Error:
                ok = False
            self.seen.append((t, ok))
            self.stop.wait(max(0.0, 0.2 - (time.monotonic() - t)))

    def writable_after(self, t0: float, deadline: float) -> float:
        """The first probe at or after t0 that could write, after one that could not (the switch)."""
        while time.monotonic() < deadline:
            seen = [(t, ok) for t, ok in list(self.seen) if t >= t0]
            down = next((i for i, (_, ok) in enumerate(seen) if not ok), None)
            if down is not None:
                up = next((t for t, ok in seen[down:] if ok), None)
                if up is not None:
                    return up
            time.sleep(0.2)
        raise AssertionError("no writable primary after the failover")


def _console_login(browser: TestClient) -> None:
    page = browser.get("/login")
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found is not None
    login = {"csrf": found.group(1), "user": "console_operator", "password": CONSOLE_PASSWORD}
    assert browser.post("/login", data=login, follow_redirects=False).status_code == 303


def _console_reads(browser: TestClient, queue: str) -> bool:
    """The console's runs and queues pages, read without an error (the queue is shown)."""
    runs, queues = browser.get("/runs"), browser.get("/queues")
    pages = (runs, queues)
    return all(p.status_code == 200 and 'class="error"' not in p.text for p in pages) and queue in queues.text


def _ts_appender(load: Load, logdir: Path) -> tuple[subprocess.Popen[str], threading.Thread]:
    """The TypeScript client appending messages on the multi-host URL (tests/ha/ts_appender.mjs);
    its acknowledgements, read from its stdout, are the load's "ts message"s."""
    env = dict(os.environ, URL=url("tenant_a"), THREAD=f"ha-m-ts-{uuid.uuid4()}")
    proc = subprocess.Popen(
        ["node", str(HERE / "ts_appender.mjs"), str(ROOT)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=open(logdir / "ts_appender.err", "ab"),  # noqa: SIM115
        text=True,
    )

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            load.ack("ts message", json.loads(line))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return proc, reader


def test_a_planned_and_an_unplanned_failover_lose_no_acknowledged_write_and_fire_no_tool_twice() -> None:
    start = time.monotonic()
    wait(healthy, 120, "a healthy formation")
    run = uuid.uuid4().hex[:8]
    logdir = HA_DIR / "logs"
    logdir.mkdir(parents=True, exist_ok=True)
    queue, gqueue, effects, api_table = f"ha-{run}", f"ha-g-{run}", f"ha_effects_{run}", f"ha_api_{run}"
    with psycopg.connect(url("postgres"), autocommit=True) as admin:
        admin.execute(f"create table public.{effects} (job_id bigint not null, token bigint not null, pid int)")
        admin.execute(f"grant insert, select on public.{effects} to app_service")
    with psycopg.connect(API_DSN, autocommit=True) as api:
        api.execute(
            f"create table public.{api_table} (key text not null, taken_over boolean not null, pid int not null,"
            " job_id bigint not null, at timestamptz not null default clock_timestamp())"
        )

    load = Load(logdir / f"acked-{run}.jsonl")
    service = url("app_service")
    args = ["jobs", service, queue, effects, API_DSN, api_table, str(logdir)]
    workers = [spawn_worker(args, logdir, f"jobs{i}") for i in range(2)]
    workers.append(spawn_worker(["graph", service, gqueue, API_DSN, api_table], logdir, "graph"))
    pids = [w.pid for w in workers]
    pool = ConnectionPool(
        url("tenant_a"),
        min_size=1,
        max_size=4,
        kwargs={"autocommit": True},
        check=ConnectionPool.check_connection,
        # the pool's other settings are psycopg_pool's defaults: a Client with a retry policy caps
        # its reconnect_timeout and waits briefly per try itself (docs/high-availability.md)
        open=True,
    )
    probe = Probe()
    threads = [
        _guarded(load, _appender),
        _guarded(load, _saver),
        _guarded(load, _enqueuer, pool, queue),
        _guarded(load, _graph_starter, pool, gqueue, api_table),
    ]
    ts, ts_reader = _ts_appender(load, logdir)
    ts_pid = ts.pid
    kinds = ["message", "checkpoint", "job", "graph run", "ts message"]
    console = TestClient(create_app(url("console_operator")))  # the operator console on the multi-host URL
    console.__enter__()
    times: dict[str, dict[str, float]] = {}
    per_kind: dict[str, dict[str, float]] = {}  # failover -> kind -> writable to its first ack
    passed = False

    def progressed(after: float, n: int = PROGRESS) -> Callable[[], bool]:
        def check() -> bool:
            if load.failures:
                raise AssertionError(f"a load thread failed: {load.failures!r}")
            return not stalled(after, n)

        return check

    def stalled(after: float, n: int = PROGRESS) -> list[str]:
        return [k for k in kinds if load.count(k, after) < (n if k != "graph run" else max(2, n // 5))]

    def resumed(after: float, what: str) -> None:
        try:
            wait(progressed(after), 120, what)
        except AssertionError as error:
            raise AssertionError(f"{what}: these writes did not resume: {stalled(after)}; {error}") from None

    try:
        wait(progressed(0.0), 120, "the load is running")

        def working() -> bool:  # every worker process is up (a slow start must not meet the failover)
            with psycopg.connect(url("postgres"), autocommit=True) as admin:
                row = admin.execute(
                    "select count(distinct result ->> 'pid') filter (where queue = %s),"
                    " count(*) filter (where queue = %s) from ai.agent_jobs"
                    " where status = 'COMPLETED' and queue = any(%s)",
                    (queue, gqueue, [queue, gqueue]),
                ).fetchone()
            return row is not None and row[0] >= 2 and row[1] >= 2

        wait(working, 120, "both job workers and the graph worker completed work")
        _console_login(console)
        assert _console_reads(console, queue)

        # A planned failover: pg_autoctl perform failover, which returns once it is done.
        t0 = time.monotonic()
        ha("failover", timeout=FAILOVER_SECONDS)
        writable = probe.writable_after(t0, t0 + FAILOVER_SECONDS)
        wait(healthy, FAILOVER_SECONDS, "healthy after the planned failover")
        acked = wait(lambda: load.first_after(writable) is not None, 60, "a write acknowledged after the failover")
        first = load.first_after(writable) or acked
        times["planned"] = {"writable": writable - t0, "first ack after writable": first - writable}
        resumed(writable, "every kind of write resumed after the planned failover")
        per_kind["planned"] = {k: (load.first_of(k, writable) or writable) - writable for k in kinds}

        # An unplanned one: SIGKILL of the primary's keeper and postmaster, then the old one rejoins.
        victim = primary_port() - PORT
        t0 = time.monotonic()
        ha("kill", str(victim))
        writable = probe.writable_after(t0, t0 + FAILOVER_SECONDS)
        acked = wait(lambda: load.first_after(writable) is not None, 60, "a write acknowledged after the kill")
        first = load.first_after(writable) or acked
        ha("start", str(victim))
        rejoined = wait(healthy, FAILOVER_SECONDS, "the old primary rejoined")
        times["unplanned"] = {
            "writable": writable - t0,
            "first ack after writable": first - writable,
            "old primary rejoined": rejoined - t0,
        }
        resumed(max(writable, rejoined), "every kind of write resumed after the unplanned failover")
        per_kind["unplanned"] = {k: (load.first_of(k, writable) or writable) - writable for k in kinds}

        load.stop.set()
        for t in threads:
            t.join(60)
        assert not load.failures, load.failures
        # the TypeScript process: still the first one; stopped, so its last acknowledgements are in
        ts_alive = ts.poll() is None
        ts.send_signal(signal.SIGTERM)
        ts.wait(30)
        ts_reader.join(10)
        # the console, logged in before both failovers, reads the new primary without a restart
        wait(lambda: _console_reads(console, queue), 30, "the console reads after the failovers")

        with psycopg.connect(url("postgres"), autocommit=True) as admin:

            def all_done() -> bool:
                row = admin.execute(
                    "select count(*) filter (where status = 'COMPLETED'), count(*) from ai.agent_jobs"
                    " where queue = any(%s)",
                    ([queue, gqueue],),
                ).fetchone()
                return row is not None and row[0] == row[1]

            wait(all_done, 180, "every job and graph run completed")
            alive = [w.poll() is None for w in workers]
            jobs = {
                r[0]: r[1:]
                for r in admin.execute(
                    "select job_id, status, fencing_token, queue from ai.agent_jobs where queue = any(%s)",
                    ([queue, gqueue],),
                )
            }
            effect_rows = admin.execute(f"select job_id, token from public.{effects}").fetchall()
            messages = {
                (t, c["i"])
                for t, c in admin.execute(
                    "select thread_id, content from ai.session_messages where thread_id like 'ha-m-%%'"
                )
            }
            checkpoints = set(
                admin.execute(
                    "select thread_id, checkpoint_id from ai.checkpoints where thread_id like 'ha-c-%%'"
                ).fetchall()
            )
        with psycopg.connect(API_DSN, autocommit=True) as api:
            calls = api.execute(f"select key, taken_over, pid, job_id from public.{api_table} order by at").fetchall()

        # every acknowledged write is on the new primary
        missing = {
            "message": [m for _, m in load.acked.get("message", []) if tuple(m) not in messages],
            "ts message": [m for _, m in load.acked.get("ts message", []) if tuple(m) not in messages],
            "checkpoint": [c for _, c in load.acked.get("checkpoint", []) if tuple(c) not in checkpoints],
            "job": [j for _, j in load.acked.get("job", []) if j not in jobs],
            "graph run": [j for _, j in load.acked.get("graph run", []) if j not in jobs],
        }
        assert not any(missing.values()), f"acknowledged writes missing: {missing}"
        # no tool call twice unless the later call was told taken_over
        # per job: a plain job's key names the job, and each graph run has a thread of its own
        by_key: dict[tuple[int, str], list[bool]] = {}
        for key, taken_over, _, job_id in calls:
            by_key.setdefault((job_id, key), []).append(taken_over)
        twice = {k: v for k, v in by_key.items() if len(v) > 1 and not all(v[1:])}
        assert not twice, f"tool calls run again without taken_over: {list(twice.items())[:5]}"
        assert {j for _, _, _, j in calls} == set(jobs), "every job and graph run called its tool"
        # no stale-lease write: one effect row per job, under its final token
        per_job: dict[int, list[int]] = {}
        for job_id, token in effect_rows:
            per_job.setdefault(job_id, []).append(token)
        plain = {j for j, (_, _, q) in jobs.items() if q == queue}
        assert set(per_job) == plain, "an effect row for every job"
        wrong = {j: tokens for j, tokens in per_job.items() if tokens != [jobs[j][1]]}
        assert not wrong, f"effect rows twice or under a stale token: {list(wrong.items())[:5]}"
        # every process recovered by itself
        assert all(alive) and [w.pid for w in workers] == pids, "the first worker processes did the work"
        assert ts_alive and ts.pid == ts_pid, "the TypeScript process carried on by itself"
        assert not load.gave_up, f"{len(load.gave_up)} calls outlived RetryPolicy(): {load.gave_up[:5]}"
        passed = True
        takeovers = sum(1 for v in by_key.values() if len(v) > 1)
        rounded = {k: {n: round(s, 1) for n, s in v.items()} for k, v in times.items()}
        by_kind = {k: {n: round(s, 1) for n, s in v.items()} for k, v in per_kind.items()}
        print(
            f"\nfailover ({NODES} nodes), seconds: {json.dumps(rounded)};"
            f" writable to each kind's first acknowledged write: {json.dumps(by_kind)};"
            f" acknowledged {', '.join(f'{len(v)} {k}s' for k, v in load.acked.items())};"
            f" {len(calls)} tool calls for {len(by_key)} keys ({takeovers} reruns, each taken_over);"
            f" {time.monotonic() - start:.0f} s"
        )
    finally:
        load.stop.set()
        probe.stop.set()
        for w in workers:
            if w.poll() is None:
                w.send_signal(signal.SIGTERM)
        for w in workers:
            try:
                w.wait(20)
            except subprocess.TimeoutExpired:
                w.kill()
        if ts.poll() is None:
            ts.kill()
        pool.close()
        console.__exit__(None, None, None)
        load.log.close()
        if passed:
            load.path.unlink()
        else:
            print(
                f"\nthe acknowledged writes: {load.path}; times so far {times}, per kind {per_kind};"
                f" formation: {nodes()};"
                f" acknowledged per kind: { {k: len(v) for k, v in load.acked.items()} };"
                f" calls that outlived RetryPolicy(): {len(load.gave_up)}, the last: {load.gave_up[-3:]}"
            )
        try:
            with psycopg.connect(API_DSN, autocommit=True) as api:
                api.execute(f"drop table if exists public.{api_table}")
        except psycopg.Error:
            pass
