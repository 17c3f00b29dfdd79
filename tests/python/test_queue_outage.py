"""A database outage longer than a lease does not rerun a finished job (issue 41, item 2).

A worker runs a job under a short lease; the server goes down (``pg_ctl stop -m immediate``)
while the handler runs, stays down until the lease has ended on the database's clock, and comes
back. The handler returned while the server was down. Before, the worker gave up the completion
at half the lease, and the lease, measured on a clock that ran through the outage, was over when
the server came back: the next claim ran the job again. Now the worker sends the completion
until the database answers, and a lease renewed before the server started holds for the first 30
seconds after the start (ai._lease_held): the job completes in its first attempt, and its
handler ran once.

Only this worktree's private cluster is stopped (pgserver.require_private_cluster). Bounded:
every wait is on a condition with a deadline, and the worker is always stopped.
"""

from __future__ import annotations

import asyncio
import subprocess
import threading
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from conftest import dsn_as
from pgserver import DATA, LOG, PGBIN, _as_owner, require_private_cluster, wait_until_up
from psycopg_pool import AsyncConnectionPool, ConnectionPool
from waiting import wait_until

from agent_state import AsyncJobContext, AsyncWorker, Client, Job, JobContext, Worker
from agent_state.client import CONNECT_KWARGS

pytestmark = pytest.mark.session_features("stops and starts the server itself")

LEASE = timedelta(seconds=2)


def _stop_immediate() -> None:
    pg_ctl = [str(PGBIN / "pg_ctl"), "-D", str(DATA), "-l", str(LOG), "-w", "-t", "60"]
    subprocess.run(_as_owner(*pg_ctl, "-m", "immediate", "stop"), check=True, stdout=subprocess.DEVNULL)


def _start(dsn: str) -> None:
    pg_ctl = [str(PGBIN / "pg_ctl"), "-D", str(DATA), "-l", str(LOG), "-w", "-t", "60"]
    subprocess.run(_as_owner(*pg_ctl, "start"), check=True, stdout=subprocess.DEVNULL)
    wait_until_up(dsn)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_outage_longer_than_the_lease_does_not_run_a_finished_job_again(direct_dsn: str, mode: str) -> None:
    require_private_cluster(direct_dsn)
    service = dsn_as(direct_dsn, "app_service")
    queue = f"outage-{uuid.uuid4().hex[:12]}"
    with psycopg.connect(service, autocommit=True) as conn:
        client = Client(conn)
        thread = client.create_session(f"outage-{uuid.uuid4()}").thread_id
        job_id = client.enqueue_job(thread, {"n": 1}, queue=queue).job_id

    runs: list[int] = []
    started, release = threading.Event(), threading.Event()
    options: dict[str, Any] = {
        "queue": queue,
        "concurrency": 1,
        "lease": LEASE,
        "poll_interval": 0.2,
        "max_backoff": 0.5,
    }
    stats: list[Any] = []

    def handler(job: Job, ctx: JobContext) -> Any:
        runs.append(job.fencing_token)
        started.set()
        release.wait(60)
        return {"done": True}

    async def ahandler(job: Job, ctx: AsyncJobContext) -> Any:
        runs.append(job.fencing_token)
        started.set()
        await asyncio.to_thread(release.wait, 60)
        return {"done": True}

    stop = threading.Event()

    def run() -> None:
        if mode == "sync":
            with ConnectionPool(service, kwargs=CONNECT_KWARGS, min_size=2, max_size=6, open=True) as pool:
                worker = Worker(pool, handler, **options)
                threading.Thread(target=lambda: (stop.wait(), worker.stop()), daemon=True).start()
                stats.append(worker.run(install_signal_handlers=False))
            return

        async def arun() -> None:
            async with AsyncConnectionPool(service, kwargs=CONNECT_KWARGS, min_size=2, max_size=6, open=False) as pool:
                worker = AsyncWorker(pool, ahandler, **options)
                loop = asyncio.get_running_loop()
                threading.Thread(
                    target=lambda: (stop.wait(), loop.call_soon_threadsafe(worker.stop)), daemon=True
                ).start()
                stats.append(await worker.run(install_signal_handlers=False))

        asyncio.run(arun())

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    stopped = False
    try:
        assert started.wait(30), "the worker took the job"
        with psycopg.connect(direct_dsn, autocommit=True) as admin:
            row = admin.execute("select lease_expires_at from ai.agent_jobs where job_id = %s", (job_id,)).fetchone()
        assert row is not None
        _stop_immediate()
        stopped = True
        release.set()  # the handler returns while nobody can reach the database
        # down until the lease has ended on the clock the database will read when it is back
        wait_until(lambda: datetime.now(timezone.utc) > row[0] + timedelta(seconds=1), "the lease ended", timeout=30)
        _start(direct_dsn)
        stopped = False
        with psycopg.connect(direct_dsn, autocommit=True) as admin:

            def status() -> str | None:
                found = admin.execute("select status from ai.agent_jobs where job_id = %s", (job_id,)).fetchone()
                return found[0] if found and found[0] != "IN_PROGRESS" else None

            assert wait_until(status, "the job finished", timeout=60) == "COMPLETED"
            attempts = admin.execute(
                "select attempts, (select count(*) from ai.job_attempts(%s)) from ai.agent_jobs where job_id = %s",
                (job_id, job_id),
            ).fetchone()
        assert attempts == (1, 1), "completed in its first attempt, the only one"
        assert runs == [1], "the handler ran once"
    finally:
        release.set()
        if stopped:
            _start(direct_dsn)
        stop.set()
        runner.join(60)
        assert not runner.is_alive(), "the worker stopped"
    assert (stats[0].completed, stats[0].lost) == (1, 0)
