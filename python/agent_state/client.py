"""The thin client: one method per SQL function of the ``ai`` schema, sync and async.

The client holds no connection of its own: it is given a psycopg connection or a psycopg_pool
pool. With a pool, each call borrows a connection for that one statement. With a connection,
a call made outside a transaction commits itself (unless the connection is in autocommit), and
a call made inside the caller's transaction joins it, so several calls can commit together.

Every method is exactly one round trip: ``select * from ai.<function>(...)``.

Poolers: the client keeps no session state, and uses server-side prepared statements (psycopg
prepares a statement after its fifth execution) only on a connection that reaches the server
itself. Behind a pooler every statement is sent unprepared (``prepare=False``), whatever the
connection's ``prepare_threshold``: there a prepared statement fails (26000, 42P05, 08P01) or,
worse, runs another client's statement of the same name. Which it is, is found once per
connection (:func:`behind_pooler`), so the client works through PgBouncer in transaction
pooling with psycopg's default connections (docs/connections.md).

Retries: with ``retry=RetryPolicy()``, a call that is safe to retry (:data:`agent_state.retry.IDEMPOTENT`)
and made outside the caller's transaction is retried after a connection error, on a new
connection: a single connection is reconnected, a pool hands out another one.

Lost connections: ``Client.from_conn_string(url)`` (and ``AsyncClient``'s) owns its connection: a
connection the server ended (``pg_terminate_backend``, an idle timeout, a failover, a pooler
dropping it) is found before the next call without a round trip and replaced, and a call safe
to retry is retried once (``retry.ONCE``) unless another policy is given. With any client, a
call that writes and loses its connection outside the caller's transaction, so that it may have
committed, raises :class:`agent_state.errors.OutcomeUnknown` and is never run again for the
caller (docs/connections.md).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import (
    AbstractAsyncContextManager,
    AbstractContextManager,
    asynccontextmanager,
    contextmanager,
    nullcontext,
    suppress,
)
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Union

import psycopg
from psycopg import pq
from psycopg.pq import TransactionStatus
from psycopg.rows import AsyncRowFactory, RowFactory, dict_row, tuple_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from . import errors
from ._calls import Call, T
from .hitl import AsyncHumanInTheLoopMethods, HumanInTheLoopMethods
from .memory import AsyncMemoryMethods, MemoryMethods
from .models import (
    AppendResult,
    ArchivedSession,
    CheckpointRow,
    CheckpointSummary,
    ContextWindow,
    EvalRun,
    Event,
    LineageStep,
    Message,
    MessageRole,
    NewMessage,
    PruneStrategy,
    Session,
    SessionStatus,
    TrajectoryStep,
    WindowMessage,
    from_row,
)
from .queue import AsyncQueueMethods, QueueMethods
from .retrievals import AsyncRetrievalMethods, RetrievalMethods
from .retry import ONCE, RetryPolicy, function_of, is_connection_error, is_idempotent, writes
from .side_effects import AsyncSideEffectMethods, SideEffectMethods
from .streams import AsyncStreamMethods, StreamMethods
from .usage import AsyncUsageMethods, UsageMethods

Row = dict[str, Any]

log = logging.getLogger("agent_state.client")

#: Keyword arguments for the connections an application makes for agent-state:
#: ``psycopg.connect(url, **CONNECT_KWARGS)`` or ``ConnectionPool(url, kwargs=CONNECT_KWARGS)``.
#: Autocommit (every call is one statement) and no automatic prepared statements, so the
#: application's own statements on those connections work through a transaction pooler too.
CONNECT_KWARGS: dict[str, Any] = {"autocommit": True, "prepare_threshold": None}

SyncSource = Union["psycopg.Connection[Any]", ConnectionPool]
AsyncSource = Union["psycopg.AsyncConnection[Any]", AsyncConnectionPool]


def _append_result(row: Row) -> AppendResult:
    return AppendResult(message=from_row(Message, row), inserted=row["inserted"])


CREATE_SESSION = Call("select * from ai.create_session(%s, %s)", lambda r: from_row(Session, r))
GET_SESSION = Call("select * from ai.get_session(%s)", lambda r: from_row(Session, r))
SET_SESSION_STATUS = Call("select * from ai.set_session_status(%s, %s)", lambda r: from_row(Session, r))
APPEND_MESSAGE = Call("select * from ai.append_message_idempotent(%s, %s, %s, %s, %s, %s)", _append_result)
# The fenced append: one statement (ai.fenced_write inside), for a worker in autocommit.
APPEND_MESSAGE_FENCED = Call(
    "select * from ai.append_message_idempotent(%s, %s, %s, %s, %s, %s, %s, %s)", _append_result
)
GET_MESSAGES = Call("select * from ai.get_messages(%s, %s, %s)", lambda r: from_row(Message, r))
RECORD_EVENT = Call("select * from ai.record_event(%s, %s, %s)", lambda r: from_row(Event, r))
GET_EVENTS = Call("select * from ai.get_events(%s, %s, %s, %s)", lambda r: from_row(Event, r))
APPEND_MESSAGES = Call("select * from ai.append_messages(%s, %s)", _append_result)
VISIBLE_MESSAGES = Call("select * from ai.visible_messages(%s, %s)", lambda r: from_row(Message, r))
HIDE_LAST_MESSAGE = Call(
    "select * from ai.hide_last_message(%s)", lambda r: None if r["seq"] is None else from_row(Message, r)
)
HIDE_MESSAGES: Call[int] = Call("select ai.hide_messages(%s) as hidden", lambda r: r["hidden"])


def _append_messages_args(thread_id: str, messages: Sequence[NewMessage]) -> tuple[Any, ...]:
    batch = [{k: v for k, v in _message_fields(m).items() if v is not None} for m in messages]
    return (thread_id, Jsonb(batch))


def _message_fields(m: NewMessage) -> dict[str, Any]:
    return {
        "role": m.role,
        "content": m.content,
        "turn": m.turn,
        "idempotency_key": m.idempotency_key,
        "token_count": m.token_count,
    }


def _context_window(row: Row) -> ContextWindow:
    messages = [WindowMessage(**m) for m in row["messages"]]
    return ContextWindow(**{**row, "messages": messages})


CONTEXT_WINDOW = Call("select * from ai.context_window(%s, %s, %s, %s::real)", _context_window)
RECORD_COMPACTION = Call("select * from ai.record_compaction(%s, %s, %s, %s)", _append_result)
TRAJECTORY = Call("select * from ai.trajectory(%s, %s, %s)", lambda r: from_row(TrajectoryStep, r))
RECORD_EVAL_RUN = Call("select * from ai.record_eval_run(%s, %s, %s, %s, %s, %s, %s)", lambda r: from_row(EvalRun, r))
GET_EVAL_RUNS = Call("select * from ai.get_eval_runs(%s, %s, %s)", lambda r: from_row(EvalRun, r))
ARCHIVE_SESSIONS = Call("select * from ai.archive_sessions(%s, %s)", lambda r: from_row(ArchivedSession, r))
RESTORE_SESSION = Call("select * from ai.restore_session(%s)", lambda r: from_row(Session, r))
ACT_AS: Call[str] = Call("select ai.act_as(%s) as owner", lambda r: r["owner"])
NOW: Call[datetime] = Call("select ai.now() as now", lambda r: r["now"])

# checkpoints (%b: bytes and bytea[] go in binary, not hex-escaped text)
ULID: Call[str] = Call("select ai.ulid() as ulid", lambda r: r["ulid"])
ULID_TIME: Call[datetime] = Call("select ai.ulid_time(%s) as t", lambda r: r["t"])
PUT_CHECKPOINT: Call[str] = Call(
    "select ai.put_checkpoint(%s, %s, %s, %s, %s, %b, %s, %s, %s, %s, %s, %b, %s, %s, %s) as id", lambda r: r["id"]
)
PUT_WRITES: Call[int] = Call("select ai.put_writes(%s, %s, %s, %s, %s, %s, %s, %b, %s, %s, %s) as n", lambda r: r["n"])
GET_CHECKPOINT = Call("select * from ai.get_checkpoint(%s, %s, %s)", lambda r: from_row(CheckpointRow, r))
LIST_CHECKPOINTS = Call("select * from ai.list_checkpoints(%s, %s, %s, %s, %s)", lambda r: from_row(CheckpointRow, r))
CHECKPOINT_LINEAGE = Call("select * from ai.checkpoint_lineage(%s, %s, %s, %s)", lambda r: from_row(LineageStep, r))
CHECKPOINTS_BETWEEN = Call("select * from ai.checkpoints_between(%s, %s, %s)", lambda r: from_row(CheckpointSummary, r))
FORK_THREAD: Call[str] = Call("select ai.fork_thread(%s, %s, %s, %s) as id", lambda r: r["id"])
COPY_THREAD: Call[int] = Call("select ai.copy_thread(%s, %s) as n", lambda r: r["n"])
DELETE_THREAD: Call[bool] = Call("select ai.delete_thread(%s) as deleted", lambda r: r["deleted"])
DELETE_FOR_RUNS: Call[int] = Call("select ai.delete_for_runs(%s) as n", lambda r: r["n"])
PRUNE_CHECKPOINTS: Call[int] = Call("select ai.prune_checkpoints(%s, %s) as n", lambda r: r["n"])
PRUNE_IDLE_THREADS: Call[int] = Call("select ai.prune_idle_threads(%s, %s) as n", lambda r: r["n"])


@dataclass(frozen=True, slots=True)
class ChannelValue:
    """A channel value for put_checkpoint, stored once per (channel, version)."""

    channel: str
    version: str
    type: str
    blob: bytes | None


@dataclass(frozen=True, slots=True)
class PendingWrite:
    """A pending write for put_writes: (idx, channel) of one task, in the caller's serialization."""

    idx: int
    channel: str
    type: str
    blob: bytes


