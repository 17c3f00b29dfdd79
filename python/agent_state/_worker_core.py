"""What a worker decides, without I/O: shared by :class:`~agent_state.Worker` and
:class:`~agent_state.AsyncWorker`.

Why one core and two thin drivers, and not code generated from one side (psycopg writes its
async modules and generates the sync ones with an AST rewrite, ``tools/async_to_sync.py``):
psycopg's code is almost all I/O, so a rewrite keeps everything in step. A worker is the other
way round: its I/O is six client calls (``claim_jobs``, ``renew_leases``, ``complete_jobs``,
``fail_job``, ``release_job``, LISTEN), and everything else is decisions:

- how many jobs to claim (``concurrency + prefetch`` held at once; while claimed jobs wait for a
  handler, the next claim waits until half the prefetch is free, so that claims come in batches
  and not one round trip per finished job; claims stop when stopping);
- when a drained worker is done (nothing claimed and nothing of ours held before the claim);
- whether a claimed job still runs (not if its lease is already known lost);
- which leases are due for renewal (older than a third of the lease, not lost), in batches of
  :data:`RENEW_BATCH`, and what a renewal answer means (left out = lost);
- how a finished handler is booked (finished in the handler: completed, failed or paused;
  lease lost; failed by an exception: ``fail_job``; else: completed in a batch of at most
  :data:`COMPLETE_BATCH` through ``complete_jobs``), and how long a failing batch is retried:
  after a lost connection (or an answer lost with it) until the database answers, since a
  completion under the job's token is idempotent and a database outage does not count against a
  lease (docs/queue.md, "Leases and outages"), the answer then telling which leases were lost;
  after any other error while half the lease lasts;
- the backoff schedule of every loop (exponential with jitter, capped at ``max_backoff``;
  LISTEN never retries faster than the poll);
- deadlines (docs/queue.md, "Deadlines"): when a claimed job's attempt must end (its
  ``attempt_deadline`` as a time on this worker's monotonic clock, from the claim's answer), that a
  lease is never renewed past it, that a job whose deadline passed before a handler took it is not
  started, and that a handler still running at its deadline is booked ``timed_out`` (the async
  worker cancels it; a thread sees ``ctx.cancelled()`` and its context refuses every write);
- snoozes: a handler that raised :class:`Snooze` (or called ``ctx.snooze``) gives the job back
  until a later time without spending an attempt (``ai.snooze_job``);
- the shutdown state machine: RUNNING -> STOPPING (no claim; unstarted jobs released at once;
  running handlers get ``grace_period``) -> CLOSED (what still runs is released: its context
  refuses every write, the job goes back to PENDING without counting an attempt).

Those live here, once, as plain methods over plain state (:class:`WorkerCore`, the common part
of the job contexts in :class:`JobState`). The drivers only wait (threads and
``threading.Event`` in ``Worker``; tasks and ``asyncio`` primitives in ``AsyncWorker``), call the
client, and hand the answers back to the core. The sync driver calls the core under its lock;
the async one from its event loop only. A test of the decisions needs no database
(tests/python/test_worker_core.py); a test of a driver checks the I/O and the waiting.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Generic, Literal, TypeVar

from . import errors
from .models import Job
from .retry import Backoff, is_connection_error

#: The most leases one ai.renew_leases statement renews (its limit is 1000).
RENEW_BATCH = 500
#: The most completions one ai.complete_jobs statement sends.
COMPLETE_BATCH = 1000
#: How early a timer may fire and still be the attempt's deadline (seconds).
DEADLINE_SLACK = 0.05

Counter = Literal["claimed", "completed", "failed", "lost", "released", "paused", "timed_out", "snoozed"]


@dataclass
class WorkerStats:
    """What a worker did: jobs claimed, completed, failed, lost (lease lost before finishing),
    released, paused for a person (``ctx.request_human``), timed out (the attempt's deadline
    passed: the server retries the job, or dead-letters it after its last attempt) and snoozed."""

    claimed: int = 0
    completed: int = 0
    failed: int = 0
    lost: int = 0
    released: int = 0
    paused: int = 0
    timed_out: int = 0
    snoozed: int = 0


class Snooze(Exception):  # an instruction to the worker, not an error
    """Raised by a handler to give its job back until later without spending an attempt (a rate
    limit's retry_after): ``raise Snooze(30)`` (seconds, or a timedelta) or ``raise
    Snooze(until=datetime)``. The worker calls ``ai.snooze_job``: the job is PENDING again, due
    then, "snoozed" in its history, and no worker takes it earlier (docs/queue.md, "Snooze")."""

    def __init__(self, seconds: float | timedelta | None = None, *, until: datetime | None = None) -> None:
        if (seconds is None) == (until is None):
            raise ValueError("Snooze takes seconds (or a timedelta) or until, one of them")
        self.delay: timedelta | None = (
            None if seconds is None else seconds if isinstance(seconds, timedelta) else timedelta(seconds=seconds)
        )
        self.until = until
        super().__init__(f"snooze until {until}" if until is not None else f"snooze for {self.delay}")

    def when(self) -> datetime | timedelta:
        """Until when: the time given, or the delay (from the database's now)."""
        return self.until if self.until is not None else self.delay or timedelta()


class JobState:
    """The part of a job context both workers share: the job, whether its lease is known lost,
    and how the handler left it (``finished``: completed, failed or paused by the handler)."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.finished = False
        self.paused = False  # request_human handed the job to a person
        self.failed = False  # the handler called ctx.fail()
        self.running = False
        self.renewed_at = 0.0  # monotonic seconds; set when claimed
        #: the attempt's deadline on this worker's monotonic clock (None: none); set when claimed
        self.deadline_at: float | None = None
        self.timed_out = False  # the attempt's deadline passed before the handler finished
        self.snoozed = False  # the handler snoozed the job (ctx.snooze)
        self._lost = False
        self.telemetry: Any = None  # the worker's WorkerTelemetry (agent_state.tracing) when tracing is on
        self.trace: Any = None  # the attempt's span and what goes with it (tracing._Attempt)

    @property
    def lease_lost(self) -> bool:
        """True once the worker knows the job is no longer held (renewal refused, released, cancelled)."""
        return self._lost

    @property
    def deadline(self) -> datetime | None:
        """When this attempt must end, on the database's clock (claimed_at + the job's timeout, or
        its total deadline if sooner); None: no deadline. No lease of the attempt reaches past it."""
        return self.job.attempt_deadline

    def time_left(self) -> float | None:
        """Seconds until the attempt's deadline (0 once it passed); None: no deadline."""
        if self.deadline_at is None:
            return None
        return max(0.0, self.deadline_at - time.monotonic())

    def cancelled(self) -> bool:
        """True once the handler should stop: the attempt's deadline passed or the lease is known
        lost. A thread handler checks it between steps (the async worker cancels its task)."""
        return self._lost or self.past_deadline(time.monotonic())

    def past_deadline(self, now: float) -> bool:
        """Whether the attempt's deadline has passed at ``now`` (monotonic seconds)."""
        return self.deadline_at is not None and now >= self.deadline_at

    def check(self) -> None:
        """Raises :class:`~agent_state.LeaseLost` if the lease is known to be lost, and
        :class:`~agent_state.DeadlineExceeded` (a LeaseLost) once the attempt's deadline passed."""
        if not self._lost and self.past_deadline(time.monotonic()):
            self.timed_out = True
            self._lost = True
        if self._lost:
            if self.timed_out:
                raise errors.DeadlineExceeded(f"job {self.job.job_id}: deadline exceeded", sqlstate="AS006")
            raise errors.LeaseLost(f"job {self.job.job_id}: lease lost", sqlstate="AS006")

    def _lose(self) -> None:
        self._lost = True

    def _mark_lost(self, error: BaseException) -> None:
        if isinstance(error, errors.LeaseLost):
            self._lost = True
            self._refused(error)

    def _refused(self, error: BaseException) -> None:
        """A fence refusal (LeaseLost) met: counted by the worker's instruments, each error once."""
        if self.telemetry is not None:
            self.telemetry.refused(self, error)


@dataclass(frozen=True)
class Failure:
    """A handler's outcome: it raised ``error``."""

    error: BaseException


class _Lost:
    """A handler's outcome: it raised LeaseLost."""


LOST = _Lost()


class _TimedOut:
    """A handler's outcome: the attempt's deadline passed before it finished (cancelled, or a
    thread that returned or raised too late)."""


TIMED_OUT = _TimedOut()


def error_text(error: BaseException) -> str:
    """What ``fail_job`` records for a handler's exception."""
    return f"{type(error).__name__}: {error}"[:2000]


class Phase(enum.Enum):
    RUNNING = "running"  # claims
    STOPPING = "stopping"  # no claims; running handlers get the grace period
    CLOSED = "closed"  # renewals and LISTEN end too


S = TypeVar("S", bound=JobState)


@dataclass
class Settlement(Generic[S]):
    """What the completer sends for a batch of finished handlers: failures and completions."""

    failures: list[tuple[S, str]] = field(default_factory=list)
    completions: list[tuple[S, Any]] = field(default_factory=list)
    snoozes: list[tuple[S, Snooze]] = field(default_factory=list)


class WorkerCore(Generic[S]):
    """The state and decisions of one worker (see the module docstring)."""

    def __init__(
        self,
        *,
        concurrency: int,
        prefetch: int | None,
        lease: timedelta,
        poll_interval: float,
        grace_period: float,
        max_backoff: float,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if prefetch is not None and prefetch < 0:
            raise ValueError("prefetch must be at least 0")
        self.concurrency = concurrency
        self.prefetch = concurrency if prefetch is None else prefetch
        self.capacity = concurrency + self.prefetch
        #: with claimed jobs waiting for a handler, a claim waits for this many free places
        self.refill = max(1, self.prefetch // 2)
        self.lease = lease
        self.poll_interval = poll_interval
        self.grace_period = grace_period
        self.max_backoff = max_backoff
        self.stats = WorkerStats()
        self.phase = Phase.RUNNING
        self.held: dict[int, S] = {}
        self.in_flight = 0  # claimed, handler not yet finished
        #: spans and instruments (agent_state.tracing.WorkerTelemetry), None when tracing is off
        self.telemetry: Any = None

    # -- backoff ----------------------------------------------------------------------------------

    def backoff(self) -> Backoff:
        return Backoff(first=min(0.1, self.max_backoff), cap=self.max_backoff)

    def listen_delay(self, backoff: Backoff) -> float:
        """LISTEN after an error: never sooner than the poll (polling goes on meanwhile)."""
        return max(self.poll_interval, backoff.next())

    # -- shutdown state machine -------------------------------------------------------------------

    @property
    def stopping(self) -> bool:
        return self.phase is not Phase.RUNNING

    @property
    def closed(self) -> bool:
        return self.phase is Phase.CLOSED

    def stop(self) -> None:
        if self.phase is Phase.RUNNING:
            self.phase = Phase.STOPPING

    def close(self) -> None:
        self.phase = Phase.CLOSED

    def grace_deadline(self, now: float) -> float:
        return now + self.grace_period

    def handlers_done(self) -> bool:
        return self.in_flight == 0

    def overdue(self) -> list[S]:
        """After the grace period: the jobs whose handlers still run (they are released)."""
        return [c for c in self.held.values() if c.running]

    def unstarted(self, ctx: S) -> None:
        """A claimed job that never started, taken back at shutdown (it is released)."""
        self.in_flight -= 1

    def released(self, ctx: S, outcome: Literal["released", "lost", "error"]) -> None:
        """What ``release_job`` answered (``error``: its lease expires instead)."""
        if outcome != "error":
            self.count(outcome)
        self.held.pop(ctx.job.job_id, None)
        if ctx.trace is not None and self.telemetry is not None:  # "error": its lease expires instead
            self.telemetry.ended(ctx, "released" if outcome == "released" else "lost", None, time.monotonic())

    # -- claims -----------------------------------------------------------------------------------

    def claim_size(self) -> int:
        """How many jobs the next claim asks for (0: wait for a handler to finish, or stopping):
        every free place, but while claimed jobs still wait for a handler only once half the
        prefetch is free (a claim per finished job costs a round trip per job)."""
        if self.stopping:
            return 0
        free = self.capacity - self.in_flight
        if free < self.refill and self.in_flight > self.concurrency:
            return 0
        return max(0, free)

    def claimed(self, contexts: Sequence[S], now: float) -> None:
        for ctx in contexts:
            ctx.renewed_at = now
            # the attempt's deadline, as far from now as the claim put it from its claimed_at
            # (both on the database's clock): this worker's clock needs no agreement with the server's
            ends, claimed_at = ctx.job.attempt_deadline, ctx.job.claimed_at
            if ends is not None and claimed_at is not None:
                ctx.deadline_at = now + (ends - claimed_at).total_seconds()
            self.held[ctx.job.job_id] = ctx
            if self.telemetry is not None:
                ctx.telemetry = self.telemetry
                self.telemetry.started(ctx, now)
        self.in_flight += len(contexts)
        self.stats.claimed += len(contexts)

    @staticmethod
    def drained(claimed: int, held_before: bool) -> bool:
        """``run(drain=True)`` ends when a claim found nothing and nothing of ours ran while it looked."""
        return claimed == 0 and not held_before

    # -- handlers ---------------------------------------------------------------------------------

    def start(self, ctx: S, now: float | None = None) -> Literal["run", "skip", "release"]:
        """A handler slot takes a claimed job: ``run`` it; ``skip`` it when its lease is known
        lost (booked as lost) or its deadline passed while it waited (booked as timed out);
        ``release`` it when the worker is stopping (it never started; the slot hands it back
        without counting an attempt)."""
        if self.stopping:
            self.unstarted(ctx)
            return "release"
        ctx.running = True
        if now is not None and not ctx.lease_lost and ctx.past_deadline(now):
            ctx.timed_out = True
            ctx._lose()
        return "skip" if ctx.lease_lost else "run"

    def handler_done(self, ctx: S) -> None:
        ctx.running = False
        self.in_flight -= 1

    def run_timeout(self, ctx: S, now: float) -> float | None:
        """How long the handler may run (seconds to the attempt's deadline); None: no deadline."""
        return None if ctx.deadline_at is None else max(0.0, ctx.deadline_at - now)

    def outcome(self, ctx: S, outcome: Any, now: float) -> Any:
        """What a handler's end means: past the attempt's deadline and not finished by the
        handler itself, it timed out whatever it returned or raised (the server no longer takes
        its completion: the lease ended at the deadline)."""
        # asyncio.wait_for's timer may fire a clock tick before the deadline: its TimeoutError near
        # the deadline is the deadline's
        timer = (
            isinstance(outcome, Failure)
            and isinstance(outcome.error, (TimeoutError, asyncio.TimeoutError))
            and ctx.past_deadline(now + DEADLINE_SLACK)
        )
        if not ctx.finished and (ctx.timed_out or ctx.past_deadline(now) or timer):
            ctx.timed_out = True
            ctx._lose()
            return TIMED_OUT
        return outcome

    # -- completions ------------------------------------------------------------------------------

    def settle(self, batch: Iterable[tuple[S, Any]]) -> Settlement[S]:
        """Books what the handlers finished themselves and what lost its lease; returns what the
        completer still sends (failures one by one, completions in one ``complete_jobs``)."""
        plan: Settlement[S] = Settlement()
        for ctx, outcome in batch:
            if ctx.finished:
                self.count(
                    "paused" if ctx.paused else "snoozed" if ctx.snoozed else "failed" if ctx.failed else "completed"
                )
            elif outcome is TIMED_OUT or ctx.timed_out:
                self.count("timed_out")
            elif outcome is LOST or ctx.lease_lost:
                self.count("lost")
            elif isinstance(outcome, Failure) and isinstance(outcome.error, Snooze):
                plan.snoozes.append((ctx, outcome.error))
            elif isinstance(outcome, Failure):
                plan.failures.append((ctx, error_text(outcome.error)))
            else:
                plan.completions.append((ctx, outcome))
        return plan

    def snooze_sent(self, ctx: S, ok: bool) -> None:
        """``snooze_job`` went through (ok) or not (lease lost, or an error: it runs again after its lease)."""
        if ok:
            ctx.finished = ctx.snoozed = True
        self.count("snoozed" if ok else "lost")

    def fail_sent(self, ctx: S, ok: bool) -> None:
        """``fail_job`` went through (ok) or not (lease lost, or an error: it runs again after its lease)."""
        if ok:
            ctx.finished = ctx.failed = True
        self.count("failed" if ok else "lost")

    def completed(self, completions: Sequence[tuple[S, Any]], done: set[int]) -> None:
        """What ``complete_jobs`` answered: the jobs it completed; the others were lost."""
        for ctx, _ in completions:
            if ctx.job.job_id in done:
                ctx.finished = True
                self.count("completed")
            else:
                ctx._lose()
                self.count("lost")

    def forget(self, batch: Iterable[tuple[S, Any]]) -> None:
        for ctx, outcome in batch:
            self.held.pop(ctx.job.job_id, None)
            if ctx.trace is not None and self.telemetry is not None:
                ended = (
                    "paused" if ctx.paused else "snoozed" if ctx.snoozed else "failed" if ctx.failed
                    else "completed" if ctx.finished else "timed_out" if ctx.timed_out else "lost"
                )  # fmt: skip
                error = outcome.error if isinstance(outcome, Failure) else None
                self.telemetry.ended(ctx, ended, error, time.monotonic())

    def retry_completion(self, error: BaseException, first_try: float, now: float) -> bool:
        """Whether a failed ``complete_jobs`` is sent again (``first_try``, ``now``: monotonic
        seconds): after a lost connection, or an answer lost with one (OutcomeUnknown), always
        (the same tokens: a retry answers with what the first try completed, and a database
        outage does not count against a lease: docs/queue.md, "Leases and outages"), until the
        worker is closed; after any other error, while half the lease lasts (a pooler's
        prepared-statement mix-up passes; a bug does not), then given up: the jobs run again when
        their leases expire."""
        return is_connection_error(error) or now < first_try + self.lease.total_seconds() / 2

    # -- renewals ---------------------------------------------------------------------------------

    @property
    def renew_every(self) -> float:
        """A lease is renewed once it is a third of the lease old."""
        return self.lease.total_seconds() / 3

    @property
    def renew_tick(self) -> float:
        """How often the renewer looks for due leases."""
        return min(self.renew_every / 4, 1.0)

    def renew_pause_after_error(self, backoff: Backoff) -> float:
        return min(backoff.next(), self.renew_every / 4)

    def due(self, now: float) -> list[list[S]]:
        """The leases to renew now, in batches of one ``renew_leases`` statement each."""
        # never past the attempt's deadline: the server caps the lease there, and a renewal after
        # it is refused anyway
        due = [
            c
            for c in self.held.values()
            if now - c.renewed_at >= self.renew_every and not c.lease_lost and not c.past_deadline(now)
        ]
        return [due[i : i + RENEW_BATCH] for i in range(0, len(due), RENEW_BATCH)]

    def renewed(self, batch: Sequence[S], renewed: Iterable[int], now: float) -> None:
        """What ``renew_leases`` answered: the jobs it renewed; the others are lost."""
        kept = set(renewed)
        for ctx in batch:
            if ctx.job.job_id in kept:
                ctx.renewed_at = now
            else:
                ctx._lose()

    # -- stats ------------------------------------------------------------------------------------

    def count(self, what: Counter) -> None:
        setattr(self.stats, what, getattr(self.stats, what) + 1)
