"""setup() from Python on a formation: it deploys the schema and distributes it (issue 40, item 1).

Each test makes a database of its own on the formation (citus on every node, the workers added),
as a user does for agent-state, and drops it at the end.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from formation import OWNER, WORKER_PORTS, database_url, drop_database, layout, make_database, shard_rows

from agent_state import schema
from agent_state.langgraph_saver import AgentStateSaver


@pytest.fixture
def empty_db(request: pytest.FixtureRequest) -> Iterator[str]:
    """An empty database on the formation; ``owner_ready`` (indirect parameter, default True): the
    owner and group roles copied to its workers beforehand (a superuser's deploy does it itself)."""
    name = f"setup_{uuid.uuid4().hex[:8]}"
    make_database(name, owner_ready=getattr(request, "param", True))
    try:
        yield name
    finally:
        drop_database(name)


def _layout(dbname: str) -> dict[str, str]:
    with psycopg.connect(database_url("postgres", dbname), autocommit=True) as conn:
        return layout(conn)


def _setup_distributes(dbname: str, user: str) -> None:
    with AgentStateSaver.from_conn_string(database_url(user, dbname)) as saver:
        found = saver.setup()
        assert found.deployed and found.compatible
        assert "distributed schema ai on the Citus formation" in (found.note or ""), found.note
        again = saver.setup()
        assert again.compatible and again.note is None, "a second setup() has nothing to do"
    layout = _layout(dbname)
    assert layout["ai.agent_sessions"] == "by thread_id"
    assert layout["ai.checkpoints"] == "by thread_id"
    assert layout["ai.memory_items"] == "by owner"
    assert layout["ai.error_codes"] == "reference"
    assert "ai.agent_jobs" not in layout
    # a tenant's thread lands on a worker's shard
    thread = f"setup-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(database_url("tenant_a", dbname), autocommit=True) as tenant:
        tenant.execute("select ai.create_session(%s)", (thread,))
    port, rows = shard_rows(dbname, "ai.agent_sessions", thread)
    assert rows == 1 and port in WORKER_PORTS


@pytest.mark.parametrize("empty_db", [False], indirect=True)
def test_setup_as_a_superuser_deploys_as_the_owner_and_distributes(empty_db: str) -> None:
    """The roles exist on every node already (made for another database): the superuser's deploy
    has Citus copy them to this database's workers before the owner's DDL needs them."""
    _setup_distributes(empty_db, "postgres")


def test_setup_as_the_owner_deploys_and_distributes_and_a_tenants_setup_only_checks(empty_db: str) -> None:
    _setup_distributes(empty_db, OWNER)
    # a role that is neither the owner nor a superuser may not distribute: it checks, as on one server
    with AgentStateSaver.from_conn_string(database_url("tenant_a", empty_db)) as saver:
        found = saver.setup()
    assert found.compatible and found.note is None


def test_deploy_distributes_when_the_schema_is_there(empty_db: str) -> None:
    """schema.deploy() on a schema deployed but not distributed yet (psql -f sql/ai.sql, then
    setup()): it distributes, and says so; the CLI's `agent-state deploy` is the same call."""
    with psycopg.connect(database_url(OWNER, empty_db), autocommit=True) as conn:
        conn.execute("set client_min_messages = warning")
        with conn.transaction():
            conn.execute(schema._bundle_body())  # psql -f sql/ai.sql, as scripts/citus.sh deploys
        assert "ai.agent_sessions" not in _layout(empty_db)
    with psycopg.connect(database_url("postgres", empty_db), autocommit=True) as conn:
        found = schema.deploy(conn)
        assert "distributed" in (found.note or ""), found.note
        assert conn.execute("select current_user, session_user").fetchone() == ("postgres", "postgres")
    assert _layout(empty_db)["ai.agent_sessions"] == "by thread_id"


def test_a_database_without_the_citus_extension_on_a_citus_server_works_as_one_server() -> None:
    """The coordinator's server loads Citus (shared_preload_libraries), but this database has no
    citus extension: the schema deployed there is a single server's, and a tenant's calls work as on
    one (before, the identity's carry read Citus' catalog there: 42P01, pg_dist_shard)."""
    name = f"plain_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(database_url("postgres", "postgres"), autocommit=True) as admin:
        admin.execute(f'create database "{name}" owner {OWNER}')
    try:
        with psycopg.connect(database_url("postgres", name), autocommit=True) as conn:
            found = schema.deploy(conn)
        assert found.compatible and "distributed" not in (found.note or "")
        thread = f"plain-{uuid.uuid4().hex[:8]}"
        with psycopg.connect(database_url("tenant_a", name), autocommit=True) as tenant:
            tenant.execute("select ai.create_session(%s)", (thread,))
            assert tenant.execute("select (ai.get_session(%s)).owner", (thread,)).fetchone() == ("tenant_a",)
    finally:
        with psycopg.connect(database_url("postgres", "postgres"), autocommit=True) as admin:
            admin.execute(f'drop database if exists "{name}" with (force)')
