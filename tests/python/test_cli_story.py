"""`agent-state show` and `agent-state sessions` tell the story of a run (issue 32): the timeline
opens at the newest items and pages to older ones with a cursor (item 1), each attempt of a job is
a line (item 2: a lease that ran out, the worker that took over, the fence), and a session list
shows each thread's run status from its jobs (item 4)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

import psycopg
import pytest
from test_cli import assert_error, ids, run, run_json

from agent_state import Client, NewMessage


def test_show_opens_at_the_newest_items_and_pages_to_older_ones(dsn: str, role_dsn: Callable[[str], str]) -> None:
    thread = f"cli-long-{ids()}"
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        tenant = Client(conn)
        tenant.create_session(thread)
        for start in range(1, 1101, 275):
            tenant.append_messages(
                thread, [NewMessage("user", f"message number {i}") for i in range(start, start + 275)]
            )
    total = len(run_json("show", thread, "--limit", "10000", dsn=dsn))
    text = run("show", thread, dsn=dsn)
    assert text.returncode == 0, text.stderr
    shown = [int(n) for n in re.findall(r"message number (\d+)", text.stdout)]
    assert shown == list(range(1001, 1101)), "the newest hundred, oldest first, the newest last"
    assert f"items 1 to 100 of {total:,}, counted from the newest" in text.stdout
    older = re.search(r"^older: agent-state (show .*)$", text.stdout, re.M)
    assert older is not None, text.stdout
    second = run(*shlex.split(older.group(1)), dsn=dsn)  # the command line show printed
    assert second.returncode == 0, second.stderr
    assert [int(n) for n in re.findall(r"message number (\d+)", second.stdout)] == list(range(901, 1001))
    assert f"items 101 to 200 of {total:,}" in second.stdout
    assert_error(run("show", thread, "--before", "yesterday", dsn=dsn), 2, "--before")


@pytest.mark.session_features("the frozen clock, set for the session (through a pooler: another test's clock)")
def test_show_tells_each_attempt_of_a_crashed_and_resumed_job(dsn: str, role_dsn: Callable[[str], str]) -> None:
    thread, queue = f"cli-crash-{ids()}", f"cli-q-{ids()}"
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        conn.execute("select ai.create_session(%s)", (thread,))
        [(job,)] = conn.execute(
            "select job_id from ai.enqueue_job(%s, '{}', %s, max_attempts => 5)", (thread, queue)
        ).fetchall()
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as conn:
        conn.execute("select set_config('ai.frozen_now', '2031-01-01 00:00:00+00', false)")
        [(token1,)] = conn.execute("select fencing_token from ai.claim_job('worker-one', '30 seconds', %s)", (queue,))
        conn.execute("select set_config('ai.frozen_now', '2031-01-01 00:05:00+00', false)")
        [(token2,)] = conn.execute("select fencing_token from ai.claim_job('worker-two', '30 seconds', %s)", (queue,))
        conn.execute("select ai.complete_job(%s, %s)", (job, token2))
    text = run("show", thread, dsn=dsn)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    [head] = [line for line in lines if line.startswith(f"job {job} ")]
    assert "COMPLETED" in head and "attempts 2/5" in head
    [one] = [line for line in lines if "claim 1" in line]
    [two] = [line for line in lines if "claim 2" in line]
    assert "attempt 1 of 5" in one and "worker-one" in one and "lease expired at 2031-01-01 00:00:30 UTC" in one
    assert "taken over by worker-two" in one and "fence refuses worker-one's writes" in one
    assert "attempt 2 of 5" in two and "worker-two" in two and "completed" in two
    assert token1 < token2


def test_sessions_show_each_threads_run_status(dsn: str, role_dsn: Callable[[str], str]) -> None:
    done, idle, queue = f"cli-run-{ids()}", f"cli-idle-{ids()}", f"cli-q-{ids()}"
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        conn.execute("select ai.create_session(%s), ai.create_session(%s)", (done, idle))
        [(job,)] = conn.execute("select job_id from ai.enqueue_job(%s, '{}', %s)", (done, queue)).fetchall()
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as conn:
        [(token,)] = conn.execute("select fencing_token from ai.claim_job('w', '1 minute', %s)", (queue,)).fetchall()
        conn.execute("select ai.complete_job(%s, %s)", (job, token))
    text = run("sessions", "--owner", "tenant_a", "--limit", "10000", dsn=dsn)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0].split()[:4] == ["THREAD", "OWNER", "RUN", "SESSION"]
    [line] = [line for line in text.stdout.splitlines() if line.startswith(done)]
    assert line.split()[2:4] == ["completed", "active"]  # the run finished; the session was left active
    [line] = [line for line in text.stdout.splitlines() if line.startswith(idle)]
    assert line.split()[2] == "-"
    listed = {s["thread_id"]: s for s in run_json("sessions", "--owner", "tenant_a", "--limit", "10000", dsn=dsn)}
    assert listed[done]["run_status"] == "completed" and listed[idle]["run_status"] is None
