"""Resumable streaming through the client: batching writer, crash mid-stream, a reader in another
connection, sync and async."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psycopg
import pytest

from agent_state import AsyncClient, Client, afollow_stream, apersisted_stream, follow_stream, persisted_stream
from agent_state.models import StreamChunk

HERE = Path(__file__).parent


def test_the_writer_batches_and_finishes_into_one_message(client: Client, thread_id: str) -> None:
    client.create_session(thread_id)
    chunks = [f"t{i} " for i in range(100)]
    with persisted_stream(client, thread_id, "answer", iter(chunks), batch_chunks=32, batch_ms=60_000) as stream:
        seen = list(stream)
    assert seen == chunks
    assert stream.round_trips == 1 + 4 + 1  # open, ceil(100 / 32) flushes, finish
    assert stream.message is not None and stream.message.message.content == "".join(chunks)
    assert [m.content for m in client.get_messages(thread_id)] == ["".join(chunks)]


def test_an_error_mid_stream_keeps_what_was_read_and_the_next_worker_finishes(client: Client, thread_id: str) -> None:
    client.create_session(thread_id)

    def failing() -> Iterator[str]:
        yield "first "
        yield "second "
        raise ConnectionResetError("the model's connection dropped")

    with (
        pytest.raises(ConnectionResetError),
        persisted_stream(client, thread_id, "s2", failing(), batch_chunks=10) as stream,
    ):
        for _ in stream:
            pass
    state = client.get_stream(thread_id, "s2")
    assert (state.status, state.last_chunk) == ("open", 2)
    assert client.finish_stream(thread_id, "s2").message.content == "first second "


def test_a_writer_killed_mid_stream_leaves_every_acknowledged_chunk_and_another_process_finishes(
    dsn: str, client: Client, thread_id: str
) -> None:
    writer = subprocess.Popen(
        [sys.executable, str(HERE / "stream_writer.py"), dsn, thread_id, "crash"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        acknowledged = 0
        assert writer.stdout is not None
        while acknowledged < 5:  # wait on the writer's own acknowledgements, not on a clock
            line = writer.stdout.readline()
            assert line, "the writer ended before chunk 5"
            acknowledged = int(line)
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=30)
    finally:
        if writer.poll() is None:
            writer.kill()
    chunks = client.read_stream(thread_id, "crash")
    assert [c.content for c in chunks][:acknowledged] == [f"c{n} " for n in range(1, acknowledged + 1)]
    assert client.get_stream(thread_id, "crash").status == "open"
    finished = client.finish_stream(thread_id, "crash")
    assert finished.inserted and finished.message.content == "".join(c.content for c in chunks)


def test_a_reader_follows_a_stream_until_it_finishes(dsn: str, thread_id: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        Client(conn).create_session(thread_id)
        Client(conn).open_stream(thread_id, "live")
    got: list[str] = []
    started = threading.Event()

    def reader() -> None:
        with psycopg.connect(dsn, autocommit=True) as conn, psycopg.connect(dsn, autocommit=True) as listen:
            stream = follow_stream(Client(conn), thread_id, "live", poll_interval=5.0, listen=listen, timeout=60)
            started.set()
            got.extend(c.content for c in stream)

    t = threading.Thread(target=reader)
    t.start()
    started.wait(timeout=30)
    with psycopg.connect(dsn, autocommit=True) as conn:
        writer = Client(conn)
        for n in range(1, 6):
            writer.append_stream_chunks(thread_id, "live", n, [f"w{n}"])
        writer.finish_stream(thread_id, "live")
    t.join(timeout=60)
    assert not t.is_alive()
    assert got == [f"w{n}" for n in range(1, 6)]


class _CountingClient(Client):
    reads = 0

    def read_stream(
        self, thread_id: str, stream_key: str, after_chunk: int = 0, max_chunks: int = 1000
    ) -> list[StreamChunk]:
        self.reads += 1
        return super().read_stream(thread_id, stream_key, after_chunk, max_chunks)


class _CountingAsyncClient(AsyncClient):
    reads = 0

    async def read_stream(
        self, thread_id: str, stream_key: str, after_chunk: int = 0, max_chunks: int = 1000
    ) -> list[StreamChunk]:
        self.reads += 1
        return await super().read_stream(thread_id, stream_key, after_chunk, max_chunks)


def test_an_idle_follower_polls_the_state_only_and_reads_when_the_last_chunk_moves(dsn: str, thread_id: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        client = _CountingClient(conn)
        client.create_session(thread_id)
        client.open_stream(thread_id, "idle")
        client.append_stream_chunks(thread_id, "idle", 1, ["a", "b"])
        # Caught up on an open stream: every poll until the timeout finds nothing new.
        assert list(follow_stream(client, thread_id, "idle", after_chunk=2, poll_interval=0.01, timeout=0.2)) == []
        assert client.reads == 0
        assert [c.content for c in follow_stream(client, thread_id, "idle", poll_interval=0.01, timeout=0.2)] == [
            "a",
            "b",
        ]
        assert client.reads == 1


def test_an_idle_async_follower_polls_the_state_only(dsn: str, thread_id: str) -> None:
    async def check() -> None:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            client = _CountingAsyncClient(conn)
            await client.create_session(thread_id)
            await client.open_stream(thread_id, "idle")
            await client.append_stream_chunks(thread_id, "idle", 1, ["a", "b"])
            idle = afollow_stream(client, thread_id, "idle", after_chunk=2, poll_interval=0.01, timeout=0.2)
            assert [c async for c in idle] == []
            assert client.reads == 0
            await client.finish_stream(thread_id, "idle")
            done = afollow_stream(client, thread_id, "idle", poll_interval=0.01, timeout=30)
            assert [c.content async for c in done] == ["a", "b"] and client.reads == 1

    asyncio.run(check())


def test_async_writer_and_reader(dsn: str, thread_id: str) -> None:
    async def tokens() -> AsyncIterator[str]:
        for i in range(10):
            yield f"a{i}"

    async def check() -> None:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            c = AsyncClient(conn)
            await c.create_session(thread_id)
            async with apersisted_stream(c, thread_id, "s", tokens(), batch_chunks=4) as stream:
                seen = [chunk async for chunk in stream]
            assert seen == [f"a{i}" for i in range(10)] and stream.round_trips == 1 + 3 + 1
            read = [ch.content async for ch in afollow_stream(c, thread_id, "s", after_chunk=7, timeout=10)]
            assert read == ["a7", "a8", "a9"]

    asyncio.run(check())
