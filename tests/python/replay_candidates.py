"""Candidates that `agent-state replay --run replay_candidates:NAME` loads in the replay tests.

Each runs on the fork of the recorded thread and writes what it did as messages."""

from __future__ import annotations

from agent_state import Client


def same_as_recorded(client: Client, fork: str, checkpoint_id: str) -> None:
    client.append_message(fork, "tool_call", {"name": "search", "arguments": {"city": "Lisbon"}})
    client.append_message(fork, "tool_result", {"name": "search", "result": ["Alfama Inn"]})
    client.append_message(fork, "assistant", "Book the Alfama Inn.")


def searches_porto(client: Client, fork: str, checkpoint_id: str) -> None:
    client.append_message(fork, "tool_call", {"name": "search", "arguments": {"city": "Porto"}})
    client.append_message(fork, "tool_result", {"name": "search", "result": ["Ribeira House"]})
    client.append_message(fork, "assistant", "Book the Ribeira House.")
