"""The CLI finishes an operator's work (issue 32, item 9): `retry`, `cancel` and `release` (the
console's job actions) with --json and exit codes; a reader that stops early (`| head`) ends the
command quietly; text written by agents is printed with terminal control sequences escaped; a
bare `agent-state` prints its usage; `status` fits one screen. Subprocess runs of the real CLI."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable
from datetime import timedelta

import psycopg
import pytest
from test_cli import AGENT_STATE, assert_error, run, run_json

from agent_state import Client, Job, NewMessage


def _tag() -> str:
    return uuid.uuid4().hex[:8]


def _job(role_dsn: Callable[[str], str], queue: str) -> Job:
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as t:
        tenant = Client(t)
        thread = f"cli-op-{_tag()}"
        tenant.create_session(thread)
        return tenant.enqueue_job(thread, {}, queue=queue)


def _claimed(role_dsn: Callable[[str], str], queue: str, lease: timedelta = timedelta(minutes=5)) -> Job:
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as s:
        job = Client(s).claim_job(f"op-worker-{_tag()}", lease, queue)
    assert job is not None
    return job


def _status(dsn: str, job_id: int) -> str:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("select status from ai.agent_jobs where job_id = %s", (job_id,)).fetchone()
    assert row is not None
    return str(row[0])


def test_cancel_release_and_retry_act_on_jobs(dsn: str, role_dsn: Callable[[str], str]) -> None:
    service = role_dsn("app_service")
    queue = f"cli-op-{_tag()}"
    running = _job(role_dsn, queue)
    _claimed(role_dsn, queue)

    released = run_json("release", str(running.job_id), dsn=service)
    assert released == [{"job_id": running.job_id, "done": True, "status": "PENDING", "error": None}]
    assert _status(dsn, running.job_id) == "PENDING"

    # nothing to release now: exit 1, one line, nothing changed
    again = run("release", str(running.job_id), dsn=service)
    assert again.returncode == 1 and "Traceback" not in again.stderr, again.stderr
    assert f"job {running.job_id}" in again.stderr and again.stdout == ""

    done = run("cancel", str(running.job_id), dsn=service)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"cancelled job {running.job_id}: now CANCELLED (was PENDING)"
    assert _status(dsn, running.job_id) == "CANCELLED"
    assert run("cancel", str(running.job_id), dsn=service).returncode == 1  # already finished

    # retry: only FAILED jobs; a CANCELLED one is refused (exit 1), a FAILED one is PENDING again
    assert run("retry", str(running.job_id), dsn=service).returncode == 1
    failed = _job(role_dsn, queue)
    claimed = _claimed(role_dsn, queue)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("update ai.agent_jobs set max_attempts = 1 where job_id = %s", (claimed.job_id,))
    with psycopg.connect(service, autocommit=True) as s:
        Client(s).fail_job(claimed.job_id, claimed.fencing_token, "boom")  # its last attempt: FAILED
    assert _status(dsn, failed.job_id) == "FAILED"
    retried = run_json("retry", str(failed.job_id), dsn=service)
    assert retried[0]["done"] and retried[0]["status"] == "PENDING"

    # several at once: each its line; an unknown job is an error (exit 2) and the others still act
    other = _job(role_dsn, queue)
    mixed = run("cancel", str(other.job_id), "999999999999", dsn=service)
    assert mixed.returncode == 2
    assert f"cancelled job {other.job_id}" in mixed.stdout
    assert "job 999999999999 not found" in mixed.stderr
    # a tenant may cancel its own job; it may not retry (ai_service's)
    mine = _job(role_dsn, queue)
    assert run("cancel", str(mine.job_id), dsn=role_dsn("tenant_a")).returncode == 0
    assert run("retry", str(failed.job_id), dsn=role_dsn("tenant_a")).returncode == 2


def test_a_reader_that_stops_early_ends_the_command_quietly(role_dsn: Callable[[str], str]) -> None:
    service = role_dsn("app_service")
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as t:
        tenant = Client(t)
        thread = f"cli-pipe-{_tag()}"
        tenant.create_session(thread)
        tenant.append_messages(thread, [NewMessage("user", "x" * 200) for _ in range(800)])
    env_dsn = {"DATABASE_URL": service}
    for args in (["show", thread, "--width", "300"], ["show", thread, "--json"]):
        process = subprocess.Popen(
            [AGENT_STATE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(env_dsn)
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.readline()
        process.stdout.close()  # `| head -1`: the reader goes, more than a pipe's buffer is left
        err = process.stderr.read()
        assert process.wait(timeout=60) == 0, err
        assert err == b"", err


def _env(extra: dict[str, str]) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(extra)
    return env


HOSTILE = "title\x1b]0;pwned\x07 clear\x1b[2J bell\x07 csi\x9b31m end"


def test_text_written_by_agents_is_printed_with_control_sequences_escaped(role_dsn: Callable[[str], str]) -> None:
    service = role_dsn("app_service")
    thread = f"cli-esc-{_tag()}"
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as t:
        tenant = Client(t)
        tenant.create_session(thread, config={"title": HOSTILE})
        tenant.append_messages(thread, [NewMessage("assistant", HOSTILE + "\nsecond line\ttab")])
        job = tenant.enqueue_job(thread, {"x": HOSTILE}, queue=f"q-{_tag()}")
    claimed = _claimed(role_dsn, job.queue)
    with psycopg.connect(service, autocommit=True) as s:
        Client(s).fail_job(claimed.job_id, claimed.fencing_token, HOSTILE, retry_in=timedelta(hours=1))
    for args in (["show", thread, "--width", "500"], ["jobs", "--thread", thread], ["approvals"], ["sessions"]):
        out = run(*args, dsn=service)
        assert out.returncode == 0, out.stderr
        assert "\x1b" not in out.stdout and "\x07" not in out.stdout and "\x9b" not in out.stdout, args
        if args[0] in ("show", "jobs"):  # the message, the job's last error
            assert "\\x1b]0;pwned\\x07" in out.stdout or "\\x1b[2J" in out.stdout, (args, out.stdout[-500:])
    # an error naming agent-written text is escaped too
    err = run("show", thread + "-nope\x1b[2J", dsn=service)
    assert err.returncode == 2 and "\x1b" not in err.stderr and "\\x1b[2J" in err.stderr
    # JSON escapes every control character, C1 included, and reads back the same text
    out = run("show", thread, "--json", dsn=service)
    assert "\x1b" not in out.stdout and "\x9b" not in out.stdout and "\x07" not in out.stdout
    contents = [r["detail"].get("content") for r in json.loads(out.stdout) if r["item"] == "message"]
    assert HOSTILE + "\nsecond line\ttab" in contents


def test_a_bare_command_prints_its_usage() -> None:
    done = subprocess.run([AGENT_STATE], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("usage: agent-state")
    assert "workers" in done.stderr and "retry" in done.stderr and "Traceback" not in done.stderr


def test_status_fits_one_screen(dsn: str) -> None:
    text = run("status", dsn=dsn)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert len(lines) <= 24, text.stdout
    assert "queue_functions" not in text.stdout.split("\n", 1)[1]  # the changes are not listed
    verbose = run("status", "--verbose", dsn=dsn)
    assert "  queue_functions" in verbose.stdout.splitlines()


@pytest.mark.parametrize("command", ["retry", "cancel", "release"])
def test_an_action_without_a_job_is_a_usage_error(command: str) -> None:
    done = run(command)
    assert_error(done, 2, "the following arguments are required")
