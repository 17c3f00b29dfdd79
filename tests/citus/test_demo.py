"""`DATABASE_URL=<coordinator URL> make demo` on a formation (issue 40, item 1): the Makefile deploys
with sqitch, distributes (`agent-state deploy` runs ai.distribute() on a coordinator), and runs the
demo, whose threads are then on the workers' shards.

The database is one of its own on the formation (citus on every node, the workers added), as a
user makes one; the URL is the superuser's, as the README's `DATABASE_URL=... make demo` has it
(the deploy then runs as the owner role, scripts/sqitch.sh --as-owner).
"""

from __future__ import annotations

import os
import re
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from formation import WORKER_PORTS, database_url, drop_database, make_database, shard_rows

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo_run() -> Iterator[tuple[str, subprocess.CompletedProcess[str]]]:
    name = f"demo_{uuid.uuid4().hex[:8]}"
    make_database(name)
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "MAKE", "MFLAGS"))}
        env["DATABASE_URL"] = database_url("postgres", name)
        done = subprocess.run(
            ["make", "--no-print-directory", "demo"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        yield name, done
    finally:
        drop_database(name)


def _output(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout[-6000:] + done.stderr[-3000:]


def test_make_demo_deploys_distributes_and_puts_the_demos_thread_on_a_shard(
    demo_run: tuple[str, subprocess.CompletedProcess[str]],
) -> None:
    name, done = demo_run
    out = done.stdout + done.stderr
    assert "distributed schema ai on the Citus formation" in out, _output(done)
    found = re.search(r"job \d+ on thread (\S+) ", done.stdout)
    assert found, _output(done)
    thread = found.group(1)
    port, rows = shard_rows(name, "ai.agent_sessions", thread)
    assert rows == 1 and port in WORKER_PORTS
    with psycopg.connect(database_url("postgres", name), autocommit=True) as conn:
        nodes = conn.execute(
            "select array_agg(distinct nodeport order by nodeport) from citus_shards"
            " where table_name = 'ai.agent_sessions'::regclass"
        ).fetchone()
    assert nodes == (WORKER_PORTS,), "every shard of ai.agent_sessions is on a worker, none on the coordinator"


@pytest.mark.xfail(
    reason="the resumed node's append of the message it had appended before the crash (same idempotency key)"
    " fails on the shard: 'consistency check on SPI tuple count failed' (cstep: append; the crash, the takeover"
    " and the email sent once hold, main 30f12c0). Strict: remove the mark when the append retry works there",
    strict=True,
)
def test_make_demo_crashes_resumes_and_keeps_every_promise_on_a_formation(
    demo_run: tuple[str, subprocess.CompletedProcess[str]],
) -> None:
    name, done = demo_run
    assert done.returncode == 0, _output(done)
    assert "All promises kept." in done.stdout and "FAIL" not in done.stdout, _output(done)
    thread = re.search(r"job \d+ on thread (\S+) ", done.stdout).group(1)  # type: ignore[union-attr]
    for table in ("ai.checkpoints", "ai.side_effects", "ai.session_messages", "ai.session_events"):
        port, rows = shard_rows(name, table, thread)
        assert rows > 0 and port in WORKER_PORTS, table
