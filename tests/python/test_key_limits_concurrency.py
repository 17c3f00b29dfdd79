"""Racing claimers against a key's limits (issue 38 items 3 and 4): real connections, one thread
each, every claimer calling claim_jobs at the same frozen instant. A key limited to N jobs in
flight never has more than N running, whatever the race; its slots come back when a job finishes
and when a lease runs out; a key of rate R a minute and burst B gives out B tokens at one instant
and R/60 a second after, never more (a claimer that finds the key's row held by another takes
none of its jobs: a race takes at most what the limits allow)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest

from agent_state import Client

pytestmark = pytest.mark.session_features(
    "the frozen clock ai.frozen_now, set for each claimer's session (through a pooler it stays on a server"
    " connection and moves other tests' clocks)"
)

CLAIMERS = 8
JOBS = 40
T0 = datetime(2031, 1, 1, tzinfo=timezone.utc)


def _setup(service: str, queue: str, **limits: Any) -> None:
    with psycopg.connect(service, autocommit=True) as conn:
        client = Client(conn)
        client.set_job_key(queue, "provider", **limits)
        with conn.transaction():
            for i in range(JOBS):
                thread = f"lim-{uuid.uuid4()}"
                client.create_session(thread)
                client.enqueue_job(thread, {"n": i}, queue=queue, key="provider")


def _race(service: str, queue: str, at: datetime) -> list[tuple[int, int]]:
    """Every claimer claims (up to 4 jobs) at the frozen instant `at`, released together by a
    barrier; returns the (job_id, fencing_token) claimed, all claimers together."""
    barrier = threading.Barrier(CLAIMERS, timeout=30)
    claimed: list[tuple[int, int]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def claimer(n: int) -> None:
        try:
            with psycopg.connect(service, autocommit=True, prepare_threshold=None) as conn:
                conn.execute("select set_config('ai.frozen_now', %s, false)", (at.isoformat(),))
                barrier.wait()
                jobs = Client(conn).claim_jobs(f"w{n}", timedelta(minutes=1), queue, 4)
                with lock:
                    claimed.extend((j.job_id, j.fencing_token) for j in jobs)
        except BaseException as e:  # reported below
            with lock:
                errors.append(e)

    threads = [threading.Thread(target=claimer, args=(n,)) for n in range(CLAIMERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)
    return claimed


def test_racing_claimers_never_run_more_than_max_in_flight(dsn: str, role_dsn: Callable[[str], str]) -> None:
    service = role_dsn("app_service")
    queue = f"lim-{uuid.uuid4().hex[:8]}"
    _setup(service, queue, max_in_flight=3)

    first = _race(service, queue, T0)
    assert len(first) == 3, "eight claimers at once take the three slots, no more"
    assert _race(service, queue, T0) == [], "no slot free"

    with psycopg.connect(service, autocommit=True) as conn:
        conn.execute("select set_config('ai.frozen_now', %s, false)", (T0.isoformat(),))
        Client(conn).complete_job(*first[0])
    assert len(_race(service, queue, T0)) == 1, "a finished job gives back one slot"

    # two minutes later every lease (one minute) has run out: the three slots come back, and the
    # racing claimers take three jobs again (the expired ones first), never more
    later = T0 + timedelta(minutes=2)
    assert len(_race(service, queue, later)) == 3
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "select count(*) from ai.agent_jobs where queue = %s and status = 'IN_PROGRESS' and lease_expires_at > %s",
            (queue, later),
        ).fetchone()
    assert row == (3,)


def test_racing_claimers_never_exceed_the_rate(dsn: str, role_dsn: Callable[[str], str]) -> None:
    service = role_dsn("app_service")
    queue = f"rate-{uuid.uuid4().hex[:8]}"
    _setup(service, queue, rate_per_minute=120, burst=5)  # two a second, five at once

    instants = (0, 0, 0.25, 1, 1.5, 4, 4, 10)
    taken = [len(_race(service, queue, T0 + timedelta(seconds=s))) for s in instants]
    # the bucket: 5 at once, then 2 a second. A claimer that finds the key's row locked by another
    # admits none of its jobs (SKIP LOCKED), so a race may take less than the bucket holds, never more.
    assert taken[0] >= 1
    for n, seconds in enumerate(instants):
        assert sum(taken[: n + 1]) <= 5 + 2 * seconds, f"{taken}: more than burst + rate x time by {seconds} s"
