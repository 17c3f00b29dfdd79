"""Replay as evals: fork a recorded thread at a checkpoint, run a candidate on the fork, compare
with what the recording did after that checkpoint; the console command prints the diff."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from agent_state import Client, NotFound, Worker
from agent_state.langgraph import AgentStateSaver, GraphRuns
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


class _ModelState(TypedDict):
    steps: list[str]


def _model_graph() -> Any:
    """Two nodes; the second records the model its run was given (``config["configurable"]["model"]``)."""
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph import END, START, StateGraph

    def first(state: _ModelState) -> dict[str, Any]:
        return {"steps": [*state["steps"], "first"]}

    def answer(state: _ModelState, config: RunnableConfig) -> dict[str, Any]:
        model = (config.get("configurable") or {}).get("model", "recorded-model")
        return {"steps": [*state["steps"], f"model={model}"]}

    g = StateGraph(_ModelState)
    g.add_node("first", first)
    g.add_node("answer", answer)
    g.add_edge(START, "first")
    g.add_edge("first", "answer")
    g.add_edge("answer", END)
    return g.compile()


def _drain(dsn: str, graph: Any, queue: str) -> None:
    """A real graph worker (agent_state.graph_runs through agent_state.Worker) until the queue is empty."""
    with ConnectionPool(dsn, min_size=1, max_size=2, kwargs={"autocommit": True}, open=True) as pool:
        runs = GraphRuns(Client(pool), graph, queue=queue)
        Worker(pool, runs.handler, queue, concurrency=1, poll_interval=0.05, listen=False).run(
            drain=True, install_signal_handlers=False
        )


def test_a_replay_job_with_another_model_gives_the_graph_that_model(role_dsn: Callable[[str], str]) -> None:
    """The console's *replay with another model* as a job (a fork of the thread at a checkpoint, a
    payload naming the model, docs/console.md): a real graph worker runs it and the graph's node is
    given the model in ``config["configurable"]["model"]``; the recorded run was not."""
    from agent_state.graph_runs import INPUT_KEY, REPLAY_KEY

    graph = _model_graph()
    tag = uuid.uuid4().hex[:8]
    queue, thread = f"replay-model-{tag}", f"replay-model-{tag}"
    tenant, service = role_dsn("tenant_a"), role_dsn("app_service")
    with psycopg.connect(tenant, autocommit=True) as conn:
        first_job = GraphRuns(Client(conn), graph, queue=queue).start(thread, {"steps": []})
    _drain(service, graph, queue)
    with psycopg.connect(tenant, autocommit=True) as conn:
        client = Client(conn)
        assert client.get_job(first_job.job_id).result["steps"] == ["first", "model=recorded-model"]
        history = list(graph.copy(update={"checkpointer": AgentStateSaver(conn)}).get_state_history(
            {"configurable": {"thread_id": thread}}
        ))  # fmt: skip
        [before_answer] = [h.config["configurable"]["checkpoint_id"] for h in history if h.next == ("answer",)]
        fork = client.fork_thread(thread, before_answer)
        payload = {
            INPUT_KEY: None,
            REPLAY_KEY: {"from_thread": thread, "from_checkpoint": before_answer, "model": "candidate-x"},
        }
        replayed = client.enqueue_job(fork, payload, queue)
    _drain(service, graph, queue)
    with psycopg.connect(tenant, autocommit=True) as conn:
        job = Client(conn).get_job(replayed.job_id)
        assert job.status == "COMPLETED", job.last_error
        assert job.result["steps"] == ["first", "model=candidate-x"], (
            "the first node is not run again; the answer sees the model"
        )
        assert Client(conn).get_job(first_job.job_id).result["steps"] == ["first", "model=recorded-model"]
