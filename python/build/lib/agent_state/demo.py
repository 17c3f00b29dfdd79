"""`make demo`: a session, a retried append that does not duplicate, and the session's timeline.

Run with DATABASE_URL pointing at a database where agent-state is deployed.
"""

from __future__ import annotations

import os
import sys

import psycopg

from . import Client


def main() -> int:
    url = os.environ.get("DATABASE_URL", "")
    with psycopg.connect(url, autocommit=True) as conn:
        client = Client(conn)
        session = client.create_session(config={"model": "demo-model", "purpose": "make demo"})
        thread = session.thread_id
        print(f"session {thread} created ({session.status}, owner {session.owner})")

        client.append_message(thread, "system", {"text": "You plan trips."}, turn=0)
        first = client.append_message(thread, "user", {"text": "Plan three days in Lisbon."}, turn=1)
        client.record_event(thread, "step_started", {"node": "planner"})
        call = client.append_message(
            thread,
            "tool_call",
            {"name": "search_hotels", "args": {"city": "Lisbon"}},
            turn=1,
            idempotency_key="turn-1-search_hotels",
        )
        # The process "crashes" after the tool call was written but before it knew: it retries.
        retry = client.append_message(
            thread,
            "tool_call",
            {"name": "search_hotels", "args": {"city": "Lisbon"}},
            turn=1,
            idempotency_key="turn-1-search_hotels",
        )
        print(
            f"append tool_call: seq {call.message.seq}, inserted={call.inserted}; "
            f"retry: seq {retry.message.seq}, inserted={retry.inserted}"
        )
        assert retry.message == call.message and not retry.inserted, "a retry must return the original row"
        again = client.append_message(thread, "user", {"text": "Plan three days in Lisbon."}, turn=1)
        print(f"same user message, no key, same turn: seq {again.message.seq}, inserted={again.inserted}")
        assert again.message.seq == first.message.seq

        client.append_message(thread, "tool_result", {"hotels": ["Alfama Inn", "Baixa House"]}, turn=1)
        client.append_message(thread, "assistant", {"text": "Day 1: Alfama. Day 2: Belem. Day 3: Sintra."}, turn=1)
        client.set_session_status(thread, "completed")

        messages = client.get_messages(thread)
        events = client.get_events(thread)
        seqs = [m.seq for m in messages]
        assert seqs == list(range(1, len(seqs) + 1)), "seq must be 1..n with no gap"
        print(f"\n{len(messages)} messages (seq 1..{len(messages)}, no duplicate, no gap), {len(events)} events")
        print("\ntimeline:")
        timeline = [(m.created_at, f"message #{m.seq:<3} {m.role:<11} {m.content}") for m in messages]
        timeline += [(e.created_at, f"event   {e.kind:<16} {e.payload}") for e in events]
        for at, line in sorted(timeline, key=lambda item: item[0]):
            print(f"  {at:%H:%M:%S.%f}  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
