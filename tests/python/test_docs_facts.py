"""Facts the docs and the catalog's comments state that a machine can check (issue 22: docs that
cannot go stale). Each test reads the text as a reader would and compares it with the tree, the
catalog or a run of the command it shows:

* the Python names the docs give (`agent_state.x.y`) exist;
* no doc states a count of pgTAP files other than the tree's;
* the code ranges of the essay of deploy/errors.sql hold for the codes each change inserts;
* COMMENTs against the catalog: every SQLSTATE a comment names is in ai.error_codes; a row-rule
  function's comment says when its CHECK calls it (every row, or only for a row the plain
  expression in front refuses); "Internal" comments are the ai._* functions, granted to no role;
  "For ai_service" ones are executable by ai_service and not by ai_user;
* the README's diagram marks "(fenced)" only calls that take a fencing token; every `ai.name(`
  the docs show is a function of schema ai;
* no tracked file holds a merge's conflict markers; every repository path a doc, a deploy script or
  a Python module names (`python/agent_state/x.py`, `scripts/x.sh`, ...) exists; no doc installs
  the package by a name on a package index (it is not on one: README, "Use it in your database");
* docs/cli.md's examples of `--version`, `deploy` and `status` print what the commands print, and
  those of `sessions`, `jobs`, `stats`, `approvals` and `show` the columns the commands print
  (test_docs_cli_examples.py runs the rest of its examples, line by line).
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import dsn_as
from sql_objects import read_plan

from agent_state import tracing

ROOT = Path(__file__).resolve().parents[2]
DOCS = [
    ROOT / "README.md",
    ROOT / "CHANGELOG.md",
    ROOT / "CONTRIBUTING.md",
    *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "sql-api.md"),
]


def _text(path: Path) -> str:
    return path.read_text()


# ---------------------------------------------------------------------------------------------
# The tree

CONFLICT = re.compile(r"^(<{7}|={7}|>{7})( |$)", re.M)


def _tracked() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [ROOT / name for name in listed.decode().split("\0") if name]


def test_no_tracked_file_holds_conflict_markers() -> None:
    found = []
    for path in _tracked():
        try:
            text = path.read_text()
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue  # binary (the screenshots), or deleted in the work tree
        found += [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}" for m in CONFLICT.finditer(text)]
    assert not found, found


# a path of the repository as prose names it: python/agent_state/x.py, scripts/x.sh, deploy/x.sql, ...
REPO_PATH = re.compile(
    r"(?<![\w/.-])((?:python/agent_state|scripts|deploy|revert|verify|tests/python|tests/pgtap|bench|examples|docs)"
    r"/[\w./-]*\w\.(?:py|sh|sql|md|bash))"
)


def test_every_repository_path_the_docs_and_deploy_scripts_name_exists() -> None:
    sources = [*DOCS, *sorted((ROOT / "deploy").glob("*.sql")), *sorted((ROOT / "python/agent_state").rglob("*.py"))]
    missing = [
        f"{path.relative_to(ROOT)}: {named}"
        for path in sources
        if "@" not in path.name  # sqitch's rework copies are history
        for named in sorted(set(REPO_PATH.findall(_text(path))))
        if not (ROOT / named).exists() and "<" not in named and "*" not in named
    ]
    assert not missing, missing


def test_no_doc_installs_the_package_from_an_index() -> None:
    """agent-state is not on PyPI: `pip install agent-state` fails (issue 37). The docs install it
    from a clone (`pip install './python[extra]'`); README says so on its first screen."""
    index = re.compile(r"pip install ['\"]?agent-state\b(?!`? fails)")
    current = [p for p in DOCS if p.name != "CHANGELOG.md"]  # the changelog is history
    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in current for m in index.finditer(_text(p))]
    assert not found, found


TELEMETRY = tracing.TELEMETRY_NAMES | {i[2] for i in tracing.INSTRUMENTS}


def test_the_python_names_the_docs_give_exist() -> None:
    """`agent_state.setup()` was in the changelog of 0.1.0; there is no such function."""
    missing = []
    for path in DOCS:
        for name in sorted(set(re.findall(r"`(agent_state(?:\.[A-Za-z_][A-Za-z0-9_]*)+)", _text(path)))):
            if name in TELEMETRY:  # a span attribute, event or instrument (docs/observability.md), no Python name
                continue
            parts = name.split(".")
            # the longest importable module, then attributes
            for cut in range(len(parts), 0, -1):
                try:
                    obj: Any = importlib.import_module(".".join(parts[:cut]))
                except ImportError:
                    continue
                for attr in parts[cut:]:
                    obj = getattr(obj, attr, None)
                    if obj is None:
                        missing.append(f"{path.relative_to(ROOT)}: {name}")
                        break
                break
            else:
                missing.append(f"{path.relative_to(ROOT)}: {name}")
    assert missing == [], "names the docs give that the package does not have:\n" + "\n".join(missing)


def _pgtap_files() -> int:
    return sum(1 for p in (ROOT / "tests" / "pgtap").rglob("*.sql") if "fixtures" not in p.parts)


def test_no_doc_states_a_count_of_pgtap_files_other_than_the_trees() -> None:
    """docs/reliability.md said 284 files for a month after the tree had 398."""
    count = _pgtap_files()
    wrong = []
    for path in DOCS:
        for m in re.finditer(r"pgTAP[^|\n]{0,40}?\b(\d[\d,]*) (?:of (\d[\d,]*) )?files", _text(path)):
            stated = int((m.group(2) or m.group(1)).replace(",", ""))
            if stated != count:
                wrong.append(f"{path.relative_to(ROOT)}: {m.group(0)!r} (the tree has {count})")
    assert wrong == [], "\n".join(wrong)


def _inserted_codes(script: str) -> set[str]:
    return set(re.findall(r"\('(AS\d{3})'", script)) if "insert into ai.error_codes" in script else set()


def test_the_code_ranges_of_the_errors_essay_hold() -> None:
    """deploy/errors.sql names, per change, the range of the codes it adds; each change's rows are
    in its range, and every change that adds codes is named."""
    essay = _text(ROOT / "deploy" / "errors.sql").split("begin;", 1)[0]
    ranges = {
        m.group(1): (int(m.group(2)), int(m.group(3) or m.group(2)))
        for m in re.finditer(r"\b([a-z_]+) AS(\d{3})(?:-AS(\d{3}))?", essay)
    }
    assert ranges, "deploy/errors.sql states no ranges"
    changes = {e.change for e in read_plan(_text(ROOT / "sqitch.plan")) if e.tag is None}
    wrong = []
    for change in sorted(changes - {"errors"}):
        codes = _inserted_codes(_text(ROOT / "deploy" / f"{change}.sql"))
        if codes and change not in ranges:
            wrong.append(f"{change} adds {sorted(codes)}: the essay names no range for it")
        for code in sorted(codes):
            low, high = ranges.get(change, (0, 999))
            if not low <= int(code[2:]) <= high:
                wrong.append(f"{change} adds {code}, outside its range AS{low:03}-AS{high:03}")
    for name in sorted(set(ranges) - changes):
        wrong.append(f"the essay names a range for {name}, which is no change of the plan")
    assert all(int(c[2:]) < 10 for c in _inserted_codes(_text(ROOT / "deploy" / "errors.sql")))
    assert wrong == [], "\n".join(wrong)


# ---------------------------------------------------------------------------------------------
# The catalog's comments

COMMENTS = """
select p.oid::regprocedure::text, p.proname, coalesce(pg_catalog.obj_description(p.oid, 'pg_proc'), ''),
       pg_catalog.has_function_privilege('ai_user', p.oid, 'execute'),
       pg_catalog.has_function_privilege('ai_service', p.oid, 'execute')
