"""conftest.py for LangGraph's PostgresSaver tests (libs/checkpoint-postgres/tests), run against agent-state.

Copied over the upstream tests/conftest.py by prepare.py. The upstream test modules build their
savers with module-level helpers (``_saver(name)`` in test_sync/test_async) or name
``PostgresSaver``/``AsyncPostgresSaver`` and ``DEFAULT_URI`` directly; an autouse fixture points
those names at our savers, connected as a worker or as a tenant (every test runs as both). The
connection kinds stay upstream's: ``base`` one connection, ``pool`` a pool, both with
``row_factory=dict_row`` and ``prepare_threshold=0``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import agent_state_upstream as upstream
import psycopg
import pytest
from psycopg.rows import dict_row
from upstream_skips import apply_skips

from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver

# Imported by the upstream modules; every use is replaced by the fixture below.
DEFAULT_POSTGRES_URI = "postgresql:///not-used-see-conftest/"
DEFAULT_URI = "postgresql:///not-used-see-conftest"
VECTOR_TYPES = ["vector", "halfvec"]

# PostgresStore's tests: a store, not the checkpoint saver.
collect_ignore = ["test_store.py", "test_async_store.py"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    apply_skips(items, suite="saver")


def pytest_sessionfinish(session: pytest.Session) -> None:
    upstream.drop_database()


def _connection(name: str) -> dict[str, Any]:
    if name == "base":
        return {"pool": False, "row_factory": dict_row}
    if name == "pool":
        return {"pool": True, "row_factory": dict_row}
    if name == "pipe":  # upstream passes the pipeline to PostgresSaver(conn, pipe=...); ours needs no flag
        return {"pool": False, "row_factory": dict_row, "pipeline": True}
    raise NotImplementedError(f"{name}: a PostgresSaver variant (listed as skipped in upstream_skips.py)")


# test_prune reads PostgresSaver's three tables through the saver's private cursor; ours has the
# same columns in ai.checkpoints, ai.checkpoint_writes and ai.checkpoint_blobs, read as their owner.
_ROWS = {
    "checkpoints": "select checkpoint_ns, checkpoint_id from ai.checkpoints where thread_id = %s order by 1, 2",
    "writes": "select checkpoint_ns, checkpoint_id, task_id, idx"
    " from ai.checkpoint_writes where thread_id = %s order by 1, 2, 3, 4",
    "blobs": "select checkpoint_ns, channel, version from ai.checkpoint_blobs where thread_id = %s order by 1, 2, 3",
}


async def _rows(saver: Any, thread_id: str) -> dict[str, list[tuple[Any, ...]]]:
    async with await psycopg.AsyncConnection.connect(upstream.owner_dsn(), autocommit=True) as conn:
        return {table: await (await conn.execute(query, (thread_id,))).fetchall() for table, query in _ROWS.items()}


@pytest.fixture(params=["service", "tenant"], autouse=True)
def agent_state_role(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    role: str = request.param
    upstream.reset()

    @contextmanager
    def sync_saver(name: str) -> Iterator[AgentStateSaver]:
        with upstream.sync_saver(role, **_connection(name)) as saver:
            yield saver

    @asynccontextmanager
    async def async_saver(name: str) -> AsyncIterator[AsyncAgentStateSaver]:
        async with upstream.async_saver(role, **_connection(name)) as saver:
            yield saver

    module = request.module
    replacements: dict[str, Any] = {
        "_saver": async_saver if module.__name__.endswith("test_async") else sync_saver,
        # test_prune: its own _saver dispatches to these two
        "_sync_saver": sync_saver,
        "_async_saver": async_saver,
        "_rows": _rows,
        "PostgresSaver": AgentStateSaver,
        "AsyncPostgresSaver": AsyncAgentStateSaver,
        "DEFAULT_URI": upstream.role_dsn(role),
    }
    if module.__name__.endswith("test_prune"):
        del replacements["_saver"]  # its own _saver dispatches to _sync_saver and _async_saver
    for name, value in replacements.items():
        if hasattr(module, name):
            monkeypatch.setattr(module, name, value)
    return role
