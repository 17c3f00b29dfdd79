"""A writer process for the streaming crash test: ``python stream_writer.py DSN THREAD KEY``.

It streams chunks "c1", "c2", ... through persisted_stream with one chunk per batch, prints the
acknowledged chunk number after each flush, and after chunk 5 blocks on stdin forever (mid-stream),
so the test kills it at a known point without racing a clock.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import psycopg

from agent_state import Client, persisted_stream


def chunks(stream: object) -> Iterator[str]:
    for n in range(1, 100):
        yield f"c{n} "
        if n == 5:
            sys.stdin.readline()  # never answered: the test SIGKILLs us here


def main() -> None:
    dsn, thread, key = sys.argv[1:4]
    with psycopg.connect(dsn, autocommit=True) as conn:
        client = Client(conn)
        client.create_session(thread)
        with persisted_stream(client, thread, key, chunks(None), batch_chunks=1) as stream:
            for _ in stream:
                print(stream.last_chunk, flush=True)


if __name__ == "__main__":
    main()
