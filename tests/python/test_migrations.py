"""The schema as deployed: sqitch deploy -> revert -> deploy leaves an identical catalog, and the
one-file bundle sql/ai.sql gives the same catalog as sqitch (and is current)."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from catalog import DEPLOY_USER, ROOT, catalog, dump, env_for, run
from psycopg import sql
from sql_objects import read_plan

# The names the other schema tests import from here.
_env, _run, _dump = env_for, run, dump


@pytest.fixture
def scratch_db(dsn: str) -> Iterator[Any]:
    """Makes empty databases on the test server, owned by the deploying role (no superuser: the
    functions run as the schema owner under RLS, docs/security.md), and drops them afterwards.
    The environment it returns connects as that role."""
    made: list[str] = []
    with psycopg.connect(dsn, autocommit=True) as admin:
        can_create = admin.execute(
            "select rolcreatedb or rolsuper from pg_roles where rolname = current_user"
        ).fetchone()
        if not (can_create and can_create[0]):
            pytest.skip("the test role may not create databases")

        admin.execute(
            sql.SQL(
                "do $$ begin if not exists (select from pg_roles where rolname = {}) then"
                " create role {} login createrole; end if; end $$"
            ).format(sql.Literal(DEPLOY_USER), sql.Identifier(DEPLOY_USER))
        )

        def make() -> dict[str, str]:
            name = f"agent_state_scratch_{uuid.uuid4().hex[:12]}"
            admin.execute(
                sql.SQL("create database {} owner {}").format(sql.Identifier(name), sql.Identifier(DEPLOY_USER))
            )
            made.append(name)
            return dict(_env(dsn, name), PGUSER=DEPLOY_USER)

        yield make
        for name in made:
            admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


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


def test_cancel_awaiting_human_closes_approvals_left_pending_and_reverts_to_the_previous_catalog(
    dsn: str, scratch_db: Any
) -> None:
    """Deployed over data of the earlier release, as a non-superuser owner (so under forced RLS):
    an approval that a cancel left pending is closed and its session made active. The revert
    restores the catalog of human_in_the_loop, turns cancelled approvals back into pending ones,
    and refuses while a thread holds two that the old schema could not (one pending per thread)."""
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
    _run(["sqitch", "--quiet", "deploy", "--verify", "--to", "human_in_the_loop", "db:pg:"], deployer)
    before = _dump(deployer)

    def connect(user: str) -> psycopg.Connection[Any]:
        return psycopg.connect(
            host=env.get("PGHOST"), port=env.get("PGPORT"), dbname=env["PGDATABASE"], user=user, autocommit=True
        )

    def wait_and_cancel(thread: str) -> str:
        with connect("tenant_a") as a, connect("app_service") as s:
            (job,) = a.execute("select job_id from ai.enqueue_job(%s)", (thread,)).fetchone()  # type: ignore[misc]
            (token,) = s.execute("select fencing_token from ai.claim_job('w', '1 minute')").fetchone()  # type: ignore[misc]
            (approval,) = s.execute("select ai.request_human(%s, %s, 'c1')", (job, token)).fetchone()  # type: ignore[misc]
            a.execute("select ai.cancel_job(%s)", (job,))
            return str(approval)

    with connect("tenant_a") as a:
        a.execute("select ai.create_session('left-waiting')")
    stuck = wait_and_cancel("left-waiting")

    def as_superuser() -> psycopg.Connection[Any]:  # tenants hold no table privilege: assertions as the superuser
        return psycopg.connect(dsn, dbname=env["PGDATABASE"], autocommit=True)

    with as_superuser() as a:
        row = a.execute(
            "select h.status, s.status from ai.human_approvals h join ai.agent_sessions s using (thread_id)"
            " where h.approval_id = %s",
            (stuck,),
        ).fetchone()
    assert row == ("pending", "waiting"), "the earlier release left the approval pending and the session waiting"

    _run(["sqitch", "--quiet", "deploy", "--verify", "db:pg:"], deployer)
    with as_superuser() as a:
        row = a.execute(
            "select h.status, h.decided_by, s.status"
            " from ai.human_approvals h join ai.agent_sessions s using (thread_id) where h.approval_id = %s",
            (stuck,),
        ).fetchone()
        assert row == ("cancelled", None, "active")
        events = a.execute("select kind from ai.session_events where thread_id = 'left-waiting' order by event_id")
        kinds = [k for (k,) in events]
        assert kinds[-2:] == ["approval_cancelled", "status"]

    # The thread waits again and is cancelled again: two cancelled approvals, which the earlier
    # schema cannot hold, so the revert refuses and changes nothing.
    wait_and_cancel("left-waiting")
    done = subprocess.run(
        ["sqitch", "revert", "-y", "--to", "human_in_the_loop", "db:pg:"],
        cwd=ROOT,
        env=deployer,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0 and "thread left-waiting has a cancelled approval" in done.stdout + done.stderr
    with psycopg.connect(dsn, dbname=env["PGDATABASE"], autocommit=True) as admin:  # a superuser sees every row
        admin.execute("delete from ai.human_approvals where approval_id <> %s", (stuck,))
    _run(["sqitch", "--quiet", "revert", "-y", "--to", "human_in_the_loop", "db:pg:"], deployer)
    assert _dump(deployer) == before, "the revert restores the catalog of human_in_the_loop"
    with as_superuser() as a:
        row = a.execute("select status, decided_at from ai.human_approvals where approval_id = %s", (stuck,)).fetchone()
    assert row == ("pending", None)
    _run(["sqitch", "--quiet", "revert", "-y", "db:pg:"], deployer)
