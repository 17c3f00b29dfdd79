"""The README's quick starts run verbatim against the test database (as its owner, as after
`make demo` with `eval "$(make -s env)"`): every code block marked ``<!-- test: run -->``, and the
first screen's checkpointer swap (``<!-- test: swap -->``). Its install and deploy commands
(``<!-- test: install -->``, ``<!-- test: deploy -->``) run in a fresh clone and virtualenv in
test_readme_install.py; every python block of the README is marked (no block goes untested)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from psycopg.conninfo import conninfo_to_dict

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"<!-- test: ([^>]*?) -->\n```(\w+)\n(.*?)```", re.S)
FENCE = re.compile(r"^```(\w*)\n", re.M)


def _blocks() -> list[tuple[str, str, str]]:
    return [(m.group(1).strip(), m.group(2), m.group(3)) for m in BLOCK.finditer((ROOT / "README.md").read_text())]


def _env(dsn: str) -> dict[str, str]:
    env = dict(os.environ, DATABASE_URL=dsn)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), env.get("PYTHONPATH", "")])
    return env


def _python(dsn: str, code: str, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], env={**_env(dsn), **env}, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def swap_block() -> str:
    [swap] = [code for when, lang, code in _blocks() if (when, lang) == ("swap", "python")]
    return swap


def test_the_readme_has_its_quick_starts_marked() -> None:
    kinds = [(when, lang) for when, lang, _ in _blocks()]
    assert kinds.count(("run", "sql")) == 1 and kinds.count(("run", "python")) == 3, kinds
    assert kinds.count(("run", "ts")) == 1, kinds
    assert kinds.count(("install", "sh")) == 1 and kinds.count(("deploy", "sh")) == 1, kinds
    assert kinds.count(("swap", "python")) == 1, kinds


def test_every_python_block_of_the_readme_is_run_by_a_test() -> None:
    text = (ROOT / "README.md").read_text()
    python = [m.start() for m in FENCE.finditer(text) if m.group(1) == "python"]
    marked = {m.start(2) - len("```") for m in BLOCK.finditer(text) if m.group(2) == "python"}
    assert python and set(python) <= marked, "a python block of README.md without a <!-- test: ... --> mark"


def test_the_first_screen_has_both_paths() -> None:
    """README's first 40 lines: "try it" (make demo) and "use it in your database" (the install,
    the deploy command, the swap), as issue 33 asked."""
    first = "\n".join((ROOT / "README.md").read_text().splitlines()[:40])
    assert "make demo" in first and "pip install './python[langgraph]'" in first
    assert "agent-state --database-url" in first and "<!-- test: swap -->" in first


def test_the_sql_quick_start_runs_in_psql(dsn: str) -> None:
    [sql] = [code for when, lang, code in _blocks() if (when, lang) == ("run", "sql")]
    done = subprocess.run(
        ["psql", "-X", "-v", "ON_ERROR_STOP=1", "-d", dsn],
        input=sql,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "COMPLETED" in done.stdout and "sql-quickstart" in done.stdout


def test_the_python_quick_starts_run(dsn: str) -> None:
    first, runs, _memory = [code for when, lang, code in _blocks() if (when, lang) == ("run", "python")]
    assert "'text': 'Plan Lisbon'" in _python(dsn, first)
    out = _python(dsn, runs)
    assert out.splitlines()[0] == "AWAITING_HUMAN"
    assert "'published: yes'" in out and "emailed alice (" in out


def test_the_memory_block_runs(dsn: str) -> None:
    [memory] = [
        code for when, lang, code in _blocks() if (when, lang) == ("run", "python") and "AgentStateStore" in code
    ]
    assert _python(dsn, memory).splitlines() == ["{'theme': 'dark'}"]


def test_the_checkpointer_swap_runs_as_written_for_the_owner_and_for_a_tenant(dsn: str, role_dsn: Any) -> None:
    """The block as it stands (no prelude): its names are its own. A tenant runs it too, after the
    owner: its thread ids cannot collide with one another role holds."""
    assert _python(dsn, swap_block()).splitlines() == ["hello"]
    assert _python(role_dsn("tenant_a"), swap_block()).splitlines() == ["hello"]


def test_a_thread_id_another_role_holds_is_not_found_as_the_readme_says(dsn: str, role_dsn: Any) -> None:
    """README: LangGraph's thread_id "1" is one thread of the whole database; a role that tries an
    id another role already holds gets NotFound (AS001), not a thread of its own."""
    assert "refused as not found (`NotFound`, SQLSTATE `AS001`" in (ROOT / "README.md").read_text()
    thread = f"taken-{uuid.uuid4()}"
    graph = (
        "import os\n"
        "from langgraph.graph import START, MessagesState, StateGraph\n"
        "from agent_state.errors import NotFound\n"
        "from agent_state.langgraph import AgentStateSaver\n"
        "builder = StateGraph(MessagesState)\n"
        "builder.add_node('echo', lambda state: {'messages': [('ai', 'hello')]})\n"
        "builder.add_edge(START, 'echo')\n"
        "with AgentStateSaver.from_conn_string(os.environ['DATABASE_URL']) as saver:\n"
        "    try:\n"
        "        config = {'configurable': {'thread_id': os.environ['THREAD']}}\n"
        "        builder.compile(checkpointer=saver).invoke({'messages': [('user', 'hi')]}, config)\n"
        "        print('ran')\n"
        "    except NotFound as error:\n"
        "        print('NotFound', error.sqlstate)\n"
    )
    assert _python(dsn, graph, THREAD=thread).splitlines() == ["ran"]
    assert _python(role_dsn("tenant_a"), graph, THREAD=thread).splitlines() == ["NotFound AS001"]


TYPESCRIPT = ROOT / "typescript"


def _url(dsn: str) -> str:
    """A libpq DSN (a URL, or the pooled run's key=value form) as the URL node-postgres parses."""
    if "://" in dsn:
        return dsn
    params = conninfo_to_dict(dsn)
    query = "&".join(f"{k}={quote(str(params[k]), safe='/')}" for k in ("host", "port") if params.get(k))
    user = f"{params['user']}@" if params.get("user") else ""
    return f"postgresql://{user}/{params.get('dbname', '')}" + (f"?{query}" if query else "")


def test_the_typescript_quick_start_type_checks_and_runs(dsn: str) -> None:
    """The block is compiled with tsc (strict) inside typescript/, where `agent-state` resolves to
    the package itself (its dist/: `make test-python` builds it), then run with node."""
    if not (TYPESCRIPT / "dist" / "index.js").exists() or shutil.which("node") is None:
        pytest.fail("typescript/dist is not built: run `make ts-build` (make test-python does)")
    [code] = [code for when, lang, code in _blocks() if (when, lang) == ("run", "ts")]
    work = TYPESCRIPT / ".readme"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    (work / "quickstart.mts").write_text(code)
    tsc = [
        str(TYPESCRIPT / "node_modules" / ".bin" / "tsc"),
        "--strict", "--skipLibCheck", "--target", "es2022", "--module", "nodenext",
        "--moduleResolution", "nodenext", "--types", "node", "--rootDir", str(work), "--outDir", str(work),
        str(work / "quickstart.mts"),
    ]  # fmt: skip
    compiled = subprocess.run(tsc, cwd=TYPESCRIPT, capture_output=True, text=True, timeout=180, check=False)
    assert compiled.returncode == 0, compiled.stdout[-3000:] + compiled.stderr[-3000:]
    done = subprocess.run(
        ["node", str(work / "quickstart.mjs")],
        cwd=TYPESCRIPT,
        env=dict(os.environ, DATABASE_URL=_url(dsn)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "true" and lines[1] == "{}", done.stdout
    assert lines[2].startswith("COMPLETED") and "emailed alice (" in done.stdout, done.stdout
