"""The isolation matrix: generated, not hand-picked (issue 11).

Tenant B owns one object of every kind (thread, messages, events, checkpoint with values and
pending writes, jobs, a side effect, an approval, an eval run, a compaction) marked with a secret.
Tenant A owns the same kinds. Then, for every function of schema ai (enumerated from pg_proc) and
for two callers acting for A (the tenant itself, and a service after ``ai.act_as(A)``), each
function is called once with B's ids in every id argument and once per id argument with B's id in
that argument and A's own ids in the others. Every case must fail closed:

* nothing of B changes (B's rows, read as the superuser, hash the same before and after),
* nothing of B comes back (no secret in the result),
* and the answer is the one a never-used id gets (same SQLSTATE, or both succeed), except where
  the global thread-id namespace makes a taken id differ (documented in docs/security.md).

Then the side channels, against every table: EXPLAIN, SELECT/INSERT/UPDATE/DELETE/TRUNCATE and
LOCK TABLE as a tenant and as a service, LISTEN, SET ROLE to the group roles, and a hostile
operator and function planted in a writable ``public`` by B while A works. Each test prints how
many cases it ran.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest
from conftest import superuser_reads
from psycopg import sql
from waiting import notifications_until

SECRET = f"SECRET-B-{uuid.uuid4().hex}"

TABLES_SQL = """
select c.oid::regclass::text,
       (select quote_ident(a.attname) from pg_attribute a
        where a.attrelid = c.oid and a.attnum > 0 and a.attidentity = '' and a.attgenerated = '' and not a.attisdropped
        order by a.attnum limit 1)
