"""Reads from a hot standby (issue 31 item 6): the read commands of ``agent-state`` and the console
in ``--read-only`` mode work on a standby's URL, since nothing they do writes; a write on the same
URL is refused (it is a standby indeed). The formation of `make test-ha` (scripts/ha.sh)."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid

import psycopg
import pytest
from formation import CONSOLE_PASSWORD, ROOT, healthy, node_url, primary_port, secondary_port, wait
from starlette.testclient import TestClient

from agent_state import Client

READS = [
    ["status"],
    ["status", "--json"],
    ["sessions"],
    ["sessions", "--json"],
    ["show", "{thread}"],
    ["lineage", "{thread}"],
    ["jobs", "--queue", "{queue}"],
    ["stats"],
    ["approvals"],
    ["memory", "ls"],
    ["memory", "ls", "users", "--items"],
    ["memory", "ls", "users", "--items", "--query", "standby"],
]


@pytest.fixture(scope="module")
def seeded() -> tuple[str, str, str]:
    """A thread with a message, a checkpoint and a job, written on the primary and replayed on a
    standby; (thread, queue, the standby's port)."""
    wait(healthy, 120, "a healthy formation")
    thread, queue = f"ro-{uuid.uuid4()}", f"ro-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(node_url(primary_port(), "tenant_a"), autocommit=True) as conn:
        client = Client(conn)
        client.create_session(thread)
        client.append_message(thread, "user", {"text": "read me from the standby"})
        client.put_checkpoint(thread, "", "0001", None, "json", b"{}", {"step": 1}, {}, [])
        client.enqueue_job(thread, {"n": 1}, queue)
    with psycopg.connect(node_url(primary_port(), "app_service"), autocommit=True) as conn:
        # a worker's claim, a tool call in the ledger and a person asked: every page has rows
        service = Client(conn)
        job = service.claim_job("ro-worker", queue=queue)
        assert job is not None
        service.begin_side_effect(thread, "ro-charge", {"amount": 1}, job.job_id, job.fencing_token)
        service.finish_side_effect(thread, "ro-charge", {"charged": 1}, job.job_id, job.fencing_token)
        service.request_human(job.job_id, job.fencing_token, "0001", {"send": "report"})
    standby = secondary_port()
    with psycopg.connect(node_url(standby), autocommit=True) as conn:
        wait(
            lambda: (
                conn.execute("select 1 from ai.agent_sessions where thread_id = %s", (thread,)).fetchone() is not None
            ),
            30,
            "the standby replayed the seed",
        )
        assert conn.execute("select pg_is_in_recovery()").fetchone() == (True,)
    return thread, queue, str(standby)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_state.cli", *args], capture_output=True, text=True, timeout=60, cwd=ROOT
    )


@pytest.mark.parametrize("role", ["tenant_a", "app_service"])
def test_the_read_commands_of_the_cli_work_on_a_hot_standby(seeded: tuple[str, str, str], role: str) -> None:
    thread, queue, standby = seeded
    url = node_url(int(standby), role)
    for command in READS:
        args = [a.format(thread=thread, queue=queue) for a in command]
        done = _cli("--database-url", url, *args)
        assert done.returncode == 0, f"agent-state {' '.join(args)} on the standby: {done.stderr.strip()}"
        if args[0] in ("show", "lineage", "sessions", "approvals") and role == "tenant_a":
            assert thread in done.stdout, f"agent-state {' '.join(args)} on the standby: {done.stdout}"
    # the URL is a standby's: a write is refused there
    with psycopg.connect(url, autocommit=True) as conn, pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        Client(conn).create_session(f"ro-write-{uuid.uuid4()}")


def test_the_read_only_console_works_on_a_hot_standby(seeded: tuple[str, str, str]) -> None:
    from agent_state.console import create_app

    thread, queue, standby = seeded
    with TestClient(create_app(node_url(int(standby)), read_only=True)) as browser:
        page = browser.get("/login")
        found = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert found is not None
        login = {"csrf": found.group(1), "user": "console_operator", "password": CONSOLE_PASSWORD}
        answer = browser.post("/login", data=login, follow_redirects=False)
        assert answer.status_code == 303, answer.text
        for path, expect in [
            ("/", thread),
            ("/runs", thread),
            (f"/runs/{thread}", "read me from the standby"),
            (f"/runs/{thread}", "ro-charge"),
            (f"/runs/{thread}/checkpoints/0001", "0001"),
            ("/approvals", thread),
            ("/queues", queue),
        ]:
            page = browser.get(path)
            assert page.status_code == 200, f"{path}: {page.status_code} {page.text[:300]}"
            assert expect in page.text, f"{path} shows {expect}"
            assert not re.search(r'class="error"', page.text), f"{path}: {page.text[:500]}"
        # LISTEN is refused during recovery: the live updates fall back to polling
        with browser.stream("GET", "/events") as events:
            first = next(events.iter_lines())
        assert first in ("event: poll", "event: listening"), first
