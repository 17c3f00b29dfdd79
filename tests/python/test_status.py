"""`agent-state status`: the schema against the package, pending upgrades, the workers alive, the
notification queue's fill, the oldest due job per queue and the transactions holding locks on the
schema longer than a lease (issue 21, "Operations"; docs/operations.md, "Watching a fleet")."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta

import psycopg
import pytest
from test_cli import run, run_json

from agent_state import Client
from agent_state.schema import bundle_version

pytestmark = pytest.mark.session_features  # an open transaction is a server session's


def test_status_reports_the_fleet(dsn: str, role_dsn: Callable[[str], str]) -> None:
    tag = uuid.uuid4().hex[:8]
    queue, thread, waiting = f"status-{tag}", f"status-{tag}", f"status-waits-{tag}"
    worker = f"status-worker-{tag}"
    with (
        psycopg.connect(role_dsn("tenant_a"), autocommit=True) as t,
        psycopg.connect(role_dsn("app_service"), application_name=f"status-holder-{tag}") as held,
    ):
        tenant, svc = Client(t), Client(held)
        tenant.create_session(thread)
        tenant.create_session(waiting)
        tenant.enqueue_job(thread, {}, queue=queue)
        tenant.enqueue_job(waiting, {}, queue=queue)
        job = svc.claim_job(worker, timedelta(minutes=5), queue)
        held.commit()
        assert job is not None
        held.execute("select 1")  # a transaction left open: the calls below join it and hold their locks
        svc.fenced_write(job.job_id, job.fencing_token)

        found = run_json("status", "--lease", "0", dsn=role_dsn("app_service"))
        assert found["deployed"] and found["compatible"] and found["pending"] == []
        assert found["package"] == bundle_version()
        assert run_json("status", dsn=dsn)["version"] == bundle_version()  # a role that reads sqitch's registry
        fleet = found["fleet"]
        assert worker in {w["worker"] for w in fleet["workers"]}
        assert 0.0 <= fleet["notification_queue_usage"] < 1.0
        assert queue in fleet["oldest_due_pending"]
        holders = [h for h in fleet["long_lock_holders"] if h["application_name"] == f"status-holder-{tag}"]
        assert holders and "ai.job_fences" in holders[0]["tables"]

        # --verbose: every worker, queue and holder (the screen's five may be other tests' in a
        # database that other tests use at the same time)
        text = run("status", "--lease", "0", "--verbose", dsn=role_dsn("app_service"))
        assert text.returncode == 0, text.stderr
        assert "pending upgrades: none" in text.stdout
        assert f"  {worker}: 1 job" in text.stdout
        assert "notification queue: " in text.stdout and "% full" in text.stdout
        assert "oldest due PENDING job per queue: " in text.stdout and queue in text.stdout
        assert f"status-holder-{tag}" in text.stdout
        held.rollback()

    # A tenant: no worker list (ai.list_workers is ai_service's), its own queues.
    mine = run_json("status", dsn=role_dsn("tenant_a"))
    assert mine["fleet"]["workers"] is None and queue in mine["fleet"]["oldest_due_pending"]
