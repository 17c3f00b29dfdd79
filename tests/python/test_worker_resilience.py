"""Worker and AsyncWorker survive any database error in their loops (claim, renew, complete,
listen): each is logged, the loop backs off and goes on, and every job still completes once.
Issue 11, item 3: behind a transaction pooler ``_claim_loop`` caught only OperationalError, and
the 26000 / 08P01 / 42P05 it got there killed the worker in every process.

The errors are injected in front of the real client (a proxy raising a scripted list of psycopg
errors before it lets calls through); the database behind is real. A handler waits for a
condition (a renewal that went through), never for a time, and the database clock of the
worker's pool is frozen (waiting.DatabaseClock): however late the renewals that the faults delay,
no lease ends. The lease only sets the pace (a renewal every third of it) and the time the
worker keeps retrying a completion (half of it), which is generous next to the few backoffs."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from psycopg import errors as pg
from psycopg_pool import AsyncConnectionPool, ConnectionPool
from waiting import DatabaseClock

from agent_state import AsyncJobContext, AsyncWorker, Client, Job, JobContext, Worker


def _errors() -> list[Exception]:
    """One of each kind the issue saw, and worse."""
    return [
        pg.InvalidSqlStatementName('prepared statement "_pg3_0" does not exist'),
        pg.DuplicatePreparedStatement('prepared statement "_pg3_0" already exists'),
        pg.ProtocolViolation("bind message supplies 3 parameters, but prepared statement requires 4"),
        pg.AdminShutdown("terminating connection due to administrator command"),
        psycopg.OperationalError("consuming input failed: server closed the connection unexpectedly"),
        pg.InternalError_("cache lookup failed"),
        RuntimeError("not even a database error"),
    ]


#: a completion goes by complete_jobs, or with the next claim by complete_and_claim: one fault list
SAME_FAULTS = {"complete_and_claim": "complete_jobs"}


class Faulty:
    """The client, except that the named methods first raise the listed errors, one per call (a
    method of SAME_FAULTS takes them from its family's list)."""

    def __init__(self, client: Any, faults: dict[str, list[Exception]]):
        self._client = client
        self.faults = faults
        self.raised: dict[str, int] = dict.fromkeys(faults, 0)
        self.passed: dict[str, int] = dict.fromkeys(faults, 0)
        self.renewed = threading.Event()
        self._lock = threading.Lock()

    def _next_fault(self, name: str) -> Exception | None:
        with self._lock:
            if self.faults[name]:
                self.raised[name] += 1
                return self.faults[name].pop(0)
            self.passed[name] += 1
            return None

    def _passed(self, name: str) -> None:
        if name == "renew_leases":
            self.renewed.set()

    def __getattr__(self, method: str) -> Any:
        attr = getattr(self._client, method)
        name = SAME_FAULTS.get(method, method)
        if name not in self.faults:
            return attr
        if asyncio.iscoroutinefunction(attr):

            async def acall(*args: Any, **kwargs: Any) -> Any:
                fault = self._next_fault(name)
                if fault is not None:
                    raise fault
                out = await attr(*args, **kwargs)
                self._passed(name)
                return out

            return acall

        def call(*args: Any, **kwargs: Any) -> Any:
            fault = self._next_fault(name)
            if fault is not None:
                raise fault
            out = attr(*args, **kwargs)
            self._passed(name)
            return out

        return call


@pytest.fixture
def service(role_dsn: Callable[[str], str]) -> str:
    return role_dsn("app_service")


def _enqueue(service: str, queue: str, n: int) -> list[int]:
    with psycopg.connect(service, autocommit=True) as conn:
        client = Client(conn)
        thread = f"res-{uuid.uuid4()}"
        client.create_session(thread)
        return [client.enqueue_job(thread, {"n": i}, queue=queue).job_id for i in range(n)]


def _statuses(service: str, ids: list[int]) -> list[str]:
    with psycopg.connect(service, autocommit=True) as conn:
        client = Client(conn)
        return [client.get_job(i).status for i in ids]


def _dead_socket(tmp: Any) -> str:
    return f"host={tmp} port=1 dbname=nowhere connect_timeout=1"  # nothing listens there


# Renewals every 4 s of real time; a completion is retried for 6 s, for under a second of backoffs.
LEASE = timedelta(seconds=12)


def _frozen_clock() -> DatabaseClock:
    return DatabaseClock(datetime.now(timezone.utc) + timedelta(minutes=1))  # after every run_at


@pytest.mark.session_features("the frozen clock ai.frozen_now, set on every connection of the worker's pool")
def test_worker_survives_any_error_in_every_loop(service: str, tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    queue = f"res-{uuid.uuid4().hex[:8]}"
    ids = _enqueue(service, queue, 12)
    caplog.set_level(logging.WARNING, logger="agent_state.worker")

    clock = _frozen_clock()
    with ConnectionPool(
        service, min_size=1, max_size=6, kwargs={"autocommit": True}, check=clock.check, open=True
    ) as pool:
        holder: dict[str, Faulty] = {}

        def handler(job: Job, ctx: JobContext) -> int:
            if job.job_id == ids[0]:  # holds its job until a renewal got through the faults
                assert holder["faulty"].renewed.wait(60), "a renewal got through the faults"
            return job.job_id

        worker = Worker(
            pool,
            handler,
            queue,
            concurrency=2,
            lease=LEASE,
            poll_interval=0.05,
            listen_conninfo=_dead_socket(tmp_path),
            max_backoff=0.2,
        )
        faulty = holder["faulty"] = Faulty(
            worker.client,
            {"claim_jobs": _errors(), "renew_leases": _errors()[:4], "complete_jobs": _errors()[:3]},
        )
        worker.client = faulty  # type: ignore[assignment]
        thread = threading.Thread(target=worker.run, kwargs={"drain": True, "install_signal_handlers": False})
        thread.start()
        thread.join(120)
        alive = thread.is_alive()
        if alive:
            worker.stop()
            thread.join(30)

    assert not alive, "the worker kept running through the errors and drained the queue"
    assert faulty.raised == {"claim_jobs": 7, "renew_leases": 4, "complete_jobs": 3}, "every fault was hit"
    assert _statuses(service, ids) == ["COMPLETED"] * len(ids)
    assert worker.stats.completed == len(ids) and worker.stats.lost == 0
    logged = " ".join(r.getMessage() for r in caplog.records)
    for what in ("claim_jobs failed", "renew_leases failed", "complete_jobs failed", "LISTEN failed"):
        assert what in logged


@pytest.mark.session_features("the frozen clock ai.frozen_now, set on every connection of the worker's pool")
def test_async_worker_survives_any_error_in_every_loop(
    service: str, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    queue = f"ares-{uuid.uuid4().hex[:8]}"
    ids = _enqueue(service, queue, 12)
    caplog.set_level(logging.WARNING, logger="agent_state.worker")

    async def main() -> tuple[AsyncWorker, Faulty]:
        clock = _frozen_clock()
        async with AsyncConnectionPool(
            service, min_size=1, max_size=6, kwargs={"autocommit": True}, check=clock.acheck
        ) as pool:
            holder: dict[str, Faulty] = {}

            async def handler(job: Job, ctx: AsyncJobContext) -> int:
                if job.job_id == ids[0]:
                    while not holder["faulty"].renewed.is_set():  # bounded by the wait_for below
                        await asyncio.sleep(0.01)
                return job.job_id

            worker = AsyncWorker(
                pool,
                handler,
                queue,
                concurrency=2,
                lease=LEASE,
                poll_interval=0.05,
                listen_conninfo=_dead_socket(tmp_path),
                max_backoff=0.2,
            )
            faulty = holder["faulty"] = Faulty(
                worker.client,
                {"claim_jobs": _errors(), "renew_leases": _errors()[:4], "complete_jobs": _errors()[:3]},
            )
            worker.client = faulty  # type: ignore[assignment]
            await asyncio.wait_for(worker.run(drain=True, install_signal_handlers=False), 120)
            return worker, faulty

    worker, faulty = asyncio.run(main())
    assert faulty.raised == {"claim_jobs": 7, "renew_leases": 4, "complete_jobs": 3}
    assert _statuses(service, ids) == ["COMPLETED"] * len(ids)
    assert worker.stats.completed == len(ids) and worker.stats.lost == 0
    logged = " ".join(r.getMessage() for r in caplog.records)
    for what in ("claim_jobs failed", "renew_leases failed", "complete_jobs failed", "LISTEN failed"):
        assert what in logged


SIGTERM_WHILE_WAITING = """
import signal, threading
from agent_state.worker import _install_signals

wake = threading.Event()
_install_signals(wake.set)
with wake._cond:  # the main thread inside Event.wait, where the claim loop spends its time
    signal.raise_signal(signal.SIGTERM)
assert wake.wait(10), "stop was never called"
print("stopped")
"""


def test_sigterm_stops_the_sync_worker_while_its_main_thread_holds_the_wake_up_lock() -> None:
    """The handler runs in the main thread, which may hold the lock inside the wake-up Event; were
    it to call Event.set itself, it would wait for its own thread forever (seen in a fresh-clone run:
    test_cli.py's worker did not stop within 60 s of SIGTERM)."""
    done = subprocess.run([sys.executable, "-c", SIGTERM_WHILE_WAITING], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "stopped"), done.stderr
