"""Shared fixtures: the test database `make test` prepared (deployed with sqitch, test roles made).

AGENT_STATE_TEST_DSN names it. Tests connect as the superuser for set-up and as the login roles
tenant_a, tenant_b (members of ai_user) and app_service (member of ai_service) to exercise RLS.
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


@pytest.fixture(scope="session")
def dsn() -> str:
    value = os.environ.get("AGENT_STATE_TEST_DSN")
    if not value:
        pytest.exit(
            "AGENT_STATE_TEST_DSN is not set: run the tests with `make test`",
            returncode=2,
        )
    return value


def dsn_as(dsn: str, user: str) -> str:
    """The same database, as another login role (trust auth on the private cluster)."""
    params: dict[str, Any] = conninfo_to_dict(dsn)
    params["user"] = user
    return make_conninfo(**params)


@pytest.fixture(scope="session")
def role_dsn(dsn: str):  # type: ignore[no-untyped-def]
    return lambda user: dsn_as(dsn, user)


@pytest.fixture
def conn(dsn: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(dsn, autocommit=True) as connection:
        yield connection


@pytest.fixture
def client(conn: psycopg.Connection[Any]) -> Client:
    return Client(conn)


@pytest.fixture
def thread_id() -> str:
    return f"test-{uuid.uuid4()}"
