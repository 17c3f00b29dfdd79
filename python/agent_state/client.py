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
from datetime import datetime
from typing import Any, Union

import psycopg
from psycopg import errors as pg_errors
from psycopg import pq
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.pq import TransactionStatus
from psycopg.rows import AsyncRowFactory, RowFactory, dict_row, tuple_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from . import errors
from ._calls import Call, T
from .checkpoints import AsyncCheckpointMethods, CheckpointMethods
from .checkpoints import ChannelValue as ChannelValue
from .checkpoints import PendingWrite as PendingWrite
from .console_reads import AsyncConsoleReadMethods, ConsoleReadMethods
from .evals import AsyncEvalMethods, EvalMethods
from .hitl import AsyncHumanInTheLoopMethods, HumanInTheLoopMethods
from .memory import AsyncMemoryMethods, MemoryMethods
from .messages import AsyncMessageMethods, MessageMethods
from .queue import AsyncQueueMethods, QueueMethods
from .retention import AsyncRetentionMethods, RetentionMethods
from .retrievals import AsyncRetrievalMethods, RetrievalMethods
from .retry import (
    ONCE,
    POOL_RECONNECT_TIMEOUT,
    RETRY_POOL_TIMEOUT,
    RetryPolicy,
    function_of,
    is_connection_error,
    is_idempotent,
    is_read_only_error,
    writes,
)
from .sessions import AsyncSessionMethods, SessionMethods
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


ACT_AS: Call[str] = Call("select ai.act_as(%s) as owner", lambda r: r["owner"])
NOW: Call[datetime] = Call("select ai.now() as now", lambda r: r["now"])


def _reraise(error: psycopg.Error) -> Exception:
    translated = errors.translate(error)
    return error if translated is error else translated


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


#: Keyword arguments of ``connect`` that are psycopg's own, not connection parameters.
_PSYCOPG_KWARGS = frozenset(("autocommit", "prepare_threshold", "context", "row_factory", "cursor_factory"))


def user_conninfo(conninfo: str, connect_kwargs: dict[str, Any]) -> str:
    """The conninfo a lost connection is opened again through: the one the user gave (every host
    of a multi-host URL, ``target_session_attrs``, ...) with the connection parameters given as
    keywords. psycopg tries the hosts itself and keeps only the one it reached
    (``conn.info.dsn``), which after a failover is the wrong one."""
    params = {k: v for k, v in connect_kwargs.items() if k not in _PSYCOPG_KWARGS and v is not None}
    return make_conninfo(conninfo, **params)


def _reconnect_args(
    conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any], conninfo: str | None = None
) -> tuple[str, dict[str, Any]]:
    """What it takes to open the same connection again: the conninfo the user gave (else the
    connection's own, which names only the host it reached), its password, autocommit,
    prepare_threshold, row factory and adapters."""
    kwargs: dict[str, Any] = {
        "autocommit": conn.autocommit,
        "prepare_threshold": conn.prepare_threshold,
        "row_factory": conn.row_factory,
        "context": conn,
    }
    if conn.info.password and (conninfo is None or "password" not in conninfo_to_dict(conninfo)):
        kwargs["password"] = conn.info.password
    return (conninfo if conninfo is not None else conn.info.dsn), kwargs


def _stale_plan(error: BaseException) -> bool:
    """A statement whose plan was cached before a deploy changed the row type a function returns
    (a column added to ai.agent_jobs under a live fleet): Postgres does not plan it again, for a
    prepared statement of the client nor for a statement cached inside a PL/pgSQL function, and
    the statement fails whole. ``DISCARD PLANS`` and a second try plan it anew."""
    text = str(error)
    if isinstance(error, pg_errors.FeatureNotSupported):
        return "cached plan must not change result type" in text
    return isinstance(error, pg_errors.DatatypeMismatch) and (
        "return row and query-specified return row do not match" in text
        or "wrong record type supplied in RETURN NEXT" in text
    )


