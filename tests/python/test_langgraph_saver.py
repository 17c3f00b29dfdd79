"""AgentStateSaver's sync methods and what it promises beyond the conformance suite."""

from __future__ import annotations

import asyncio
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from agent_state.errors import LeaseLost, NotFound, ThreadDeleted
from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver


def _config(thread_id: str, checkpoint_id: str | None = None, **extra: Any) -> dict[str, Any]:
    configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": "", **extra}
    if checkpoint_id:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def _put(saver: Any, config: dict[str, Any], values: dict[str, Any], new: dict[str, str], previous: Any = None) -> Any:
    cp = empty_checkpoint()
    cp["channel_values"] = values
    versions = dict(previous["channel_versions"]) if previous else {}
    versions.update(new)
    cp["channel_versions"] = versions
    return saver.put(config, cp, {"source": "loop", "step": 0, "parents": {}}, new), cp


@pytest.fixture
def tenant_conn(role_dsn: Any) -> Any:
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        yield conn


def test_sync_round_trip_with_messages_writes_and_list(tenant_conn: Any, thread_id: str) -> None:
    saver = AgentStateSaver(tenant_conn)
    messages = [HumanMessage(content="hi", id="1"), AIMessage(content="hello", id="2")]
    stored, _ = _put(saver, _config(thread_id), {"messages": messages, "n": 1}, {"messages": "1", "n": "1"})
    saver.put_writes(stored, [("messages", [AIMessage(content="next", id="3")])], "task-1", "path")

    found = saver.get_tuple(_config(thread_id))
    assert found is not None
    assert found.checkpoint["channel_values"] == {"messages": messages, "n": 1}
    assert found.pending_writes == [("task-1", "messages", [AIMessage(content="next", id="3")])]
    listed = list(saver.list(_config(thread_id), filter={"source": "loop"}, limit=5))
    assert [t.config["configurable"]["checkpoint_id"] for t in listed] == [stored["configurable"]["checkpoint_id"]]
    assert list(saver.list(_config(thread_id), filter={"source": "input"})) == []


def test_unchanged_channels_are_not_written_again(tenant_conn: Any, conn: Any, thread_id: str) -> None:
    saver = AgentStateSaver(tenant_conn)
    big = {"doc": "x" * 1000}
    first, cp1 = _put(saver, _config(thread_id), {"doc": big, "memo": ["m"]}, {"doc": "1", "memo": "1"})
    _put(saver, first, {"doc": big, "memo": ["m", "n"]}, {"memo": "2"}, previous=cp1)
    rows = conn.execute(  # as the superuser: tenants hold no table privilege
        "select channel, count(*) from ai.checkpoint_blobs where thread_id = %s group by channel order by channel",
        (thread_id,),
    ).fetchall()
    assert rows == [("doc", 1), ("memo", 2)]
    latest = saver.get_tuple(_config(thread_id))
    assert latest is not None and latest.checkpoint["channel_values"] == {"doc": big, "memo": ["m", "n"]}


def test_late_write_for_a_deleted_thread_raises_thread_deleted(tenant_conn: Any, thread_id: str) -> None:
    saver = AgentStateSaver(tenant_conn)
    stored, cp = _put(saver, _config(thread_id), {"n": 1}, {"n": "1"})
    saver.delete_thread(thread_id)
    with pytest.raises(ThreadDeleted):
        _put(saver, stored, {"n": 2}, {"n": "2"}, previous=cp)
    with pytest.raises(ThreadDeleted):
        saver.put_writes(stored, [("n", 3)], "task")
    assert saver.get_tuple(_config(thread_id)) is None


def test_another_tenants_thread_is_not_found(role_dsn: Any, thread_id: str) -> None:
    with (
        psycopg.connect(role_dsn("tenant_a"), autocommit=True) as a,
        psycopg.connect(role_dsn("tenant_b"), autocommit=True) as b,
    ):
        _put(AgentStateSaver(a), _config(thread_id), {"n": 1}, {"n": "1"})
        other = AgentStateSaver(b)
        assert other.get_tuple(_config(thread_id)) is None
        with pytest.raises(NotFound):
            _put(other, _config(thread_id), {"n": 2}, {"n": "2"})


