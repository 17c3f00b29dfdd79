"""The operator CLI, run as the installed console script `agent-state` in a subprocess against the
test database: every subcommand (its --json output parsed), the progress bar, and the error cases
(exit code, one line on stderr, no traceback). Each process is given at most 60 seconds."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from test_migrations import DEPLOY_USER

from agent_state import Client
from agent_state.cli import NOT_DEPLOYED, progress
from agent_state.schema import bundle_version

AGENT_STATE = str(Path(sys.executable).with_name("agent-state"))
HERE = Path(__file__).resolve().parent


def run(*args: str, dsn: str | None = None, env: dict[str, str] | None = None, cwd: Path | None = None) -> Any:
    """The console script with DATABASE_URL=dsn (or none), its CompletedProcess."""
    environment = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    if dsn is not None:
        environment["DATABASE_URL"] = dsn
    environment.update(env or {})
    return subprocess.run(
        [AGENT_STATE, *args], capture_output=True, text=True, env=environment, cwd=cwd, timeout=60, check=False
    )


def run_json(*args: str, dsn: str, cwd: Path | None = None) -> Any:
    done = run(*args, "--json", dsn=dsn, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def assert_error(done: Any, code: int, fragment: str) -> str:
    """Exit code `code`, stderr one line holding `fragment`, no traceback, nothing on stdout."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == code, (done.returncode, done.stderr)
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert fragment in lines[0], lines[0]
    assert done.stdout == ""
    return lines[0]


def ids() -> str:
    return uuid.uuid4().hex[:10]


@pytest.fixture
def as_tenant(role_dsn: Callable[[str], str]) -> Iterator[Client]:
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        yield Client(conn)


# -- basics ---------------------------------------------------------------------------------------


