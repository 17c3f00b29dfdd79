"""Streaming bench (issue: resumable streaming): the batching writer against its baseline.

Writer: persisting a 2,000-chunk stream with persisted_stream (batch of N chunks) against the
baseline the target names: the finished message written once (ai.append_message_idempotent) plus
one bare round trip (`select 1`) per batch, on the same connection, interleaved, median of repeats.
Reader: a second process follows the stream with LISTEN; the latency from a chunk's commit to
the reader seeing it, on the NOTIFY path and on the polling path (no LISTEN, 0.2 s polls).
Prints a table; BENCH_REPEATS (default 5) runs of each.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
import uuid

import psycopg

from agent_state import Client, follow_stream, persisted_stream

CHUNKS = int(os.environ.get("BENCH_STREAM_CHUNKS", "2000"))
TOKEN = "word "  # ~ one token of English text


def writer_run(client: Client, batch: int) -> float:
    thread = f"bench-stream-{uuid.uuid4()}"
    client.create_session(thread)
    start = time.perf_counter()
    with persisted_stream(client, thread, "s", iter([TOKEN] * CHUNKS), batch_chunks=batch, batch_ms=1e9) as s:
        for _ in s:
            pass
    return time.perf_counter() - start


def baseline_run(conn: psycopg.Connection[object], client: Client, batch: int) -> float:
    thread = f"bench-stream-{uuid.uuid4()}"
    client.create_session(thread)
    batches = -(-CHUNKS // batch)
    start = time.perf_counter()
    for _ in range(batches):
        conn.execute("select 1")
    client.append_message(thread, "assistant", TOKEN * CHUNKS)
    return time.perf_counter() - start


def bare_run(bare: psycopg.Connection[object], client: Client, batch: int) -> float:
    """The same writes as bare SQL: one INSERT of each batch into a plain table (async commit),
    then the finished message: what the design costs without functions, RLS and checks."""
    thread = f"bench-stream-{uuid.uuid4()}"
    client.create_session(thread)
    chunks = [TOKEN] * CHUNKS
    start = time.perf_counter()
    for first in range(0, CHUNKS, batch):  # one round trip each; this connection commits async
        bare.execute(
            "insert into bench_stream_batches values (%s, %s, %s)", (thread, first + 1, chunks[first : first + batch])
        )
    client.append_message(thread, "assistant", TOKEN * CHUNKS)
    return time.perf_counter() - start


def reader_latency(dsn: str, listen: bool) -> float:
    """Median seconds from a chunk's commit to a reader in another process printing it."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        client = Client(conn)
        thread = f"bench-follow-{uuid.uuid4()}"
        client.create_session(thread)
        client.open_stream(thread, "s")
        reader = subprocess.Popen(
            [sys.executable, __file__, "--follow", dsn, thread, "1" if listen else "0"],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert reader.stdout is not None
        assert reader.stdout.readline().strip() == "ready"
        gaps = []
        for n in range(1, 21):
            sent = time.time()
            client.append_stream_chunks(thread, "s", n, [f"{sent!r}"])
            seen = float(reader.stdout.readline())
            gaps.append(seen - sent)
            time.sleep(0.05)
        client.finish_stream(thread, "s")
        reader.wait(timeout=30)
        return statistics.median(gaps)


def follow(dsn: str, thread: str, listen: bool) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn, psycopg.connect(dsn, autocommit=True) as lconn:
        print("ready", flush=True)
        for _ in follow_stream(Client(conn), thread, "s", poll_interval=0.2, listen=lconn if listen else None):
            print(time.time(), flush=True)


def main() -> None:
    dsn = os.environ["DATABASE_URL"]
    repeats = int(os.environ.get("BENCH_REPEATS", "5"))
    with psycopg.connect(dsn, autocommit=True) as conn, psycopg.connect(dsn, autocommit=True) as bare_conn:
        bare_conn.execute("set synchronous_commit = off")
        client = Client(conn)
        print(
            f"| {CHUNKS:,}-chunk stream, batch | writer ms | message + empty round trips ms | ratio"
            " | bare SQL batches + message ms | ratio |"
        )
        print("|---:|---:|---:|---:|---:|---:|")
        for batch in (1, 16, 64, 256):
            ours, base, bare = [], [], []
            for _ in range(repeats):
                ours.append(writer_run(client, batch))
                base.append(baseline_run(conn, client, batch))
                bare.append(bare_run(bare_conn, client, batch))
            o, b, r = statistics.median(ours), statistics.median(base), statistics.median(bare)
            print(f"| {batch} | {o * 1000:.1f} | {b * 1000:.1f} | {o / b:.2f}x | {r * 1000:.1f} | {o / r:.2f}x |")
    print()
    print("| reader in another process | median latency, ms |")
    print("|---|---:|")
    print(f"| LISTEN/NOTIFY | {reader_latency(dsn, True) * 1000:.1f} |")
    print(f"| polling every 200 ms | {reader_latency(dsn, False) * 1000:.1f} |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--follow":
        follow(sys.argv[2], sys.argv[3], sys.argv[4] == "1")
    else:
        main()
