"""Replay as evals: fork a recorded thread at a checkpoint, run a candidate on the fork, compare
with what the recording did after that checkpoint; the console command prints the diff."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_state import Client, NotFound
from agent_state.replay import replay

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import replay_candidates  # noqa: E402


def _record(client: Client, thread: str) -> str:
    """A recorded run: a question, a checkpoint, then the tool call, its result and the answer."""
    client.create_session(thread)
    client.append_message(thread, "user", "Find me a hotel in Lisbon.")
    checkpoint = client.put_checkpoint(thread, "", None, None, "json", b"{}", {"step": 1})
    client.append_message(thread, "tool_call", {"name": "search", "arguments": {"city": "Lisbon"}})
    client.append_message(thread, "tool_result", {"name": "search", "result": ["Alfama Inn"]})
    client.append_message(thread, "assistant", "Book the Alfama Inn.")
    return checkpoint


def test_replay_of_the_same_behaviour_passes_and_is_recorded(client: Client, thread_id: str) -> None:
    checkpoint = _record(client, thread_id)
    before = client.get_messages(thread_id)
    result = replay(client, thread_id, checkpoint, replay_candidates.same_as_recorded, candidate="same")
    assert result.comparison.passed and result.comparison.diff_lines() == []
    assert len(result.comparison.expected_tools) == 1, "only what came after the checkpoint is compared"
    assert result.fork_thread_id != thread_id
    assert client.get_messages(thread_id) == before, "the recorded thread is untouched"
    assert client.get_checkpoint(result.fork_thread_id, "", checkpoint) is not None, "the fork starts there"
    assert result.eval_run is not None and result.eval_run.passed
    assert result.eval_run.replay_thread_id == result.fork_thread_id
    assert [r.candidate for r in client.get_eval_runs(thread_id)] == ["same"]


def test_replay_with_other_tool_arguments_fails(client: Client, thread_id: str) -> None:
    checkpoint = _record(client, thread_id)
    result = replay(client, thread_id, checkpoint, replay_candidates.searches_porto, record=False)
    assert not result.comparison.passed and result.eval_run is None
    assert result.comparison.diff_lines()[:2] == [
        '- tool #1: search({"city": "Lisbon"})',
        '+ tool #1: search({"city": "Porto"})',
    ]


def test_replay_from_an_unknown_checkpoint_is_refused(client: Client, thread_id: str) -> None:
    _record(client, thread_id)
    with pytest.raises(NotFound):
        replay(client, thread_id, "no-such-checkpoint", replay_candidates.same_as_recorded)


def _cli(dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DATABASE_URL=dsn, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    script = Path(sys.executable).with_name("agent-state")  # the console script pyproject declares
    command = [str(script)] if script.exists() else [sys.executable, "-m", "agent_state.cli"]
    return subprocess.run(command + list(args), env=env, capture_output=True, text=True, timeout=120, check=False)


def test_console_command_prints_the_diff_and_exits_by_the_verdict(dsn: str, client: Client, thread_id: str) -> None:
    checkpoint = _record(client, thread_id)
    passing = _cli(dsn, "replay", thread_id, "--from", checkpoint, "--run", "replay_candidates:same_as_recorded")
    assert passing.returncode == 0, passing.stderr
    assert passing.stdout.splitlines()[-1] == "PASS"
    failing = _cli(dsn, "replay", thread_id, "--from", checkpoint, "--run", "replay_candidates:searches_porto")
    assert failing.returncode == 1, failing.stderr
    assert '- tool #1: search({"city": "Lisbon"})' in failing.stdout
    assert '+ tool #1: search({"city": "Porto"})' in failing.stdout
    assert failing.stdout.splitlines()[-1] == "FAIL"
    assert [r.passed for r in client.get_eval_runs(thread_id)] == [False, True]
