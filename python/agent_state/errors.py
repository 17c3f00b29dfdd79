"""Exceptions keyed by SQLSTATE.

Every domain failure of the SQL API raises a custom SQLSTATE of class ``AS`` (the list is the
table ``ai.error_codes`` and docs/errors.md). The client turns those into the exceptions below,
so callers catch ``NotFound`` instead of parsing messages. Anything else psycopg raises passes
through unchanged.
"""

from __future__ import annotations

import psycopg


class AgentStateError(Exception):
    """Base class of every error the SQL API raises on purpose."""

    sqlstate: str = ""

    def __init__(self, message: str, *, sqlstate: str | None = None, cause: psycopg.Error | None = None):
        super().__init__(message)
        if sqlstate is not None:
            self.sqlstate = sqlstate
        self.cause = cause


class NotFound(AgentStateError):
    """AS001: unknown object, or one that belongs to another tenant."""

    sqlstate = "AS001"


class InvalidArgument(AgentStateError, ValueError):
    """AS002 (and 22P05, a NUL character in JSON): an argument is missing or malformed.

    Also a ``ValueError``, as LangGraph's savers raise for a bad argument (e.g. an unknown
    ``prune`` strategy), so code written against ``PostgresSaver`` catches it.
    """

    sqlstate = "AS002"


class TooLarge(AgentStateError):
    """AS003: a JSON document over the size limit."""

    sqlstate = "AS003"


class InvalidTransition(AgentStateError):
    """AS004: a status change that is not allowed, or a write to a finished session."""

    sqlstate = "AS004"


class Conflict(AgentStateError):
    """AS005: an idempotency key reused for different content, or an id already taken."""

    sqlstate = "AS005"


class LeaseLost(AgentStateError):
    """AS006: the fencing token is stale or the lease expired; the caller no longer owns the job."""

    sqlstate = "AS006"


class DeadlineExceeded(LeaseLost):
    """AS006 as the worker knows it first: the attempt's deadline (its run timeout, or the job's total
    deadline) has passed, so the job is no longer held; ``ctx.fenced()``, ``ctx.complete()`` and
    the other calls of its context refuse at once (the server refuses them too: no lease reaches
    past the deadline)."""


class PermissionDenied(AgentStateError):
    """AS007: the caller may not do this."""

    sqlstate = "AS007"


class NotAnOwner(AgentStateError):
    """AS008: the calling role (after SET ROLE) or the acting owner cannot log in (ai_user, ai_service, ...)."""

    sqlstate = "AS008"


class ThreadDeleted(AgentStateError):
    """AS020: a checkpoint or write for a thread that was deleted; a late write does not re-create it."""

    sqlstate = "AS020"


class StaleCompaction(AgentStateError):
    """AS040: a newer compaction already covers as much of the thread; the summary was not stored."""

    sqlstate = "AS040"


class NotArchivable(AgentStateError):
    """AS041: the session cannot be archived or restored as asked (e.g. a hot session has that id)."""

    sqlstate = "AS041"


class KeyReused(AgentStateError):
    """AS030: a side-effect idempotency key reused for a different request in the same thread."""

    sqlstate = "AS030"


class NotReserved(AgentStateError):
    """AS031: finish or abandon of a side effect the caller does not hold (taken over, finished, abandoned)."""

    sqlstate = "AS031"


class NotWaiting(AgentStateError):
    """AS032: resolve_human for a thread with nothing waiting for a person."""

    sqlstate = "AS032"


class AlreadyResolved(AgentStateError):
    """AS033: resolve_human for a checkpoint whose approval was already resolved."""

    sqlstate = "AS033"


class StaleCheckpoint(AgentStateError):
    """AS034: the checkpoint named is not the one the thread waits on (the thread moved on)."""

    sqlstate = "AS034"


class StreamGap(AgentStateError):
    """AS050: stream chunks must follow the last stored chunk (a chunk number was skipped)."""

    sqlstate = "AS050"


