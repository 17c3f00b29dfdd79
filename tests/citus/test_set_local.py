"""A SET LOCAL of the caller's own, after a call that carried its identity to the shards, stays on
the caller's node (deploy/distribution.sql, ai._formation_caller): the carry propagates its own
SET LOCAL only. Before, `set local role tenant_b` after tenant_a's call in one transaction went to
the workers' connections (the schema owner's) and failed there (42501, "failure on connection
marked as essential"): the pattern of most pgTAP fixtures (tests/pgtap/fixtures/two_tenants.sql).
"""

from __future__ import annotations

from formation import connect
from formation import thread as thread_id


def test_set_local_role_to_another_tenant_after_a_carried_call() -> None:
    a, b = thread_id("setlocal-a"), thread_id("setlocal-b")
    with connect("postgres") as conn, conn.transaction(force_rollback=True):
        conn.execute("set local role tenant_a")
        conn.execute("select ai.create_session(%s)", (a,))
        conn.execute("set local role tenant_b")
        conn.execute("select ai.create_session(%s)", (b,))
        assert conn.execute("select (ai.get_session(%s)).owner", (b,)).fetchone() == ("tenant_b",)
        conn.execute("set local role tenant_a")
        assert conn.execute("select (ai.get_session(%s)).owner", (a,)).fetchone() == ("tenant_a",)
        rows = conn.execute(
            'select count(*) from ai.append_messages(%s, \'[{"role": "user", "content": "hi"}]\')', (a,)
        ).fetchone()
        assert rows == (1,)
