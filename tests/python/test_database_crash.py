"""Database crash (issue 11, "then prove it"): a mixed load (worker processes running fenced jobs,
appends, checkpoints with blobs, enqueues) while the postmaster is SIGKILLed three times, each
time at a different point: during an append, during a checkpoint, and while a worker holds a
fenced transaction open. Afterwards:

- every acknowledged write is there (messages, checkpoints with every blob, enqueued jobs);
- nothing is half-written: each thread's messages are gapless and in order, every checkpoint
  present has all its blobs, byte for byte;
- each job's side effect (written through ``ctx.fenced()``) happened once, under its final token;
- the worker processes started before the first kill are the ones that finish the work: they
  reconnected by themselves (no respawn), and the clients reconnected through ``RetryPolicy``.

Only this worktree's private cluster is ever killed (pgserver.require_private_cluster). Bounded:
every wait has a deadline, the whole run gives up after DB_CRASH_TEST_SECONDS (default 100), and
the worker processes are always stopped.
"""

from __future__ import annotations

import hashlib
import os
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
import pytest
from conftest import dsn_as
from pgserver import kill_postmaster_and_start, require_private_cluster

from agent_state import ChannelValue, Client, RetryPolicy

HERE = Path(__file__).resolve().parent
DEADLINE = float(os.environ.get("DB_CRASH_TEST_SECONDS", "100"))
# Long enough for a restart with crash recovery; a client gives up a call after about 30 s.
PATIENT = RetryPolicy(attempts=100, first_delay=0.05, max_delay=0.3)

pytestmark = pytest.mark.session_features("kills and restarts the server itself")


@dataclass
class Load:
    """What the load threads were told was done (acknowledged) and how often they had to wait."""

    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    messages: dict[str, int] = field(default_factory=dict)  # thread -> messages acknowledged
    checkpoints: dict[tuple[str, str], list[bytes]] = field(default_factory=dict)  # (thread, id) -> blobs
    jobs: list[int] = field(default_factory=list)
    gave_up: int = 0  # calls whose retries ran out; each is tried again with the same key
    failures: list[BaseException] = field(default_factory=list)

    def progress(self) -> int:
        with self.lock:
            return sum(self.messages.values()) + len(self.checkpoints) + len(self.jobs)


def _appender(tenant: str, load: Load) -> None:
    client = Client(psycopg.connect(tenant, autocommit=True), retry=PATIENT)
    thread = f"dbc-m-{uuid.uuid4()}"
    client.create_session(thread)
    with load.lock:
        load.messages[thread] = 0
    i = 0
    while not load.stop.is_set():
        try:
            client.append_message(thread, "user", {"i": i, "pad": "m" * 300}, idempotency_key=f"m{i}")
        except psycopg.OperationalError:
            with load.lock:
                load.gave_up += 1
            continue  # the same message again: idempotent
        i += 1
        with load.lock:
            load.messages[thread] = i


def _blob(thread: str, n: int, channel: str) -> bytes:
    return hashlib.sha256(f"{thread}/{n}/{channel}".encode()).digest() * 64  # 2 KiB each


def _checkpointer(tenant: str, load: Load) -> None:
    client = Client(psycopg.connect(tenant, autocommit=True), retry=PATIENT)
    thread, suffix = f"dbc-c-{uuid.uuid4()}", uuid.uuid4().hex[:8]
    n, parent = 0, None
    while not load.stop.is_set():
        checkpoint_id = f"{n:08d}-{suffix}"
        channels = ["a", "b", "c"]
        values = [ChannelValue(c, f"{n:08d}", "bytes", _blob(thread, n, c)) for c in channels]
        try:
            client.put_checkpoint(
                thread, "", checkpoint_id, parent, "bytes", f"cp{n}".encode(), {"n": n},
                {c: f"{n:08d}" for c in channels}, values,
            )  # fmt: skip
        except psycopg.OperationalError:
            with load.lock:
                load.gave_up += 1
            continue  # the same id again: idempotent
        with load.lock:
            load.checkpoints[(thread, checkpoint_id)] = [v.blob for v in values if v.blob is not None]
        n, parent = n + 1, checkpoint_id


