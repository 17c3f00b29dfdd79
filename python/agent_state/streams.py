"""Resumable streaming: persist a message while it streams, read it from anywhere, resume after a crash.

Writer: wrap any iterator of text chunks (an LLM client's stream) and iterate it as usual; the
chunks are persisted in batches (one round trip per ``batch_chunks`` chunks or ``batch_ms``
milliseconds, whichever comes first), and the stream becomes one message when the iterator ends::

    with persisted_stream(client, thread_id, "turn-3-answer", llm.stream(prompt)) as stream:
        for chunk in stream:
            send_to_browser(chunk)
    stream.message                      # the finished message (ai.finish_stream), exactly once

Durability: the batches commit with ``durability="async"`` by default (``synchronous_commit``
off for that transaction): a crashed or killed *writer* loses nothing the database acknowledged,
and a crash of the *database* itself may lose the last fraction of a second of an open stream's
chunks (at most ``3 x wal_writer_delay``). ``finish_stream`` always commits synchronously, so the
finished message is as durable as any other. Pass ``durability="sync"`` to pay one WAL flush per
batch instead.

If the block raises, the chunks read so far are flushed and the stream stays open: the next
worker (or a retry) finishes or abandons it (``client.finish_stream`` / ``client.abandon_stream``);
``get_stream(...).stale`` tells a stream whose writer died. A process killed mid-stream loses only
the chunks of its last, unflushed batch.

Reader (another process, e.g. an HTTP handler resuming a client's stream)::

    for chunk in follow_stream(client, thread_id, "turn-3-answer", after_chunk=last_seen):
        yield chunk.content

It polls ``ai.get_stream`` every ``poll_interval`` seconds (one round trip while nothing is new;
``ai.read_stream`` only when the stream's last chunk moved) and, given a ``listen`` connection
(autocommit, not from a transaction pooler), wakes at once on the stream's NOTIFY. It ends when
the stream is finished or abandoned and every chunk was read.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from types import TracebackType
from typing import Any, Literal

import psycopg
from psycopg import sql

from ._calls import Call, T
from .models import AppendResult, Message, MessageRole, StreamChunk, StreamState, from_row

__all__ = [
    "AsyncPersistedStream",
    "AsyncStreamMethods",
    "PersistedStream",
    "StreamMethods",
    "afollow_stream",
    "apersisted_stream",
    "follow_stream",
    "persisted_stream",
]


def _appended(row: dict[str, Any]) -> AppendResult:
    return AppendResult(message=from_row(Message, row), inserted=row["inserted"])


OPEN_STREAM = Call("select * from ai.open_stream(%s, %s, %s, %s, %s, %s, %s)", lambda r: from_row(StreamState, r))
APPEND_STREAM_CHUNKS: Call[int] = Call(
    "select ai.append_stream_chunks(%s, %s, %s, %s, %s, %s, %s) as last_chunk", lambda r: r["last_chunk"]
)
FINISH_STREAM = Call("select * from ai.finish_stream(%s, %s, %s, %s)", _appended)
ABANDON_STREAM = Call("select * from ai.abandon_stream(%s, %s, %s, %s)", lambda r: from_row(StreamState, r))
GET_STREAM = Call("select * from ai.get_stream(%s, %s, %s)", lambda r: from_row(StreamState, r))
READ_STREAM = Call("select * from ai.read_stream(%s, %s, %s, %s)", lambda r: from_row(StreamChunk, r))

DEFAULT_STALE_AFTER = timedelta(seconds=30)

Durability = Literal["sync", "async"]


# <async>
class AsyncStreamMethods:
    """The streaming half of :class:`~agent_state.AsyncClient` (one SQL function per method)."""

    async def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by AsyncClient
        raise NotImplementedError

    async def open_stream(
        self,
        thread_id: str,
        stream_key: str,
        role: MessageRole = "assistant",
        turn: int | None = None,
        job_id: int | None = None,
        fencing_token: int | None = None,
        durability: Durability = "sync",
    ) -> StreamState:
        """``ai.open_stream``: a new stream, or the existing one with that key as it is."""
        args = (thread_id, stream_key, role, turn, job_id, fencing_token, durability)
        return (await self._rows(OPEN_STREAM, args))[0]

    async def append_stream_chunks(
        self,
        thread_id: str,
        stream_key: str,
        first_chunk: int,
        chunks: Sequence[str],
        job_id: int | None = None,
        fencing_token: int | None = None,
        durability: Durability = "sync",
    ) -> int:
        """``ai.append_stream_chunks``: chunks ``first_chunk``.. in one round trip; the last chunk number.
        ``durability="async"``: the commit does not wait for the WAL flush (see the module's docstring)."""
        args = (thread_id, stream_key, first_chunk, list(chunks), job_id, fencing_token, durability)
        return (await self._rows(APPEND_STREAM_CHUNKS, args))[0]

    async def finish_stream(
        self, thread_id: str, stream_key: str, job_id: int | None = None, fencing_token: int | None = None
    ) -> AppendResult:
        """``ai.finish_stream``: the chunks become one message, exactly once."""
        return (await self._rows(FINISH_STREAM, (thread_id, stream_key, job_id, fencing_token)))[0]

    async def abandon_stream(
        self, thread_id: str, stream_key: str, job_id: int | None = None, fencing_token: int | None = None
    ) -> StreamState:
        """``ai.abandon_stream``: closes the stream without a message."""
        return (await self._rows(ABANDON_STREAM, (thread_id, stream_key, job_id, fencing_token)))[0]

    async def get_stream(
        self, thread_id: str, stream_key: str, stale_after: timedelta = DEFAULT_STALE_AFTER
    ) -> StreamState:
        """``ai.get_stream``: status, last chunk, stale, and the NOTIFY channel."""
        return (await self._rows(GET_STREAM, (thread_id, stream_key, stale_after)))[0]

    async def read_stream(
        self, thread_id: str, stream_key: str, after_chunk: int = 0, max_chunks: int = 1000
    ) -> list[StreamChunk]:
        """``ai.read_stream``: the chunks after ``after_chunk``, in order."""
        return await self._rows(READ_STREAM, (thread_id, stream_key, after_chunk, max_chunks))


class AsyncPersistedStream:
    """Iterates the wrapped chunks while persisting them in batches (see the module's docstring)."""

    def __init__(
        self,
        client: AsyncStreamMethods,
        thread_id: str,
        stream_key: str,
        chunks: AsyncIterable[str],
        *,
        role: MessageRole = "assistant",
        turn: int | None = None,
        job_id: int | None = None,
        fencing_token: int | None = None,
        batch_chunks: int = 32,
        batch_ms: float = 100.0,
        durability: Durability = "async",
    ) -> None:
        _check_batching(batch_chunks, batch_ms)
        self._durability: Durability = durability
        self._client, self.thread_id, self.stream_key = client, thread_id, stream_key
        self._chunks, self._role, self._turn = chunks, role, turn
        self._fence = (job_id, fencing_token)
        self._batch = _Batcher(batch_chunks, batch_ms, [])
        self.last_chunk = 0  #: the last chunk number the database acknowledged
        self.message: AppendResult | None = None  #: set when the stream finished
        self.round_trips = 0

    async def __aenter__(self) -> AsyncPersistedStream:
        state = await self._client.open_stream(
            self.thread_id, self.stream_key, self._role, self._turn, *self._fence, self._durability
        )
        self.last_chunk = state.last_chunk
        self.round_trips += 1
        return self

    async def __aiter__(self) -> AsyncIterator[str]:
        async for chunk in self._chunks:
            if self._batch.add(chunk):
                await self.flush()
            yield chunk

    async def flush(self) -> None:
        """Persists the chunks read since the last flush (one round trip), if any."""
        batch = self._batch.take()
        if batch:
            self.last_chunk = await self._client.append_stream_chunks(
                self.thread_id, self.stream_key, self.last_chunk + 1, batch, *self._fence, self._durability
            )
            self.round_trips += 1

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is not None:
            if not isinstance(error, psycopg.Error):
                await self.flush()  # keep what was read; the stream stays open for a retry or the next worker
            return
        await self.flush()
        self.message = await self._client.finish_stream(self.thread_id, self.stream_key, *self._fence)
        self.round_trips += 1


def apersisted_stream(
    client: AsyncStreamMethods, thread_id: str, stream_key: str, chunks: AsyncIterable[str], **options: Any
) -> AsyncPersistedStream:
    """A :class:`AsyncPersistedStream` (use it as a context manager, iterate it for the chunks)."""
    return AsyncPersistedStream(client, thread_id, stream_key, chunks, **options)


async def afollow_stream(
    client: AsyncStreamMethods,
    thread_id: str,
    stream_key: str,
    after_chunk: int = 0,
    *,
    poll_interval: float = 0.5,
    listen: psycopg.AsyncConnection[Any] | None = None,
    timeout: float | None = None,
) -> AsyncIterator[StreamChunk]:
    """Yields the stream's chunks after ``after_chunk`` as they arrive, until it is finished or
    abandoned and fully read. ``listen``: an autocommit connection to LISTEN on (wakes at once on
    a new chunk); without it, polling alone. ``timeout``: give up (return) after that many seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    state = await client.get_stream(thread_id, stream_key)
    if listen is not None:
        await listen.execute(sql.SQL("listen {}").format(sql.Identifier(state.channel)))
    try:
        while True:
            # The state is read before the chunks: a close seen in it is final, and its last_chunk
            # says whether there is anything to read, so an idle poll is one round trip.
            read_any = False
            while after_chunk < state.last_chunk:
                chunks = await client.read_stream(thread_id, stream_key, after_chunk)
                if not chunks:
                    break
                read_any = True
                for chunk in chunks:
                    after_chunk = chunk.chunk_no
                    yield chunk
            if state.status != "open" and after_chunk >= state.last_chunk:
                return
            if deadline is not None and time.monotonic() >= deadline:
                return
            if not read_any:
                wait = _poll_wait(poll_interval, deadline)
                if listen is not None:
                    async for _ in listen.notifies(timeout=wait, stop_after=1):
                        pass
                else:
                    await asyncio.sleep(wait)
            state = await client.get_stream(thread_id, stream_key)
    finally:
        if listen is not None and not listen.closed:
            await listen.execute(sql.SQL("unlisten {}").format(sql.Identifier(state.channel)))


# </async>


# <sync> generated by scripts/async_to_sync.py from the <async> block above: do not edit
class StreamMethods:
    """The streaming half of :class:`~agent_state.Client` (one SQL function per method)."""

    def _rows(self, call: Call[T], params: Sequence[Any]) -> list[T]:  # provided by Client
        raise NotImplementedError

    def open_stream(
        self,
        thread_id: str,
        stream_key: str,
        role: MessageRole = "assistant",
        turn: int | None = None,
        job_id: int | None = None,
        fencing_token: int | None = None,
        durability: Durability = "sync",
    ) -> StreamState:
        """``ai.open_stream``: a new stream, or the existing one with that key as it is."""
        args = (thread_id, stream_key, role, turn, job_id, fencing_token, durability)
        return self._rows(OPEN_STREAM, args)[0]

    def append_stream_chunks(
        self,
        thread_id: str,
        stream_key: str,
        first_chunk: int,
        chunks: Sequence[str],
        job_id: int | None = None,
        fencing_token: int | None = None,
        durability: Durability = "sync",
    ) -> int:
        """``ai.append_stream_chunks``: chunks ``first_chunk``.. in one round trip; the last chunk number.
        ``durability="async"``: the commit does not wait for the WAL flush (see the module's docstring)."""
        args = (thread_id, stream_key, first_chunk, list(chunks), job_id, fencing_token, durability)
        return self._rows(APPEND_STREAM_CHUNKS, args)[0]

    def finish_stream(
        self, thread_id: str, stream_key: str, job_id: int | None = None, fencing_token: int | None = None
    ) -> AppendResult:
        """``ai.finish_stream``: the chunks become one message, exactly once."""
        return self._rows(FINISH_STREAM, (thread_id, stream_key, job_id, fencing_token))[0]

    def abandon_stream(
        self, thread_id: str, stream_key: str, job_id: int | None = None, fencing_token: int | None = None
    ) -> StreamState:
        """``ai.abandon_stream``: closes the stream without a message."""
        return self._rows(ABANDON_STREAM, (thread_id, stream_key, job_id, fencing_token))[0]

    def get_stream(self, thread_id: str, stream_key: str, stale_after: timedelta = DEFAULT_STALE_AFTER) -> StreamState:
        """``ai.get_stream``: status, last chunk, stale, and the NOTIFY channel."""
        return self._rows(GET_STREAM, (thread_id, stream_key, stale_after))[0]

    def read_stream(
        self, thread_id: str, stream_key: str, after_chunk: int = 0, max_chunks: int = 1000
    ) -> list[StreamChunk]:
        """``ai.read_stream``: the chunks after ``after_chunk``, in order."""
        return self._rows(READ_STREAM, (thread_id, stream_key, after_chunk, max_chunks))


class PersistedStream:
    """Iterates the wrapped chunks while persisting them in batches (see the module's docstring)."""

    def __init__(
        self,
        client: StreamMethods,
        thread_id: str,
        stream_key: str,
        chunks: Iterable[str],
        *,
        role: MessageRole = "assistant",
        turn: int | None = None,
        job_id: int | None = None,
        fencing_token: int | None = None,
        batch_chunks: int = 32,
        batch_ms: float = 100.0,
        durability: Durability = "async",
    ) -> None:
        _check_batching(batch_chunks, batch_ms)
        self._durability: Durability = durability
        self._client, self.thread_id, self.stream_key = client, thread_id, stream_key
        self._chunks, self._role, self._turn = chunks, role, turn
        self._fence = (job_id, fencing_token)
        self._batch = _Batcher(batch_chunks, batch_ms, [])
        self.last_chunk = 0  #: the last chunk number the database acknowledged
        self.message: AppendResult | None = None  #: set when the stream finished
        self.round_trips = 0

    def __enter__(self) -> PersistedStream:
        state = self._client.open_stream(
            self.thread_id, self.stream_key, self._role, self._turn, *self._fence, self._durability
        )
        self.last_chunk = state.last_chunk
        self.round_trips += 1
        return self

    def __iter__(self) -> Iterator[str]:
        for chunk in self._chunks:
            if self._batch.add(chunk):
                self.flush()
            yield chunk

    def flush(self) -> None:
        """Persists the chunks read since the last flush (one round trip), if any."""
        batch = self._batch.take()
        if batch:
            self.last_chunk = self._client.append_stream_chunks(
                self.thread_id, self.stream_key, self.last_chunk + 1, batch, *self._fence, self._durability
            )
            self.round_trips += 1

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if kind is not None:
            if not isinstance(error, psycopg.Error):
                self.flush()  # keep what was read; the stream stays open for a retry or the next worker
            return
        self.flush()
        self.message = self._client.finish_stream(self.thread_id, self.stream_key, *self._fence)
        self.round_trips += 1


def persisted_stream(
    client: StreamMethods, thread_id: str, stream_key: str, chunks: Iterable[str], **options: Any
) -> PersistedStream:
    """A :class:`PersistedStream` (use it as a context manager, iterate it for the chunks)."""
    return PersistedStream(client, thread_id, stream_key, chunks, **options)


def follow_stream(
    client: StreamMethods,
    thread_id: str,
    stream_key: str,
    after_chunk: int = 0,
    *,
    poll_interval: float = 0.5,
    listen: psycopg.Connection[Any] | None = None,
    timeout: float | None = None,
) -> Iterator[StreamChunk]:
    """Yields the stream's chunks after ``after_chunk`` as they arrive, until it is finished or
    abandoned and fully read. ``listen``: an autocommit connection to LISTEN on (wakes at once on
    a new chunk); without it, polling alone. ``timeout``: give up (return) after that many seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    state = client.get_stream(thread_id, stream_key)
    if listen is not None:
        listen.execute(sql.SQL("listen {}").format(sql.Identifier(state.channel)))
    try:
        while True:
            # The state is read before the chunks: a close seen in it is final, and its last_chunk
            # says whether there is anything to read, so an idle poll is one round trip.
            read_any = False
            while after_chunk < state.last_chunk:
                chunks = client.read_stream(thread_id, stream_key, after_chunk)
                if not chunks:
                    break
                read_any = True
                for chunk in chunks:
                    after_chunk = chunk.chunk_no
                    yield chunk
            if state.status != "open" and after_chunk >= state.last_chunk:
                return
            if deadline is not None and time.monotonic() >= deadline:
                return
            if not read_any:
                wait = _poll_wait(poll_interval, deadline)
                if listen is not None:
                    for _ in listen.notifies(timeout=wait, stop_after=1):
                        pass
                else:
                    time.sleep(wait)
            state = client.get_stream(thread_id, stream_key)
    finally:
        if listen is not None and not listen.closed:
            listen.execute(sql.SQL("unlisten {}").format(sql.Identifier(state.channel)))


# </sync>


# -- the batching writer -------------------------------------------------------------------------


@dataclass
class _Batcher:
    """When to flush: after ``batch_chunks`` chunks, or ``batch_ms`` after the first unflushed one."""

    batch_chunks: int
    batch_ms: float
    pending: list[str]
    since: float = 0.0

    def add(self, chunk: str) -> bool:
        if not self.pending:
            self.since = time.monotonic()
        self.pending.append(chunk)
        return len(self.pending) >= self.batch_chunks or (time.monotonic() - self.since) * 1000 >= self.batch_ms

    def take(self) -> list[str]:
        taken, self.pending = self.pending, []
        return taken


def _check_batching(batch_chunks: int, batch_ms: float) -> None:
    if batch_chunks < 1 or batch_ms < 0:
        raise ValueError("batch_chunks must be 1 or more and batch_ms 0 or more")


# -- the reader ----------------------------------------------------------------------------------


def _poll_wait(poll_interval: float, deadline: float | None) -> float:
    return poll_interval if deadline is None else min(poll_interval, max(0.0, deadline - time.monotonic()))
