"""docs/cli.md's examples of the commands that act (`lineage`, `approve`/`reject`, `archive`,
`restore`, `replay`, `import-langgraph`, `worker`, `memory`), run on a fresh database holding the threads the
docs name (trip-42, trip-17, ...): each documented command line is the one run, and each line it
prints has the shape the docs show. A shape keeps the docs' words, spacing and punctuation and lets
only what differs from run to run vary: ids, times and counts (see :func:`shape`).

test_docs_facts.py runs the examples of `deploy`, `status` and the read commands."""

from __future__ import annotations

import re
import shlex
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from conftest import dsn_as
from psycopg import sql
from psycopg.conninfo import make_conninfo
from test_docs_facts import ROOT, _cli, _text

from agent_state import Client

# what varies between the docs and a run: an id the docs cut ("01M8S4B1Y6…"), a checkpoint id, a
# time, a number (counts, job and eval ids, scores); everything else is matched as written
VARIABLE = re.compile(
    r"(?P<cut>[0-9A-Z]{6,}…)|(?P<ulid>\b[0-9A-HJKMNP-TV-Z]{26}\b)"
    r"|(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)|(?P<number>\d+(?:\.\d+)?)"
)
PATTERN = {"cut": r"\S+", "ulid": r"[0-9A-HJKMNP-TV-Z]{26}", "time": r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d",
           "number": r"\d+(?:\.\d+)?"}  # fmt: skip


def shape(line: str) -> str:
    """The regular expression of a documented line: its text as written, its variable parts as above."""
    out, last = [], 0
    for m in VARIABLE.finditer(line):
        out.append(re.escape(line[last : m.start()]))
        out.append(PATTERN[str(m.lastgroup)])
        last = m.end()
    out.append(re.escape(line[last:]))
    return "".join(out)


def test_shape_keeps_the_words_and_lets_ids_times_and_counts_vary() -> None:
    documented = "replayed trip-42 from 01M8S2M8WMAD5N7CCAJBZJ74DQ on fork 01M8S4B1Y6… at 2026-12-01 15:12:32"
    assert re.fullmatch(shape(documented), "replayed trip-42 from 01KBGS0Z8J6YJ9Y9H3M2Q1VRCD on fork "
                                           "01KBGS0ZB2X8Z3WJ4G0J5S6T7V at 2026-12-02 09:00:01")  # fmt: skip
    assert not re.fullmatch(shape(documented), "replayed trip-42 from 01KBGS0Z8J6YJ9Y9H3M2Q1VRCD onto fork x at "
                                               "2026-12-02 09:00:01")  # fmt: skip
    assert not re.fullmatch(shape("tools: 2 recorded"), "tools: 2 recorded, 0 replayed")


