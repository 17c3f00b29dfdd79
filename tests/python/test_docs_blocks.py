"""Every python block of docs/ runs (issue 33): a block marked ``<!-- test: run -->`` runs as it
stands, in a fresh process, against the test database (``DATABASE_URL``), so its names are its
own and its calls work. The README's blocks: test_readme.py.

PENDING lists the blocks that do not run here, by page and first line, each with the reason; a
block neither marked nor listed fails, so a new one cannot go untested, and a listed block that
is marked, or gone, fails too (the list only shrinks).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"(?:<!-- test: ([^>]*?) -->\n)?```python\n(.*?)```", re.S)

PENDING = {
    ("openai-agents.md", "from agents import Agent, Runner"),  # Runner.run calls OpenAI's API (network, a key)
}  # fmt: skip


def _blocks() -> list[tuple[str, str | None, str]]:
    """(page, mark, code) of every python block of docs/."""
    return [
        (page.name, m.group(1), m.group(2))
        for page in sorted((ROOT / "docs").glob("*.md"))
        for m in FENCE.finditer(page.read_text())
    ]


def _first(code: str) -> str:
    """A block's first line without its comment."""
    return code.splitlines()[0].split("#")[0].rstrip()


def test_every_python_block_of_the_docs_is_run_or_pending() -> None:
    unmarked = {(page, _first(code)) for page, mark, code in _blocks() if mark is None}
    assert unmarked - PENDING == set(), "a python block of docs/ neither marked <!-- test: run --> nor PENDING"
    assert PENDING - unmarked == set(), "PENDING names a block that is marked or gone: take it off the list"


RUN = [(page, code) for page, mark, code in _blocks() if mark == "run"]


@pytest.fixture
def postgres_saver_uri(direct_dsn: str) -> Iterator[str]:
    """A database LangGraph's PostgresSaver wrote one thread into (a block imports from it)."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.graph import START, MessagesState, StateGraph

    name = f"docs_postgres_saver_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(direct_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("create database {}").format(sql.Identifier(name)))
        url = make_conninfo(**{**conninfo_to_dict(direct_dsn), "dbname": name})
        try:
            with PostgresSaver.from_conn_string(url) as saver:
                saver.setup()
                builder = StateGraph(MessagesState)
                builder.add_node("echo", lambda state: {"messages": [("ai", "hello")]})
                builder.add_edge(START, "echo")
                config = {"configurable": {"thread_id": f"docs-import-{uuid.uuid4()}"}}
                builder.compile(checkpointer=saver).invoke({"messages": [("user", "hi")]}, config)  # type: ignore[arg-type]
            yield url
        finally:
            admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


@pytest.mark.parametrize(("page", "code"), RUN, ids=[f"{page}:{code.splitlines()[0][:40]}" for page, code in RUN])
def test_a_marked_block_runs_as_it_stands(page: str, code: str, dsn: str, request: pytest.FixtureRequest) -> None:
    env = dict(os.environ, DATABASE_URL=dsn)
    if "POSTGRES_SAVER_URI" in code:
        env["POSTGRES_SAVER_URI"] = request.getfixturevalue("postgres_saver_uri")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"docs/{page}:\n{done.stderr[-3000:]}"
