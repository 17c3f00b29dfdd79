"""Workers: run the jobs of one queue with a handler, fenced, with leases kept alive.

The loop is short: claim, run, renew, finish. Every finish names the job's fencing token, so a
worker that lost its lease (paused, partitioned, too slow) writes nothing; the SQL functions
decide, this module only calls them.

- Claims wake on a NOTIFY on the queue's channel (``ai.queue_channel(queue)``, a keyed hash of
  the queue name that tenants cannot compute; the payload is empty) and poll every
  ``poll_interval`` as well (a notification is a hint; a lost one costs latency, never a job).
  Up to ``concurrency + prefetch`` jobs are held at once, claimed in batches with ``ai.claim_jobs``,
  or with the completions of finished handlers in one round trip (``ai.complete_and_claim``).
- Leases are renewed in the background about every third of the lease. When a renewal reports
  "lease lost", the job's context is marked lost: ``ctx.fenced()`` and ``ctx.complete()`` then
  refuse at once, and the handler can check ``ctx.lease_lost``.
- ``ctx.fenced()`` is a transaction that starts with ``ai.fenced_write``: writes made in it commit
  only if the job is still held when they commit (else the commit fails: LeaseLost). Completing the
  job inside it (``ctx.complete(result, conn)``) makes the writes and the completion one commit.
- A handler that returns completes the job with its return value (completions are sent in
  batches through ``ai.complete_jobs``); one that raises fails it (``ai.fail_job``, retried with
  backoff until its attempts are spent).
- Deadlines (docs/queue.md, "Deadlines"): a job's attempt ends at its deadline (claimed_at + its
  ``timeout``, or its total ``deadline`` if sooner). The server never leases it past that; the
  worker never renews past it, cancels an async handler's task there (asyncio cancellation), and
  for a thread sets ``ctx.cancelled()`` and makes its context refuse every write
  (:class:`~agent_state.DeadlineExceeded`); the fence refuses whatever the thread still sends.
  The next claim retries the job, or dead-letters it after its last attempt.
- A handler that meets a rate limit raises :class:`~agent_state.Snooze` (or calls
  ``ctx.snooze(...)``): the job goes back until then without spending an attempt.
- ``stop()``, SIGTERM or SIGINT: stop claiming, let running handlers finish within
  ``grace_period``, then release what is left (``ai.release_job``: the attempt is not counted).
- No loop dies of a database error (claim, renew, complete, listen): any error is logged, the
  loop backs off (exponential, with jitter, capped at ``max_backoff``) and goes on; a broken
  connection is replaced by the pool. A server restart or failover costs latency, never the
  worker (docs/connections.md).
- Recovery is driven by the worker's own short probing, not by the pool's reconnect schedule
  (psycopg_pool waits 1, 2, 4, 8, 16 s between attempts): while the database cannot be reached
  the loops try again every :data:`~agent_state.retry.RECONNECT_PROBE` seconds at most, the
  worker's own calls wait at most :data:`CONTROL_POOL_TIMEOUT` for a pool connection (each try
  asks the pool for a new one at once, and a renewal never queues behind a dead pool), the pool's
  ``reconnect_timeout`` is capped at :data:`POOL_RECONNECT_TIMEOUT` (its own attempts give up
  quickly and the next request opens a connection at once) and its idle connections are checked
  after a lost one. The worker claims again within about a second of the database accepting
  connections, whatever the outage's length.
- ``Worker`` (threads) and ``AsyncWorker`` (asyncio tasks) have the same capabilities, names
  and behaviour: both are thin drivers of one I/O-free core (:mod:`agent_state._worker_core`,
  whose docstring says why a shared core and not code generated from one side). The one
  difference is what threads cannot do: past the grace period an ``AsyncWorker`` also cancels
  the handler's task, where a ``Worker``'s thread runs on with a context that refuses every write.
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
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager, nullcontext, suppress
from datetime import datetime, timedelta
from typing import Any, Literal

import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from . import errors
from ._worker_core import (
    COMPLETE_BATCH,
    LOST,
    RENEW_BATCH,
    Failure,
    JobState,
    Snooze,
    WorkerCore,
    WorkerStats,
)
from .client import AsyncClient, Client, abehind_pooler, behind_pooler
from .logs import JobLogFilter, job_log_context
from .models import Job
from .queue import DEFAULT_LEASE, new_request_id
from .retry import POOL_RECONNECT_TIMEOUT, RECONNECT_PROBE, is_connection_error
from .side_effects import side_effect as _side_effect
from .tracing import attempt_scope, side_effect_parent, worker_telemetry

#: How long the worker's own calls (claims, renewals, completions) wait for a pool connection.
CONTROL_POOL_TIMEOUT = 0.5

__all__ = [
    "RENEW_BATCH",
    "AsyncHandler",
    "AsyncJobContext",
    "AsyncWorker",
    "Handler",
    "JobContext",
    "Snooze",
    "Worker",
    "WorkerStats",
]

log = logging.getLogger("agent_state.worker")
log.addFilter(JobLogFilter())  # thread_id, job_id, attempt, fencing_token, queue (agent_state.logs)


def _listen_statement(channel: str) -> sql.Composed:
    """LISTEN on the channel name ai.queue_channel returned (quoted as an identifier)."""
    return sql.SQL("listen {}").format(sql.Identifier(channel))


def _default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident() % 100000}"


def _translated(error: psycopg.Error) -> Exception:
    return errors.translate(error)


#: Seconds a worker's LISTEN connection may go unread before it is dropped (issue 21, defect 7).
#: Postgres keeps every notification until each listening session has read it, so a listener
#: that stops reading (an event loop blocked by a handler, a stuck thread) pins the cluster's
#: notification queue, and when that is full every transaction that notifies fails at commit.
#: The guard shuts the connection's socket from a thread of its own: the server ends the backend
#: and frees its place in the queue; the listen loop, once it runs again, connects anew (claims
#: go on by polling meanwhile).
LISTEN_STALL = 30.0


class _ListenGuard:
    """Drops the LISTEN connection whose reader has not come back for ``LISTEN_STALL`` seconds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._read_at = 0.0
        self._stop = threading.Event()
        threading.Thread(target=self._watch, name="agent-state-listen-guard", daemon=True).start()

    def attach(self, fd: int) -> None:
        with self._lock:
            self._fd, self._read_at = fd, time.monotonic()

    def reading(self) -> None:
        with self._lock:
            self._read_at = time.monotonic()

    def detach(self) -> None:
        with self._lock:
            self._fd = None

    def close(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        while not self._stop.wait(min(1.0, LISTEN_STALL / 4)):
            with self._lock:  # detach() runs before the connection closes: fd is still its socket
                late = time.monotonic() - self._read_at
                if self._fd is None or late < LISTEN_STALL:
                    continue
                try:
                    sock = socket.socket(fileno=os.dup(self._fd))
                except OSError:
                    continue
                finally:
                    self._fd = None
            log.warning("LISTEN unread for %.0fs: its connection is dropped (claims go on by polling)", late)
            with suppress(OSError), sock:
                sock.shutdown(socket.SHUT_RDWR)


def _log_failure(what: str, error: BaseException, delay: float) -> None:
    """A loop's database error: a lost connection is a warning (it comes back), anything else an
    error with its traceback. Either way the loop goes on after ``delay``."""
    if is_connection_error(error):
        log.warning("%s failed (%s: %s); again in %.2fs", what, type(error).__name__, error, delay)
    else:
        log.error("%s failed; again in %.2fs", what, delay, exc_info=error)


# <async>
@asynccontextmanager
async def _aunprepared(conn: psycopg.AsyncConnection[Any]) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    """Behind a pooler, the connection with psycopg's automatic prepared statements off while the
    handler uses it (there they fail or run another client's statement); the owner's setting
    comes back afterwards. A direct connection is left as it is."""
    threshold = conn.prepare_threshold
    if await abehind_pooler(conn):
        conn.prepare_threshold = None
    try:
        yield conn
    finally:
        conn.prepare_threshold = threshold


async def _alisten_target(pool: AsyncConnectionPool, conninfo: str | None) -> tuple[str, dict[str, Any]]:
    """Where the LISTEN connection goes: ``conninfo``, else the pool's (its conninfo and kwargs
    may be callables, psycopg_pool >= 3.3)."""
    target = conninfo or pool.conninfo
    kwargs = pool.kwargs
    if True:  # ASYNC
        if callable(target):
            made = target()
            target = await made if inspect.isawaitable(made) else made
        if callable(kwargs):
            given = kwargs()
            kwargs = await given if inspect.isawaitable(given) else given
        return target, _listen_kwargs(kwargs)
    else:
        return (target() if callable(target) else target), _listen_kwargs(kwargs() if callable(kwargs) else kwargs)


class AsyncJobContext(JobState):
    """What a handler gets besides the job: lease state and fenced writes."""

    def __init__(self, worker: AsyncWorker, job: Job) -> None:
        super().__init__(job)
        self._worker = worker

    @asynccontextmanager
    async def fenced(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A connection in a transaction that began with ``ai.fenced_write``; commits on exit.

        Raises LeaseLost (and writes nothing) when the job is no longer held."""
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
            self._mark_lost(translated)
            if translated is error:
                raise
            raise translated from error

    async def complete(self, result: Any = None, conn: psycopg.AsyncConnection[Any] | None = None) -> None:
        """Completes the job now, inside ``conn`` (a ``fenced()`` transaction) when given."""
        self.check()
        try:
            client = AsyncClient(conn) if conn is not None else self._worker.handler_client
            await client.complete_job(self.job.job_id, self.job.fencing_token, result)
        except errors.LeaseLost as error:
            self._mark_lost(error)
            raise
        self.finished = True

    def side_effect(self, *key_parts: Any, request: Any = None) -> _side_effect:
        """The tool-call ledger for this claim: ``@ctx.side_effect("charge", user, amount)`` on a
        tool ``def charge(call): ...`` (or ``with ctx.side_effect(...) as call:``; in async code
        ``await ctx.side_effect(...).arun(tool)`` or ``async with``) runs it once per key in the
        thread, fenced on the job; a retry returns the recorded result. ``call.key`` goes to
        downstream APIs; ``call.taken_over`` says a dead worker may have acted. See
        :mod:`agent_state.side_effects`."""
        self.check()
        return _side_effect(
            self._worker.handler_client,
            self.job.thread_id,
            *key_parts,
            request=request,
            job_id=self.job.job_id,
            fencing_token=self.job.fencing_token,
            on_lease_lost=self._mark_lost,
            trace_parent=side_effect_parent(self),
        )

    async def request_human(self, checkpoint_id: str, action: Any = None) -> str:
        """Pauses the job for a person (``ai.request_human``): it waits as AWAITING_HUMAN, this
        worker holds it no more, and whoever claims it after ``resolve_human`` finds the decision
        in ``job.payload["human"]``. The handler should return right after. Returns the approval id."""
        self.check()
        try:
            approval = await self._worker.handler_client.request_human(
                self.job.job_id, self.job.fencing_token, checkpoint_id, action
            )
        except errors.LeaseLost as error:
            self._mark_lost(error)
            raise
        self.finished = self.paused = True
        self._lose()  # nothing more may be written under this claim
        return approval

    async def fail(self, error: str, retry_in: timedelta | None = None) -> None:
        """Fails the job now (retried after retry_in, or a backoff, while attempts remain)."""
        self.check()
        try:
            await self._worker.handler_client.fail_job(self.job.job_id, self.job.fencing_token, error, retry_in)
        except errors.LeaseLost as lost:
            self._mark_lost(lost)
            raise
        self.finished = self.failed = True

    async def snooze(self, until: datetime | timedelta | float) -> None:
        """Gives the job back until ``until`` (a time, a timedelta or seconds from the database's
        now: a rate limit's retry_after) without spending an attempt (``ai.snooze_job``); this
        claim holds it no more, and no worker takes it earlier. The handler should return right
        after (or raise :class:`~agent_state.Snooze` instead of calling this)."""
        self.check()
        when = until if isinstance(until, (datetime, timedelta)) else timedelta(seconds=until)
        try:
            await self._worker.handler_client.snooze_job(self.job.job_id, self.job.fencing_token, when)
        except errors.LeaseLost as error:
            self._mark_lost(error)
            raise
        self.finished = self.snoozed = True
        self._lose()  # nothing more may be written under this claim


# </async>


# <sync> generated by scripts/async_to_sync.py from the <async> block above: do not edit
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


def _listen_target(pool: ConnectionPool, conninfo: str | None) -> tuple[str, dict[str, Any]]:
    """Where the LISTEN connection goes: ``conninfo``, else the pool's (its conninfo and kwargs
    may be callables, psycopg_pool >= 3.3)."""
    target = conninfo or pool.conninfo
    kwargs = pool.kwargs
    return (target() if callable(target) else target), _listen_kwargs(kwargs() if callable(kwargs) else kwargs)


class JobContext(JobState):
    """What a handler gets besides the job: lease state and fenced writes."""

    def __init__(self, worker: Worker, job: Job) -> None:
        super().__init__(job)
        self._worker = worker

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
            client = Client(conn) if conn is not None else self._worker.handler_client
            client.complete_job(self.job.job_id, self.job.fencing_token, result)
        except errors.LeaseLost as error:
            self._mark_lost(error)
            raise
        self.finished = True

    def side_effect(self, *key_parts: Any, request: Any = None) -> _side_effect:
        """The tool-call ledger for this claim: ``@ctx.side_effect("charge", user, amount)`` on a
        tool ``def charge(call): ...`` (or ``with ctx.side_effect(...) as call:``; in async code
        ``await ctx.side_effect(...).arun(tool)`` or ``async with``) runs it once per key in the
        thread, fenced on the job; a retry returns the recorded result. ``call.key`` goes to
        downstream APIs; ``call.taken_over`` says a dead worker may have acted. See
        :mod:`agent_state.side_effects`."""
        self.check()
        return _side_effect(
            self._worker.handler_client,
            self.job.thread_id,
            *key_parts,
            request=request,
            job_id=self.job.job_id,
            fencing_token=self.job.fencing_token,
            on_lease_lost=self._mark_lost,
            trace_parent=side_effect_parent(self),
        )

    def request_human(self, checkpoint_id: str, action: Any = None) -> str:
        """Pauses the job for a person (``ai.request_human``): it waits as AWAITING_HUMAN, this
        worker holds it no more, and whoever claims it after ``resolve_human`` finds the decision
        in ``job.payload["human"]``. The handler should return right after. Returns the approval id."""
        self.check()
        try:
            approval = self._worker.handler_client.request_human(
                self.job.job_id, self.job.fencing_token, checkpoint_id, action
            )
        except errors.LeaseLost as error:
            self._mark_lost(error)
            raise
        self.finished = self.paused = True
        self._lose()  # nothing more may be written under this claim
        return approval

    def fail(self, error: str, retry_in: timedelta | None = None) -> None:
        """Fails the job now (retried after retry_in, or a backoff, while attempts remain)."""
        self.check()
        try:
            self._worker.handler_client.fail_job(self.job.job_id, self.job.fencing_token, error, retry_in)
        except errors.LeaseLost as lost:
            self._mark_lost(lost)
            raise
        self.finished = self.failed = True

    def snooze(self, until: datetime | timedelta | float) -> None:
        """Gives the job back until ``until`` (a time, a timedelta or seconds from the database's
        now: a rate limit's retry_after) without spending an attempt (``ai.snooze_job``); this
        claim holds it no more, and no worker takes it earlier. The handler should return right
        after (or raise :class:`~agent_state.Snooze` instead of calling this)."""
        self.check()
        when = until if isinstance(until, (datetime, timedelta)) else timedelta(seconds=until)
        try:
            self._worker.handler_client.snooze_job(self.job.job_id, self.job.fencing_token, when)
        except errors.LeaseLost as error:
            self._mark_lost(error)
            raise
        self.finished = self.snoozed = True
        self._lose()  # nothing more may be written under this claim


# </sync>


#: What a Worker runs for a job, and what an AsyncWorker awaits.
Handler = Callable[[Job, JobContext], Any]
AsyncHandler = Callable[[Job, AsyncJobContext], Awaitable[Any]]


def _install_signals(stop: Callable[[], None]) -> dict[int, Any]:
    """The sync worker's SIGTERM and SIGINT handlers (from the main thread only): the previous
    ones, to put back.

    A handler runs in the main thread between two bytecodes, possibly while that thread holds the
    lock inside the wake-up ``threading.Event`` (its ``wait`` takes it around each timeout), and
    ``Event.set`` takes that lock too: called from the handler it would wait for its own thread
    forever. So the handler only starts a thread that calls ``stop``."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous: dict[int, Any] = {}
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous[sig] = signal.signal(
            sig, lambda *_: threading.Thread(target=stop, name="agent-state-stop", daemon=True).start()
        )
    return previous


#: How long a worker waits on its liveness connection at a time (a lost connection ends the wait
#: at once), and before it tries again for a hold another session has (the same worker_id twice).
LIVENESS_CHECK = 1.0


def _listen_kwargs(kwargs: dict[str, Any] | None) -> dict[str, Any]:
    return {**(kwargs or {}), "autocommit": True, "prepare_threshold": None}


# -- the workers ----------------------------------------------------------------------------------


# <async>
class AsyncWorker:
    """Runs ``handler(job, ctx)`` for the jobs of one queue, ``concurrency`` at a time: the async
    worker as tasks of its event loop (``await handler(job, ctx)``), the sync one in threads.

    ``pool`` is a psycopg_pool ``AsyncConnectionPool`` of a member of ai_service; it needs a
    connection per handler plus two (claims and completions), and the worker opens two more, for
    LISTEN and for its liveness hold (to ``listen_conninfo`` when given, else to the pool's; a
    direct connection, or its jobs wait out their leases when it dies: ``liveness``, docs/queue.md
    "Dead workers"). Up to ``concurrency + prefetch`` jobs are held at once (``prefetch`` defaults
    to ``concurrency``; many short jobs go faster with 16 or more). Database errors in its loops
    are logged and retried after a backoff of at most ``max_backoff`` seconds. Every decision
    (claims, renewals, backoff, shutdown) is made by the same core (agent_state/_worker_core.py).
    """

    def __init__(
        self,
        pool: AsyncConnectionPool,
        handler: AsyncHandler,
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
        liveness: bool = True,
    ) -> None:
        if True:  # ASYNC
            if not inspect.iscoroutinefunction(handler):
                raise TypeError("AsyncWorker needs an async handler")
        self._core: WorkerCore[AsyncJobContext] = WorkerCore(
            concurrency=concurrency,
            prefetch=prefetch,
            lease=lease,
            poll_interval=poll_interval,
            grace_period=grace_period,
            max_backoff=max_backoff,
        )
        self.pool = pool
        self.client = AsyncClient(pool, pool_timeout=CONTROL_POOL_TIMEOUT)  # the loops' own calls
        #: The handlers' calls (``ctx``): they wait for a pool connection as the pool says.
        self.handler_client = AsyncClient(pool)
        if pool.reconnect_timeout > POOL_RECONNECT_TIMEOUT:  # its doubling waits must not govern recovery
            pool.reconnect_timeout = POOL_RECONNECT_TIMEOUT
        self.handler = handler
        self.queue = queue
        self.concurrency = concurrency
        self.lease = lease
        self.worker_id = worker_id or _default_worker_id()
        self._core.telemetry = worker_telemetry(queue, self.worker_id)  # None when tracing is off
        self.capacity = self._core.capacity
        self.poll_interval = poll_interval
        self.grace_period = grace_period
        self.listen = listen
        self.listen_conninfo = listen_conninfo
        self.max_backoff = max_backoff
        self.liveness = liveness
        self.stats = self._core.stats
        #: held by whoever claims (the claim loop, or the completer with its completions): one
        #: claim at a time, so that a retried claim's request id is the worker's last one
        self._claiming = asyncio.Lock()
        self._completing = False  # the completer holds a batch: the claim goes with it
        self._late: list[AsyncJobContext] = []  # claimed by the completer as the worker stopped
        if True:  # ASYNC
            self._lock: AbstractContextManager[Any] = nullcontext()  # one event loop: nothing to lock
            # asyncio primitives bind to the running loop: made in run()
            self._todo: asyncio.Queue[AsyncJobContext | None] | None = None
            self._done: asyncio.Queue[tuple[AsyncJobContext, Any] | None] | None = None
            self._wake: asyncio.Event | None = None
            self._closed: asyncio.Event | None = None
            self._handlers: list[asyncio.Task[None]] = []
            self._cancelling = False  # _shut_down cancels the handlers still running
        else:
            self._lock = threading.Lock()
            self._todo = queue_module.Queue[JobContext | None]()
            self._done = queue_module.Queue[tuple[JobContext, Any] | None]()
            self._wake = threading.Event()
            self._closed = threading.Event()  # renewals and LISTEN end too

    # -- control ----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop claiming; ``run`` then finishes or releases what it holds and returns."""
        # No lock: the phase is one attribute, set atomically (the sync SIGTERM handler calls this
        # from a thread of its own: _install_signals).
        self._core.stop()
        if self._wake is not None:
            self._wake.set()

    async def run(self, *, drain: bool = False, install_signal_handlers: bool = True) -> WorkerStats:
        """Works until ``stop()`` (or SIGTERM/SIGINT); with ``drain``, also when nothing is left to claim."""
        if True:  # ASYNC
            loop = asyncio.get_running_loop()
            todo: asyncio.Queue[AsyncJobContext | None] = asyncio.Queue()
            done: asyncio.Queue[tuple[AsyncJobContext, Any] | None] = asyncio.Queue()
            self._todo, self._done, self._wake, self._closed = todo, done, asyncio.Event(), asyncio.Event()
            self._cancelling = False
            if self._core.stopping:
                self._wake.set()
            installed = []
            if install_signal_handlers:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    try:
                        loop.add_signal_handler(sig, self.stop)
                        installed.append(sig)
                    except (NotImplementedError, RuntimeError):
                        pass
            completer = asyncio.create_task(self._complete_loop())
            helpers = [asyncio.create_task(self._renew_loop())]
            if self.listen:
                helpers.append(asyncio.create_task(self._listen_loop()))
            if self.liveness:
                helpers.append(asyncio.create_task(self._liveness_loop()))
            self._handlers = [asyncio.create_task(self._handler_loop()) for _ in range(self.concurrency)]
            try:
                await self._claim_loop(drain)
            finally:
                self.stop()
                await self._shut_down()
                done.put_nowait(None)  # the completer flushes what is left, then ends
                with suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(completer), 30)
                self._core.close()
                self._closed.set()
                # the liveness task gives its hold up cleanly (ai.release_worker_liveness) within a
                # LIVENESS_CHECK, as the thread worker's join lets its thread do
                if self.liveness:
                    with suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(asyncio.shield(helpers[-1]), 5)
                for task in [completer, *helpers]:
                    task.cancel()
                await asyncio.gather(completer, *helpers, return_exceptions=True)
                for sig in installed:
                    loop.remove_signal_handler(sig)
            return self.stats
        else:
            previous = _install_signals(self.stop) if install_signal_handlers else {}
            threads = [
                threading.Thread(target=self._complete_loop, name="agent-state-complete", daemon=True),
                threading.Thread(target=self._renew_loop, name="agent-state-renew", daemon=True),
            ]
            if self.listen:
                threads.append(threading.Thread(target=self._listen_loop, name="agent-state-listen", daemon=True))
            if self.liveness:
                threads.append(threading.Thread(target=self._liveness_loop, name="agent-state-liveness", daemon=True))
            executor = ThreadPoolExecutor(self.concurrency, thread_name_prefix="agent-state-handler")
            for _ in range(self.concurrency):
                executor.submit(self._handler_loop)
            for thread in threads:
                thread.start()
            try:
                self._claim_loop(drain)
            finally:
                self.stop()
                self._shut_down()
                executor.shutdown(wait=False, cancel_futures=True)
                self._done.put(None)  # the completer flushes what is left, then ends
                threads[0].join(timeout=30)
                with self._lock:
                    self._core.close()
                self._closed.set()
                for thread in threads[1:]:
                    thread.join(timeout=5)
                for sig, handler in previous.items():
                    signal.signal(sig, handler)
            return self.stats

    # -- the loops --------------------------------------------------------------------------------

    async def _claim_loop(self, drain: bool) -> None:
        core = self._core
        assert self._todo is not None
        backoff = core.backoff()
        request_id: str | None = None
        while True:
            with self._lock:
                if core.stopping:
                    return
                free = core.claim_size()
                held_before = bool(core.held)  # idle only if nothing of ours ran while we looked
            # Handlers finished and the completer sends their completions: the claim goes with
            # them (ai.complete_and_claim, one round trip); the completer wakes this loop after.
            if free <= 0 or self._completing or not self._done_empty():
                await self._wait_wake(self.poll_interval)
                continue
            # One request id until a claim is answered: a claim whose answer was lost with the
            # connection is asked again under it, and answers with the jobs it took.
            request_id = request_id or new_request_id()
            try:
                async with self._claiming:  # the completer may have claimed meanwhile: count again
                    with self._lock:
                        free = core.claim_size()
                        held_before = bool(core.held)
                    claim_start = time.monotonic()
                    jobs = (
                        await self.client.claim_jobs(self.worker_id, self.lease, self.queue, free, request_id)
                        if free > 0
                        else []
                    )
                    if free > 0 and self._core.telemetry is not None:
                        self._core.telemetry.claim_took(time.monotonic() - claim_start, "claim_jobs")
            except Exception as error:  # any database error: log, back off, go on
                delay = backoff.next(error)
                _log_failure("claim_jobs", error, delay)
                await self._check_pool(error)
                await self._wait_wake(delay)
                continue
            if free <= 0:
                continue
            request_id = None
            backoff.reset()
            self._hand_out(jobs)
            await self._release_late()
            if jobs:
                continue
            if drain and core.drained(len(jobs), held_before):
                return
            await self._wait_wake(self.poll_interval)

    async def _wait_wake(self, timeout: float) -> None:
        assert self._wake is not None
        if True:  # ASYNC
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)
        else:
            self._wake.wait(timeout)
        self._wake.clear()

    def _done_empty(self) -> bool:
        assert self._done is not None
        return self._done.empty()

    def _hand_out(self, jobs: list[Job]) -> None:
        """Claimed jobs go to the handlers; claimed by the completer as the worker stops, they are
        released instead (shutdown may have emptied the handlers' queue already)."""
        assert self._todo is not None
        contexts = [AsyncJobContext(self, job) for job in jobs]
        with self._lock:  # shutdown empties the queue under the lock once stopping: nothing is left behind
            self._core.claimed(contexts, time.monotonic())
            late = self._core.stopping
            for ctx in contexts:
                if late:
                    self._core.unstarted(ctx)
                    self._late.append(ctx)
                else:
                    self._todo.put_nowait(ctx)

    async def _handler_loop(self) -> None:
        assert self._todo is not None and self._done is not None and self._wake is not None
        while True:
            ctx = await self._todo.get()
            if ctx is None:
                return
            outcome: Any = None
            with self._lock:
                start = self._core.start(ctx, time.monotonic())
            if start == "release":  # stopping: it never starts
                await self._release(ctx)
                continue
            if True:  # ASYNC
                try:
                    if start == "run":
                        with job_log_context(ctx.job), attempt_scope(ctx):  # ids on its logs; its span current
                            timeout = self._core.run_timeout(ctx, time.monotonic())
                            if timeout is None:
                                outcome = await self.handler(ctx.job, ctx)
                            else:  # cancelled at the attempt's deadline
                                outcome = await asyncio.wait_for(self.handler(ctx.job, ctx), timeout)
                except errors.LeaseLost as error:
                    ctx._refused(error)
                    outcome = LOST
                except asyncio.CancelledError as error:
                    if self._cancelling:  # past the grace period: _shut_down cancelled this task
                        raise
                    outcome = Failure(error)  # one the handler raised itself (an escaped timeout)
                except Exception as error:  # the handler's failure is the job's failure
                    outcome = Failure(error)
            else:
                try:
                    if start == "run":
                        with job_log_context(ctx.job), attempt_scope(ctx):
                            outcome = self.handler(ctx.job, ctx)
                except errors.LeaseLost as error:
                    ctx._refused(error)
                    outcome = LOST
                except Exception as error:  # the handler's failure is the job's failure
                    outcome = Failure(error)
            # Queued before it is booked done, under the lock: shutdown waits for handlers_done()
            # and then queues the completer's end marker, which must come after this outcome.
            with self._lock:
                outcome = self._core.outcome(ctx, outcome, time.monotonic())  # past its deadline: timed out
                self._done.put_nowait((ctx, outcome))
                self._core.handler_done(ctx)
            self._wake.set()

    async def _complete_loop(self) -> None:
        assert self._done is not None
        while True:
            first = await self._done.get()
            if first is None:
                await self._release_late()
                return
            batch = [first]
            while len(batch) < COMPLETE_BATCH:
                try:
                    item = self._done.get_nowait()
                except asyncio.QueueEmpty:
                    break
                if item is None:
                    self._done.put_nowait(None)
                    break
                batch.append(item)
            self._completing = True
            try:
                await self._finish(batch)
            except Exception:  # never dies: what was not finished runs again after its lease
                log.exception("finishing %d jobs", len(batch))
            finally:
                self._completing = False
            await self._release_late()
            assert self._wake is not None
            self._wake.set()  # the claim loop claims what this batch's claim left free

    async def _finish(self, batch: list[tuple[AsyncJobContext, Any]]) -> None:
        with self._lock:
            plan = self._core.settle(batch)
        # failures (fail_job) and snoozes (snooze_job), one call each
        for ctx, what in [*plan.failures, *plan.snoozes]:
            snooze = what if isinstance(what, Snooze) else None
            try:
                if snooze is None:
                    await self.client.fail_job(ctx.job.job_id, ctx.job.fencing_token, str(what))
                else:
                    await self.client.snooze_job(ctx.job.job_id, ctx.job.fencing_token, snooze.when())
                ok = True
            except errors.LeaseLost:
                ok = False
            except Exception as error:  # the job runs again when its lease expires
                _log_failure(f"{'fail_job' if snooze is None else 'snooze_job'} for job {ctx.job.job_id}", error, 0)
                ok = False
            with self._lock:
                if snooze is None:
                    self._core.fail_sent(ctx, ok)
                else:
                    self._core.snooze_sent(ctx, ok)
        if plan.completions:
            if self._claiming.locked():  # the claim loop is claiming: the completions alone
                done, jobs = await self._complete_batch(plan.completions, 0)
            else:
                async with self._claiming:
                    with self._lock:
                        size = self._core.claim_size()
                    done, jobs = await self._complete_batch(plan.completions, size)
                    self._hand_out(jobs)
            with self._lock:
                self._core.completed(plan.completions, done)
        with self._lock:
            self._core.forget(batch)

    async def _complete_batch(
        self, completions: list[tuple[AsyncJobContext, Any]], claim: int
    ) -> tuple[set[int], list[Job]]:
        """``ai.complete_jobs`` for a batch, or with ``claim`` > 0 ``ai.complete_and_claim`` (the
        next claim of up to ``claim`` jobs in the same round trip and transaction), sent again
        after a lost connection until the database answers (the worker's shutdown ends the wait):
        a completion under the same tokens is idempotent (the retry answers with the jobs the first
        try completed), the claim's request id makes a retry answer with the same jobs, and a
        database outage does not count against a lease, so the answer says which leases were
        really lost. After any other error, tried again while half the lease lasts, then given up:
        the jobs run again when their leases expire (a statement that failed claimed nothing)."""
        backoff = self._core.backoff()
        first_try = time.monotonic()
        batch = [(c.job.job_id, c.job.fencing_token, r) for c, r in completions]
        request_id = new_request_id()
        while True:
            try:
                if claim > 0:
                    claim_start = time.monotonic()
                    done, jobs = await self.client.complete_and_claim(
                        self.worker_id, self.lease, self.queue, claim, batch, request_id
                    )
                    if self._core.telemetry is not None:
                        self._core.telemetry.claim_took(time.monotonic() - claim_start, "complete_and_claim")
                    return set(done), jobs
                return set(await self.client.complete_jobs(batch)), []
            except Exception as error:
                if not self._core.retry_completion(error, first_try, time.monotonic()):
                    log.error("complete_jobs failed; the jobs run again when their leases expire", exc_info=error)
                    return set(), []
                delay = backoff.next(error)
                _log_failure("complete_jobs", error, delay)
                await self._check_pool(error)
                await asyncio.sleep(delay)

    async def _check_pool(self, error: BaseException) -> None:
        """After a lost connection: the pool's idle connections are checked (after a restart they
        are all dead), so the next try gets a live one or a new one at once."""
        if is_connection_error(error):
            with suppress(Exception):
                await self.pool.check()

    async def _closed_within(self, seconds: float) -> bool:
        """Waits up to ``seconds`` for the worker to close; True when it has."""
        assert self._closed is not None
        if True:  # ASYNC
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._closed.wait(), seconds)
            return self._closed.is_set()
        else:
            return self._closed.wait(seconds)

    async def _renew_loop(self) -> None:
        core = self._core
        backoff = core.backoff()
        pause = core.renew_tick
        while not await self._closed_within(pause):
            pause = core.renew_tick
            now = time.monotonic()
            with self._lock:
                due = core.due(now)
            # One statement renews every due lease (ai.renew_leases); a lost one is left out.
            for batch in due:
                try:
                    renewed = await self.client.renew_leases(
                        self.worker_id, [(c.job.job_id, c.job.fencing_token) for c in batch], self.lease
                    )
                    backoff.reset()
                except Exception as error:  # the next round tries again, after a backoff
                    pause = core.renew_pause_after_error(backoff)
                    _log_failure("renew_leases", error, pause)
                    break
                with self._lock:
                    core.renewed(batch, renewed, now)

    async def _listen_loop(self) -> None:
        assert self._wake is not None and self._closed is not None
        backoff = self._core.backoff()
        guard = _ListenGuard()  # a thread of its own (it sees an event loop that stopped running too)
        while not self._closed.is_set():
            try:
                conninfo, kwargs = await _alisten_target(self.pool, self.listen_conninfo)
                async with await psycopg.AsyncConnection.connect(conninfo, **kwargs) as conn:
                    cur = await conn.execute("select ai.queue_channel(%s)", (self.queue,), prepare=False)
                    row = await cur.fetchone()
                    if row is None:
                        raise errors.AgentStateError("ai.queue_channel returned no row")
                    await conn.execute(_listen_statement(row[0]), prepare=False)
                    backoff.reset()
                    guard.attach(conn.pgconn.socket)
                    try:
                        while not self._closed.is_set():
                            guard.reading()
                            async for _note in conn.notifies(timeout=0.5):
                                self._wake.set()
                    finally:
                        guard.detach()
            except Exception as error:  # polling goes on meanwhile
                delay = self._core.listen_delay(backoff)
                if is_connection_error(error):  # the database is probed, not waited for: LISTEN is back with the poll
                    delay = min(delay, max(self.poll_interval, RECONNECT_PROBE))
                _log_failure("LISTEN", error, delay)
                await self._closed_within(delay)
        guard.close()

    async def _liveness_loop(self) -> None:
        """Keeps the worker's liveness hold (``ai.hold_worker_liveness``: a session advisory lock
        keyed by its worker_id) on a direct connection of its own (``listen_conninfo``, else the
        pool's), taken again on a new connection as soon as that one is lost; given up at close.
        A claim takes the running jobs of a worker whose hold has been free for half a second
        over, whatever their lease (docs/queue.md, "Dead workers"). Behind a transaction pooler
        it takes none (the lock would stay on a server connection that other clients share): the
        lease alone decides for this worker then."""
        assert self._closed is not None
        backoff = self._core.backoff()
        while not self._closed.is_set():
            try:
                conninfo, kwargs = await _alisten_target(self.pool, self.listen_conninfo)
                async with await psycopg.AsyncConnection.connect(conninfo, **kwargs) as conn:
                    if await abehind_pooler(conn):
                        log.warning(
                            "worker %s: its liveness connection goes through a pooler, so it takes no liveness"
                            " hold (its jobs wait out their leases if it dies): give listen_conninfo a direct"
                            " connection",
                            self.worker_id,
                        )
                        return
                    while True:
                        cur = await conn.execute("select ai.hold_worker_liveness(%s)", (self.worker_id,), prepare=False)
                        row = await cur.fetchone()
                        if row is not None and row[0]:
                            break
                        if await self._closed_within(LIVENESS_CHECK):  # held elsewhere: the same worker_id twice
                            return
                    backoff.reset()
                    # Waits on the socket: a connection the server closes raises here at once, and
                    # the hold is taken again on a new one (a claim waits half a second before it
                    # takes a worker whose hold is free for dead).
                    while not self._closed.is_set():
                        async for _note in conn.notifies(timeout=LIVENESS_CHECK):
                            pass
                    await conn.execute("select ai.release_worker_liveness(%s)", (self.worker_id,), prepare=False)
            except Exception as error:  # its jobs keep their leases meanwhile
                delay = backoff.next(error)
                _log_failure("liveness hold", error, delay)
                await self._closed_within(delay)

    async def _shut_down(self) -> None:
        """Release unstarted jobs, give running handlers grace_period, then release theirs (the
        async worker cancels their tasks too)."""
        assert self._todo is not None and self._wake is not None
        while True:
            with self._lock:  # the completer hands out its claim under the lock (_hand_out)
                try:
                    ctx = self._todo.get_nowait()
                except asyncio.QueueEmpty:
                    break
                if ctx is not None:
                    self._core.unstarted(ctx)
            if ctx is not None:
                await self._release(ctx)
        for _ in range(self.concurrency):
            self._todo.put_nowait(None)  # each handler ends after its current job
        if True:  # ASYNC
            if self._handlers:
                await asyncio.wait(self._handlers, timeout=self.grace_period)
            for ctx in self._core.overdue():  # their writes stop here (ctx refuses), the job goes back to PENDING
                ctx._lose()
            self._cancelling = True
            for task in self._handlers:
                task.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)
            overdue = self._core.overdue()
        else:
            deadline = self._core.grace_deadline(time.monotonic())
            while time.monotonic() < deadline:
                with self._lock:
                    if self._core.handlers_done():
                        return
                self._wake.wait(0.01)
            with self._lock:
                overdue = self._core.overdue()
        for ctx in overdue:  # their writes stop here (ctx refuses), the job goes back to PENDING
            await self._release(ctx)

    async def _release_late(self) -> None:
        """Releases what a claim took as the worker stopped (_hand_out)."""
        with self._lock:
            late, self._late = self._late, []
        for ctx in late:
            await self._release(ctx)

    async def _release(self, ctx: AsyncJobContext) -> None:
        ctx._lose()
        try:
            await self.client.release_job(ctx.job.job_id, ctx.job.fencing_token)
            outcome: Literal["released", "lost", "error"] = "released"
        except (errors.LeaseLost, errors.NotFound):
            outcome = "lost"
        except Exception as error:  # its lease expires instead
            _log_failure(f"release_job for job {ctx.job.job_id}", error, 0)
            outcome = "error"
        with self._lock:
            self._core.released(ctx, outcome)