def examples(subcommand: str) -> list[tuple[list[str], list[str]]]:
    """The (command's arguments, printed lines) of each `$ agent-state ...` line of docs/cli.md's
    console block whose first command is `subcommand`."""
    blocks = re.findall(r"```console\n(.*?)```", _text(ROOT / "docs" / "cli.md"), re.S)
    [block] = [b for b in blocks if re.match(rf"\$ agent-state {re.escape(subcommand)}\b", b)]
    out: list[tuple[list[str], list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out.append((shlex.split(line.removeprefix("$ agent-state ").split("  #")[0]), []))
        else:
            out[-1][1].append(line)
    return out


def assert_ran_as_documented(documented: list[str], args: list[str], printed: list[str], shown: list[str]) -> None:
    assert len(documented) == len(args), (documented, args)
    assert all(re.fullmatch(shape(d), a) for d, a in zip(documented, args, strict=True)), (documented, args)
    wrong = [(p, s) for p, s in zip(printed, shown, strict=False) if not re.fullmatch(shape(s), p)]
    assert wrong == [] and len(printed) == len(shown), f"docs/cli.md shows {shown}, it prints {printed}"


@pytest.fixture(scope="module")
def docs_template(module_dsn: str) -> Iterator[str]:
    """An empty database deployed by `agent-state deploy`, once for the file; each test works on a
    copy of it (docs_database), not on it (a copy needs it idle)."""
    name = f"docs_template_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(module_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("create database {} owner agent_state_owner").format(sql.Identifier(name)))
    try:
        deployed = _cli(dsn_as(make_conninfo(module_dsn, dbname=name), "agent_state_owner"), "deploy")
        assert deployed.returncode == 0, deployed.stderr
        yield name
    finally:
        with psycopg.connect(module_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("drop database {} with (force)").format(sql.Identifier(name)))


@pytest.fixture
def docs_database(docs_template: str, direct_dsn: str) -> Iterator[tuple[str, str]]:
    """A copy of docs_template, the database `agent-state deploy` deployed (``create database ...
    template``, under a second instead of a deploy per test): (the service's URL, the superuser's
    URL). Each test makes the docs' threads (trip-42, ...) in a database of its own."""
    name = f"docs_{uuid.uuid4().hex[:8]}"
    create = sql.SQL("create database {} template {} owner agent_state_owner")
    with psycopg.connect(direct_dsn, autocommit=True) as admin:
        admin.execute(create.format(sql.Identifier(name), sql.Identifier(docs_template)))
    superuser = make_conninfo(direct_dsn, dbname=name)
    try:
        yield dsn_as(superuser, "app_service"), superuser
    finally:
        with psycopg.connect(direct_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("drop database {} with (force)").format(sql.Identifier(name)))


def _trip_42(tenant: Client) -> list[str]:
    """trip-42 as docs/cli.md draws it: a root input, a loop step, then a branch where the state was
    updated, whose next step is the current checkpoint. Its checkpoint ids, oldest first."""
    tenant.create_session("trip-42")
    tenant.append_message("trip-42", "user", "Plan three days in Lisbon.")
    c1 = tenant.put_checkpoint("trip-42", "", None, None, "json", b"{}", {"source": "input", "step": -1})
    c2 = tenant.put_checkpoint("trip-42", "", None, c1, "json", b"{}", {"source": "loop", "step": 0})
    for tool in ("search", "book"):
        tenant.append_message("trip-42", "tool_call", {"name": tool, "arguments": {"city": "Lisbon"}})
        tenant.append_message("trip-42", "tool_result", {"name": tool, "result": ["Alfama Inn"]})
    tenant.append_message("trip-42", "assistant", "Day 1: Alfama ...")
    c3 = tenant.put_checkpoint("trip-42", "", None, c2, "json", b"{}", {"source": "loop", "step": 1})
    c4 = tenant.put_checkpoint("trip-42", "", None, c2, "json", b"{}", {"source": "update", "step": 1})
    c5 = tenant.put_checkpoint("trip-42", "", None, c4, "json", b"{}", {"source": "loop", "step": 2})
    return [c1, c2, c3, c4, c5]


CANDIDATE = """
from agent_state import Client


def new_prompt(client: Client, fork: str, checkpoint_id: str) -> None:
    for tool in ("search", "book"):
        client.append_message(fork, "tool_call", {"name": tool, "arguments": {"city": "Lisbon"}})
        client.append_message(fork, "tool_result", {"name": tool, "result": ["Alfama Inn"]})
    client.append_message(fork, "assistant", "Day 1: Alfama ...")
"""


def test_the_lineage_and_replay_examples(docs_database: tuple[str, str], tmp_path: Path) -> None:
    service, superuser = docs_database
    with psycopg.connect(dsn_as(superuser, "tenant_a"), autocommit=True) as conn:
        ids = _trip_42(Client(conn))

    [(documented, shown)] = examples("lineage")
    done = _cli(service, *documented)
    assert done.returncode == 0, done.stderr
    assert_ran_as_documented(documented, documented, done.stdout.splitlines(), shown)

    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "__init__.py").write_text("")
    (tmp_path / "evals" / "candidates.py").write_text(textwrap.dedent(CANDIDATE))
    [(documented, shown)] = examples("replay")
    args = ["replay", "trip-42", "--from", ids[1], *documented[4:]]
    done = _cli(service, *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert_ran_as_documented(documented, args, done.stdout.splitlines(), shown)


def test_the_approve_and_reject_examples(docs_database: tuple[str, str]) -> None:
    service, superuser = docs_database
    waiting = {}
    with psycopg.connect(dsn_as(superuser, "tenant_a"), autocommit=True) as conn:
        tenant = Client(conn)
        for thread in ("trip-42", "trip-43"):
            tenant.create_session(thread)
            tenant.enqueue_job(thread, {"task": "publish"}, queue="graph-runs")
    with psycopg.connect(service, autocommit=True) as conn:
        client = Client(conn)
        for _ in range(2):
            job = client.claim_job("web-1", queue="graph-runs")
            assert job is not None
            checkpoint = client.put_checkpoint(job.thread_id, "", None, None, "json", b"{}", {"step": 1})
            client.request_human(job.job_id, job.fencing_token, checkpoint, [{"publish": ["draft 1"]}])
            waiting[job.thread_id] = checkpoint

    _listing, *decisions = examples("approvals")
    for documented, shown in decisions:
        args = [documented[0], documented[1], waiting[documented[1]], *documented[3:]]
        done = _cli(service, *args)
        assert done.returncode == 0, done.stderr
        assert_ran_as_documented(documented, args, done.stdout.splitlines(), shown)
    assert len(decisions) == 2


def test_the_archive_and_restore_examples(docs_database: tuple[str, str]) -> None:
    service, superuser = docs_database
    with psycopg.connect(dsn_as(superuser, "tenant_a"), autocommit=True) as conn:
        tenant = Client(conn)
        for thread in ("trip-17", "trip-18"):
            tenant.create_session(thread)
            tenant.append_message(thread, "user", "Plan a weekend in Porto.")
            tenant.append_message(thread, "assistant", "Day 1: Ribeira ...")
            tenant.enqueue_job(thread, {"task": "plan"})
    with psycopg.connect(service, autocommit=True) as conn:
        client = Client(conn)
        for _ in range(2):
            job = client.claim_job("web-1")
            assert job is not None
            client.complete_job(job.job_id, job.fencing_token, {"ok": True})
    with psycopg.connect(superuser, autocommit=True) as conn:  # finished long ago
        conn.execute("update ai.agent_sessions set status = 'completed', completed_at = now() - interval '1 year'")
        conn.execute("update ai.agent_jobs set finished_at = now() - interval '1 year'")

    for documented, shown in examples("archive"):
        done = _cli(service, *documented)
        assert done.returncode == 0, done.stderr
        bars = [line for line in shown if line.startswith("archiving ")]  # drawn on stderr
        assert [line.split(" [")[0] for line in bars] == [
            line.split(":")[0] for line in done.stderr.splitlines() if line.startswith("archiving ")
        ]
        assert_ran_as_documented(documented, documented, done.stdout.splitlines(), shown[len(bars) :])

    [(documented, shown)] = examples("restore")
    done = _cli(service, *documented)
    assert done.returncode == 0, done.stderr
    assert_ran_as_documented(documented, documented, done.stdout.splitlines(), shown)


def test_the_import_langgraph_example(docs_database: tuple[str, str]) -> None:
    postgres = pytest.importorskip("langgraph.checkpoint.postgres")
    graph = pytest.importorskip("langgraph.graph")
    _service, superuser = docs_database
    with psycopg.connect(superuser, autocommit=True) as conn:  # PostgresSaver's tables, in a schema of their own
        conn.execute("create schema old_app")
    source = make_conninfo(superuser, options="-c search_path=old_app")
    with postgres.PostgresSaver.from_conn_string(source) as saver:
        saver.setup()
        builder = graph.StateGraph(dict)
        builder.add_node("step", lambda state: {"n": 1})
        builder.add_edge(graph.START, "step")
        app = builder.compile(checkpointer=saver)
        for thread in ("trip-42", "trip-43", "trip-44"):
            app.invoke({"n": 0}, {"configurable": {"thread_id": thread}})

    [(documented, shown)] = examples("import-langgraph")
    args = [documented[0], "--from", source, *documented[3:]]
    done = _cli(dsn_as(superuser, "tenant_a"), *args)
    assert done.returncode == 0, done.stderr
    assert_ran_as_documented([*documented[:2], source, *documented[3:]], args, done.stdout.splitlines(), shown)


def test_the_worker_examples(docs_database: tuple[str, str], tmp_path: Path) -> None:
    """The `sh` block's two workers, each with --drain so that it stops once its queue is empty,
    over a module `app` as the docs name it; and the demo's `cd examples && ... demo:graph`."""
    pytest.importorskip("langgraph")
    service, superuser = docs_database
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "agent.py").write_text(textwrap.dedent("""
        from langgraph.graph import START, StateGraph

        builder = StateGraph(dict)
        builder.add_node("step", lambda state: {"n": state["n"] + 1})
        builder.add_edge(START, "step")
        graph = builder.compile()
    """))  # fmt: skip
    (tmp_path / "app" / "jobs.py").write_text("def handle(job, ctx):\n    return {'sent': job.payload['to']}\n")
    block = re.search(r"### `worker`\n\n```sh\n(.*?)```", _text(ROOT / "docs" / "cli.md"), re.S)
    assert block is not None
    commands = [shlex.split(line.split("#")[0])[1:] for line in block.group(1).splitlines()]
    assert [c[:2] for c in commands] == [["worker", "--graph"], ["worker", "--handler"]]

    from agent_state.graph_runs import GraphRuns

    with psycopg.connect(dsn_as(superuser, "tenant_a"), autocommit=True) as conn:
        tenant = Client(conn)
        tenant.create_session("trip-42")
        tenant.create_session("mail-1")
        sys.path.insert(0, str(tmp_path))
        try:
            from app.agent import graph  # type: ignore[import-not-found]
        finally:
            sys.path.remove(str(tmp_path))
        run = GraphRuns(tenant, graph).start("trip-42", {"n": 41})
        mail = tenant.enqueue_job("mail-1", {"to": "ana@example.com"}, queue="emails")
        for args in commands:
            done = _cli(service, *args, "--drain", "--poll-interval", "0.05", cwd=tmp_path)
            assert done.returncode == 0, done.stderr
        assert tenant.get_job(run.job_id).result == {"n": 42}
        assert tenant.get_job(mail.job_id).result == {"sent": "ana@example.com"}

    demo = re.search(r"`cd examples && agent-state (worker --graph demo:graph)`", _text(ROOT / "docs" / "cli.md"))
    assert demo is not None
    done = _cli(service, *demo.group(1).split(), "--drain", "--poll-interval", "0.05", cwd=ROOT / "examples")
    assert done.returncode == 0, done.stderr


def test_the_memory_examples(docs_database: tuple[str, str]) -> None:
    """The `memory` block's commands, as a tenant holding three items of users/alice: `ls` lists the
    namespace, `--items --query` finds the item, `show` prints its value, `rm` deletes it; then
    `archive` and `restore` print what the block shows."""
    _service, superuser = docs_database
    tenant = dsn_as(superuser, "tenant_a")
    with psycopg.connect(tenant, autocommit=True) as conn:
        client = Client(conn)
        client.put_memory(("users", "alice"), "prefs", {"theme": "dark theme", "language": "pt"})
        client.put_memory(("users", "alice"), "home", {"city": "Lisbon"})
        client.put_memory(("users", "alice"), "diet", {"likes": "fish"})
    steps = examples("memory")
    assert [args[:2] for args, _ in steps] == [["memory", c] for c in ("ls", "ls", "show", "rm", "archive", "restore")]
    printed = []
    for args, shown in steps:
        done = _cli(tenant, *args)
        assert done.returncode == 0, (args, done.stderr)
        printed.append(done.stdout)
        if shown:  # the others' blocks show a comment, not their output
            assert_ran_as_documented(args, args, done.stdout.splitlines(), shown)
    assert "users/alice" in printed[0] and "prefs" in printed[1] and '"theme": "dark theme"' in printed[2]
    assert _cli(tenant, *steps[2][0]).returncode == 2  # removed: show exits 2
