"""A newcomer's first commands (issue 33, "first contact"):

* `DATABASE_URL=<a superuser's URL of an empty database> make demo` deploys through sqitch with
  --verify as a NOLOGIN owner role, as a superuser's deploy makes it on a fresh server, and runs the
  demo there (verify/owners@v0.1.0.sql called ai.current_owner() as that role, which refuses a role
  that cannot log in: the deploy failed);
* `make demo` installs only what the demo needs (no Chromium, pgTAP, plpgsql_check, PgBouncer,
  Node, test extras), `make test` and `make check` the rest.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

ROOT = Path(__file__).resolve().parents[2]
TEST_ONLY = ["chromium", "pgtap", "plpgsql", "pgbouncer", "pg_prove", "nodejs", "npm", "test,dev", "npm ci"]


def _make(*args: str, env: dict[str, str] | None = None, timeout: int = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=ROOT,
        env=env or dict(os.environ),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_make_demo_sets_up_only_what_the_demo_needs_and_make_test_the_rest() -> None:
    """`make -n -B` prints every recipe the goal would run, none run (the demo's and the tests')."""
    demo = _make("-n", "-B", "demo")
    assert demo.returncode == 0, demo.stderr
    assert not [word for word in TEST_ONLY if word in demo.stdout], demo.stdout
    assert "pip install -q -e 'python[langgraph,demo]'" in demo.stdout
    for goal in ("setup-test", "check"):
        done = _make("-n", "-B", goal)
        assert done.returncode == 0, done.stderr
        assert all(word in done.stdout for word in TEST_ONLY[:-1]), (goal, done.stdout)


@pytest.fixture
def superuser_empty_database(direct_dsn: str) -> Iterator[tuple[str, str]]:
    """An empty database owned by a superuser, its URL as that superuser, and the name of an owner
    role that does not exist yet (a superuser's deploy makes it NOLOGIN, as on a fresh server)."""
    name, owner = f"first_contact_{uuid.uuid4().hex[:8]}", f"first_contact_owner_{uuid.uuid4().hex[:8]}"
    params: dict[str, Any] = conninfo_to_dict(direct_dsn)
    with psycopg.connect(make_conninfo(**{**params, "dbname": "postgres"}), autocommit=True) as admin:
        superuser = admin.execute("select rolname from pg_roles where rolsuper order by oid limit 1").fetchone()
        assert superuser is not None
        admin.execute(sql.SQL("create database {} owner {}").format(sql.Identifier(name), sql.Identifier(superuser[0])))
        try:
            yield make_conninfo(**{**params, "dbname": name, "user": superuser[0]}), owner
        finally:
            admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))
            admin.execute(sql.SQL("drop role if exists {}").format(sql.Identifier(owner)))


def test_make_demo_with_a_superusers_url_deploys_with_verify_as_a_nologin_owner_and_runs_the_demo(
    superuser_empty_database: tuple[str, str],
) -> None:
    url, owner = superuser_empty_database
    env = dict(os.environ, DATABASE_URL=url, AGENT_STATE_OWNER=owner)
    shown = _make("-n", "demo", env=env)
    assert f"scripts/sqitch.sh --as-owner '{url}' --quiet deploy --verify" in shown.stdout, shown.stdout
    done = _make("demo", env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert f"deploying schema ai as role {owner}" in done.stderr, done.stderr
    assert "All promises kept." in done.stdout, done.stdout[-4000:]
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "select r.rolname, r.rolcanlogin, r.rolsuper, r.rolbypassrls from pg_namespace n"
            " join pg_roles r on r.oid = n.nspowner where n.nspname = 'ai'"
        ).fetchone()
        assert row == (owner, False, False, False)
        assert conn.execute("select count(*) from sqitch.changes").fetchone() != (0,)
