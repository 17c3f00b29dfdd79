"""A 10,000-message session compacted again and again: the window stays within the budget, no
original is lost, and the summaries chain over contiguous ranges."""

from __future__ import annotations

import itertools
import random
from typing import Any

import psycopg

from agent_state import Client, Message, WindowMessage
from agent_state.compaction import compact_if_due

WINDOW = 2000
KEEP_LAST = 20
CHUNK = 10


def test_long_session_compacted_repeatedly(conn: psycopg.Connection[Any], client: Client, thread_id: str) -> None:
    client.create_session(thread_id)
    rng = random.Random(7)
    summarized: list[tuple[int, int]] = []

    def summarize(previous: WindowMessage | None, messages: list[Message]) -> tuple[str, int]:
        assert messages, "compaction asked to summarize nothing"
        seqs = [m.seq for m in messages]
        summarized.append((seqs[0], seqs[-1]))
        return f"summary through {seqs[-1]} (previous: {previous.seq if previous else None})", 50

    appended = 0
    while appended < 10_000:
        tokens = [rng.randint(1, 30) for _ in range(CHUNK)]
        conn.execute(
            "select ai.append_message_idempotent(%s, 'user', jsonb_build_object('n', n), token_count => t)"
            " from unnest(%s::int[], %s::int[]) as u(n, t)",
            (thread_id, list(range(appended, appended + CHUNK)), tokens),
        )
        appended += CHUNK
        window = compact_if_due(client, thread_id, WINDOW, summarize, keep_last=KEEP_LAST)
        assert window.total_tokens <= WINDOW, f"window of {window.total_tokens} tokens after {appended} messages"
        assert sum(m.token_count for m in window.messages) == window.total_tokens
        assert [m.is_summary for m in window.messages].count(True) <= 1

    assert len(summarized) > 10, "the test must actually compact, many times"
    rows = conn.execute(
        "select seq, role, content from ai.session_messages where thread_id = %s order by seq", (thread_id,)
    ).fetchall()
    # Nothing lost: every original is still there, seq has no gap.
    assert [r[0] for r in rows] == list(range(1, len(rows) + 1))
    originals = [r[2]["n"] for r in rows if r[1] == "user"]
    assert originals == list(range(10_000))
    # Each summary covers a contiguous range that starts right after the previous one.
    ranges = [
        (r[2]["compaction"]["from_seq"], r[2]["compaction"]["through_seq"])
        for r in rows
        if r[1] == "system" and "compaction" in r[2]
    ]
    assert ranges[0][0] == 1
    for (_, previous_end), (start, end) in itertools.pairwise(ranges):
        assert start == previous_end + 1 and end >= start
    # And the summarizer was shown exactly the originals of each range (summaries left out).
    assert len(ranges) == len(summarized)
    for (start, end), (first, last) in zip(ranges, summarized, strict=False):
        assert start <= first and last == end


def test_compact_if_due_leaves_a_small_thread_alone(client: Client, thread_id: str) -> None:
    client.create_session(thread_id)
    client.append_message(thread_id, "user", "hi", token_count=5)

    def never(previous: WindowMessage | None, messages: list[Message]) -> tuple[str, int]:
        raise AssertionError("nothing to compact")

    window = compact_if_due(client, thread_id, 1000, never)
    assert (window.compaction_due, window.total_tokens, [m.seq for m in window.messages]) == (False, 5, [1])