def _put_checkpoint_args(
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str | None,
    parent_checkpoint_id: str | None,
    type: str,
    checkpoint: bytes,
    metadata: dict[str, Any] | None,
    channel_versions: dict[str, Any] | None,
    values: Sequence[ChannelValue],
    job_id: int | None,
    fencing_token: int | None,
    durability: str,
) -> tuple[Any, ...]:
    return (
        thread_id,
        checkpoint_ns,
        checkpoint_id,
        parent_checkpoint_id,
        type,
        checkpoint,
        _json(metadata or {}),
        _json(channel_versions or {}),
        [v.channel for v in values],
        [v.version for v in values],
        [v.type for v in values],
        [v.blob for v in values],
        job_id,
        fencing_token,
        durability,
    )


def _put_writes_args(
    thread_id: str,
    checkpoint_ns: str,
    checkpoint_id: str,
    task_id: str,
    writes: Sequence[PendingWrite],
    task_path: str,
    job_id: int | None,
    fencing_token: int | None,
) -> tuple[Any, ...]:
    return (
        thread_id,
        checkpoint_ns,
        checkpoint_id,
        task_id,
        [w.idx for w in writes],
        [w.channel for w in writes],
        [w.type for w in writes],
        [w.blob for w in writes],
        task_path,
        job_id,
        fencing_token,
    )


def _json(value: Any) -> Jsonb | None:
    """A JSON parameter; Python None is SQL NULL (which the functions refuse where a value is required)."""
    return None if value is None else Jsonb(value)


def _create_session_args(thread_id: str | None, config: dict[str, Any] | None) -> tuple[Any, ...]:
    return (thread_id, _json({} if config is None else config))


def _append_args(
    thread_id: str,
    role: MessageRole,
    content: Any,
    turn: int | None,
    idempotency_key: str | None,
    token_count: int | None,
) -> tuple[Any, ...]:
    return (thread_id, role, _json(content), turn, idempotency_key, token_count)


