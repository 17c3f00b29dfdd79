"""A pytest plugin: the OpenAI Agents SDK's own session tests, pointed at AgentStateSession.

`make test-upstream` runs the SDK's tests/memory/test_session.py and test_session_limit.py from
its PyPI source release (tests/upstream/langgraph/sdists.txt, hash-checked) with `-p sdk_sessions`.
The tests build `SQLiteSession(session_id, db_path)`; this plugin replaces that name in `agents`
before the test modules import it, with a factory that returns an AgentStateSession on the test
database (AGENT_STATE_TEST_DSN) under a session id unique to the test, as the originals use a fresh
SQLite file per test. Tests of SQLite internals are deselected; SELECTED lists what runs.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest

from agent_state.openai_agents import AgentStateSession

# What runs: the tests of the Session protocol through Runner.run, run_sync and run_streamed,
# pop_item, get_items(limit) and the session limit. Everything else in these two files is about
# SQLiteSession's own file locks, threads, closing and corrupt rows.
SELECTED = (
    "test_session.py::test_session_memory_basic_functionality_parametrized",
    "test_session.py::test_session_memory_with_explicit_instance_parametrized",
    "test_session.py::test_session_memory_disabled_parametrized",
    "test_session.py::test_session_memory_different_sessions_parametrized",
    "test_session.py::test_sqlite_session_memory_pop_item",
    "test_session.py::test_session_memory_pop_different_sessions",
    "test_session.py::test_sqlite_session_get_items_with_limit",
    "test_session_limit.py::",
)

_prefix = {"value": ""}


class _TestSession(AgentStateSession):
    def close(self) -> None:
        """SQLiteSession.close(): nothing to close (a connection per call)."""


def _session(session_id: str, db_path: Any = ":memory:", *args: Any, **kwargs: Any) -> AgentStateSession:
    settings = kwargs.get("session_settings")
    return _TestSession(_prefix["value"] + session_id, os.environ["AGENT_STATE_TEST_DSN"], session_settings=settings)


def pytest_configure(config: pytest.Config) -> None:
    import agents
    import agents.memory

    agents.SQLiteSession = _session  # type: ignore[attr-defined, assignment]
    agents.memory.SQLiteSession = _session  # type: ignore[attr-defined, assignment]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep = [i for i in items if any(s in i.nodeid for s in SELECTED)]
    config.hook.pytest_deselected(items=[i for i in items if i not in keep])
    items[:] = keep


@pytest.fixture(autouse=True)
def _fresh_session_ids() -> None:
    _prefix["value"] = f"sdk-{uuid.uuid4()}-"