def test_version_and_help() -> None:
    done = run("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == "agent-state 0.1.0"
    done = run("--help")
    assert done.returncode == 0
    for command in ("status", "deploy", "sessions", "show", "lineage", "jobs", "stats", "keys", "queues", "approvals",
                    "approve", "reject", "worker", "import-langgraph", "archive", "restore", "replay"):  # fmt: skip
        assert command in done.stdout


def test_the_database_comes_from_the_option_then_database_url_then_pg_variables(dsn: str, client: Client) -> None:
    thread = f"cli-conn-{ids()}"
    client.create_session(thread)
    params = conninfo_to_dict(dsn)
    # --database-url wins over a DATABASE_URL that points nowhere
    done = run("--database-url", dsn, "sessions", "--json", "--limit", "10000", dsn="postgresql://127.0.0.1:1/x")
    assert done.returncode == 0, done.stderr
    assert thread in {s["thread_id"] for s in json.loads(done.stdout)}
    # after the subcommand too
    done = run("sessions", "--database-url", dsn, "--json", "--limit", "10000", dsn="postgresql://127.0.0.1:1/x")
    assert done.returncode == 0, done.stderr
    assert thread in {s["thread_id"] for s in json.loads(done.stdout)}
    # neither: libpq's PG* variables (make exports PGHOST, PGPORT, PGUSER for the private cluster;
    # those the test's URL names, e.g. a Citus coordinator's, are the server under test)
    pg_variables = {f"PG{key.upper()}": params[key] for key in ("host", "port", "user") if params.get(key)}
    done = run("sessions", "--json", "--limit", "10000", env={**pg_variables, "PGDATABASE": params["dbname"]})
    assert done.returncode == 0, done.stderr
    assert thread in {s["thread_id"] for s in json.loads(done.stdout)}


# -- reads ----------------------------------------------------------------------------------------


def test_sessions_newest_first_by_status_and_owner(dsn: str, as_tenant: Client, client: Client) -> None:
    first, second, mine = f"cli-s1-{ids()}", f"cli-s2-{ids()}", f"cli-s3-{ids()}"
    as_tenant.create_session(first)
    as_tenant.create_session(second)
    as_tenant.set_session_status(first, "completed")
    client.create_session(mine)  # the superuser's own

    listed = [s["thread_id"] for s in run_json("sessions", "--limit", "10000", dsn=dsn)]
    assert [t for t in listed if t in (first, second, mine)] == [mine, second, first]
    completed = run_json("sessions", "--status", "completed", "--owner", "tenant_a", "--limit", "10000", dsn=dsn)
    assert first in [s["thread_id"] for s in completed]
    assert {s["status"] for s in completed} == {"completed"} and {s["owner"] for s in completed} == {"tenant_a"}

    text = run("sessions", "--owner", "tenant_a", "--limit", "10000", dsn=dsn)
    assert text.returncode == 0
    header = ["THREAD", "OWNER", "RUN", "SESSION", "MESSAGES", "CREATED", "UPDATED"]
    assert text.stdout.splitlines()[0].split() == header
    assert any(line.startswith(second) and "active" in line for line in text.stdout.splitlines())


def test_a_tenant_sees_only_its_own_sessions(dsn: str, role_dsn: Callable[[str], str], client: Client) -> None:
    theirs = f"cli-other-{ids()}"
    client.create_session(theirs)
    listed = run_json("sessions", "--limit", "10000", dsn=role_dsn("tenant_a"))
    assert theirs not in {s["thread_id"] for s in listed}
    assert {s["owner"] for s in listed} <= {"tenant_a"}


def test_show_prints_the_timeline_of_a_thread(dsn: str, as_tenant: Client) -> None:
    thread = f"cli-show-{ids()}"
    as_tenant.create_session(thread)
    as_tenant.append_message(thread, "user", "Find me a hotel in Lisbon.")
    checkpoint = as_tenant.put_checkpoint(thread, "", None, None, "json", b"{}", {"source": "loop", "step": 1})
    as_tenant.record_event(thread, "tool_call", {"tool": "search"})

    timeline = run_json("show", thread, dsn=dsn)
    items = [(t["item"], t["ref"], t["label"]) for t in timeline if t["item"] != "event" or t["label"] != "start"]
    assert items == [("message", "1", "user"), ("checkpoint", checkpoint, "loop"), ("event", items[2][1], "tool_call")]
    assert timeline[0]["created_at"] <= timeline[-1]["created_at"]

    text = run("show", thread, dsn=dsn)
    assert text.returncode == 0
    assert "Find me a hotel in Lisbon." in text.stdout and "step=1 root" in text.stdout


def test_lineage_draws_the_checkpoint_tree_with_its_branches(dsn: str, as_tenant: Client) -> None:
    thread = f"cli-tree-{ids()}"
    as_tenant.create_session(thread)
    c1 = as_tenant.put_checkpoint(thread, "", None, None, "json", b"{}", {"step": 1})
    c2 = as_tenant.put_checkpoint(thread, "", None, c1, "json", b"{}", {"step": 2})
    c3 = as_tenant.put_checkpoint(thread, "", None, c2, "json", b"{}", {"step": 3})
    c4 = as_tenant.put_checkpoint(thread, "", None, c2, "json", b"{}", {"step": 3, "source": "fork"})

    tree = run_json("lineage", thread, dsn=dsn)
    assert [(n["checkpoint_id"], n["parent_checkpoint_id"], n["is_current"]) for n in tree] == [
        (c1, None, False), (c2, c1, False), (c3, c2, False), (c4, c2, True),
    ]  # fmt: skip

    text = run("lineage", thread, dsn=dsn).stdout.splitlines()
    assert text[0] == f"thread {thread}: 4 checkpoints, 1 branching"
    assert text[1].startswith(c1)
    assert text[2].startswith(f"└── {c2}")
    assert text[3].startswith(f"    ├── {c3}")
    assert text[4].startswith(f"    └── {c4}  fork  step 3") and text[4].endswith("<- current")

    below = run_json("lineage", thread, c2, dsn=dsn)
    assert {(n["checkpoint_id"], n["parent_checkpoint_id"], n["depth"]) for n in below} == {
        (c2, c1, 0),
        (c3, c2, 1),
        (c4, c2, 1),
    }


def test_jobs_and_stats_of_a_queue(dsn: str, as_tenant: Client, client: Client) -> None:
    queue, thread = f"cli-q-{ids()}", f"cli-jobs-{ids()}"
    as_tenant.create_session(thread)
    first = as_tenant.enqueue_job(thread, {"n": 1}, queue=queue)
    second = as_tenant.enqueue_job(thread, {"n": 2}, queue=queue)
    claimed = client.claim_job("cli-test", queue=queue)
    assert claimed is not None and claimed.job_id == first.job_id

    jobs = run_json("jobs", "--queue", queue, dsn=dsn)
    assert [(j["job_id"], j["status"]) for j in jobs] == [(second.job_id, "PENDING"), (first.job_id, "IN_PROGRESS")]
    pending = run_json("jobs", "--queue", queue, "--status", "pending", dsn=dsn)
    assert [j["job_id"] for j in pending] == [second.job_id]
    assert [j["job_id"] for j in run_json("jobs", "--thread", thread, dsn=dsn)] == [second.job_id, first.job_id]

    [stats] = run_json("stats", "--queue", queue, dsn=dsn)
    assert (stats["queue"], stats["pending"], stats["in_progress"]) == (queue, 1, 1)
    text = run("stats", "--queue", queue, dsn=dsn).stdout.splitlines()
    assert text[0].split()[:4] == ["QUEUE", "PENDING", "DUE", "IN_PROGRESS"] and text[1].split()[:4] == [
        queue,
        "1",
        "1",
        "1",
    ]

    # keys: the tenant's own key, one running and one pending; a limit an operator set
    client.set_job_key(queue, "@tenant_a", max_in_flight=4)
    [key] = run_json("keys", "--queue", queue, dsn=dsn)
    assert (key["key"], key["in_flight"], key["max_in_flight"], key["backlog"]) == ("@tenant_a", 1, 4, 1)
    text = run("keys", "--queue", queue, dsn=dsn).stdout.splitlines()
    assert text[0].split()[:5] == ["QUEUE", "KEY", "WEIGHT", "IN_FLIGHT", "LIMIT"]
    assert text[1].split()[:5] == [queue, "@tenant_a", "1", "1", "4"]
    assert f"{queue}/@tenant_a: 1/4 in flight, 1 pending (1 due)" in run("status", "--verbose", dsn=dsn).stdout
    # queues: the queue's stats, then its keys, in one view
    text = run("queues", "--queue", queue, dsn=dsn).stdout.splitlines()
    assert text[0].split()[:4] == ["QUEUE", "PENDING", "DUE", "IN_PROGRESS"] and text[1].split()[0] == queue
    assert text[3].split()[:2] == ["QUEUE", "KEY"] and text[4].split()[:5] == [queue, "@tenant_a", "1", "1", "4"]
    both = run_json("queues", "--queue", queue, dsn=dsn)
    assert [q["queue"] for q in both["queues"]] == [queue] and [k["key"] for k in both["keys"]] == ["@tenant_a"]
    assert "cli-test until" in run("jobs", "--queue", queue, dsn=dsn).stdout


def _waiting(as_tenant: Client, client: Client, queue: str) -> tuple[str, str, int]:
    """A thread of tenant_a whose job waits for a person at a checkpoint: (thread, checkpoint, job_id)."""
    thread = f"cli-hitl-{ids()}"
    as_tenant.create_session(thread)
    as_tenant.enqueue_job(thread, {"task": "refund"}, queue=queue)
    job = client.claim_job("cli-test", queue=queue)
    assert job is not None
    checkpoint = client.put_checkpoint(thread, "", None, None, "json", b"{}", {"step": 1})
    client.request_human(job.job_id, job.fencing_token, checkpoint, {"refund": 30})
    return thread, checkpoint, job.job_id


def test_approvals_approve_and_reject(
    dsn: str, role_dsn: Callable[[str], str], as_tenant: Client, client: Client
) -> None:
    queue = f"cli-hitl-{ids()}"
    approved, approved_at, approved_job = _waiting(as_tenant, client, queue)
    rejected, rejected_at, rejected_job = _waiting(as_tenant, client, queue)

    waiting = run_json("approvals", "--owner", "tenant_a", "--limit", "10000", dsn=dsn)
    assert {(a["thread_id"], a["checkpoint_id"]) for a in waiting} >= {(approved, approved_at), (rejected, rejected_at)}
    assert next(a for a in waiting if a["thread_id"] == approved)["action"] == {"refund": 30}

    # the superuser acts for nobody: the CLI decides for the thread's owner (ai.act_as)
    approval = run_json("approve", approved, approved_at, "--decision", '{"approved": true, "note": "ok"}', dsn=dsn)
    assert approval["status"] == "resolved" and approval["decision"] == {"approved": True, "note": "ok"}
    assert approval["decided_for"] == "tenant_a"
    job = client.get_job(approved_job)
    assert job.status == "PENDING" and job.payload["human"]["decision"]["note"] == "ok"

    # the tenant itself decides directly
    done = run("reject", rejected, rejected_at, "--reason", "too much", dsn=role_dsn("tenant_a"))
    assert done.returncode == 0, done.stderr
    assert f"of thread {rejected} at checkpoint {rejected_at}" in done.stdout
    assert client.get_job(rejected_job).payload["human"]["decision"] == {"approved": False, "reason": "too much"}

    assert {a["thread_id"] for a in run_json("approvals", "--limit", "10000", dsn=dsn)} & {approved, rejected} == set()
    assert_error(run("approve", approved, approved_at, dsn=dsn), 2, f"approval of thread {approved}")


def test_archive_moves_old_finished_sessions_with_a_progress_bar_and_restore_brings_one_back(
    dsn: str, conn: psycopg.Connection[Any], as_tenant: Client
) -> None:
    thread = f"cli-archive-{ids()}"
    as_tenant.create_session(thread)
    as_tenant.append_message(thread, "user", "old news")
    as_tenant.set_session_status(thread, "completed")
    # finished long ago (as the table's owner): the only session a 9000-day cutoff picks
    conn.execute("update ai.agent_sessions set completed_at = '2000-01-01' where thread_id = %s", (thread,))

    assert run_json("archive", "--older-than", "9000d", "--dry-run", dsn=dsn) == {
        "dry_run": True,
        "sessions": 1,
        "jobs": 0,
    }
    done = run("archive", "--older-than", "9000d", "--batch-size", "1", dsn=dsn)
    assert done.returncode == 0, done.stderr
    assert "archiving sessions: 1/1 (100%)" in done.stderr.splitlines()  # plain progress when not a terminal
    assert done.stdout.strip() == "archived 1 session (3 rows with them) and 0 jobs"  # a message, two events
    assert_error(run("show", thread, dsn=dsn), 2, f"thread {thread} not found")

    restored = run_json("restore", thread, dsn=dsn)
    assert (restored["thread_id"], restored["status"], restored["last_seq"]) == (thread, "completed", 1)
    assert [t["item"] for t in run_json("show", thread, dsn=dsn)].count("message") == 1
    assert run_json("archive", "--older-than", "9000d", "--dry-run", dsn=dsn)["sessions"] == 1
    as_tenant.delete_thread(thread)  # nothing left for the cutoff of a next run on this database


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_is_drawn_in_place_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "rich" or m.startswith("rich.")] or ["rich"]:
        monkeypatch.setitem(sys.modules, name, None)  # the plain bar, even when rich was imported before
    out = _Terminal()
    with progress(4, "archiving", stream=out) as advance:
        advance(1)
        advance(3)
    assert out.getvalue() == f"\rarchiving [{'#' * 7:<30}] 1/4\rarchiving [{'#' * 30}] 4/4\n"


