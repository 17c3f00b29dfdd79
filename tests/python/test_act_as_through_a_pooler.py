"""A service's acting owner never reaches another client through a transaction pooler (issue 21,
defect 5). ``ai.act_as(owner, local => false)`` left the acting owner on the server connection,
and PgBouncer in transaction pooling hands that connection to the next client of the same role:
that client then acted for the first one's end user. Now the session-wide form raises AS002, and
an acting owner counts only in the transaction ``ai.act_as`` set it in: whatever a client leaves
on a server connection (a session-level ``set_config`` by hand) is ignored by the next."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from conftest import dsn_as

from agent_state import Client
from agent_state.errors import InvalidArgument

SERVICE = "app_service"


def _connect(dsn: str) -> psycopg.Connection[Any]:
    return psycopg.connect(dsn_as(dsn, SERVICE), autocommit=True, prepare_threshold=None)


def test_a_second_service_client_never_acts_as_the_first_ones_end_user(pooler_dsn: str) -> None:
    with _connect(pooler_dsn) as first, _connect(pooler_dsn) as second:
        # the v0.1.0 session-wide form (on the old code it succeeded and the next client acted for end-user-1)
        try:
            first.execute("select ai.act_as('end-user-1', false)")
            refused = False
        except psycopg.Error as error:
            refused = error.sqlstate == "AS002"
        # whatever a client leaves on its server connections by hand, session-wide
        left: set[int] = set()
        for _ in range(8):
            row = first.execute(
                "select pg_catalog.pg_backend_pid(), pg_catalog.set_config('ai.acting_owner', 'end-user-1', false),"
                " pg_catalog.set_config('ai.acting_xact', (extract(epoch from transaction_timestamp()))::text, false)"
            ).fetchone()
            assert row is not None
            left.add(row[0])
        # the second client, on the server connections the first one left (the pooler hands them on)
        handed_on = 0
        for _ in range(40):
            row = second.execute(
                "select pg_catalog.pg_backend_pid(), pg_catalog.current_setting('ai.acting_owner', true),"
                " ai.current_owner(), ai.sees_all_owners()"
            ).fetchone()
            assert row is not None
            pid, setting, owner, sees_all = row
            if pid in left:
                handed_on += 1
                assert setting == "end-user-1", "the first client's setting is on this server connection"
            assert owner == SERVICE, f"the second client acts for {owner!r}"
            assert sees_all is True
        assert handed_on, "the pooler never handed the second client a server connection the first one used"
        assert refused, "ai.act_as(owner, false) must raise AS002"


def test_acting_as_through_the_pooler_acts_for_the_transaction_only(pooler_dsn: str, thread_id: str) -> None:
    with _connect(pooler_dsn) as conn:
        service = Client(conn)
        with service.acting_as("end-user-2") as as_user:
            assert as_user.create_session(thread_id).owner == "end-user-2"
        assert conn.execute("select ai.current_owner()").fetchone() == (SERVICE,)
        assert service.get_session(thread_id).owner == "end-user-2"  # the service sees every tenant again


def test_the_session_wide_form_is_an_invalid_argument(pooler_dsn: str) -> None:
    with _connect(pooler_dsn) as conn, pytest.raises(InvalidArgument):
        Client(conn)._fetch("select ai.act_as(%s, false)", ("end-user-3",))