from pg_catalog.pg_proc p
where p.pronamespace = 'ai'::regnamespace
order by 1
"""


@pytest.fixture
def comments(conn: psycopg.Connection[Any]) -> list[tuple[str, str, str, bool, bool]]:
    return [tuple(row) for row in conn.execute(COMMENTS)]  # type: ignore[misc]


def test_every_sqlstate_a_comment_names_is_in_the_error_table(
    conn: psycopg.Connection[Any], comments: list[tuple[str, str, str, bool, bool]]
) -> None:
    codes = {row[0] for row in conn.execute("select sqlstate from ai.error_codes")}
    tables = [
        tuple(row)
        for row in conn.execute(
            "select c.oid::regclass::text, coalesce(pg_catalog.obj_description(c.oid, 'pg_class'), '') "
            "from pg_catalog.pg_class c where c.relnamespace in ('ai'::regnamespace, 'ai_archive'::regnamespace)"
        )
    ]
    named = [(f, c) for f, _, c, _, _ in comments] + tables
    wrong = [f"{obj}: {code}" for obj, text in named for code in re.findall(r"\bAS\d{3}\b", text) if code not in codes]
    assert wrong == [], "comments name SQLSTATEs ai.error_codes does not have: " + ", ".join(wrong)


def test_the_sqlstates_the_docs_name_are_in_the_error_table(conn: psycopg.Connection[Any]) -> None:
    codes = {row[0] for row in conn.execute("select sqlstate from ai.error_codes")}
    wrong = [
        f"{path.relative_to(ROOT)}: {code}"
        for path in DOCS
        for code in sorted(set(re.findall(r"\bAS\d{3}\b", _text(path))))
        if code not in codes
    ]
    assert wrong == [], "docs name SQLSTATEs ai.error_codes does not have: " + ", ".join(wrong)


def test_a_row_rule_functions_comment_says_when_its_check_calls_it(conn: psycopg.Connection[Any]) -> None:
    """Five comments said "only for a row that breaks a rule" while their CHECK, the bare call,
    runs the function for every row."""
    rows = conn.execute(
        r"""
        select distinct p.oid::regprocedure::text, coalesce(pg_catalog.obj_description(p.oid, 'pg_proc'), ''),
               pg_catalog.pg_get_constraintdef(k.oid) ~ ('^CHECK \(ai\.' || p.proname || '\(.*\)\)$')
        from pg_catalog.pg_constraint k
        join pg_catalog.pg_depend d on d.classid = 'pg_constraint'::regclass and d.objid = k.oid
                                    and d.refclassid = 'pg_proc'::regclass
        join pg_catalog.pg_proc p on p.oid = d.refobjid and p.pronamespace = 'ai'::regnamespace
        where k.contype = 'c'
        """
    ).fetchall()
    assert len({r[0] for r in rows}) >= 6, rows
    wrong = []
    for function, comment, bare in rows:
        if bare and ("only for a row" in comment or "for every row" not in comment):
            wrong.append(f"{function}: its CHECK is the bare call (every row), its comment: {comment[:90]}")
        if not bare and "only for a row" not in comment:
            wrong.append(f"{function}: a plain expression comes first in its CHECK, its comment: {comment[:90]}")
    assert wrong == [], "\n".join(wrong)


def test_internal_and_for_ai_service_comments_match_the_grants(
    comments: list[tuple[str, str, str, bool, bool]],
) -> None:
    wrong = []
    for function, name, comment, user, service in comments:
        if comment == "":
            wrong.append(f"{function}: no comment")
        if comment.startswith("Internal") != name.startswith("_"):
            wrong.append(f"{function}: 'Internal' comments are for ai._* functions, and every ai._* has one")
        # on a Citus formation a delegated write's SQL wrapper is inlined into the caller's statement,
        # which then calls its entry and the thread_id check as the caller (ai._formation_delegate)
        reached_inlined = "Citus only" in comment and (
            name == "_formation_thread_id" or (name.startswith("_delegated_") and not name.endswith("_body"))
        )
        if comment.startswith("Internal") and (user or service) and not reached_inlined:
            wrong.append(f"{function}: said internal, yet granted to ai_user or ai_service")
        if "For ai_service" in comment and (user or not service):
            wrong.append(f"{function}: said for ai_service, yet ai_user={user}, ai_service={service}")
    assert wrong == [], "\n".join(wrong)


def test_the_readme_marks_fenced_only_calls_that_take_a_fencing_token(conn: psycopg.Connection[Any]) -> None:
    """The diagram said "append_message_idempotent, record_event (fenced)": record_event takes no token."""
    fenced = {
        row[0]
        for row in conn.execute(
            "select p.proname from pg_catalog.pg_proc p "
            "where p.pronamespace = 'ai'::regnamespace and ('fencing_token' = any(p.proargnames[1:p.pronargs]) "
            # or a record that carries it (put_checkpoint's step_commit)
            " or exists (select from pg_catalog.unnest(p.proargtypes) t(oid)"
            "            join pg_catalog.pg_type ty on ty.oid = t.oid"
            "            join pg_catalog.pg_attribute a on a.attrelid = ty.typrelid"
            "            where a.attname = 'fencing_token'))"
        )
    }
    lines = [line for line in _text(ROOT / "README.md").splitlines() if "(fenced)" in line]
    assert lines
    wrong = [
        f"{name} in {line.strip()!r}"
        for line in lines
        for quoted in re.findall(r'"([^"]*\(fenced\))"', line)
        for name in re.findall(r"\b([a-z][a-z_]+)\b", quoted.replace("(fenced)", ""))
        if name not in fenced
    ]
    assert wrong == [], "marked fenced without a fencing_token argument: " + "; ".join(wrong)


def test_the_sql_functions_the_docs_call_exist(conn: psycopg.Connection[Any]) -> None:
    """Every `ai.name(` a doc shows is a function of schema ai (the changelog, which tells of past
    releases, aside)."""
    names = {
        row[0] for row in conn.execute("select proname from pg_catalog.pg_proc where pronamespace = 'ai'::regnamespace")
    }
    wrong = [
        f"{path.relative_to(ROOT)}: ai.{name}"
        for path in DOCS
        if path.name != "CHANGELOG.md"
        for name in sorted(set(re.findall(r"\bai\.([a-z_][a-z0-9_]*)\(", _text(path))))
        if name not in names
    ]
    assert wrong == [], "docs call functions schema ai does not have: " + ", ".join(wrong)


# ---------------------------------------------------------------------------------------------
# docs/cli.md's examples, run


def _console_blocks() -> dict[str, str]:
    """docs/cli.md's console blocks by the subcommand of their first command."""
    blocks = re.findall(r"```console\n(.*?)```", _text(ROOT / "docs" / "cli.md"), re.S)
    out: dict[str, str] = {}
    for block in blocks:
        m = re.search(r"agent-state (?:--database-url \S+ )?([a-z-]+)", block)
        if m:
            out.setdefault(m.group(1), block)
    return out


