"""The README's quick starts run verbatim against the test database (as its owner, as after
`make demo` with `eval "$(make -s env)"`): every code block marked ``<!-- test: run -->``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from psycopg.conninfo import conninfo_to_dict

from agent_state.langgraph import AgentStateSaver

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"<!-- test: (run[^>]*?) -->\n```(\w+)\n(.*?)```", re.S)


def _blocks() -> list[tuple[str, str, str]]:
    return [(m.group(1).strip(), m.group(2), m.group(3)) for m in BLOCK.finditer((ROOT / "README.md").read_text())]


def _env(dsn: str) -> dict[str, str]:
    env = dict(os.environ, DATABASE_URL=dsn)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), env.get("PYTHONPATH", "")])
    return env


def _python(dsn: str, code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], env=_env(dsn), capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_readme_has_its_quick_starts_marked() -> None:
    kinds = [(when, lang) for when, lang, _ in _blocks()]
    assert kinds.count(("run", "sql")) == 1 and kinds.count(("run", "python")) == 2, kinds
    assert kinds.count(("run", "ts")) == 1, kinds


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
    first, runs = [code for when, lang, code in _blocks() if (when, lang) == ("run", "python")]
    assert "'text': 'Plan Lisbon'" in _python(dsn, first)
    out = _python(dsn, runs)
    assert out.splitlines()[0] == "AWAITING_HUMAN"
    assert "'published: yes'" in out and "emailed alice (" in out


def test_the_checkpointer_swap_runs_when_the_saver_has_from_conn_string(dsn: str) -> None:
    if not hasattr(AgentStateSaver, "from_conn_string"):
        pytest.skip("AgentStateSaver.from_conn_string is not in this branch yet")
    [swap] = [code for when, lang, code in _blocks() if when.startswith("run if")]
    prelude = (
        "import os\n"
        "from langgraph.graph import START, MessagesState, StateGraph\n"
        "DB_URI = os.environ['DATABASE_URL']\n"
        "builder = StateGraph(MessagesState)\n"
        "builder.add_node('echo', lambda state: {'messages': [('ai', 'hello')]})\n"
        "builder.add_edge(START, 'echo')\n"
    )
    _python(dsn, prelude + swap)


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