def _delegated_clock_refused(error: BaseException) -> bool:
    """A call Citus delegated to the worker that holds its thread (one function of ``ai`` called
    alone in a ``select`` outside a transaction block), refused there because the calling role may freeze the test clock
    (AS072: the worker cannot see a clock frozen on the coordinator). It failed whole, before it
    wrote anything. Sent again inside a materialized CTE, which Citus does not delegate, it runs on
    the coordinator, which reads the clock and sends its values (docs/scaling.md, "The test clock
    under delegation"); one statement still, as safe on a connection shared by tasks or in
    pipeline mode as the first. Test clusters only: a production cluster has no role
    ai_test_clock, and nothing is refused there."""
    return isinstance(error, psycopg.Error) and error.sqlstate == "AS072"


class _Attempts:
    """The retry loop of one call: whether the error may be retried, and the sleep before the
    next try."""

    def __init__(self, policy: RetryPolicy | None, sql: str, params: Sequence[Any]):
        self.policy = policy
        self.retryable = policy is not None and is_idempotent(sql, params)
        self._delays = policy.delays() if policy is not None else iter(())
        self._deadline = policy.deadline(time.monotonic()) if policy is not None else 0.0
        self.sql = sql
        self.tries = 0
        # whether some try may have committed: its statement was sent on an autocommit connection,
        # or it ran and the commit that followed was lost. A try refused as read-only (25006), or
        # one that failed before its statement was sent (a reconnect refused), wrote nothing.
        self.sent = False
        self.autocommit = False
        self.executed = False
        self.may_have_committed = False
        # tries sent again because a deploy changed a row type under a cached plan (_stale_plan)
        self.replans = 0
        # the statement of the next try: sql, or sql in a CTE that Citus does not delegate, after
        # a worker refused the delegated call (_delegated_clock_refused)
        self.statement = sql

    def sending(self, conn: psycopg.Connection[Any] | psycopg.AsyncConnection[Any]) -> None:
        self.sent = True
        self.autocommit = conn.autocommit

    def _settle(self, error: BaseException) -> None:
        """Books the try that just failed, then starts the next one."""
        if not is_read_only_error(error) and (self.executed or (self.sent and self.autocommit)):
            self.may_have_committed = True
        self.sent = self.executed = False

    def error(self, error: psycopg.Error, in_callers_transaction: bool) -> Exception:
        """What reaches the caller: a write that may have committed, outside the caller's
        transaction, as OutcomeUnknown; anything else as errors.translate has it."""
        if self.may_have_committed and not in_callers_transaction and is_connection_error(error) and writes(self.sql):
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
        """The sleep before the next try, or None when ``error`` must reach the caller. After a
        connection error a call is tried again, while the policy's tries and time last, when it
        is safe to retry or when no try may have written anything yet (each was refused as
        read-only, or failed before its statement was sent). A statement planned before a deploy
        changed a row type (:func:`_stale_plan`) is sent again at once, with or without a policy,
        after ``DISCARD PLANS``: it failed whole, so it wrote nothing. So is a call a Citus worker
        refused under delegation (:func:`_delegated_clock_refused`), once, in a form that is not
        delegated."""
        self.tries += 1
        if not in_callers_transaction and _delegated_clock_refused(error) and self.statement == self.sql:
            self.statement = f"with not_delegated as materialized ({self.sql}) select * from not_delegated"
            self.sent = self.executed = False
            log.info("sending %s again, not delegated: %s", self.sql, error)
            return 0.0
        if not in_callers_transaction and _stale_plan(error) and self.replans < 3:
            self.replans += 1
            self.sent = self.executed = False
            log.info("planning %s again after a deploy changed a row type: %s", self.sql, error)
            return 0.0
        self._settle(error)
        if self.policy is None or in_callers_transaction or not is_connection_error(error):
            return None
        if not (self.retryable or not self.may_have_committed):
            return None
        delay = next(self._delays, None)
        if delay is not None and time.monotonic() + delay > self._deadline:
            delay = None
        if delay is not None:
            log.warning("retrying %s after %s (try %d): %s", self.sql, type(error).__name__, self.tries, error)
        return delay


# <async>
def _asynced(conn: psycopg.AsyncConnection[Any]) -> AbstractAsyncContextManager[Any]:
    """A nested pipeline block when the caller's connection is in pipeline mode: it syncs on exit,
    so a call has reached the server (and, on an autocommit connection, committed) when it returns."""
    if conn.info.pipeline_status != pq.PipelineStatus.OFF:
        return conn.pipeline()
    return nullcontext()


