"""`make soak`: minutes of workers and clients on one database, with retention running.

    SOAK_SECONDS=180 python tests/soak/soak.py postgresql:///agent_state

Not a pytest test (not in `make test`, not in CI): it runs for SOAK_SECONDS and stops by itself.

- SOAK_CLIENTS processes (tenants, each a login role in ai_user) loop: create a session, append
  messages, save a checkpoint, then enqueue a job for the thread. Each holds back while more than
  SOAK_BACKLOG of its own jobs are pending, so the backlog stays bounded and the throughput
  measured is the workers'.
- SOAK_WORKERS processes each run an agent_state.Worker (concurrency 4) as a member of
  ai_service: per job, in one fenced transaction, a checkpoint and a message; a side effect
  through the ledger (run once per job, its result kept); then the session is marked completed
  and the job completes.
- The main process runs retention every 10 s as the service: ai.archive_sessions and
  ai.archive_jobs (older than 10 s), and, as the schema owner, the purge docs/queue.md
  documents for ai.agent_jobs_archive (older than 60 s); it samples pg_total_relation_size of
  every table of ai and ai_archive every 30 s.

At the end it prints per-30-s windows (jobs completed, client operations), the size of the hot
tables and of the archive every 30 s and at the end, each worker's RSS at start, after the first
window (warm) and at the end, and checks:

- flat throughput: every full window after the first is at least 0.7x the median window;
- bounded hot tables: the hot tables (ai.*) at the end are at most 1.5x their size after the
  first minute (plus 8 MB for page granularity), while jobs keep flowing through them;
- no worker memory growth: each worker's RSS at the end is at most its warm RSS + 20 MB;
- nothing fired twice or lost: every completed job has exactly one finished side effect and one
  worker message, counted across hot and archived tables.

Exits 1 when a check fails.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import statistics
import sys
import threading
import time
import uuid
from collections import Counter
from datetime import timedelta
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool

WINDOW = 30.0
SECONDS = float(os.environ.get("SOAK_SECONDS", "180"))
WORKERS = int(os.environ.get("SOAK_WORKERS", "4"))
CLIENTS = int(os.environ.get("SOAK_CLIENTS", "4"))
BACKLOG = int(os.environ.get("SOAK_BACKLOG", "50"))
SERVICE = "soak_service"
TENANTS = [f"soak_tenant_{i}" for i in range(CLIENTS)]
OWNER = os.environ.get("AGENT_STATE_DEPLOY_USER", "agent_state_owner")


def dsn_as(dsn: str, user: str) -> str:
    params: dict[str, Any] = conninfo_to_dict(dsn)
    params["user"] = user
    return make_conninfo(**params)


def rss_mb() -> float:
    """Resident set size of this process (Linux /proc), in MB."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def window(t0: float) -> int:
    return int((time.time() - t0) // WINDOW)


# -- worker processes --------------------------------------------------------------------------


def worker_main(dsn: str, queue: str, t0: float, stop: Any, results: Any, index: int) -> None:
    from agent_state import ChannelValue, Client, Job, JobContext, Worker

    done: Counter[int] = Counter()
    counting = threading.Lock()  # handlers run in 4 threads
    samples = {"start": rss_mb()}

    def handler(job: Job, ctx: JobContext) -> None:
        thread = job.thread_id
        with ctx.fenced() as conn:
            client = Client(conn)
            client.put_checkpoint(
                thread, "", None, None, "json", b'{"step": 2}', {"source": "loop", "step": 2}, {"messages": "2"},
                [ChannelValue("messages", "2", "json", b'["from the worker"]')],
            )  # fmt: skip
            client.append_message(thread, "assistant", {"text": f"job {job.job_id} done"}, turn=2)
        sent = ctx.side_effect("notify", job.job_id).run(lambda call: {"sent": call.key})
        with ctx.fenced() as conn:
            Client(conn).set_session_status(thread, "completed")
            ctx.complete({"sent": sent["sent"]}, conn)
        with counting:
            done[window(t0)] += 1
            if "warm" not in samples and window(t0) >= 1:
                samples["warm"] = rss_mb()

    with ConnectionPool(dsn, min_size=2, max_size=8, kwargs={"autocommit": True}, open=True) as pool:
        worker = Worker(pool, handler, queue, concurrency=4, lease=timedelta(seconds=30), poll_interval=0.2)
        runner = threading.Thread(target=worker.run, kwargs={"install_signal_handlers": False}, daemon=True)
        runner.start()
        stop.wait()
        worker.stop()
        runner.join(timeout=60)
        samples["end"] = rss_mb()
        results.put(("worker", index, dict(done), samples, worker.stats.completed, worker.stats.failed))


# -- client processes --------------------------------------------------------------------------


def client_main(dsn: str, queue: str, t0: float, stop: Any, results: Any, index: int) -> None:
    """A tenant: sessions, messages, a checkpoint, then a job for the thread."""
    from agent_state import ChannelValue, Client

    ops: Counter[int] = Counter()
    with psycopg.connect(dsn, autocommit=True) as conn:
        client = Client(conn)
        n = 0
        while not stop.is_set():
            if n % 10 == 0 and sum(s.pending for s in client.queue_stats(queue)) > BACKLOG:
                stop.wait(0.2)
                continue
            n += 1
            thread = f"soak-{index}-{uuid.uuid4().hex[:12]}"
            client.create_session(thread, {"soak": True})
            for turn in range(3):
                client.append_message(thread, "user", {"text": f"message {turn} " + "x" * 200}, turn=turn)
            client.put_checkpoint(
                thread, "", None, None, "json", b'{"step": 1}', {"source": "input", "step": 1}, {"messages": "1"},
                [ChannelValue("messages", "1", "json", b'["from the client"]')],
            )  # fmt: skip
            client.enqueue_job(thread, {"n": n}, queue=queue)
            ops[window(t0)] += 6
    results.put(("client", index, dict(ops)))


# -- main ----------------------------------------------------------------------------------------


SIZES = """
select n.nspname, coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
from pg_class c join pg_namespace n on n.oid = c.relnamespace
where n.nspname in ('ai', 'ai_archive') and c.relkind = 'r'
group by n.nspname
"""


def setup(admin: psycopg.Connection[Any]) -> None:
    for role, group in [(SERVICE, "ai_service"), *((t, "ai_user") for t in TENANTS)]:
        if admin.execute("select 1 from pg_roles where rolname = %s", (role,)).fetchone() is None:
            admin.execute(f"create role {role} login")  # names are constants of this script
        admin.execute(f"grant {group} to {role}")


def main() -> int:
    dsn = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("DATABASE_URL", "postgresql:///agent_state")
    admin = psycopg.connect(dsn, autocommit=True)
    setup(admin)
    queue = f"soak-{uuid.uuid4().hex[:8]}"
    version = admin.execute("show server_version").fetchone()[0]  # type: ignore[index]
    print(
        f"soak: {SECONDS:.0f} s, {WORKERS} worker processes (concurrency 4), {CLIENTS} client processes, "
        f"queue {queue}, PostgreSQL {version}",
        flush=True,
    )
    ctx = mp.get_context("spawn")
    stop, results = ctx.Event(), ctx.Queue()
    t0 = time.time()
    procs = [
        ctx.Process(target=worker_main, args=(dsn_as(dsn, SERVICE), queue, t0, stop, results, i))
        for i in range(WORKERS)
    ] + [
        ctx.Process(target=client_main, args=(dsn_as(dsn, TENANTS[i]), queue, t0, stop, results, i))
        for i in range(CLIENTS)
    ]
    for p in procs:
        p.start()
    service = psycopg.connect(dsn_as(dsn, SERVICE), autocommit=True)
    try:
        owner: psycopg.Connection[Any] | None = psycopg.connect(dsn_as(dsn, OWNER), autocommit=True)
    except psycopg.OperationalError:
        owner = None  # a server of the user's without that role: the job archive is not purged
    from agent_state import Client

    retention = Client(service)
    samples: list[dict[str, Any]] = []
    archived = {"sessions": 0, "jobs": 0, "purged": 0}
    next_sample, next_retention = t0 + WINDOW, t0 + 10
    try:
        while time.time() < t0 + SECONDS:
            now = time.time()
            if now >= next_retention:
                while batch := retention.archive_sessions(timedelta(seconds=10), 500):
                    archived["sessions"] += len(batch)
                archived["jobs"] += retention.archive_jobs(timedelta(seconds=10), 10000)
                if owner is not None:  # docs/queue.md: the job archive is purged by the owner
                    cur = owner.execute(
                        "delete from ai.agent_jobs_archive where archived_at < now() - interval '60 seconds'"
                    )
                    archived["purged"] += cur.rowcount
                next_retention = now + 10
            if now >= next_sample:
                sizes = dict(admin.execute(SIZES).fetchall())  # type: ignore[arg-type]
                pending = admin.execute(
                    "select count(*) from ai.agent_jobs where queue = %s and status = 'PENDING'", (queue,)
                ).fetchone()[0]  # type: ignore[index]
                samples.append(
                    {"t": now - t0, "ai": sizes.get("ai", 0), "archive": sizes.get("ai_archive", 0), "pending": pending}
                )
                print(
                    f"  {now - t0:5.0f} s  hot {sizes.get('ai', 0) / 1e6:7.1f} MB  archive "
                    f"{sizes.get('ai_archive', 0) / 1e6:7.1f} MB  backlog {pending}",
                    flush=True,
                )
                next_sample = now + WINDOW
            time.sleep(0.5)
    finally:
        stop.set()
    got = [results.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    end = dict(admin.execute(SIZES).fetchall())  # type: ignore[arg-type]
    samples.append({"t": time.time() - t0, "ai": end.get("ai", 0), "archive": end.get("ai_archive", 0), "pending": 0})
    return report(admin, queue, got, samples, archived)


def report(
    admin: psycopg.Connection[Any], queue: str, got: list[Any], samples: list[dict[str, Any]], archived: dict[str, int]
) -> int:
    jobs: Counter[int] = Counter()
    ops: Counter[int] = Counter()
    workers = []
    for item in got:
        if item[0] == "worker":
            jobs.update({int(k): v for k, v in item[2].items()})
            workers.append(item)
        else:
            ops.update({int(k): v for k, v in item[2].items()})
    full = int(SECONDS // WINDOW)
    print("\n| window | jobs completed | jobs/s | client ops/s |")
    print("| --- | ---: | ---: | ---: |")
    for w in range(full):
        span = f"{w * WINDOW:.0f}-{(w + 1) * WINDOW:.0f} s"
        print(f"| {span} | {jobs[w]} | {jobs[w] / WINDOW:.1f} | {ops[w] / WINDOW:.1f} |")
    print("\n| at | hot tables (ai) MB | archive (ai_archive) MB | pending jobs |")
    print("| --- | ---: | ---: | ---: |")
    for i, s in enumerate(samples):
        at = "end (all stopped)" if i == len(samples) - 1 else f"{s['t']:.0f} s"
        print(f"| {at} | {s['ai'] / 1e6:.1f} | {s['archive'] / 1e6:.1f} | {s['pending']} |")
    print("\n| worker | RSS start MB | RSS warm MB | RSS end MB | completed | failed |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for _, index, _, rss, n_completed, n_failed in sorted(workers, key=lambda x: x[1]):
        warm = rss.get("warm", rss["end"])
        print(f"| {index} | {rss['start']:.1f} | {warm:.1f} | {rss['end']:.1f} | {n_completed} | {n_failed} |")
    print("\n| hot table at the end | total MB | live rows | dead rows | autovacuums |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, total, live, dead, vacuums in admin.execute(
        """select relname, pg_total_relation_size(relid), n_live_tup, n_dead_tup, autovacuum_count
           from pg_stat_all_tables where schemaname = 'ai' and pg_total_relation_size(relid) > 1000000
           order by 2 desc"""
    ).fetchall():
        print(f"| {name} | {total / 1e6:.1f} | {live} | {dead} | {vacuums} |")
    print(
        f"\nretention: {archived['sessions']} sessions and {archived['jobs']} jobs archived, "
        f"{archived['purged']} archived jobs purged"
    )

    # nothing fired twice, nothing lost: one finished side effect per completed job, hot + archived
    effects = admin.execute(
        """select count(*), count(distinct (thread_id, idempotency_key)) from (
             select thread_id, idempotency_key from ai.side_effects where status = 'done' and thread_id like 'soak-%'
             union all
             select thread_id, idempotency_key from ai_archive.side_effects
             where status = 'done' and thread_id like 'soak-%') e"""
    ).fetchone()
    completed = sum(w[4] for w in workers)
    messages = admin.execute(
        """select count(*) from (
             select 1 from ai.session_messages where role = 'assistant' and thread_id like 'soak-%'
             union all
             select 1 from ai_archive.session_messages where role = 'assistant' and thread_id like 'soak-%') m"""
    ).fetchone()[0]  # type: ignore[index]
    print(f"worker messages (one per job, hot + archived): {messages}")
    print(f"jobs completed by the workers: {completed}; side effects done: {effects[0]} ({effects[1]} distinct keys)")  # type: ignore[index]
    failures = []
    rates = [jobs[w] for w in range(1, full)]
    if rates:
        median = statistics.median(rates)
        low = [w for w in range(1, full) if jobs[w] < 0.7 * median]
        if median == 0 or low:
            failures.append(f"throughput not flat: windows {low} below 0.7x the median {median}")
    hot = [s["ai"] for s in samples]
    if len(hot) >= 3 and hot[-1] > 1.5 * hot[1] + 8e6:
        failures.append(f"hot tables grew from {hot[1] / 1e6:.1f} MB to {hot[-1] / 1e6:.1f} MB")
    for _, index, _, rss, _, _ in workers:
        if rss["end"] > rss.get("warm", rss["end"]) + 20:
            failures.append(f"worker {index} RSS grew from {rss['warm']:.1f} MB to {rss['end']:.1f} MB")
    if effects[0] != effects[1]:  # type: ignore[index]
        failures.append("a side effect was recorded twice")
    if effects[0] < completed:  # type: ignore[index]
        failures.append(f"{completed - effects[0]} completed jobs have no finished side effect")  # type: ignore[index]
    if messages != completed:
        failures.append(f"{messages} worker messages for {completed} completed jobs")
    if sum(w[5] for w in workers):
        failures.append(f"{sum(w[5] for w in workers)} jobs failed")
    print("\nverdict: " + ("ok" if not failures else "FAILED: " + "; ".join(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
