"""Identity on every node of a Citus formation, failing closed (issue 40, docs/scaling.md).

The functions of schema ai run as the schema owner; the shards they reach through the coordinator
are read and written over connections Citus opens as that owner. The caller's identity reaches the
shards signed (ai._formation_caller); these tests attack it as tests/python/test_security.py
attacks one server: another tenant's ids, act_as, a forged identity, the owner's own login, a
tenant's direct connection to a worker, EXPLAIN.
"""

from __future__ import annotations

import json

import psycopg
import pytest
from formation import OWNER, WORKER_PORTS, connect, thread, worker_of
from psycopg.types.json import Jsonb


def sqlstate(exc: pytest.ExceptionInfo[psycopg.Error]) -> str | None:
    return exc.value.sqlstate


@pytest.fixture
def threads() -> dict[str, str]:
    """A session of tenant_a and one of tenant_b, each with a message, made through the coordinator."""
    made = {"a": thread("ta"), "b": thread("tb")}
    for who, role in (("a", "tenant_a"), ("b", "tenant_b")):
        with connect(role) as conn:
            conn.execute("select ai.create_session(%s)", (made[who],))
            conn.execute(
                "select ai.append_messages(%s, %s)", (made[who], Jsonb([{"role": "user", "content": f"hi {who}"}]))
            )
    return made


def test_a_tenant_reads_and_writes_its_own_thread_on_the_shards(threads: dict[str, str]) -> None:
    with connect("tenant_a") as conn:
        row = conn.execute("select owner from ai.get_session(%s)", (threads["a"],)).fetchone()
        assert row == ("tenant_a",)
        msgs = conn.execute("select seq, content from ai.get_messages(%s)", (threads["a"],)).fetchall()
        assert [m[0] for m in msgs] == [1]
        assert json.dumps(msgs[0][1]) == json.dumps("hi a")


def test_another_tenants_thread_is_not_found_on_the_shards(threads: dict[str, str]) -> None:
    with connect("tenant_a") as conn:
        with pytest.raises(psycopg.Error) as exc:
            conn.execute("select ai.get_session(%s)", (threads["b"],))
        assert sqlstate(exc) == "AS001"
        with pytest.raises(psycopg.Error) as exc:
            conn.execute("select ai.append_messages(%s, %s)", (threads["b"], Jsonb([{"role": "user", "content": "x"}])))
        assert sqlstate(exc) == "AS001"
        with pytest.raises(psycopg.Error) as exc:
            conn.execute("select count(*) from ai.get_messages(%s)", (threads["b"],))
        assert sqlstate(exc) == "AS001"
    with connect("tenant_b") as conn:
        assert conn.execute("select count(*) from ai.get_messages(%s)", (threads["b"],)).fetchone() == (1,)


def test_a_thread_id_taken_by_another_tenant_cannot_be_taken_again(threads: dict[str, str]) -> None:
    with connect("tenant_a") as conn, pytest.raises(psycopg.Error) as exc:
        conn.execute("select ai.create_session(%s)", (threads["b"],))
    assert sqlstate(exc) in ("AS005", "AS001")


def test_a_service_acting_for_a_tenant_sees_only_that_tenant_on_the_shards(threads: dict[str, str]) -> None:
    with connect("app_service") as conn:
        with conn.transaction():
            conn.execute("select ai.act_as('tenant_a')")
            assert conn.execute("select owner from ai.get_session(%s)", (threads["a"],)).fetchone() == ("tenant_a",)
            with pytest.raises(psycopg.Error) as exc, conn.transaction():
                conn.execute("select ai.get_session(%s)", (threads["b"],))
            assert sqlstate(exc) == "AS001"
            with pytest.raises(psycopg.Error) as exc, conn.transaction():
                conn.execute("select count(*) from ai.get_messages(%s)", (threads["b"],))
            assert sqlstate(exc) == "AS001"
        # acting for nobody, a service sees every tenant, as on one server
        assert conn.execute("select owner from ai.get_session(%s)", (threads["b"],)).fetchone() == ("tenant_b",)