def _eval_run_args(
    thread_id: str,
    candidate: str,
    passed: bool,
    scores: dict[str, Any] | None,
    diff: Any,
    replay_thread_id: str | None,
    from_checkpoint_id: str | None,
) -> tuple[Any, ...]:
    return (
        thread_id,
        candidate,
        passed,
        _json({} if scores is None else scores),
        _json({} if diff is None else diff),
        replay_thread_id,
        from_checkpoint_id,
    )


def _reraise(error: psycopg.Error) -> Exception:
    translated = errors.translate(error)
    return error if translated is error else translated


def _synced(conn: psycopg.Connection[Any]) -> AbstractContextManager[Any]:
    """A nested pipeline block when the caller's connection is in pipeline mode: it syncs on exit,
    so a call has reached the server (and, on an autocommit connection, committed) when it returns."""
    if conn.info.pipeline_status != pq.PipelineStatus.OFF:
        return conn.pipeline()
    return nullcontext()


def _asynced(conn: psycopg.AsyncConnection[Any]) -> AbstractAsyncContextManager[Any]:
    """The asyncio twin of :func:`_synced`."""
    if conn.info.pipeline_status != pq.PipelineStatus.OFF:
        return conn.pipeline()
    return nullcontext()


# connection -> True when it reaches the server through a pooler (found on its first call).
_POOLED: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()
_PID = "select pg_catalog.pg_backend_pid()"


def _pooled(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any], server_pid: int) -> bool:
    # The server announces its backend's pid at connect (BackendKeyData). A pooler that shares
    # server connections must answer cancel requests itself, so it announces a key of its own:
    # PgBouncer, pgcat, Supavisor, RDS Proxy do. A direct connection (or a plain TCP proxy)
    # announces the pid of the backend that then answers pg_backend_pid().
    pooled = server_pid != conn.info.backend_pid
    _POOLED[conn] = pooled
    return pooled


def behind_pooler(conn: psycopg.Connection[Any]) -> bool:
    """True when ``conn`` reaches the server through a pooler (one round trip the first time,
    then remembered for the connection). The client then never prepares a statement on it."""
    known = _POOLED.get(conn)
    if known is not None:
        return known
    with conn.cursor(row_factory=tuple_row) as cur:
        row = cur.execute(_PID, prepare=False).fetchone()
    return _pooled(conn, row[0] if row else -1)


async def abehind_pooler(conn: psycopg.AsyncConnection[Any]) -> bool:
    """The asyncio twin of :func:`behind_pooler`."""
    known = _POOLED.get(conn)
    if known is not None:
        return known
    async with conn.cursor(row_factory=tuple_row) as cur:
        row = await (await cur.execute(_PID, prepare=False)).fetchone()
    return _pooled(conn, row[0] if row else -1)


