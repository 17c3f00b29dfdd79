"""The Literal aliases of the Python package (JobStatus, SessionStatus, MessageRole, ...) equal the
values the database allows, read from the catalog: the CHECK constraints of each table, and the
row-rule functions (``ai._check_*_row``) a CHECK calls. A value added to or dropped from a
CHECK without the alias (or the other way round) fails here."""

from __future__ import annotations

import re
from typing import Any, get_args

import psycopg
import pytest

import agent_state
from agent_state import models

# alias -> the (table, column)s whose CHECK enumerates its values
ENUMS: dict[str, list[tuple[str, str]]] = {
    "JobStatus": [("agent_jobs", "status")],
    "SessionStatus": [("agent_sessions", "status")],
    "MessageRole": [("session_messages", "role"), ("message_streams", "role")],
    "SideEffectStatus": [("side_effects", "status")],
    "ApprovalStatus": [("human_approvals", "status")],
    "StreamStatus": [("message_streams", "status")],
}


def _literals(text: str) -> set[str]:
    return {m.replace("''", "'") for m in re.findall(r"'((?:[^']|'')*)'", text)}


def _enumerations(conn: psycopg.Connection[Any], table: str, column: str) -> list[set[str]]:
    """Every list of values the table's CHECKs (and the ai functions they call) test the column against."""
    found: list[set[str]] = []
    checks = conn.execute(
        "select pg_get_constraintdef(oid) from pg_constraint where conrelid = %s::regclass and contype = 'c'",
        (f"ai.{table}",),
    ).fetchall()
    for (definition,) in checks:
        for m in re.finditer(rf"\b{column} = ANY \(ARRAY\[(.*?)\]\)", definition):
            found.append(_literals(m.group(1)))
        for m in re.finditer(rf"(?<!\w){column} IN \(([^)]*)\)", definition, re.IGNORECASE):
            found.append(_literals(m.group(1)))
        for function in set(re.findall(r"\bai\.(\w+)\(", definition)):
            bodies = conn.execute(
                "select prosrc from pg_proc where pronamespace = 'ai'::regnamespace and proname = %s", (function,)
            ).fetchall()
            for (body,) in bodies:
                pattern = rf"(?<!\w)(?:a_)?{column}\s+(?:not\s+)?in\s*\(([^)]*)\)"
                found.extend(_literals(m.group(1)) for m in re.finditer(pattern, body, re.IGNORECASE))
    return [values for values in found if values]


@pytest.mark.parametrize("alias", sorted(ENUMS))
def test_each_literal_alias_equals_the_values_its_check_allows(conn: psycopg.Connection[Any], alias: str) -> None:
    declared = set(get_args(getattr(models, alias)))
    assert getattr(agent_state, alias) is getattr(models, alias), f"{alias} is exported by agent_state"
    for table, column in ENUMS[alias]:
        lists = _enumerations(conn, table, column)
        assert lists, f"no enumeration of ai.{table}.{column} in its CHECKs"
        allowed = max(lists, key=len)
        assert all(values <= allowed for values in lists), f"ai.{table}.{column}: its rules list different values"
        assert declared == allowed, f"{alias} != the values ai.{table}.{column} allows"


def test_the_reader_finds_a_drifted_value(conn: psycopg.Connection[Any]) -> None:
    """The catalog reader itself: a CHECK listing one more value than the alias is seen."""
    table = "literal_probe"
    with conn.transaction():
        conn.execute(
            f"create temp table {table} (status text check (status in ('open', 'finished', 'abandoned', 'x')))"
        )
        lists = []
        for (definition,) in conn.execute(
            "select pg_get_constraintdef(oid) from pg_constraint where conrelid = %s::regclass and contype = 'c'",
            (table,),
        ).fetchall():
            lists += [_literals(m.group(1)) for m in re.finditer(r"\bstatus = ANY \(ARRAY\[(.*?)\]\)", definition)]
        conn.execute(f"drop table {table}")
    assert lists == [{"open", "finished", "abandoned", "x"}] != [set(get_args(models.StreamStatus))]
