"""A real graph killed (SIGKILL) in the middle of a run resumes in a new process from its last
checkpoint; get_state_history agrees with ai.checkpoint_lineage."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

from agent_state.langgraph import AgentStateSaver

sys.path.insert(0, str(Path(__file__).resolve().parent))
from resumable_graph import build

SCRIPT = Path(__file__).resolve().parent / "resumable_graph.py"


def _spawn(dsn: str, thread_id: str, mode: str, block: bool) -> subprocess.Popen[str]:
    env = dict(os.environ, BLOCK_AT_C="1" if block else "0")
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), dsn, thread_id, mode],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_step(dsn: str, thread_id: str, step: int) -> None:
    deadline = time.monotonic() + 60  # a bound on the wait, not a timing assertion
    with psycopg.connect(dsn, autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = conn.execute("select (metadata->>'step')::int from ai.get_checkpoint(%s)", (thread_id,)).fetchone()
            if row is not None and row[0] >= step:
                return
            time.sleep(0.05)
    raise AssertionError(f"no checkpoint of step {step} for {thread_id}")


def test_graph_killed_mid_run_resumes_from_the_last_checkpoint_in_a_new_process(role_dsn: Any, thread_id: str) -> None:
    dsn = role_dsn("tenant_a")
    child = _spawn(dsn, thread_id, "start", block=True)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()  # blocks until node c runs
        assert line.strip() == "c started", (line, child.stderr.read() if child.poll() is not None else "")
        # LangGraph saves checkpoints in the background (durability "async"): wait until the one
        # taken after b (step 2) is in the database, then kill the process in the middle of c.
        _wait_for_step(dsn, thread_id, 2)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL

    with psycopg.connect(dsn, autocommit=True) as conn:
        saver = AgentStateSaver(conn)
        latest = saver.get_tuple({"configurable": {"thread_id": thread_id}})
        assert latest is not None
        assert latest.checkpoint["channel_values"]["visited"] == ["a", "b"], "the run died after b, before c finished"

    resumed = _spawn(dsn, thread_id, "resume", block=False)
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    final = json.loads(out.strip().splitlines()[-1])
    assert final["visited"] == ["a", "b", "c", "d"], "resumed at c: a and b did not run again"


def test_get_state_history_equals_checkpoint_lineage(role_dsn: Any, thread_id: str) -> None:
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        graph = build(AgentStateSaver(conn))
        config: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
        graph.invoke({"visited": []}, config)
        history = [s.config["configurable"]["checkpoint_id"] for s in graph.get_state_history(config)]
        head = conn.execute("select current_checkpoint_id from ai.get_session(%s)", (thread_id,))
        head_id = head.fetchone()[0]  # type: ignore[index]
        lineage = [
            r[0]
            for r in conn.execute(
                "select id from ai.checkpoint_lineage(%s, %s) order by depth", (thread_id, head_id)
            ).fetchall()
        ]
        assert len(history) == 6  # input, start, a, b, c, d
        assert history == lineage

        # Time travel: replay from the checkpoint after a. History now holds both branches; the
        # lineage of the new head is its own branch, which is the parent_config chain.
        after_a = next(s for s in graph.get_state_history(config) if s.values.get("visited") == ["a"])
        graph.invoke(None, after_a.config)
        new_head = graph.get_state(config)
        chain = []
        step: Any = new_head
        while step is not None:
            chain.append(step.config["configurable"]["checkpoint_id"])
            step = graph.get_state(step.parent_config) if step.parent_config else None
        lineage = [
            r[0]
            for r in conn.execute(
                "select id from ai.checkpoint_lineage(%s, %s) order by depth", (thread_id, chain[0])
            ).fetchall()
        ]
        assert lineage == chain
        assert set(lineage) < {s.config["configurable"]["checkpoint_id"] for s in graph.get_state_history(config)}
        assert new_head.values["visited"] == ["a", "b", "c", "d"]
