"""A dead worker's jobs are taken over within 2 s of its death, whatever the lease, and never
those of a worker that is alive but slow (issue 41, item 7).

A worker process holds a job under a one-hour lease while another worker (in this process, busy
with a stream of other jobs) runs the queue. SIGKILL: the killed process's connections go, its
liveness hold (ai.hold_worker_liveness) with them, and the other worker's next claim takes the job
over; the time from the kill to the job's new holder is measured on conditions (the database polled
every few milliseconds), not on sleeps. SIGSTOP: the stopped process keeps its connections and its
hold; the other worker claims and finishes a stream of jobs meanwhile, each claim with room to
spare (so each looked for dead workers), and the stopped worker's job keeps its holder and token.
Before, the job waited out the hour.

Bounded: every wait has a deadline, and the worker processes are always killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import dsn_as
from psycopg_pool import ConnectionPool
from waiting import wait_until

from agent_state import Client, Job, JobContext, Worker
from agent_state.client import CONNECT_KWARGS

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.session_features("worker processes that hold session advisory locks")


@pytest.fixture
def service(direct_dsn: str) -> str:
    return dsn_as(direct_dsn, "app_service")


@pytest.fixture
def admin(direct_dsn: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(direct_dsn, autocommit=True) as conn:
        yield conn


def _spawn(service: str, queue: str, worker_id: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "python"), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, str(HERE / "queue_dead_worker.py"), service, queue, worker_id],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _holder(admin: psycopg.Connection[Any], job_id: int) -> tuple[str | None, int]:
    row = admin.execute("select lease_owner, fencing_token from ai.agent_jobs where job_id = %s", (job_id,)).fetchone()
    assert row is not None
    return row[0], row[1]


def _live(admin: psycopg.Connection[Any], worker_id: str) -> bool:
    row = admin.execute("select live from ai.queue_workers where worker_id = %s", (worker_id,)).fetchone()
    return bool(row and row[0])


class Rival:
    """A worker in this process on the same queue: short handlers, a one-hour lease too."""

    def __init__(self, service: str, queue: str) -> None:
        self.done: list[int] = []
        self.pool = ConnectionPool(service, kwargs=CONNECT_KWARGS, min_size=2, max_size=8, open=True)
        self.worker = Worker(
            self.pool,
            self._handle,
            queue,
            concurrency=4,
            lease=timedelta(hours=1),
            worker_id=f"rival-{uuid.uuid4()}",
            poll_interval=0.1,
        )
        self.thread = threading.Thread(target=lambda: self.worker.run(install_signal_handlers=False), daemon=True)
        self.thread.start()

    def _handle(self, job: Job, ctx: JobContext) -> Any:
        self.done.append(job.job_id)
        return {"by": "rival"}

    def close(self) -> None:
        self.worker.stop()
        self.thread.join(60)
        self.pool.close()
        assert not self.thread.is_alive()


def _setup(service: str, queue: str, jobs: int) -> tuple[Client, psycopg.Connection[Any], list[int]]:
    conn = psycopg.connect(service, autocommit=True)
    # In the first 30 seconds after the server started, the leases alone decide (the workers take
    # their holds again): a server another test restarted just now must be past that.
    wait_until(
        lambda: conn.execute("select now() - pg_postmaster_start_time() > interval '31 seconds'").fetchone() == (True,),
        "the server started more than 30 seconds ago",
        timeout=60,
    )
    client = Client(conn)
    ids = []
    for _ in range(jobs):
        thread = client.create_session(f"dead-{uuid.uuid4()}").thread_id
        ids.append(client.enqueue_job(thread, queue=queue).job_id)
    return client, conn, ids


def test_a_sigkilled_workers_job_is_taken_over_within_two_seconds(service: str, admin: psycopg.Connection[Any]) -> None:
    queue, victim_id = f"dead-{uuid.uuid4().hex[:12]}", f"victim-{uuid.uuid4()}"
    client, conn, (job_id,) = _setup(service, queue, 1)
    victim = _spawn(service, queue, victim_id)
    rival = None
    try:
        wait_until(
            lambda: _holder(admin, job_id)[0] == victim_id and _live(admin, victim_id), "the victim holds the job"
        )
        token = _holder(admin, job_id)[1]
        rival = Rival(service, queue)
        load = [
            client.enqueue_job(client.create_session(f"dead-{uuid.uuid4()}").thread_id, queue=queue).job_id
            for _ in range(20)
        ]
        wait_until(lambda: len(rival.done) >= 5, "the rival is busy with the load")
        victim.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        victim.wait(30)
        wait_until(lambda: _holder(admin, job_id)[1] > token, "another worker took the job", interval=0.005)
        taken = time.monotonic() - killed
        owner = admin.execute("select worker from ai.job_attempts(%s) where attempt = 2", (job_id,)).fetchone()
        assert owner == (rival.worker.worker_id,)
        print(f"taken over {taken:.3f} s after the kill")
        assert taken < 2.0, f"taken over {taken:.2f} s after the kill"
        wait_until(lambda: set(load) | {job_id} <= set(rival.done), "the rival ran the load and the job")
        finished = wait_until(
            lambda: admin.execute(
                "select status, attempts from ai.agent_jobs where job_id = %s and status <> 'IN_PROGRESS'", (job_id,)
            ).fetchone(),
            "the rival finished the job",
        )
        assert finished == ("COMPLETED", 2)
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait(30)
        if rival is not None:
            rival.close()
        conn.close()


def test_a_stopped_worker_keeps_its_job_while_other_claims_go_on(service: str, admin: psycopg.Connection[Any]) -> None:
    queue, victim_id = f"dead-{uuid.uuid4().hex[:12]}", f"stopped-{uuid.uuid4()}"
    client, conn, (job_id,) = _setup(service, queue, 1)
    victim = _spawn(service, queue, victim_id)
    rival = None
    try:
        wait_until(
            lambda: _holder(admin, job_id)[0] == victim_id and _live(admin, victim_id), "the victim holds the job"
        )
        held = _holder(admin, job_id)
        victim.send_signal(signal.SIGSTOP)
        rival = Rival(service, queue)
        # a stream of jobs, one after another: each claim of the rival has room (4 slots, one job
        # at a time), so each looked for dead workers while the victim was stopped
        for _ in range(10):
            thread = client.create_session(f"dead-{uuid.uuid4()}").thread_id
            one = client.enqueue_job(thread, queue=queue).job_id
            wait_until(lambda one=one: one in rival.done, "the rival ran a job of the stream")
        assert _holder(admin, job_id) == held, "the stopped worker keeps its job, under its token"
        assert job_id not in rival.done
    finally:
        victim.kill()
        victim.wait(30)
        if rival is not None:
            rival.close()
        conn.close()
