"""Workers: run the jobs of one queue with a handler, fenced, with leases kept alive.

The loop is short: claim, run, renew, finish. Every finish names the job's fencing token, so a
worker that lost its lease (paused, partitioned, too slow) writes nothing; the SQL functions
decide, this module only calls them.

- Claims wake on a NOTIFY on the queue's channel (``ai.queue_channel(queue)``, a keyed hash of
  the queue name that tenants cannot compute; the payload is empty) and poll every
  ``poll_interval`` as well (a notification is a hint; a lost one costs latency, never a job).
  Up to ``concurrency + prefetch`` jobs are held at once, claimed in batches with ``ai.claim_jobs``.
- Leases are renewed in the background about every third of the lease. When a renewal reports
  "lease lost", the job's context is marked lost: ``ctx.fenced()`` and ``ctx.complete()`` then
  refuse at once, and the handler can check ``ctx.lease_lost``.
- ``ctx.fenced()`` is a transaction that starts with ``ai.fenced_write``: writes made in it commit
  only if the job is still held when they commit (else the commit fails: LeaseLost). Completing the
  job inside it (``ctx.complete(result, conn)``) makes the writes and the completion one commit.
- A handler that returns completes the job with its return value (completions are sent in
  batches through ``ai.complete_jobs``); one that raises fails it (``ai.fail_job``, retried with
  backoff until its attempts are spent).
- ``stop()``, SIGTERM or SIGINT: stop claiming, let running handlers finish within
  ``grace_period``, then release what is left (``ai.release_job``: the attempt is not counted).
- No loop dies of a database error (claim, renew, complete, listen): any error is logged, the
  loop backs off (exponential, with jitter, capped at ``max_backoff``) and goes on; a broken
  connection is replaced by the pool. A server restart or failover costs latency, never the
  worker (docs/connections.md).
- Behind a transaction pooler (PgBouncer ``pool_mode=transaction``) nothing breaks: no statement is
  prepared server-side there (also not the handler's own statements in ``ctx.fenced()``), but LISTEN
  hears nothing there, so claims come from the poll alone. Give ``listen_conninfo`` a direct (or
  session-pooled) connection string to keep the wake-ups, or ``listen=False``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import queue as queue_module
import signal
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from . import errors
from .client import AsyncClient, Client, abehind_pooler, behind_pooler
from .models import Job
from .queue import DEFAULT_LEASE
from .retry import Backoff, is_connection_error
from .side_effects import side_effect as _side_effect

log = logging.getLogger("agent_state.worker")


T = TypeVar("T")

#: The most leases one ai.renew_leases statement renews (its limit is 1000).
RENEW_BATCH = 500


def _batches(items: list[T], size: int) -> list[list[T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _listen_statement(channel: str) -> sql.Composed:
    """LISTEN on the channel name ai.queue_channel returned (quoted as an identifier)."""
    return sql.SQL("listen {}").format(sql.Identifier(channel))


@dataclass
class WorkerStats:
    """What a worker did: jobs completed, failed, lost (lease lost before finishing), released and
    paused for a person (``ctx.request_human``)."""

    claimed: int = 0
    completed: int = 0
    failed: int = 0
    lost: int = 0
    released: int = 0
    paused: int = 0


def _default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident() % 100000}"


def _error_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:2000]


def _translated(error: psycopg.Error) -> Exception:
    return errors.translate(error)


def _log_failure(what: str, error: BaseException, delay: float) -> None:
    """A loop's database error: a lost connection is a warning (it comes back), anything else an
    error with its traceback. Either way the loop goes on after ``delay``."""
    if is_connection_error(error):
        log.warning("%s failed (%s: %s); again in %.2fs", what, type(error).__name__, error, delay)
    else:
        log.error("%s failed; again in %.2fs", what, delay, exc_info=error)


@contextmanager
def _unprepared(conn: psycopg.Connection[Any]) -> Iterator[psycopg.Connection[Any]]:
    """Behind a pooler, the connection with psycopg's automatic prepared statements off while the
    handler uses it (there they fail or run another client's statement); the owner's setting
    comes back afterwards. A direct connection is left as it is."""
    threshold = conn.prepare_threshold
    if behind_pooler(conn):
        conn.prepare_threshold = None
    try:
        yield conn
    finally:
        conn.prepare_threshold = threshold


@asynccontextmanager
async def _aunprepared(conn: psycopg.AsyncConnection[Any]) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    threshold = conn.prepare_threshold
    if await abehind_pooler(conn):
        conn.prepare_threshold = None
    try:
        yield conn
    finally:
        conn.prepare_threshold = threshold


def _listen_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {**kwargs, "autocommit": True, "prepare_threshold": None}


# -- sync -----------------------------------------------------------------------------------------


class JobContext:
    """What a handler gets besides the job: lease state and fenced writes."""

    def __init__(self, worker: Worker, job: Job):
        self.job = job
        self._worker = worker
        self._lost = threading.Event()
        self.finished = False
        self.paused = False  # request_human handed the job to a person
        self.running = False
        self.renewed_at = time.monotonic()

    @property
    def lease_lost(self) -> bool:
        """True once the worker knows the job is no longer held (renewal refused, released, cancelled)."""
        return self._lost.is_set()

    def check(self) -> None:
        """Raises :class:`~agent_state.LeaseLost` if the lease is known to be lost."""
        if self._lost.is_set():
            raise errors.LeaseLost(f"job {self.job.job_id}: lease lost", sqlstate="AS006")

    def _mark_lost(self, error: Exception) -> None:
        if isinstance(error, errors.LeaseLost):
            self._lost.set()

    @contextmanager
    def fenced(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection in a transaction that began with ``ai.fenced_write``; commits on exit.

        Raises LeaseLost (and writes nothing) when the job is no longer held."""
        self.check()
        try:
            with self._worker.pool.connection() as conn, conn.transaction():
                conn.execute("select ai.fenced_write(%s, %s)", (self.job.job_id, self.job.fencing_token), prepare=False)
                with _unprepared(conn):
                    yield conn
        except psycopg.Error as error:
            translated = _translated(error)
            self._mark_lost(translated)
            if translated is error:
                raise
            raise translated from error

    def complete(self, result: Any = None, conn: psycopg.Connection[Any] | None = None) -> None:
        """Completes the job now, inside ``conn`` (a ``fenced()`` transaction) when given."""
        self.check()
        try:
            client = Client(conn) if conn is not None else self._worker.client
            client.complete_job(self.job.job_id, self.job.fencing_token, result)
        except errors.LeaseLost as error:
            self._mark_lost(error)
            raise
        self.finished = True

    def side_effect(self, *key_parts: Any, request: Any = None) -> _side_effect:
        """The tool-call ledger for this claim: ``@ctx.side_effect("charge", user, amount)`` on a
        tool ``def charge(call): ...`` (or ``with ctx.side_effect(...) as call:``) runs it once per
        key in the thread, fenced on the job; a retry returns the recorded result. ``call.key``
        goes to downstream APIs; ``call.taken_over`` says a dead worker may have acted. See
        :mod:`agent_state.side_effects`."""
        self.check()
        return _side_effect(
            self._worker.client,
            self.job.thread_id,
            *key_parts,
            request=request,
            job_id=self.job.job_id,
            fencing_token=self.job.fencing_token,
            on_lease_lost=self._mark_lost,
        )

    def request_human(self, checkpoint_id: str, action: Any = None) -> str:
        """Pauses the job for a person (``ai.request_human``): it waits as AWAITING_HUMAN, this
        worker holds it no more, and whoever claims it after ``resolve_human`` finds the decision
        in ``job.payload["human"]``. The handler should return right after. Returns the approval id."""
        self.check()
        try:
            approval = self._worker.client.request_human(self.job.job_id, self.job.fencing_token, checkpoint_id, action)
        except errors.LeaseLost as error:
            self._mark_lost(error)
            raise
        self.finished = self.paused = True
        self._lost.set()  # nothing more may be written under this claim
        return approval

    def fail(self, error: str, retry_in: timedelta | None = None) -> None:
        """Fails the job now (retried after retry_in, or a backoff, while attempts remain)."""
        self.check()
        try:
            self._worker.client.fail_job(self.job.job_id, self.job.fencing_token, error, retry_in)
        except errors.LeaseLost as lost:
            self._mark_lost(lost)
            raise
        self.finished = True


Handler = Callable[[Job, JobContext], Any]


class Worker:
    """Runs ``handler(job, ctx)`` for the jobs of one queue, ``concurrency`` at a time, in threads.

    ``pool`` is a psycopg_pool ``ConnectionPool`` of a member of ai_service; it needs a connection
    per handler thread plus two (claims and completions), and the worker opens one more for LISTEN
    (to ``listen_conninfo`` when given, else to the pool's). Database errors in its loops are
    logged and retried after a backoff of at most ``max_backoff`` seconds.
    """

    def __init__(
        self,
        pool: ConnectionPool,
        handler: Handler,
        queue: str = "default",
        concurrency: int = 4,
        lease: timedelta = DEFAULT_LEASE,
        *,
        worker_id: str | None = None,
        prefetch: int | None = None,
        poll_interval: float = 1.0,
        grace_period: float = 10.0,
        listen: bool = True,
        listen_conninfo: str | None = None,
        max_backoff: float = 5.0,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.pool = pool
        self.client = Client(pool)
        self.handler = handler
        self.queue = queue
        self.concurrency = concurrency
        self.lease = lease
        self.worker_id = worker_id or _default_worker_id()
        self.capacity = concurrency + (concurrency if prefetch is None else prefetch)
        self.poll_interval = poll_interval
        self.grace_period = grace_period
        self.listen = listen
        self.listen_conninfo = listen_conninfo
        self.max_backoff = max_backoff
        self.stats = WorkerStats()
        self._held: dict[int, JobContext] = {}
        self._lock = threading.Lock()
        self._in_flight = 0  # claimed, handler not yet finished
        self._todo: queue_module.Queue[JobContext | None] = queue_module.Queue()
        self._done: queue_module.Queue[tuple[JobContext, Any] | None] = queue_module.Queue()
        self._wake = threading.Event()
        self._stopping = threading.Event()  # no more claims
        self._closed = threading.Event()  # renewals and LISTEN end too

    # -- control ----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop claiming; ``run`` then finishes or releases what it holds and returns."""
        self._stopping.set()
        self._wake.set()

    def run(self, *, drain: bool = False, install_signal_handlers: bool = True) -> WorkerStats:
        """Works until ``stop()`` (or SIGTERM/SIGINT); with ``drain``, also when nothing is left to claim."""
        previous = self._install_signals() if install_signal_handlers else {}
        threads = [
            threading.Thread(target=self._complete_loop, name="agent-state-complete", daemon=True),
            threading.Thread(target=self._renew_loop, name="agent-state-renew", daemon=True),
        ]
        if self.listen:
            threads.append(threading.Thread(target=self._listen_loop, name="agent-state-listen", daemon=True))
        executor = ThreadPoolExecutor(self.concurrency, thread_name_prefix="agent-state-handler")
        for _ in range(self.concurrency):
            executor.submit(self._handler_loop)
        for thread in threads:
            thread.start()
        try:
            self._claim_loop(drain)
        finally:
            self._stopping.set()
            self._shut_down()
            executor.shutdown(wait=False, cancel_futures=True)
            self._done.put(None)  # the completer flushes what is left, then ends
            threads[0].join(timeout=30)
            self._closed.set()
            for thread in threads[1:]:
                thread.join(timeout=5)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return self.stats

    def _install_signals(self) -> dict[int, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}
        previous = {}
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, lambda *_: self.stop())
        return previous

    # -- the loops --------------------------------------------------------------------------------

    def _backoff(self) -> Backoff:
        return Backoff(first=min(0.1, self.max_backoff), cap=self.max_backoff)

    def _claim_loop(self, drain: bool) -> None:
        backoff = self._backoff()
        while not self._stopping.is_set():
            with self._lock:
                free = self.capacity - self._in_flight
                held_before = bool(self._held)  # idle only if nothing of ours ran while we looked
            if free <= 0:
                self._wake.wait(self.poll_interval)
                self._wake.clear()
                continue
            try:
                jobs = self.client.claim_jobs(self.worker_id, self.lease, self.queue, free)
            except Exception as error:  # any database error: log, back off, go on
                delay = backoff.next()
                _log_failure("claim_jobs", error, delay)
                self._stopping.wait(delay)
                continue
            backoff.reset()
            with self._lock:
                for job in jobs:
                    ctx = JobContext(self, job)
                    self._held[job.job_id] = ctx
                    self._in_flight += 1
                    self._todo.put(ctx)
                self.stats.claimed += len(jobs)
                idle = not jobs and not held_before
            if jobs:
                continue
            if drain and idle:
                return
            self._wake.wait(self.poll_interval)
            self._wake.clear()

    def _handler_loop(self) -> None:
        while True:
            ctx = self._todo.get()
            if ctx is None:
                return
            outcome: Any = None
            ctx.running = True
            try:
                if not ctx.lease_lost:
                    outcome = self.handler(ctx.job, ctx)
            except errors.LeaseLost:
                outcome = _LOST
            except Exception as error:  # the handler's failure is the job's failure
                outcome = _Failure(error)
            ctx.running = False
            with self._lock:
                self._in_flight -= 1
            self._wake.set()
            self._done.put((ctx, outcome))

    def _complete_loop(self) -> None:
        while True:
            first = self._done.get()
            if first is None:
                return
            batch = [first]
            while len(batch) < 1000:
                try:
                    item = self._done.get_nowait()
                except queue_module.Empty:
                    break
                if item is None:
                    self._done.put(None)
                    break
                batch.append(item)
            try:
                self._finish(batch)
            except Exception:  # never dies: what was not finished runs again after its lease
                log.exception("finishing %d jobs", len(batch))

    def _finish(self, batch: list[tuple[JobContext, Any]]) -> None:
        to_complete = []
        for ctx, outcome in batch:
            if ctx.finished:
                self._count("paused" if ctx.paused else "completed")
            elif outcome is _LOST or ctx.lease_lost:
                self._count("lost")
            elif isinstance(outcome, _Failure):
                try:
                    ctx.fail(_error_text(outcome.error))
                    self._count("failed")
                except errors.LeaseLost:
                    self._count("lost")
                except Exception as error:  # the job runs again when its lease expires
                    _log_failure(f"fail_job for job {ctx.job.job_id}", error, 0)
            else:
                to_complete.append((ctx, outcome))
        if to_complete:
            done = self._complete_batch(to_complete)
            for ctx, _ in to_complete:
                if ctx.job.job_id in done:
                    ctx.finished = True
                    self._count("completed")
                else:
                    ctx._lost.set()
                    self._count("lost")
        with self._lock:
            for ctx, _ in batch:
                self._held.pop(ctx.job.job_id, None)

    def _complete_batch(self, to_complete: list[tuple[JobContext, Any]]) -> set[int]:
        """``ai.complete_jobs`` for a batch, tried again after an error while the leases last
        (a retry after an ambiguous failure finds the jobs it completed already gone from its
        answer: they count as lost, and are COMPLETED). Jobs not completed run again when their
        leases expire."""
        backoff = self._backoff()
        deadline = time.monotonic() + self.lease.total_seconds() / 2
        batch = [(c.job.job_id, c.job.fencing_token, r) for c, r in to_complete]
        while True:
            try:
                return set(self.client.complete_jobs(batch))
            except Exception as error:
                delay = backoff.next()
                if time.monotonic() + delay >= deadline:
                    log.error("complete_jobs failed; the jobs run again when their leases expire", exc_info=error)
                    return set()
                _log_failure("complete_jobs", error, delay)
                time.sleep(delay)

    def _renew_loop(self) -> None:
        every = self.lease.total_seconds() / 3
        backoff = self._backoff()
        pause = min(every / 4, 1.0)
        while not self._closed.wait(pause):
            pause = min(every / 4, 1.0)
            now = time.monotonic()
            with self._lock:
                due = [c for c in self._held.values() if now - c.renewed_at >= every and not c.lease_lost]
            # One statement renews every due lease (ai.renew_leases); a lost one is left out.
            for batch in _batches(due, RENEW_BATCH):
                try:
                    renewed = self.client.renew_leases(
                        self.worker_id, [(c.job.job_id, c.job.fencing_token) for c in batch], self.lease
                    )
                    backoff.reset()
                except Exception as error:  # the next round tries again, after a backoff
                    pause = min(backoff.next(), every / 4)
                    _log_failure("renew_leases", error, pause)
                    break
                for ctx in batch:
                    if ctx.job.job_id in renewed:
                        ctx.renewed_at = now
                    else:
                        ctx._lost.set()

    def _listen_loop(self) -> None:
        backoff = self._backoff()
        conninfo = self.listen_conninfo or self.pool.conninfo
        while not self._closed.is_set():
            try:
                with psycopg.connect(conninfo, **_listen_kwargs(self.pool.kwargs)) as conn:
                    row = conn.execute("select ai.queue_channel(%s)", (self.queue,), prepare=False).fetchone()
                    assert row is not None
                    conn.execute(_listen_statement(row[0]), prepare=False)
                    backoff.reset()
                    while not self._closed.is_set():
                        for _note in conn.notifies(timeout=0.5):
                            self._wake.set()
            except Exception as error:  # polling goes on meanwhile
                delay = max(self.poll_interval, backoff.next())
                _log_failure("LISTEN", error, delay)
                self._closed.wait(delay)

    def _shut_down(self) -> None:
        """Release unstarted jobs, give running handlers grace_period, then release theirs."""
        while True:
            try:
                ctx = self._todo.get_nowait()
            except queue_module.Empty:
                break
            if ctx is not None:
                self._release(ctx)
                with self._lock:
                    self._in_flight -= 1
        for _ in range(self.concurrency):
            self._todo.put(None)  # each handler thread ends after its current job
        deadline = time.monotonic() + self.grace_period
        while time.monotonic() < deadline:
            with self._lock:
                if self._in_flight == 0:
                    return
            time.sleep(0.01)
        with self._lock:
            overdue = [c for c in self._held.values() if c.running]
        for ctx in overdue:  # their writes stop here (ctx refuses), the job goes back to PENDING
            self._release(ctx)

    def _release(self, ctx: JobContext) -> None:
        ctx._lost.set()
        try:
            self.client.release_job(ctx.job.job_id, ctx.job.fencing_token)
            self._count("released")
        except (errors.LeaseLost, errors.NotFound):
            self._count("lost")
        except Exception as error:  # its lease expires instead
            _log_failure(f"release_job for job {ctx.job.job_id}", error, 0)
        with self._lock:
            self._held.pop(ctx.job.job_id, None)

    def _count(self, what: str) -> None:
        with self._lock:
            setattr(self.stats, what, getattr(self.stats, what) + 1)


@dataclass(frozen=True)
class _Failure:
    error: BaseException


_LOST = object()


# -- async ----------------------------------------------------------------------------------------


class AsyncJobContext:
    """The asyncio twin of :class:`JobContext`."""

    def __init__(self, worker: AsyncWorker, job: Job):
        self.job = job
        self._worker = worker
        self._lost = asyncio.Event()
        self.finished = False
        self.paused = False

    @property
    def lease_lost(self) -> bool:
        return self._lost.is_set()

    def check(self) -> None:
        if self._lost.is_set():
            raise errors.LeaseLost(f"job {self.job.job_id}: lease lost", sqlstate="AS006")

    @asynccontextmanager
    async def fenced(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        self.check()
        try:
            async with self._worker.pool.connection() as conn, conn.transaction():
                await conn.execute(
                    "select ai.fenced_write(%s, %s)", (self.job.job_id, self.job.fencing_token), prepare=False
                )
                async with _aunprepared(conn):
                    yield conn
        except psycopg.Error as error:
            translated = _translated(error)
            if isinstance(translated, errors.LeaseLost):
                self._lost.set()
            if translated is error:
                raise
            raise translated from error

    async def complete(self, result: Any = None, conn: psycopg.AsyncConnection[Any] | None = None) -> None:
        self.check()
        client = AsyncClient(conn) if conn is not None else self._worker.client
        try:
            await client.complete_job(self.job.job_id, self.job.fencing_token, result)
        except errors.LeaseLost:
            self._lost.set()
            raise
        self.finished = True

    def side_effect(self, *key_parts: Any, request: Any = None) -> _side_effect:
        """The async twin of :meth:`JobContext.side_effect`: ``await ctx.side_effect(...).arun(tool)``
        or ``async with ctx.side_effect(...) as call:``."""
        self.check()
        return _side_effect(
            self._worker.client,
            self.job.thread_id,
            *key_parts,
            request=request,
            job_id=self.job.job_id,
            fencing_token=self.job.fencing_token,
            on_lease_lost=lambda _error: self._lost.set(),
        )

    async def request_human(self, checkpoint_id: str, action: Any = None) -> str:
        """The async twin of :meth:`JobContext.request_human`."""
        self.check()
        try:
            approval = await self._worker.client.request_human(
                self.job.job_id, self.job.fencing_token, checkpoint_id, action
            )
        except errors.LeaseLost:
            self._lost.set()
            raise
        self.finished = self.paused = True
        self._lost.set()
        return approval


AsyncHandler = Callable[[Job, AsyncJobContext], Awaitable[Any]]


class AsyncWorker:
    """The asyncio twin of :class:`Worker`: ``await handler(job, ctx)`` for each job, as tasks."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        handler: AsyncHandler,
        queue: str = "default",
        concurrency: int = 4,
        lease: timedelta = DEFAULT_LEASE,
        *,
        worker_id: str | None = None,
        poll_interval: float = 1.0,
        grace_period: float = 10.0,
        listen: bool = True,
        listen_conninfo: str | None = None,
        max_backoff: float = 5.0,
    ):
        if not inspect.iscoroutinefunction(handler):
            raise TypeError("AsyncWorker needs an async handler")
        self.pool = pool
        self.client = AsyncClient(pool)
        self.handler = handler
        self.queue = queue
        self.concurrency = concurrency
        self.lease = lease
        self.worker_id = worker_id or _default_worker_id()
        self.poll_interval = poll_interval
        self.grace_period = grace_period
        self.listen = listen
        self.listen_conninfo = listen_conninfo
        self.max_backoff = max_backoff
        self.stats = WorkerStats()
        self._running: dict[int, tuple[AsyncJobContext, asyncio.Task[None]]] = {}
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()

    async def run(self, *, drain: bool = False, install_signal_handlers: bool = True) -> WorkerStats:
        loop = asyncio.get_running_loop()
        installed = []
        if install_signal_handlers:
            for sig in (signal.SIGTERM, signal.SIGINT):
                try:
                    loop.add_signal_handler(sig, self.stop)
                    installed.append(sig)
                except (NotImplementedError, RuntimeError):
                    pass
        helpers = [asyncio.create_task(self._renew_loop())]
        if self.listen:
            helpers.append(asyncio.create_task(self._listen_loop()))
        try:
            await self._claim_loop(drain)
        finally:
            await self._shut_down()
            self._stopping.set()
            for task in helpers:
                task.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)
            for sig in installed:
                loop.remove_signal_handler(sig)
        return self.stats

    def _backoff(self) -> Backoff:
        return Backoff(first=min(0.1, self.max_backoff), cap=self.max_backoff)

    async def _claim_loop(self, drain: bool) -> None:
        backoff = self._backoff()
        while not self._stopping.is_set():
            free = self.concurrency - len(self._running)
            held_before = bool(self._running)  # idle only if nothing of ours ran while we looked
            jobs = []
            if free > 0:
                try:
                    jobs = await self.client.claim_jobs(self.worker_id, self.lease, self.queue, free)
                    backoff.reset()
                except Exception as error:  # any database error: log, back off, go on
                    delay = backoff.next()
                    _log_failure("claim_jobs", error, delay)
                    with suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self._stopping.wait(), delay)
                    continue
            for job in jobs:
                ctx = AsyncJobContext(self, job)
                self._running[job.job_id] = (ctx, asyncio.create_task(self._run_one(ctx)))
            self.stats.claimed += len(jobs)
            if jobs and len(self._running) < self.concurrency:
                continue
            if drain and not jobs and not held_before:
                return
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_interval)
            self._wake.clear()

    async def _run_one(self, ctx: AsyncJobContext) -> None:
        try:
            try:
                result = await self.handler(ctx.job, ctx)
            except (errors.LeaseLost, asyncio.CancelledError):
                raise
            except Exception as error:  # the handler's failure is the job's failure
                await self._fail(ctx, error)
                return
            if not ctx.finished:
                await self._complete(ctx, result)
            if ctx.paused:
                self.stats.paused += 1
            elif ctx.finished:
                self.stats.completed += 1
        except errors.LeaseLost:
            self.stats.lost += 1
        finally:
            self._running.pop(ctx.job.job_id, None)
            self._wake.set()

    async def _complete(self, ctx: AsyncJobContext, result: Any) -> None:
        """complete_job, tried again after a database error while the lease lasts; then the job
        runs again when its lease expires (counted lost). LeaseLost reaches the caller."""
        backoff = self._backoff()
        deadline = time.monotonic() + self.lease.total_seconds() / 2
        while True:
            try:
                await ctx.complete(result)
                return
            except errors.LeaseLost:
                raise
            except Exception as error:
                delay = backoff.next()
                if time.monotonic() + delay >= deadline:
                    log.error("complete_job for job %s failed; it runs again", ctx.job.job_id, exc_info=error)
                    ctx._lost.set()
                    raise errors.LeaseLost(f"job {ctx.job.job_id}: not completed", sqlstate="AS006") from error
                _log_failure(f"complete_job for job {ctx.job.job_id}", error, delay)
                await asyncio.sleep(delay)

    async def _fail(self, ctx: AsyncJobContext, error: Exception) -> None:
        try:
            ctx.check()
            await self.client.fail_job(ctx.job.job_id, ctx.job.fencing_token, _error_text(error))
            self.stats.failed += 1
        except errors.LeaseLost:
            self.stats.lost += 1
        except Exception as failure:  # the job runs again when its lease expires
            _log_failure(f"fail_job for job {ctx.job.job_id}", failure, 0)
            self.stats.lost += 1

    async def _renew_loop(self) -> None:
        every = self.lease.total_seconds() / 3
        backoff = self._backoff()
        pause = every
        while True:
            await asyncio.sleep(pause)
            pause = every
            held = [ctx for ctx, _ in list(self._running.values())]
            for batch in _batches(held, RENEW_BATCH):
                try:
                    renewed = await self.client.renew_leases(
                        self.worker_id, [(c.job.job_id, c.job.fencing_token) for c in batch], self.lease
                    )
                    backoff.reset()
                except Exception as error:  # the next round tries again, after a backoff
                    pause = min(backoff.next(), every / 4)
                    _log_failure("renew_leases", error, pause)
                    break
                for ctx in batch:
                    if ctx.job.job_id not in renewed:
                        ctx._lost.set()

    async def _listen_loop(self) -> None:
        backoff = self._backoff()
        conninfo = self.listen_conninfo or self.pool.conninfo
        while True:
            try:
                kwargs = _listen_kwargs(self.pool.kwargs)
                async with await psycopg.AsyncConnection.connect(conninfo, **kwargs) as conn:
                    cur = await conn.execute("select ai.queue_channel(%s)", (self.queue,), prepare=False)
                    row = await cur.fetchone()
                    assert row is not None
                    await conn.execute(_listen_statement(row[0]), prepare=False)
                    backoff.reset()
                    async for _note in conn.notifies():
                        self._wake.set()
            except Exception as error:  # polling goes on meanwhile
                delay = max(self.poll_interval, backoff.next())
                _log_failure("LISTEN", error, delay)
                await asyncio.sleep(delay)

    async def _shut_down(self) -> None:
        if self._running:
            await asyncio.wait([task for _, task in self._running.values()], timeout=self.grace_period)
        for ctx, task in list(self._running.values()):
            ctx._lost.set()
            task.cancel()
            try:
                await self.client.release_job(ctx.job.job_id, ctx.job.fencing_token)
                self.stats.released += 1
            except (errors.LeaseLost, errors.NotFound):
                self.stats.lost += 1
            except Exception as error:  # its lease expires instead
                _log_failure(f"release_job for job {ctx.job.job_id}", error, 0)
        self._running.clear()
