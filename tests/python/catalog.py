"""The normalized catalog of a database, and how the schema tests run sqitch, psql and pg_dump.

``catalog(env)`` is what the upgrade, migration and bundle tests compare: ``pg_dump --schema-only``
of everything but sqitch's registry (schemas ai and ai_archive, their tables, functions with their
bodies and SET clauses, triggers, policies, grants and comments), followed by a listing read from
pg_catalog of what a dump renders indirectly or could order differently: every function's identity,
body hash, settings, security, volatility, ACL and comment; every table's ACL, row level security
flags and policies. Two databases with equal ``catalog()`` hold the same schema.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

ROOT = Path(__file__).resolve().parents[2]
DEPLOY_USER = os.environ.get("AGENT_STATE_DEPLOY_USER", "agent_state_owner")


def may_create_databases(admin: psycopg.Connection[Any]) -> bool:
    row = admin.execute("select rolcreatedb or rolsuper from pg_roles where rolname = current_user").fetchone()
    return bool(row and row[0])


def ensure_deploy_user(admin: psycopg.Connection[Any]) -> None:
    """The deploying role (AGENT_STATE_DEPLOY_USER), made when missing, as `make db` makes it."""
    admin.execute(
        sql.SQL(
            "do $$ begin if not exists (select from pg_roles where rolname = {}) then"
            " create role {} login createrole; end if; end $$"
        ).format(sql.Literal(DEPLOY_USER), sql.Identifier(DEPLOY_USER))
    )


@contextmanager
def owner_databases(admin_dsn: str, prefix: str) -> Iterator[Callable[..., str]]:
    """Yields a function that makes an empty database on the server of ``admin_dsn``, owned by
    the deploying role (no superuser: the functions run as the schema owner under RLS,
    docs/security.md), and returns its name; every database made is dropped on exit. Skips the
    test when the connecting role may not create databases. ``make(template)`` makes a copy of
    the database ``template`` instead (``create database ... template``: a deployed schema with
    its sqitch registry, in a second, instead of deploying again; see ``deployed_templates`` in
    conftest.py)."""
    made: list[str] = []
    with psycopg.connect(admin_dsn, autocommit=True) as admin:
        if not may_create_databases(admin):
            pytest.skip("the test role may not create databases")
        ensure_deploy_user(admin)

        def make(template: str | None = None) -> str:
            name = f"{prefix}_{uuid.uuid4().hex[:12]}"
            admin.execute(
                sql.SQL("create database {} {} owner {}").format(
                    sql.Identifier(name),
                    sql.SQL("template {}").format(sql.Identifier(template)) if template else sql.SQL(""),
                    sql.Identifier(DEPLOY_USER),
                )
            )
            made.append(name)
            return name

        try:
            yield make
        finally:
            for name in made:
                admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


def env_for(dsn: str, dbname: str) -> dict[str, str]:
    """The process environment that points libpq (psql, pg_dump, sqitch through DBD::Pg) at a
    database of the server ``dsn`` names."""
    params: dict[str, Any] = conninfo_to_dict(dsn)
    env = dict(os.environ)
    for key, var in (
        ("host", "PGHOST"),
        ("port", "PGPORT"),
        ("user", "PGUSER"),
        ("password", "PGPASSWORD"),
    ):
        if params.get(key):
            env[var] = str(params[key])
    env["PGDATABASE"] = dbname
    return env


def run(args: list[str], env: dict[str, str], cwd: Path = ROOT, timeout: int = 300) -> str:
    """Runs a command; its stdout, or a failed assertion with both outputs."""
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args)} (in {cwd}) failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def sqitch(args: list[str], env: dict[str, str], cwd: Path = ROOT) -> str:
    """``sqitch --quiet ARGS db:pg:`` in the project directory ``cwd`` (the target comes from the
    environment)."""
    return run(["sqitch", "--quiet", *args, "db:pg:"], env, cwd)


def dump(env: dict[str, str]) -> str:
    """``pg_dump --schema-only`` of the database, sqitch's registry left out."""
    text = run(["pg_dump", "--schema-only", "--exclude-schema=sqitch"], env)
    # \restrict and \unrestrict carry a random key per dump (pg_dump 15.14 and later).
    return "\n".join(line for line in text.splitlines() if not line.startswith(("\\restrict", "\\unrestrict")))