def _enqueuer(tenant: str, queue: str, load: Load) -> None:
    client = Client(psycopg.connect(tenant, autocommit=True), retry=PATIENT)
    threads = [f"dbc-q-{uuid.uuid4()}" for _ in range(20)]
    for t in threads:
        client.create_session(t)
    i = 0
    while not load.stop.is_set():
        try:
            job = client.enqueue_job(threads[i % 20], {"n": i}, queue=queue, max_attempts=1000, idempotency_key=f"j{i}")
        except psycopg.OperationalError:
            with load.lock:
                load.gave_up += 1
            continue
        i += 1
        with load.lock:
            load.jobs.append(job.job_id)
        time.sleep(0.002)  # a steady trickle, so jobs are in flight at every kill


def _guarded(target: Callable[..., None], load: Load, *args: Any) -> threading.Thread:
    def run() -> None:
        try:
            target(*args, load)
        except BaseException as error:  # the test fails on it; the other threads stop
            load.failures.append(error)
            load.stop.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _spawn(service: str, queue: str, table: str, logdir: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "python"), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, str(HERE / "queue_crash_worker.py"), service, queue, table, str(logdir)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(logdir / f"worker-{uuid.uuid4().hex[:6]}.err", "wb"),
    )


# Where each kill lands: a backend of the load seen running that statement (pg_stat_activity).
POINTS = {
    "append": "state = 'active' and query like '%ai.append_message_idempotent%'",
    "checkpoint": "state = 'active' and query like '%ai.put_checkpoint%'",
    "fenced transaction": "state like 'idle in transaction%' and usename = 'app_service'",
}


def _wait_for_point(dsn: str, where: str, deadline: float) -> bool:
    with psycopg.connect(dsn, autocommit=True) as admin:
        while time.monotonic() < deadline:
            row = admin.execute(f"select count(*) from pg_stat_activity where {where}").fetchone()
            if row is not None and row[0] > 0:
                return True
            time.sleep(0.001)
    return False


