"""Fuzz: every public function of schema ai (read from pg_proc: names not starting with `_`) is
called with hostile arguments drawn by hypothesis, as a tenant (tenant_a) and as a service
(app_service): NULLs, empty and large strings (up to 1 MiB), NUL bytes where a type can hold them
(bytea, and JSON's \\u0000), extreme numbers, intervals and timestamps, malformed JSON, and values
of the wrong type (text cast to the parameter's type). Each call must succeed or raise a
documented SQLSTATE (docs/errors.md: the AS codes of ai.error_codes, 42501, and class 22 for a
value its type rejects); never XX000 or another undocumented code, never a hang
(statement_timeout), never a half-written row (after a failed call every ai table holds as many
rows as before). Bounded: FUZZ_EXAMPLES calls per function and role (default 6). Examples that
found a defect are kept below as explicit regression cases (REGRESSIONS, applied as @example)."""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from psycopg import sql

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "6"))
TIMEOUT = "30s"  # a hang detector: generous, so that only a hang trips it on a loaded machine
BIG = 1_000_000
ROLES = ("tenant_a", "app_service")

# Explicit cases, run on every run before the generated ones (hypothesis @example): (function
# signature, role, arguments). Examples the fuzz finds go here. Runs of up to 60 examples per
# function and role (FUZZ_EXAMPLES=60) have found no defect so far; these are hostile inputs
# worth pinning: time arithmetic out of range (22008), NUL in JSON (22P05), a 1 MB id (AS002),
# a tenant calling a worker's function (42501), extreme ids and a negative lease.
REGRESSIONS: list[tuple[str, str, tuple[Any, ...]]] = [
    ("ai.claim_job(text,interval,text)", "app_service", ("w", "178000000 years", "default")),
    (
        "ai.enqueue_job(text,jsonb,text,timestamp with time zone,integer,integer,text,interval,"
        "timestamp with time zone,timestamp with time zone,text,jsonb)",
        "tenant_a",
        ("t", '"\\u0000"'),
    ),
    ("ai.create_session(text,jsonb)", "tenant_a", ("y" * 1_000_000, "{}")),
    ("ai.fenced_write(bigint,bigint)", "tenant_a", (1, 1)),
    ("ai.renew_lease(bigint,bigint,interval)", "app_service", (2**63 - 1, -(2**63), "-178000000 years")),
]


@dataclass(frozen=True)
class Function:
    signature: str  # regprocedure text, e.g. ai.claim_job(text,interval,text)
    name: str
    types: tuple[str, ...]
    defaults: int
    variadic: bool


@dataclass
class Pools:
    """Ids that exist, so that some calls get past the first guard."""

    texts: list[str]
    numbers: list[int]


def _functions(dsn: str) -> list[Function]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            """select p.oid::regprocedure::text, p.proname,
                      array(select pg_catalog.format_type(t, null) from unnest(p.proargtypes) t),
                      p.pronargdefaults, p.provariadic <> 0
               from pg_catalog.pg_proc p
               where p.pronamespace = 'ai'::regnamespace and p.proname !~ '^_' and p.prokind = 'f'
                 and p.prorettype <> 'trigger'::regtype
               order by 1"""
        ).fetchall()
        # the records a function takes (put_checkpoint's step), field types in order
        for name, fields in conn.execute(
            """select pg_catalog.format_type(t.oid, null),
                      array(select pg_catalog.format_type(a.atttypid, a.atttypmod) from pg_catalog.pg_attribute a
                            where a.attrelid = t.typrelid and a.attnum > 0 and not a.attisdropped order by a.attnum)
               from pg_catalog.pg_type t
               where t.typnamespace = 'ai'::regnamespace and t.typtype = 'c'
                 and exists (select from pg_catalog.pg_class c where c.oid = t.typrelid and c.relkind = 'c')"""
        ).fetchall():
            RECORDS[name] = tuple(fields)
    return [Function(r[0], r[1], tuple(r[2]), r[3], r[4]) for r in rows]


#: composite types of schema ai (their field types), read by _functions
RECORDS: dict[str, tuple[str, ...]] = {}


@dataclass(frozen=True)
class Record:
    """A value of a composite type, sent as row(field, ...)::type with a parameter per field."""

    fields: tuple[str, ...]
    values: tuple[Any, ...]


