"""Shared fixtures: the test database `make test` prepared (deployed with sqitch, test roles made).

AGENT_STATE_TEST_DSN names it. Tests connect as the superuser for set-up and as the login roles
tenant_a, tenant_b (members of ai_user) and app_service (member of ai_service) to exercise RLS.

`make test` runs the suite twice: directly, then through a real PgBouncer in transaction pooling
(scripts/pgbouncer.sh), with AGENT_STATE_TEST_DSN naming the pooler and
AGENT_STATE_TEST_DIRECT_DSN the server. A test that needs a real session (LISTEN, a session-level
``set_config``, advisory session locks, SET ROLE across statements) says so with
``@pytest.mark.session_features("why")`` and then always connects directly: those features do not
work through a transaction pooler, by design, and the library does not rely on them.
AGENT_STATE_TEST_POOLER_DSN names the pooler in both runs, for the tests written for it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from agent_state import Client


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "session_features(reason): needs a real session (LISTEN, session-level set_config, advisory"
        " session locks, SET ROLE across statements): connects directly, never through the pooler",
    )


def _env_dsn() -> str:
    value = os.environ.get("AGENT_STATE_TEST_DSN")
    if not value:
        pytest.exit("AGENT_STATE_TEST_DSN is not set: run the tests with `make test`", returncode=2)
    return value


@pytest.fixture
def dsn(request: pytest.FixtureRequest) -> str:
    """The database under test: through the pooler in the pooled run, except for tests marked
    ``session_features``, which get the server itself."""
    if request.node.get_closest_marker("session_features") is not None:
        return os.environ.get("AGENT_STATE_TEST_DIRECT_DSN") or _env_dsn()
    return _env_dsn()


@pytest.fixture(scope="module")
def module_dsn() -> str:
    """For module-scoped set-up (it outlives any one test's marker): the server itself."""
    return os.environ.get("AGENT_STATE_TEST_DIRECT_DSN") or _env_dsn()


@pytest.fixture(scope="module")
def module_role_dsn(module_dsn: str):  # type: ignore[no-untyped-def]
    return lambda user: dsn_as(module_dsn, user)


@pytest.fixture
def direct_dsn() -> str:
    """The server itself, never a pooler (set-up that needs a session, server restarts)."""
    return os.environ.get("AGENT_STATE_TEST_DIRECT_DSN") or _env_dsn()


@pytest.fixture
def pooler_dsn() -> str:
    """The same database through PgBouncer in transaction pooling (scripts/pgbouncer.sh)."""
    value = os.environ.get("AGENT_STATE_TEST_POOLER_DSN")
    if not value:
        pytest.skip("AGENT_STATE_TEST_POOLER_DSN is not set (no PgBouncer: `make test` starts one)")
    return value


def dsn_as(dsn: str, user: str) -> str:
    """The same database, as another login role (trust auth on the private cluster)."""
    params: dict[str, Any] = conninfo_to_dict(dsn)
    params["user"] = user
    return make_conninfo(**params)


@pytest.fixture
def role_dsn(dsn: str):  # type: ignore[no-untyped-def]
    return lambda user: dsn_as(dsn, user)


@pytest.fixture
def conn(dsn: str) -> Iterator[psycopg.Connection[Any]]:
    """A raw connection for the test's own SQL. Through the pooler it never prepares statements
    (psycopg prepares a query run five times, and a transaction pooler hands the next transaction
    to another server session), as docs/connections.md asks of any raw connection there; the
    client's own calls detect the pooler by themselves (test_pooler.py)."""
    direct = os.environ.get("AGENT_STATE_TEST_DIRECT_DSN")
    pooled = direct is not None and dsn != direct
    with psycopg.connect(dsn, autocommit=True, prepare_threshold=None if pooled else 5) as connection:
        yield connection


@pytest.fixture
def client(conn: psycopg.Connection[Any]) -> Client:
    return Client(conn)


@pytest.fixture
def thread_id() -> str:
    return f"test-{uuid.uuid4()}"