def _wait(condition: Callable[[], bool], deadline: float) -> bool:
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_postmaster_sigkill_under_mixed_load_loses_no_acknowledged_write(dsn: str, tmp_path: Path) -> None:
    require_private_cluster(dsn)
    start = time.monotonic()
    deadline = start + DEADLINE
    queue, table = f"dbc-{uuid.uuid4().hex[:8]}", f"dbc_effects_{uuid.uuid4().hex[:8]}"
    tenant, service = dsn_as(dsn, "tenant_a"), dsn_as(dsn, "app_service")
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"create table public.{table} (job_id bigint not null, token bigint not null, pid int not null)")
        admin.execute(f"grant insert, select on public.{table} to app_service")

    load = Load()
    workers = [_spawn(service, queue, table, tmp_path) for _ in range(2)]
    pids = [w.pid for w in workers]
    threads = [_guarded(_appender, load, tenant) for _ in range(3)]
    threads += [_guarded(_checkpointer, load, tenant) for _ in range(2)]
    threads.append(_guarded(_enqueuer, load, tenant, queue))
    kills: list[tuple[str, bool]] = []
    try:
        for point, where in POINTS.items():
            before = load.progress()
            # the load moved on since the last restart (every client is back), then the point
            assert _wait(lambda before=before: load.progress() >= before + 30, deadline), "the load went on"
            kills.append((point, _wait_for_point(dsn, where, min(deadline, time.monotonic() + 15))))
            kill_postmaster_and_start(dsn, timeout=max(5.0, deadline - time.monotonic()))
        after_last = load.progress()
        with load.lock:
            jobs_before_end = len(load.jobs)
        assert _wait(lambda: load.progress() >= after_last + 60, deadline), "the load went on after the last kill"
        assert _wait(lambda: len(load.jobs) > jobs_before_end + 10, deadline), "enqueued after the last kill"
        load.stop.set()
        for t in threads:
            t.join(max(1.0, deadline - time.monotonic()))
        assert not load.failures, load.failures

        with psycopg.connect(dsn, autocommit=True) as admin:  # the superuser reads the tables

            def all_completed() -> bool:
                row = admin.execute(
                    "select count(*) filter (where status = 'COMPLETED'), count(*) from ai.agent_jobs where queue = %s",
                    (queue,),
                ).fetchone()
                return row is not None and row[0] == row[1]

            assert _wait(all_completed, deadline), f"every job completed within {DEADLINE} s"
            alive = [w.poll() is None for w in workers]
            jobs = {
                r[0]: r[1:]
                for r in admin.execute(
                    "select job_id, status, fencing_token, result from ai.agent_jobs where queue = %s", (queue,)
                )
            }
            effects = admin.execute(f"select job_id, token, pid from public.{table}").fetchall()
            messages = {
                t: admin.execute(
                    "select seq, content from ai.session_messages where thread_id = %s order by seq", (t,)
                ).fetchall()
                for t in load.messages
            }
            checkpoint_threads = {t for t, _ in load.checkpoints}
            stored: dict[tuple[str, str], Any] = {}
            for t in checkpoint_threads:
                ids = [
                    r[0] for r in admin.execute("select checkpoint_id from ai.checkpoints where thread_id = %s", (t,))
                ]
                for cid in ids:
                    stored[(t, cid)] = admin.execute(
                        "select b.channel, b.blob from ai.checkpoints c"
                        " join lateral jsonb_each_text(c.channel_versions) v(channel, version) on true"
                        " left join ai.checkpoint_blobs b on b.thread_id = c.thread_id"
                        "  and b.checkpoint_ns = c.checkpoint_ns and b.channel = v.channel and b.version = v.version"
                        " where c.thread_id = %s and c.checkpoint_id = %s order by v.channel",
                        (t, cid),
                    ).fetchall()
    finally:
        load.stop.set()
        for w in workers:
            if w.poll() is None:
                w.send_signal(signal.SIGTERM)
        for w in workers:
            try:
                w.wait(15)
            except subprocess.TimeoutExpired:
                w.kill()
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f"drop table if exists public.{table}")

    assert [k for k, _ in kills] == list(POINTS), "three kills"
    assert sum(seen for _, seen in kills) >= 2, f"most kills landed on their point: {kills}"
    assert all(alive) and [w.pid for w in workers] == pids, "the first workers finished the work themselves"

    # every acknowledged message, gapless and in order (nothing half-written, nothing reordered)
    for thread, acked in load.messages.items():
        rows = messages[thread]
        assert len(rows) in (acked, acked + 1), "acknowledged messages kept (one more: committed, unanswered)"
        assert [seq for seq, _ in rows] == list(range(1, len(rows) + 1))
        assert [content["i"] for _, content in rows] == list(range(len(rows)))

    # every acknowledged checkpoint with all its blobs; every stored one complete
    for key, blobs in load.checkpoints.items():
        assert key in stored, f"acknowledged checkpoint {key} kept"
        assert [bytes(b) for _, b in stored[key]] == blobs
    for key, rows in stored.items():
        assert all(b is not None for _, b in rows), f"checkpoint {key} has every blob"

    # every acknowledged job completed, its side effect once, under its final token
    assert set(load.jobs) <= set(jobs)
    assert all(status == "COMPLETED" for status, _, _ in jobs.values())
    per_job: dict[int, list[tuple[int, int]]] = {}
    for job_id, token, pid in effects:
        per_job.setdefault(job_id, []).append((token, pid))
    assert sorted(per_job) == sorted(jobs), "a side effect for every job"
    doubles = {j: rows for j, rows in per_job.items() if len(rows) != 1}
    assert not doubles, f"side effects that happened twice: {list(doubles.items())[:5]}"
    for job_id, [(token, pid)] in per_job.items():
        assert token == jobs[job_id][1] and jobs[job_id][2] == {"pid": pid}
    print(
        f"\ndatabase crash: {len(kills)} kills {kills}, {sum(load.messages.values())} messages,"
        f" {len(load.checkpoints)} checkpoints, {len(jobs)} jobs acknowledged; {load.gave_up} calls"
        f" outlived their retries; {time.monotonic() - start:.1f} s"
    )
