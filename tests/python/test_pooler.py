"""Through a real PgBouncer in transaction pooling (scripts/pgbouncer.sh), with the connection
code of the README and docs (psycopg's defaults: statements prepared after five executions),
concurrent clients, workers and LangGraph savers make no error: the library never relies on a
server-side prepared statement or on LISTEN. Issue 11, item 3: before the fix about half of the
operations failed with 26000 / 08P01 / 42P05 and the Worker's claim loop died."""

from __future__ import annotations

import asyncio
import operator
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Annotated, Any, TypedDict

import psycopg
import pytest
from conftest import dsn_as
from langgraph.graph import END, START, StateGraph
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from agent_state import AsyncClient, AsyncJobContext, AsyncWorker, Client, Job, JobContext, Worker
from agent_state.client import behind_pooler
from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver

CLIENTS = 16
ROUNDS = 25  # well past psycopg's prepare_threshold (5)


def _client_work(client: Client, n: int) -> None:
    thread = f"pool-{uuid.uuid4()}"
    client.create_session(thread)
    for i in range(n):
        client.append_message(thread, "user", {"text": f"m{i}"})
        assert client.get_messages(thread, after_seq=i)[0].seq == i + 1
        client.record_event(thread, "tick", {"i": i})


def test_sync_clients_over_their_own_connections(pooler_dsn: str) -> None:
    tenant = dsn_as(pooler_dsn, "tenant_a")

    def one(_: int) -> None:
        with psycopg.connect(tenant, autocommit=True) as conn:  # the README's connection code
            _client_work(Client(conn), ROUNDS)

    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(one, range(CLIENTS)))  # re-raises the first failure


def test_sync_clients_over_a_shared_pool_and_in_transactions(pooler_dsn: str) -> None:
    tenant = dsn_as(pooler_dsn, "tenant_a")
    with ConnectionPool(tenant, min_size=2, max_size=8, kwargs={"autocommit": True}, open=True) as pool:
        client = Client(pool)
        with ThreadPoolExecutor(CLIENTS) as ex:
            list(ex.map(lambda _: _client_work(client, ROUNDS), range(CLIENTS)))
    # Calls inside the caller's transaction (a connection without autocommit) join it.
    with psycopg.connect(tenant) as conn:
        client = Client(conn)
        for _ in range(3):
            with conn.transaction():
                _client_work(client, 8)


def test_async_clients_over_a_pool(pooler_dsn: str) -> None:
    tenant = dsn_as(pooler_dsn, "tenant_a")

    async def work(client: AsyncClient) -> None:
        thread = f"apool-{uuid.uuid4()}"
        await client.create_session(thread)
        for i in range(ROUNDS):
            await client.append_message(thread, "user", {"text": f"m{i}"})
            assert (await client.get_messages(thread, after_seq=i))[0].seq == i + 1

    async def main() -> None:
        async with AsyncConnectionPool(tenant, min_size=2, max_size=8, kwargs={"autocommit": True}) as pool:
            await asyncio.gather(*(work(AsyncClient(pool)) for _ in range(CLIENTS)))
        conns = [await psycopg.AsyncConnection.connect(tenant, autocommit=True) for _ in range(4)]
        try:
            await asyncio.gather(*(work(AsyncClient(c)) for c in conns))
        finally:
            for c in conns:
                await c.close()

    asyncio.run(main())


def _enqueue(service: str, queue: str, n: int) -> list[int]:
    with psycopg.connect(service, autocommit=True) as conn:
        client = Client(conn)
        threads = [f"wq-{uuid.uuid4()}" for _ in range(8)]
        for t in threads:
            client.create_session(t)
        return [client.enqueue_job(threads[i % 8], {"n": i}, queue=queue).job_id for i in range(n)]


def _statuses(service: str, ids: list[int]) -> dict[str, int]:
    with psycopg.connect(service, autocommit=True) as conn:
        client = Client(conn)
        out: dict[str, int] = {}
        for job_id in ids:
            status = client.get_job(job_id).status
            out[status] = out.get(status, 0) + 1
        return out


