"""conftest.py for LangGraph's graph tests (libs/langgraph/tests), run against agent-state's savers.

Copied over the upstream tests/conftest.py by prepare.py. It provides the fixtures those tests use
with the same names, and parametrizes the checkpointer fixtures over our savers only:

* ``sync_checkpointer``: ``AgentStateSaver`` over a ``ConnectionPool``, as a worker and as a tenant;
* ``async_checkpointer``: ``AsyncAgentStateSaver`` over an ``AsyncConnectionPool``, likewise.

Tests that take no checkpointer fixture are LangGraph's own unit tests; they are deselected here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from uuid import UUID

import agent_state_upstream as upstream
import pytest
from langgraph.cache.base import BaseCache
from langgraph.cache.memory import InMemoryCache
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore
from langgraph.types import Durability
from pytest_mock import MockerFixture
from upstream_skips import apply_skips

# Imported by some upstream modules (test_remote_graph, test_prune_postgres); not run here.
NO_DOCKER = True

upstream.suite = "graph"  # its private database: agent_state_test_upstream_graph_<worker>

CHECKPOINTER_FIXTURES = {"sync_checkpointer", "async_checkpointer"}

# The modules with checkpointer-parametrized tests: time travel, subgraph persistence,
# interruption, pregel (with the functional API), large cases, DeltaChannel graphs.
GRAPH_FILES = {
    "test_checkpoint_migration.py",
    "test_delta_channel_exit_mode.py",
    "test_delta_channel_fork.py",
    "test_delta_channel_parallel_order.py",
    "test_delta_channel_subgraph.py",
    "test_delta_channel_to_plain.py",
    "test_delta_channel_update_state.py",
    "test_interrupt_state.py",
    "test_interruption.py",
    "test_large_cases.py",
    "test_large_cases_async.py",
    "test_pregel.py",
    "test_pregel_async.py",
    "test_pydantic.py",
    "test_strict_resume.py",
    "test_subgraph_persistence.py",
    "test_subgraph_persistence_async.py",
    "test_time_travel.py",
    "test_time_travel_async.py",
}


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    if collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return collection_path.name not in GRAPH_FILES or None
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep = [item for item in items if CHECKPOINTER_FIXTURES & set(getattr(item, "fixturenames", ()))]
    dropped = [item for item in items if item not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    apply_skips(items, suite="graph")


def pytest_sessionfinish(session: pytest.Session) -> None:
    upstream.drop_database()


@pytest.fixture(autouse=True)
def _empty_database() -> None:
    upstream.reset()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture()
def deterministic_uuids(mocker: MockerFixture) -> MockerFixture:
    side_effect = (UUID(f"00000000-0000-4000-8000-{i:012}", version=4) for i in range(10000))
    return mocker.patch("uuid.uuid4", side_effect=side_effect)


@pytest.fixture(params=["sync", "async", "exit"])
def durability(request: pytest.FixtureRequest) -> Durability:
    return request.param


@pytest.fixture
def cache() -> Iterator[BaseCache]:
    yield InMemoryCache()


# The graph tests that take a store (test_store_injected, the functional API's injected store):
# our AgentStateStore / AsyncAgentStateStore, as a tenant, emptied with the database before each test.
@pytest.fixture
def sync_store() -> Iterator[BaseStore]:
    upstream.reset()
    with upstream.sync_store("tenant") as store:
        yield store


@pytest.fixture
async def async_store() -> AsyncIterator[BaseStore]:
    upstream.reset()
    async with upstream.async_store("tenant") as store:
        yield store


@pytest.fixture(params=["agent_state_service", "agent_state_tenant"])
def sync_checkpointer(request: pytest.FixtureRequest) -> Iterator[BaseCheckpointSaver]:
    role = request.param.removeprefix("agent_state_")
    with upstream.sync_saver(role, pool=True) as saver:
        yield saver


@pytest.fixture(params=["agent_state_service_aio", "agent_state_tenant_aio"])
async def async_checkpointer(request: pytest.FixtureRequest) -> AsyncIterator[BaseCheckpointSaver]:
    role = request.param.removeprefix("agent_state_").removesuffix("_aio")
    async with upstream.async_saver(role, pool=True) as saver:
        yield saver
