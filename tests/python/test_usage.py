"""Usage metering through the client: exact costs, retries counted once (also concurrently),
keys a resumed run re-derives, sync and async twins."""

from __future__ import annotations

import asyncio
import threading
import uuid
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_state import AsyncClient, Client, Conflict, usage_key

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
FAR = datetime(2100, 1, 1, tzinfo=timezone.utc)


def test_record_and_summarize_with_exact_costs(client: Client, thread_id: str) -> None:
    client.create_session(thread_id)
    first = client.record_usage(thread_id, "k1", "m", 10, 2, Decimal("0.1"))
    again = client.record_usage(thread_id, "k1", "m", 10, 2, "0.10")
    client.record_usage(thread_id, "k2", "m", 5, 1, Decimal("0.2"))
    assert first.inserted and not again.inserted and again.usage_id == first.usage_id
    assert again.created_at == first.created_at  # named as every row's write time
    [row] = client.usage_summary(EPOCH, FAR, ["thread"]) and [
        r for r in client.usage_summary(EPOCH, FAR, ["thread"]) if r.thread_id == thread_id
    ]
    assert (row.records, row.input_tokens, row.cost) == (2, 15, Decimal("0.3"))  # 0.1 + 0.2, exactly


def test_a_float_cost_is_refused_before_any_round_trip(client: Client, thread_id: str) -> None:
    with pytest.raises(TypeError):
        client.record_usage(thread_id, "k", "m", 1, 1, 0.1)  # type: ignore[arg-type]


def test_other_figures_under_the_same_key_conflict(client: Client, thread_id: str) -> None:
    client.create_session(thread_id)
    client.record_usage(thread_id, "k", "m", 1, 1, Decimal("1"))
    with pytest.raises(Conflict):
        client.record_usage(thread_id, "k", "m", 1, 1, Decimal("2"))


def test_usage_key_is_the_same_for_the_same_place_in_the_run() -> None:
    assert usage_key("t", 7, "plan", 0) == usage_key("t", 7, "plan", 0)
    assert len({usage_key("t", 7, "plan", 0), usage_key("t", 7, "plan", 1), usage_key("t", None, "plan", 0)}) == 3


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    calls=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 10_000), st.decimals(0, 100, places=6)),
        min_size=1,
        max_size=12,
    ),
    writers=st.integers(2, 4),
)
def test_retries_racing_on_many_connections_are_counted_once(dsn: str, calls: Any, writers: int) -> None:
    """Every writer sends every call (a retry storm): each distinct key counts once, and the sums
    equal the figures of the first send of each key."""
    thread = f"usage-race-{uuid.uuid4()}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        Client(conn).create_session(thread)
    expected: dict[int, tuple[int, Decimal]] = {}
    for key, tokens, cost in calls:
        expected.setdefault(key, (tokens, cost))
    barrier = threading.Barrier(writers)
    failures: list[BaseException] = []

    def writer() -> None:
        try:
            with psycopg.connect(dsn, autocommit=True) as conn:
                c = Client(conn)
                barrier.wait(timeout=30)
                for key, _, _ in calls:
                    tokens, cost = expected[key]
                    c.record_usage(thread, f"k{key}", "m", tokens, 0, cost)
        except BaseException as error:  # reported below
            failures.append(error)

    threads = [threading.Thread(target=writer) for _ in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not failures, failures
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = [r for r in Client(conn).usage_summary(EPOCH, FAR, ["thread"]) if r.thread_id == thread]
    assert len(rows) == 1
    assert rows[0].records == len(expected)
    assert rows[0].input_tokens == sum(t for t, _ in expected.values())
    assert rows[0].cost == sum((c for _, c in expected.values()), Decimal(0))


def test_async_twin(dsn: str, thread_id: str) -> None:
    async def check() -> None:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
            c = AsyncClient(conn)
            await c.create_session(thread_id)
            record = await c.record_usage(thread_id, "k", "m", 3, 4, Decimal("0.5"), {"cached": 1})
            assert record.inserted and record.details == {"cached": 1}
            rows = await c.usage_summary(EPOCH, FAR, ["thread", "model"])
            assert [(r.model, r.output_tokens) for r in rows if r.thread_id == thread_id] == [("m", 4)]

    asyncio.run(check())
