"""The Citus formation of `make test-citus` as the tests see it (scripts/citus.sh builds it).

Ports: the coordinator on CITUS_PORT (6200), worker N on CITUS_PORT + N. The schema is deployed
on the coordinator by the non-superuser owner and distributed with ``select ai.distribute()``.
"""

from __future__ import annotations

import os
import uuid

import psycopg

from agent_state import schema

PORT = int(os.environ.get("CITUS_PORT", "6200"))
WORKERS = int(os.environ.get("CITUS_WORKERS", "2"))
WORKER_PORTS = [PORT + n for n in range(1, WORKERS + 1)]
OWNER = "agent_state_owner"
# the tenants and the service of scripts/citus.sh, not members of ai_test_clock while tests/citus
# runs (conftest.py), and a tenant and a service that are, for the tests of the frozen clock
TENANTS = ("tenant_a", "tenant_b", "app_service")
CLOCK_TENANT = "clock_tenant"
CLOCK_SERVICE = "clock_service"


def url(user: str, port: int = PORT) -> str:
    return f"postgresql://{user}@127.0.0.1:{port}/agent_state?connect_timeout=5"


def connect(user: str, port: int = PORT) -> psycopg.Connection[tuple[object, ...]]:
    """A connection as this role, in autocommit (each call its own transaction, as the client's)."""
    return psycopg.connect(url(user, port), autocommit=True)


def thread(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def worker_of(thread_id: str) -> int:
    """The port of the worker that holds this thread's shard of ai.agent_sessions."""
    with connect("postgres") as conn:
        row = conn.execute(
            "select nodeport from citus_shards s join pg_dist_shard d using (shardid)"
            " where s.table_name = 'ai.agent_sessions'::regclass"
            " and d.shardid = get_shard_id_for_distribution_column('ai.agent_sessions', %s::text)",
            (thread_id,),
        ).fetchone()
    assert row is not None
    return int(str(row[0]))


def database_url(user: str, dbname: str, port: int = PORT) -> str:
    return f"postgresql://{user}@127.0.0.1:{port}/{dbname}?connect_timeout=5"


def make_database(dbname: str, *, owner_ready: bool = False) -> None:
    """A database of its own on the formation, as a user makes one for agent-state: on every node,
    with the citus extension in it (a superuser's steps, as scripts/citus.sh does for agent_state),
    owned by the owner role, the workers added to its coordinator. Empty: no schema ai yet.
    ``owner_ready``: the owner role and the group roles copied to the workers too, for a deploy
    by the owner's own login (a superuser's deploy does that itself)."""
    for port in [PORT, *WORKER_PORTS]:
        with psycopg.connect(url("postgres", port).replace("/agent_state?", "/postgres?"), autocommit=True) as admin:
            admin.execute(f'create database "{dbname}" owner {OWNER}')
        with psycopg.connect(database_url("postgres", dbname, port), autocommit=True) as conn:
            conn.execute("set client_min_messages = warning")
            conn.execute("create extension citus")
    with psycopg.connect(database_url("postgres", dbname), autocommit=True) as conn:
        conn.execute("select citus_set_coordinator_host('127.0.0.1', %s)", (PORT,))
        for port in WORKER_PORTS:
            conn.execute("select citus_add_node('127.0.0.1', %s)", (port,))
    if owner_ready:
        # The roles the owner's deploy grants to, copied to the workers by the superuser (as
        # agent_state.schema's superuser deploy does: a role that exists before the database joined
        # the formation is copied by the first DDL that needs it, as the role running it).
        with psycopg.connect(database_url("postgres", dbname), autocommit=True) as conn:
            conn.execute("set client_min_messages = warning")
            with conn.transaction():
                conn.execute("select set_config('agent_state.deploy_owner', %s, true)", (OWNER,))
                conn.execute(schema._PREPARE_OWNER)


def drop_database(dbname: str) -> None:
    """Drops the database made by :func:`make_database` on every node (its sessions ended)."""
    for port in [PORT, *WORKER_PORTS]:
        with psycopg.connect(url("postgres", port).replace("/agent_state?", "/postgres?"), autocommit=True) as admin:
            admin.execute(f'drop database if exists "{dbname}" with (force)')


def shard_rows(dbname: str, table: str, thread_id: str) -> tuple[int, int]:
    """(the port of the worker that holds ``thread_id``'s shard of ``table``, the rows of the
    thread it holds there), read on that worker from the shard itself (as the superuser)."""
    with psycopg.connect(database_url("postgres", dbname), autocommit=True) as conn:
        row = conn.execute(
            "select s.nodeport, s.shard_name from citus_shards s"
            " where s.table_name = %s::regclass and s.shardid = get_shard_id_for_distribution_column(%s, %s::text)",
            (table, table, thread_id),
        ).fetchone()
    assert row is not None, f"{table} is not distributed"
    port, shard = int(str(row[0])), str(row[1])
    with psycopg.connect(database_url("postgres", dbname, port), autocommit=True) as conn:
        count = conn.execute(
            f"select count(*) from {shard} where thread_id = %s",
            (thread_id,),  # schema-qualified already
        ).fetchone()
    return port, int(str(count[0])) if count else 0


def layout(conn: psycopg.Connection[tuple[object, ...]]) -> dict[str, str]:
    """Each table Citus knows in the connection's database: 'reference' or 'by <column>'."""
    rows = conn.execute(
        "select logicalrelid::regclass::text,"
        " case partmethod when 'n' then 'reference'"
        " else 'by ' || column_to_column_name(logicalrelid, partkey) end"
        " from pg_dist_partition"
    ).fetchall()
    return {str(table): str(kind) for table, kind in rows}
