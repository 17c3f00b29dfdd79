"""Which client calls are safe to retry, and a policy that retries them (``Client(..., retry=...)``).

A call is *safe to retry* when running it twice leaves the database as running it once did and
answers the same: the reads, and the writes that are idempotent by design (a retried
``append_message`` returns the original row, ``put_checkpoint`` with its id rewrites the same
row, ...). When the connection breaks (server restart, ``AdminShutdown``, a failover, a pooler
dropping its server connection) the caller cannot know whether the call committed; for a call
in :data:`IDEMPOTENT` that does not matter, and :class:`RetryPolicy` runs it again, on a new
connection. Anything else (``record_event``, ``complete_job``, ``begin_side_effect``, ...) is
never retried: the error reaches the caller, who knows what to do (the queue and the tool-call
ledger have their own recovery: leases and fencing tokens).

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


def _always(_: Sequence[Any]) -> bool:
    return True


def _arg_given(position: int) -> Callable[[Sequence[Any]], bool]:
    return lambda params: len(params) > position and params[position] is not None


_READS = (
    "now", "ulid", "ulid_time", "get_session", "get_messages", "get_events", "context_window", "trajectory",
    "get_eval_runs", "get_checkpoint", "list_checkpoints", "checkpoint_lineage", "checkpoints_between",
    "get_job", "queue_stats", "get_side_effect", "idempotency_key", "pending_approvals", "get_approval",
)  # fmt: skip

#: SQL function -> whether a call with these arguments is safe to retry. Reads always are; the
#: writes listed are idempotent by design (a retry finds the first call's row and returns it).
IDEMPOTENT: dict[str, Callable[[Sequence[Any]], bool]] = {
    **dict.fromkeys(_READS, _always),
    # writes whose retry returns the first call's result
    "append_message_idempotent": _always,  # the key defaults to a hash of the message
    "put_writes": _always,  # one row per (task_id, idx), rewritten with the same value
    "renew_lease": _always,  # extends the same lease again
    "create_session": _arg_given(0),  # only with an explicit thread_id (None makes a new one)
    "put_checkpoint": _arg_given(2),  # only with an explicit checkpoint_id
    "enqueue_job": _arg_given(6),  # only with an idempotency_key
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


def is_connection_error(error: BaseException) -> bool:
    """True for the errors after which the connection is gone or unusable but the server may be
    back soon: lost connection (08xxx, or no SQLSTATE at all), ``AdminShutdown`` /
    ``CrashShutdown`` / ``CannotConnectNow`` (57P01-57P03), too many connections (53300, as
    clients crowd back after a restart), a pool that could not connect in time.
    A domain error (AS...), a constraint violation or a bug is never one."""
    if isinstance(error, (pg_errors.AdminShutdown, pg_errors.CrashShutdown, pg_errors.CannotConnectNow)):
        return True
    if not isinstance(error, psycopg.OperationalError):
        return False
    sqlstate = error.sqlstate or ""
    return sqlstate in ("", "53300") or sqlstate.startswith("08") or sqlstate.startswith("57P")


@dataclass(frozen=True)
class RetryPolicy:
    """Retries a call in :data:`IDEMPOTENT` after a connection error, up to ``attempts`` tries in
    all, sleeping ``min(max_delay, first_delay * 2**n)`` scaled by a random factor in
    ``[1 - jitter, 1]`` between them (so a crowd of clients does not reconnect in step). With
    the defaults a call keeps trying for about ten seconds, long enough for a fast restart or a
    failover. A single connection is reconnected (same conninfo and password, same autocommit);
    a pool hands out another connection, and its idle ones are checked first."""

    attempts: int = 8
    first_delay: float = 0.1
    max_delay: float = 3.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        if self.first_delay < 0 or self.max_delay < 0 or not 0 <= self.jitter <= 1:
            raise ValueError("delays must be >= 0 and jitter in [0, 1]")

    def delays(self) -> Iterator[float]:
        """The sleeps between tries: ``attempts - 1`` of them."""
        for n in range(self.attempts - 1):
            base = min(self.max_delay, self.first_delay * (2**n))
            yield base * (1 - self.jitter * random.random())


class Backoff:
    """Exponential backoff with jitter for the worker's loops: ``next()`` is the sleep after one
    more failure in a row, ``reset()`` after a success."""

    def __init__(self, first: float = 0.1, cap: float = 5.0, jitter: float = 0.5):
        self.first, self.cap, self.jitter = first, cap, jitter
        self.failures = 0

    def next(self) -> float:
        base = min(self.cap, self.first * (2**self.failures))
        self.failures = min(self.failures + 1, 30)
        return base * (1 - self.jitter * random.random())

    def reset(self) -> None:
        self.failures = 0
