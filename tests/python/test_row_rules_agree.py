"""One rule, one place (issue 14): a row CHECK that states its rules twice must state them alike.

A table whose CHECK is ``(plain expression) OR ai._check_<x>_row(columns)`` tests a valid row with
the cheap expression and calls the function only for a row that breaks a rule, so that the error
names the rule. The two are the same rules written twice; this test finds every such CHECK in
schemas ai and ai_archive from the catalog (today ai.agent_jobs; the tables the layout fold gives
the same form are covered as they appear) and evaluates both on a grid of edge values for each
column they read: NULL, empty, 1, 255 and 256 characters, -1/0/1, every string literal of the
expression and values outside them, JSON object/array/scalar/null. For every row:

* expression true  <=> the function returns true;
* expression false or NULL => the function raises 23514 (check_violation) naming the constraint.

Rows: every pair of columns over their grids around one valid row, and every single column over its
grid around a valid row for each value a column can take in one.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from psycopg import sql

#: The right side of the two-part form: a call of a row function on columns.
_CALL = re.compile(r"ai\._check_\w+_row\([^()]*\)")
#: The string literals of an expression ('IN_PROGRESS'::text, 'object').
_LITERAL = re.compile(r"'((?:[^']|'')*)'")

_TEXT_EDGES: tuple[str | None, ...] = (None, "", "a", "a" * 255, "a" * 256, "outside")
_NUMBER_EDGES: tuple[str | None, ...] = ("1", "0", "-1", None)
_JSON_EDGES: tuple[str | None, ...] = ("{}", "[]", "null", '"s"', None)
_TIME_EDGES: tuple[str | None, ...] = ("2030-01-01 00:00:00+00", None)
_BOOL_EDGES: tuple[str | None, ...] = ("true", "false", None)
_INTERVAL_EDGES: tuple[str | None, ...] = ("1 second", "0", "-1 second", None)
_BYTEA_EDGES: tuple[str | None, ...] = ("\\x01", "\\x", None)


def _top_level(text: str) -> list[tuple[int, int]]:
    """(index, depth) of each character: its parenthesis depth, string literals left out of the count."""
    out: list[tuple[int, int]] = []
    depth, quoted = 0, False
    for i, ch in enumerate(text):
        if ch == "'":
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        out.append((i, depth))
    return out


def _unwrap(text: str) -> str:
    """Strips parentheses around the whole of an expression."""
    text = text.strip()
    while text.startswith("(") and text.endswith(")"):
        depths = _top_level(text)
        if any(d == 0 for i, d in depths[:-1]):  # the first one closes before the end
            break
        text = text[1:-1].strip()
    return text


def _two_parts(definition: str) -> tuple[str, str] | None:
    """(expression, call) when a CHECK is ``(expression) OR ai._check_<x>_row(...)``, else None."""
    body = _unwrap(definition.removeprefix("CHECK "))
    depths = _top_level(body)
    splits = [i for i, d in depths if d == 0 and body.startswith(" OR ", i)]
    if not splits:
        return None
    left, right = body[: splits[-1]], body[splits[-1] + len(" OR ") :].strip()
    if not _CALL.fullmatch(right):
        return None
    return _unwrap(left), right


@dataclass(frozen=True)
class RowCheck:
    table: str
    name: str
    expr: str
    call: str
    columns: tuple[str, ...]
    types: tuple[str, ...]  # base types: a domain's own check is not the row's


def _row_checks(conn: psycopg.Connection[Any]) -> tuple[list[RowCheck], list[str]]:
    """The CHECKs of the two-part form, and those that call a row function in another form."""
    checks: list[RowCheck] = []
    other: list[str] = []
    rows = conn.execute(
        """
        select c.oid, c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)
        from pg_constraint c
        where c.contype = 'c' and c.connamespace in ('ai'::regnamespace, 'ai_archive'::regnamespace)
        order by 2, 3
        """
    ).fetchall()
    for oid, table, name, definition in rows:
        parts = _two_parts(definition)
        if parts is None:
            if _CALL.search(definition):
                other.append(f"{table}.{name}")
            continue
        columns = conn.execute(
            """
            select a.attname::text, format_type(coalesce(nullif(t.typbasetype, 0), a.atttypid), null)
            from pg_depend d
            join pg_attribute a on a.attrelid = d.refobjid and a.attnum = d.refobjsubid
            join pg_type t on t.oid = a.atttypid
            where d.classid = 'pg_constraint'::regclass and d.objid = %s and d.refobjsubid > 0
            group by a.attnum, a.attname, t.typbasetype, a.atttypid
            order by a.attnum
            """,
            (oid,),
        ).fetchall()
        checks.append(
            RowCheck(
                table,
                name,
                parts[0],
                parts[1],
                tuple(c for c, _ in columns),
                tuple(t for _, t in columns),
            )
        )
    return checks, other


def _grid(type_name: str, literals: Sequence[str]) -> tuple[str | None, ...]:
    """The edge values of one column, as text (cast to its type in SQL); likely-valid ones first."""
    if type_name in ("text", "character varying", "name"):
        outside = [v.lower() for v in literals if v.lower() != v][:1]
        return tuple(dict.fromkeys([*literals, *_TEXT_EDGES, *outside]))
    if type_name in ("integer", "bigint", "smallint", "numeric", "real", "double precision"):
        return _NUMBER_EDGES
    if type_name in ("jsonb", "json"):
        return _JSON_EDGES
    if type_name.startswith(("timestamp", "date")):
        return _TIME_EDGES
    if type_name == "boolean":
        return _BOOL_EDGES
    if type_name == "interval":
        return _INTERVAL_EDGES
    if type_name == "bytea":
        return _BYTEA_EDGES
    pytest.fail(f"no edge values for type {type_name}: add them to _grid")


def _from_rows(check: RowCheck) -> sql.Composed:
    """FROM unnest(...) AS t(columns): the rows passed as one text array per column."""
    arrays = sql.SQL(", ").join(sql.SQL("{}::text[]::{}[]").format(sql.Placeholder(), sql.SQL(t)) for t in check.types)
    names = sql.SQL(", ").join(sql.Identifier(c) for c in check.columns)
    return sql.SQL("unnest({}) with ordinality as t({}, ordinal__)").format(arrays, names)


def _columns_of(rows: Sequence[tuple[str | None, ...]], width: int) -> list[list[str | None]]:
    return [[row[i] for row in rows] for i in range(width)]


def _expression(conn: psycopg.Connection[Any], check: RowCheck, rows: Sequence[tuple[str | None, ...]]) -> list[Any]:
    query = sql.SQL("select ({})::boolean from {} order by ordinal__").format(sql.SQL(check.expr), _from_rows(check))
    return [r[0] for r in conn.execute(query, _columns_of(rows, len(check.columns))).fetchall()]


def _bases(
    conn: psycopg.Connection[Any], check: RowCheck, grids: Sequence[Sequence[str | None]]
) -> list[tuple[str | None, ...]]:
    """Valid rows: the first of the grid, and the first with each value any column takes in one."""
    product = sql.SQL(" cross join ").join(
        sql.SQL("unnest({}::text[]) with ordinality as {}(v, o)").format(sql.Placeholder(), sql.Identifier(f"g{i}"))
        for i in range(len(grids))
    )
    typed = sql.SQL(", ").join(
        sql.SQL("{}.v::{} as {}").format(sql.Identifier(f"g{i}"), sql.SQL(t), sql.Identifier(c))
        for i, (c, t) in enumerate(zip(check.columns, check.types, strict=True))
    )
    raw = sql.SQL(", ").join(sql.SQL("{}.v").format(sql.Identifier(f"g{i}")) for i in range(len(grids)))
    order = sql.SQL(", ").join(sql.SQL("{}.o").format(sql.Identifier(f"g{i}")) for i in range(len(grids)))
    found: dict[tuple[str | None, ...], None] = {}
    for column in [None, *range(len(grids))]:
        for value in grids[column] if column is not None else [None]:
            if column is None:
                pin: sql.Composable = sql.SQL("true")
            elif value is None:
                pin = sql.SQL("{}.v is null").format(sql.Identifier(f"g{column}"))
            else:
                pin = sql.SQL("{}.v = {}").format(sql.Identifier(f"g{column}"), sql.Literal(value))
            query = sql.SQL(
                "select {raw} from {product} cross join lateral (select {typed}) as t where ({expr}) and {pin}"
                " order by {order} limit 1"
            ).format(raw=raw, product=product, typed=typed, expr=sql.SQL(check.expr), pin=pin, order=order)
            row = conn.execute(query, [list(g) for g in grids]).fetchone()
            if row is not None:
                found[tuple(row)] = None
    return list(found)


def _rows_to_test(
    bases: Sequence[tuple[str | None, ...]], grids: Sequence[Sequence[str | None]]
) -> list[tuple[str | None, ...]]:
    rows: dict[tuple[str | None, ...], None] = {}
    first = bases[0]
    for a, b in itertools.combinations(range(len(grids)), 2):
        for va, vb in itertools.product(grids[a], grids[b]):
            row = list(first)
            row[a], row[b] = va, vb
            rows[tuple(row)] = None
    for base in bases:
        for column, grid in enumerate(grids):
            for value in grid:
                row = list(base)
                row[column] = value
                rows[tuple(row)] = None
    return list(rows)


def _function(conn: psycopg.Connection[Any], check: RowCheck, row: tuple[str | None, ...]) -> Any:
    """What the function says of one row: True/False, or the error it raised."""
    query = sql.SQL("select {} from {}").format(sql.SQL(check.call), _from_rows(check))
    try:
        return conn.execute(query, _columns_of([row], len(check.columns))).fetchone()[0]  # type: ignore[index]
    except psycopg.Error as error:
        return error


def _disagreements(conn: psycopg.Connection[Any], check: RowCheck) -> Iterable[str]:
    literals = [m.replace("''", "'") for m in _LITERAL.findall(check.expr)]
    grids = [_grid(t, literals) for t in check.types]
    bases = _bases(conn, check, grids)
    assert bases, f"{check.table}.{check.name}: no row of the grid satisfies {check.expr}"
    rows = _rows_to_test(bases, grids)
    for row, expected in zip(rows, _expression(conn, check, rows), strict=True):
        got = _function(conn, check, row)
        shown = dict(
            zip(check.columns, (v if v is None or len(v) < 20 else f"<{len(v)} chars>" for v in row), strict=True)
        )
        if expected is True and got is not True:
            yield f"{check.table}.{check.name} {shown}: the expression holds, the function says {got!r}"
        elif expected is not True:
            if not isinstance(got, psycopg.errors.CheckViolation):
                yield f"{check.table}.{check.name} {shown}: the expression is {expected}, the function says {got!r}"
            elif got.diag.constraint_name != check.name:
                yield (
                    f"{check.table}.{check.name} {shown}: the function's 23514 names"
                    f" {got.diag.constraint_name!r}, not the constraint"
                )


def test_every_two_part_row_check_states_its_rules_alike(conn: psycopg.Connection[Any]) -> None:
    checks, _ = _row_checks(conn)
    assert "agent_jobs_row_check" in {c.name for c in checks}, "the CHECK of ai.agent_jobs has the two-part form"
    failures = [f for check in checks for f in _disagreements(conn, check)]
    assert not failures, f"{len(failures)} rows where the two halves disagree, e.g.:\n" + "\n".join(failures[:15])


def test_the_grid_reaches_both_outcomes(conn: psycopg.Connection[Any]) -> None:
    """The test above is only as good as its rows: each CHECK sees valid rows and rows breaking it."""
    checks, _ = _row_checks(conn)
    for check in checks:
        literals = [m.replace("''", "'") for m in _LITERAL.findall(check.expr)]
        grids = [_grid(t, literals) for t in check.types]
        rows = _rows_to_test(_bases(conn, check, grids), grids)
        outcomes = set(_expression(conn, check, rows))
        assert {True, False} <= outcomes, f"{check.table}.{check.name}: {outcomes}"
