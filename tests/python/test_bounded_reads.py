"""A tenant's reads cost what its own rows cost, not what the other tenants hold (issue 21, defect 3).

Counted, not timed: the rows the scans of the call's transaction read (returned plus removed by a
filter), as the server's own statistics of that transaction count them (pg_stat_xact_all_tables).
Tenant A owns a few rows; tenant B, many times more, written after A's so that a newest-first scan
meets B's rows first. A's calls must read a number of rows bounded by A's own data, whatever
B holds. The same question with 1 M rows of B is asked in `make bench` (bench/retention.sh prints
it as "reads of one tenant").
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

pytestmark = pytest.mark.session_features

OTHER_THREADS, OTHER_JOBS_PER_THREAD, OTHER_CHECKPOINTS_PER_THREAD = 100, 60, 30
#: Tenant A's rows are a handful; what a bounded read may touch is a small multiple of them plus the
#: a margin. Tenant B has 6,000 jobs and 3,000 checkpoints.
BOUND = 400


@pytest.fixture(scope="module")
def crowd(module_dsn: str) -> Iterator[dict[str, str]]:
    """Tenant A's few rows, then tenant B's many, as each tenant (SQL loops, one statement each)."""
    tag = uuid.uuid4().hex[:8]
    a_prefix, b_prefix, queue = f"bounded-a-{tag}", f"bounded-b-{tag}", f"bounded-{tag}"
    with psycopg.connect(module_dsn, autocommit=True) as conn:
        conn.execute("set session authorization tenant_a")
        conn.execute(
            "select ai.create_session(%(p)s || '-' || t), ai.enqueue_job(%(p)s || '-' || t, '{}'::jsonb, %(q)s),"
            " ai.put_checkpoint(%(p)s || '-' || t, '', null, null, 'json', '\\x7b7d'::bytea)"
            " from generate_series(1, 3) t",
            {"p": a_prefix, "q": queue},
        )
        conn.execute("reset session authorization")
        conn.execute("set session authorization tenant_b")
        conn.execute(
            "select ai.create_session(%(p)s || '-' || t) from generate_series(1, %(n)s) t",
            {"p": b_prefix, "n": OTHER_THREADS},
        )
        conn.execute(
            "select ai.enqueue_job(%(p)s || '-' || t, '{}'::jsonb, %(q)s)"
            " from generate_series(1, %(n)s) t, generate_series(1, %(k)s) k",
            {"p": b_prefix, "q": queue, "n": OTHER_THREADS, "k": OTHER_JOBS_PER_THREAD},
        )
        conn.execute(
            "select ai.put_checkpoint(%(p)s || '-' || t, '', null, null, 'json', '\\x7b7d'::bytea)"
            " from generate_series(1, %(n)s) t, generate_series(1, %(k)s) k",
            {"p": b_prefix, "n": OTHER_THREADS, "k": OTHER_CHECKPOINTS_PER_THREAD},
        )
        conn.execute("reset session authorization")
        conn.execute("analyze ai.agent_jobs, ai.agent_sessions, ai.checkpoints")
    yield {"a": a_prefix, "b": b_prefix, "queue": queue}


# The rows the scans of the current transaction read, as the server counts them: every row a
# sequential scan read (returned or removed by a filter) and every row an index or bitmap scan
# fetched from the heap, over the tables of ai and ai_archive (the call's own statements, its
# nested ones and the cascades of its foreign keys alike).
READ_SO_FAR = """select coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0)::bigint
from pg_catalog.pg_stat_xact_all_tables where schemaname in ('ai', 'ai_archive')"""


def rows_read(dsn: str, user: str, query: str, params: tuple[Any, ...] = ()) -> tuple[int, int]:
    """(rows the scans of every statement of the call read, rows the call returned). Counted by
    the server for the call's transaction (pg_stat_xact_all_tables), which is rolled back: plain
    SQL, so it counts on any build of the server (auto_explain, a contrib module, is not in every
    one)."""
    with psycopg.connect(dsn) as conn:
        conn.execute(psycopg.sql.SQL("set local session authorization {}").format(psycopg.sql.Identifier(user)))
        before = conn.execute(READ_SO_FAR).fetchone()
        returned = len(conn.execute(query, params).fetchall())
        after = conn.execute(READ_SO_FAR).fetchone()
        conn.rollback()
    assert before is not None and after is not None
    return int(after[0]) - int(before[0]), returned


@pytest.mark.parametrize(
    ("what", "query"),
    [
        ("list_jobs", "select * from ai.list_jobs()"),
        ("list_jobs of a queue", "select * from ai.list_jobs(%(queue)s)"),
        ("queue_stats", "select * from ai.queue_stats()"),
        ("list_checkpoints of every thread", "select * from ai.list_checkpoints(null)"),
    ],
)
def test_a_tenants_read_does_not_read_the_other_tenants_rows(
    module_dsn: str, crowd: dict[str, str], what: str, query: str
) -> None:
    read, returned = rows_read(module_dsn, "tenant_a", query.replace("%(queue)s", "%s"),
                               (crowd["queue"],) if "%(queue)s" in query else ())  # fmt: skip
    assert returned >= 1, what
    assert read <= BOUND, (
        f"{what}: tenant_a's call read {read} rows (tenant_b holds {OTHER_THREADS * OTHER_JOBS_PER_THREAD} jobs)"
    )


def test_list_jobs_pages_by_before_job_id(module_dsn: str, crowd: dict[str, str]) -> None:
    with psycopg.connect(module_dsn, autocommit=True) as conn:
        conn.execute("set session authorization tenant_b")
        first = [r[0] for r in conn.execute("select job_id from ai.list_jobs(%s, max_rows => 50)", (crowd["queue"],))]
        second = [
            r[0]
            for r in conn.execute(
                "select job_id from ai.list_jobs(%s, max_rows => 50, before_job_id => %s)", (crowd["queue"], first[-1])
            )
        ]
    assert len(first) == len(second) == 50
    assert first == sorted(first, reverse=True) and second == sorted(second, reverse=True)
    assert second[0] < first[-1]


def test_deleting_a_session_reads_its_own_jobs_not_the_table(module_dsn: str, crowd: dict[str, str]) -> None:
    """Issue 21, defect 4: the cascade from a session to its jobs finds them by agent_jobs_thread
    (archive_sessions and delete_thread both delete sessions; restore_session reads the twin by the
    same index of ai_archive.agent_jobs)."""
    thread = f"{crowd['b']}-1"
    read, _ = rows_read(module_dsn, "tenant_b", "select ai.delete_thread(%s)", (thread,))
    assert read <= BOUND + OTHER_JOBS_PER_THREAD + OTHER_CHECKPOINTS_PER_THREAD, (
        f"deleting one thread of {OTHER_JOBS_PER_THREAD} jobs read {read} rows"
    )
