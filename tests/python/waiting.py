"""Waiting on conditions, never on durations: the helpers the tests share.

A test that needs the database or a worker to reach some state polls for that state, with a
generous deadline that fails the test with a message naming what never happened. Nothing here
asserts how long anything took, and no wait is a bet that a duration is long enough:

- ``wait_until``: poll a predicate until it holds.
- ``DatabaseClock``: a database clock the test moves by hand. A pool created with
  ``check=clock.check`` (or ``clock.acheck`` for an async pool) sets ``ai.frozen_now`` on every
  connection it hands out, so a worker's claims, renewals and fenced writes all see the test's
  time: a lease ends when the test moves the clock past it, never because a thread was slow.
- ``listening``: whether some backend has finished a ``LISTEN`` on a channel (pg_stat_activity).
- ``waits_on_a_lock``: whether a backend waits on a lock, on this server or, on a Citus
  formation, on whichever node its statement reached.
- ``notifications_until``: every notification up to a sentinel. PostgreSQL delivers
  notifications of different transactions in commit order, so once a sentinel notified after
  the transactions under test has arrived, everything they notified has arrived too, and
  "nothing else was heard" is a fact rather than a timeout.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, TypeVar

import psycopg
import pytest
from psycopg import sql

T = TypeVar("T")

#: How long any wait may take before the test fails: generous, so that only a condition that
#: never comes fails a test, whatever the load on the machine.
WAIT = 30.0


def wait_until(predicate: Callable[[], T], what: str, timeout: float = WAIT, interval: float = 0.01) -> T:
    """Polls ``predicate`` until it returns something truthy, and returns that; fails the test
    with "timed out waiting for <what>" after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


class DatabaseClock:
    """The database time of every connection a pool hands out, moved only by the test.

    ``ConnectionPool(dsn, check=clock.check)``: each checkout first runs
    ``set_config('ai.frozen_now', <clock>, false)`` (a session setting, so the test must connect
    directly: ``@pytest.mark.session_features``). A statement that began after ``advance``
    returned sees the new time."""

    def __init__(self, start: datetime):
        self._now = start
        self._lock = threading.Lock()

    @property
    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, by: timedelta) -> datetime:
        with self._lock:
            self._now += by
            return self._now

    def check(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute("select pg_catalog.set_config('ai.frozen_now', %s, false)", (self.now.isoformat(),))

    async def acheck(self, conn: psycopg.AsyncConnection[Any]) -> None:
        await conn.execute("select pg_catalog.set_config('ai.frozen_now', %s, false)", (self.now.isoformat(),))


def waits_on_a_lock(conn: psycopg.Connection[Any], pid: int) -> bool:
    """Whether the backend ``pid`` of the server ``conn`` is connected to waits on a lock
    (pg_stat_activity's wait_event_type 'Lock'). On a Citus formation (``conn`` on the
    coordinator) a statement on a distributed table, or a call delegated to a worker, waits on the
    worker that holds the row, while the coordinator's backend waits for the worker's answer: there
    the backend's global pid is followed onto every node (citus_stat_activity)."""
    if conn.execute("select pg_catalog.to_regclass('pg_catalog.citus_stat_activity') is null").fetchone()[0]:  # type: ignore[index]
        row = conn.execute("select wait_event_type from pg_catalog.pg_stat_activity where pid = %s", (pid,)).fetchone()
        return bool(row and row[0] == "Lock")
    row = conn.execute(
        "select exists (select from pg_catalog.citus_stat_activity a"
        " where a.global_pid = pg_catalog.citus_calculate_gpid(pg_catalog.citus_nodeid_for_gpid("
        "pg_catalog.citus_backend_gpid()), %s) and a.wait_event_type = 'Lock')",
        (pid,),
    ).fetchone()
    return bool(row and row[0])


def listening(admin: psycopg.Connection[Any], channel: str) -> bool:
    """Whether a backend has run ``LISTEN <channel>`` to completion: its last statement is that
    LISTEN and it is idle again, so the LISTEN has committed (read by a superuser, who sees every
    backend's statement text)."""
    row = admin.execute(
        "select count(*) from pg_catalog.pg_stat_activity"
        " where datname = pg_catalog.current_database() and state = 'idle'"
        " and query ilike 'listen %%' and pg_catalog.strpos(query, %s) > 0",
        (channel,),
    ).fetchone()
    return row is not None and row[0] > 0


def notifications_until(
    listener: psycopg.Connection[Any], notifier: psycopg.Connection[Any], timeout: float = WAIT
) -> list[tuple[str, str]]:
    """Every (channel, payload) ``listener`` hears from now until a sentinel that ``notifier``
    sends in a transaction of its own (so after every transaction ``notifier`` committed
    before). Call it once the transactions under test have committed. Fails the test if the
    sentinel does not arrive within ``timeout``."""
    sentinel = f"sentinel_{uuid.uuid4().hex}"
    listener.execute(sql.SQL("listen {}").format(sql.Identifier(sentinel)))
    notifier.execute("select pg_catalog.pg_notify(%s, '')", (sentinel,))
    heard: list[tuple[str, str]] = []
    arrived = False
    notes = listener.notifies(timeout=timeout)
    try:
        for note in notes:
            if note.channel == sentinel:
                arrived = True
                break
            heard.append((note.channel, note.payload))
    finally:
        notes.close()  # the generator holds the connection's lock until it is closed
    listener.execute(sql.SQL("unlisten {}").format(sql.Identifier(sentinel)))
    if not arrived:
        pytest.fail(f"the sentinel notification did not arrive within {timeout:.0f} s (heard {heard})")
    return heard
