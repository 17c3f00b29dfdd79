"""conftest.py for LangGraph's PostgresStore tests (libs/checkpoint-postgres/tests/test_store.py
and test_async_store.py), run against AgentStateStore and AsyncAgentStateStore.

Copied over the upstream tests/conftest.py of a second copy of the saver's sdist (.upstream/store)
by prepare.py. The upstream modules build their stores in module-level fixtures: each creates a
database (CREATE DATABASE test_<random>), opens ``PostgresStore.from_conn_string`` on it (a
connection, a pipeline or a pool: upstream's ``default``, ``pipe``, ``pool``), runs ``setup()``
and drops the database at the end. An autouse fixture points the names they use at ours:

* ``PostgresStore`` / ``AsyncPostgresStore``: our stores, connected as a tenant (``tenant_a``,
  member of ``ai_user``: RLS and the function-only grants apply) to this process's private copy
  of the deployed test database, whatever database the string names; the connection kinds stay
  upstream's;
* ``Connection`` / ``AsyncConnection``: their CREATE and DROP DATABASE are not run (the private
  database is emptied before each test instead);
* ``store._cursor()``, which a few tests use to backdate rows of PostgresStore's ``store``
  table: a cursor of the superuser on the private database, where ``public.store`` is a view of
  ``ai.memory_items`` with PostgresStore's columns (prefix is the labels joined by '.').
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, ClassVar

import agent_state_upstream as upstream
import psycopg
import pytest
from psycopg.rows import dict_row
from tests.embed_test_utils import CharacterEmbeddings
from upstream_skips import apply_skips

from agent_state.langgraph import AgentStateStore, AsyncAgentStateStore

upstream.suite = "store"

DEFAULT_POSTGRES_URI = "postgresql:///not-used-see-conftest/"
DEFAULT_URI = "postgresql:///not-used-see-conftest"
VECTOR_TYPES = ["vector", "halfvec"]
ROLE = "tenant"

# The saver's tests run in the saver suite.
collect_ignore = [
    "test_sync.py",
    "test_async.py",
    "test_prune.py",
    "test_conformance_delta.py",
    "test_delta_pagination.py",
    "test_delta_plain_value_seed.py",
]

_VIEW = """
create or replace view public.store as
  select array_to_string(namespace, '.') as prefix, key, value, created_at, updated_at, expires_at,
         extract(epoch from ttl) / 60 as ttl_minutes
  from ai.memory_items
"""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    apply_skips(items, suite="store")


def pytest_sessionfinish(session: pytest.Session) -> None:
    upstream.drop_database()


@pytest.fixture
def fake_embeddings() -> CharacterEmbeddings:
    return CharacterEmbeddings(dims=500)


def _owner() -> psycopg.Connection[Any]:
    return psycopg.connect(upstream.owner_dsn(), autocommit=True, row_factory=dict_row)


class _SyncAdmin:
    """Upstream's admin connection: CREATE/DROP DATABASE are not run (see the module docstring)."""

    @classmethod
    def connect(cls, *args: Any, **kwargs: Any) -> _SyncAdmin:
        return cls()

    def __enter__(self) -> _SyncAdmin:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, query: str, *args: Any) -> None:
        assert query.split()[1] == "DATABASE", query


class _AsyncAdmin:
    @classmethod
    async def connect(cls, *args: Any, **kwargs: Any) -> _AsyncAdmin:
        return cls()

    async def __aenter__(self) -> _AsyncAdmin:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def execute(self, query: str, *args: Any) -> None:
        assert query.split()[1] == "DATABASE", query


class UpstreamStore(AgentStateStore):
    MIGRATIONS: ClassVar[list[str]] = []  # PostgresStore's migrations, which the fixture edits: none here

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str, **kwargs: Any) -> Iterator[AgentStateStore]:  # type: ignore[override]
        with super().from_conn_string(upstream.role_dsn(ROLE), **kwargs) as store:
            yield store

    @contextmanager
    def _cursor(self) -> Iterator[psycopg.Cursor[Any]]:
        with _owner() as conn, conn.cursor() as cur:
            yield cur


class AsyncUpstreamStore(AsyncAgentStateStore):
    MIGRATIONS: ClassVar[list[str]] = []

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, conn_string: str, **kwargs: Any) -> AsyncIterator[AsyncAgentStateStore]:  # type: ignore[override]
        async with super().from_conn_string(upstream.role_dsn(ROLE), **kwargs) as store:
            yield store

    @asynccontextmanager
    async def _cursor(self) -> AsyncIterator[psycopg.AsyncCursor[Any]]:
        conn = await psycopg.AsyncConnection.connect(upstream.owner_dsn(), autocommit=True, row_factory=dict_row)
        async with conn, conn.cursor() as cur:
            yield cur


@pytest.fixture(autouse=True)
def agent_state_store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    with _owner() as conn:
        conn.execute(_VIEW)
        conn.execute("delete from ai.memory_items")
    replacements = {
        "PostgresStore": UpstreamStore,
        "AsyncPostgresStore": AsyncUpstreamStore,
        "Connection": _SyncAdmin,
        "AsyncConnection": _AsyncAdmin,
        "DEFAULT_URI": upstream.role_dsn(ROLE),
    }
    for name, value in replacements.items():
        if hasattr(request.module, name):
            monkeypatch.setattr(request.module, name, value)
