"""Moving a single-node database onto a formation (docs/scaling.md, "Moving a single-node database
onto a formation"): the guide's steps, run as written.

The closest honest reproduction on the test formation: a second database, ``agent_state_move``, on
the formation's nodes. On the coordinator it is deployed (``psql -f sql/ai.sql`` as the
non-superuser owner) and filled by tenants before the citus extension exists in it, as a single
server's database is (the server already loads the citus library, as it does after the guide's
first step); then the guide's steps make it a coordinator with the two workers, ``ai.distribute()``
copies the rows to the shards, and the coordinator's local copies are truncated. What this does not
reproduce: the workers' clusters already hold the owner and tenant roles (roles are cluster-wide,
and the formation's own database made them); a fresh worker gets them from ``citus_add_node``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from formation import OWNER, PORT, WORKER_PORTS
from psycopg.types.json import Jsonb

ROOT = Path(__file__).resolve().parents[2]
DB = "agent_state_move"
TENANTS = ("tenant_a", "tenant_b")


def url(user: str, port: int = PORT, db: str = DB) -> str:
    return f"postgresql://{user}@127.0.0.1:{port}/{db}?connect_timeout=5"


def connect(user: str, port: int = PORT) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(url(user, port), autocommit=True)


def superuser(port: int, db: str = DB) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(url("postgres", port, db), autocommit=True)


def drop_everywhere() -> None:
    for port in [PORT, *WORKER_PORTS]:
        with superuser(port, "postgres") as conn:
            conn.execute(f"drop database if exists {DB} with (force)")


def row_counts() -> dict[str, int]:
    """Every table of ai and ai_archive with its rows, as the superuser sees them (on the
    coordinator: after the move, the shards' rows)."""
    with superuser(PORT) as conn:
        tables = [
            str(t)
            for (t,) in conn.execute(
                "select c.oid::regclass::text from pg_class c"
                " where c.relnamespace in ('ai'::regnamespace, 'ai_archive'::regnamespace) and c.relkind = 'r'"
                " order by 1"
            ).fetchall()
        ]
        counts = {}
        for table in tables:
            row = conn.execute(f"select count(*) from {table}").fetchone()  # names from the catalog
            assert row is not None
            counts[table] = int(str(row[0]))
    return counts


def fill(tenant: str) -> dict[str, object]:
    """A tenant's thread with what a run leaves: the session, messages, an event, a checkpoint, a
    job, a memory item. Returns the ids to read back."""
    thread = f"move-{tenant}"
    with connect(tenant) as conn:
        conn.execute("select ai.create_session(%s)", (thread,))
        conn.execute(
            "select ai.append_messages(%s, %s)",
            (thread, Jsonb([{"role": "user", "content": f"hi from {tenant}"}, {"role": "assistant", "content": "hi"}])),
        )
        conn.execute("select ai.record_event(%s, 'moved', %s)", (thread, Jsonb({"by": tenant})))
        conn.execute("select ai.put_checkpoint(%s, '', 'c1', null, 'json', %s)", (thread, b"{}"))
        job = conn.execute("select (ai.enqueue_job(%s, %s)).job_id", (thread, Jsonb({"n": 1}))).fetchone()
        conn.execute("select ai.put_memory(array['prefs'], 'colour', %s)", (Jsonb({"v": tenant}),))
    assert job is not None
    return {"thread": thread, "job": job[0]}


def read_back(tenant: str, thread: str, job: object) -> dict[str, object]:
    with connect(tenant) as conn:
        return {
            "owner": conn.execute("select owner from ai.get_session(%s)", (thread,)).fetchone(),
            "messages": conn.execute("select seq, content from ai.get_messages(%s)", (thread,)).fetchall(),
            "checkpoint": conn.execute("select checkpoint_id, type from ai.get_checkpoint(%s)", (thread,)).fetchall(),
            "job": conn.execute("select thread_id, status from ai.get_job(%s)", (job,)).fetchone(),
            "memory": conn.execute("select value from ai.get_memory(array['prefs'], 'colour')").fetchone(),
        }


@pytest.fixture
def single_node() -> Iterator[dict[str, dict[str, object]]]:
    """agent_state_move deployed and filled on the coordinator's server, no citus extension in it."""
    drop_everywhere()
    with superuser(PORT, "postgres") as conn:
        conn.execute(f"create database {DB} owner {OWNER}")
    subprocess.run(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url(OWNER), "-f", str(ROOT / "sql/ai.sql")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    try:
        yield {tenant: fill(tenant) for tenant in TENANTS}
    finally:
        drop_everywhere()


def become_a_coordinator() -> None:
    """The guide's steps as a superuser: the database and the extension on every worker, the
    extension on the server, which becomes the coordinator and adds the workers."""
    for port in WORKER_PORTS:
        with superuser(port, "postgres") as conn:
            conn.execute(f"create database {DB}")
        with superuser(port) as conn:
            conn.execute("create extension citus")
    with superuser(PORT) as conn:
        conn.execute("create extension citus")
        conn.execute("select citus_set_coordinator_host('127.0.0.1', %s)", (PORT,))
        for port in WORKER_PORTS:
            conn.execute("select citus_add_node('127.0.0.1', %s)", (port,))
        owners = conn.execute(
            "select result from run_command_on_workers("
            "$$select count(*) from pg_roles where rolname = 'agent_state_owner'$$)"
        ).fetchall()
    assert owners == [("1",)] * len(WORKER_PORTS), "the owner role is on every worker"


def test_a_single_node_database_moves_onto_the_formation_with_every_row_and_its_tenancy(
    single_node: dict[str, dict[str, object]],
) -> None:
    before = row_counts()
    assert before["ai.agent_sessions"] == len(TENANTS) and before["ai.memory_items"] == len(TENANTS)
    reads = {t: read_back(t, str(ids["thread"]), ids["job"]) for t, ids in single_node.items()}

    become_a_coordinator()
    with connect(OWNER) as owner:
        done = owner.execute("select ai.distribute()").fetchone()
    assert done is not None
    steps = str(done[0]).splitlines()
    assert "ai.agent_sessions: distributed by thread_id" in steps
    assert "ai.memory_items: distributed by owner" in steps
    assert any(s.endswith("functions made on every node") for s in steps), steps
    # the run that copied the rows cannot delegate the per-thread writes (Citus cancels that in the
    # same transaction): the guide runs it again, until it has nothing to do
    assert any(s.startswith("the per-thread writes are not delegated yet") for s in steps), steps
    with connect(OWNER) as owner:
        again = owner.execute("select ai.distribute()").fetchone()
        assert again is not None
        delegated = [
            s
            for s in str(again[0]).splitlines()
            if ": delegated to the worker that holds the thread (ai._delegated_" in s
        ]
        assert any(s.startswith("ai.put_checkpoint(") for s in delegated), again
        assert owner.execute("select ai.distribute()").fetchone() == ("distributed already: nothing to do",)

    # every row is there, on the shards, and each tenant reads what it read on one server (and the
    # formation's secret, which ai.distribute() made)
    before["ai.formation_secret"] += 1
    assert row_counts() == before
    with superuser(PORT) as conn:
        on_shards = conn.execute(
            "select count(distinct nodeport) from citus_shards where table_name = 'ai.session_messages'::regclass"
        ).fetchone()
    assert on_shards == (len(WORKER_PORTS),)
    for tenant, ids in single_node.items():
        assert read_back(tenant, str(ids["thread"]), ids["job"]) == reads[tenant]
    assert reads["tenant_a"]["owner"] == ("tenant_a",)
    assert reads["tenant_a"]["memory"] == ({"v": "tenant_a"},)

    # and only its own: the other tenant's thread is not found (AS001), its memory not seen
    with connect("tenant_b") as conn:
        thread_a = str(single_node["tenant_a"]["thread"])
        for call in ("select ai.get_session(%s)", "select count(*) from ai.get_messages(%s)"):
            with pytest.raises(psycopg.Error) as exc:
                conn.execute(call, (thread_a,))
            assert exc.value.sqlstate == "AS001"
        with pytest.raises(psycopg.Error) as exc:
            conn.execute("select ai.get_job(%s)", (single_node["tenant_a"]["job"],))
        assert exc.value.sqlstate is not None

    # the coordinator's local copies, out of sight since the copy, are truncated as the guide says
    with connect(OWNER) as owner:
        owner.execute(
            "select truncate_local_data_after_distributing_table(logicalrelid) from pg_dist_partition"
            " where logicalrelid::regclass::text ~ '^(ai|ai_archive)\\.'"
        )
    with superuser(PORT) as conn:
        left = conn.execute(
            "select logicalrelid::regclass::text from pg_dist_partition"
            " where logicalrelid::regclass::text ~ '^(ai|ai_archive)\\.' and pg_relation_size(logicalrelid) > 0"
        ).fetchall()
    assert left == []
    assert row_counts() == before
    for tenant, ids in single_node.items():
        assert read_back(tenant, str(ids["thread"]), ids["job"]) == reads[tenant]

    # the moved jobs are claimed from the coordinator's queue and completed
    with connect("app_service") as conn:
        for _ in TENANTS:
            claimed = conn.execute("select job_id, fencing_token from ai.claim_job('mover', '1 minute')").fetchone()
            assert claimed is not None
            conn.execute("select ai.complete_job(%s, %s, '{}')", claimed)
    with connect("tenant_a") as conn:
        job = conn.execute("select status from ai.get_job(%s)", (single_node["tenant_a"]["job"],)).fetchone()
    assert job == ("COMPLETED",)

    # and the moved thread takes new writes
    with connect("tenant_a") as conn:
        conn.execute(
            "select ai.append_messages(%s, %s)",
            (single_node["tenant_a"]["thread"], Jsonb([{"role": "user", "content": "after the move"}])),
        )
        seqs = conn.execute("select seq from ai.get_messages(%s)", (single_node["tenant_a"]["thread"],)).fetchall()
    assert seqs == [(1,), (2,), (3,)]