class StreamClosed(AgentStateError):
    """AS051: the stream was finished or abandoned (no more chunks; an abandoned one cannot be finished)."""

    sqlstate = "AS051"


class BrokenDelta(AgentStateError):
    """AS060: a channel value stored as a delta cannot be rebuilt (a version it extends is missing)."""

    sqlstate = "AS060"


class DeltaBaseMissing(AgentStateError):
    """AS061: a channel delta extends a version that is not stored; the saver sends the whole value."""

    sqlstate = "AS061"


class DeleteNeedsReadCommitted(AgentStateError):
    """AS062: a function that deletes checkpoints was called in a repeatable read or serializable
    transaction, whose snapshot misses what runs committed meanwhile; nothing was deleted."""

    sqlstate = "AS062"


class IdentityNotCarried(AgentStateError):
    """AS070: on a Citus formation, a node was reached as the schema owner without the caller's
    signed identity (a login as the schema owner, or a deploy since the last ``ai.distribute()``):
    refused rather than run as the owner (docs/scaling.md)."""

    sqlstate = "AS070"


class CoordinatorNotInMetadata(AgentStateError):
    """AS071: ``ai.distribute()`` on a Citus formation whose coordinator is not in its own metadata
    (no ``citus_set_coordinator_host``): the queue's transactions with a worker could not commit in
    two phases, so nothing was distributed (docs/scaling.md)."""

    sqlstate = "AS071"


class ClockNotCarried(AgentStateError):
    """AS072: on a Citus formation, a call delegated to the worker that holds its thread was made
    by a role that may freeze the test clock (a member of ``ai_test_clock``: test clusters only);
    the worker cannot see a clock frozen on the coordinator, so it refused the call. The client
    sends such a call again by itself, in a form Citus does not delegate (docs/scaling.md)."""

    sqlstate = "AS072"


class OutcomeUnknown(AgentStateError, psycopg.OperationalError):  # type: ignore[misc]  # sqlstate: str vs str | None
    """The connection was lost during a call that writes, outside the caller's transaction: the
    call may or may not have committed, and it was not run again (it is not safe to retry, or
    its retries ran out). The caller decides: read what the call would have written, or run it
    again if running it twice is harmless. Also a ``psycopg.OperationalError`` (what it was
    before), so code that catches that, and the worker's loops, treat it as a lost connection;
    ``cause`` is psycopg's error, ``sqlstate`` its SQLSTATE (``57P01`` for AdminShutdown, empty
    for a connection that just closed)."""


#: SQLSTATE -> exception class. Later features add their codes here.
ERRORS_BY_SQLSTATE: dict[str, type[AgentStateError]] = {
    cls.sqlstate: cls
    for cls in (
        NotFound,
        InvalidArgument,
        TooLarge,
        InvalidTransition,
        Conflict,
        LeaseLost,
        PermissionDenied,
        NotAnOwner,
        ThreadDeleted,
        StaleCompaction,
        NotArchivable,
        KeyReused,
        NotReserved,
        NotWaiting,
        AlreadyResolved,
        StaleCheckpoint,
        StreamGap,
        StreamClosed,
        BrokenDelta,
        DeltaBaseMissing,
        DeleteNeedsReadCommitted,
        IdentityNotCarried,
        CoordinatorNotInMetadata,
        ClockNotCarried,
    )
}
# Postgres rejects "\u0000" inside JSON with untranslatable_character before any function runs.
ERRORS_BY_SQLSTATE["22P05"] = InvalidArgument


def translate(error: psycopg.Error) -> Exception:
    """The typed exception for a psycopg error, or the error itself when it is not ours."""
    sqlstate = error.sqlstate or ""
    if not sqlstate and isinstance(error, psycopg.DataError) and "NUL" in str(error):
        # psycopg refuses a text argument holding a NUL byte before sending it.
        return InvalidArgument(str(error), sqlstate="22P05", cause=error)
    cls = ERRORS_BY_SQLSTATE.get(sqlstate)
    if cls is None:
        return error
    message = error.diag.message_primary or str(error)
    return cls(message, sqlstate=sqlstate, cause=error)
