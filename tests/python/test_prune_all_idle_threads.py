"""``call ai.prune_all_idle_threads``: retention by age over every session, one transaction per
batch (issue 21's leftover, issue 33).

A walk in one transaction would hold the lock of every session it pruned (ai.prune_checkpoints
locks a thread's session before it deletes) and every dead row until its end. The procedure
commits each batch of its keyset walk, so a writer of a pruned thread goes on while a later
batch still runs, and a walk stopped midway resumes after its last committed batch, whose cursor
each batch reports in a NOTICE. The walk is held in its second batch by a lock the test holds on
one of that batch's sessions, and the test waits on pg_stat_activity (bounded), never on a sleep.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import sql
from waiting import waits_on_a_lock

pytestmark = pytest.mark.session_features("waits on the walking backend's pid in pg_stat_activity")

#: how long the walk may take to reach the lock the test holds
WAIT_SECONDS = 10.0
THREADS = 6  # three batches of two


@pytest.fixture
def pruner(dsn: str) -> Iterator[str]:
    """A login of its own (a member of ai_user): the walk sees its sessions and no other test's."""
    role = f"h_prune_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("create role {} login in role ai_user").format(sql.Identifier(role)))
    params = psycopg.conninfo.conninfo_to_dict(dsn)
    params["user"] = role
    yield psycopg.conninfo.make_conninfo(**params)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("drop owned by {}").format(sql.Identifier(role)))
        admin.execute(sql.SQL("drop role {}").format(sql.Identifier(role)))


def _threads(pruner: str) -> list[str]:
    """THREADS sessions, created oldest first, of two checkpoints each (keep_latest drops one)."""
    prefix = f"p-{uuid.uuid4().hex[:8]}"
    threads = [f"{prefix}-{i}" for i in range(THREADS)]
    with psycopg.connect(pruner, autocommit=True) as c:
        for i, thread in enumerate(threads):
            # created_at orders the walk (newest first): one session a second, on the test clock
            c.execute(
                "select set_config('ai.frozen_now', (timestamptz '2020-01-01' + %s * interval '1 s')::text, false)",
                (i,),
            )
            c.execute("select ai.create_session(%s)", (thread,))
            c.execute("reset ai.frozen_now")  # the checkpoints: now, so idle => '0' finds them idle
            for k in range(2):
                c.execute(
                    "select ai.put_checkpoint(%s, '', %s, null, 'json', '\\x00'::bytea)",
                    (thread, f"c{i:02d}{k}"),
                )
    return threads


def _checkpoints(observer: psycopg.Connection[Any], threads: list[str]) -> list[int]:
    # counted per thread, then put in the threads' order here (a subquery per unnest row is a
    # correlated subquery beside a set returning function, which Citus cannot plan)
    rows = observer.execute(
        "select c.thread_id, count(*)::int from ai.checkpoints c where c.thread_id = any(%s) group by c.thread_id",
        (threads,),
    ).fetchall()
    counts = dict(rows)
    return [counts.get(thread, 0) for thread in threads]