def test_a_zombie_workers_checkpoint_is_refused(role_dsn: Any, conn: Any, thread_id: str) -> None:
    """job_id and fencing_token in the config make the saver's writes fenced (ai.fenced_write)."""
    from datetime import timedelta

    from agent_state import Client

    superuser = conn
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as conn:
        client = Client(conn)
        client.create_session(thread_id)
        queue = f"zombie-{thread_id}"  # its own queue: other tests leave jobs in 'default'
        job = client.enqueue_job(thread_id, queue=queue)
        first = client.claim_job("w1", lease=timedelta(minutes=1), queue=queue)
        assert first is not None and first.job_id == job.job_id
        saver = AgentStateSaver(conn)
        fenced = _config(thread_id, job_id=job.job_id, fencing_token=first.fencing_token)
        stored, cp = _put(saver, fenced, {"n": 1}, {"n": "1"})
        # another worker takes the job over (the first one's token is stale from now on)
        superuser.execute(
            "update ai.agent_jobs set lease_expires_at = ai.now() - interval '1 second' where job_id = %s",
            (job.job_id,),
        )
        second = client.claim_job("w2", lease=timedelta(minutes=1), queue=queue)
        assert second is not None and second.fencing_token > first.fencing_token
        zombie = {
            **stored,
            "configurable": {**stored["configurable"], "job_id": job.job_id, "fencing_token": first.fencing_token},
        }
        with pytest.raises(LeaseLost):
            _put(saver, zombie, {"n": 2}, {"n": "2"}, previous=cp)
        with pytest.raises(LeaseLost):
            saver.put_writes(zombie, [("n", 3)], "task")
        assert len(list(saver.list(_config(thread_id)))) == 1


def test_one_saver_over_a_pool_serves_threads_concurrently(role_dsn: Any) -> None:
    with ConnectionPool(role_dsn("tenant_a"), min_size=4, max_size=4, kwargs={"autocommit": True}) as pool:
        saver = AgentStateSaver(pool)
        barrier = threading.Barrier(4)

        def run(i: int) -> int:
            thread = f"conc-{uuid.uuid4()}"
            barrier.wait()
            config: Any = _config(thread)
            previous = None
            for step in range(20):
                config, previous = _put(saver, config, {"step": step}, {"step": str(step + 1)}, previous)
            return len(list(saver.list(_config(thread))))

        with ThreadPoolExecutor(4) as executor:
            assert list(executor.map(run, range(4))) == [20] * 4


def test_async_saver_sync_methods_work_from_another_thread(role_dsn: Any, thread_id: str) -> None:
    async def scenario() -> None:
        async with AsyncConnectionPool(
            role_dsn("tenant_a"), min_size=1, max_size=2, kwargs={"autocommit": True}
        ) as pool:
            saver = AsyncAgentStateSaver(pool)
            stored = await asyncio.to_thread(lambda: _put(saver, _config(thread_id), {"n": 1}, {"n": "1"})[0])
            found = await asyncio.to_thread(saver.get_tuple, _config(thread_id))
            assert found is not None and found.config == stored
            with pytest.raises(asyncio.InvalidStateError):
                saver.get_tuple(_config(thread_id))  # in the loop's own thread

    asyncio.run(scenario())


def test_a_graph_continues_a_conversation_on_the_same_thread(tenant_conn: Any, thread_id: str) -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from resumable_graph import build

    graph = build(AgentStateSaver(tenant_conn))
    config = {"configurable": {"thread_id": thread_id}}
    assert graph.invoke({"visited": ["start"]}, config)["visited"] == ["start", "a", "b", "c", "d"]
    # invoked again with the same thread_id, the state carries on
    assert graph.invoke({"visited": ["again"]}, config)["visited"][-5:] == ["again", "a", "b", "c", "d"]
    session = tenant_conn.execute(
        "select current_checkpoint_id, owner from ai.get_session(%s)", (thread_id,)
    ).fetchone()
    assert session == (graph.get_state(config).config["configurable"]["checkpoint_id"], "tenant_a")