def test_the_progress_bar_is_rich_s_when_rich_is_installed() -> None:
    pytest.importorskip("rich")
    out = _Terminal()
    with progress(4, "archiving", stream=out) as advance:
        advance(4)
    assert "archiving" in out.getvalue() and "4/4" in out.getvalue()


# -- worker and replay --------------------------------------------------------------------------------


def test_worker_runs_a_handler_over_a_queue(dsn: str, as_tenant: Client, tmp_path: Path) -> None:
    queue, thread = f"cli-w-{ids()}", f"cli-worker-{ids()}"
    (tmp_path / "cli_handlers.py").write_text(
        "def double(job, ctx):\n    return {'doubled': job.payload['n'] * 2}\n", encoding="utf-8"
    )
    as_tenant.create_session(thread)
    jobs = [as_tenant.enqueue_job(thread, {"n": n}, queue=queue) for n in (1, 2)]

    done = run("worker", "--handler", "cli_handlers:double", "--queue", queue, "--drain", "--poll-interval", "0.05",
               dsn=dsn, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "2 completed" in done.stderr
    assert [as_tenant.get_job(j.job_id).result for j in jobs] == [{"doubled": 2}, {"doubled": 4}]


def test_worker_stops_on_sigterm(dsn: str, as_tenant: Client, tmp_path: Path) -> None:
    queue, thread = f"cli-t-{ids()}", f"cli-term-{ids()}"
    (tmp_path / "cli_handlers.py").write_text("def done(job, ctx):\n    return 'ok'\n", encoding="utf-8")
    as_tenant.create_session(thread)
    job = as_tenant.enqueue_job(thread, queue=queue)
    environment = {**os.environ, "DATABASE_URL": dsn}
    worker = subprocess.Popen(
        [AGENT_STATE, "worker", "--handler", "cli_handlers:done", "--queue", queue, "--poll-interval", "0.05"],
        cwd=tmp_path, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while as_tenant.get_job(job.job_id).status != "COMPLETED":  # it works, and keeps running
            assert worker.poll() is None, worker.communicate()
            assert time.monotonic() < deadline, "the worker did not complete the job within 60 s"
            time.sleep(0.05)
        worker.send_signal(signal.SIGTERM)
        _, stderr = worker.communicate(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    assert worker.returncode == 0, stderr
    assert stderr.strip().splitlines()[-1].startswith("worker stopped: 1 claimed, 1 completed")


GRAPH_MODULE = """
from typing import TypedDict

from langgraph.graph import START, StateGraph


class State(TypedDict):
    n: int


def step(state: State) -> State:
    return {"n": state["n"] + 1}


builder = StateGraph(State)
builder.add_node("step", step)
builder.add_edge(START, "step")
graph = builder.compile()
"""


def test_worker_runs_durable_graph_runs(dsn: str, as_tenant: Client, tmp_path: Path) -> None:
    pytest.importorskip("langgraph")
    from agent_state.graph_runs import GraphRuns

    (tmp_path / "cli_graphs.py").write_text(GRAPH_MODULE, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        from cli_graphs import graph  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    queue, thread = f"cli-g-{ids()}", f"cli-graph-{ids()}"
    job = GraphRuns(as_tenant, graph, queue=queue).start(thread, {"n": 41})

    done = run("worker", "--graph", "cli_graphs:graph", "--queue", queue, "--drain", "--poll-interval", "0.05",
               dsn=dsn, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "1 completed" in done.stderr
    finished = as_tenant.get_job(job.job_id)
    assert finished.status == "COMPLETED" and finished.result == {"n": 42}
    assert len(run_json("lineage", thread, dsn=dsn)) >= 2  # its checkpoints


def test_replay_passes_and_fails_with_exit_codes_0_and_1(dsn: str, client: Client) -> None:
    thread = f"cli-replay-{ids()}"
    client.create_session(thread)
    client.append_message(thread, "user", "Find me a hotel in Lisbon.")
    checkpoint = client.put_checkpoint(thread, "", None, None, "json", b"{}", {"step": 1})
    client.append_message(thread, "tool_call", {"name": "search", "arguments": {"city": "Lisbon"}})
    client.append_message(thread, "tool_result", {"name": "search", "result": ["Alfama Inn"]})
    client.append_message(thread, "assistant", "Book the Alfama Inn.")

    same = run("replay", thread, "--from", checkpoint, "--run", "replay_candidates:same_as_recorded", "--json",
               dsn=dsn, cwd=HERE)  # fmt: skip
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["passed"] is True
    other = run("replay", thread, "--from", checkpoint, "--run", "replay_candidates:searches_porto", dsn=dsn, cwd=HERE)
    assert other.returncode == 1, other.stderr
    assert other.stdout.strip().endswith("FAIL")


def test_import_langgraph_copies_postgres_saver_threads(dsn: str, role_dsn: Callable[[str], str]) -> None:
    postgres = pytest.importorskip("langgraph.checkpoint.postgres")
    graph_module = pytest.importorskip("langgraph.graph")
    name, thread = f"cli_lg_{ids()}", f"cli-lg-{ids()}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'create database "{name}"')
        try:
            source = make_conninfo(dsn, dbname=name)
            with postgres.PostgresSaver.from_conn_string(source) as saver:
                saver.setup()
                builder = graph_module.StateGraph(dict)
                builder.add_node("step", lambda state: {"n": 1})
                builder.add_edge(graph_module.START, "step")
                builder.compile(checkpointer=saver).invoke({"n": 0}, {"configurable": {"thread_id": thread}})

            report = run_json("import-langgraph", "--from", source, "--thread", thread, dsn=role_dsn("tenant_a"))
            assert report["threads"] == [thread] and report["checkpoints"] >= 2
            tree = run_json("lineage", thread, dsn=role_dsn("tenant_a"))
            assert len(tree) == report["checkpoints"] and tree[0]["parent_checkpoint_id"] is None

            bad = run("import-langgraph", "--from", "postgresql://127.0.0.1:1/x", dsn=dsn)
            assert_error(bad, 2, "cannot connect to the source database (--from)")
        finally:
            admin.execute(f'drop database if exists "{name}" with (force)')


# -- errors: one line, no traceback, exit 2 -------------------------------------------------------


def test_a_bad_or_unreachable_database_is_one_line(dsn: str) -> None:
    assert_error(run("--database-url", "postgresql://%zz", "sessions"), 2, "bad database URL")
    assert_error(run("--database-url", "postgresql://127.0.0.1:1/x", "sessions"), 2, "cannot connect to the database")
    assert_error(run("sessions", dsn=make_conninfo(dsn, dbname="no_such_db_here")), 2, "cannot connect to the database")


@pytest.mark.session_features(
    "creates and drops a database, which the pooler's idle server connections would hold open"
)
def test_a_database_without_the_schema_says_how_to_deploy_it_and_deploy_does(
    dsn: str, conn: psycopg.Connection[Any]
) -> None:
    name = f"cli_empty_{ids()}"
    # Owned by the deploying role, which `deploy` then runs as: a superuser deploy is refused (docs/security.md).
    conn.execute(f'create database "{name}" owner {DEPLOY_USER}')
    try:
        empty = make_conninfo(dsn, dbname=name, user=DEPLOY_USER)
        for args in (("sessions",), ("show", "t"), ("jobs",), ("stats",), ("approvals",), ("archive",)):
            line = assert_error(run(*args, dsn=empty), 2, NOT_DEPLOYED)
            assert line == f"agent-state: {NOT_DEPLOYED}"
        absent = run("status", dsn=empty)
        assert (absent.returncode, absent.stdout.strip()) == (1, NOT_DEPLOYED)  # a verdict: exit 1

        done = run("deploy", dsn=empty)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("deployed schema ai version ") and "from the bundle" in done.stdout
        state = run_json("status", dsn=empty)
        assert (state["deployed"], state["source"], state["compatible"]) == (True, "bundle", True)
        # the version is the plan's last change; changes lists a reworked change once, at its first
        # place, so a change added after the release tag may come after it
        assert "operator_reads" in state["changes"] and state["version"] == bundle_version() in state["changes"]
        assert run_json("sessions", dsn=empty) == []
        again = run("deploy", dsn=empty)
        assert again.returncode == 0 and "already deployed" in again.stdout and "nothing to do" in again.stdout
        with psycopg.connect(empty, autocommit=True) as scratch:  # a schema from before ai.list_jobs
            scratch.execute("drop function ai.list_jobs(text, text, text, integer, bigint)")
        assert_error(run("jobs", dsn=empty), 2, "the database's schema is older than this agent-state")
    finally:
        conn.execute(f'drop database "{name}"')


def test_status_of_a_database_deployed_with_sqitch(dsn: str) -> None:
    state = run_json("status", dsn=dsn)
    assert (state["deployed"], state["source"], state["compatible"], state["missing"]) == (True, "sqitch", True, [])
    assert state["changes"][0] == "schema" and state["version"] == bundle_version() in state["changes"]
    text = run("status", dsn=dsn)
    assert text.returncode == 0
    assert text.stdout.startswith(f"schema ai is deployed with sqitch: version {state['version']}, ")
    assert "  operator_reads" not in text.stdout.splitlines()  # one screen: the changes with --verbose
    assert "  operator_reads" in run("status", "--verbose", dsn=dsn).stdout.splitlines()


def test_unknown_threads_and_checkpoints_are_one_line(dsn: str, as_tenant: Client) -> None:
    thread = f"cli-known-{ids()}"
    as_tenant.create_session(thread)
    assert_error(run("show", "cli-no-such-thread", dsn=dsn), 2, "thread cli-no-such-thread not found")
    assert_error(run("lineage", "cli-no-such-thread", dsn=dsn), 2, "thread cli-no-such-thread not found")
    assert_error(run("lineage", thread, "nope", dsn=dsn), 2, f"checkpoint nope of thread {thread} not found")
    assert_error(run("restore", "cli-no-such-thread", dsn=dsn), 2, "archived thread cli-no-such-thread not found")
    assert_error(run("approve", thread, "nope", dsn=dsn), 2, f"thread {thread} does not wait for a person")


def test_a_bad_module_attr_is_one_line(dsn: str) -> None:
    assert_error(run("worker", "--handler", "no_colon", dsn=dsn), 2, "--handler takes module:attr, not 'no_colon'")
    assert_error(run("worker", "--handler", "no_such_module_x:f", dsn=dsn), 2, "cannot import 'no_such_module_x'")
    assert_error(run("worker", "--handler", "json:no_such_function", dsn=dsn), 2, "has no attribute 'no_such_function'")
    assert_error(run("worker", "--graph", "json:no_such_graph", dsn=dsn), 2, "has no attribute 'no_such_graph'")
    assert_error(run("worker", "--graph", "json:dumps", dsn=dsn), 2, "not a compiled LangGraph graph")
    assert_error(
        run("replay", "t", "--from", "c", "--run", "no_such_module_x:f", dsn=dsn), 2, "cannot import 'no_such_module_x'"
    )


def test_usage_errors_are_one_line_with_exit_code_2(dsn: str) -> None:
    # (a bare `agent-state` prints its usage: test_cli_operator.py)
    assert_error(run("--database-url", dsn, dsn=dsn), 2, "the following arguments are required: COMMAND")
    assert_error(run("sessions", "--limit", "many", dsn=dsn), 2, "invalid int value: 'many'")
    assert_error(run("archive", "--older-than", "90 days", dsn=dsn), 2, "not a duration like 90d")
    assert_error(run("approve", "t", "c", "--decision", "{oops", dsn=dsn), 2, "not JSON")
    assert_error(run("jobs", "--status", "sleeping", dsn=dsn), 2, "invalid choice: 'SLEEPING'")
    assert_error(run("sessions", "--limit", "0", dsn=dsn), 2, "max_rows must be between 1 and 10000, not 0")
