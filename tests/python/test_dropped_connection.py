"""A dropped connection does not kill a saver or a client that owns its connection (issue 21,
defect 8). ``AgentStateSaver.from_conn_string(...)`` ran a graph, the server ended its backend
(``pg_terminate_backend``, as a failover, an idle timeout or an operator does), and every later
``invoke`` failed with "the connection is closed". Now the savers and the clients built from a
connection string open a new connection on the next call, retry an idempotent call once (reads,
and the writes that are idempotent by design: a checkpoint put with its id, put_writes), and
report a write that may have committed as :class:`agent_state.errors.OutcomeUnknown` without
running it again.

The backend is ended two ways: while the connection is idle, and in the middle of a call (the
call waits on a lock the test holds, the test ends the waiting backend, then lets go), directly
and through the private PgBouncer (where only the second reaches the client), sync and async.
Every wait is on a condition, bounded."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypedDict

import psycopg
import pytest
from conftest import dsn_as
from langgraph.graph import END, START, StateGraph
from waiting import wait_until

from agent_state import AsyncClient, Client
from agent_state.errors import OutcomeUnknown
from agent_state.graph_runs import GraphRuns, async_graph_worker, graph_worker
from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver

pytestmark = pytest.mark.session_features(
    "pg_terminate_backend of the test's own backends, table locks held by the test"
)

ROLE = "tenant_a"


class State(TypedDict):
    n: int


def _graph(saver: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("a", lambda s: {"n": s["n"] + 1})
    builder.add_node("b", lambda s: {"n": s["n"] + 10})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", END)
    return builder.compile(checkpointer=saver)


def _config(thread_id: str) -> Any:
    return {"configurable": {"thread_id": thread_id}}


def _terminate_idle(admin: psycopg.Connection[Any]) -> int:
    """Ends every backend of ROLE (they are idle: nothing of the test runs)."""
    rows = admin.execute(
        "select pg_terminate_backend(pid) from pg_stat_activity where usename = %s and pid <> pg_backend_pid()",
        (ROLE,),
    ).fetchall()
    return len(rows)


@contextmanager
def _ended_mid_call(direct_dsn: str, table: str, mode: str = "share") -> Iterator[Callable[[Callable[[], Any]], Any]]:
    """``run(call)`` makes ``call`` in a thread while the test holds ``table`` locked in ``mode``
    (SHARE blocks writes only, ACCESS EXCLUSIVE reads too); once the call's backend waits on the
    lock, the test ends that backend and lets go. Returns what the call returned, or raises what
    it raised."""
    with psycopg.connect(direct_dsn, autocommit=True) as admin, psycopg.connect(direct_dsn, autocommit=True) as watch:

        def waiting() -> Any:  # its own connection: pg_stat_activity holds still within a transaction
            return watch.execute(
                "select pid from pg_stat_activity where usename = %s and wait_event_type = 'Lock'", (ROLE,)
            ).fetchone()

        def run(call: Callable[[], Any]) -> Any:
            outcome: dict[str, Any] = {}

            def target() -> None:
                try:
                    outcome["value"] = call()
                except BaseException as error:
                    outcome["error"] = error

            worker = threading.Thread(target=target)
            with admin.transaction():
                admin.execute(f"lock table {table} in {mode} mode")
                worker.start()
                pid = wait_until(waiting, f"a backend of {ROLE} waiting on {table}")[0]
                admin.execute("select pg_terminate_backend(%s)", (pid,))
                wait_until(
                    lambda: not watch.execute("select 1 from pg_stat_activity where pid = %s", (pid,)).fetchone(),
                    "the backend ended",
                )
            worker.join(30)
            assert not worker.is_alive(), "the call returned"
            if "error" in outcome:
                raise outcome["error"]
            return outcome.get("value")

        yield run


@pytest.fixture(params=["direct", "pooler"])
def url(request: pytest.FixtureRequest, direct_dsn: str) -> str:
    if request.param == "direct":
        return dsn_as(direct_dsn, ROLE)
    return dsn_as(request.getfixturevalue("pooler_dsn"), ROLE)


def test_a_saver_from_a_conn_string_survives_its_backend_ending(url: str, direct_dsn: str) -> None:
    thread_id = f"drop-{uuid.uuid4()}"
    with AgentStateSaver.from_conn_string(url) as saver, psycopg.connect(direct_dsn, autocommit=True) as admin:
        graph = _graph(saver)
        assert graph.invoke({"n": 0}, _config(thread_id)) == {"n": 11}
        assert _terminate_idle(admin) >= 0  # through the pooler, it replaces an idle server connection itself
        assert graph.invoke({"n": 1}, _config(thread_id)) == {"n": 12}, "the next invoke runs on a new connection"
        assert saver.get_tuple(_config(thread_id)) is not None
        with _ended_mid_call(direct_dsn, "ai.checkpoints") as run:
            # the first put of this run waits on the lock and loses its backend: retried once, as it is idempotent
            assert run(lambda: graph.invoke({"n": 2}, _config(thread_id))) == {"n": 13}
        with _ended_mid_call(direct_dsn, "ai.checkpoints", "access exclusive") as run:
            assert run(lambda: saver.get_tuple(_config(thread_id))) is not None, "a read is retried once"
        history = list(saver.list(_config(thread_id)))
        assert len(history) == 3 * 4, "every step of the three runs saved once"
        assert not saver.conn.closed


def test_an_async_saver_from_a_conn_string_survives_its_backend_ending(url: str, direct_dsn: str) -> None:
    thread_id = f"drop-{uuid.uuid4()}"

    async def scenario() -> None:
        async with AsyncAgentStateSaver.from_conn_string(url) as saver:
            graph = _graph(saver)
            assert await graph.ainvoke({"n": 0}, _config(thread_id)) == {"n": 11}
            with psycopg.connect(direct_dsn, autocommit=True) as admin:
                _terminate_idle(admin)
            assert await graph.ainvoke({"n": 1}, _config(thread_id)) == {"n": 12}
            loop = asyncio.get_running_loop()
            with _ended_mid_call(direct_dsn, "ai.checkpoints") as run:
                # the graph runs on this loop; the lock dance waits in a thread of its own
                result = await loop.run_in_executor(
                    None,
                    lambda: run(
                        lambda: asyncio.run_coroutine_threadsafe(
                            graph.ainvoke({"n": 2}, _config(thread_id)), loop
                        ).result(30)
                    ),
                )
            assert result == {"n": 13}
            assert len([c async for c in saver.alist(_config(thread_id))]) == 3 * 4
            assert not saver.conn.closed

    asyncio.run(scenario())


def test_a_client_from_a_conn_string_reconnects_retries_reads_and_reports_an_unknown_write(
    url: str, direct_dsn: str
) -> None:
    thread_id = f"drop-{uuid.uuid4()}"
    with Client.from_conn_string(url) as client, psycopg.connect(direct_dsn, autocommit=True) as admin:
        client.create_session(thread_id)
        client.record_event(thread_id, "before")
        _terminate_idle(admin)
        assert client.get_session(thread_id).thread_id == thread_id, "a new connection on the next call"
        with _ended_mid_call(direct_dsn, "ai.session_messages", "access exclusive") as run:
            assert run(lambda: client.get_messages(thread_id)) == [], "a read is retried once"
        with _ended_mid_call(direct_dsn, "ai.session_events") as run, pytest.raises(OutcomeUnknown) as lost:
            run(lambda: client.record_event(thread_id, "lost"))
        assert "record_event" in str(lost.value) and isinstance(lost.value, psycopg.OperationalError)
        kinds = [e.kind for e in client.get_events(thread_id)]
        assert kinds.count("lost") == 0, "the write was not run again behind the caller's back"
        assert client.record_event(thread_id, "after").kind == "after", "and the client works after it"


def test_an_async_client_from_a_conn_string_reconnects_and_reports_an_unknown_write(url: str, direct_dsn: str) -> None:
    thread_id = f"drop-{uuid.uuid4()}"

    async def scenario() -> None:
        async with AsyncClient.from_conn_string(url) as client:
            await client.create_session(thread_id)
            with psycopg.connect(direct_dsn, autocommit=True) as admin:
                _terminate_idle(admin)
            assert (await client.get_session(thread_id)).thread_id == thread_id
            loop = asyncio.get_running_loop()

            def lost_event() -> Any:
                return asyncio.run_coroutine_threadsafe(client.record_event(thread_id, "lost"), loop).result(30)

            with _ended_mid_call(direct_dsn, "ai.session_events") as run, pytest.raises(OutcomeUnknown):
                await loop.run_in_executor(None, lambda: run(lost_event))
            assert [e.kind for e in await client.get_events(thread_id)].count("lost") == 0
            assert (await client.record_event(thread_id, "after")).kind == "after"

    asyncio.run(scenario())


SERVICE = "app_service"


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("route", ["direct", "pooler"])
def test_a_graph_run_survives_the_server_ending_its_workers_connections(
    request: pytest.FixtureRequest, direct_dsn: str, flavour: str, route: str
) -> None:
    """While node ``a`` runs, the server ends every backend of the worker's role (its pool's
    idle connections, the renewals'): the checkpoint puts after it are retried on new
    connections, and the run completes in its first attempt."""
    base = direct_dsn if route == "direct" else request.getfixturevalue("pooler_dsn")
    service = dsn_as(base, SERVICE)
    queue = f"drop-{uuid.uuid4().hex[:8]}"
    thread_id = f"drop-{uuid.uuid4()}"
    ended: list[int] = []

    def a(state: State) -> State:
        with psycopg.connect(direct_dsn, autocommit=True) as admin:
            rows = admin.execute(
                "select pg_terminate_backend(pid) from pg_stat_activity where usename = %s and pid <> pg_backend_pid()",
                (SERVICE,),
            ).fetchall()
        ended.append(len(rows))
        return {"n": state["n"] + 1}

    builder = StateGraph(State)
    builder.add_node("a", a)
    builder.add_node("b", lambda s: {"n": s["n"] + 10})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", END)
    graph = builder.compile()
    options: dict[str, Any] = {"queue": queue, "listen": False, "poll_interval": 0.05, "max_attempts": 3}
    with Client.from_conn_string(service) as starter:
        job = GraphRuns(starter, graph, queue=queue).start(thread_id, {"n": 0})
        if flavour == "sync":
            worker = graph_worker(service, graph, **options)
            runner = threading.Thread(target=lambda: worker.run(drain=True, install_signal_handlers=False))
        else:
            aworker = async_graph_worker(service, graph, **options)
            runner = threading.Thread(
                target=lambda: asyncio.run(aworker.run(drain=True, install_signal_handlers=False))
            )
        runner.start()
        runner.join(60)
        assert not runner.is_alive(), "the worker drained the queue"
        done = starter.get_job(job.job_id)
        assert ended and ended[0] >= 1, "the server ended the worker's connections while node a ran"
        assert (done.status, done.attempts, done.result) == ("COMPLETED", 1, {"n": 11}), done