def test_workers_complete_every_job_with_fenced_writes_and_no_listen(pooler_dsn: str, direct_dsn: str) -> None:
    service = dsn_as(pooler_dsn, "app_service")
    queue, table = f"pq-{uuid.uuid4().hex[:8]}", f"pooler_effects_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(direct_dsn, autocommit=True) as admin:
        admin.execute(f"create table public.{table} (job_id bigint primary key)")
        admin.execute(f"grant insert on public.{table} to app_service")
    ids = _enqueue(service, queue, 200)
    errors: list[BaseException] = []

    def handler(job: Job, ctx: JobContext) -> int:
        try:
            with ctx.fenced() as conn:  # the handler's own statement, run hundreds of times
                conn.execute(f"insert into public.{table} (job_id) values (%s)", (job.job_id,))
        except BaseException as error:
            errors.append(error)
            raise
        return job.job_id

    with ConnectionPool(service, min_size=2, max_size=10, kwargs={"autocommit": True}, open=True) as pool:
        workers = [Worker(pool, handler, queue, concurrency=3, lease=timedelta(seconds=30), poll_interval=0.05)]
        workers.append(Worker(pool, handler, queue, concurrency=3, lease=timedelta(seconds=30), poll_interval=0.05))
        threads = [
            threading.Thread(target=w.run, kwargs={"drain": True, "install_signal_handlers": False}) for w in workers
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not any(t.is_alive() for t in threads), "the workers drained the queue"
    assert errors == []
    assert _statuses(service, ids) == {"COMPLETED": len(ids)}
    assert sum(w.stats.completed for w in workers) == len(ids)
    with psycopg.connect(direct_dsn, autocommit=True) as admin:
        row = admin.execute(f"select count(*) from public.{table}").fetchone()
        admin.execute(f"drop table public.{table}")
    assert row is not None and row[0] == len(ids)


def test_async_worker_completes_every_job(pooler_dsn: str) -> None:
    service = dsn_as(pooler_dsn, "app_service")
    queue = f"apq-{uuid.uuid4().hex[:8]}"
    ids = _enqueue(service, queue, 80)

    async def handler(job: Job, ctx: AsyncJobContext) -> int:
        async with ctx.fenced() as conn:
            await conn.execute("select %s::bigint", (job.job_id,))
        return job.job_id

    async def main() -> AsyncWorker:
        async with AsyncConnectionPool(service, min_size=2, max_size=8, kwargs={"autocommit": True}) as pool:
            worker = AsyncWorker(pool, handler, queue, concurrency=4, poll_interval=0.05)
            await asyncio.wait_for(worker.run(drain=True, install_signal_handlers=False), 120)
            return worker

    worker = asyncio.run(main())
    assert worker.stats.completed == len(ids)
    assert _statuses(service, ids) == {"COMPLETED": len(ids)}


class _State(TypedDict):
    visited: Annotated[list[str], operator.add]


def _graph(checkpointer: Any) -> Any:
    builder = StateGraph(_State)
    for name in "abcd":
        builder.add_node(name, lambda state, name=name: {"visited": [name]})
    builder.add_edge(START, "a")
    for left, right in zip("abc", "bcd", strict=True):
        builder.add_edge(left, right)
    builder.add_edge("d", END)
    return builder.compile(checkpointer=checkpointer)


@pytest.mark.parametrize("source", ["pool", "connection"])
def test_langgraph_saver_runs_graphs_concurrently(pooler_dsn: str, source: str) -> None:
    tenant = dsn_as(pooler_dsn, "tenant_a")

    def run(saver_for: Callable[[], Any]) -> None:
        saver = saver_for()
        graph = _graph(saver)
        for _ in range(3):
            config = {"configurable": {"thread_id": f"lg-{uuid.uuid4()}"}}
            # The session exists before the graph's first put and put_writes race to create it
            # (that race is issue 11 item 2, fixed in SQL and tested on its own; this is the pooler).
            saver._client.create_session(config["configurable"]["thread_id"])
            assert graph.invoke({"visited": []}, config)["visited"] == list("abcd")
            assert graph.get_state(config).values["visited"] == list("abcd")

    if source == "pool":
        with (
            ConnectionPool(tenant, min_size=2, max_size=8, kwargs={"autocommit": True}, open=True) as pool,
            ThreadPoolExecutor(8) as ex,
        ):
            list(ex.map(lambda _: run(lambda: AgentStateSaver(pool)), range(16)))
    else:
        conns = [psycopg.connect(tenant, autocommit=True) for _ in range(8)]
        try:
            with ThreadPoolExecutor(8) as ex:
                list(ex.map(lambda c: run(lambda: AgentStateSaver(c)), conns * 2))
        finally:
            for c in conns:
                c.close()


def test_async_langgraph_saver(pooler_dsn: str) -> None:
    tenant = dsn_as(pooler_dsn, "tenant_a")

    async def main() -> None:
        async with AsyncConnectionPool(tenant, min_size=2, max_size=8, kwargs={"autocommit": True}) as pool:
            graph = _graph(AsyncAgentStateSaver(pool))

            async def one() -> None:
                for _ in range(3):
                    config = {"configurable": {"thread_id": f"alg-{uuid.uuid4()}"}}
                    await AsyncClient(pool).create_session(config["configurable"]["thread_id"])  # as above
                    assert (await graph.ainvoke({"visited": []}, config))["visited"] == list("abcd")

            await asyncio.gather(*(one() for _ in range(8)))

    asyncio.run(main())


def test_statements_are_prepared_on_a_direct_connection_and_never_behind_the_pooler(
    pooler_dsn: str, direct_dsn: str
) -> None:
    """Unprepared, a cheap call costs about twice as much (docs/benchmarks.md, "Connections"), so
    the client prepares where that is safe: on a connection that reaches the server itself."""
    with psycopg.connect(dsn_as(direct_dsn, "tenant_a"), autocommit=True) as direct:
        assert not behind_pooler(direct)
        client = Client(direct)
        thread = f"prep-{uuid.uuid4()}"
        client.create_session(thread)
        for _ in range(8):
            client.get_session(thread)
        prepared = [r[0] for r in direct.execute("select statement from pg_prepared_statements", prepare=False)]
        assert any("ai.get_session" in s for s in prepared), prepared
        assert direct._prepared._names, "psycopg's own record of what it prepared (private) says so too"
    with psycopg.connect(dsn_as(pooler_dsn, "tenant_a"), autocommit=True) as pooled:
        assert behind_pooler(pooled)
        client = Client(pooled)
        for _ in range(8):
            client.get_session(thread)
        assert not pooled._prepared._names, "nothing prepared through the pooler"
