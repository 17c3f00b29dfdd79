"""The queue functions of the client (``ai.enqueue_job`` ... ``ai.archive_jobs``), sync and async.

:class:`~agent_state.Client` and :class:`~agent_state.AsyncClient` inherit these methods; each is
one round trip, ``select * from ai.<function>(...)``, like every other client method.

Claims, completions and enqueues are safe to retry by construction (docs/queue.md, "Lost
answers"): a claim carries a request id (one per call, made here when the caller gives none), and
the same call again answers with the jobs the first one took; a completion under the same token
answers again with the job it completed; an enqueue without an idempotency key gets one here, so
a retry finds the first job. A client with a retry policy runs them again after a lost connection
(agent_state.retry.IDEMPOTENT) instead of raising OutcomeUnknown.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from psycopg.types.json import Jsonb

from ._calls import Call, T
from .models import Job, JobAttempt, JobKeyStatus, NewJob, QueueStats, from_row
from .tracing import inject_headers

#: The most jobs one ``enqueue_jobs`` call takes (ai.enqueue_jobs raises AS003, TooLarge, beyond).
MAX_ENQUEUE_BATCH = 5000

#: The lease a claim takes when none is given (the SQL default too).
DEFAULT_LEASE = timedelta(seconds=60)


def _job(row: dict[str, Any]) -> Job:
    return from_row(Job, row)


def _scalar(row: dict[str, Any]) -> Any:
    return row["value"]


ENQUEUE_JOBS = Call("select * from ai.enqueue_jobs(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", _job)
CLAIM_JOB = Call("select * from ai.claim_job(%s, %s, %s)", _job)
CLAIM_JOBS = Call("select * from ai.claim_jobs(%s, %s, %s, %s, %s)", _job)


def _completed_or_claimed(row: dict[str, Any]) -> int | Job:
    """A row of ai.complete_and_claim: a completion (job_id and status only) or a claimed job."""
    return int(row["job_id"]) if row["status"] == "COMPLETED" else _job(row)


COMPLETE_AND_CLAIM = Call("select * from ai.complete_and_claim(%s, %s, %s, %s, %s, %s, %s, %s)", _completed_or_claimed)


def _split(rows: Sequence[int | Job]) -> tuple[list[int], list[Job]]:
    return [r for r in rows if isinstance(r, int)], [r for r in rows if isinstance(r, Job)]


RENEW_LEASE: Call[datetime] = Call("select ai.renew_lease(%s, %s, %s) as value", _scalar)
RENEW_LEASES = Call(
    "select job_id, lease_expires_at from ai.renew_leases(%s, %s, %s, %s)",
    lambda r: (r["job_id"], r["lease_expires_at"]),
)
FENCED_WRITE: Call[datetime] = Call("select ai.fenced_write(%s, %s) as value", _scalar)
COMPLETE_JOB = Call("select * from ai.complete_job(%s, %s, %s)", _job)
COMPLETE_JOBS = Call("select value from ai.complete_jobs(%s, %s, %s) as value", _scalar)
FAIL_JOB = Call("select * from ai.fail_job(%s, %s, %s, %s)", _job)
RELEASE_JOB = Call("select * from ai.release_job(%s, %s)", _job)
SNOOZE_JOB = Call("select * from ai.snooze_job(%s, %s, %s)", _job)
# a delay counts from the database's clock, as every time of the queue does
SNOOZE_JOB_FOR = Call("select * from ai.snooze_job(%s, %s, ai.now() + %s)", _job)
SET_QUEUE_DEADLINES = Call("select ai.set_queue_deadlines(%s, %s, %s, %s) as value", _scalar)
CANCEL_JOB = Call("select * from ai.cancel_job(%s)", _job)
RETRY_DEAD_JOB = Call("select * from ai.retry_dead_job(%s)", _job)
GET_JOB = Call("select * from ai.get_job(%s)", _job)
QUEUE_STATS = Call("select * from ai.queue_stats(%s)", lambda r: from_row(QueueStats, r))
JOB_ATTEMPTS = Call("select * from ai.job_attempts(%s)", lambda r: from_row(JobAttempt, r))
REAP_EXPIRED: Call[int] = Call("select ai.reap_expired(%s) as value", _scalar)
ARCHIVE_JOBS: Call[int] = Call("select ai.archive_jobs(%s, %s) as value", _scalar)
SET_JOB_KEY = Call("select (ai.set_job_key(%s, %s, %s, %s, %s, %s)).queue as value", _scalar)
JOB_KEY_STATUS = Call("select * from ai.job_key_status(%s, %s, %s, %s)", lambda r: from_row(JobKeyStatus, r))


def _enqueue_call(
    thread_id: str,
    payload: Any,
    queue: str,
    run_at: datetime | None,
    priority: int,
    max_attempts: int,
    idempotency_key: str | None,
    options: Mapping[str, Any],
) -> tuple[Call[Job], tuple[Any, ...]]:
    """The call and its arguments: the options given (not None) are passed by name."""
    document = Jsonb({} if payload is None else payload)
    # Without a key of the caller's, one of the call's own: a retry after a lost answer (the same
    # arguments) finds the job the first try made instead of making another.
    once = idempotency_key if idempotency_key is not None else new_request_id()
    given = tuple(name for name, value in options.items() if value is not None)
    named = (options[name] for name in given)
    return _enqueue_sql(given), (thread_id, document, queue, run_at, priority, max_attempts, once, *named)


@functools.cache
def _enqueue_sql(named: tuple[str, ...]) -> Call[Job]:
    """``ai.enqueue_job`` with the options a job has, by name (deadlines, key, headers): a call
    without any is the 7-argument one, which a schema of 0.1.0 takes too."""
    tail = "".join(f", {name} => %s" for name in named)
    return Call(f"select * from ai.enqueue_job(%s, %s, %s, %s, %s, %s, %s{tail})", _job)


#: ai.enqueue_job without options (retry.py reads whether it is keyed from its arguments)
ENQUEUE_JOB = _enqueue_sql(())


def _headers(headers: Mapping[str, str] | None) -> Jsonb | None:
    """The job's headers: the caller's over the current trace context (W3C traceparent and
    tracestate, agent_state.tracing), or None."""
    merged = inject_headers(headers)
    return None if merged is None else Jsonb(merged)


def new_request_id() -> str:
    """A fresh request id (a claim's, or the idempotency key of an enqueue without one)."""
    return str(uuid.uuid4())


def _enqueue_jobs_args(
    jobs: Sequence[NewJob], queue: str, max_attempts: int, headers: Mapping[str, str] | None = None
) -> tuple[Any, ...]:
    return (
        [j.thread_id for j in jobs],
        [Jsonb({} if j.payload is None else j.payload) for j in jobs],
        queue,
        [j.run_at for j in jobs],
        [j.priority for j in jobs],
        # as enqueue_job: a job without a key of the caller's gets one of the call's own, so a
        # retry of the whole batch after a lost answer makes no job twice
        [j.idempotency_key if j.idempotency_key is not None else new_request_id() for j in jobs],
        max_attempts,
        [j.timeout for j in jobs],
        [j.deadline for j in jobs],
        [j.start_by for j in jobs],
        [j.key for j in jobs],
        _headers(headers),
    )


def _complete_jobs_args(done: Sequence[tuple[int, int, Any]]) -> tuple[Any, ...]:
    return ([d[0] for d in done], [d[1] for d in done], [None if d[2] is None else Jsonb(d[2]) for d in done])


def _renew_leases_args(worker_id: str, held: Sequence[tuple[int, int]], lease: timedelta) -> tuple[Any, ...]:
    return (worker_id, [h[0] for h in held], [h[1] for h in held], lease)


def _optional_json(value: Any) -> Jsonb | None:
    return None if value is None else Jsonb(value)


# <async>
class AsyncQueueMethods:
    """The queue half of :class:`~agent_state.AsyncClient`."""

    async def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by AsyncClient
        raise NotImplementedError

    async def enqueue_job(
        self,
        thread_id: str,
        payload: Any = None,
        queue: str = "default",
        run_at: datetime | None = None,
        priority: int = 0,
        max_attempts: int = 5,
        idempotency_key: str | None = None,
        timeout: timedelta | None = None,
        deadline: datetime | None = None,
        start_by: datetime | None = None,
        key: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Job:
        """``ai.enqueue_job``: a PENDING job for the thread; the first job again for a reused key.
        Without a key, the call makes one (a random UUID), so that its retry never duplicates.
        Deadlines (None: the queue's default, else none; docs/queue.md, "Deadlines"): ``timeout``
        each attempt's run timeout, ``deadline`` the total deadline across attempts, ``start_by``
        the start deadline. InvalidArgument for a timeout not positive, a deadline not after run_at,
        a start_by before it. ``key`` is the job's fairness and limit key (None: the owner's own;
        docs/queue.md, "Fair shares and limits"). ``headers`` (strings) go with the job, over the
        current OpenTelemetry trace context, which is stored there too (``traceparent``,
        ``tracestate``: the run's spans continue its trace)."""
        call, args = _enqueue_call(
            thread_id,
            payload,
            queue,
            run_at,
            priority,
            max_attempts,
            idempotency_key,
            {"timeout": timeout, "deadline": deadline, "start_by": start_by, "key": key, "headers": _headers(headers)},
        )
        return (await self._rows(call, args))[0]

    async def enqueue_jobs(
        self,
        jobs: Sequence[NewJob],
        queue: str = "default",
        max_attempts: int = 5,
        headers: Mapping[str, str] | None = None,
    ) -> list[Job]:
        """``ai.enqueue_jobs``: up to MAX_ENQUEUE_BATCH (5,000) jobs of one queue in one round trip;
        one Job per NewJob, in order, each answered as ``enqueue_job`` answers it (a reused key: the
        first job). One bad job fails the call and writes nothing; TooLarge over the maximum. A job
        without a key gets one (a random UUID), so that a retry of the call never duplicates.
        ``headers``, with the current trace context, go with every job (as ``enqueue_job``'s)."""
        if not jobs:
            return []
        return await self._rows(ENQUEUE_JOBS, _enqueue_jobs_args(jobs, queue, max_attempts, headers))

    async def claim_job(self, worker_id: str, lease: timedelta = DEFAULT_LEASE, queue: str = "default") -> Job | None:
        """``ai.claim_job``: the next due job (or expired lease) of the queue, leased to worker_id."""
        rows = await self._rows(CLAIM_JOB, (worker_id, lease, queue))
        return rows[0] if rows else None

    async def claim_jobs(
        self, worker_id: str, lease: timedelta, queue: str, max_jobs: int, request_id: str | None = None
    ) -> list[Job]:
        """``ai.claim_jobs``: up to max_jobs jobs in one round trip, at most one per thread. Under
        ``request_id`` (a new one when None): the same call again answers with the same jobs."""
        args = (worker_id, lease, queue, max_jobs, request_id or new_request_id())
        return await self._rows(CLAIM_JOBS, args)

    async def renew_lease(self, job_id: int, fencing_token: int, lease: timedelta = DEFAULT_LEASE) -> datetime:
        """``ai.renew_lease``: the new expiry; raises LeaseLost when the job is no longer held."""
        return (await self._rows(RENEW_LEASE, (job_id, fencing_token, lease)))[0]

    async def renew_leases(
        self, worker_id: str, held: Sequence[tuple[int, int]], lease: timedelta = DEFAULT_LEASE
    ) -> dict[int, datetime]:
        """``ai.renew_leases``: every (job_id, fencing_token) worker_id holds, renewed in one statement;
        returns job_id -> new expiry for those renewed. A lost lease is left out (not raised)."""
        return dict(await self._rows(RENEW_LEASES, _renew_leases_args(worker_id, held, lease)))

    async def fenced_write(self, job_id: int, fencing_token: int) -> datetime:
        """``ai.fenced_write``: call first in a transaction that writes for the job (LeaseLost if not held)."""
        return (await self._rows(FENCED_WRITE, (job_id, fencing_token)))[0]

    async def complete_job(self, job_id: int, fencing_token: int, result: Any = None) -> Job:
        """``ai.complete_job``: idempotent under the same token (the completed job again)."""
        return (await self._rows(COMPLETE_JOB, (job_id, fencing_token, _optional_json(result))))[0]

    async def complete_jobs(self, done: Sequence[tuple[int, int, Any]]) -> list[int]:
        """``ai.complete_jobs``: (job_id, fencing_token, result) triples; returns the ids completed
        (now, or before under the same token: idempotent)."""
        return await self._rows(COMPLETE_JOBS, _complete_jobs_args(done))

    async def complete_and_claim(
        self,
        worker_id: str,
        lease: timedelta,
        queue: str,
        max_jobs: int,
        done: Sequence[tuple[int, int, Any]],
        request_id: str | None = None,
    ) -> tuple[list[int], list[Job]]:
        """``ai.complete_and_claim``: ``done`` completed as :meth:`complete_jobs` does and up to
        ``max_jobs`` (0: none) claimed as :meth:`claim_jobs` does, in one round trip and one
        transaction; returns (the ids completed, now or before under the same token; the jobs
        claimed). Under ``request_id`` (a new one when None) the same call again answers the same."""
        args = (worker_id, lease, queue, max_jobs, request_id or new_request_id(), *_complete_jobs_args(done))
        return _split(await self._rows(COMPLETE_AND_CLAIM, args))

    async def fail_job(self, job_id: int, fencing_token: int, error: str, retry_in: timedelta | None = None) -> Job:
        """``ai.fail_job``: PENDING again after a backoff (or retry_in), FAILED when attempts are spent."""
        return (await self._rows(FAIL_JOB, (job_id, fencing_token, error, retry_in)))[0]

    async def release_job(self, job_id: int, fencing_token: int) -> Job:
        """``ai.release_job``: back to PENDING, due now, the attempt not counted."""
        return (await self._rows(RELEASE_JOB, (job_id, fencing_token)))[0]

    async def snooze_job(self, job_id: int, fencing_token: int, until: datetime | timedelta) -> Job:
        """``ai.snooze_job``: back to PENDING, due at ``until`` (a time, or a delay from the
        database's now: a rate limit's retry_after), the attempt not counted, "snoozed" in its
        history; the token is refused from then on."""
        call = SNOOZE_JOB_FOR if isinstance(until, timedelta) else SNOOZE_JOB
        return (await self._rows(call, (job_id, fencing_token, until)))[0]

    async def set_queue_deadlines(
        self,
        queue: str,
        timeout: timedelta | None = None,
        deadline_after: timedelta | None = None,
        start_within: timedelta | None = None,
    ) -> None:
        """``ai.set_queue_deadlines`` (an operator: ai_service acting for nobody; PermissionDenied
        otherwise): a queue's default deadlines for jobs enqueued later without their own; all None
        removes them."""
        await self._rows(SET_QUEUE_DEADLINES, (queue, timeout, deadline_after, start_within))

    async def cancel_job(self, job_id: int) -> Job:
        """``ai.cancel_job``."""
        return (await self._rows(CANCEL_JOB, (job_id,)))[0]

    async def retry_dead_job(self, job_id: int) -> Job:
        """``ai.retry_dead_job``: a FAILED job back to PENDING with its attempts reset."""
        return (await self._rows(RETRY_DEAD_JOB, (job_id,)))[0]

    async def get_job(self, job_id: int) -> Job:
        """``ai.get_job``."""
        return (await self._rows(GET_JOB, (job_id,)))[0]

    async def queue_stats(self, queue: str | None = None) -> list[QueueStats]:
        """``ai.queue_stats``: one row per queue (or for the one named)."""
        return await self._rows(QUEUE_STATS, (queue,))

    async def job_attempts(self, job_id: int) -> list[JobAttempt]:
        """``ai.job_attempts``: the job's attempts, oldest first (the running one last)."""
        return await self._rows(JOB_ATTEMPTS, (job_id,))

    async def reap_expired(self, queue: str | None = None) -> int:
        """``ai.reap_expired``: how many expired leases it moved back to PENDING or to FAILED."""
        return (await self._rows(REAP_EXPIRED, (queue,)))[0]

    async def archive_jobs(self, older_than: timedelta = timedelta(days=1), max_rows: int = 10000) -> int:
        """``ai.archive_jobs``: how many finished jobs it moved to ai.agent_jobs_archive."""
        return (await self._rows(ARCHIVE_JOBS, (older_than, max_rows)))[0]

    async def set_job_key(
        self,
        queue: str,
        key: str,
        weight: float = 1.0,
        max_in_flight: int | None = None,
        rate_per_minute: float | None = None,
        burst: int | None = None,
    ) -> None:
        """``ai.set_job_key`` (operators only: PermissionDenied for a tenant): what claims hold a
        key of a queue to, replacing what was set; the defaults (weight 1, no limits) clear it."""
        await self._rows(SET_JOB_KEY, (queue, key, weight, max_in_flight, rate_per_minute, burst))

    async def job_key_status(
        self,
        queue: str | None = None,
        max_rows: int = 100,
        after_queue: str | None = None,
        after_key: str | None = None,
    ) -> list[JobKeyStatus]:
        """``ai.job_key_status``: each key's settings, in-flight count, tokens and backlog, in
        (queue, key) order after (after_queue, after_key); a tenant sees only its own keys."""
        return await self._rows(JOB_KEY_STATUS, (queue, max_rows, after_queue, after_key))


# </async>


# <sync> generated by scripts/async_to_sync.py from the <async> block above: do not edit
class QueueMethods:
    """The queue half of :class:`~agent_state.Client`."""

    def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by Client
        raise NotImplementedError

    def enqueue_job(
        self,
        thread_id: str,
        payload: Any = None,
        queue: str = "default",
        run_at: datetime | None = None,
        priority: int = 0,
        max_attempts: int = 5,
        idempotency_key: str | None = None,
        timeout: timedelta | None = None,
        deadline: datetime | None = None,
        start_by: datetime | None = None,
        key: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Job:
        """``ai.enqueue_job``: a PENDING job for the thread; the first job again for a reused key.
        Without a key, the call makes one (a random UUID), so that its retry never duplicates.
        Deadlines (None: the queue's default, else none; docs/queue.md, "Deadlines"): ``timeout``
        each attempt's run timeout, ``deadline`` the total deadline across attempts, ``start_by``
        the start deadline. InvalidArgument for a timeout not positive, a deadline not after run_at,
        a start_by before it. ``key`` is the job's fairness and limit key (None: the owner's own;
        docs/queue.md, "Fair shares and limits"). ``headers`` (strings) go with the job, over the
        current OpenTelemetry trace context, which is stored there too (``traceparent``,
        ``tracestate``: the run's spans continue its trace)."""
        call, args = _enqueue_call(
            thread_id,
            payload,
            queue,
            run_at,
            priority,
            max_attempts,
            idempotency_key,
            {"timeout": timeout, "deadline": deadline, "start_by": start_by, "key": key, "headers": _headers(headers)},
        )
        return self._rows(call, args)[0]

    def enqueue_jobs(
        self,
        jobs: Sequence[NewJob],
        queue: str = "default",
        max_attempts: int = 5,
        headers: Mapping[str, str] | None = None,
    ) -> list[Job]:
        """``ai.enqueue_jobs``: up to MAX_ENQUEUE_BATCH (5,000) jobs of one queue in one round trip;
        one Job per NewJob, in order, each answered as ``enqueue_job`` answers it (a reused key: the
        first job). One bad job fails the call and writes nothing; TooLarge over the maximum. A job
        without a key gets one (a random UUID), so that a retry of the call never duplicates.
        ``headers``, with the current trace context, go with every job (as ``enqueue_job``'s)."""
        if not jobs:
            return []
        return self._rows(ENQUEUE_JOBS, _enqueue_jobs_args(jobs, queue, max_attempts, headers))

    def claim_job(self, worker_id: str, lease: timedelta = DEFAULT_LEASE, queue: str = "default") -> Job | None:
        """``ai.claim_job``: the next due job (or expired lease) of the queue, leased to worker_id."""
        rows = self._rows(CLAIM_JOB, (worker_id, lease, queue))
        return rows[0] if rows else None

    def claim_jobs(
        self, worker_id: str, lease: timedelta, queue: str, max_jobs: int, request_id: str | None = None
    ) -> list[Job]:
        """``ai.claim_jobs``: up to max_jobs jobs in one round trip, at most one per thread. Under
        ``request_id`` (a new one when None): the same call again answers with the same jobs."""
        args = (worker_id, lease, queue, max_jobs, request_id or new_request_id())
        return self._rows(CLAIM_JOBS, args)

    def renew_lease(self, job_id: int, fencing_token: int, lease: timedelta = DEFAULT_LEASE) -> datetime:
        """``ai.renew_lease``: the new expiry; raises LeaseLost when the job is no longer held."""
        return self._rows(RENEW_LEASE, (job_id, fencing_token, lease))[0]

    def renew_leases(
        self, worker_id: str, held: Sequence[tuple[int, int]], lease: timedelta = DEFAULT_LEASE
    ) -> dict[int, datetime]:
        """``ai.renew_leases``: every (job_id, fencing_token) worker_id holds, renewed in one statement;
        returns job_id -> new expiry for those renewed. A lost lease is left out (not raised)."""
        return dict(self._rows(RENEW_LEASES, _renew_leases_args(worker_id, held, lease)))

    def fenced_write(self, job_id: int, fencing_token: int) -> datetime:
        """``ai.fenced_write``: call first in a transaction that writes for the job (LeaseLost if not held)."""
        return self._rows(FENCED_WRITE, (job_id, fencing_token))[0]

    def complete_job(self, job_id: int, fencing_token: int, result: Any = None) -> Job:
        """``ai.complete_job``: idempotent under the same token (the completed job again)."""
        return self._rows(COMPLETE_JOB, (job_id, fencing_token, _optional_json(result)))[0]

    def complete_jobs(self, done: Sequence[tuple[int, int, Any]]) -> list[int]:
        """``ai.complete_jobs``: (job_id, fencing_token, result) triples; returns the ids completed
        (now, or before under the same token: idempotent)."""
        return self._rows(COMPLETE_JOBS, _complete_jobs_args(done))

    def complete_and_claim(
        self,
        worker_id: str,
        lease: timedelta,
        queue: str,
        max_jobs: int,
        done: Sequence[tuple[int, int, Any]],
        request_id: str | None = None,
    ) -> tuple[list[int], list[Job]]:
        """``ai.complete_and_claim``: ``done`` completed as :meth:`complete_jobs` does and up to
        ``max_jobs`` (0: none) claimed as :meth:`claim_jobs` does, in one round trip and one
        transaction; returns (the ids completed, now or before under the same token; the jobs
        claimed). Under ``request_id`` (a new one when None) the same call again answers the same."""
        args = (worker_id, lease, queue, max_jobs, request_id or new_request_id(), *_complete_jobs_args(done))
        return _split(self._rows(COMPLETE_AND_CLAIM, args))

    def fail_job(self, job_id: int, fencing_token: int, error: str, retry_in: timedelta | None = None) -> Job:
        """``ai.fail_job``: PENDING again after a backoff (or retry_in), FAILED when attempts are spent."""
        return self._rows(FAIL_JOB, (job_id, fencing_token, error, retry_in))[0]

    def release_job(self, job_id: int, fencing_token: int) -> Job:
        """``ai.release_job``: back to PENDING, due now, the attempt not counted."""
        return self._rows(RELEASE_JOB, (job_id, fencing_token))[0]

    def snooze_job(self, job_id: int, fencing_token: int, until: datetime | timedelta) -> Job:
        """``ai.snooze_job``: back to PENDING, due at ``until`` (a time, or a delay from the
        database's now: a rate limit's retry_after), the attempt not counted, "snoozed" in its
        history; the token is refused from then on."""
        call = SNOOZE_JOB_FOR if isinstance(until, timedelta) else SNOOZE_JOB
        return self._rows(call, (job_id, fencing_token, until))[0]

    def set_queue_deadlines(
        self,
        queue: str,
        timeout: timedelta | None = None,
        deadline_after: timedelta | None = None,
        start_within: timedelta | None = None,
    ) -> None:
        """``ai.set_queue_deadlines`` (an operator: ai_service acting for nobody; PermissionDenied
        otherwise): a queue's default deadlines for jobs enqueued later without their own; all None
        removes them."""
        self._rows(SET_QUEUE_DEADLINES, (queue, timeout, deadline_after, start_within))

    def cancel_job(self, job_id: int) -> Job:
        """``ai.cancel_job``."""
        return self._rows(CANCEL_JOB, (job_id,))[0]

    def retry_dead_job(self, job_id: int) -> Job:
        """``ai.retry_dead_job``: a FAILED job back to PENDING with its attempts reset."""
        return self._rows(RETRY_DEAD_JOB, (job_id,))[0]

    def get_job(self, job_id: int) -> Job:
        """``ai.get_job``."""
        return self._rows(GET_JOB, (job_id,))[0]

    def queue_stats(self, queue: str | None = None) -> list[QueueStats]:
        """``ai.queue_stats``: one row per queue (or for the one named)."""
        return self._rows(QUEUE_STATS, (queue,))

    def job_attempts(self, job_id: int) -> list[JobAttempt]:
        """``ai.job_attempts``: the job's attempts, oldest first (the running one last)."""
        return self._rows(JOB_ATTEMPTS, (job_id,))

    def reap_expired(self, queue: str | None = None) -> int:
        """``ai.reap_expired``: how many expired leases it moved back to PENDING or to FAILED."""
        return self._rows(REAP_EXPIRED, (queue,))[0]

    def archive_jobs(self, older_than: timedelta = timedelta(days=1), max_rows: int = 10000) -> int:
        """``ai.archive_jobs``: how many finished jobs it moved to ai.agent_jobs_archive."""
        return self._rows(ARCHIVE_JOBS, (older_than, max_rows))[0]

    def set_job_key(
        self,
        queue: str,
        key: str,
        weight: float = 1.0,
        max_in_flight: int | None = None,
        rate_per_minute: float | None = None,
        burst: int | None = None,
    ) -> None:
        """``ai.set_job_key`` (operators only: PermissionDenied for a tenant): what claims hold a
        key of a queue to, replacing what was set; the defaults (weight 1, no limits) clear it."""
        self._rows(SET_JOB_KEY, (queue, key, weight, max_in_flight, rate_per_minute, burst))

    def job_key_status(
        self,
        queue: str | None = None,
        max_rows: int = 100,
        after_queue: str | None = None,
        after_key: str | None = None,
    ) -> list[JobKeyStatus]:
        """``ai.job_key_status``: each key's settings, in-flight count, tokens and backlog, in
        (queue, key) order after (after_queue, after_key); a tenant sees only its own keys."""
        return self._rows(JOB_KEY_STATUS, (queue, max_rows, after_queue, after_key))


# </sync>
