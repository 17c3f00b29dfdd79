"""Trajectories read back from the database, compared by agent_state.replay.compare, and recorded."""

from __future__ import annotations

from agent_state import Client
from agent_state.replay import compare


def _record(client: Client, thread: str, tool_args: dict[str, str], final: str) -> None:
    client.create_session(thread)
    client.append_message(thread, "user", "find a hotel in Lisbon")
    client.append_message(thread, "tool_call", {"name": "search", "arguments": tool_args})
    client.append_message(thread, "tool_result", {"name": "search", "result": ["Alfama Inn"]})
    client.append_message(thread, "assistant", final)


def test_same_tools_and_answer_pass(client: Client, thread_id: str) -> None:
    _record(client, thread_id, {"city": "Lisbon"}, "Alfama Inn")
    _record(client, thread_id + "-candidate", {"city": "Lisbon"}, "Alfama Inn")
    result = compare(client.trajectory(thread_id), client.trajectory(thread_id + "-candidate"))
    assert result.passed and result.tools_match and result.final_score == 1.0
    assert result.diff_lines() == []


def test_other_arguments_and_answer_fail_with_a_diff(client: Client, thread_id: str) -> None:
    _record(client, thread_id, {"city": "Lisbon"}, "Alfama Inn")
    _record(client, thread_id + "-candidate", {"city": "Porto"}, "Ribeira House")
    result = compare(client.trajectory(thread_id), client.trajectory(thread_id + "-candidate"))
    assert not result.passed
    assert result.diff_lines() == [
        '- tool #1: search({"city": "Lisbon"})',
        '+ tool #1: search({"city": "Porto"})',
        '- final: "Alfama Inn"',
        '+ final: "Ribeira House"  (score 0.00)',
    ]
    run = client.record_eval_run(
        thread_id, "model-b", result.passed, result.scores, result.as_json(), thread_id + "-candidate"
    )
    assert (run.passed, run.scores) == (False, {"tools": 0.0, "final": 0.0})
    assert [r.eval_id for r in client.get_eval_runs(thread_id)] == [run.eval_id]


def test_a_scorer_judges_open_text(client: Client, thread_id: str) -> None:
    _record(client, thread_id, {"city": "Lisbon"}, "Book the Alfama Inn.")
    _record(client, thread_id + "-candidate", {"city": "Lisbon"}, "I suggest the Alfama Inn")

    def mentions_hotel(expected: object, actual: object) -> float:
        return 1.0 if "Alfama Inn" in str(actual) else 0.0

    assert compare(client.trajectory(thread_id), client.trajectory(thread_id + "-candidate"), mentions_hotel).passed
    assert not compare(client.trajectory(thread_id), client.trajectory(thread_id + "-candidate")).passed
