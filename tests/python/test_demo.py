"""`make demo` end to end against the test database (as its owner), and its verdict."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[1] / "examples" / "demo.py"
sys.path.insert(0, str(DEMO.parent))

from demo import NODES, Facts, verdict  # noqa: E402 (examples/demo.py, a script, not a package module)


def test_the_demo_crashes_resumes_approves_and_keeps_every_promise(dsn: str) -> None:
    env = dict(os.environ, DATABASE_URL=dsn)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parents[1] / "python"), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, str(DEMO)], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    out = done.stdout
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
