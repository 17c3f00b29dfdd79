"""tests/citus: run by `make test-citus` against the formation it builds (tests/citus/formation.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from formation import CLOCK_SERVICE, CLOCK_TENANT, TENANTS, connect


@pytest.fixture
def tenant_c() -> Iterator[str]:
    """A tenant that may not freeze the clock (no ai_test_clock), as every tenant of a production cluster."""
    with connect("postgres") as conn:
        conn.execute(
            "do $$ begin if not exists (select from pg_roles where rolname = 'tenant_c') then"
            " create role tenant_c login; end if; end $$"
        )
        conn.execute("grant ai_user to tenant_c")
    yield "tenant_c"


@pytest.fixture(scope="session", autouse=True)
def tenants_that_may_not_freeze_the_clock() -> Iterator[None]:
    """The tenants and the service of these tests as a production cluster has them: not members of
    ai_test_clock. scripts/citus.sh grants it to them for the pgTAP files (which freeze the clock
    in transaction blocks), and a delegated call by a role that may freeze the clock is refused on
    the worker (AS072: docs/scaling.md, "The test clock under delegation"). The tests of the clock
    itself freeze it as CLOCK_TENANT and CLOCK_SERVICE, members. Granted back at the end, for the
    parts of `make test-citus` that follow (the pytest part's tests freeze the clock as tenant_a
    and app_service)."""
    roles = ", ".join(TENANTS)
    with connect("postgres") as conn:
        conn.execute("set client_min_messages = warning")
        for role, group in ((CLOCK_TENANT, "ai_user"), (CLOCK_SERVICE, "ai_service")):
            conn.execute(
                f"do $$ begin if not exists (select from pg_roles where rolname = '{role}') then"
                f" create role {role} login; end if; end $$"
            )
            conn.execute(f"grant {group}, ai_test_clock to {role}")
        conn.execute(f"revoke ai_test_clock from {roles}")
    try:
        yield
    finally:
        with connect("postgres") as conn:
            conn.execute(f"grant ai_test_clock to {roles}")