def _broken(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> bool:
    """The connection was lost (not closed by its owner): only then is it replaced."""
    return conn.broken


def _idle(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> bool:
    return conn.info.transaction_status == TransactionStatus.IDLE and conn.info.pipeline_status == pq.PipelineStatus.OFF


def _consume(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> None:
    # A server that ended an idle backend sent its FATAL message and closed the socket: reading
    # what is there (libpq's sockets never block) marks the connection bad. No round trip.
    with suppress(psycopg.OperationalError):
        conn.pgconn.consume_input()


def _lost(conn: psycopg.Connection[Any]) -> bool:
    """The connection was lost, found before a call without a round trip: already known as
    broken, or, while idle, closed by the server since its last call."""
    if not conn.closed and _idle(conn):
        with conn.lock:  # a call of another thread may be on it
            if not conn.closed and _idle(conn):
                _consume(conn)
    return conn.broken


async def _alost(conn: psycopg.AsyncConnection[Any]) -> bool:
    """The asyncio twin of :func:`_lost`."""
    if not conn.closed and _idle(conn):
        async with conn.lock:
            if not conn.closed and _idle(conn):
                _consume(conn)
    return conn.broken


def _reconnect_args(conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> tuple[str, dict[str, Any]]:
    """What it takes to open the same connection again: its conninfo, password, autocommit,
    prepare_threshold, row factory and adapters."""
    kwargs: dict[str, Any] = {
        "autocommit": conn.autocommit,
        "prepare_threshold": conn.prepare_threshold,
        "row_factory": conn.row_factory,
        "context": conn,
    }
    if conn.info.password:
        kwargs["password"] = conn.info.password
    return conn.info.dsn, kwargs


class _Attempts:
    """The retry loop of one call: whether the error may be retried, and the sleep before the
    next try."""

    def __init__(self, policy: RetryPolicy | None, sql: str, params: Sequence[Any]):
        self.policy = policy
        self.retryable = policy is not None and is_idempotent(sql, params)
        self._delays = policy.delays() if policy is not None and self.retryable else iter(())
        self.sql = sql
        self.tries = 0
        # whether a try may have committed: its statement was sent on an autocommit connection,
        # or it ran and the commit that followed was lost
        self.sent = False
        self.autocommit = False
        self.executed = False

    def sending(self, conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> None:
        self.sent = True
        self.autocommit = self.autocommit or conn.autocommit

    def error(self, error: psycopg.Error, in_callers_transaction: bool) -> Exception:
        """What reaches the caller: a write that may have committed, outside the caller's
        transaction, as OutcomeUnknown; anything else as errors.translate has it."""
        may_have_committed = self.executed or (self.sent and self.autocommit)
        if may_have_committed and not in_callers_transaction and is_connection_error(error) and writes(self.sql):
            name = function_of(self.sql) or "?"
            detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            return errors.OutcomeUnknown(
                f"the connection was lost during ai.{name}(): it may or may not have committed, and it was not run "
                f"again ({type(error).__name__}: {detail})",
                sqlstate=error.sqlstate or "",
                cause=error,
            )
        return _reraise(error)

    def delay_after(self, error: BaseException, in_callers_transaction: bool) -> float | None:
        """The sleep before the next try, or None when ``error`` must reach the caller."""
        self.tries += 1
        if not self.retryable or in_callers_transaction or not is_connection_error(error):
            return None
        delay = next(self._delays, None)
        if delay is not None:
            log.warning("retrying %s after %s (try %d): %s", self.sql, type(error).__name__, self.tries, error)
        return delay


class Client(
    QueueMethods, SideEffectMethods, HumanInTheLoopMethods, UsageMethods, RetrievalMethods, StreamMethods, MemoryMethods
):
    """Synchronous client over a psycopg ``Connection`` or a ``ConnectionPool``."""

    def __init__(self, source: SyncSource, *, retry: RetryPolicy | None = None):
        self._source = source
        self.retry = retry
        self._owned = False  # from_conn_string: the client opened the connection and replaces a lost one
        self._reconnecting = threading.Lock()

    @classmethod
    @contextmanager
    def from_conn_string(
        cls, conninfo: str, *, retry: RetryPolicy | None = ONCE, **connect_kwargs: Any
    ) -> Iterator[Client]:
        """A client over one new connection (:data:`CONNECT_KWARGS`, then ``connect_kwargs``),
        closed when the block ends. It owns the connection: one the server ended is replaced on the
        next call, a call safe to retry is retried as ``retry`` says (once by default), and a
        write that may have committed raises :class:`~agent_state.errors.OutcomeUnknown`."""
        client = cls(psycopg.Connection.connect(conninfo, **{**CONNECT_KWARGS, **connect_kwargs}), retry=retry)
        client._owned = True
        try:
            yield client
        finally:
            client._source.close()

    def _replace_if_lost(self) -> None:
        """Before a call: a single connection this client may replace (its own, or any with a
        retry policy) that the server ended is opened again."""
        if isinstance(self._source, ConnectionPool) or not (self._owned or self.retry is not None):
            return
        if _lost(self._source):
            self._recover()

    @property
    def source(self) -> SyncSource:
        """The pool or connection in use (after a reconnect, the new connection)."""
        return self._source

    def _in_callers_transaction(self) -> bool:
        """True when a retry must not happen: the call runs in the caller's transaction, or on a
        connection its owner closed (only a lost one is opened again)."""
        if isinstance(self._source, ConnectionPool):
            return False
        conn = self._source
        if conn.closed and not conn.broken:
            return True
        return not conn.autocommit and conn.info.transaction_status in (
            TransactionStatus.INTRANS,
            TransactionStatus.INERROR,
            TransactionStatus.ACTIVE,
        )

    def _recover(self) -> None:
        """Before a retry: a lost single connection is opened again; a pool checks its idle
        connections (after a restart they are all dead) and replaces the broken ones."""
        if isinstance(self._source, ConnectionPool):
            self._source.check()
            return
        with self._reconnecting:  # two threads that found it lost open one connection
            old = self._source
            if isinstance(old, psycopg.Connection) and _broken(old):
                dsn, kwargs = _reconnect_args(old)
                self._source = psycopg.Connection.connect(dsn, **kwargs)
                old.close()

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        if isinstance(self._source, ConnectionPool):
            with self._source.connection() as conn:
                yield conn
            return
        conn = self._source
        owns_transaction = not conn.autocommit and conn.info.transaction_status == TransactionStatus.IDLE
        try:
            yield conn
        except BaseException:
            if owns_transaction and not conn.closed:
                conn.rollback()
            raise
        if owns_transaction:
            conn.commit()

    def _fetch(
        self, sql: str, params: Sequence[Any], row_factory: RowFactory[Any] | None = None, binary: bool = False
    ) -> list[Any]:
        """Runs one statement (never prepared server-side behind a pooler) and returns its rows;
        retried as the policy says. psycopg errors come out translated (errors.translate)."""
        attempts = _Attempts(self.retry, sql, params)
        while True:
            callers = self._in_callers_transaction()
            try:
                if attempts.tries:
                    self._recover()
                else:
                    self._replace_if_lost()
                with self._connection() as conn, _synced(conn):
                    prepare = False if behind_pooler(conn) else None
                    with conn.cursor(binary=binary) as cur:
                        if row_factory is not None:
                            cur.row_factory = row_factory
                        attempts.sending(conn)
                        cur.execute(sql, params, prepare=prepare)
                        attempts.executed = True
                        rows = cur.fetchall()
                return rows
            except psycopg.Error as error:
                delay = attempts.delay_after(error, callers)
                if delay is None:
                    raise attempts.error(error, callers) from error
                time.sleep(delay)

    def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:
        return [call.convert(row) for row in self._fetch(call.sql, params, dict_row)]

    def _one(self, call: Call[T], params: Sequence[Any]) -> T:
        return self._rows(call, params)[0]

    # -- identity -------------------------------------------------------------------------------

    @contextmanager
    def acting_as(self, owner: str) -> Iterator[Client]:
        """For an ai_service back-end: a client bound to one connection and one transaction in
        which every call acts for ``owner`` (``ai.act_as``). Commits when the block ends."""
        with self._connection() as conn, conn.transaction():
            bound = Client(conn)  # inside one transaction: nothing is retried
            bound._one(ACT_AS, (owner,))
            yield bound

    def now(self) -> datetime:
        """``ai.now()``: the database clock every function uses."""
        return self._one(NOW, ())

    # -- sessions -------------------------------------------------------------------------------

    def create_session(self, thread_id: str | None = None, config: dict[str, Any] | None = None) -> Session:
        """``ai.create_session``: a new session (fresh id when None); the existing one on retry."""
        return self._one(CREATE_SESSION, _create_session_args(thread_id, config))

    def get_session(self, thread_id: str) -> Session:
        """``ai.get_session``."""
        return self._one(GET_SESSION, (thread_id,))

    def set_session_status(self, thread_id: str, status: SessionStatus) -> Session:
        """``ai.set_session_status``: active, waiting, completed, failed or cancelled."""
        return self._one(SET_SESSION_STATUS, (thread_id, status))

    # -- messages -------------------------------------------------------------------------------

    def append_message(
        self,
        thread_id: str,
        role: MessageRole,
        content: Any,
        turn: int | None = None,
        idempotency_key: str | None = None,
        token_count: int | None = None,
        *,
        job_id: int | None = None,
        fencing_token: int | None = None,
    ) -> AppendResult:
        """``ai.append_message_idempotent``: appends once; a retry returns the original row. With
        ``job_id`` and ``fencing_token`` it is a fenced write, one statement: AS006 (LeaseLost) when
        the lease is lost, and checked again when the transaction commits."""
        args = _append_args(thread_id, role, content, turn, idempotency_key, token_count)
        if job_id is None and fencing_token is None:
            return self._one(APPEND_MESSAGE, args)
        return self._one(APPEND_MESSAGE_FENCED, (*args, job_id, fencing_token))

    def get_messages(self, thread_id: str, after_seq: int = 0, max_rows: int = 1000) -> list[Message]:
        """``ai.get_messages``: messages with seq > after_seq, oldest first."""
        return self._rows(GET_MESSAGES, (thread_id, after_seq, max_rows))

    def append_messages(self, thread_id: str, messages: Sequence[NewMessage]) -> list[AppendResult]:
        """``ai.append_messages``: a batch in one transaction, each appended once (retries return
        the originals with ``inserted=False``)."""
        return self._rows(APPEND_MESSAGES, _append_messages_args(thread_id, messages))

    def visible_messages(self, thread_id: str, max_rows: int | None = None) -> list[Message]:
        """``ai.visible_messages``: the newest ``max_rows`` (all when None) messages that are not
        hidden and not compaction summaries, oldest first."""
        return self._rows(VISIBLE_MESSAGES, (thread_id, max_rows))

    def hide_last_message(self, thread_id: str) -> Message | None:
        """``ai.hide_last_message``: hides the newest visible message and returns it (None when
        there is none). The message itself stays."""
        return self._one(HIDE_LAST_MESSAGE, (thread_id,))

    def hide_messages(self, thread_id: str) -> int:
        """``ai.hide_messages``: hides every visible message; returns how many."""
        return self._one(HIDE_MESSAGES, (thread_id,))

    # -- events ---------------------------------------------------------------------------------

    def record_event(self, thread_id: str, kind: str, payload: Any = None) -> Event:
        """``ai.record_event``."""
        return self._one(RECORD_EVENT, (thread_id, kind, _json({} if payload is None else payload)))

    def get_events(
        self,
        thread_id: str,
        after_event_id: int = 0,
        max_rows: int = 1000,
        kinds: Sequence[str] | None = None,
    ) -> list[Event]:
        """``ai.get_events``: events after after_event_id, oldest first, optionally of some kinds."""
        return self._rows(GET_EVENTS, (thread_id, after_event_id, max_rows, None if kinds is None else list(kinds)))

    # -- compaction -----------------------------------------------------------------------------
    # -- checkpoints ----------------------------------------------------------------------------

    def ulid(self) -> str:
        """``ai.ulid()``: a new time-ordered id."""
        return self._one(ULID, ())

    def ulid_time(self, ulid: str) -> datetime:
        """``ai.ulid_time``: the timestamp a ULID encodes."""
        return self._one(ULID_TIME, (ulid,))

    def put_checkpoint(
        self,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str | None,
        parent_checkpoint_id: str | None,
        type: str,
        checkpoint: bytes,
        metadata: dict[str, Any] | None = None,
        channel_versions: dict[str, Any] | None = None,
        values: Sequence[ChannelValue] = (),
        *,
        job_id: int | None = None,
        fencing_token: int | None = None,
        durability: str = "sync",
    ) -> str:
        """``ai.put_checkpoint``: saves a checkpoint and its new channel values; returns its id."""
        args = _put_checkpoint_args(
            thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata,
            channel_versions, values, job_id, fencing_token, durability,
        )  # fmt: skip
        return self._one(PUT_CHECKPOINT, args)

    def put_writes(
        self,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        task_id: str,
        writes: Sequence[PendingWrite],
        task_path: str = "",
        *,
        job_id: int | None = None,
        fencing_token: int | None = None,
    ) -> int:
        """``ai.put_writes``: a task's pending writes, idempotent per (task_id, idx); returns rows written."""
        args = _put_writes_args(
            thread_id, checkpoint_ns, checkpoint_id, task_id, writes, task_path, job_id, fencing_token
        )
        return self._one(PUT_WRITES, args)

    def get_checkpoint(
        self, thread_id: str, checkpoint_ns: str = "", checkpoint_id: str | None = None
    ) -> CheckpointRow | None:
        """``ai.get_checkpoint``: the given checkpoint, or the newest; None when there is none."""
        rows = self._rows(GET_CHECKPOINT, (thread_id, checkpoint_ns, checkpoint_id))
        return rows[0] if rows else None

    def list_checkpoints(
        self,
        thread_id: str | None,
        checkpoint_ns: str | None = None,
        before: str | None = None,
        max_rows: int | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> list[CheckpointRow]:
        """``ai.list_checkpoints``: newest first."""
        flt = None if metadata_filter is None else _json(metadata_filter)
        return self._rows(LIST_CHECKPOINTS, (thread_id, checkpoint_ns, before, max_rows, flt))

    def checkpoint_lineage(
        self, thread_id: str, checkpoint_id: str, checkpoint_ns: str = "", direction: str = "ancestors"
    ) -> list[LineageStep]:
        """``ai.checkpoint_lineage``: the parent chain ('ancestors') or every branch below ('descendants')."""
        return self._rows(CHECKPOINT_LINEAGE, (thread_id, checkpoint_id, checkpoint_ns, direction))

    def checkpoints_between(self, thread_id: str, from_time: datetime, to_time: datetime) -> list[CheckpointSummary]:
        """``ai.checkpoints_between``: checkpoints saved in [from_time, to_time), oldest first."""
        return self._rows(CHECKPOINTS_BETWEEN, (thread_id, from_time, to_time))

    def fork_thread(
        self, source_thread_id: str, checkpoint_id: str, new_thread_id: str | None = None, checkpoint_ns: str = ""
    ) -> str:
        """``ai.fork_thread``: a new thread holding the checkpoint and its ancestors; returns its id."""
        return self._one(FORK_THREAD, (source_thread_id, checkpoint_id, new_thread_id, checkpoint_ns))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> int:
        """``ai.copy_thread``: every checkpoint into a new thread; returns how many."""
        return self._one(COPY_THREAD, (source_thread_id, target_thread_id))

    def delete_thread(self, thread_id: str) -> bool:
        """``ai.delete_thread``: the thread and all it owns, leaving a tombstone; False when not found."""
        return self._one(DELETE_THREAD, (thread_id,))

    def delete_for_runs(self, run_ids: Sequence[str]) -> int:
        """``ai.delete_for_runs``: the checkpoints of these runs; returns how many."""
        return self._one(DELETE_FOR_RUNS, (list(run_ids),))

    def prune_checkpoints(self, thread_ids: Sequence[str], strategy: PruneStrategy = "keep_latest") -> int:
        """``ai.prune_checkpoints``: 'keep_latest' or 'delete'; returns the checkpoints deleted."""
        return self._one(PRUNE_CHECKPOINTS, (list(thread_ids), strategy))

    def prune_idle_threads(self, idle: timedelta, strategy: PruneStrategy = "keep_latest") -> int:
        """``ai.prune_idle_threads``: prunes threads with no checkpoint newer than now - idle."""
        return self._one(PRUNE_IDLE_THREADS, (idle, strategy))

    def context_window(
        self, thread_id: str, window_tokens: int, keep_last: int = 20, threshold: float = 0.7
    ) -> ContextWindow:
        """``ai.context_window``: the newest summary plus every message after it, and whether to compact."""
        return self._one(CONTEXT_WINDOW, (thread_id, window_tokens, keep_last, threshold))

    def record_compaction(
        self, thread_id: str, summary: str, through_seq: int, summary_tokens: int | None = None
    ) -> AppendResult:
        """``ai.record_compaction``: stores a summary of everything up to through_seq; originals stay."""
        return self._one(RECORD_COMPACTION, (thread_id, summary, through_seq, summary_tokens))

    # -- evals ----------------------------------------------------------------------------------

    def trajectory(
        self, thread_id: str, after_checkpoint_id: str | None = None, checkpoint_ns: str = ""
    ) -> list[TrajectoryStep]:
        """``ai.trajectory``: the recorded steps of a thread (tool calls with arguments, final answer),
        optionally only those written after a checkpoint."""
        return self._rows(TRAJECTORY, (thread_id, after_checkpoint_id, checkpoint_ns))

    def record_eval_run(
        self,
        thread_id: str,
        candidate: str,
        passed: bool,
        scores: dict[str, Any] | None = None,
        diff: Any = None,
        replay_thread_id: str | None = None,
        from_checkpoint_id: str | None = None,
    ) -> EvalRun:
        """``ai.record_eval_run``: keeps one replay's outcome for later queries."""
        params = _eval_run_args(thread_id, candidate, passed, scores, diff, replay_thread_id, from_checkpoint_id)
        return self._one(RECORD_EVAL_RUN, params)

    def get_eval_runs(
        self, thread_id: str | None = None, candidate: str | None = None, max_rows: int = 100
    ) -> list[EvalRun]:
        """``ai.get_eval_runs``: the caller's eval runs, newest first."""
        return self._rows(GET_EVAL_RUNS, (thread_id, candidate, max_rows))

    # -- retention ------------------------------------------------------------------------------

    def archive_sessions(
        self, older_than: timedelta = timedelta(days=90), batch_size: int = 1000
    ) -> list[ArchivedSession]:
        """``ai.archive_sessions``: one batch of finished sessions moved to ai_archive (ai_service)."""
        return self._rows(ARCHIVE_SESSIONS, (older_than, batch_size))

    def restore_session(self, thread_id: str) -> Session:
        """``ai.restore_session``: moves an archived session back into the hot tables (ai_service)."""
        return self._one(RESTORE_SESSION, (thread_id,))


class AsyncClient(
    AsyncQueueMethods,
    AsyncSideEffectMethods,
    AsyncHumanInTheLoopMethods,
    AsyncUsageMethods,
    AsyncRetrievalMethods,
    AsyncStreamMethods,
    AsyncMemoryMethods,
):
    """Asynchronous twin of :class:`Client`, over an ``AsyncConnection`` or ``AsyncConnectionPool``."""

    def __init__(self, source: AsyncSource, *, retry: RetryPolicy | None = None):
        self._source = source
        self.retry = retry
        self._owned = False  # from_conn_string: see Client
        self._reconnecting = asyncio.Lock()

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls, conninfo: str, *, retry: RetryPolicy | None = ONCE, **connect_kwargs: Any
    ) -> AsyncIterator[AsyncClient]:
        """The async twin of :meth:`Client.from_conn_string`."""
        conn = await psycopg.AsyncConnection.connect(conninfo, **{**CONNECT_KWARGS, **connect_kwargs})
        client = cls(conn, retry=retry)
        client._owned = True
        try:
            yield client
        finally:
            await client._source.close()

    async def _replace_if_lost(self) -> None:
        """See :meth:`Client._replace_if_lost`."""
        if isinstance(self._source, AsyncConnectionPool) or not (self._owned or self.retry is not None):
            return
        if await _alost(self._source):
            await self._recover()

    @property
    def source(self) -> AsyncSource:
        """The pool or connection in use (after a reconnect, the new connection)."""
        return self._source

    def _in_callers_transaction(self) -> bool:
        """True when a retry must not happen: the call runs in the caller's transaction, or on a
        connection its owner closed (only a lost one is opened again)."""
        if isinstance(self._source, AsyncConnectionPool):
            return False
        conn = self._source
        if conn.closed and not conn.broken:
            return True
        return not conn.autocommit and conn.info.transaction_status in (
            TransactionStatus.INTRANS,
            TransactionStatus.INERROR,
            TransactionStatus.ACTIVE,
        )

    async def _recover(self) -> None:
        """See :meth:`Client._recover`."""
        if isinstance(self._source, AsyncConnectionPool):
            await self._source.check()
            return
        async with self._reconnecting:
            old = self._source
            if isinstance(old, psycopg.AsyncConnection) and _broken(old):
                dsn, kwargs = _reconnect_args(old)
                self._source = await psycopg.AsyncConnection.connect(dsn, **kwargs)
                await old.close()

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        if isinstance(self._source, AsyncConnectionPool):
            async with self._source.connection() as conn:
                yield conn
            return
        conn = self._source
        owns_transaction = not conn.autocommit and conn.info.transaction_status == TransactionStatus.IDLE
        try:
            yield conn
        except BaseException:
            if owns_transaction and not conn.closed:
                await conn.rollback()
            raise
        if owns_transaction:
            await conn.commit()

    async def _fetch(
        self, sql: str, params: Sequence[Any], row_factory: AsyncRowFactory[Any] | None = None, binary: bool = False
    ) -> list[Any]:
        """See :meth:`Client._fetch`."""
        attempts = _Attempts(self.retry, sql, params)
        while True:
            callers = self._in_callers_transaction()
            try:
                if attempts.tries:
                    await self._recover()
                else:
                    await self._replace_if_lost()
                async with self._connection() as conn, _asynced(conn):
                    prepare = False if await abehind_pooler(conn) else None
                    async with conn.cursor(binary=binary) as cur:
                        if row_factory is not None:
                            cur.row_factory = row_factory
                        attempts.sending(conn)
                        await cur.execute(sql, params, prepare=prepare)
                        attempts.executed = True
                        rows = await cur.fetchall()
                return rows
            except psycopg.Error as error:
                delay = attempts.delay_after(error, callers)
                if delay is None:
                    raise attempts.error(error, callers) from error
                await asyncio.sleep(delay)

    async def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:
        return [call.convert(row) for row in await self._fetch(call.sql, params, dict_row)]

    async def _one(self, call: Call[T], params: Sequence[Any]) -> T:
        return (await self._rows(call, params))[0]

    @asynccontextmanager
    async def acting_as(self, owner: str) -> AsyncIterator[AsyncClient]:
        """See :meth:`Client.acting_as`."""
        async with self._connection() as conn, conn.transaction():
            bound = AsyncClient(conn)  # inside one transaction: nothing is retried
            await bound._one(ACT_AS, (owner,))
            yield bound

    async def now(self) -> datetime:
        return await self._one(NOW, ())

    async def create_session(self, thread_id: str | None = None, config: dict[str, Any] | None = None) -> Session:
        return await self._one(CREATE_SESSION, _create_session_args(thread_id, config))

    async def get_session(self, thread_id: str) -> Session:
        return await self._one(GET_SESSION, (thread_id,))

    async def set_session_status(self, thread_id: str, status: SessionStatus) -> Session:
        return await self._one(SET_SESSION_STATUS, (thread_id, status))

    async def append_message(
        self,
        thread_id: str,
        role: MessageRole,
        content: Any,
        turn: int | None = None,
        idempotency_key: str | None = None,
        token_count: int | None = None,
        *,
        job_id: int | None = None,
        fencing_token: int | None = None,
    ) -> AppendResult:
        args = _append_args(thread_id, role, content, turn, idempotency_key, token_count)
        if job_id is None and fencing_token is None:
            return await self._one(APPEND_MESSAGE, args)
        return await self._one(APPEND_MESSAGE_FENCED, (*args, job_id, fencing_token))

    async def get_messages(self, thread_id: str, after_seq: int = 0, max_rows: int = 1000) -> list[Message]:
        return await self._rows(GET_MESSAGES, (thread_id, after_seq, max_rows))

    async def append_messages(self, thread_id: str, messages: Sequence[NewMessage]) -> list[AppendResult]:
        return await self._rows(APPEND_MESSAGES, _append_messages_args(thread_id, messages))

    async def visible_messages(self, thread_id: str, max_rows: int | None = None) -> list[Message]:
        return await self._rows(VISIBLE_MESSAGES, (thread_id, max_rows))

    async def hide_last_message(self, thread_id: str) -> Message | None:
        return await self._one(HIDE_LAST_MESSAGE, (thread_id,))

    async def hide_messages(self, thread_id: str) -> int:
        return await self._one(HIDE_MESSAGES, (thread_id,))

    async def record_event(self, thread_id: str, kind: str, payload: Any = None) -> Event:
        return await self._one(RECORD_EVENT, (thread_id, kind, _json({} if payload is None else payload)))

    async def get_events(
        self,
        thread_id: str,
        after_event_id: int = 0,
        max_rows: int = 1000,
        kinds: Sequence[str] | None = None,
    ) -> list[Event]:
        params = (thread_id, after_event_id, max_rows, None if kinds is None else list(kinds))
        return await self._rows(GET_EVENTS, params)

    async def context_window(
        self, thread_id: str, window_tokens: int, keep_last: int = 20, threshold: float = 0.7
    ) -> ContextWindow:
        return await self._one(CONTEXT_WINDOW, (thread_id, window_tokens, keep_last, threshold))

    async def record_compaction(
        self, thread_id: str, summary: str, through_seq: int, summary_tokens: int | None = None
    ) -> AppendResult:
        return await self._one(RECORD_COMPACTION, (thread_id, summary, through_seq, summary_tokens))

    async def trajectory(
        self, thread_id: str, after_checkpoint_id: str | None = None, checkpoint_ns: str = ""
    ) -> list[TrajectoryStep]:
        return await self._rows(TRAJECTORY, (thread_id, after_checkpoint_id, checkpoint_ns))

    async def record_eval_run(
        self,
        thread_id: str,
        candidate: str,
        passed: bool,
        scores: dict[str, Any] | None = None,
        diff: Any = None,
        replay_thread_id: str | None = None,
        from_checkpoint_id: str | None = None,
    ) -> EvalRun:
        params = _eval_run_args(thread_id, candidate, passed, scores, diff, replay_thread_id, from_checkpoint_id)
        return await self._one(RECORD_EVAL_RUN, params)

    async def get_eval_runs(
        self, thread_id: str | None = None, candidate: str | None = None, max_rows: int = 100
    ) -> list[EvalRun]:
        return await self._rows(GET_EVAL_RUNS, (thread_id, candidate, max_rows))

    async def archive_sessions(
        self, older_than: timedelta = timedelta(days=90), batch_size: int = 1000
    ) -> list[ArchivedSession]:
        return await self._rows(ARCHIVE_SESSIONS, (older_than, batch_size))

    async def restore_session(self, thread_id: str) -> Session:
        return await self._one(RESTORE_SESSION, (thread_id,))

    # -- checkpoints ----------------------------------------------------------------------------

    async def ulid(self) -> str:
        """``ai.ulid()``: a new time-ordered id."""
        return await self._one(ULID, ())

    async def ulid_time(self, ulid: str) -> datetime:
        """``ai.ulid_time``: the timestamp a ULID encodes."""
        return await self._one(ULID_TIME, (ulid,))

    async def put_checkpoint(
        self,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str | None,
        parent_checkpoint_id: str | None,
        type: str,
        checkpoint: bytes,
        metadata: dict[str, Any] | None = None,
        channel_versions: dict[str, Any] | None = None,
        values: Sequence[ChannelValue] = (),
        *,
        job_id: int | None = None,
        fencing_token: int | None = None,
        durability: str = "sync",
    ) -> str:
        """``ai.put_checkpoint``: saves a checkpoint and its new channel values; returns its id."""
        args = _put_checkpoint_args(
            thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata,
            channel_versions, values, job_id, fencing_token, durability,
        )  # fmt: skip
        return await self._one(PUT_CHECKPOINT, args)

    async def put_writes(
        self,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        task_id: str,
        writes: Sequence[PendingWrite],
        task_path: str = "",
        *,
        job_id: int | None = None,
        fencing_token: int | None = None,
    ) -> int:
        """``ai.put_writes``: a task's pending writes, idempotent per (task_id, idx); returns rows written."""
        args = _put_writes_args(
            thread_id, checkpoint_ns, checkpoint_id, task_id, writes, task_path, job_id, fencing_token
        )
        return await self._one(PUT_WRITES, args)

    async def get_checkpoint(
        self, thread_id: str, checkpoint_ns: str = "", checkpoint_id: str | None = None
    ) -> CheckpointRow | None:
        """``ai.get_checkpoint``: the given checkpoint, or the newest; None when there is none."""
        rows = await self._rows(GET_CHECKPOINT, (thread_id, checkpoint_ns, checkpoint_id))
        return rows[0] if rows else None

    async def list_checkpoints(
        self,
        thread_id: str | None,
        checkpoint_ns: str | None = None,
        before: str | None = None,
        max_rows: int | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> list[CheckpointRow]:
        """``ai.list_checkpoints``: newest first."""
        flt = None if metadata_filter is None else _json(metadata_filter)
        return await self._rows(LIST_CHECKPOINTS, (thread_id, checkpoint_ns, before, max_rows, flt))

    async def checkpoint_lineage(
        self, thread_id: str, checkpoint_id: str, checkpoint_ns: str = "", direction: str = "ancestors"
    ) -> list[LineageStep]:
        """``ai.checkpoint_lineage``: the parent chain ('ancestors') or every branch below ('descendants')."""
        return await self._rows(CHECKPOINT_LINEAGE, (thread_id, checkpoint_id, checkpoint_ns, direction))

    async def checkpoints_between(
        self, thread_id: str, from_time: datetime, to_time: datetime
    ) -> list[CheckpointSummary]:
        """``ai.checkpoints_between``: checkpoints saved in [from_time, to_time), oldest first."""
        return await self._rows(CHECKPOINTS_BETWEEN, (thread_id, from_time, to_time))

    async def fork_thread(
        self, source_thread_id: str, checkpoint_id: str, new_thread_id: str | None = None, checkpoint_ns: str = ""
    ) -> str:
        """``ai.fork_thread``: a new thread holding the checkpoint and its ancestors; returns its id."""
        return await self._one(FORK_THREAD, (source_thread_id, checkpoint_id, new_thread_id, checkpoint_ns))

    async def copy_thread(self, source_thread_id: str, target_thread_id: str) -> int:
        """``ai.copy_thread``: every checkpoint into a new thread; returns how many."""
        return await self._one(COPY_THREAD, (source_thread_id, target_thread_id))

    async def delete_thread(self, thread_id: str) -> bool:
        """``ai.delete_thread``: the thread and all it owns, leaving a tombstone; False when not found."""
        return await self._one(DELETE_THREAD, (thread_id,))

    async def delete_for_runs(self, run_ids: Sequence[str]) -> int:
        """``ai.delete_for_runs``: the checkpoints of these runs; returns how many."""
        return await self._one(DELETE_FOR_RUNS, (list(run_ids),))

    async def prune_checkpoints(self, thread_ids: Sequence[str], strategy: PruneStrategy = "keep_latest") -> int:
        """``ai.prune_checkpoints``: 'keep_latest' or 'delete'; returns the checkpoints deleted."""
        return await self._one(PRUNE_CHECKPOINTS, (list(thread_ids), strategy))

    async def prune_idle_threads(self, idle: timedelta, strategy: PruneStrategy = "keep_latest") -> int:
        """``ai.prune_idle_threads``: prunes threads with no checkpoint newer than now - idle."""
        return await self._one(PRUNE_IDLE_THREADS, (idle, strategy))
