"""The user's own server (issue 21, defect 1): ``DATABASE_URL`` as LangGraph's docs write it, a
superuser's (``postgresql://postgres:postgres@localhost:5432/postgres``), and the URL of a
non-superuser that owns the database and may create roles (what docs/security.md asks for) both
work for ``setup()`` (the savers, ``schema.deploy``), ``agent-state deploy`` and the demo.

Before: a superuser's ``setup()`` raised 42501 "deploy agent-state as a role that row level
security applies to", and with the CREATEROLE owner's URL the demo failed: "role ... may not act
for another owner: it is not a member of ai_service". Now a superuser creates the non-superuser
owner role (``agent_state_owner``, no BYPASSRLS) and deploys as it, saying so in one line, and
the demo makes the service role it runs as. Where no safe owner can be made (a BYPASSRLS role
that is no superuser), the refusal stays: 42501 with a clear message.

Each test makes a fresh database on the private cluster and connects to it as the superuser
``postgres`` or as a CREATEROLE non-superuser that owns it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import dsn_as
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from agent_state import schema
from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver

pytestmark = pytest.mark.session_features("fresh databases, roles, sqitch-free deploys: connects to the server itself")

ROOT = Path(__file__).resolve().parents[2]
OWNER = "agent_state_owner"
CREATEROLE_OWNER = "own_server_owner"  # a database owner that may create roles, no superuser
BYPASS = "own_server_bypass"  # BYPASSRLS and no superuser: no safe owner can be made from it


def _in(dsn: str, dbname: str, user: str) -> str:
    params: dict[str, Any] = conninfo_to_dict(dsn_as(dsn, user))
    params["dbname"] = dbname
    return make_conninfo(**params)


@pytest.fixture
def fresh(direct_dsn: str) -> Iterator[Callable[[str], str]]:
    """``fresh(kind)``: the URL of a new empty database, as the superuser (``"superuser"``), as
    a CREATEROLE non-superuser that owns it (``"createrole"``) or as a BYPASSRLS one (``"bypassrls"``)."""
    made: list[str] = []
    with psycopg.connect(direct_dsn, autocommit=True) as admin:
        for role, attributes in ((CREATEROLE_OWNER, "login createrole"), (BYPASS, "login bypassrls")):
            if not admin.execute("select 1 from pg_roles where rolname = %s", (role,)).fetchone():
                admin.execute(sql.SQL(f"create role {{}} {attributes}").format(sql.Identifier(role)))

        def make(kind: str) -> str:
            name = f"own_{kind}_{uuid.uuid4().hex[:10]}"
            user = {"superuser": "postgres", "createrole": CREATEROLE_OWNER, "bypassrls": BYPASS}[kind]
            admin.execute(sql.SQL("create database {} owner {}").format(sql.Identifier(name), sql.Identifier(user)))
            made.append(name)
            return _in(direct_dsn, name, user)

        try:
            yield make
        finally:
            for name in made:
                admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


def _schema_owner(url: str) -> tuple[str, bool, bool]:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "select r.rolname, r.rolsuper, r.rolbypassrls from pg_namespace n join pg_roles r on r.oid = n.nspowner"
            " where n.nspname = 'ai'"
        ).fetchone()
    assert row is not None, "schema ai is deployed"
    return row[0], row[1], row[2]


@pytest.mark.parametrize("kind", ["superuser", "createrole"])
def test_setup_deploys_with_a_superuser_or_a_createrole_owner_url(fresh: Callable[[str], str], kind: str) -> None:
    url = fresh(kind)
    with AgentStateSaver.from_conn_string(url) as saver:
        found = saver.setup()
        assert found.deployed and found.compatible
        assert saver.setup().compatible, "and again: nothing to do"
    owner = _schema_owner(url)
    assert owner == ((OWNER if kind == "superuser" else CREATEROLE_OWNER), False, False), owner
    if kind == "superuser":
        assert found.note and OWNER in found.note and "superuser" in found.note, found.note


def test_async_setup_deploys_with_a_superuser_url(fresh: Callable[[str], str]) -> None:
    url = fresh("superuser")

    async def scenario() -> schema.SchemaStatus:
        async with AsyncAgentStateSaver.from_conn_string(url) as saver:
            return await saver.setup()

    assert asyncio.run(scenario()).compatible
    assert _schema_owner(url) == (OWNER, False, False)


def test_a_bypassrls_role_is_still_refused_with_42501(fresh: Callable[[str], str]) -> None:
    url = fresh("bypassrls")
    with psycopg.connect(url, autocommit=True) as conn, pytest.raises(schema.SchemaError) as refused:
        schema.deploy(conn)
    assert refused.value.sqlstate == "42501"
    assert "BYPASSRLS" in str(refused.value)
    with psycopg.connect(url) as conn:
        assert conn.execute("select count(*) from pg_namespace where nspname = 'ai'").fetchone() == (0,)


def _cli(url: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DATABASE_URL=url, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT
    )


@pytest.mark.parametrize("kind", ["superuser", "createrole"])
def test_the_deploy_command_and_the_demo_work_with_either_url(fresh: Callable[[str], str], kind: str) -> None:
    url = fresh(kind)
    deployed = _cli(url, "-m", "agent_state.cli", "deploy")
    assert deployed.returncode == 0, deployed.stderr + deployed.stdout
    if kind == "superuser":
        assert f"as role {OWNER}" in deployed.stdout, deployed.stdout
    assert "deployed schema ai" in deployed.stdout
    demo = _cli(url, str(ROOT / "examples" / "demo.py"), timeout=180)
    assert demo.returncode == 0, (demo.stdout + demo.stderr)[-4000:]


def test_make_with_a_database_url_deploys_as_the_owner_and_runs_the_demo_there() -> None:
    url = "postgresql://postgres:postgres@localhost:5432/postgres"
    shown = subprocess.run(
        ["make", "-n", "demo", "test-db", f"DATABASE_URL={url}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=ROOT,
    ).stdout
    assert f"scripts/sqitch.sh --as-owner '{url}' --quiet deploy --verify" in shown, shown
    assert f"DATABASE_URL='{url}'" in shown and "examples/demo.py" in shown, shown
    assert "tests/pgtap/fixtures/setup.sql" in shown and "createdb" not in shown, shown


@pytest.mark.parametrize("kind", ["superuser", "createrole"])
def test_sqitch_as_owner_deploys_a_superusers_url_as_the_owner_role(fresh: Callable[[str], str], kind: str) -> None:
    url = fresh(kind)
    done = subprocess.run(
        [str(ROOT / "scripts/sqitch.sh"), "--as-owner", url, "--quiet", "deploy", "--verify"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    owner = _schema_owner(url)
    assert owner == ((OWNER if kind == "superuser" else CREATEROLE_OWNER), False, False), owner
    said = [line for line in done.stderr.splitlines() if line.startswith("sqitch.sh:")]
    assert len(said) == (1 if kind == "superuser" else 0), done.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        assert schema.status(conn).source == "sqitch"


def test_sqitch_as_owner_refuses_a_bypassrls_role(fresh: Callable[[str], str]) -> None:
    done = subprocess.run(
        [str(ROOT / "scripts/sqitch.sh"), "--as-owner", fresh("bypassrls"), "--quiet", "deploy"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 1 and "BYPASSRLS" in done.stderr, done.stderr
