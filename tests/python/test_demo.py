"""`make demo` end to end against the test database (as its owner), and its verdict."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from agent_state import Client

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[1] / "examples" / "demo.py"
sys.path.insert(0, str(DEMO.parent))

from demo import NODES, Facts, verdict  # noqa: E402 (examples/demo.py, a script, not a package module)


@pytest.fixture(scope="module")
def demo_run() -> tuple[str, str]:
    """One run of the demo, shared by the tests that read it: the database (through the pooler in
    the pooled run, as the ``dsn`` fixture) and what the demo printed."""
    dsn = os.environ["AGENT_STATE_TEST_DSN"]
    env = dict(os.environ, DATABASE_URL=dsn)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "python"), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, str(DEMO)], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return dsn, done.stdout


def test_the_demo_crashes_resumes_approves_and_keeps_every_promise(demo_run: tuple[str, str]) -> None:
    _, out = demo_run
    assert "All promises kept." in out
    assert "FAIL" not in out
    for promise in [
        "ok   worker 1 was killed with SIGKILL in the middle of node draft",
        "ok   worker 2 resumed from the last checkpoint (after node research), starting at node draft",
        "ok   no finished node ran again: plan x1, research x1, draft x1, approve x1, publish x1",
        "ok   the email was sent 1 time(s); the ledger says done",
        "ok   the run waited for a person as AWAITING_HUMAN, held by no worker",
    ]:
        assert promise in out, out
    timeline = out[out.index("timeline of") :]
    assert "SIGKILL in the middle of node draft" in timeline and "email to alice@example.com: done" in timeline
    assert "step 2 (after research)" in timeline and "<-" in timeline  # checkpoints with their parents


def _stamp(at: object) -> str:
    return f"{at:%H:%M:%S.%f}"[:-3]


def test_the_demos_story_is_the_records_of_ai_job_attempts(demo_run: tuple[str, str]) -> None:
    """Every claim the demo tells of (its steps and its timeline) is an attempt of ai.job_attempts,
    the records the console's run page shows: the same attempt number, fencing token, worker and
    time; and the timeline puts each claim before the first event of the worker that made it."""
    dsn, out = demo_run
    job_id = int(re.search(r"starts a run: job (\d+) on thread", out).group(1))  # type: ignore[union-attr]
    with psycopg.connect(dsn, autocommit=True) as conn:
        attempts = Client(conn).job_attempts(job_id)
    assert [(a.attempt, a.outcome) for a in attempts] == [(1, "expired"), (2, "awaiting_human"), (2, "completed")]
    label = {a.fencing_token: (a.worker or "").split(":")[0] for a in attempts}
    assert label == {1: "worker 1", 2: "worker 2", 3: "worker 2"}
    # the steps: each claim as the records have it (worker 1's, worker 2's after the crash, and
    # worker 2's again after the approval)
    told = re.findall(
        r"(worker \d) claimed the job \(attempt (\d+), fencing token (\d+)\)", out[: out.index("timeline of")]
    )
    first, second, after_approval = attempts
    assert told == [(label[a.fencing_token], str(a.attempt), str(a.fencing_token)) for a in attempts], out
    # the timeline: one claim row per attempt, at its claimed_at, and before that worker's first event
    timeline = out[out.index("timeline of") :].splitlines()
    claims = [line for line in timeline if re.match(r"\S+\s+claim\s", line)]
    assert len(claims) == len(attempts), "\n".join(timeline)
    for line, a in zip(claims, attempts, strict=True):
        assert line.startswith(_stamp(a.claimed_at)), (line, a)
        assert label[a.fencing_token] in line and f"attempt {a.attempt}, fencing token {a.fencing_token}" in line
    for worker, attempt in (("worker 1", first), ("worker 2", second)):
        claim_at = timeline.index(claims[attempts.index(attempt)])
        events = [i for i, line in enumerate(timeline) if re.match(rf"\S+\s+event\s+{worker}\s", line)]
        assert events and claim_at < events[0], "\n".join(timeline)
    ended = [line for line in timeline if re.match(r"\S+\s+attempt end\s", line)]
    assert [line[: len(_stamp(a.ended_at))] for line in ended] == [_stamp(a.ended_at) for a in attempts], ended
    assert all(a.outcome in line for line, a in zip(ended, attempts, strict=True)), ended
    assert after_approval.fencing_token == 3


def _kept() -> Facts:
    return Facts(
        killed_with_sigkill=True,
        killed_in_node="draft",
        job_status="COMPLETED",
        finished={n: ["w"] for n in NODES},
        first_node_after_crash="draft",
        resumed_from="c2",
        resumed_from_node="research",
        lineage_passes_resume_point=True,
        emails_sent=1,
        ledger_status="done",
        waited_for_human_unheld=True,
        approved_and_completed=True,
        message_seqs=[1, 2, 3],
    )


def test_the_verdict_fails_each_broken_promise() -> None:
    assert all(ok for _, ok in verdict(_kept()))
    broken = {
        "emails_sent": 2,
        "finished": {**{n: ["w"] for n in NODES}, "research": ["w1", "w2"]},
        "first_node_after_crash": "plan",
        "killed_with_sigkill": False,
        "waited_for_human_unheld": False,
        "approved_and_completed": False,
        "message_seqs": [1, 3],
        "lineage_passes_resume_point": False,
    }
    for name, value in broken.items():
        facts = _kept()
        setattr(facts, name, value)
        assert [ok for _, ok in verdict(facts)].count(False) == 1, name


def test_the_demo_says_in_one_line_when_the_schema_is_not_deployed(dsn: str) -> None:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    other = make_conninfo(**{**conninfo_to_dict(dsn), "dbname": "postgres"})
    env = dict(os.environ, DATABASE_URL=other)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "python"), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, str(DEMO)], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"agent-state demo: schema ai is not deployed in {other!r}: run `make demo` or `sqitch deploy`"
    ]