def _documented(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        codes = {r[0] for r in conn.execute("select sqlstate from ai.error_codes").fetchall()}
    return codes | {"42501", "22P05"}


def _allowed(code: str | None, documented: set[str]) -> bool:
    # class 22: a value its type rejects (malformed JSON 22P02, out of range 22003/22008, ...)
    return code is not None and (code in documented or code.startswith("22"))


WORDS = [
    "",
    "'",
    "\\",
    "%s",
    "' or 1=1 --",
    "ai_user",
    "ai_service",
    "tenant_b",
    "postgres",
    "public",
    "IN_PROGRESS",
    "CANCELLED",
    "default",
    "sync",
    "async",
    "user",
    "assistant",
    "msgpack",
    "01ARZ3NDEKTSV4RRFFQ69G5FAV",
    "\u202e\u0301",
    "x" * 256,
    # 3,200 characters that do not compress: over the 2,704 bytes of a btree index entry
    "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(50)),
]
TIMES = ["infinity", "-infinity", "4713-01-01 00:00:00+00 BC", "294276-12-31 23:59:59+00", "2030-01-01", "epoch"]
INTERVALS = ["0", "-1 second", "1 microsecond", "1 minute", "100 years", "178000000 years", "-178000000 years"]
JSONS = ["{}", "[]", "null", '"s"', "1", "{", '{"a":', "[" * 5000 + "]" * 5000, '"\\u0000"', '{"\\u0000": 1}']
INTS = [0, 1, -1, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63), 10_001, 1001]


def _text(pools: Pools) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.sampled_from(WORDS),
        st.sampled_from(pools.texts),
        st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=30),
        st.just("y" * BIG),
    )


def _json() -> st.SearchStrategy[Any]:
    docs = st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10).filter(lambda s: "\x00" not in s),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
        max_leaves=10,
    )
    return st.one_of(
        st.none(),
        st.sampled_from(JSONS),
        docs.map(lambda d: psycopg.types.json.Jsonb(d)),
        st.just('"' + "z" * BIG + '"'),
    )


def _scalar(kind: str, pools: Pools) -> st.SearchStrategy[Any]:
    wrong = st.text(max_size=8).filter(lambda s: "\x00" not in s)  # a value of the wrong type, cast
    if kind == "text":
        return _text(pools)
    if kind in ("bigint", "integer"):
        return st.one_of(st.none(), st.sampled_from(INTS), st.sampled_from(pools.numbers), st.integers(), wrong)
    if kind == "numeric":
        specials = [Decimal("NaN"), Decimal("Infinity"), Decimal("-Infinity"), Decimal("-0.01"), Decimal("1e-1000")]
        return st.one_of(
            st.none(), st.decimals(allow_nan=False, allow_infinity=False), st.sampled_from(specials), wrong
        )
    if kind in ("real", "double precision"):
        return st.one_of(st.none(), st.floats(), st.sampled_from([0.0, -1.0, 1e39, float("nan")]), wrong)
    if kind == "boolean":
        return st.one_of(st.none(), st.booleans(), wrong)
    if kind == "interval":
        return st.one_of(st.none(), st.sampled_from(INTERVALS), wrong)
    if kind == "timestamp with time zone":
        return st.one_of(st.none(), st.sampled_from(TIMES), wrong)
    if kind == "jsonb":
        return _json()
    if kind == "bytea":
        return st.one_of(st.none(), st.binary(max_size=20), st.just(b"\x00" * 16), st.just(b"\x00" * BIG))
    raise AssertionError(f"no strategy for {kind}")


def _value(kind: str, pools: Pools) -> st.SearchStrategy[Any]:
    if kind in RECORDS:
        fields = RECORDS[kind]
        return st.one_of(
            st.none(), st.tuples(*[_value(f, pools) for f in fields]).map(lambda values: Record(fields, values))
        )
    if kind.endswith("[]"):
        element = _scalar(kind[:-2], pools)
        return st.one_of(
            st.none(),
            st.just([]),
            st.just([None]),
            st.lists(element.filter(lambda v: not isinstance(v, str) or len(v) < BIG), max_size=4),
        )
    return _scalar(kind, pools)


def _arguments(fn: Function, pools: Pools) -> st.SearchStrategy[tuple[Any, ...]]:
    required = len(fn.types) - fn.defaults

    def build(n: int) -> st.SearchStrategy[tuple[Any, ...]]:
        return st.tuples(*[_value(t, pools) for t in fn.types[:n]])

    return st.integers(required, len(fn.types)).flatmap(build)


def _argument_sql(kind: str, value: Any) -> sql.Composable:
    if isinstance(value, Record):
        return sql.SQL("row({})::{}").format(
            sql.SQL(", ").join(_argument_sql(f, v) for f, v in zip(value.fields, value.values, strict=True)),
            sql.SQL(kind),
        )
    if isinstance(value, list) and kind in ("jsonb[]",):
        return sql.SQL("{}::text[]::jsonb[]").format(sql.Literal([None if v is None else str(v) for v in value]))
    if isinstance(value, list) and kind in ("bytea[]",):
        return sql.SQL("{}::bytea[]").format(sql.Placeholder())
    return sql.SQL("{}::{}").format(sql.Placeholder(), sql.SQL(kind))


TABLES = """select c.relname from pg_catalog.pg_class c
where c.relnamespace = 'ai'::regnamespace and c.relkind in ('r', 'p') order by 1"""


def _count_rows(admin: psycopg.Connection[Any]) -> dict[str, int]:
    """Rows per table of schema ai: one `union all` of `count(*)`s, composed with identifiers
    (plain SQL, so it runs on any build of the server: no query_to_xml, which needs libxml)."""
    tables = [r[0] for r in admin.execute(TABLES).fetchall()]
    query = sql.SQL(" union all ").join(
        sql.SQL("select {}::text, count(*) from ai.{}").format(sql.Literal(t), sql.Identifier(t)) for t in tables
    )
    return dict(admin.execute(query).fetchall())


