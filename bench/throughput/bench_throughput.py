"""Queue throughput (issue 41 item 5): jobs per second of a worker process with 1, 4 and 16
concurrent handlers of 1 ms, draining a backlog of 4,000 jobs over 1,024 threads enqueued in
batch, for:

  ours           agent_state.Worker of this tree, on a database deployed from this tree
                 (the backlog: one ai.enqueue_jobs call per 4,000 jobs)
  main           agent_state.Worker of BENCH_BASE_ROOT (a worktree of main), on a database
                 deployed from that tree, in the same run (the backlog: one statement of
                 ai.enqueue_job calls, main having no batch function)
  pgqueuer       its QueueManager (drain mode, psycopg driver), entrypoint concurrency_limit = N
  procrastinate  its worker (concurrency = N, wait=False: drains, then stops)

Each point runs in a process of its own (the worker's code imported from its tree), timed from
the first handler that starts to the last that finishes. Before each point the system's tables
are emptied (TRUNCATE), so the table's size after the run is the size per finished job, and the
dead tuples are the updates and deletes the run made on them (pg_stat_user_tables; autovacuum
does not change them). With pg_stat_statements loaded (shared_preload_libraries: on the private
cluster `psql -c "alter system set shared_preload_libraries = 'pg_stat_statements'"`, then
`make db-stop db`; bench/throughput.sh creates the extension), the server time of each statement
at the highest level is printed: where the time goes.

    python bench_throughput.py DSN BASE_DSN     (BASE_DSN "" leaves main out)
    python bench_throughput.py --child SYSTEM DSN CONCURRENCY   (a worker process; prints JSON)
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

JOBS = int(os.environ.get("BENCH_TP_JOBS", "4000"))
THREADS = int(os.environ.get("BENCH_TP_THREADS", "1024"))
LEVELS = [int(n) for n in os.environ.get("BENCH_TP_LEVELS", "1 4 16").split()]
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
SYSTEMS = os.environ.get("BENCH_TP_SYSTEMS", "ours main pgqueuer procrastinate").split()
BASE_ROOT = os.environ.get("BENCH_BASE_ROOT", "")
# the Worker's prefetch (claimed beyond its handlers); unset: the Worker's default (= concurrency)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
QUEUE = "tp"
WORKER_ROLE = "bench_tp_worker"
HANDLER_SECONDS = 0.001
#: the tables each system writes a job's life to
TABLES = {
    "ours": ["ai.agent_jobs", "ai.job_fences"],
    "main": ["ai.agent_jobs", "ai.job_fences"],
    "pgqueuer": ["public.pgqueuer", "public.pgqueuer_log", "public.pgqueuer_statistics"],
    "procrastinate": ["public.procrastinate_jobs", "public.procrastinate_events"],
}


# -- the worker processes ---------------------------------------------------------------------------


def _times() -> tuple[list[float], list[float]]:
    return [], []


def child_agent_state(dsn: str, concurrency: int) -> dict[str, Any]:
    from psycopg_pool import ConnectionPool

    from agent_state import Job, JobContext, Worker

    starts, ends = _times()

    def handler(job: Job, ctx: JobContext) -> None:
        starts.append(time.time())
        time.sleep(HANDLER_SECONDS)
        ends.append(time.time())

    with ConnectionPool(dsn, min_size=2, max_size=concurrency + 4, kwargs={"autocommit": True}) as pool:
        pool.wait()
        prefetch = int(os.environ["BENCH_TP_PREFETCH"]) if os.environ.get("BENCH_TP_PREFETCH") else None
        Worker(pool, handler, QUEUE, concurrency=concurrency, prefetch=prefetch, poll_interval=0.05).run(
            drain=True, install_signal_handlers=False
        )
    return {"first": min(starts, default=0), "last": max(ends, default=0), "count": len(ends)}


async def child_pgqueuer(dsn: str, concurrency: int) -> dict[str, Any]:
    from datetime import timedelta

    from pgqueuer import PsycopgDriver, Queries, QueueManager
    from pgqueuer.domain.types import QueueExecutionMode

    starts, ends = _times()
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        qm = QueueManager(Queries(PsycopgDriver(conn)))

        # pgqueuer 1.6.0 in drain mode stalled with an awaiting handler (asyncio.sleep: jobs left
        # "picked", with concurrency_limit or without), so its 1 ms blocks the loop: one handler
        # at a time whatever the level (the level sets its batch size)
        @qm.entrypoint("noop")
        async def noop(job: Any) -> None:
            starts.append(time.time())
            time.sleep(HANDLER_SECONDS)
            ends.append(time.time())

        await qm.run(batch_size=max(10, concurrency), mode=QueueExecutionMode.drain,
                     log_aggregation_interval=timedelta(0))  # fmt: skip
    return {"first": min(starts, default=0), "last": max(ends, default=0), "count": len(ends)}


def _procrastinate_app(dsn: str) -> Any:
    from procrastinate import App, PsycopgConnector

    return App(connector=PsycopgConnector(conninfo=dsn))


async def child_procrastinate(dsn: str, concurrency: int) -> dict[str, Any]:
    starts, ends = _times()
    app = _procrastinate_app(dsn)

    @app.task(name="noop", queue=QUEUE)
    async def noop() -> None:
        starts.append(time.time())
        await asyncio.sleep(HANDLER_SECONDS)
        ends.append(time.time())

    async with app.open_async():
        await app.run_worker_async(queues=[QUEUE], concurrency=concurrency, wait=False, install_signal_handlers=False)
    return {"first": min(starts, default=0), "last": max(ends, default=0), "count": len(ends)}


# -- the driver -------------------------------------------------------------------------------------


def setup(system: str, dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        if system in ("ours", "main"):
            conn.execute(
                f"do $$ begin if not exists (select from pg_roles where rolname = '{WORKER_ROLE}') then "
                f"create role {WORKER_ROLE} login; end if; end $$"
            )
            conn.execute(f"grant ai_service to {WORKER_ROLE}")
            conn.execute(f"set session authorization {WORKER_ROLE}")
            conn.execute("select count(ai.create_session('tp-' || t)) from generate_series(0, %s) t", (THREADS - 1,))
        elif system == "pgqueuer":
            from pgqueuer import PsycopgDriver, Queries

            async def install() -> None:
                async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as c:
                    q = Queries(PsycopgDriver(c))
                    if not await q.schema_is_installed():
                        await q.install()

            asyncio.run(install())
        elif (
            system == "procrastinate"
            and not conn.execute("select to_regclass('public.procrastinate_jobs')").fetchone()[0]  # type: ignore[index]
        ):
            app = _procrastinate_app(dsn)

            async def apply() -> None:
                async with app.open_async():
                    await app.schema_manager.apply_schema_async()

            asyncio.run(apply())


def empty(system: str, dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"truncate {', '.join(TABLES[system])} cascade")


def enqueue(system: str, dsn: str) -> float:
    """The backlog, in batch; returns the seconds it took (the client's import not counted)."""
    if system == "ours":
        import agent_state  # noqa: F401
    t0 = time.perf_counter()
    if system == "ours":
        from agent_state import Client, NewJob

        with psycopg.connect(make_conninfo(dsn, user=WORKER_ROLE), autocommit=True) as conn:
            Client(conn).enqueue_jobs([NewJob(f"tp-{i % THREADS}") for i in range(JOBS)], queue=QUEUE)
    elif system == "main":
        with psycopg.connect(make_conninfo(dsn, user=WORKER_ROLE), autocommit=True) as conn:
            conn.execute(
                "select count(ai.enqueue_job('tp-' || (i %% %s), '{}', %s)) from generate_series(0, %s) i",
                (THREADS, QUEUE, JOBS - 1),
            )
    elif system == "pgqueuer":
        from pgqueuer import PsycopgDriver, Queries

        async def go() -> None:
            async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as c:
                await Queries(PsycopgDriver(c)).enqueue(["noop"] * JOBS, [None] * JOBS, [0] * JOBS)

        asyncio.run(go())
    else:
        app = _procrastinate_app(dsn)

        @app.task(name="noop", queue=QUEUE)
        async def noop() -> None:  # the worker's task, for its name
            return None

        async def go() -> None:
            async with app.open_async():
                await noop.batch_defer_async(*([{}] * JOBS))

        asyncio.run(go())
    return time.perf_counter() - t0


def table_counters(dsn: str, tables: list[str]) -> tuple[int, int]:
    """(updates + deletes so far, total bytes) of the tables."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("select pg_stat_clear_snapshot()")
        row = conn.execute(
            "select coalesce(sum(n_tup_upd + n_tup_del), 0)::bigint,"
            " coalesce(sum(pg_total_relation_size(relid)), 0)::bigint"
            " from pg_stat_user_tables where (schemaname || '.' || relname) = any (%s)",
            (tables,),
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def statements(dsn: str, reset: bool) -> list[tuple[str, int, float]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            if reset:
                conn.execute("select pg_stat_statements_reset()")
                return []
            return [
                (r[0], int(r[1]), float(r[2]))
                for r in conn.execute(
                    "select regexp_replace(query, '\\s+', ' ', 'g'), calls, total_exec_time from pg_stat_statements"
                    " where dbid = (select oid from pg_database where datname = current_database())"
                    " order by total_exec_time desc limit 8"
                )
            ]
        except psycopg.Error:
            return []


def point(system: str, dsn: str, concurrency: int, profile: bool) -> dict[str, Any]:
    empty(system, dsn)
    enqueue_s = enqueue(system, dsn)
    before, _ = table_counters(dsn, TABLES[system])
    if profile:
        statements(dsn, reset=True)
    env = dict(os.environ)
    child_dsn = make_conninfo(dsn, user=WORKER_ROLE) if system in ("ours", "main") else dsn
    if system == "main":
        env["PYTHONPATH"] = os.path.join(BASE_ROOT, "python")
    elif system == "ours":
        env["PYTHONPATH"] = os.path.join(ROOT, "python")
    t0 = time.time()
    out = subprocess.run(
        [sys.executable, __file__, "--child", system, child_dsn, str(concurrency)],
        env=env, capture_output=True, text=True, timeout=900, check=True,
    ).stdout  # fmt: skip
    wall = time.time() - t0
    result = json.loads(out.strip().splitlines()[-1])
    assert result["count"] == JOBS, f"{system}: {result['count']} of {JOBS} jobs ran"
    after, size = table_counters(dsn, TABLES[system])
    return {
        "jobs_per_s": JOBS / (result["last"] - result["first"]),
        "wall_s": wall,
        "dead_per_job": (after - before) / JOBS,
        "bytes_per_job": size / JOBS,
        "enqueue_jobs_per_s": JOBS / enqueue_s,
        "statements": statements(dsn, reset=False) if profile else [],
    }


def main() -> None:
    if sys.argv[1] == "--child":
        system, dsn, concurrency = sys.argv[2], sys.argv[3], int(sys.argv[4])
        if system in ("ours", "main"):
            result = child_agent_state(dsn, concurrency)
        elif system == "pgqueuer":
            result = asyncio.run(child_pgqueuer(dsn, concurrency))
        else:
            result = asyncio.run(child_procrastinate(dsn, concurrency))
        print(json.dumps(result), flush=True)
        return
    dsn, base_dsn = sys.argv[1], sys.argv[2]
    systems = [s for s in SYSTEMS if s != "main" or (base_dsn and BASE_ROOT)]
    for peer in ("pgqueuer", "procrastinate"):  # the bench extra: pip install -e 'python[bench]'
        try:
            __import__(peer)
        except ImportError:
            print(f"throughput bench: {peer} is not installed (the bench extra): left out", file=sys.stderr)
            systems = [s for s in systems if s != peer]
    dsns = {s: (base_dsn if s == "main" else dsn) for s in systems}
    for s in systems:
        setup(s, dsns[s])
    got: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for repeat in range(REPEATS):  # interleaved: load from elsewhere falls on every system alike
        for level in LEVELS:
            # and each repeat in another order: no system always runs right after the same one
            for s in systems[repeat % len(systems) :] + systems[: repeat % len(systems)]:
                profile = level == LEVELS[-1]
                got.setdefault((s, level), []).append(point(s, dsns[s], level, profile))
    print(f"\nqueue throughput: {JOBS:,} jobs over {THREADS:,} threads enqueued in batch, handlers of 1 ms,"
          f" jobs/s (median of {REPEATS}, interleaved, the order rotated each repeat)")  # fmt: skip
    print(f"{'handlers':>8} " + " ".join(f"{s:>13}" for s in systems)
          + "".join(f" {'/' + s:>14}" for s in systems if s != "ours"))  # fmt: skip
    for level in LEVELS:
        med = {s: statistics.median(r["jobs_per_s"] for r in got[(s, level)]) for s in systems}
        print(f"{level:>8} " + " ".join(f"{med[s]:>13.0f}" for s in systems)
              + "".join(f" {med.get('ours', 0) / med[s]:>14.2f}" for s in systems if s != "ours"))  # fmt: skip
    print("(/x: ours over x)")
    print(f"\nper finished job, at {LEVELS[-1]} handlers (median): dead tuples (updates + deletes on its tables),"
          " bytes of its tables (with indexes and TOAST), enqueue jobs/s")  # fmt: skip
    for s in systems:
        rs = got[(s, LEVELS[-1])]
        print(f"{s:>13} {statistics.median(r['dead_per_job'] for r in rs):>8.2f} dead"
              f" {statistics.median(r['bytes_per_job'] for r in rs):>8.0f} B"
              f" {statistics.median(r['enqueue_jobs_per_s'] for r in rs):>9.0f} enqueued/s")  # fmt: skip
    for s in systems:
        last = got[(s, LEVELS[-1])][-1]
        if not last["statements"]:
            continue
        total = sum(t for _, _, t in last["statements"])
        print(f"\n{s}: server time by statement at {LEVELS[-1]} handlers (pg_stat_statements, last run;"
              f" {total:.0f} ms of the top 8 in a {last['wall_s']:.1f} s run)")  # fmt: skip
        for query, calls, ms in last["statements"]:
            print(f"  {ms:>8.0f} ms {calls:>6} calls {ms * 1000 / max(calls, 1):>7.0f} us/call  {query[:90]}")
    load = os.getloadavg()
    print(f"\n(load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f})")


if __name__ == "__main__":
    main()
