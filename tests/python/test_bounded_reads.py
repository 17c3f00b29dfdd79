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
#: Tenant B's pending approvals (one per thread, so threads of their own) and eval runs: more than BOUND.
OTHER_APPROVALS, OTHER_EVAL_RUNS = 600, 600
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
        conn.execute(
            "select ai.record_eval_run(%(p)s || '-evals', 'candidate', true)"
            " from (select ai.create_session(%(p)s || '-evals')) s, generate_series(1, %(n)s)",
            {"p": b_prefix, "n": OTHER_EVAL_RUNS},
        )
        conn.execute(
            "select ai.create_session(%(p)s || '-approval-' || t),"
            " ai.enqueue_job(%(p)s || '-approval-' || t, '{}'::jsonb, %(q)s || '-approvals')"
            " from generate_series(1, %(n)s) t",
            {"p": b_prefix, "q": queue, "n": OTHER_APPROVALS},
        )
        conn.execute("reset session authorization")
        conn.execute("set session authorization tenant_a")
        conn.execute("select ai.record_eval_run(%s, 'candidate', true)", (f"{a_prefix}-1",))
        conn.execute(
            "select ai.create_session(%(t)s), ai.enqueue_job(%(t)s, '{}'::jsonb, %(q)s)",
            {"t": f"{a_prefix}-approval", "q": f"{queue}-approvals"},
        )
        conn.execute("reset session authorization")
        # one approval of A among B's 600: a walk over every owner's pending approvals reads all
        # 601 before it can tell that A has no more
        conn.execute("set session authorization app_service")
        conn.execute(
            "select ai.request_human(j.job_id, j.fencing_token, 'c')"
            " from ai.claim_jobs('bounded-worker', '1 hour', %s, %s) j",
            (f"{queue}-approvals", OTHER_APPROVALS + 1),
        )
        conn.execute("reset session authorization")
        conn.execute("analyze ai.agent_jobs, ai.agent_sessions, ai.checkpoints, ai.human_approvals, ai.eval_runs")
    yield {"a": a_prefix, "b": b_prefix, "queue": queue}
    # the crowd's pending approvals would sit in every later list of pending approvals: gone with
    # its sessions (the superuser's delete; the foreign keys cascade)
    with psycopg.connect(module_dsn, autocommit=True) as conn:
        conn.execute("delete from ai.agent_sessions where thread_id like %s or thread_id like %s",
                     (f"{a_prefix}-%", f"{b_prefix}-%"))  # fmt: skip


# The rows the scans of the current transaction read, as the server counts them: every row a
# sequential scan read (returned or removed by a filter) and every row an index or bitmap scan
# fetched from the heap, over the tables of ai and ai_archive (the call's own statements, its
# nested ones and the cascades of its foreign keys alike).
WARM_CALLS = 6
READ_SO_FAR = """select coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0)::bigint
from pg_catalog.pg_stat_xact_all_tables where schemaname in ('ai', 'ai_archive')"""


def rows_read(dsn: str, user: str, query: str, params: tuple[Any, ...] = ()) -> tuple[int, int]:
    """(rows the scans of every statement of the call read, rows the call returned). Counted by
    the server for the call's transaction (pg_stat_xact_all_tables), which is rolled back: plain
    SQL, so it counts on any build of the server (auto_explain, a contrib module, is not in every
    one)."""
    with psycopg.connect(dsn) as conn:
        conn.execute(psycopg.sql.SQL("set local session authorization {}").format(psycopg.sql.Identifier(user)))
        # the call as a long-lived connection makes it: past the five custom plans a PL/pgSQL
        # statement gets before its cached plan may turn generic (which guesses an average owner)
        for _ in range(WARM_CALLS):
            conn.execute(query, params).fetchall()
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
        ("list_sessions", "select * from ai.list_sessions()"),
        ("pending_approvals", "select * from ai.pending_approvals()"),
        ("get_eval_runs", "select * from ai.get_eval_runs()"),
        ("prune_idle_threads (one batch)", "select * from ai.prune_idle_threads('1 day')"),
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


def test_a_tenants_queue_throughput_does_not_read_the_other_tenants_jobs(
    module_dsn: str, crowd: dict[str, str]
) -> None:
    """ai.queue_throughput (the console's chart) reads a tenant's own sessions' jobs, as queue_stats
    does; over RLS alone it would scan every tenant's jobs and drop the others' after reading them."""
    read, _ = rows_read(module_dsn, "tenant_a", "select * from ai.queue_throughput(null, '31 days', '1 day')")
    others = OTHER_THREADS * OTHER_JOBS_PER_THREAD
    assert read <= BOUND, f"tenant_a's call read {read} rows (tenant_b holds {others} jobs)"


def test_a_tenants_session_status_counts_does_not_read_the_other_tenants_sessions(
    module_dsn: str, crowd: dict[str, str]
) -> None:
    read, returned = rows_read(module_dsn, "tenant_a", "select * from ai.session_status_counts()")
    assert returned >= 1
    assert read <= BOUND, f"tenant_a's call read {read} rows (tenant_b holds {OTHER_THREADS} sessions)"


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


def test_savers_list_and_session_items_read_on_past_one_page(role_dsn: Any) -> None:
    """The SQL lists return one bounded page; LangGraph's list() and the Agents SDK's get_items()
    promise every row, so the savers and the session read on page by page (500 checkpoints, 1,000
    items a call)."""
    import asyncio

    from langgraph.checkpoint.base import empty_checkpoint
    from psycopg_pool import AsyncConnectionPool

    from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver
    from agent_state.openai_agents import AgentStateSession

    thread = f"pages-{uuid.uuid4().hex[:8]}"
    config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        saver = AgentStateSaver(conn)
        for step in range(520):
            config = saver.put(config, empty_checkpoint(), {"source": "loop", "step": step, "parents": {}}, {})
        listed = [t.checkpoint["id"] for t in saver.list({"configurable": {"thread_id": thread}})]
        assert len(listed) == len(set(listed)) == 520
        assert listed == sorted(listed, reverse=True)
        assert len(list(saver.list({"configurable": {"thread_id": thread}}, limit=510))) == 510
        assert list(saver.list({"configurable": {"thread_id": thread}}, limit=0)) == []
        conn.execute(
            "select ai.append_message_idempotent(%s, 'user', to_jsonb(i)) from generate_series(1, 1005) i",
            (thread,),
        )

    async def read_async() -> tuple[int, list[Any]]:
        pool = AsyncConnectionPool(role_dsn("tenant_a"), kwargs={"autocommit": True}, min_size=1, open=False)
        await pool.open()
        try:
            async_saver = AsyncAgentStateSaver(pool)
            count = len([t async for t in async_saver.alist({"configurable": {"thread_id": thread}})])
            items = await AgentStateSession(thread, pool).get_items()
            return count, items
        finally:
            await pool.close()

    count, items = asyncio.run(read_async())
    assert count == 520
    assert items == list(range(1, 1006))