async def abehind_pooler(conn: psycopg.AsyncConnection[Any]) -> bool:
    """True when ``conn`` reaches the server through a pooler (one round trip the first time,
    then remembered for the connection). The client then never prepares a statement on it."""
    known = _POOLED.get(conn)
    if known is not None:
        return known
    async with conn.cursor(row_factory=tuple_row) as cur:
        row = await (await cur.execute(_PID, prepare=False)).fetchone()
    return _pooled(conn, row[0] if row else -1)


async def _alost(conn: psycopg.AsyncConnection[Any]) -> bool:
    """The connection was lost, found before a call without a round trip: already known as
    broken, or, while idle, closed by the server since its last call."""
    if not conn.closed and _idle(conn):
        async with conn.lock:  # a call of another thread or task may be on it
            if not conn.closed and _idle(conn):
                _consume(conn)
    return conn.broken


class AsyncClient(
    AsyncSessionMethods,
    AsyncMessageMethods,
    AsyncCheckpointMethods,
    AsyncEvalMethods,
    AsyncRetentionMethods,
    AsyncQueueMethods,
    AsyncSideEffectMethods,
    AsyncHumanInTheLoopMethods,
    AsyncUsageMethods,
    AsyncRetrievalMethods,
    AsyncStreamMethods,
    AsyncConsoleReadMethods,
    AsyncMemoryMethods,
):
    """The client over a psycopg ``AsyncConnection`` or a pool (``AsyncConnectionPool``)."""

    def __init__(
        self,
        source: AsyncSource,
        *,
        retry: RetryPolicy | None = None,
        conninfo: str | None = None,
        pool_timeout: float | None = None,
    ):
        """``conninfo``: what a lost single connection is opened again through (with ``retry``);
        pass the conninfo the connection was opened with when it names several hosts
        (``host=a,b target_session_attrs=read-write``): psycopg keeps only the host it reached.
        ``pool_timeout``: how long a call waits for a pool's connection (the pool's ``timeout``
        when None); the Worker's own calls wait briefly, so that each try after an outage asks
        the pool for a new connection at once. With ``retry`` over a pool, each try waits at most
        :data:`~agent_state.retry.RETRY_POOL_TIMEOUT` unless ``pool_timeout`` says otherwise,
        and the pool's ``reconnect_timeout`` is capped at
        :data:`~agent_state.retry.POOL_RECONNECT_TIMEOUT`, as a Worker does: the policy's tries,
        not the pool's doubling reconnect waits, find the database back after an outage or a
        failover (docs/high-availability.md)."""
        if retry is not None and isinstance(source, AsyncConnectionPool):
            if source.reconnect_timeout > POOL_RECONNECT_TIMEOUT:
                source.reconnect_timeout = POOL_RECONNECT_TIMEOUT
            if pool_timeout is None:
                pool_timeout = min(source.timeout, RETRY_POOL_TIMEOUT)
        self._source = source
        self._pool_timeout = pool_timeout
        self.retry = retry
        self._owned = False  # from_conn_string: the client opened the connection and replaces a lost one
        self._reconnecting = asyncio.Lock()
        self._conninfo = conninfo
        self._read_only: Any = None  # the single connection a write found read-only: replaced before the next try

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls, conninfo: str, *, retry: RetryPolicy | None = ONCE, **connect_kwargs: Any
    ) -> AsyncIterator[AsyncClient]:
        """A client over one new connection (:data:`CONNECT_KWARGS`, then ``connect_kwargs``),
        closed when the block ends. It owns the connection: one the server ended is replaced on the
        next call, a call safe to retry is retried as ``retry`` says (once by default), and a
        write that may have committed raises :class:`~agent_state.errors.OutcomeUnknown`."""
        conn = await psycopg.AsyncConnection.connect(conninfo, **{**CONNECT_KWARGS, **connect_kwargs})
        client = cls(conn, retry=retry, conninfo=user_conninfo(conninfo, connect_kwargs))
        client._owned = True
        try:
            yield client
        finally:
            await client._source.close()

    async def _replace_if_lost(self) -> None:
        """Before a call: a single connection this client may replace (its own, or any with a
        retry policy) that the server ended is opened again."""
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
        """Before a retry: a lost single connection is opened again; a pool checks its idle
        connections (after a restart they are all dead) and replaces the broken ones."""
        if isinstance(self._source, AsyncConnectionPool):
            await self._source.check()
            return
        async with self._reconnecting:  # two callers that found it lost open one connection
            old = self._source
            if isinstance(old, psycopg.AsyncConnection) and (_broken(old) or old is self._read_only):
                dsn, kwargs = _reconnect_args(old, self._conninfo)
                self._source = await psycopg.AsyncConnection.connect(dsn, **kwargs)
                self._read_only = None
                await old.close()

    async def _drop_read_only(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """A write found the server read-only (a standby, or a node a failover has not made
        writable yet): a pool's connection is closed (the pool replaces it through its conninfo),
        a single one this client may replace is replaced before the next try."""
        if isinstance(self._source, AsyncConnectionPool):
            await conn.close()
        elif self._owned or self.retry is not None:
            self._read_only = conn

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        if isinstance(self._source, AsyncConnectionPool):
            async with self._source.connection(timeout=self._pool_timeout) as conn:
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
        """Runs one statement (never prepared server-side behind a pooler) and returns its rows;
        retried as the policy says. psycopg errors come out translated (errors.translate)."""
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
                    if attempts.replans:
                        # psycopg's prepared statements go (DEALLOCATE ALL before the next
                        # statement: psycopg keeps a statement that failed), and PL/pgSQL's cached
                        # plans are planned again (DISCARD PLANS)
                        conn._prepared.clear()
                        await conn.execute("discard plans", prepare=False)
                    try:
                        async with conn.cursor(binary=binary) as cur:
                            if row_factory is not None:
                                cur.row_factory = row_factory
                            attempts.sending(conn)
                            await cur.execute(attempts.statement, params, prepare=prepare)
                            attempts.executed = True
                            rows = await cur.fetchall()
                    except psycopg.Error as error:
                        if is_read_only_error(error) and not callers:
                            await self._drop_read_only(conn)
                        raise
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

    # -- identity -------------------------------------------------------------------------------

    @asynccontextmanager
    async def acting_as(self, owner: str) -> AsyncIterator[AsyncClient]:
        """For an ai_service back-end: a client bound to one connection and one transaction in
        which every call acts for ``owner`` (``ai.act_as``). Commits when the block ends."""
        async with self._connection() as conn, conn.transaction():
            bound = AsyncClient(conn)  # inside one transaction: nothing is retried
            await bound._one(ACT_AS, (owner,))
            yield bound

    async def now(self) -> datetime:
        """``ai.now()``: the database clock every function uses."""
        return await self._one(NOW, ())


# </async>


# <sync> generated by scripts/async_to_sync.py from the <async> block above: do not edit
def _synced(conn: psycopg.Connection[Any]) -> AbstractContextManager[Any]:
    """A nested pipeline block when the caller's connection is in pipeline mode: it syncs on exit,
    so a call has reached the server (and, on an autocommit connection, committed) when it returns."""
    if conn.info.pipeline_status != pq.PipelineStatus.OFF:
        return conn.pipeline()
    return nullcontext()


def behind_pooler(conn: psycopg.Connection[Any]) -> bool:
    """True when ``conn`` reaches the server through a pooler (one round trip the first time,
    then remembered for the connection). The client then never prepares a statement on it."""
    known = _POOLED.get(conn)
    if known is not None:
        return known
    with conn.cursor(row_factory=tuple_row) as cur:
        row = cur.execute(_PID, prepare=False).fetchone()
    return _pooled(conn, row[0] if row else -1)


def _lost(conn: psycopg.Connection[Any]) -> bool:
    """The connection was lost, found before a call without a round trip: already known as
    broken, or, while idle, closed by the server since its last call."""
    if not conn.closed and _idle(conn):
        with conn.lock:  # a call of another thread or task may be on it
            if not conn.closed and _idle(conn):
                _consume(conn)
    return conn.broken


class Client(
    SessionMethods,
    MessageMethods,
    CheckpointMethods,
    EvalMethods,
    RetentionMethods,
    QueueMethods,
    SideEffectMethods,
    HumanInTheLoopMethods,
    UsageMethods,
    RetrievalMethods,
    StreamMethods,
    ConsoleReadMethods,
    MemoryMethods,
):
    """The client over a psycopg ``Connection`` or a pool (``ConnectionPool``)."""

    def __init__(
        self,
        source: SyncSource,
        *,
        retry: RetryPolicy | None = None,
        conninfo: str | None = None,
        pool_timeout: float | None = None,
    ):
        """``conninfo``: what a lost single connection is opened again through (with ``retry``);
        pass the conninfo the connection was opened with when it names several hosts
        (``host=a,b target_session_attrs=read-write``): psycopg keeps only the host it reached.
        ``pool_timeout``: how long a call waits for a pool's connection (the pool's ``timeout``
        when None); the Worker's own calls wait briefly, so that each try after an outage asks
        the pool for a new connection at once. With ``retry`` over a pool, each try waits at most
        :data:`~agent_state.retry.RETRY_POOL_TIMEOUT` unless ``pool_timeout`` says otherwise,
        and the pool's ``reconnect_timeout`` is capped at
        :data:`~agent_state.retry.POOL_RECONNECT_TIMEOUT`, as a Worker does: the policy's tries,
        not the pool's doubling reconnect waits, find the database back after an outage or a
        failover (docs/high-availability.md)."""
        if retry is not None and isinstance(source, ConnectionPool):
            if source.reconnect_timeout > POOL_RECONNECT_TIMEOUT:
                source.reconnect_timeout = POOL_RECONNECT_TIMEOUT
            if pool_timeout is None:
                pool_timeout = min(source.timeout, RETRY_POOL_TIMEOUT)
        self._source = source
        self._pool_timeout = pool_timeout
        self.retry = retry
        self._owned = False  # from_conn_string: the client opened the connection and replaces a lost one
        self._reconnecting = threading.Lock()
        self._conninfo = conninfo
        self._read_only: Any = None  # the single connection a write found read-only: replaced before the next try

    @classmethod
    @contextmanager
    def from_conn_string(
        cls, conninfo: str, *, retry: RetryPolicy | None = ONCE, **connect_kwargs: Any
    ) -> Iterator[Client]:
        """A client over one new connection (:data:`CONNECT_KWARGS`, then ``connect_kwargs``),
        closed when the block ends. It owns the connection: one the server ended is replaced on the
        next call, a call safe to retry is retried as ``retry`` says (once by default), and a
        write that may have committed raises :class:`~agent_state.errors.OutcomeUnknown`."""
        conn = psycopg.Connection.connect(conninfo, **{**CONNECT_KWARGS, **connect_kwargs})
        client = cls(conn, retry=retry, conninfo=user_conninfo(conninfo, connect_kwargs))
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
        with self._reconnecting:  # two callers that found it lost open one connection
            old = self._source
            if isinstance(old, psycopg.Connection) and (_broken(old) or old is self._read_only):
                dsn, kwargs = _reconnect_args(old, self._conninfo)
                self._source = psycopg.Connection.connect(dsn, **kwargs)
                self._read_only = None
                old.close()

    def _drop_read_only(self, conn: psycopg.Connection[Any]) -> None:
        """A write found the server read-only (a standby, or a node a failover has not made
        writable yet): a pool's connection is closed (the pool replaces it through its conninfo),
        a single one this client may replace is replaced before the next try."""
        if isinstance(self._source, ConnectionPool):
            conn.close()
        elif self._owned or self.retry is not None:
            self._read_only = conn

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        if isinstance(self._source, ConnectionPool):
            with self._source.connection(timeout=self._pool_timeout) as conn:
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
                    if attempts.replans:
                        # psycopg's prepared statements go (DEALLOCATE ALL before the next
                        # statement: psycopg keeps a statement that failed), and PL/pgSQL's cached
                        # plans are planned again (DISCARD PLANS)
                        conn._prepared.clear()
                        conn.execute("discard plans", prepare=False)
                    try:
                        with conn.cursor(binary=binary) as cur:
                            if row_factory is not None:
                                cur.row_factory = row_factory
                            attempts.sending(conn)
                            cur.execute(attempts.statement, params, prepare=prepare)
                            attempts.executed = True
                            rows = cur.fetchall()
                    except psycopg.Error as error:
                        if is_read_only_error(error) and not callers:
                            self._drop_read_only(conn)
                        raise
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


# </sync>
