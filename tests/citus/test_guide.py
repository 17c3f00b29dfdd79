"""docs/scaling.md, "What runs where" and "Limits", as the formation runs it: which workers a call
reaches, read from the commands the coordinator sends (citus.log_remote_commands)."""

from __future__ import annotations

import re

from formation import WORKER_PORTS, connect, thread, worker_of
from psycopg.types.json import Jsonb


def reached(role: str, query: str, params: tuple[object, ...] = ()) -> tuple[set[int], list[str]]:
    """The worker ports one call sends commands to, and the commands."""
    with connect(role) as conn:
        conn.execute("set citus.log_remote_commands = on")
        conn.execute("set client_min_messages = log")
        sent: list[tuple[str, str]] = []
        conn.add_notice_handler(lambda d: sent.append((d.message_primary or "", d.message_detail or "")))
        conn.execute(query, params)
    commands = [(c, d) for c, d in sent if c.startswith("issuing")]
    ports = {int(m.group(1)) for _, d in commands if (m := re.search(r"127\.0\.0\.1:(\d+)", d))}
    return ports, [c for c, _ in commands]


def test_a_threads_calls_reach_only_the_worker_that_holds_it() -> None:
    t = thread("guide")
    with connect("tenant_a") as conn:
        conn.execute("select ai.create_session(%s)", (t,))
    holder = worker_of(t)
    calls = [
        ("select ai.append_messages(%s, %s)", (t, Jsonb([{"role": "user", "content": "hi"}]))),
        ("select ai.record_event(%s, 'step', '{}')", (t,)),
        ("select ai.put_checkpoint(%s, '', 'c1', null, 'json', %s)", (t, b"{}")),
        ("select ai.get_session(%s)", (t,)),
        ("select count(*) from ai.get_messages(%s)", (t,)),
        ("select count(*) from ai.get_checkpoint(%s)", (t,)),
    ]
    for query, params in calls:
        ports, commands = reached("tenant_a", query, params)
        assert ports == {holder}, (query, ports, commands[:3])


def test_get_approval_by_its_id_alone_asks_every_shard() -> None:
    """The approval's key on a formation is (thread_id, approval_id): by the id alone it is looked up
    on every shard of ai.human_approvals (a limit of docs/scaling.md)."""
    t = thread("guide-approval")
    with connect("tenant_a") as conn:
        conn.execute("select ai.create_session(%s)", (t,))
        job = conn.execute("select (ai.enqueue_job(%s, '{}', %s)).job_id", (t, t)).fetchone()
    assert job is not None
    with connect("app_service") as conn:
        claimed = conn.execute("select fencing_token from ai.claim_job('guide', '1 minute', %s)", (t,)).fetchone()
        assert claimed is not None
        approval = conn.execute("select ai.request_human(%s, %s, 'cp-1')", (job[0], claimed[0])).fetchone()
    assert approval is not None
    ports, commands = reached("tenant_a", "select status from ai.get_approval(%s)", (approval[0],))
    assert ports == set(WORKER_PORTS)
    with connect("postgres") as conn:
        shards = conn.execute(
            "select count(*) from pg_dist_shard where logicalrelid = 'ai.human_approvals'::regclass"
        ).fetchone()
    asked = {m for c in commands for m in re.findall(r"human_approvals_(\d+)", c)}
    assert shards is not None and len(asked) == shards[0]


def test_a_tenants_session_listing_asks_every_worker() -> None:
    with connect("tenant_a") as conn:
        conn.execute("select ai.create_session(%s)", (thread("guide-list"),))
    ports, _ = reached("tenant_a", "select count(*) from ai.list_sessions()")
    assert ports == set(WORKER_PORTS)
