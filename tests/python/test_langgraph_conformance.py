"""LangGraph's own conformance suite (langgraph-checkpoint-conformance) against both savers.

The suite counts a capability only when its async method is overridden, so every one of the 81
tests (base: put, put_writes, get_tuple, list, delete_thread; extended: delete_for_runs,
copy_thread, prune) must be detected and pass. AgentStateSaver's async methods run its sync ones
in a thread, so its run is the suite applied to the sync implementation.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import psycopg
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver

EXPECTED_TESTS = 81


def _run_suite(name: str, factory: Any) -> Any:
    registered = checkpointer_test(name=name)(factory)
    return asyncio.run(validate(registered))


def _assert_all_passed(report: Any) -> None:
    failures = {cap: result.failures for cap, result in report.results.items() if result.failures}
    assert not failures, f"conformance failures: {failures}"
    detected = {cap for cap, result in report.results.items() if result.detected}
    assert detected == {c.value for c in ALL_CAPABILITIES}, f"capabilities not detected: {detected}"
    passed = sum(result.tests_passed for result in report.results.values())
    failed = sum(result.tests_failed for result in report.results.values())
    assert (passed, failed) == (EXPECTED_TESTS, 0)


def test_async_saver_passes_all_81_conformance_tests(role_dsn: Any) -> None:
    dsn = role_dsn("tenant_a")  # a tenant: privileges and RLS are exercised

    async def factory() -> AsyncIterator[AsyncAgentStateSaver]:
        async with AsyncConnectionPool(dsn, min_size=1, max_size=4, kwargs={"autocommit": True}) as pool:
            yield AsyncAgentStateSaver(pool)

    _assert_all_passed(_run_suite("AsyncAgentStateSaver", factory))


def test_sync_saver_passes_all_81_conformance_tests(role_dsn: Any) -> None:
    dsn = role_dsn("tenant_b")

    async def factory() -> AsyncIterator[AgentStateSaver]:
        with ConnectionPool(dsn, min_size=1, max_size=4, kwargs={"autocommit": True}) as pool:
            yield AgentStateSaver(pool)

    _assert_all_passed(_run_suite("AgentStateSaver", factory))


def test_sync_saver_on_one_connection_without_prepared_statements(dsn: str) -> None:
    """As behind PgBouncer in transaction pooling: no prepared statement, no session state."""

    async def factory() -> AsyncIterator[AgentStateSaver]:
        with psycopg.connect(dsn, autocommit=True, prepare_threshold=None) as conn:
            yield AgentStateSaver(conn)

    _assert_all_passed(_run_suite("AgentStateSaver/one connection", factory))