_LISTING = r"""
select 'function ' || p.oid::regprocedure::text
       || ' kind=' || p.prokind::text || ' volatile=' || p.provolatile::text || ' parallel=' || p.proparallel::text
       || ' strict=' || p.proisstrict::text || ' secdef=' || p.prosecdef::text || ' leakproof=' || p.proleakproof::text
       || ' lang=' || l.lanname || ' returns=' || pg_catalog.pg_get_function_result(p.oid)
       || ' body=' || pg_catalog.md5(coalesce(p.prosrc, '') || coalesce(p.prosqlbody::text, ''))
       || ' config=' || coalesce(p.proconfig::text, '-') || ' acl=' || coalesce(p.proacl::text, '-')
       || ' owner=' || p.proowner::regrole::text
       || ' comment=' || coalesce(pg_catalog.md5(pg_catalog.obj_description(p.oid, 'pg_proc')), '-')
from pg_catalog.pg_proc p join pg_catalog.pg_language l on l.oid = p.prolang
where p.pronamespace::regnamespace::text in ('ai', 'ai_archive')
union all
select 'relation ' || c.oid::regclass::text || ' kind=' || c.relkind::text || ' rls=' || c.relrowsecurity::text
       || ' forced=' || c.relforcerowsecurity::text || ' acl=' || coalesce(c.relacl::text, '-')
       || ' owner=' || c.relowner::regrole::text
       || ' comment=' || coalesce(pg_catalog.md5(pg_catalog.obj_description(c.oid, 'pg_class')), '-')
       || ' columns=' || coalesce((
            select pg_catalog.string_agg(
                     a.attname || ':' || pg_catalog.format_type(a.atttypid, a.atttypmod)
                     || case when a.attnotnull then ' not null' else '' end
                     || ':' || coalesce(pg_catalog.md5(pg_catalog.col_description(c.oid, a.attnum)), '-'),
                     ', ' order by a.attnum)
            from pg_catalog.pg_attribute a
            where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped), '')
from pg_catalog.pg_class c
where c.relnamespace::regnamespace::text in ('ai', 'ai_archive')
union all
select 'policy ' || pol.schemaname || '.' || pol.tablename || '.' || pol.policyname || ' ' || pol.permissive::text
       || ' ' || pol.cmd || ' roles=' || pol.roles::text || ' using=' || coalesce(pol.qual, '-')
       || ' check=' || coalesce(pol.with_check, '-')
from pg_catalog.pg_policies pol
where pol.schemaname in ('ai', 'ai_archive')
union all
select 'trigger ' || t.tgrelid::regclass::text || '.' || t.tgname || ' ' || pg_catalog.pg_get_triggerdef(t.oid)
from pg_catalog.pg_trigger t
where not t.tgisinternal and t.tgrelid::regclass::text ~ '^(ai|ai_archive)\.'
union all
select 'schema ' || n.nspname || ' acl=' || coalesce(n.nspacl::text, '-') || ' owner=' || n.nspowner::regrole::text
from pg_catalog.pg_namespace n
where n.nspname in ('ai', 'ai_archive')
order by 1
"""


def listing(env: dict[str, str]) -> str:
    """The pg_catalog listing of schemas ai and ai_archive (see the module's docstring)."""
    return run(["psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", _LISTING], env)


def catalog(env: dict[str, str]) -> str:
    """What two databases with the same schema have equal: the dump, then the listing."""
    return dump(env) + "\n-- listing\n" + listing(env)
