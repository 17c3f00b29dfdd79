"""Our savers for LangGraph's own test suites (see README.md beside this file).

LangGraph's tests expect a fresh database per test (they reuse thread ids such as "1" and list every
thread with ``list(None)``). Here each pytest process (each xdist worker) gets a private database
copied from the deployed test database (``agent_state_test``, the template ``make test-db`` built),
emptied before each test by the superuser (on a Citus formation, ``make test-citus``, the
formation's database itself: IN_PLACE below); the savers connect to it as a login role:

* ``service``: ``app_service``, a member of ``ai_service`` (a worker; sees every tenant's rows);
* ``tenant``: ``tenant_a``, a member of ``ai_user`` (RLS and the function-only grants apply).

The saver only calls functions of the ``ai`` schema, so it runs as a tenant with no table privilege.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from agent_state.langgraph import AgentStateSaver, AgentStateStore, AsyncAgentStateSaver, AsyncAgentStateStore

ROLES = {"service": "app_service", "tenant": "tenant_a"}

# Tables a saver writes: the sessions it creates (everything else hangs off them by foreign key,
# on delete cascade) and the tombstones of deleted threads. DELETE, not TRUNCATE: a test leaves a
# few rows, and TRUNCATE of the ~15 tables the cascade reaches costs some 100 ms per test.
_RESET = "delete from ai.agent_sessions; delete from ai.deleted_threads; delete from ai.memory_items"

_database: str | None = None
# `make test-citus`: the suite runs in AGENT_STATE_TEST_DSN's database itself, the formation's (a
# copy made with CREATE DATABASE ... TEMPLATE on the coordinator would not be distributed: its
# workers have no such database), one process, emptied before each test as the private copy is.
IN_PLACE = "AGENT_STATE_UPSTREAM_IN_PLACE"
# Set by each suite's conftest: the graph and saver suites never share a database.
suite = "suite"


def _template_dsn() -> str:
    value = os.environ.get("AGENT_STATE_TEST_DSN")
    if not value:
        raise RuntimeError("AGENT_STATE_TEST_DSN is not set: run these tests with `make test-upstream`")
    return value


def _with(dsn: str, **changes: Any) -> str:
    params: dict[str, Any] = conninfo_to_dict(dsn)
    params.update(changes)
    return make_conninfo(**params)


def _worker() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def database() -> str:
    """This process's private database (created on first use from the deployed test database).

    Named by suite and xdist worker: two runs of the same suite in one worktree at once would share it.
    """
    global _database
    if _database is None and os.environ.get(IN_PLACE):
        _database = conninfo_to_dict(_template_dsn()).get("dbname") or "agent_state"
        return _database
    if _database is None:
        template = conninfo_to_dict(_template_dsn()).get("dbname") or "agent_state_test"
        name = f"{template}_upstream_{suite}_{_worker()}"
        with psycopg.connect(_with(_template_dsn(), dbname="postgres"), autocommit=True) as conn:
            conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
            conn.execute(
                sql.SQL("create database {} template {}").format(sql.Identifier(name), sql.Identifier(template))
            )
        _database = name
    return _database


def owner_dsn() -> str:
    """The private database as the superuser who made it (for resets and assertions on tables)."""
    return _with(_template_dsn(), dbname=database())


def role_dsn(role: str) -> str:
    return _with(owner_dsn(), user=ROLES[role])


def drop_database() -> None:
    global _database
    if _database is None or os.environ.get(IN_PLACE):
        return
    with psycopg.connect(_with(_template_dsn(), dbname="postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(_database)))
    _database = None


def reset() -> None:
    """An empty database, as LangGraph's tests expect before each test."""
    with psycopg.connect(owner_dsn(), autocommit=True) as conn:
        conn.execute(_RESET)


def _kwargs(row_factory: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": 0}
    if row_factory is not None:
        kwargs["row_factory"] = row_factory
    return kwargs


@contextmanager
def sync_saver(role: str, *, pool: bool, row_factory: Any = None, pipeline: bool = False) -> Iterator[AgentStateSaver]:
    dsn = role_dsn(role)
    if pool:
        with ConnectionPool(dsn, min_size=1, max_size=10, kwargs=_kwargs(row_factory)) as source:
            yield AgentStateSaver(source)
    elif pipeline:
        with psycopg.connect(dsn, **_kwargs(row_factory)) as conn, conn.pipeline():
            yield AgentStateSaver(conn)
    else:
        with psycopg.connect(dsn, **_kwargs(row_factory)) as conn:
            yield AgentStateSaver(conn)


@asynccontextmanager
async def async_saver(
    role: str, *, pool: bool, row_factory: Any = None, pipeline: bool = False
) -> AsyncIterator[AsyncAgentStateSaver]:
    dsn = role_dsn(role)
    if pool:
        async with AsyncConnectionPool(dsn, min_size=1, max_size=10, kwargs=_kwargs(row_factory)) as source:
            yield AsyncAgentStateSaver(source)
    elif pipeline:
        async with await psycopg.AsyncConnection.connect(dsn, **_kwargs(row_factory)) as conn, conn.pipeline():
            yield AsyncAgentStateSaver(conn)
    else:
        async with await psycopg.AsyncConnection.connect(dsn, **_kwargs(row_factory)) as conn:
            yield AsyncAgentStateSaver(conn)


@contextmanager
def sync_store(role: str) -> Iterator[AgentStateStore]:
    """Our LangGraph store (long-term memory) over a pool, as ``role``."""
    with ConnectionPool(role_dsn(role), min_size=1, max_size=4, kwargs=_kwargs(None)) as source:
        yield AgentStateStore(source)


@asynccontextmanager
async def async_store(role: str) -> AsyncIterator[AsyncAgentStateStore]:
    async with AsyncConnectionPool(role_dsn(role), min_size=1, max_size=4, kwargs=_kwargs(None)) as source:
        yield AsyncAgentStateStore(source)
