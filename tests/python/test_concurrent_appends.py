"""Concurrent appends with retries: no duplicate, no gap, every retry gets the original row.

Hypothesis draws a schedule: which writer appends which logical message, how often (a retry is
the same message again, from the same or another writer, as after a lost reply), with or without
an explicit key, across two threads of conversation. The writers run it at the same moment on
their own connections. Bounded: a few writers, a few dozen calls, a lock timeout per connection.
"""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_state import AppendResult, Client

WRITERS = 4

call = st.tuples(
    st.integers(0, WRITERS - 1),  # writer
    st.integers(0, 1),  # conversation thread
    st.integers(0, 7),  # logical message
    st.booleans(),  # explicit idempotency key, or the default hash
)


def _content(message: int) -> dict[str, Any]:
    return {"text": f"message {message}", "n": message}


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(schedule=st.lists(call, min_size=1, max_size=40))
def test_concurrent_appends_with_retries(dsn: str, schedule: list[tuple[int, int, int, bool]]) -> None:
    threads = [f"prop-{uuid.uuid4()}", f"prop-{uuid.uuid4()}"]
    with psycopg.connect(dsn, autocommit=True) as setup:
        for t in threads:
            Client(setup).create_session(t)

    per_writer: list[list[tuple[int, int, bool]]] = [[] for _ in range(WRITERS)]
    for writer, thread, message, keyed in schedule:
        per_writer[writer].append((thread, message, keyed))

    start = threading.Barrier(WRITERS, timeout=30)
    results: list[tuple[int, int, bool, AppendResult]] = []
    lock = threading.Lock()

    def run(calls: list[tuple[int, int, bool]]) -> None:
        with psycopg.connect(dsn, autocommit=True, options="-c lock_timeout=20s") as conn:
            client = Client(conn)
            start.wait()
            for thread, message, keyed in calls:
                key = f"key-{message}" if keyed else None
                # Keyed and unkeyed calls of one logical message are different messages: the
                # default key is a hash, not "key-n". Turn keeps the two apart in content too.
                result = client.append_message(
                    threads[thread],
                    "user",
                    _content(message),
                    turn=int(keyed),
                    idempotency_key=key,
                )
                with lock:
                    results.append((thread, message, keyed, result))

    with ThreadPoolExecutor(WRITERS) as pool:
        for future in [pool.submit(run, calls) for calls in per_writer]:
            future.result(timeout=60)

    with psycopg.connect(dsn, autocommit=True) as check:
        client = Client(check)
        for t_index, t in enumerate(threads):
            stored = client.get_messages(t, max_rows=10000)
            expected = {(m, keyed) for thread, m, keyed in [(c[1], c[2], c[3]) for c in schedule] if thread == t_index}
            # No duplicate: one row per logical message.
            assert len(stored) == len(expected)
            assert {(m.content["n"], bool(m.turn)) for m in stored} == expected
            # No gap: seq is exactly 1..n, and the session's counter agrees.
            assert [m.seq for m in stored] == list(range(1, len(stored) + 1))
            assert client.get_session(t).last_seq == len(stored)
            by_identity = {(m.content["n"], bool(m.turn)): m for m in stored}
            outcomes = [r for r in results if r[0] == t_index]
            for _, message, keyed, result in outcomes:
                # Every call, first or retry, got the stored original.
                assert result.message == by_identity[(message, keyed)]
            # Exactly one call per logical message wrote it.
            inserted = [(m, k) for _, m, k, r in outcomes if r.inserted]
            assert sorted(inserted) == sorted(expected)
