"""Every documented length limit of a column that a btree index holds can be stored (issue 37, item 4).

A btree entry holds at most 2,704 bytes (8 kB pages). An entry over about 2 kB is compressed
first, so repeated text passes where random text of the same length fails with 54000 ("index row
size ... exceeds btree version 4 maximum 2704"): 0.1.0's memory documented 20 labels of 255
characters and a key of 1,024 characters, and refused them.

The test enumerates the catalog: every btree index of schemas ai and ai_archive, every text column
it holds. Each such column must have its documented limit in ``LIMITS`` (a new indexed column
without one fails here, naming it, the day it is added), and each index must take one entry with
every one of its text columns at that limit, in random characters: once in ASCII (one byte each)
and once in characters of four bytes, the most UTF-8 spends on one. The entry is made in a scratch
copy of the table (its columns, no rules, no policies) with the index built the same way, its
WHERE clause dropped (every row takes an entry), so nothing of the schema's data or rules is in
the way and every index is tried even where the functions' rules would never reach it.
"""

from __future__ import annotations

import random
from typing import Any

import psycopg
import pytest
from psycopg import sql

#: The documented longest value of each indexed text column, in characters (docs/operations.md,
#: "Limits"; docs/memory.md), by column name: a name means the same thing in every table.
LIMITS: dict[str, int] = {
    "thread_id": 255,
    "owner": 255,  # bytes: a login role's name (63 at most), or ai.act_as's owner
    "idempotency_key": 255,
    "queue": 255,
    "worker_id": 255,  # ai.queue_workers: a worker's claims and liveness hold
    "checkpoint_id": 255,
    "parent_checkpoint_id": 255,
    "checkpoint_ns": 1024,
    "channel": 255,
    "version": 255,
    "task_id": 255,
    "stream_key": 200,
    "candidate": 1000,  # an eval run's candidate (ai.record_eval_run)
    "approval_id": 26,  # a ULID, made by ai.request_human
    "ns": 192,  # memory: the namespace's labels joined by U+001F
    "key": 128,  # memory: an item's key
    "field": 64,  # memory: a vector's field
}

#: Tables no caller writes: reference data of the schema itself.
REFERENCE_TABLES = {
    "ai.error_codes": "the SQLSTATE list, written by the deploy scripts only",
    "ai._archived_tables": "the archive's list of tables, written by the deploy scripts only",
}

#: Indexes on an expression: the columns whose value it reads, set so the expression gives a value
#: at its limit (the index's expression must name the key used here).
EXPRESSIONS: dict[str, tuple[str, str, str]] = {
    # start events of copies and forks: payload->>'copied_from' is a thread id
    "session_events_copied_from": ("payload", "copied_from", "thread_id"),
}

#: Limits counted in bytes of UTF-8, not characters: a column name (every table) or table.column
#: (either schema). These are the keys whose documented maxima in characters would not fit an index
#: entry in four-byte characters: the acting owner, beside a queue name and an idempotency key of
#: 255 characters each (agent_jobs_idempotency_key) or an eval run's candidate; the checkpoint
#: tables' namespace, ids, channel, version and task id, beside a thread id of 255 characters; the
#: candidate beside its owner. In ASCII a byte is a character, so the limit is the same; in other
#: text fewer characters fit. Every other limit counts characters.
IN_BYTES: set[str] = {
    "owner",
    "checkpoints.checkpoint_ns",
    "checkpoints.checkpoint_id",
    "checkpoints.parent_checkpoint_id",
    "checkpoint_blobs.checkpoint_ns",
    "checkpoint_blobs.channel",
    "checkpoint_blobs.version",
    "checkpoint_writes.checkpoint_ns",
    "checkpoint_writes.checkpoint_id",
    "checkpoint_writes.task_id",
    "checkpoint_writes.channel",
    "eval_runs.candidate",
}

#: Indexes whose documented maxima do not fit in four-byte characters: none. An index listed here
#: must still take its ASCII maxima, and must still fail in four-byte characters (the list shrinks,
#: never silently).
OVER_IN_FOUR_BYTE_CHARACTERS: dict[str, str] = {}

BTREE_MAX = 2704


