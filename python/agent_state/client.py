"""The thin client: one method per SQL function of the ``ai`` schema, sync and async.

The client holds no connection of its own: it is given a psycopg connection or a psycopg_pool
pool. With a pool, each call borrows a connection for that one statement. With a connection,
a call made outside a transaction commits itself (unless the connection is in autocommit), and
a call made inside the caller's transaction joins it, so several calls can commit together.

Every method is exactly one round trip: ``select * from ai.<function>(...)``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar, Union

import psycopg
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from . import errors
from .models import AppendResult, Event, Message, Session, from_row

T = TypeVar("T")
Row = dict[str, Any]

SyncSource = Union["psycopg.Connection[Any]", ConnectionPool]
AsyncSource = Union["psycopg.AsyncConnection[Any]", AsyncConnectionPool]


@dataclass(frozen=True, slots=True)
class _Call:
    """One SQL function call and how to turn its rows into Python values."""

    sql: str
    convert: Callable[[Row], Any]


def _append_result(row: Row) -> AppendResult:
    return AppendResult(message=from_row(Message, row), inserted=row["inserted"])


CREATE_SESSION = _Call("select * from ai.create_session(%s, %s)", lambda r: from_row(Session, r))
GET_SESSION = _Call("select * from ai.get_session(%s)", lambda r: from_row(Session, r))
SET_SESSION_STATUS = _Call("select * from ai.set_session_status(%s, %s)", lambda r: from_row(Session, r))
APPEND_MESSAGE = _Call("select * from ai.append_message_idempotent(%s, %s, %s, %s, %s, %s)", _append_result)
GET_MESSAGES = _Call("select * from ai.get_messages(%s, %s, %s)", lambda r: from_row(Message, r))
RECORD_EVENT = _Call("select * from ai.record_event(%s, %s, %s)", lambda r: from_row(Event, r))
GET_EVENTS = _Call("select * from ai.get_events(%s, %s, %s, %s)", lambda r: from_row(Event, r))
ACT_AS = _Call("select ai.act_as(%s) as owner", lambda r: r["owner"])
NOW = _Call("select ai.now() as now", lambda r: r["now"])


def _json(value: Any) -> Jsonb | None:
    """A JSON parameter; Python None is SQL NULL (which the functions refuse where a value is required)."""
    return None if value is None else Jsonb(value)


def _create_session_args(thread_id: str | None, config: dict[str, Any] | None) -> tuple[Any, ...]:
    return (thread_id, _json({} if config is None else config))


def _append_args(
    thread_id: str,
    role: str,
    content: Any,
    turn: int | None,
    idempotency_key: str | None,
    token_count: int | None,
) -> tuple[Any, ...]:
    return (thread_id, role, _json(content), turn, idempotency_key, token_count)


def _reraise(error: psycopg.Error) -> Exception:
    translated = errors.translate(error)
    return error if translated is error else translated


class Client:
    """Synchronous client over a psycopg ``Connection`` or a ``ConnectionPool``."""

    def __init__(self, source: SyncSource):
        self._source = source

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
            if owns_transaction:
                conn.rollback()
            raise
        if owns_transaction:
            conn.commit()

    def _rows(self, call: _Call, params: Sequence[Any]) -> list[Any]:
        try:
            with self._connection() as conn, conn.cursor(row_factory=dict_row) as cur:
                cur.execute(call.sql, params)
                return [call.convert(row) for row in cur.fetchall()]
        except psycopg.Error as error:
            raise _reraise(error) from error

    def _one(self, call: _Call, params: Sequence[Any]) -> Any:
        return self._rows(call, params)[0]

    # -- identity -------------------------------------------------------------------------------

    @contextmanager
    def acting_as(self, owner: str) -> Iterator[Client]:
        """For an ai_service back-end: a client bound to one connection and one transaction in
        which every call acts for ``owner`` (``ai.act_as``). Commits when the block ends."""
        with self._connection() as conn, conn.transaction():
            bound = Client(conn)
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

    def set_session_status(self, thread_id: str, status: str) -> Session:
        """``ai.set_session_status``: active, waiting, completed, failed or cancelled."""
        return self._one(SET_SESSION_STATUS, (thread_id, status))

    # -- messages -------------------------------------------------------------------------------

    def append_message(
        self,
        thread_id: str,
        role: str,
        content: Any,
        turn: int | None = None,
        idempotency_key: str | None = None,
        token_count: int | None = None,
    ) -> AppendResult:
        """``ai.append_message_idempotent``: appends once; a retry returns the original row."""
        return self._one(APPEND_MESSAGE, _append_args(thread_id, role, content, turn, idempotency_key, token_count))

    def get_messages(self, thread_id: str, after_seq: int = 0, max_rows: int = 1000) -> list[Message]:
        """``ai.get_messages``: messages with seq > after_seq, oldest first."""
        return self._rows(GET_MESSAGES, (thread_id, after_seq, max_rows))

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


class AsyncClient:
    """Asynchronous twin of :class:`Client`, over an ``AsyncConnection`` or ``AsyncConnectionPool``."""

    def __init__(self, source: AsyncSource):
        self._source = source

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
            if owns_transaction:
                await conn.rollback()
            raise
        if owns_transaction:
            await conn.commit()

    async def _rows(self, call: _Call, params: Sequence[Any]) -> list[Any]:
        try:
            async with self._connection() as conn, conn.cursor(row_factory=dict_row) as cur:
                await cur.execute(call.sql, params)
                return [call.convert(row) for row in await cur.fetchall()]
        except psycopg.Error as error:
            raise _reraise(error) from error

    async def _one(self, call: _Call, params: Sequence[Any]) -> Any:
        return (await self._rows(call, params))[0]

    @asynccontextmanager
    async def acting_as(self, owner: str) -> AsyncIterator[AsyncClient]:
        """See :meth:`Client.acting_as`."""
        async with self._connection() as conn, conn.transaction():
            bound = AsyncClient(conn)
            await bound._one(ACT_AS, (owner,))
            yield bound

    async def now(self) -> datetime:
        return await self._one(NOW, ())

    async def create_session(self, thread_id: str | None = None, config: dict[str, Any] | None = None) -> Session:
        return await self._one(CREATE_SESSION, _create_session_args(thread_id, config))

    async def get_session(self, thread_id: str) -> Session:
        return await self._one(GET_SESSION, (thread_id,))

    async def set_session_status(self, thread_id: str, status: str) -> Session:
        return await self._one(SET_SESSION_STATUS, (thread_id, status))

    async def append_message(
        self,
        thread_id: str,
        role: str,
        content: Any,
        turn: int | None = None,
        idempotency_key: str | None = None,
        token_count: int | None = None,
    ) -> AppendResult:
        args = _append_args(thread_id, role, content, turn, idempotency_key, token_count)
        return await self._one(APPEND_MESSAGE, args)

    async def get_messages(self, thread_id: str, after_seq: int = 0, max_rows: int = 1000) -> list[Message]:
        return await self._rows(GET_MESSAGES, (thread_id, after_seq, max_rows))

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
