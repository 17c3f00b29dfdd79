"""A prune racing a run never leaves a thread unreadable (issue 34, item 2).

A run's delta puts sit in an open transaction (a saver on a connection that is not in autocommit:
the values extend the versions it read, stored by an earlier run) while another connection
deletes: ``ai.prune_checkpoints`` (both strategies), ``ai.prune_idle_threads`` and
``ai.delete_for_runs``. The race is made deterministic: the deleting call starts once the puts are
in, the test waits (bounded) until it waits on a lock or has returned, then commits the run. After
both, every checkpoint left reads back (``get_tuple``, ``list``, ``invoke`` on), as with LangGraph's
stock saver. Threads belong to a login role made for the test, so the idle-threads walk touches
no other test's rows.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Annotated, Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from psycopg import sql
from psycopg_pool import ConnectionPool
from typing_extensions import TypedDict
from waiting import waits_on_a_lock

from agent_state.langgraph import AgentStateSaver

pytestmark = pytest.mark.session_features("waits on the deleting backend's pid in pg_stat_activity")

#: how long the deleting call may take to start waiting (or to return) before the run commits
WAIT_SECONDS = 10.0


class Chat(TypedDict):
    messages: Annotated[list[Any], add_messages]


def _graph(checkpointer: Any) -> Any:
    def reply(state: Chat) -> dict[str, Any]:
        return {"messages": [AIMessage(f"reply {len(state['messages'])}", id=str(uuid.uuid4()))]}

    def again(state: Chat) -> dict[str, Any]:
        return {"messages": [AIMessage(f"again {len(state['messages'])}", id=str(uuid.uuid4()))]}

    builder = StateGraph(Chat)
    builder.add_node("reply", reply)
    builder.add_node("again", again)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", "again")
    builder.add_edge("again", END)
    return builder.compile(checkpointer=checkpointer)


def _turn(graph: Any, thread: str, run_id: str, text: str) -> None:
    graph.invoke(
        {"messages": [HumanMessage(text, id=str(uuid.uuid4()))]},
        {"configurable": {"thread_id": thread}, "metadata": {"run_id": run_id}},
        durability="sync",
    )


@pytest.fixture
def racer(dsn: str) -> Iterator[str]:
    """A login of its own (a member of ai_user): its threads are the only ones its calls see."""
    role = f"h_race_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("create role {} login in role ai_user").format(sql.Identifier(role)))
    params = psycopg.conninfo.conninfo_to_dict(dsn)
    params["user"] = role
    yield psycopg.conninfo.make_conninfo(**params)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("drop role {}").format(sql.Identifier(role)))


def _waits_or_ends(observer: psycopg.Connection[Any], pid: int, done: threading.Event) -> str:
    """'waits' once the deleting call waits on a lock, 'ended' if it returned first."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if done.is_set():
            return "ended"
        if waits_on_a_lock(observer, pid):
            return "waits"
        time.sleep(0.01)
    return "timed out"


def _as(dsn: str, user: str) -> str:
    params = psycopg.conninfo.conninfo_to_dict(dsn)
    params["user"] = user
    return psycopg.conninfo.make_conninfo(**params)


