"""Which client calls are safe to retry, and a policy that retries them (``Client(..., retry=...)``).

A call is *safe to retry* when running it twice leaves the database as running it once did and
answers the same: the reads, and the writes that are idempotent by design (a retried
``append_message`` returns the original row, ``put_checkpoint`` with its id rewrites the same
row, ...). When the connection breaks (server restart, ``AdminShutdown``, a failover, a pooler
dropping its server connection) the caller cannot know whether the call committed; for a call
in :data:`IDEMPOTENT` that does not matter, and :class:`RetryPolicy` runs it again, on a new
connection. Anything else (``record_event``, ``fail_job``, ``begin_side_effect``, ...) is
never retried: the error reaches the caller, who knows what to do (the queue and the tool-call
ledger have their own recovery: leases and fencing tokens). The queue's claims, completions and
enqueues are idempotent by design (docs/queue.md, "Lost answers").

A call made inside the caller's own transaction is never retried either: the transaction is gone
with the connection, and only the caller can replay it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import PoolTimeout


def _always(_: Sequence[Any]) -> bool:
    return True


def _arg_given(position: int) -> Callable[[Sequence[Any]], bool]:
    return lambda params: len(params) > position and params[position] is not None


_READS = (
    "now", "ulid", "ulid_time", "get_session", "get_messages", "get_events", "context_window", "trajectory",
    "get_eval_runs", "get_checkpoint", "list_checkpoints", "checkpoint_lineage", "checkpoints_between",
    "get_job", "queue_stats", "get_side_effect", "idempotency_key", "pending_approvals", "get_approval",
    "visible_messages", "usage_summary", "get_turn_context", "get_stream", "read_stream", "job_attempts",
    "delta_channel_history", "queue_throughput", "session_status_counts", "list_streams", "list_forks",
    "job_key_status",
)  # fmt: skip

#: The calls that write nothing: a connection lost during one of them changed nothing.
READS: frozenset[str] = frozenset(_READS)

#: The policy of a client or saver that owns its connection (``from_conn_string``): a call safe
#: to retry is retried once, at once, on a new connection.
#: SQL function -> whether a call with these arguments is safe to retry. Reads always are; the
#: writes listed are idempotent by design (a retry finds the first call's row and returns it).
IDEMPOTENT: dict[str, Callable[[Sequence[Any]], bool]] = {
    **dict.fromkeys(_READS, _always),
    # writes whose retry returns the first call's result
    "append_message_idempotent": _always,  # the key defaults to a hash of the message
    "put_writes": _always,  # one row per (task_id, idx), rewritten with the same value
    "renew_lease": _always,  # extends the same lease again
    "renew_leases": _always,  # extends the same leases again
    "create_session": _arg_given(0),  # only with an explicit thread_id (None makes a new one)
    "put_checkpoint": _arg_given(2),  # only with an explicit checkpoint_id
    "enqueue_job": _arg_given(6),  # with an idempotency_key (the client makes one when none is given)
    "claim_jobs": _arg_given(4),  # with a request id (the client makes one): a retry answers the same jobs
    "complete_job": _always,  # a retry under the same token answers with the job it completed
    "complete_jobs": _always,  # a retry answers with the jobs completed under the same tokens
    "complete_and_claim": _arg_given(4),  # both halves: the same tokens, the same request id
    "enqueue_jobs": lambda args: all(k is not None for k in args[5]),  # every job keyed (the client keys the rest)
    "append_messages": _always,  # each message keyed (its key, or the hash of the message)
    "record_usage": _always,  # keyed: a retry returns the first row
    "record_retrieval": _always,  # keyed (its key, or the hash of the documents)
    "open_stream": _always,  # the same key returns the same stream
    "append_stream_chunks": _always,  # chunks already stored are skipped
    "finish_stream": _always,  # the message is keyed by the stream: a retry returns it
    "abandon_stream": _always,  # abandoning again is a no-op
    "finish_side_effect": _always,  # the same finish again returns the stored row
    "set_job_key": _always,  # sets the same weight and limits again
    "set_queue_deadlines": _always,  # sets the same defaults again
}

#: SQL function -> why a retry after an unknown outcome is not done for the caller.
NOT_RETRIED: dict[str, str] = {
    "record_event": "a new event each call",
    "record_eval_run": "a new eval run each call",
    "record_compaction": "a retry after success is refused as stale (AS040)",
    "set_session_status": "a retry after success may be refused as a transition (AS004)",
    "fork_thread": "a retry after success finds the new thread taken (AS005) or, without an id, forks twice",
    "copy_thread": "a retry after success finds the target taken",
    "delete_thread": "the effect is idempotent but a retry answers False",
    "delete_for_runs": "the effect is idempotent but a retry answers 0",
    "prune_checkpoints": "the effect is idempotent but a retry answers 0",
    "prune_idle_threads": "the effect is idempotent but a retry answers 0",
    "archive_sessions": "a retry moves the next batch",
    "restore_session": "a retry after success finds nothing archived (AS001)",
    "act_as": "binds the caller's transaction (acting_as), which a lost connection ends",
    "claim_job": "a retry claims another job; the first one's lease expires (claim_jobs carries a request id)",
    "fail_job": "a retry after success is refused (AS006) or counts an attempt twice",
    "release_job": "a retry after success is refused (AS006)",
    "snooze_job": "a retry after success is refused (AS006): the job is no longer held",
    "cancel_job": "a retry after success is refused as a transition",
    "retry_dead_job": "a retry after success is refused as a transition",
    "reap_expired": "maintenance: the next run does it",
    "archive_jobs": "maintenance: the next run does it",
    "fenced_write": "only meaningful inside the caller's transaction (ctx.fenced())",
    "begin_side_effect": "the ledger's own recovery (lease expiry, takeover) handles a lost reservation",
    "abandon_side_effect": "a retry after success is refused (AS031)",
    "request_human": "a retry after success is refused: the job is no longer held",
    "resolve_human": "a retry after success is refused (AS033)",
    "hide_last_message": "a retry after success hides the next message too",
    "hide_messages": "the effect is idempotent but a retry answers 0",
}

_FUNCTION = re.compile(r"\bai\.([a-z_]+)\s*\(")


def function_of(sql: str) -> str | None:
    """The ``ai`` function a client statement calls (``select * from ai.get_job(%s)`` -> get_job)."""
    found = _FUNCTION.search(sql)
    return found.group(1) if found else None


def is_idempotent(sql: str, params: Sequence[Any]) -> bool:
    """True when the client statement ``sql`` with ``params`` is safe to run again."""
    name = function_of(sql)
    rule = IDEMPOTENT.get(name) if name else None
    return rule is not None and rule(params)


def writes(sql: str) -> bool:
    """True unless the client statement ``sql`` calls a function that only reads (:data:`READS`)."""
    return function_of(sql) not in READS


def is_connection_error(error: BaseException) -> bool:
    """True for the errors after which the connection is gone or unusable but the server may be
    back soon: lost connection (08xxx, or no SQLSTATE at all), ``AdminShutdown`` /
    ``CrashShutdown`` / ``CannotConnectNow`` (57P01-57P03), too many connections (53300, as
    clients crowd back after a restart), a pool that could not connect in time, and a write
    refused because the server is read-only (25006: a standby, or a node a failover has not yet
    made writable; see :func:`is_read_only_error`).
    A domain error (AS...), a constraint violation or a bug is never one."""
    if isinstance(error, (pg_errors.AdminShutdown, pg_errors.CrashShutdown, pg_errors.CannotConnectNow)):
        return True
    if is_read_only_error(error):
        return True
    if isinstance(error, PoolTimeout):
        return True
    if not isinstance(error, psycopg.OperationalError):
        return False
    sqlstate = error.sqlstate or ""
    return sqlstate in ("", "53300") or sqlstate.startswith("08") or sqlstate.startswith("57P")


def is_read_only_error(error: BaseException) -> bool:
    """True for "cannot execute ... in a read-only transaction" (SQLSTATE 25006) or a session
    that is read-only: the connection reached a standby, or a node a failover has not made
    writable yet. Nothing was written; the connection is dropped and a new one is opened through
    the conninfo the user gave, so that ``target_session_attrs=read-write`` finds the primary."""
    if isinstance(error, pg_errors.ReadOnlySqlTransaction):
        return True
    return isinstance(error, psycopg.Error) and error.sqlstate == "25006"


@dataclass(frozen=True)
class RetryPolicy:
    """Retries a call in :data:`IDEMPOTENT` after a connection error (:func:`is_connection_error`)
    for up to ``timeout`` seconds in all (and, when ``attempts`` is given, at most that many tries),
    sleeping ``min(max_delay, first_delay * 2**n)`` scaled by a random factor in ``[1 - jitter, 1]``
    between tries (so a crowd of clients does not reconnect in step). A write refused because the
    server is read-only (25006) is retried whatever the call, as nothing was written.

    The defaults fit a failover: two minutes of tries (an unplanned failover of pg_auto_failover
    at its default timeouts made the standby writable 51-55 s after the primary died, in
    docs/high-availability.md; a managed multi-AZ service quotes 60-120 s), no sleep longer than
    a second, so the first call after the database is writable again goes through within about a
    second. A single
    connection is reconnected through the conninfo the user gave (every host of a multi-host URL,
    ``target_session_attrs``), with the same password and autocommit; a pool hands out another
    connection, and its idle ones are checked first."""

    attempts: int | None = None
    first_delay: float = 0.05
    max_delay: float = 1.0
    jitter: float = 0.5
    timeout: float = 120.0

    def __post_init__(self) -> None:
        if self.attempts is not None and self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        if self.first_delay < 0 or self.max_delay < 0 or not 0 <= self.jitter <= 1:
            raise ValueError("delays must be >= 0 and jitter in [0, 1]")
        if self.timeout < 0:
            raise ValueError("timeout must be >= 0")

    def delays(self) -> Iterator[float]:
        """The sleeps between tries: ``attempts - 1`` of them, or, without ``attempts``, as many as
        fit in ``timeout`` (the caller stops at the deadline too: a try itself takes time)."""
        n = 0
        spent = 0.0
        while self.attempts is None or n < self.attempts - 1:
            base = min(self.max_delay, self.first_delay * (2 ** min(n, 30)))
            delay = base * (1 - self.jitter * random.random())
            if self.attempts is None and spent + delay > self.timeout:
                return
            spent += delay
            n += 1
            yield delay

    def deadline(self, start: float) -> float:
        """The monotonic time after which no try starts."""
        return start + self.timeout


#: The policy of a client or saver that owns its connection (``from_conn_string``) unless another
#: is given: a call safe to retry is retried once, at once, on a new connection (a backend ended
#: by the server, an idle timeout, a pooler dropping its server connection). A restart or a
#: failover takes longer: pass ``retry=RetryPolicy()``.
ONCE = RetryPolicy(attempts=2, first_delay=0.0, max_delay=0.0, jitter=0.0)


#: The longest sleep of a worker's loop between tries while the database cannot be reached: a
#: refused connection fails at once, so probing this often costs nothing, and the loop is back
#: within this long of the database accepting connections again, whatever the outage's length.
RECONNECT_PROBE = 0.25


#: psycopg_pool's ``reconnect_timeout`` is capped at this many seconds by a Worker and by a client
#: with a retry policy over a pool: the pool's own reconnect attempts (1, 2, 4, 8, 16 s apart)
#: then give up quickly and the next request opens a connection at once, so the caller's probing,
#: not the pool's schedule, finds the database back.
POOL_RECONNECT_TIMEOUT = 0.25
#: How long one try of a client with a retry policy waits for a pool connection (when no
#: ``pool_timeout`` is given): a try that found no connection is made again after the policy's
#: sleep, so the wait never outlasts the database's return by more than about this.
RETRY_POOL_TIMEOUT = 0.5


class Backoff:
    """Exponential backoff with jitter for the worker's loops: ``next()`` is the sleep after one
    more failure in a row, ``reset()`` after a success. After a connection error
    (``next(error)``) the sleep is at most ``probe`` (:data:`RECONNECT_PROBE`): the loop is what
    finds the database back."""

    def __init__(self, first: float = 0.1, cap: float = 5.0, jitter: float = 0.5, probe: float = RECONNECT_PROBE):
        self.first, self.cap, self.jitter, self.probe = first, cap, jitter, probe
        self.failures = 0

    def next(self, error: BaseException | None = None) -> float:
        base = min(self.cap, self.first * (2.0**self.failures))
        self.failures = min(self.failures + 1, 30)
        delay = base * (1 - self.jitter * random.random())
        return min(delay, self.probe) if error is not None and is_connection_error(error) else delay

    def reset(self) -> None:
        self.failures = 0