def test_a_forged_carried_identity_is_refused_on_the_shards(threads: dict[str, str]) -> None:
    """A tenant that sets the carried identity itself (claiming tenant_b), and the mark that would
    stop its own from being carried, is refused on the shard: it cannot sign one."""
    forged = json.dumps({"role": "tenant_b", "acting": ""}, separators=(", ", ": ")) + " " + "0" * 64
    mine = json.dumps({"role": "tenant_a", "acting": ""}, separators=(", ", ": "))
    with connect("tenant_a") as conn:
        with pytest.raises(psycopg.Error) as exc, conn.transaction():
            conn.execute("select set_config('ai.carried_payload', %s, true)", (mine,))
            conn.execute("set local citus.propagate_set_commands = 'local'")
            conn.execute(f"set local ai.carried_identity = '{forged}'")
            conn.execute("select ai.get_session(%s)", (threads["b"],))
        assert sqlstate(exc) in ("AS070", "AS001")
        # and the forged identity never yields tenant_b's rows, whatever the code
        with conn.transaction():
            conn.execute("select set_config('ai.carried_payload', %s, true)", (mine,))
            conn.execute("set local citus.propagate_set_commands = 'local'")
            conn.execute(f"set local ai.carried_identity = '{forged}'")
            try:
                rows = conn.execute("select count(*) from ai.get_messages(%s)", (threads["b"],)).fetchone()
            except psycopg.Error as err:
                assert err.sqlstate in ("AS070", "AS001")
            else:
                assert rows == (0,)


def test_the_schema_owner_acts_for_nobody_on_the_shards(threads: dict[str, str]) -> None:
    """Logged in as the schema owner, a call reaches the shards as the owner with no caller
    identity: refused (AS070), never run as an identity that sees or writes tenant rows."""
    with connect(OWNER) as conn:
        with pytest.raises(psycopg.Error) as exc:
            conn.execute("select ai.get_session(%s)", (threads["a"],))
        assert sqlstate(exc) == "AS070"
        with pytest.raises(psycopg.Error) as exc:
            conn.execute("select count(*) from ai.agent_sessions")
        assert sqlstate(exc) == "AS070"


def test_the_schema_owner_on_a_worker_acts_for_nobody(threads: dict[str, str]) -> None:
    port = worker_of(threads["a"])
    with connect(OWNER, port) as conn:
        with pytest.raises(psycopg.Error) as exc:
            conn.execute("select count(*) from ai.agent_sessions")
        assert sqlstate(exc) == "AS070"


def test_a_tenant_connected_to_a_worker_sees_only_its_own_rows(threads: dict[str, str]) -> None:
    """A tenant's own login on a worker: its identity is its login, as on one server; the carried
    identity it sets there is not read (only the owner's connections read it)."""
    port_b = worker_of(threads["b"])
    forged = json.dumps({"role": "tenant_b", "acting": ""}, separators=(", ", ": ")) + " " + "0" * 64
    with connect("tenant_a", port_b) as conn:
        with pytest.raises(psycopg.Error) as exc:
            conn.execute("select ai.get_session(%s)", (threads["b"],))
        assert sqlstate(exc) == "AS001"
        with conn.transaction():
            conn.execute(f"set local ai.carried_identity = '{forged}'")
            with pytest.raises(psycopg.Error) as exc2, conn.transaction():
                conn.execute("select ai.get_session(%s)", (threads["b"],))
            assert sqlstate(exc2) == "AS001"
        # no table privilege, on the shell or on a shard
        with connect("postgres") as admin:
            shard = admin.execute(
                "select shard_name('ai.agent_sessions'::regclass,"
                " get_shard_id_for_distribution_column('ai.agent_sessions', %s::text))",
                (threads["b"],),
            ).fetchone()
        assert shard is not None
        for table in ("ai.agent_sessions", str(shard[0])):
            with pytest.raises(psycopg.Error) as exc3:
                conn.execute(f"select * from {table}")
            assert sqlstate(exc3) == "42501"


def test_explain_by_a_tenant_is_refused() -> None:
    with connect("tenant_a") as conn, pytest.raises(psycopg.Error) as exc:
        conn.execute("explain select * from ai.agent_sessions")
    assert sqlstate(exc) == "42501"


def test_the_formation_secret_is_read_by_nobody_but_the_owner() -> None:
    for role in ("tenant_a", "app_service"):
        for port in (None, *WORKER_PORTS):
            with connect(role, *(p for p in (port,) if p is not None)) as conn, pytest.raises(psycopg.Error) as exc:
                conn.execute("select secret from ai.formation_secret")
            assert sqlstate(exc) == "42501"