def _cli(dsn: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DATABASE_URL=dsn)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "agent_state.cli", *args], env=env, capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_the_version_docs_cli_shows_is_the_packages() -> None:
    [comment] = re.findall(r"agent-state --version\s+# (.*)", _text(ROOT / "docs" / "cli.md"))
    done = _cli("postgresql:///nowhere", "--version")
    assert done.stdout.strip() == comment


def test_the_deploy_example_prints_what_deploy_prints(fresh_database: str) -> None:
    """The two commands of docs/cli.md's `deploy` block, run on an empty database: each prints the
    lines the block shows (the version and the count of changes are this tree's)."""
    block = _console_blocks()["deploy"]
    commands = re.split(r"^\$ .*\n", block, flags=re.M)[1:]
    assert len(commands) == 2, block
    for shown in commands:
        done = _cli(fresh_database, "deploy")
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == shown.splitlines(), f"docs/cli.md shows {shown!r}"


@pytest.mark.session_features
def test_the_status_example_names_the_schemas_version(direct_dsn: str) -> None:
    """The first line and the 'needs up to change' line of docs/cli.md's `status` block are what
    `agent-state status` prints on a database deployed with sqitch (the test database)."""
    shown = _console_blocks()["status"].splitlines()[1:]
    out = _cli(direct_dsn, "status").stdout.splitlines()
    assert out[0] == shown[0]
    assert [line for line in out if line.startswith("this agent-state needs")] == [
        line for line in shown if line.startswith("this agent-state needs")
    ]


