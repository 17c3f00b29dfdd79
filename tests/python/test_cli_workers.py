"""`agent-state workers`, the console's workers page and the registry they read (issue 32, item 5): ai.list_workers over
ai.queue_workers, which the workers keep with the calls they make anyway (an empty claim is an idle
worker's heartbeat, a renewal a busy one's, the liveness hold says whether its process is there).

A real Worker process (queue_dead_worker.py: a handler that never returns) on a queue of its own:
idle, it is listed alive with no jobs; given a job, it is listed holding it and its thread; killed
with SIGKILL, its liveness connection goes and it turns stale (waited for on the condition, with
a deadline). The console's /workers page shows the same. A tenant is refused the list: a worker's
holdings span tenants.

Bounded: every wait has a deadline, and the worker process is always killed."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import dsn_as
from console_http import Served, Visitor
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool
from test_cli import assert_error, run, run_json
from waiting import wait_until

from agent_state import AsyncJobContext, AsyncWorker, Client, Job
from agent_state.console import create_app

HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.session_features("a worker process that holds a session advisory lock")


@pytest.fixture
def service(direct_dsn: str) -> str:
    return dsn_as(direct_dsn, "app_service")


@pytest.fixture
def worker_process(service: str) -> Iterator[tuple[subprocess.Popen[bytes], str, str]]:
    tag = uuid.uuid4().hex[:8]
    queue, worker_id = f"workers-{tag}", f"cli-worker-{tag}"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "python"), env.get("PYTHONPATH", "")])
    process = subprocess.Popen(
        [sys.executable, str(HERE / "queue_dead_worker.py"), service, queue, worker_id],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield process, queue, worker_id
    finally:
        process.kill()
        process.wait(timeout=30)


def _listed(service: str, worker_id: str) -> dict[str, Any] | None:
    rows = run_json("workers", "--limit", "10000", dsn=service)
    return next((w for w in rows if w["worker"] == worker_id), None)


def test_an_idle_worker_is_alive_a_busy_one_shows_its_job_a_killed_one_turns_stale(
    worker_process: tuple[subprocess.Popen[bytes], str, str], service: str, role_dsn: Callable[[str], str]
) -> None:
    process, queue, worker_id = worker_process
    with (
        Served(create_app(service, auth="none")) as page_as_service,
        Served(create_app(role_dsn("tenant_a"), auth="none")) as page_as_tenant,
    ):
        _check(process, queue, worker_id, service, role_dsn, page_as_service.port, page_as_tenant.port)


def _page(port: int) -> str:
    visitor = Visitor(port)  # a new connection each time: a kept-alive one times out during the waits
    try:
        page = visitor.get("/workers")
    finally:
        visitor.close()
    assert page.status == 200, page.body[-300:]
    return page.body


def _row(port: int, worker_id: str) -> str:
    """The worker's row of the /workers page ('' when it is not there)."""
    page = _page(port)
    return next((row for row in page.split("<tr") if f"<td>{worker_id}</td>" in row), "")


def _check(
    process: subprocess.Popen[bytes],
    queue: str,
    worker_id: str,
    service: str,
    role_dsn: Callable[[str], str],
    console: int,
    tenant_console: int,
) -> None:
    idle = wait_until(
        lambda: (w := _listed(service, worker_id)) and w["liveness_held"] and w,
        "the idle worker is listed with its liveness hold",
    )
    assert idle["state"] == "alive" and idle["queue"] == queue and idle["jobs"] == 0 and idle["thread_ids"] == []
    assert idle["heard_at"] and idle["started_at"]
    text = run("workers", dsn=service)
    assert text.returncode == 0, text.stderr
    line = next(line for line in text.stdout.splitlines() if line.startswith(worker_id))
    assert "alive" in line and queue in line
    assert 'class="worker alive"' in _row(console, worker_id) and queue in _row(console, worker_id)
    assert "Not visible to this role" in _page(tenant_console)

    thread = f"workers-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as t:
        tenant = Client(t)
        tenant.create_session(thread)
        job = tenant.enqueue_job(thread, {}, queue=queue)
    busy = wait_until(lambda: (w := _listed(service, worker_id)) and w["jobs"] == 1 and w, "the worker holds the job")
    assert busy["job_ids"] == [job.job_id] and busy["thread_ids"] == [thread] and busy["state"] == "alive"

    # A tenant sees no worker (their holdings span tenants): one line, exit 2.
    assert_error(run("workers", dsn=role_dsn("tenant_a")), 2, "ai.list_workers is for ai_service")

    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    stale = wait_until(
        lambda: (w := _listed(service, worker_id)) and w["state"] == "stale" and w,
        "the killed worker is listed as stale",
    )
    assert not stale["liveness_held"]
    text = run("workers", dsn=service)
    assert next(line for line in text.stdout.splitlines() if line.startswith(worker_id)).split()[1] == "stale"
    assert 'class="worker stale"' in _row(console, worker_id) and thread in _row(console, worker_id)


def test_an_async_worker_keeps_the_registry_as_the_thread_worker_does(service: str) -> None:
    """AsyncWorker: the same SQL calls (claim_jobs, renew_leases, the liveness hold), so the same
    registry row: alive while idle, with its queue and hold; stopped after a clean stop."""
    tag = uuid.uuid4().hex[:8]
    queue, worker_id = f"workers-async-{tag}", f"cli-async-{tag}"

    async def job(job: Job, ctx: AsyncJobContext) -> None:
        return None

    def listed() -> dict[str, Any] | None:
        with psycopg.connect(service, autocommit=True, row_factory=dict_row) as conn:
            return conn.execute("select * from ai.list_workers(10000) where worker = %s", (worker_id,)).fetchone()

    async def run() -> None:
        async with AsyncConnectionPool(
            service, min_size=1, max_size=4, kwargs={"autocommit": True}, open=False
        ) as pool:
            worker = AsyncWorker(pool, job, queue, concurrency=1, poll_interval=0.05, worker_id=worker_id)
            task = asyncio.create_task(worker.run(install_signal_handlers=False))
            deadline = asyncio.get_running_loop().time() + 30
            while not ((w := await asyncio.to_thread(listed)) and w["liveness_held"] and w["queue"] == queue):
                assert asyncio.get_running_loop().time() < deadline, "the idle async worker was never listed"
                await asyncio.sleep(0.05)
            assert w["state"] == "alive" and w["jobs"] == 0
            worker.stop()
            await asyncio.wait_for(task, 30)

    asyncio.run(run())
    stopped = listed()
    assert stopped is not None and stopped["state"] == "stopped" and not stopped["liveness_held"]