def _random_text(n: int, four_bytes: bool, rng: random.Random, in_bytes: bool = False) -> str:
    if four_bytes and in_bytes:  # as many four-byte characters as fit, the rest ASCII: n bytes
        return _random_text(n // 4, True, rng) + _random_text(n % 4, False, rng)
    if four_bytes:  # planes 1 to 16: every code point there is four bytes in UTF-8, none a surrogate
        return "".join(chr(rng.randrange(0x10000, 0x10FFFF)) for _ in range(n))
    return "".join(chr(rng.randrange(0x21, 0x7F)) for _ in range(n))


def _indexes(conn: psycopg.Connection[Any]) -> list[tuple[str, str, str, list[str], str]]:
    """(table, index, definition, key columns, predicate) of every btree index of ai and ai_archive."""
    rows = conn.execute(
        """
        select i.indrelid::regclass::text, ic.relname::text, pg_get_indexdef(i.indexrelid),
               coalesce((select array_agg(a.attname::text order by k.n)
                         from unnest(i.indkey::int2[]) with ordinality k(attnum, n)
                         join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
                         where k.n <= i.indnkeyatts), '{}'),
               coalesce(pg_get_expr(i.indpred, i.indrelid), '')
        from pg_index i
        join pg_class c on c.oid = i.indrelid
        join pg_class ic on ic.oid = i.indexrelid
        join pg_am am on am.oid = ic.relam
        where c.relnamespace in ('ai'::regnamespace, 'ai_archive'::regnamespace) and am.amname = 'btree'
        order by 1, 2
        """
    ).fetchall()
    return [(t, n, d, list(cols), p) for t, n, d, cols, p in rows]


def _columns(conn: psycopg.Connection[Any], table: str) -> list[tuple[str, str, bool]]:
    return [
        (str(name), str(typ), bool(notnull))
        for name, typ, notnull in conn.execute(
            "select attname, format_type(atttypid, atttypmod), attnotnull from pg_attribute"
            " where attrelid = %s::regclass and attnum > 0 and not attisdropped order by attnum",
            (table,),
        ).fetchall()
    ]


_FILLERS: dict[str, str] = {
    "bigint": "1",
    "numeric": "1",
    "integer": "1",
    "smallint": "1",
    "double precision": "1",
    "boolean": "true",
    "timestamp with time zone": "now()",
    "interval": "'1 day'",
    "jsonb": "'{}'",
    "bytea": "'\\x00'",
    "text": "'x'",
    "text[]": "'{x}'",
    "real[]": "'{1}'",
    "tsvector": "''",
}


def _entry_fits(
    conn: psycopg.Connection[Any],
    table: str,
    index: str,
    definition: str,
    predicate: str,
    four_bytes: bool,
    rng: random.Random,
) -> str | None:
    """None when a row at the limits takes its entry in a copy of the index, else the error."""
    columns = _columns(conn, table)
    scratch = f"limits_{index}"[:63]
    values: dict[str, Any] = {}
    for name, typ, _ in columns:
        if typ == "text" and name in LIMITS:
            in_bytes = name in IN_BYTES or f"{table.split('.', 1)[1]}.{name}" in IN_BYTES
            values[name] = _random_text(LIMITS[name], four_bytes, rng, in_bytes)
    if index in EXPRESSIONS:
        column, member, limit = EXPRESSIONS[index]
        assert f"'{member}'" in definition, f"{index}: the expression no longer reads {member}"
        values[column] = psycopg.types.json.Jsonb({member: _random_text(LIMITS[limit], four_bytes, rng)})
    # the same index on a plain copy of the table, every row in it (no predicate)
    body = definition.split(" USING ", 1)[1]
    if predicate:
        body = body[: body.rindex(" WHERE ")]
    try:
        with conn.transaction(force_rollback=True):
            conn.execute(sql.SQL("create temporary table {} (like {})").format(
                sql.Identifier(scratch), sql.SQL(table)))  # fmt: skip
            conn.execute(sql.SQL("create index on {} using " + body).format(sql.Identifier(scratch)))
            names, params, literals = [], [], []
            for name, typ, notnull in columns:
                if name in values:
                    names.append(sql.Identifier(name))
                    literals.append(sql.Placeholder())
                    params.append(values[name])
                elif notnull:
                    if typ not in _FILLERS:
                        return f"no filler value for a NOT NULL column {name} of type {typ}: add one"
                    names.append(sql.Identifier(name))
                    literals.append(sql.SQL(_FILLERS[typ] + "::" + typ))
            conn.execute(
                sql.SQL("insert into {} ({}) values ({})").format(
                    sql.Identifier(scratch), sql.SQL(", ").join(names), sql.SQL(", ").join(literals)
                ),
                params,
            )
    except psycopg.errors.ProgramLimitExceeded as error:
        return str(error).splitlines()[0]
    return None


def test_every_indexed_text_column_has_a_documented_limit(conn: psycopg.Connection[Any]) -> None:
    missing = sorted(
        {
            f"{table}.{column}"
            for table, _, _, keys, _ in _indexes(conn)
            if table not in REFERENCE_TABLES
            for column, typ, _ in _columns(conn, table)
            if column in keys and typ == "text" and column not in LIMITS
        }
    )
    assert not missing, f"indexed text columns without a documented limit in LIMITS: {missing}"
    unread = sorted(i for i in EXPRESSIONS if i not in {n for _, n, _, _, _ in _indexes(conn)})
    assert not unread, f"EXPRESSIONS names indexes that are gone: {unread}"
    tables = {t.split(".", 1)[1] for t, _, _, _, _ in _indexes(conn)}
    stale = sorted(c for c in IN_BYTES if "." in c and c.split(".", 1)[0] not in tables)
    assert not stale, f"IN_BYTES names tables that are gone: {stale}"


@pytest.mark.parametrize("four_bytes", [False, True], ids=["ascii", "four-byte characters"])
def test_every_btree_index_takes_an_entry_at_the_documented_maxima(
    conn: psycopg.Connection[Any], four_bytes: bool
) -> None:
    rng = random.Random(37)
    failures: dict[str, str] = {}
    for table, index, definition, keys, predicate in _indexes(conn):
        if table in REFERENCE_TABLES:
            continue
        if not any(k in LIMITS for k in keys) and index not in EXPRESSIONS:
            continue  # no text at a limit in this index
        error = _entry_fits(conn, table, index, definition, predicate, four_bytes, rng)
        if error is not None:
            failures[f"{table} {index}"] = error
    if four_bytes:
        known = {k for k in failures if k.split(" ", 1)[1] in OVER_IN_FOUR_BYTE_CHARACTERS}
        assert {k.split(" ", 1)[1] for k in known} == set(OVER_IN_FOUR_BYTE_CHARACTERS), (
            "an index listed in OVER_IN_FOUR_BYTE_CHARACTERS now fits: take it off the list"
        )
        failures = {k: v for k, v in failures.items() if k not in known}
    assert not failures, "documented maxima an index cannot store:\n" + "\n".join(
        f"{k}: {v}" for k, v in failures.items()
    )
