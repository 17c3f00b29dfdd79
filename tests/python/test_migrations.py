"""The schema as deployed: sqitch deploy -> revert -> deploy leaves an identical catalog, and the
one-file bundle sql/ai.sql gives the same catalog as sqitch (and is current)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from catalog import DEPLOY_USER, ROOT, catalog, dump, env_for, owner_databases, run
from psycopg import sql
from sql_objects import read_plan

# The names the other schema tests import from here.
_env, _run, _dump = env_for, run, dump


@pytest.fixture
def scratch_db(dsn: str) -> Iterator[Any]:
    """Makes empty databases owned by the deploying role; the environment it returns connects to
    one as that role."""
    with owner_databases(dsn, "agent_state_scratch") as make:
        yield lambda: dict(_env(dsn, make()), PGUSER=DEPLOY_USER)


def test_deploy_revert_deploy_leaves_an_identical_catalog(scratch_db: Any) -> None:
    env = scratch_db()
    empty = _dump(env)
    _run(["sqitch", "--quiet", "deploy", "--verify", "db:pg:"], env)
    first = _dump(env)
    assert "CREATE SCHEMA ai;" in first
    _run(["sqitch", "--quiet", "revert", "-y", "db:pg:"], env)
    assert _dump(env) == empty, "revert must leave the database as it was before deploy"
    _run(["sqitch", "--quiet", "deploy", "--verify", "db:pg:"], env)
    assert _dump(env) == first


def test_verify_fails_when_a_change_is_missing(scratch_db: Any) -> None:
    env = scratch_db()
    _run(["sqitch", "--quiet", "deploy", "db:pg:"], env)
    _run(
        [
            "psql",
            "-X",
            "-q",
            "-c",
            "drop function ai.get_messages(text, bigint, integer)",
        ],
        env,
    )
    done = subprocess.run(
        ["sqitch", "verify", "db:pg:"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert "messages" in done.stdout + done.stderr


def test_bundle_gives_the_same_catalog_as_sqitch(scratch_db: Any) -> None:
    by_sqitch, by_bundle = scratch_db(), scratch_db()
    _run(["sqitch", "--quiet", "deploy", "db:pg:"], by_sqitch)
    _run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", "sql/ai.sql"], by_bundle)
    # The one difference: the bundle's version marker in the schema's comment (agent_state.schema).
    last = [e.change for e in read_plan((ROOT / "sqitch.plan").read_text()) if e.tag is None][-1]
    marker = f" (installed from the bundle up to change {last})"
    bundled = catalog(by_bundle)
    assert marker in bundled
    assert bundled.replace(marker, "") == catalog(by_sqitch)


def test_committed_bundle_is_current() -> None:
    generated = _run(["scripts/bundle.sh"], dict(os.environ))
    assert (ROOT / "sql" / "ai.sql").read_text() == generated, "sql/ai.sql is stale: run `make bundle`"


def test_committed_sql_api_doc_is_current(dsn: str) -> None:
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    from sql_api_doc import render

    assert (ROOT / "docs" / "sql-api.md").read_text() == render(dsn), "docs/sql-api.md is stale: run `make docs`"


def test_deploy_works_as_a_non_superuser_that_owns_the_database(dsn: str, scratch_db: Any) -> None:
    env = scratch_db()
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(
            "do $$ begin if not exists (select from pg_roles where rolname = 'agent_state_deployer') then"
            " create role agent_state_deployer login nosuperuser nocreaterole nocreatedb; end if; end $$"
        )
        admin.execute(
            sql.SQL("alter database {} owner to agent_state_deployer").format(sql.Identifier(env["PGDATABASE"]))
        )
    deployer = dict(env, PGUSER="agent_state_deployer")
    _run(["sqitch", "--quiet", "deploy", "--verify", "db:pg:"], deployer)
    # The schema belongs to the deployer, and tenants work in it under RLS.
    owner = _run(["psql", "-X", "-At", "-c", "select nspowner::regrole from pg_namespace where nspname = 'ai'"], env)
    assert owner.strip() == "agent_state_deployer"
    tenant = dict(env, PGUSER="tenant_a")
    out = _run(
        [
            "psql",
            "-X",
            "-At",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            "select owner from ai.create_session('t-owned');"
            " select seq from ai.append_message_idempotent('t-owned', 'user', '1')",
        ],
        tenant,
    )
    assert out.split() == ["tenant_a", "1"]
    # delete_thread deletes the session through its tombstone's trigger, which runs as this
    # non-superuser schema owner under forced RLS
    out = _run(
        [
            "psql",
            "-X",
            "-At",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            "select ai.put_checkpoint('t-owned', '', 'c1', null, 'test', '\\x01');"
            " select ai.delete_thread('t-owned');"
            " select ai.delete_thread('t-owned')",
        ],
        tenant,
    )
    assert out.split() == ["c1", "t", "f"], "deleted, and gone the second time"
    other = _run(
        ["psql", "-X", "-At", "-c", "select has_table_privilege('ai.agent_sessions', 'select')"],
        dict(env, PGUSER="tenant_b"),
    )
    assert other.strip() == "f", "tenants hold no table privilege"
    _run(["sqitch", "--quiet", "revert", "-y", "db:pg:"], deployer)


# The changes that hold functions only: they are what `sqitch rework` redeploys over the old bodies.
FUNCTION_CHANGES = list(
    dict.fromkeys(
        e.change
        for e in read_plan((ROOT / "sqitch.plan").read_text())
        if e.tag is None and (e.change.endswith("_functions") or e.change in ("clock", "owners", "ulid"))
    )
)


def test_every_functions_change_deploys_again_over_itself_and_leaves_the_catalog_as_it_was(
    scratch_db: Any,
) -> None:
    """What `sqitch rework <change>` does after a release: the change's deploy script runs over
    the objects its earlier version made. CREATE OR REPLACE (functions, triggers; a constraint
    trigger is dropped and made again) must make that a no-op on the catalog."""
    assert len(FUNCTION_CHANGES) > 10
    env = scratch_db()
    _run(["sqitch", "--quiet", "deploy", "db:pg:"], env)
    before = _dump(env)
    for change in FUNCTION_CHANGES:
        _run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", f"deploy/{change}.sql"], env)
    assert _dump(env) == before