def _waits(observer: psycopg.Connection[Any], pid: int, done: threading.Event) -> bool:
    """True once the walk waits on a lock; False if it ended (or never waited) in time."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline and not done.is_set():
        if waits_on_a_lock(observer, pid):
            return True
        time.sleep(0.01)
    return False


def _walk_held_in_its_second_batch(
    pruner: str, dsn: str, threads: list[str], call: str, stop: str
) -> tuple[list[str], list[BaseException]]:
    """Runs ``call`` while the test holds the session lock of the second batch's first thread;
    once the walk waits there, checks what a writer of the first batch meets, then ``stop``s the
    walk: 'release' (lets it finish) or 'cancel'. Returns the walk's notices and errors."""
    newest_first = list(reversed(threads))
    first_batch, held = newest_first[:2], newest_first[2]
    notices: list[str] = []
    failed: list[BaseException] = []
    with (
        psycopg.connect(dsn) as holder,
        psycopg.connect(pruner, autocommit=True) as walker,
        psycopg.connect(dsn, autocommit=True) as observer,
    ):
        holder.execute("select from ai.agent_sessions where thread_id = %s for update", (held,))
        walker.add_notice_handler(lambda d: notices.append(d.message_primary or ""))
        pid = walker.info.backend_pid
        done = threading.Event()

        def walk() -> None:
            try:
                walker.execute(call)
            except BaseException as e:
                failed.append(e)
            finally:
                done.set()

        runner = threading.Thread(target=walk)
        runner.start()
        try:
            assert _waits(observer, pid, done), f"the walk did not reach the held session: {failed}"
            # the first batch is pruned, committed, and its sessions free for a writer
            assert _checkpoints(observer, first_batch) == [1, 1]
            with psycopg.connect(pruner) as writer:
                writer.execute("set local lock_timeout = '2s'")
                writer.execute(
                    "select ai.put_checkpoint(%s, '', 'c99', null, 'json', '\\x00'::bytea)", (first_batch[0],)
                )
                writer.commit()
            assert _checkpoints(observer, newest_first[2:]) == [2, 2, 2, 2], "a later batch ran early"
        finally:
            if stop == "cancel":
                observer.execute("select pg_cancel_backend(%s::int)", (pid,))
            holder.rollback()
            runner.join(WAIT_SECONDS)
        assert not runner.is_alive()
    return notices, failed


def test_a_writer_of_a_pruned_thread_is_not_held_until_the_walk_ends(pruner: str, dsn: str) -> None:
    threads = _threads(pruner)
    notices, failed = _walk_held_in_its_second_batch(
        pruner, dsn, threads, "call ai.prune_all_idle_threads('0', 'keep_latest', 2)", "release"
    )
    assert not failed
    with psycopg.connect(dsn, autocommit=True) as observer:
        # every batch pruned; the writer's checkpoint of the first batch was put after its batch
        assert _checkpoints(observer, list(reversed(threads))) == [2, 1, 1, 1, 1, 1]
    # a notice per committed batch naming the next cursor (a full last batch is followed by an empty one)
    assert len(notices) == 4 and notices[-1].endswith("the walk is done"), notices
    assert all(n.endswith(t) for n, t in zip(notices[:3], [threads[-2], threads[-4], threads[0]], strict=True)), notices


def test_a_walk_stopped_midway_resumes_after_its_last_committed_batch(pruner: str, dsn: str) -> None:
    threads = _threads(pruner)
    newest_first = list(reversed(threads))
    notices, failed = _walk_held_in_its_second_batch(
        pruner, dsn, threads, "call ai.prune_all_idle_threads('0', 'keep_latest', 2)", "cancel"
    )
    assert failed and isinstance(failed[0], psycopg.errors.QueryCanceled)
    # the first batch's notice names where the next one starts: its last session
    assert len(notices) == 1 and notices[0].endswith(newest_first[1]), notices
    with psycopg.connect(pruner, autocommit=True) as walker:
        walker.execute(
            "call ai.prune_all_idle_threads('0', 'keep_latest', 2, after_thread_id => %s)", (newest_first[1],)
        )
    with psycopg.connect(dsn, autocommit=True) as observer:
        # resumed after the first batch: the writer's new checkpoint there is not pruned again
        assert _checkpoints(observer, newest_first) == [2, 1, 1, 1, 1, 1]


def test_a_bad_cursor_is_refused_before_anything_is_pruned(pruner: str) -> None:
    with psycopg.connect(pruner, autocommit=True) as walker, pytest.raises(psycopg.Error) as raised:
        walker.execute("call ai.prune_all_idle_threads('0', 'keep_latest', 2, after_thread_id => 'no-such-thread')")
    assert raised.value.sqlstate == "AS001"