def _race(
    racer: str,
    dsn: str,
    deleting: Callable[[str, str, str], str],
    *,
    as_service: bool = False,
    expect: str | None = "waits",
    isolation: psycopg.IsolationLevel | None = None,
    failed: list[BaseException] | None = None,
) -> tuple[str, ConnectionPool[Any]]:
    """A thread of two runs (the second in flight while `deleting` runs), then the pool to read it."""
    thread = f"race-{uuid.uuid4()}"
    first_run = str(uuid.uuid4())
    pool: ConnectionPool[Any] = ConnectionPool(racer, min_size=1, max_size=2, kwargs={"autocommit": True}, open=True)
    graph = _graph(AgentStateSaver(pool))
    for turn in range(3):
        _turn(graph, thread, first_run, f"turn {turn}")
    if as_service:  # archive_sessions takes completed sessions
        with psycopg.connect(racer, autocommit=True) as owner:
            owner.execute("select ai.set_session_status(%s, 'completed')", (thread,))
    deleter = _as(dsn, "app_service") if as_service else racer
    role = str(psycopg.conninfo.conninfo_to_dict(racer)["user"])
    with (
        psycopg.connect(racer) as run_conn,
        psycopg.connect(deleter, autocommit=True) as other,
        psycopg.connect(dsn, autocommit=True) as observer,
    ):
        run_conn.execute("select 1")  # the caller's transaction: the saver's calls join it, uncommitted
        in_flight = _graph(AgentStateSaver(run_conn))  # reads, then puts deltas of what it read
        _turn(in_flight, thread, str(uuid.uuid4()), "in flight")
        assert run_conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        # the committed run stored deltas, so the in-flight one extends versions of it
        stored = observer.execute(
            "select count(*) from ai.checkpoint_blobs where thread_id = %s and base_version is not null", (thread,)
        ).fetchone()
        assert stored is not None and stored[0] > 0
        pid = other.info.backend_pid
        other.isolation_level = isolation
        done = threading.Event()
        expected_failure = failed is not None
        failed = [] if failed is None else failed

        def delete() -> None:
            try:
                with other.transaction():
                    if as_service:
                        other.execute("select ai.act_as(%s)", (role,))
                    other.execute(deleting(thread, first_run, role))
            except BaseException as e:
                failed.append(e)
            finally:
                done.set()

        worker = threading.Thread(target=delete)
        worker.start()
        # it waits for the run's puts (pre-fix it ran through, and deleted the bases of their deltas)
        outcome = _waits_or_ends(observer, pid, done)
        assert outcome == expect if expect else outcome != "timed out"
        run_conn.commit()
        worker.join(WAIT_SECONDS)
        assert done.is_set()
        assert expected_failure or not failed, failed
    return thread, pool


def _readable(pool: ConnectionPool[Any], thread: str) -> None:
    saver = AgentStateSaver(pool)
    config: Any = {"configurable": {"thread_id": thread}}
    saver.get_tuple(config)
    for found in saver.list(config):
        saver.get_tuple(found.config)
    graph = _graph(saver)
    _turn(graph, thread, str(uuid.uuid4()), "after the race")
    assert graph.get_state(config).values["messages"][-1].content.startswith("again")


DELETING: dict[str, Callable[[str, str, str], str]] = {
    "prune_delete": lambda thread, run, role: f"select ai.prune_checkpoints(array['{thread}'], 'delete')",
    "prune_keep_latest": lambda thread, run, role: f"select ai.prune_checkpoints(array['{thread}'], 'keep_latest')",
    "idle_delete": lambda thread, run, role: "select * from ai.prune_idle_threads('0 seconds', 'delete')",
    "idle_keep_latest": lambda thread, run, role: "select * from ai.prune_idle_threads('0 seconds', 'keep_latest')",
    "delete_for_runs": lambda thread, run, role: f"select ai.delete_for_runs(array['{run}'])",
}


@pytest.mark.parametrize("path", list(DELETING))
def test_every_checkpoint_left_by_a_delete_racing_a_run_reads_back(path: str, racer: str, dsn: str) -> None:
    thread, pool = _race(racer, dsn, DELETING[path])
    with pool:
        _readable(pool, thread)


def test_archiving_skips_a_thread_whose_run_is_in_flight(racer: str, dsn: str) -> None:
    # ai.archive_sessions takes its sessions "for update skip locked": one a put holds is left for
    # the next batch, whole, and reads back (the role acted for: only its sessions are archived)
    thread, pool = _race(
        racer,
        dsn,
        lambda thread, run, role: "select * from ai.archive_sessions('0 seconds')",
        as_service=True,
        expect="ended",
    )
    with pool:
        _readable(pool, thread)


@pytest.mark.parametrize("isolation", [psycopg.IsolationLevel.REPEATABLE_READ, psycopg.IsolationLevel.SERIALIZABLE])
@pytest.mark.parametrize("path", list(DELETING))
def test_a_delete_in_a_snapshot_older_than_the_run_is_refused_or_harmless(
    path: str, isolation: psycopg.IsolationLevel, racer: str, dsn: str
) -> None:
    # The caller's transaction keeps the snapshot its first statement took: a delete in it does not
    # see what the run committed while it waited, so it must not delete the versions the run's
    # deltas extend. Refused with AS062 (the caller retries at read committed), or harmless.
    failed: list[BaseException] = []
    thread, pool = _race(racer, dsn, DELETING[path], isolation=isolation, failed=failed, expect=None)
    assert all(getattr(e, "sqlstate", None) == "AS062" for e in failed), failed
    with pool:
        _readable(pool, thread)