@pytest.fixture(scope="module")
def pools(module_dsn: str, module_role_dsn: Callable[[str], str]) -> Pools:
    texts, numbers = [], []
    with psycopg.connect(module_role_dsn("tenant_a"), autocommit=True) as tenant:
        thread = f"fuzz-a-{uuid.uuid4()}"
        tenant.execute("select ai.create_session(%s)", (thread,))
        numbers.append(tenant.execute("select (ai.enqueue_job(%s)).job_id", (thread,)).fetchone()[0])  # type: ignore[index]
        texts.append(thread)
    with psycopg.connect(module_role_dsn("app_service"), autocommit=True) as service:
        thread = f"fuzz-s-{uuid.uuid4()}"
        service.execute("select ai.create_session(%s)", (thread,))
        job = service.execute("select (ai.enqueue_job(%s, queue => %s)).job_id", (thread, thread)).fetchone()[0]  # type: ignore[index]
        claimed = service.execute("select fencing_token from ai.claim_job('fuzz', '1 hour', %s)", (thread,)).fetchone()
        numbers += [job, claimed[0] if claimed else 1]
        texts.append(thread)
    return Pools(texts, numbers)


@pytest.fixture(scope="module")
def connections(module_dsn: str, module_role_dsn: Callable[[str], str]) -> Iterator[dict[str, psycopg.Connection[Any]]]:
    conns = {
        role: psycopg.connect(module_role_dsn(role), autocommit=True, options=f"-c statement_timeout={TIMEOUT}")
        for role in ROLES
    }
    conns["admin"] = psycopg.connect(module_dsn, autocommit=True)
    for conn in conns.values():
        conn.prepare_threshold = None  # DISCARD ALL after each call would drop prepared statements
    try:
        yield conns
    finally:
        for conn in conns.values():
            conn.close()


def _params(kind: str, value: Any) -> list[Any]:
    """The parameters _argument_sql's text takes for a value (none for a jsonb[] list: a literal)."""
    if isinstance(value, Record):
        return [p for f, v in zip(value.fields, value.values, strict=True) for p in _params(f, v)]
    return [] if isinstance(value, list) and kind == "jsonb[]" else [value]


def _call(
    fn: Function,
    conn: psycopg.Connection[Any],
    admin: psycopg.Connection[Any],
    documented: set[str],
    args: tuple[Any, ...],
) -> None:
    parts = [_argument_sql(kind, value) for kind, value in zip(fn.types, args, strict=False)]
    params = [p for kind, v in zip(fn.types, args, strict=False) for p in _params(kind, v)]
    if fn.variadic and parts:
        parts[-1] = sql.SQL("variadic {}").format(parts[-1])
    schema, name = fn.signature.split("(")[0].split(".")
    query = sql.SQL("select {}.{}({})").format(sql.Identifier(schema), sql.Identifier(name), sql.SQL(", ").join(parts))
    before = _count_rows(admin)
    try:
        conn.execute(query, params).fetchall()
    except psycopg.DataError as error:
        if error.sqlstate is None:  # refused by the client before it reached the server
            return
        assert _allowed(error.sqlstate, documented), f"{fn.signature}: {error.sqlstate} {error}"
        assert _count_rows(admin) == before, f"{fn.signature}: rows changed by a failed call"
    except psycopg.Error as error:
        assert error.sqlstate != "57014", f"{fn.signature}: no answer within {TIMEOUT} (hang)"
        assert _allowed(error.sqlstate, documented), f"{fn.signature}: {error.sqlstate} {error}"
        assert _count_rows(admin) == before, f"{fn.signature}: rows changed by a failed call"
    finally:
        conn.execute("discard all")  # act_as and other settings do not leak into the next call


def test_every_explicit_case_names_a_function(dsn: str) -> None:
    signatures = {f.signature for f in _functions(dsn)}
    assert [c[0] for c in REGRESSIONS if c[0] not in signatures] == []


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "fn" in metafunc.fixturenames:
        dsn = os.environ.get("AGENT_STATE_TEST_DSN", "")
        fns = _functions(dsn) if dsn else []
        metafunc.parametrize("fn", fns, ids=[f.signature for f in fns])


@pytest.mark.parametrize("role", ROLES)
def test_hostile_arguments_get_success_or_a_documented_error(
    fn: Function, role: str, dsn: str, pools: Pools, connections: dict[str, psycopg.Connection[Any]]
) -> None:
    documented = _documented(dsn)
    conn, admin = connections[role], connections["admin"]

    def run(args: tuple[Any, ...]) -> None:
        _call(fn, conn, admin, documented, args)

    for signature, on, args in REGRESSIONS:
        if signature == fn.signature and on == role:
            run = example(args)(run)
    settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )(given(_arguments(fn, pools))(run))()