from pg_class c
where c.relnamespace in ('ai'::regnamespace, 'ai_archive'::regnamespace) and c.relkind in ('r', 'p')
order by 1
"""

# Tables that hang off a thread (thread_id column): B's rows are those with B's thread ids.
THREAD_TABLES = [
    "ai.agent_sessions",
    "ai.session_messages",
    "ai.session_events",
    "ai.checkpoints",
    "ai.checkpoint_blobs",
    "ai.checkpoint_writes",
    "ai.deleted_threads",
    "ai.agent_jobs",
    "ai.agent_jobs_archive",
    "ai.side_effects",
    "ai.human_approvals",
    "ai.eval_runs",
]


@dataclass
class Owner:
    role: str
    thread: str
    pending_thread: str
    queue: str
    ids: dict[str, Any] = field(default_factory=dict)


def _report(capsys: pytest.CaptureFixture[str], what: str, count: int) -> None:
    with capsys.disabled():
        print(f"\n[isolation matrix] {what}: {count} cases, all fail closed")


def _make_owner(su: psycopg.Connection[Any], role: str, tag: str) -> Owner:
    """Objects of every kind for one tenant, made through the functions, committed."""
    o = Owner(
        role,
        f"iso-{tag}-{uuid.uuid4().hex[:8]}",
        f"iso-{tag}-p-{uuid.uuid4().hex[:8]}",
        f"iso-q-{tag}-{uuid.uuid4().hex[:8]}",
    )
    secret = SECRET if tag == "b" else f"public-{tag}"
    run_id = f"run-{tag}-{uuid.uuid4().hex[:8]}"
    ck, key, task, cand = f"c1-{tag}", f"key-{tag}", f"task-{tag}", f"cand-{tag}"
    with su.transaction():
        su.execute(sql.SQL("set local role {}").format(sql.Identifier(role)))
        su.execute("select ai.create_session(%s, jsonb_build_object('s', %s::text))", (o.thread, secret))
        su.execute("select ai.create_session(%s)", (o.pending_thread,))
        for i in range(3):
            su.execute(
                "select ai.append_message_idempotent(%s, 'user', to_jsonb(%s::text))", (o.thread, f"{secret} {i}")
            )
        su.execute("select ai.record_event(%s, 'tool_call', jsonb_build_object('s', %s::text))", (o.thread, secret))
        su.execute("select ai.record_compaction(%s, %s, 2)", (o.thread, f"summary {secret}"))
        su.execute(
            "select ai.put_checkpoint(%s, '', %s, null, 'json', convert_to(%s, 'UTF8'),"
            " jsonb_build_object('run_id', %s::text, 's', %s::text), '{\"m\": \"1\"}',"
            " row(array['m'], array['1'], array['json'], array[convert_to(%s, 'UTF8')], null)::ai.checkpoint_values)",
            (o.thread, ck, secret, run_id, secret, secret),
        )
        su.execute(
            "select ai.put_writes(%s, '', %s, %s, array[0], array['m'], array['json'], array[convert_to(%s, 'UTF8')])",
            (o.thread, ck, task, secret),
        )
        su.execute(
            "select ai.record_eval_run(%s, %s, true, jsonb_build_object('s', %s::text))", (o.thread, cand, secret)
        )
        job = su.execute(
            "select job_id from ai.enqueue_job(%s, jsonb_build_object('s', %s::text), %s)", (o.thread, secret, o.queue)
        ).fetchone()
        pending = su.execute(
            "select job_id from ai.enqueue_job(%s, jsonb_build_object('s', %s::text), %s)",
            (o.pending_thread, secret, o.queue + "-pending"),
        ).fetchone()
        su.execute("set local role app_service")
        claimed = su.execute(
            "select job_id, fencing_token from ai.claim_job('iso-w', '1 hour', %s)", (o.queue,)
        ).fetchone()
        assert job and pending and claimed and claimed[0] == job[0]
        su.execute(
            "select ai.begin_side_effect(%s, %s, jsonb_build_object('s', %s::text), %s, %s)",
            (o.thread, key, secret, claimed[0], claimed[1]),
        )
        approval = su.execute(
            "select ai.request_human(%s, %s, %s, jsonb_build_object('s', %s::text))",
            (claimed[0], claimed[1], ck, secret),
        ).fetchone()
        assert approval
    o.ids = {
        "thread": o.thread,
        "job": claimed[0],
        "pending_job": pending[0],
        "token": claimed[1],
        "checkpoint": ck,
        "approval": approval[0],
        "key": key,
        "run": run_id,
        "queue": o.queue,
        "candidate": cand,
        "task": task,
        "owner": role,
    }
    return o


@pytest.fixture(scope="module")
def owners(module_dsn: str) -> Iterator[tuple[Owner, Owner]]:
    with psycopg.connect(module_dsn, autocommit=True) as su:
        a = _make_owner(su, "tenant_a", "a")
        b = _make_owner(su, "tenant_b", "b")
        yield a, b
        threads = [a.thread, a.pending_thread, b.thread, b.pending_thread]
        su.execute("delete from ai.agent_jobs where thread_id = any(%s)", (threads,))
        su.execute("delete from ai.agent_sessions where thread_id = any(%s)", (threads,))
        su.execute("delete from ai.deleted_threads where thread_id = any(%s)", (threads,))


def _b_snapshot(su: psycopg.Connection[Any], b: Owner) -> str:
    """A hash of every row of B's threads in every table (whoever owns the row), as the superuser."""
    parts = []
    for table in THREAD_TABLES:
        rows = su.execute(
            sql.SQL(
                "select coalesce(string_agg(t::text, '|' order by t::text), '') from {} t where thread_id = any(%s)"
            ).format(sql.SQL(table)),
            ([b.thread, b.pending_thread],),
        ).fetchone()
        parts.append(f"{table}:{rows[0] if rows else ''}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


# --- argument generation ------------------------------------------------------------------------

# parameter name -> kind of id it takes
ID_KIND = {
    "thread_id": "thread",
    "source_thread_id": "thread",
    "replay_thread_id": "thread",
    "thread_ids": "thread[]",
    "job_id": "job",
    "job_ids": "job[]",
    "fencing_token": "token",
    "fencing_tokens": "token[]",
    "checkpoint_id": "checkpoint",
    "from_checkpoint_id": "checkpoint",
    "after_checkpoint_id": "checkpoint",
    "parent_checkpoint_id": "checkpoint",
    "approval_id": "approval",
    "idempotency_key": "key",
    "run_ids": "run[]",
    "queue": "queue",
    "candidate": "candidate",
    "task_id": "task",
    "owner": "owner",
}

PLAIN = {
    "role": "user",
    "status": "failed",
    "kind": "tool_call",
    "strategy": "keep_latest",
    "direction": "ancestors",
    "durability": "sync",
    "error": "boom",
    "summary": "a summary",
    "worker_id": "iso-w",
    "checkpoint_ns": "",
    "type": "json",
    "task_path": "",
    "ulid": "01ARZ3NDEKTSV4RRFFQ69G5FAV",
    "new_thread_id": None,  # fork_thread: NULL makes a fresh id
    "target_thread_id": "SELF",  # copy_thread: a fresh id of the caller's
}

BY_TYPE: dict[str, Any] = {
    "text": "x",
    "jsonb": "{}",
    "integer": 10,
    "bigint": 1,
    "smallint": 1,
    "real": 0.7,
    "boolean": True,
    "interval": "1 minute",
    "timestamp with time zone": "2030-01-01 00:00:00+00",
    "bytea": b"\x01",
    "text[]": [],
    "integer[]": [],
    "bigint[]": [],
    "bytea[]": [],
    "jsonb[]": None,
}


@dataclass
class Fn:
    signature: str
    name: str
    kind: str  # f or p
    args: list[tuple[str, str]]  # (name, type) of the IN arguments
    variadic: bool
    tenant_may_call: bool


def _functions(su: psycopg.Connection[Any]) -> list[Fn]:
    rows = su.execute(
        """
        select p.oid::regprocedure::text, p.proname, p.prokind, p.provariadic <> 0,
               coalesce(p.proargnames[1:p.pronargs], '{}'),
               array(select format_type(t, null) from unnest(p.proargtypes) t),
               has_function_privilege('ai_user', p.oid, 'EXECUTE')
        from pg_proc p
        where p.pronamespace = 'ai'::regnamespace and p.prorettype <> 'trigger'::regtype
        order by 1
        """
    ).fetchall()
    return [
        Fn(sig, name, kind, list(zip(names, types, strict=True)), var, may)
        for sig, name, kind, var, names, types, may in rows
    ]


def _value(name: str, typ: str, ids: dict[str, Any]) -> Any:
    kind = ID_KIND.get(name)
    if kind is not None:
        base = kind.removesuffix("[]")
        v = ids["pending_job"] if name == "job_id" and ids.get("_mode") == "pending" else ids[base]
        return [v] if kind.endswith("[]") else v
    if name in PLAIN:
        v = PLAIN[name]
        if v == "SELF":
            return f"iso-new-{uuid.uuid4().hex[:8]}"
        return v
    return BY_TYPE.get(typ)


def _call_sql(fn: Fn) -> sql.Composable:
    params = []
    for i, (_, typ) in enumerate(fn.args):
        p = sql.SQL("{}::{}").format(sql.Placeholder(), sql.SQL(typ))
        if fn.variadic and i == len(fn.args) - 1:
            p = sql.SQL("variadic ") + p
        params.append(p)
    name = sql.SQL("ai.{}").format(sql.Identifier(fn.name))
    if fn.kind == "p":
        return sql.SQL("call {}({})").format(name, sql.SQL(", ").join(params))
    return sql.SQL("select * from {}({})").format(name, sql.SQL(", ").join(params))


def _fresh_ids(b: Owner) -> dict[str, Any]:
    """Ids of every kind that nobody ever used."""
    n = uuid.uuid4().hex[:8]
    return {
        "thread": f"iso-never-{n}",
        "job": 2_000_000_000 + int(n[:6], 16),
        "pending_job": 2_100_000_000 + int(n[:6], 16),
        "token": b.ids["token"],
        "checkpoint": f"never-{n}",
        "approval": f"never-{n}",
        "key": f"never-{n}",
        "run": f"never-{n}",
        "queue": f"iso-never-{n}",
        "candidate": f"never-{n}",
        "task": f"never-{n}",
        "owner": f"never-{n}",
    }


@dataclass
class Outcome:
    sqlstate: str | None
    text: str


def _run_case(
    su: psycopg.Connection[Any], caller: str, fn: Fn, args: list[Any], b: Owner, before: str
) -> tuple[Outcome, bool]:
    """Calls fn as the caller (acting for tenant_a) inside a transaction that is rolled back;
    returns the outcome and whether B's rows are unchanged."""
    as_superuser = superuser_reads(su)
    with su.transaction(force_rollback=True):
        su.execute("select set_config('ai.frozen_now', '', true)")
        if caller == "tenant":
            su.execute("set local role tenant_a")
        else:
            su.execute("set local role app_service")
            su.execute("select ai.act_as('tenant_a')")
        try:
            with su.transaction():
                cur = su.execute(_call_sql(fn), args)
                text = repr(cur.fetchall()) if cur.description else ""
            outcome = Outcome(None, text)
        except psycopg.Error as e:
            outcome = Outcome(e.sqlstate, e.diag.message_primary or "")
        for statement in as_superuser:
            su.execute(statement)
        unchanged = _b_snapshot(su, b) == before
    return outcome, unchanged


# A taken thread id answers differently from a never-used one where the id namespace is global
# (docs/security.md, "What a tenant can still learn"): creating, forking or copying into it, or
# a first checkpoint/write on it (which creates the thread). Listed per (function, argument).
GLOBAL_ID_NAMESPACE = {
    ("create_session", "thread_id"),
    ("put_checkpoint", "thread_id"),
    ("put_writes", "thread_id"),
}

# Functions a service acting for tenant_a is trusted to call with another owner: act_as itself.
SERVICE_TRUSTED = {"act_as"}


def test_every_function_with_another_tenants_ids_fails_closed(
    dsn: str, owners: tuple[Owner, Owner], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = owners
    failures: list[str] = []
    residual: list[str] = []
    count = 0
    with psycopg.connect(dsn) as su:
        before = _b_snapshot(su, b)
        su.rollback()
        fns = _functions(su)
        su.rollback()
        assert len(fns) > 60, "the matrix enumerates every function of schema ai"
        for fn in fns:
            id_args = [i for i, (name, _) in enumerate(fn.args) if name in ID_KIND]
            # one case with B's ids everywhere, then one per id argument (B's there, A's elsewhere)
            variants: list[tuple[str, dict[int, str]]] = [("all-b", {i: "b" for i in id_args})]
            if len(id_args) > 1:
                variants += [(f"b-{fn.args[i][0]}", {j: ("b" if j == i else "a") for j in id_args}) for i in id_args]
            for caller in ("tenant", "service"):
                if caller == "service" and fn.name in SERVICE_TRUSTED:
                    continue
                for label, who in variants:
                    for mode in ("", "pending"):
                        if mode == "pending" and not any(fn.args[i][0] == "job_id" for i in id_args):
                            continue
                        src = {"a": {**a.ids, "_mode": mode}, "b": {**b.ids, "_mode": mode}}
                        fresh = {**_fresh_ids(b), "_mode": mode}
                        args, fresh_args = [], []
                        for i, (name, typ) in enumerate(fn.args):
                            ids = src[who.get(i, "a")]
                            args.append(_value(name, typ, ids))
                            fresh_args.append(_value(name, typ, fresh if who.get(i) == "b" else ids))
                        case = f"{caller} {fn.signature} [{label}{' ' + mode if mode else ''}]"
                        count += 1
                        got, unchanged = _run_case(su, caller, fn, args, b, before)
                        if not unchanged:
                            failures.append(f"{case}: changed tenant_b's rows ({got.sqlstate or 'ok'})")
                        if SECRET in got.text:
                            failures.append(f"{case}: returned tenant_b's data: {got.text[:200]}")
                        if not id_args:
                            continue
                        ref, _ = _run_case(su, caller, fn, fresh_args, b, before)
                        if got.sqlstate != ref.sqlstate:
                            b_names = {fn.args[i][0] for i, w in who.items() if w == "b"}
                            if any((fn.name, n) in GLOBAL_ID_NAMESPACE for n in b_names) and got.sqlstate in (
                                "AS001",
                                "AS005",
                            ):
                                residual.append(case)
                            else:
                                failures.append(
                                    f"{case}: {got.sqlstate or 'success'} for tenant_b's id, "
                                    f"{ref.sqlstate or 'success'} for an unused one ({got.text[:120]!r})"
                                )
    assert not failures, f"{len(failures)} of {count} cases leak or disturb:\n" + "\n".join(failures)
    _report(
        capsys, f"functions x tenant_b's ids ({len(residual)} answer the documented taken-thread-id AS001/AS005)", count
    )


# --- side channels ----------------------------------------------------------------------------------


def _tables(su: psycopg.Connection[Any]) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in su.execute(TABLES_SQL).fetchall()]


STATEMENTS: list[tuple[str, str]] = [
    ("explain", "explain (analyze, costs off) select * from {t} x where x::text >= ''"),
    ("select", "select * from {t} limit 1"),
    ("insert", "insert into {t} default values"),
    ("update", "update {t} set {c} = {c}"),
    ("delete", "delete from {t}"),
    ("truncate", "truncate {t}"),
    ("lock", "lock table {t} in access exclusive mode nowait"),
    ("lock-share", "lock table {t} in access share mode nowait"),
]


def test_no_tenant_or_service_reaches_a_table_directly(
    dsn: str, role_dsn: Callable[[str], str], capsys: pytest.CaptureFixture[str]
) -> None:
    count = 0
    failures = []
    with psycopg.connect(dsn, autocommit=True) as su:
        tables = _tables(su)
    assert {"ai.agent_sessions", "ai_archive.agent_sessions"} <= {t for t, _ in tables}
    for role in ("tenant_a", "app_service"):
        with psycopg.connect(role_dsn(role)) as c:
            for table, first_column in tables:
                for what, stmt in STATEMENTS:
                    count += 1
                    try:
                        with c.transaction(force_rollback=True):
                            c.execute(stmt.format(t=table, c=first_column))  # type: ignore[arg-type]
                        failures.append(f"{role} {what} {table}: succeeded")
                    except psycopg.errors.InsufficientPrivilege:
                        pass
                    except psycopg.Error as e:
                        failures.append(f"{role} {what} {table}: {e.sqlstate} {e}")
    assert not failures, "\n".join(failures)
    _report(
        capsys,
        "EXPLAIN / SELECT / INSERT / UPDATE / DELETE / TRUNCATE / LOCK x every table x tenant and service",
        count,
    )


def test_set_role_to_a_group_role_is_never_an_owner(
    dsn: str, role_dsn: Callable[[str], str], owners: tuple[Owner, Owner], capsys: pytest.CaptureFixture[str]
) -> None:
    _, b = owners
    count = 0
    failures = []
    with psycopg.connect(role_dsn("tenant_a")) as c:
        fns = [f for f in _functions(c) if f.tenant_may_call]
        c.rollback()
        for group in ("ai_user",):
            for fn in fns:
                args = [_value(name, typ, b.ids) for name, typ in fn.args]
                count += 1
                try:
                    with c.transaction(force_rollback=True):
                        c.execute(sql.SQL("set local role {}").format(sql.Identifier(group)))
                        cur = c.execute(_call_sql(fn), args)
                        text = repr(cur.fetchall()) if cur.description else ""
                        owned = c.execute("select ai.current_owner()").fetchone()
                        failures.append(f"SET ROLE {group}; {fn.signature}: succeeded as owner {owned} ({text[:80]})")
                except psycopg.Error as e:
                    if (e.sqlstate or "").startswith("XX"):
                        failures.append(f"SET ROLE {group}; {fn.signature}: {e.sqlstate} {e}")
    with psycopg.connect(dsn, autocommit=True) as su:
        rows = su.execute("select count(*) from ai.agent_sessions where owner in ('ai_user', 'ai_service')").fetchone()
        assert rows and rows[0] == 0, "no session is owned by a group role"
    pure = {"now", "estimate_tokens", "message_key", "idempotency_key", "ulid", "ulid_time"}
    failures = [f for f in failures if not any(f"ai.{p}(" in f for p in pure)]
    assert not failures, "\n".join(failures)
    _report(capsys, "SET ROLE ai_user x every function a tenant may call", count)


@pytest.mark.session_features("LISTEN: through a transaction pooler the spy would hear nothing, whatever leaked")
def test_listen_tells_a_tenant_nothing_about_other_tenants_queues(
    dsn: str, role_dsn: Callable[[str], str], owners: tuple[Owner, Owner], capsys: pytest.CaptureFixture[str]
) -> None:
    _, b = owners
    guesses = ["ai_jobs", f"ai_jobs_{hashlib.sha256(b.queue.encode()).hexdigest()[:32]}", b.queue]
    with (
        psycopg.connect(role_dsn("tenant_a"), autocommit=True) as spy,
        psycopg.connect(role_dsn("tenant_b"), autocommit=True) as victim,
    ):
        for g in guesses:
            spy.execute(sql.SQL("listen {}").format(sql.Identifier(g)))
        victim.execute("select ai.enqueue_job(%s, '{}', %s)", (b.thread, b.queue + "-listen"))
        victim.execute("select ai.enqueue_job(%s, '{}', %s)", (b.thread, b.queue))
        heard = notifications_until(spy, victim)  # everything the enqueues notified, however slow
        with psycopg.connect(dsn, autocommit=True) as su:
            su.execute("delete from ai.agent_jobs where thread_id = %s and status = 'PENDING'", (b.thread,))
        assert heard == [], f"tenant_a heard {heard}"
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            spy.execute("select ai.queue_channel(%s)", (b.queue,))
    _report(capsys, "LISTEN on the old channel and guessed channel names", len(guesses) + 1)


def test_an_advisory_lock_a_tenant_takes_does_not_starve_another_tenants_job(
    dsn: str, role_dsn: Callable[[str], str], owners: tuple[Owner, Owner]
) -> None:
    _, b = owners
    with (
        psycopg.connect(role_dsn("tenant_a")) as spy,
        psycopg.connect(role_dsn("app_service")) as worker,
    ):
        # every key the claim could use for the thread: the one it uses today, by its documented shape
        spy.execute("select pg_advisory_xact_lock(1634296929, hashtext(%s))", (b.pending_thread,))
        with worker.transaction(force_rollback=True):
            got = worker.execute(
                "select job_id from ai.claim_job('iso-w2', '1 minute', %s)", (b.queue + "-pending",)
            ).fetchall()
        spy.rollback()
    assert got == [(b.ids["pending_job"],)], "tenant_b's job is claimed although tenant_a holds an advisory lock"


HOSTILE = """
create table public.iso_spy (who text, what text);
grant insert, select on public.iso_spy to public;
create function public.iso_div(integer, numeric) returns numeric language sql as
  $$ insert into public.iso_spy values (current_setting('role'), 'int / numeric') returning 0::numeric $$;
create operator public./ (leftarg = integer, rightarg = numeric, function = public.iso_div);
create function public.iso_cat(text, bigint) returns text language sql as
  $$ insert into public.iso_spy values (current_setting('role'), 'text || bigint') returning 'x' $$;
create operator public.|| (leftarg = text, rightarg = bigint, function = public.iso_cat);
create function public.iso_cat2(bigint, text) returns text language sql as
  $$ insert into public.iso_spy values (current_setting('role'), 'bigint || text') returning 'x' $$;
create operator public.|| (leftarg = bigint, rightarg = text, function = public.iso_cat2);
create function public.iso_and(bigint, integer) returns bigint language sql as
  $$ insert into public.iso_spy values (current_setting('role'), 'bigint & integer') returning 0::bigint $$;
create operator public.& (leftarg = bigint, rightarg = integer, function = public.iso_and);
"""


def test_an_operator_planted_in_a_writable_public_never_runs_in_another_tenants_calls(
    dsn: str, owners: tuple[Owner, Owner], capsys: pytest.CaptureFixture[str]
) -> None:
    """PostgreSQL 13/14 defaults: public is writable by all. Tenant B plants operators that win
    over pg_catalog's for inexact argument types; tenant A, with public on its search_path, uses
    every function. None of B's code may run in A's calls."""
    a, _ = owners
    count = 0
    with psycopg.connect(dsn) as su:
        if superuser_reads(su) != ["reset role"]:
            # a Citus formation: B's objects on the node A's calls run on (the coordinator; no call in
            # a transaction block is delegated), not sent on to the workers, where neither the grant
            # on public nor the spy table is (a shard's query is deparsed with qualified operators)
            su.execute("set citus.enable_ddl_propagation = off")
        try:
            su.execute("grant create on schema public to tenant_b")
            su.execute("set role tenant_b")
            for stmt in [s for s in HOSTILE.split(";\n") if s.strip()]:
                su.execute(stmt)
            su.execute("reset role")
            su.commit()
            fns = [f for f in _functions(su) if f.tenant_may_call]
            su.rollback()
            for fn in fns:
                for caller in ("tenant", "service"):
                    count += 1
                    with su.transaction(force_rollback=True):
                        su.execute("set local search_path = public, pg_catalog")
                        if caller == "tenant":
                            su.execute("set local role tenant_a")
                        else:
                            su.execute("set local role app_service")
                            su.execute("select ai.act_as('tenant_a')")
                        args = [_value(name, typ, a.ids) for name, typ in fn.args]
                        try:
                            with su.transaction():
                                su.execute(_call_sql(fn), args)
                        except psycopg.Error:
                            pass
                        # the common paths too: an append (token estimate), a compaction, ULIDs
                        for extra in (
                            "select ai.append_message_idempotent(%s, 'user', '\"hostile?\"')",
                            "select ai.record_compaction(%s, 'sum', 1)",
                            "select ai.ulid_time(ai.ulid()), %s",
                        ):
                            try:
                                with su.transaction():
                                    su.execute(extra, (a.thread,))
                            except psycopg.Error:
                                pass
                        su.execute("reset role")
                        spied = su.execute("select who, what from public.iso_spy").fetchall()
                        assert spied == [], f"{caller} {fn.signature}: tenant_b's operator ran: {spied}"
        finally:
            su.rollback()
            su.execute("reset role")
            su.execute("drop table if exists public.iso_spy")
            for f in (
                "iso_div(integer, numeric)",
                "iso_cat(text, bigint)",
                "iso_cat2(bigint, text)",
                "iso_and(bigint, integer)",
            ):
                su.execute(f"drop function if exists public.{f} cascade")
            su.execute("revoke create on schema public from tenant_b")
            su.commit()
    assert count > 50
    _report(capsys, "functions x (tenant, service) with tenant_b's operators planted in a writable public", count)


def test_the_hostile_operators_would_run_for_an_unpinned_function(dsn: str) -> None:
    """The planted operator is a real threat: an unqualified int / numeric in a function without a
    pinned search_path picks it up (so the test above can fail)."""
    with psycopg.connect(dsn) as su, su.transaction(force_rollback=True):
        for stmt in [s for s in HOSTILE.split("create function public.iso_cat(")[0].split(";\n") if s.strip()]:
            su.execute(stmt)
        su.execute("create function pg_temp.naive(x integer) returns numeric language sql as $$ select x / 4.0 $$")
        su.execute("set local search_path = public, pg_catalog")
        su.execute("select pg_temp.naive(3)")
        rows = su.execute("select what from public.iso_spy").fetchall()
        assert rows == [("int / numeric",)]


def test_matrix_source_enumerates_pg_proc_not_a_list(dsn: str) -> None:
    """The function list above comes from pg_proc: a new function is in the matrix by itself."""
    with open(__file__) as f:
        src = f.read()
    assert re.search(r"from pg_proc p\s+where p.pronamespace = 'ai'::regnamespace", src)