def _header(lines: list[str]) -> list[str]:
    return lines[0].split() if lines else []


def test_the_read_examples_show_the_columns_the_commands_print(fresh_database: str) -> None:
    """`sessions`, `jobs`, `stats`, `keys`, `approvals` and `show` on a database with a thread like the
    docs' trip-42 (a message, a job of graph-runs waiting for a person): each prints the header the
    block shows."""
    assert _cli(fresh_database, "deploy").returncode == 0
    with psycopg.connect(dsn_as(fresh_database, "tenant_a"), autocommit=True) as tenant:
        tenant.execute("select ai.create_session('trip-42')")
        tenant.execute("select ai.create_session('trip-44')")  # active: trip-42 will wait
        tenant.execute("""select ai.append_message_idempotent('trip-42', 'user', '"Plan three days in Lisbon."')""")
        tenant.execute("select ai.enqueue_job('trip-42', '{}', queue => 'graph-runs')")
        tenant.execute("select ai.enqueue_job('trip-44', '{}')")  # a key with a backlog (keys)
    with psycopg.connect(dsn_as(fresh_database, "app_service"), autocommit=True) as service:
        job = service.execute(
            "select job_id, fencing_token from ai.claim_job('w', '1 minute', 'graph-runs')"
        ).fetchone()
        assert job is not None
        service.execute("select ai.request_human(%s, %s, 'c1')", job)
    service_dsn = dsn_as(fresh_database, "app_service")
    blocks = _console_blocks()
    wrong = []
    for subcommand in ("sessions", "jobs", "stats", "keys", "approvals", "show"):
        block = blocks[subcommand]
        command, *shown = block.splitlines()
        args = command.removeprefix("$ agent-state ").split()
        done = _cli(service_dsn, *args)
        printed = done.stdout.splitlines()
        if subcommand == "show":  # 'thread trip-42', then the table
            printed, shown = printed[1:], shown[1:]
        if done.returncode != 0 or _header(printed) != _header(shown):
            wrong.append(f"{command}: docs/cli.md shows {_header(shown)}, it prints {printed[:1]} {done.stderr[-200:]}")
    assert wrong == [], "\n".join(wrong)