# </async>


# <sync> generated by scripts/async_to_sync.py from the <async> block above: do not edit
class Worker:
    """Runs ``handler(job, ctx)`` for the jobs of one queue, ``concurrency`` at a time: the async
    worker as tasks of its event loop (``await handler(job, ctx)``), the sync one in threads.

    ``pool`` is a psycopg_pool ``ConnectionPool`` of a member of ai_service; it needs a
    connection per handler plus two (claims and completions), and the worker opens two more, for
    LISTEN and for its liveness hold (to ``listen_conninfo`` when given, else to the pool's; a
    direct connection, or its jobs wait out their leases when it dies: ``liveness``, docs/queue.md
    "Dead workers"). Up to ``concurrency + prefetch`` jobs are held at once (``prefetch`` defaults
    to ``concurrency``; many short jobs go faster with 16 or more). Database errors in its loops
    are logged and retried after a backoff of at most ``max_backoff`` seconds. Every decision
    (claims, renewals, backoff, shutdown) is made by the same core (agent_state/_worker_core.py).
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
        liveness: bool = True,
    ) -> None:
        self._core: WorkerCore[JobContext] = WorkerCore(
            concurrency=concurrency,
            prefetch=prefetch,
            lease=lease,
            poll_interval=poll_interval,
            grace_period=grace_period,
            max_backoff=max_backoff,
        )
        self.pool = pool
        self.client = Client(pool, pool_timeout=CONTROL_POOL_TIMEOUT)  # the loops' own calls
        #: The handlers' calls (``ctx``): they wait for a pool connection as the pool says.
        self.handler_client = Client(pool)
        if pool.reconnect_timeout > POOL_RECONNECT_TIMEOUT:  # its doubling waits must not govern recovery
            pool.reconnect_timeout = POOL_RECONNECT_TIMEOUT
        self.handler = handler
        self.queue = queue
        self.concurrency = concurrency
        self.lease = lease
        self.worker_id = worker_id or _default_worker_id()
        self._core.telemetry = worker_telemetry(queue, self.worker_id)  # None when tracing is off
        self.capacity = self._core.capacity
        self.poll_interval = poll_interval
        self.grace_period = grace_period
        self.listen = listen
        self.listen_conninfo = listen_conninfo
        self.max_backoff = max_backoff
        self.liveness = liveness
        self.stats = self._core.stats
        #: held by whoever claims (the claim loop, or the completer with its completions): one
        #: claim at a time, so that a retried claim's request id is the worker's last one
        self._claiming = threading.Lock()
        self._completing = False  # the completer holds a batch: the claim goes with it
        self._late: list[JobContext] = []  # claimed by the completer as the worker stopped
        self._lock = threading.Lock()
        self._todo = queue_module.Queue[JobContext | None]()
        self._done = queue_module.Queue[tuple[JobContext, Any] | None]()
        self._wake = threading.Event()
        self._closed = threading.Event()  # renewals and LISTEN end too

    # -- control ----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop claiming; ``run`` then finishes or releases what it holds and returns."""
        # No lock: the phase is one attribute, set atomically (the sync SIGTERM handler calls this
        # from a thread of its own: _install_signals).
        self._core.stop()
        if self._wake is not None:
            self._wake.set()

    def run(self, *, drain: bool = False, install_signal_handlers: bool = True) -> WorkerStats:
        """Works until ``stop()`` (or SIGTERM/SIGINT); with ``drain``, also when nothing is left to claim."""
        previous = _install_signals(self.stop) if install_signal_handlers else {}
        threads = [
            threading.Thread(target=self._complete_loop, name="agent-state-complete", daemon=True),
            threading.Thread(target=self._renew_loop, name="agent-state-renew", daemon=True),
        ]
        if self.listen:
            threads.append(threading.Thread(target=self._listen_loop, name="agent-state-listen", daemon=True))
        if self.liveness:
            threads.append(threading.Thread(target=self._liveness_loop, name="agent-state-liveness", daemon=True))
        executor = ThreadPoolExecutor(self.concurrency, thread_name_prefix="agent-state-handler")
        for _ in range(self.concurrency):
            executor.submit(self._handler_loop)
        for thread in threads:
            thread.start()
        try:
            self._claim_loop(drain)
        finally:
            self.stop()
            self._shut_down()
            executor.shutdown(wait=False, cancel_futures=True)
            self._done.put(None)  # the completer flushes what is left, then ends
            threads[0].join(timeout=30)
            with self._lock:
                self._core.close()
            self._closed.set()
            for thread in threads[1:]:
                thread.join(timeout=5)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return self.stats

    # -- the loops --------------------------------------------------------------------------------

    def _claim_loop(self, drain: bool) -> None:
        core = self._core
        assert self._todo is not None
        backoff = core.backoff()
        request_id: str | None = None
        while True:
            with self._lock:
                if core.stopping:
                    return
                free = core.claim_size()
                held_before = bool(core.held)  # idle only if nothing of ours ran while we looked
            # Handlers finished and the completer sends their completions: the claim goes with
            # them (ai.complete_and_claim, one round trip); the completer wakes this loop after.
            if free <= 0 or self._completing or not self._done_empty():
                self._wait_wake(self.poll_interval)
                continue
            # One request id until a claim is answered: a claim whose answer was lost with the
            # connection is asked again under it, and answers with the jobs it took.
            request_id = request_id or new_request_id()
            try:
                with self._claiming:  # the completer may have claimed meanwhile: count again
                    with self._lock:
                        free = core.claim_size()
                        held_before = bool(core.held)
                    claim_start = time.monotonic()
                    jobs = (
                        self.client.claim_jobs(self.worker_id, self.lease, self.queue, free, request_id)
                        if free > 0
                        else []
                    )
                    if free > 0 and self._core.telemetry is not None:
                        self._core.telemetry.claim_took(time.monotonic() - claim_start, "claim_jobs")
            except Exception as error:  # any database error: log, back off, go on
                delay = backoff.next(error)
                _log_failure("claim_jobs", error, delay)
                self._check_pool(error)
                self._wait_wake(delay)
                continue
            if free <= 0:
                continue
            request_id = None
            backoff.reset()
            self._hand_out(jobs)
            self._release_late()
            if jobs:
                continue
            if drain and core.drained(len(jobs), held_before):
                return
            self._wait_wake(self.poll_interval)

    def _wait_wake(self, timeout: float) -> None:
        assert self._wake is not None
        self._wake.wait(timeout)
        self._wake.clear()

    def _done_empty(self) -> bool:
        assert self._done is not None
        return self._done.empty()

    def _hand_out(self, jobs: list[Job]) -> None:
        """Claimed jobs go to the handlers; claimed by the completer as the worker stops, they are
        released instead (shutdown may have emptied the handlers' queue already)."""
        assert self._todo is not None
        contexts = [JobContext(self, job) for job in jobs]
        with self._lock:  # shutdown empties the queue under the lock once stopping: nothing is left behind
            self._core.claimed(contexts, time.monotonic())
            late = self._core.stopping
            for ctx in contexts:
                if late:
                    self._core.unstarted(ctx)
                    self._late.append(ctx)
                else:
                    self._todo.put_nowait(ctx)

    def _handler_loop(self) -> None:
        assert self._todo is not None and self._done is not None and self._wake is not None
        while True:
            ctx = self._todo.get()
            if ctx is None:
                return
            outcome: Any = None
            with self._lock:
                start = self._core.start(ctx, time.monotonic())
            if start == "release":  # stopping: it never starts
                self._release(ctx)
                continue
            try:
                if start == "run":
                    with job_log_context(ctx.job), attempt_scope(ctx):
                        outcome = self.handler(ctx.job, ctx)
            except errors.LeaseLost as error:
                ctx._refused(error)
                outcome = LOST
            except Exception as error:  # the handler's failure is the job's failure
                outcome = Failure(error)
            # Queued before it is booked done, under the lock: shutdown waits for handlers_done()
            # and then queues the completer's end marker, which must come after this outcome.
            with self._lock:
                outcome = self._core.outcome(ctx, outcome, time.monotonic())  # past its deadline: timed out
                self._done.put_nowait((ctx, outcome))
                self._core.handler_done(ctx)
            self._wake.set()

    def _complete_loop(self) -> None:
        assert self._done is not None
        while True:
            first = self._done.get()
            if first is None:
                self._release_late()
                return
            batch = [first]
            while len(batch) < COMPLETE_BATCH:
                try:
                    item = self._done.get_nowait()
                except queue_module.Empty:
                    break
                if item is None:
                    self._done.put_nowait(None)
                    break
                batch.append(item)
            self._completing = True
            try:
                self._finish(batch)
            except Exception:  # never dies: what was not finished runs again after its lease
                log.exception("finishing %d jobs", len(batch))
            finally:
                self._completing = False
            self._release_late()
            assert self._wake is not None
            self._wake.set()  # the claim loop claims what this batch's claim left free

    def _finish(self, batch: list[tuple[JobContext, Any]]) -> None:
        with self._lock:
            plan = self._core.settle(batch)
        # failures (fail_job) and snoozes (snooze_job), one call each
        for ctx, what in [*plan.failures, *plan.snoozes]:
            snooze = what if isinstance(what, Snooze) else None
            try:
                if snooze is None:
                    self.client.fail_job(ctx.job.job_id, ctx.job.fencing_token, str(what))
                else:
                    self.client.snooze_job(ctx.job.job_id, ctx.job.fencing_token, snooze.when())
                ok = True
            except errors.LeaseLost:
                ok = False
            except Exception as error:  # the job runs again when its lease expires
                _log_failure(f"{'fail_job' if snooze is None else 'snooze_job'} for job {ctx.job.job_id}", error, 0)
                ok = False
            with self._lock:
                if snooze is None:
                    self._core.fail_sent(ctx, ok)
                else:
                    self._core.snooze_sent(ctx, ok)
        if plan.completions:
            if self._claiming.locked():  # the claim loop is claiming: the completions alone
                done, jobs = self._complete_batch(plan.completions, 0)
            else:
                with self._claiming:
                    with self._lock:
                        size = self._core.claim_size()
                    done, jobs = self._complete_batch(plan.completions, size)
                    self._hand_out(jobs)
            with self._lock:
                self._core.completed(plan.completions, done)
        with self._lock:
            self._core.forget(batch)

    def _complete_batch(self, completions: list[tuple[JobContext, Any]], claim: int) -> tuple[set[int], list[Job]]:
        """``ai.complete_jobs`` for a batch, or with ``claim`` > 0 ``ai.complete_and_claim`` (the
        next claim of up to ``claim`` jobs in the same round trip and transaction), sent again
        after a lost connection until the database answers (the worker's shutdown ends the wait):
        a completion under the same tokens is idempotent (the retry answers with the jobs the first
        try completed), the claim's request id makes a retry answer with the same jobs, and a
        database outage does not count against a lease, so the answer says which leases were
        really lost. After any other error, tried again while half the lease lasts, then given up:
        the jobs run again when their leases expire (a statement that failed claimed nothing)."""
        backoff = self._core.backoff()
        first_try = time.monotonic()
        batch = [(c.job.job_id, c.job.fencing_token, r) for c, r in completions]
        request_id = new_request_id()
        while True:
            try:
                if claim > 0:
                    claim_start = time.monotonic()
                    done, jobs = self.client.complete_and_claim(
                        self.worker_id, self.lease, self.queue, claim, batch, request_id
                    )
                    if self._core.telemetry is not None:
                        self._core.telemetry.claim_took(time.monotonic() - claim_start, "complete_and_claim")
                    return set(done), jobs
                return set(self.client.complete_jobs(batch)), []
            except Exception as error:
                if not self._core.retry_completion(error, first_try, time.monotonic()):
                    log.error("complete_jobs failed; the jobs run again when their leases expire", exc_info=error)
                    return set(), []
                delay = backoff.next(error)
                _log_failure("complete_jobs", error, delay)
                self._check_pool(error)
                time.sleep(delay)

    def _check_pool(self, error: BaseException) -> None:
        """After a lost connection: the pool's idle connections are checked (after a restart they
        are all dead), so the next try gets a live one or a new one at once."""
        if is_connection_error(error):
            with suppress(Exception):
                self.pool.check()

    def _closed_within(self, seconds: float) -> bool:
        """Waits up to ``seconds`` for the worker to close; True when it has."""
        assert self._closed is not None
        return self._closed.wait(seconds)

    def _renew_loop(self) -> None:
        core = self._core
        backoff = core.backoff()
        pause = core.renew_tick
        while not self._closed_within(pause):
            pause = core.renew_tick
            now = time.monotonic()
            with self._lock:
                due = core.due(now)
            # One statement renews every due lease (ai.renew_leases); a lost one is left out.
            for batch in due:
                try:
                    renewed = self.client.renew_leases(
                        self.worker_id, [(c.job.job_id, c.job.fencing_token) for c in batch], self.lease
                    )
                    backoff.reset()
                except Exception as error:  # the next round tries again, after a backoff
                    pause = core.renew_pause_after_error(backoff)
                    _log_failure("renew_leases", error, pause)
                    break
                with self._lock:
                    core.renewed(batch, renewed, now)

    def _listen_loop(self) -> None:
        assert self._wake is not None and self._closed is not None
        backoff = self._core.backoff()
        guard = _ListenGuard()  # a thread of its own (it sees an event loop that stopped running too)
        while not self._closed.is_set():
            try:
                conninfo, kwargs = _listen_target(self.pool, self.listen_conninfo)
                with psycopg.Connection.connect(conninfo, **kwargs) as conn:
                    cur = conn.execute("select ai.queue_channel(%s)", (self.queue,), prepare=False)
                    row = cur.fetchone()
                    if row is None:
                        raise errors.AgentStateError("ai.queue_channel returned no row")
                    conn.execute(_listen_statement(row[0]), prepare=False)
                    backoff.reset()
                    guard.attach(conn.pgconn.socket)
                    try:
                        while not self._closed.is_set():
                            guard.reading()
                            for _note in conn.notifies(timeout=0.5):
                                self._wake.set()
                    finally:
                        guard.detach()
            except Exception as error:  # polling goes on meanwhile
                delay = self._core.listen_delay(backoff)
                if is_connection_error(error):  # the database is probed, not waited for: LISTEN is back with the poll
                    delay = min(delay, max(self.poll_interval, RECONNECT_PROBE))
                _log_failure("LISTEN", error, delay)
                self._closed_within(delay)
        guard.close()

    def _liveness_loop(self) -> None:
        """Keeps the worker's liveness hold (``ai.hold_worker_liveness``: a session advisory lock
        keyed by its worker_id) on a direct connection of its own (``listen_conninfo``, else the
        pool's), taken again on a new connection as soon as that one is lost; given up at close.
        A claim takes the running jobs of a worker whose hold has been free for half a second
        over, whatever their lease (docs/queue.md, "Dead workers"). Behind a transaction pooler
        it takes none (the lock would stay on a server connection that other clients share): the
        lease alone decides for this worker then."""
        assert self._closed is not None
        backoff = self._core.backoff()
        while not self._closed.is_set():
            try:
                conninfo, kwargs = _listen_target(self.pool, self.listen_conninfo)
                with psycopg.Connection.connect(conninfo, **kwargs) as conn:
                    if behind_pooler(conn):
                        log.warning(
                            "worker %s: its liveness connection goes through a pooler, so it takes no liveness"
                            " hold (its jobs wait out their leases if it dies): give listen_conninfo a direct"
                            " connection",
                            self.worker_id,
                        )
                        return
                    while True:
                        cur = conn.execute("select ai.hold_worker_liveness(%s)", (self.worker_id,), prepare=False)
                        row = cur.fetchone()
                        if row is not None and row[0]:
                            break
                        if self._closed_within(LIVENESS_CHECK):  # held elsewhere: the same worker_id twice
                            return
                    backoff.reset()
                    # Waits on the socket: a connection the server closes raises here at once, and
                    # the hold is taken again on a new one (a claim waits half a second before it
                    # takes a worker whose hold is free for dead).
                    while not self._closed.is_set():
                        for _note in conn.notifies(timeout=LIVENESS_CHECK):
                            pass
                    conn.execute("select ai.release_worker_liveness(%s)", (self.worker_id,), prepare=False)
            except Exception as error:  # its jobs keep their leases meanwhile
                delay = backoff.next(error)
                _log_failure("liveness hold", error, delay)
                self._closed_within(delay)

    def _shut_down(self) -> None:
        """Release unstarted jobs, give running handlers grace_period, then release theirs (the
        async worker cancels their tasks too)."""
        assert self._todo is not None and self._wake is not None
        while True:
            with self._lock:  # the completer hands out its claim under the lock (_hand_out)
                try:
                    ctx = self._todo.get_nowait()
                except queue_module.Empty:
                    break
                if ctx is not None:
                    self._core.unstarted(ctx)
            if ctx is not None:
                self._release(ctx)
        for _ in range(self.concurrency):
            self._todo.put_nowait(None)  # each handler ends after its current job
        deadline = self._core.grace_deadline(time.monotonic())
        while time.monotonic() < deadline:
            with self._lock:
                if self._core.handlers_done():
                    return
            self._wake.wait(0.01)
        with self._lock:
            overdue = self._core.overdue()
        for ctx in overdue:  # their writes stop here (ctx refuses), the job goes back to PENDING
            self._release(ctx)

    def _release_late(self) -> None:
        """Releases what a claim took as the worker stopped (_hand_out)."""
        with self._lock:
            late, self._late = self._late, []
        for ctx in late:
            self._release(ctx)

    def _release(self, ctx: JobContext) -> None:
        ctx._lose()
        try:
            self.client.release_job(ctx.job.job_id, ctx.job.fencing_token)
            outcome: Literal["released", "lost", "error"] = "released"
        except (errors.LeaseLost, errors.NotFound):
            outcome = "lost"
        except Exception as error:  # its lease expires instead
            _log_failure(f"release_job for job {ctx.job.job_id}", error, 0)
            outcome = "error"
        with self._lock:
            self._core.released(ctx, outcome)


# </sync>
