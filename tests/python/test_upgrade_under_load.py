"""An upgrade under a live fleet is bounded (issue 21, defect 2; docs/operations.md, "Upgrading").

The tagged release is deployed, workers of that release claim jobs, append and complete, and one
of them holds a fenced transaction open (it has written to ai.agent_jobs, ai.agent_sessions,
ai.session_messages and ai.job_fences and not committed). HEAD then deploys over it with
scripts/sqitch.sh, the documented way, under a lock_timeout. A script that must lock a hot table
(trigger DDL) would queue behind the open transaction, and every worker's call would queue behind
the script: what bounds that queue is the lock_timeout, so the promise checked is a logical one:
no worker's call is seen waiting for a lock (pg_stat_activity, wait_event_type = 'Lock') longer
than the deploy's lock_timeout plus a slack, and the deploy either completes or fails cleanly
(lock timeout named, nothing half-done) and completes when run again after the transaction ends.
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
import uuid
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from catalog import DEPLOY_USER, ROOT, env_for, owner_databases, sqitch
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from sql_objects import read_plan
from waiting import wait_until

from agent_state import Client

LOCK_TIMEOUT_S = 1
#: What a sampled wait may exceed the lock_timeout by: the time between two samples and the
#: deploy script's own statements before the lock it waits for. Far below the open transaction's
#: hold (HOLD_S), which is what a worker waited without a bound.
SLACK_S = 2.5
HOLD_S = 8.0


def _dsn(server: str, dbname: str, user: str) -> str:
    params: dict[str, Any] = conninfo_to_dict(server)
    params.update(dbname=dbname, user=user)
    return make_conninfo(**params)


def _tag() -> str:
    tags = [e.tag for e in read_plan((ROOT / "sqitch.plan").read_text()) if e.tag is not None]
    if not tags:
        pytest.skip("sqitch.plan has no release tag")
    return tags[-1]


# A trigger of the release that HEAD defines otherwise: the deploy must replace it, so it must lock
# ai.agent_sessions, which the open transaction has written to.
CHANGED_TRIGGER = (
    "create or replace trigger agent_sessions_status_transition after update of status on ai.agent_sessions"
    " for each row when (old.status is distinct from new.status and new.thread_id is not null)"
    " execute function ai._guard_session_status()"
)


@pytest.mark.session_features
@pytest.mark.parametrize("trigger", ["unchanged", "changed"])
def test_a_deploy_under_a_live_fleet_never_parks_a_worker_longer_than_its_lock_timeout(
    direct_dsn: str, trigger: str, deployed_templates: Any
) -> None:
    """Unchanged triggers: the functions changes take no table lock (a table change of the release
    that indexes a table the open transaction wrote may wait for it, bounded). A changed trigger:
    the deploy waits for its lock at most the lock_timeout each try, the
    workers behind it no longer, and it completes once the transaction has ended."""
    tag = _tag()
    with owner_databases(direct_dsn, "agent_state_live_upgrade") as make:
        name = make(deployed_templates(tag))  # a copy of the release, deployed once per run
        env = dict(env_for(direct_dsn, name), PGUSER=DEPLOY_USER)
        if trigger == "changed":
            with psycopg.connect(_dsn(direct_dsn, name, DEPLOY_USER), autocommit=True) as owner:
                owner.execute(CHANGED_TRIGGER)
        tenant_dsn, service_dsn = _dsn(direct_dsn, name, "tenant_a"), _dsn(direct_dsn, name, "app_service")
        queue = f"live-{uuid.uuid4().hex[:6]}"
        stop = threading.Event()
        errors: list[BaseException] = []
        done = [0]
        waits: list[float] = []  # seconds a worker's call was seen waiting for a lock

        def worker(k: int) -> None:
            try:
                with (
                    psycopg.connect(tenant_dsn, autocommit=True, application_name="live-tenant") as t,
                    psycopg.connect(service_dsn, autocommit=True, application_name="live-worker") as s,
                ):
                    tenant, svc = Client(t), Client(s)
                    while not stop.is_set():
                        thread = f"live-{k}-{uuid.uuid4().hex[:8]}"
                        tenant.create_session(thread)
                        tenant.enqueue_job(thread, {"k": k}, queue=queue)
                        job = svc.claim_job(f"w{k}", timedelta(minutes=5), queue)
                        if job is None:
                            continue
                        svc.append_message(job.thread_id, "assistant", {"n": done[0]})
                        svc.complete_job(job.job_id, job.fencing_token, None)
                        done[0] += 1
            except BaseException as e:
                errors.append(e)

        def sampler() -> None:
            with psycopg.connect(_dsn(direct_dsn, name, "postgres"), autocommit=True) as admin:
                while not stop.is_set():
                    row = admin.execute(
                        "select coalesce(max(extract(epoch from clock_timestamp() - state_change)), 0)::float8"
                        " from pg_stat_activity where datname = current_database()"
                        " and application_name in ('live-tenant', 'live-worker') and wait_event_type = 'Lock'"
                    ).fetchone()
                    waits.append(row[0] if row else 0.0)
                    time.sleep(0.05)

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
        threads.append(threading.Thread(target=sampler))
        for th in threads:
            th.start()
        try:
            wait_until(lambda: done[0] >= 5 or errors, "the workers of the release to complete jobs")
            # One worker of the release inside a fenced transaction that it has not committed.
            with (
                psycopg.connect(tenant_dsn, autocommit=True) as t,
                psycopg.connect(service_dsn, application_name="live-holder") as holder,
            ):
                held = f"held-{uuid.uuid4().hex[:8]}"
                Client(t).create_session(held)
                Client(t).enqueue_job(held, None, queue=f"{queue}-held")
                svc = Client(holder)
                job = svc.claim_job("holder", timedelta(minutes=5), f"{queue}-held")
                holder.commit()
                assert job is not None
                holder.execute("select 1")  # a transaction of the caller's: the calls below join it
                svc.fenced_write(job.job_id, job.fencing_token)
                svc.append_message(held, "assistant", "inside the fenced transaction")
                svc.renew_lease(job.job_id, job.fencing_token)  # a row of ai.agent_jobs written
                assert holder.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
                url = _dsn(direct_dsn, name, DEPLOY_USER)
                started = time.monotonic()
                first = subprocess.Popen(
                    ["scripts/sqitch.sh", url, "--quiet", "deploy", "--verify"],
                    cwd=ROOT,
                    env=dict(env, AGENT_STATE_LOCK_TIMEOUT=f"{LOCK_TIMEOUT_S}s", AGENT_STATE_DEPLOY_RETRIES="2"),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                )
                # The transaction stays open for HOLD_S or until the deploy ends, whichever is first.
                while first.poll() is None and time.monotonic() - started < HOLD_S:
                    time.sleep(0.05)
                holder.commit()
                out, _ = first.communicate(timeout=120)
            ended = first.returncode
            worst = max(waits, default=0.0)
            assert not errors, f"a worker failed during the deploy (longest lock wait {worst:.1f} s): {errors}"
            assert worst <= LOCK_TIMEOUT_S + SLACK_S, (
                f"a worker waited {worst:.1f} s for a lock during the deploy (lock_timeout {LOCK_TIMEOUT_S} s)\n{out}"
            )
            if trigger == "unchanged":
                # A functions change over unchanged triggers takes no table lock. A table change of
                # this release (an index of ai.agent_jobs, which the open transaction wrote) must
                # wait for that transaction: it may time out, cleanly, and the rerun completes.
                stopped = set(
                    re.findall(
                        r"psql:deploy/([a-z_0-9]+)\.sql:\d+: ERROR:  canceling statement due to lock timeout", out
                    )
                )
                functions_only = {c for c in stopped if c.endswith("_functions") or c in ("clock", "owners")}
                assert ended == 0 or (stopped and not functions_only), (
                    f"a functions change needed a lock the open transaction held:\n{out}"
                )
            elif ended != 0:  # failed cleanly: a lock timeout, and a second run completes
                assert "lock timeout" in out, out
            again = subprocess.run(
                ["scripts/sqitch.sh", url, "--quiet", "deploy", "--verify"],
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            assert again.returncode == 0, again.stdout + again.stderr
            status = sqitch(["status"], env, ROOT)
            assert "Nothing to deploy (up-to-date)" in status, status
            assert done[0] > 5
        finally:
            stop.set()
            for th in threads:
                th.join(timeout=30)


def test_every_trigger_a_functions_change_guards_is_written_as_pg_get_triggerdef_prints_it(direct_dsn: str) -> None:
    """The `do` blocks of the `_functions` scripts replace a trigger only when its definition in
    the catalog differs from the text written there: that text must be what pg_get_triggerdef
    prints for the trigger the block creates, or every deploy would replace (and lock) it."""
    wanted: set[str] = set()
    for path in sorted((ROOT / "deploy").glob("*_functions.sql")):
        wanted |= set(re.findall(r"\$t\$(CREATE (?:CONSTRAINT )?TRIGGER .*?)\$t\$", path.read_text()))
    assert len(wanted) >= 6  # the triggers of sessions, messages, queue, checkpoints, ... (the regex finds them)
    with psycopg.connect(direct_dsn, autocommit=True) as conn:
        found = {
            d
            for (d,) in conn.execute(
                "select pg_catalog.pg_get_triggerdef(t.oid) from pg_catalog.pg_trigger t"
                " join pg_catalog.pg_class c on c.oid = t.tgrelid"
                " where not t.tgisinternal and c.relnamespace = 'ai'::regnamespace"
            )
        }
    assert wanted <= found, sorted(wanted - found)
