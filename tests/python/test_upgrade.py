"""Upgrading from a release: deploy the tagged plan, write rows through every grain with the
Python client, deploy HEAD over them, and check that every row is kept and the catalog equals a
fresh deploy of HEAD; revert to the tag (the tag's catalog again, rows kept) and deploy again.

Twice: on the project as it is (from its latest tag; skipped while the plan has none), and on a
copy in which every reworkable change (``<concern>_functions``; before the fold, the changes that
only make functions) is reworked as CONTRIBUTING.md says: ``sqitch rework``, a function's
comment changed in each deploy script and a function added to one of them, each revert made from
the tagged copy. The copy's bundle (scripts/bundle.sh) must give the catalog of its sqitch deploy and hold
each object once. The tables that must receive rows come from the catalog, so a new table cannot
be forgotten here.

The release and HEAD of this checkout are deployed once per run (conftest.py,
``deployed_templates``) and each test starts from a copy; what is tested, the deploy of HEAD over
the release's rows, the revert and the deploy again, runs in every test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pytest
from catalog import DEPLOY_USER, ROOT, catalog, env_for, owner_databases, run, sqitch
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from sql_objects import offenders, read_plan, statements, touches

from agent_state import Client
from agent_state.client import ChannelValue, PendingWrite
from agent_state.models import NewMessage

SCHEMAS = ("ai", "ai_archive")
# sqitch rework and tag need a planner's name outside a git checkout's configuration.
PLANNER = {"SQITCH_FULLNAME": "agent-state tests", "SQITCH_EMAIL": "tests@agent-state.invalid"}
# Tables that hold no row between two calls, by design (each with its reason).
EMPTY_BY_DESIGN = {
    "ai.job_fences": "one row per ai.fenced_write call, deleted within the call (its commit-time check remains)",
    "ai_archive.archive_skips": "a session a sweep could not move: with archived ids reserved, no call makes one"
    " (test_archive_conflicts.py makes a 0.1.0 duplicate as the superuser)",
    "ai.formation_secret": "the key of a Citus formation, made by ai.distribute() there; empty on one server",
    "ai.formation_two_phase": "always empty: a Citus local table whose no-op delete makes the queue's transactions with"
    " a worker two-phase on a formation",
    "ai.thread_fences": "a thread's fence, written by the claim on a Citus formation only (ai.distribute()'s trigger)",
    "ai_archive.thread_fences": "the archived fences of ai.thread_fences: empty on one server as it is",
}


@dataclass
class Database:
    name: str
    env: dict[str, str]  # libpq environment as the schema owner (sqitch, psql, pg_dump)
    server: str  # the server's DSN (superuser), for reading every row

    def dsn(self, user: str | None = None) -> str:
        params: dict[str, Any] = conninfo_to_dict(self.server)
        params["dbname"] = self.name
        if user:
            params["user"] = user
        return make_conninfo(**params)


@pytest.fixture
def databases(direct_dsn: str) -> Iterator[Any]:
    """Makes empty databases owned by the schema owner (a non-superuser, as `make deploy` uses), and
    drops them afterwards."""
    with owner_databases(direct_dsn, "agent_state_upgrade") as make:

        def database(template: str | None = None) -> Database:
            name = make(template)
            return Database(name, dict(env_for(direct_dsn, name), PGUSER=DEPLOY_USER), direct_dsn)

        yield database


# ----- rows through every grain

# 0.1.0's ai.put_checkpoint took its values as positional arrays; this checkout's client passes
# records (ai.checkpoint_values, ...), which a database of the release does not have yet.
RELEASE_PUT_CHECKPOINT = "select ai.put_checkpoint(%s, '', null, %s, %s, %b, %s, %s, %s, %s, %s, %b)"


def put_checkpoint_at(
    conn: psycopg.Connection[Any],
    thread_id: str,
    parent_id: str | None,
    type_: str,
    checkpoint: bytes,
    metadata: dict[str, Any] | None = None,
    versions: dict[str, Any] | None = None,
    values: list[ChannelValue] | None = None,
) -> str:
    """A checkpoint of a new id, through the client, or in the release's shape where the database
    is the release's; returns its id."""
    if conn.execute("select to_regtype('ai.checkpoint_values') is not null").fetchone()[0]:  # type: ignore[index]
        return Client(conn).put_checkpoint(thread_id, "", None, parent_id, type_, checkpoint, metadata, versions,
                                           values or ())  # fmt: skip
    v = values or []
    args = (thread_id, parent_id, type_, checkpoint, psycopg.types.json.Jsonb(metadata or {}),
            psycopg.types.json.Jsonb(versions or {}), [x.channel for x in v], [x.version for x in v],
            [x.type for x in v], [x.blob for x in v])  # fmt: skip
    return str(conn.execute(RELEASE_PUT_CHECKPOINT, args).fetchone()[0])  # type: ignore[index]


def write_every_grain(db: Database) -> None:
    """Rows in every table, written as a tenant (tenant_a) and a service (app_service) through the
    Python client: a thread that ends up archived (ai_archive.*), live threads with jobs in every
    status, a deleted thread (its tombstone)."""
    with (
        psycopg.connect(db.dsn("tenant_a"), autocommit=True) as tenant_conn,
        psycopg.connect(db.dsn("app_service"), autocommit=True) as service_conn,
    ):
        a, svc = Client(tenant_conn), Client(service_conn)
        queue = f"q-{uuid.uuid4().hex[:6]}"

        def claimed(thread: str, **kw: Any) -> Any:
            job = a.enqueue_job(thread, {"thread": thread}, queue=queue, **kw)
            got = svc.claim_job("upgrade-worker", timedelta(minutes=5), queue)
            assert got is not None and got.job_id == job.job_id
            return got

        def thread_with_everything(thread: str) -> None:
            a.create_session(thread, {"model": "m"})
            a.append_message(thread, "user", {"text": "hello"}, turn=1, idempotency_key="first")
            a.append_messages(thread, [NewMessage("assistant", "hi", 1), NewMessage("user", "more", 2)])
            a.record_event(thread, "note", {"n": 1})
            a.record_compaction(thread, "they said hello", through_seq=2)
            a.append_message(thread, "assistant", "to be hidden", turn=2)
            a.hide_last_message(thread)
            c1 = put_checkpoint_at(
                tenant_conn, thread, None, "json", b'{"v": 1}', {"step": 1}, {"messages": "1"},
                [ChannelValue("messages", "1", "json", b'["hello"]')],
            )  # fmt: skip
            a.put_writes(thread, "", c1, "task-1", [PendingWrite(0, "messages", "json", b'"w"')])
            c2 = put_checkpoint_at(
                tenant_conn, thread, c1, "json", b'{"v": 2}', {"step": 2}, {"messages": "2"},
                [ChannelValue("messages", "2", "json", b'["hello", "hi"]')],
            )  # fmt: skip
            a.record_eval_run(thread, "candidate-1", True, {"score": 1.0}, from_checkpoint_id=c1)
            a.record_usage(thread, "turn-1", "model-x", 10, 20, Decimal("0.0125"), {"cached": 3})
            a.record_retrieval(thread, 1, [{"id": "doc-1", "score": 0.5}], idempotency_key="r1")
            a.open_stream(thread, "finished")
            a.append_stream_chunks(thread, "finished", 1, ["Hel", "lo"])
            a.finish_stream(thread, "finished")
            a.open_stream(thread, "open")
            a.append_stream_chunks(thread, "open", 1, ["par", "tial"])
            begun = a.begin_side_effect(thread, "charge-1", {"amount": 5})
            assert begun.outcome == "execute"
            a.finish_side_effect(thread, "charge-1", {"charged": True}, None, begun.attempt)
            # a job that asked a person, was answered, resumed and completed
            job = claimed(thread)
            svc.request_human(job.job_id, job.fencing_token, c2, {"ask": "ok?"})
            a.resolve_human(thread, c2, {"approved": True})
            resumed = svc.claim_job("upgrade-worker", timedelta(minutes=5), queue)
            assert resumed is not None and resumed.job_id == job.job_id
            svc.complete_job(resumed.job_id, resumed.fencing_token, {"done": 1})

        # A thread archived with all of its rows, one of its jobs already in the job archive.
        archived = f"up-archived-{uuid.uuid4().hex[:6]}"
        thread_with_everything(archived)
        assert svc.archive_jobs(timedelta(0)), "the job archive"
        job = claimed(archived)
        svc.complete_job(job.job_id, job.fencing_token, {"done": 2})
        a.set_session_status(archived, "completed")
        assert archived in {s.thread_id for s in svc.archive_sessions(timedelta(0))}

        # Live threads: everything again, then a job in each status (one thread each: one live
        # job per thread).
        live = f"up-live-{uuid.uuid4().hex[:6]}"
        thread_with_everything(live)
        assert svc.archive_jobs(timedelta(0)), "the job archive keeps a live thread's finished job"
        statuses = {}
        for status in ("PENDING", "IN_PROGRESS", "FAILED", "CANCELLED", "AWAITING_HUMAN", "COMPLETED", "RETRYING"):
            thread = f"{live}-{status.lower()}"
            a.create_session(thread)
            if status == "PENDING":
                statuses[status] = a.enqueue_job(thread, None, queue=f"{queue}-idle").job_id
            elif status == "CANCELLED":
                statuses[status] = a.enqueue_job(thread, None, queue=f"{queue}-idle").job_id
                a.cancel_job(statuses[status])
            else:
                job = claimed(thread, max_attempts=1 if status == "FAILED" else 5)
                statuses[status] = job.job_id
                if status == "FAILED":
                    svc.fail_job(job.job_id, job.fencing_token, "gave up")
                elif status == "RETRYING":  # failed once, waiting for its next attempt
                    svc.fail_job(job.job_id, job.fencing_token, "try again", timedelta(hours=1))
                elif status == "AWAITING_HUMAN":
                    checkpoint = put_checkpoint_at(tenant_conn, thread, None, "json", b"{}")
                    svc.request_human(job.job_id, job.fencing_token, checkpoint, {"ask": "?"})
                elif status == "COMPLETED":
                    with service_conn.transaction():
                        svc.fenced_write(job.job_id, job.fencing_token)
                    svc.complete_job(job.job_id, job.fencing_token, None)
        for status, job_id in statuses.items():
            expected = "PENDING" if status == "RETRYING" else status
            assert a.get_job(job_id).status == expected, status
        # ai.queue_workers (after 0.1.0): a worker's liveness hold, given up cleanly (the row stays)
        if service_conn.execute("select to_regclass('ai.queue_workers') is not null").fetchone() == (True,):
            service_conn.execute("select ai.hold_worker_liveness('upgrade-worker')")
            service_conn.execute("select ai.release_worker_liveness('upgrade-worker')")
        # ai.queue_deadlines (change job_deadlines): an operator's default deadlines for a queue
        if service_conn.execute("select to_regclass('ai.queue_deadlines') is not null").fetchone() == (True,):
            service_conn.execute(
                "select ai.set_queue_deadlines('upgrade-queue', interval '1 minute', interval '1 hour')"
            )
        # ai.job_keys (after 0.1.0): a key's weight and limits, set by an operator
        if service_conn.execute("select to_regclass('ai.job_keys') is not null").fetchone() == (True,):
            service_conn.execute("select ai.set_job_key('default', 'upgrade-provider', 2, 5, 60)")

        deleted = f"up-deleted-{uuid.uuid4().hex[:6]}"
        a.create_session(deleted)
        assert a.delete_thread(deleted)

        # Long-term memory (changes memory, memory_functions), when the plan deployed has them: an
        # item with an expiry and embeddings (ai.memory_vectors), one a service keeps for an end user.
        if tenant_conn.execute("select to_regprocedure('ai.batch_memory(jsonb)') is not null").fetchone() == (True,):
            a.put_memory(
                ("users", "a"), "prefs", {"theme": "dark"}, ttl=timedelta(days=1), embeddings={"theme": [1.0, 0.5]}
            )
            with svc.acting_as("end-user-1") as bound:
                bound.put_memory(("users", "end-user-1"), "facts", {"likes": "tea"})
            # and an archived item with its embeddings (ai_archive.memory_items, memory_vectors)
            a.put_memory(("old", "a"), "notes", {"text": "archived"}, embeddings={"text": [0.5, 1.0]})
            assert a.archive_memory(("old",)) == 1


def tables(db: Database) -> list[str]:
    with psycopg.connect(db.dsn(), autocommit=True) as conn:
        rows = conn.execute(
            "select c.oid::regclass::text from pg_class c join pg_namespace n on n.oid = c.relnamespace"
            " where n.nspname = any(%s) and c.relkind in ('r', 'p') order by 1",
            (list(SCHEMAS),),
        ).fetchall()
    return [t for (t,) in rows]


def rows(db: Database, columns: dict[str, list[str]] | None = None) -> dict[str, tuple[list[str], list[str]]]:
    """Every row of every table of the schemas (or of the tables and columns given), as sorted JSON
    texts, read as the superuser (row level security aside)."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    with psycopg.connect(db.dsn(), autocommit=True) as conn:
        if columns is None:
            columns = {}
            for table in tables(db):
                attributes = conn.execute(
                    "select attname from pg_attribute where attrelid = %s::regclass and attnum > 0"
                    " and not attisdropped order by attnum",
                    (table,),
                ).fetchall()
                columns[table] = [str(c) for (c,) in attributes]
        for table, cols in columns.items():
            schema, name = table.split(".")
            query = sql.SQL("select pg_catalog.row_to_json(x)::text from (select {} from {}) x order by 1").format(
                sql.SQL(", ").join(map(sql.Identifier, cols)), sql.Identifier(schema, name)
            )
            found[table] = (cols, [r for (r,) in conn.execute(query).fetchall()])
    return found


# Columns a change after the tag drops on purpose (the change, and why); its revert adds them back,
# computed from the rows they stand for. Every other column of the tag must keep its values.
DROPPED_BY_DESIGN: dict[str, set[str]] = {
    # sessions_dead_columns: nothing writes them since issue 20; the reads compute them (ai.session)
    "ai.agent_sessions": {"last_seq", "current_checkpoint_id"},
    "ai_archive.agent_sessions": {"last_seq", "current_checkpoint_id"},
}


def _without(row: str, columns: set[str]) -> str:
    """A row's JSON text without the given columns, in a canonical form."""
    values = json.loads(row)
    return json.dumps({k: v for k, v in values.items() if k not in columns}, sort_keys=True)


def kept(before: dict[str, tuple[list[str], list[str]]], db: Database) -> None:
    with psycopg.connect(db.dsn(), autocommit=True) as conn:
        present = {
            table: {
                str(c)
                for (c,) in conn.execute(
                    "select attname from pg_attribute where attrelid = %s::regclass"
                    " and attnum > 0 and not attisdropped",
                    (table,),
                ).fetchall()
            }
            for table in before
        }
    gone = {table: {c for c in cols if c not in present.get(table, set())} for table, (cols, _) in before.items()}
    for table, columns in gone.items():
        unexpected = columns - DROPPED_BY_DESIGN.get(table, set())
        assert not unexpected, f"{table}: columns lost by the upgrade: {sorted(unexpected)}"
    after = rows(db, {table: [c for c in cols if c not in gone[table]] for table, (cols, _) in before.items()})
    for table, (_, old) in before.items():
        # every row as it was; a change may add rows of its own (error codes, say)
        if gone[table]:
            missing = Counter(_without(r, gone[table]) for r in old) - Counter(
                _without(r, set()) for r in after[table][1]
            )
        else:
            missing = Counter(old) - Counter(after[table][1])
        assert not missing, f"{table}: rows changed by the upgrade: {sorted(missing)[:3]}"


def _columns_in_any_order(text: str) -> str:
    """A catalog (catalog.py) with each table's columns sorted: a revert can add a dropped column
    back only at the end of the row (DROPPED_BY_DESIGN), the one difference from the tag it may
    leave."""

    def sort_block(match: re.Match[str]) -> str:
        lines = [line.rstrip(",") for line in match.group(2).split("\n")]
        return match.group(1) + ",\n".join(sorted(lines)) + match.group(3)

    text = re.sub(r"(CREATE TABLE [^\n]+ \(\n)(.*?)(\n\))", sort_block, text, flags=re.S)
    return re.sub(r"( columns=)([^\n]*)", lambda m: m.group(1) + ", ".join(sorted(m.group(2).split(", "))), text)


# ----- the upgrade, revert and redeploy


def upgrade_round_trip(project: Path, tag: str, databases: Any, deployed: Any = None) -> Database:
    """Returns the fresh deploy of HEAD it compared with. ``deployed`` (conftest.py's
    ``deployed_templates``, for this checkout's own plan): the tag and the fresh HEAD are copies of
    the databases deployed once per run; without it (a reworked copy of the project) both are
    deployed here."""
    if deployed is not None:
        old, fresh = databases(deployed(tag)), databases(deployed(None))
    else:
        old, fresh = databases(), databases()
        sqitch(["deploy", "--verify", "--to", f"@{tag}"], old.env, project)
        sqitch(["deploy", "--verify"], fresh.env, project)
    tagged = catalog(old.env)
    write_every_grain(old)
    before = rows(old)
    empty = sorted(table for table, (_, found) in before.items() if not found and table not in EMPTY_BY_DESIGN)
    assert not empty, f"no rows written into {empty}: add them to write_every_grain"

    sqitch(["deploy", "--verify"], old.env, project)
    kept(before, old)
    head = catalog(fresh.env)
    assert catalog(old.env) == head, "an upgraded database differs from a fresh deploy of HEAD"

    sqitch(["revert", "-y", "--to", f"@{tag}"], old.env, project)
    assert _columns_in_any_order(catalog(old.env)) == _columns_in_any_order(tagged), (
        "the revert does not restore the tag's catalog"
    )
    kept(before, old)
    sqitch(["deploy", "--verify"], old.env, project)
    assert catalog(old.env) == head
    kept(before, old)
    return fresh


def latest_tag(plan_text: str) -> str | None:
    tags = [e.tag for e in read_plan(plan_text) if e.tag is not None]
    return tags[-1] if tags else None


def test_upgrade_from_the_latest_release_tag_keeps_every_row(databases: Any, deployed_templates: Any) -> None:
    tag = latest_tag((ROOT / "sqitch.plan").read_text())
    if tag is None:
        pytest.skip("sqitch.plan has no release tag yet (the reworked copy below tags one)")
    upgrade_round_trip(ROOT, tag, databases, deployed_templates)


# ----- a rework, as CONTRIBUTING.md describes it, on a copy of the project


def reworkable(project: Path) -> list[str]:
    """The ``<concern>_functions`` changes; on a plan without them, the changes that only make
    functions (and triggers) and whose objects no other script touches."""
    plan = read_plan((project / "sqitch.plan").read_text())
    names = list(dict.fromkeys(e.change for e in plan if e.tag is None))
    chosen = [c for c in names if c.endswith("_functions")]
    if chosen:
        return chosen
    units = [(c, (project / "deploy" / f"{c}.sql").read_text()) for c in names]
    shared = {line.split(":")[0] for line in offenders(units)}
    for change, text in units:
        made = [t for t in touches(text) if t.created]
        only_functions = made and all(t.obj.startswith(("function ", "trigger ")) for t in made)
        if (
            only_functions
            and not any(t.obj in shared for t in made)
            and not any(s.startswith("do ") for s in statements(text))
        ):
            chosen.append(change)
    return chosen


def _replaceable(text: str) -> str:
    """Before the fold, the functions-only changes say `create function`: a reworked script and
    its revert run over an existing version, so they must replace (a no-op once they do)."""
    return re.sub(r"(?im)^create (function|procedure|trigger) ", r"create or replace \1 ", text)


def rework(project: Path, tag: str, change: str, probe: bool) -> None:
    run(["sqitch", "rework", change, "-n", f"{change}: reworked by the upgrade test"], {**_env(), **PLANNER}, project)
    deploy, revert = project / "deploy" / f"{change}.sql", project / "revert" / f"{change}.sql"
    tagged = (project / "deploy" / f"{change}@{tag}.sql").read_text()
    assert deploy.read_text() == tagged, "sqitch rework starts from the tagged script"
    new, count = re.subn(
        r"(comment on (?:function|procedure) [^;]*? is\s+)(E?')", r"\1\2Reworked. ", _replaceable(tagged), count=1
    )
    assert count == 1, f"deploy/{change}.sql comments no function"
    # the revert restores the tagged version: the tagged script, after dropping what the new one adds
    restore = _replaceable(tagged)
    if probe:
        new = new.replace(
            "\ncommit;",
            "\ncreate or replace function ai.rework_probe() returns integer language sql immutable"
            " set search_path = pg_catalog, pg_temp as $$ select 1 $$;"
            "\ncomment on function ai.rework_probe() is 'Added by a rework.';"
            "\nrevoke execute on function ai.rework_probe() from public;\ncommit;",
        )
        restore = restore.replace("begin;", "begin;\n\ndrop function ai.rework_probe();", 1)
    deploy.write_text(new)
    revert.write_text(restore)


def _env() -> dict[str, str]:
    return dict(os.environ)


def test_upgrade_through_reworked_functions_keeps_every_row(databases: Any, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    for name in ("sqitch.conf", "sqitch.plan"):
        shutil.copy(ROOT / name, project / name)
    for folder in ("deploy", "revert", "verify", "scripts"):
        shutil.copytree(ROOT / folder, project / folder)
    # Rework against a tag at the end of the plan: the release itself, or one made here (a change
    # already reworked since the last release can be reworked again only after a newer tag).
    plan = read_plan((project / "sqitch.plan").read_text())
    if plan and plan[-1].tag is not None:
        tag = plan[-1].tag
    else:
        tag = "upgrade-test" if latest_tag((project / "sqitch.plan").read_text()) else "v0.1.0"
        run(["sqitch", "tag", tag, "-n", "the release the upgrade test starts from"], {**_env(), **PLANNER}, project)
    changes = reworkable(project)
    assert changes, "no change of the plan can be reworked"
    for k, change in enumerate(changes):
        rework(project, tag, change, probe=k == 0)

    by_sqitch = upgrade_round_trip(project, tag, databases)  # its fresh deploy of the reworked HEAD

    # The bundle of the reworked plan: each change's current script once, the catalog of sqitch.
    bundle = run(["scripts/bundle.sh"], _env(), project)
    sections = re.split(r"(?m)^-- ===== change: ([a-z_0-9]+) =====$", bundle)
    names = sections[1::2]
    assert len(names) == len(set(names)) and set(changes) <= set(names)
    assert offenders(list(zip(names, sections[2::2], strict=True))) == offenders(
        [(c, (project / "deploy" / f"{c}.sql").read_text()) for c in names]
    )
    by_bundle = databases()
    (project / "bundle.sql").write_text(bundle)
    run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", str(project / "bundle.sql")], by_bundle.env)
    last = [e.change for e in read_plan((project / "sqitch.plan").read_text()) if e.tag is None][-1]
    marker = f" (installed from the bundle up to change {last})"
    bundled = catalog(by_bundle.env)
    assert marker in bundled
    assert bundled.replace(marker, "") == catalog(by_sqitch.env)
    with psycopg.connect(by_sqitch.dsn(), autocommit=True) as conn:
        found = conn.execute("select obj_description('ai.rework_probe()'::regprocedure, 'pg_proc')").fetchone()
        assert found == ("Added by a rework.",)


# ----- checkpoints written by the release read back the same, and deltas extend them


def test_checkpoints_of_the_release_read_back_identical_and_a_delta_extends_their_lists(
    databases: Any, deployed_templates: Any
) -> None:
    tag = latest_tag((ROOT / "sqitch.plan").read_text())
    if tag is None:
        pytest.skip("sqitch.plan has no release tag yet")
    import ormsgpack

    db = databases(deployed_templates(tag))
    thread = f"up-lists-{uuid.uuid4().hex[:6]}"
    items = [{"role": "user", "content": f"message {i} " + "x" * 400} for i in range(40)]
    read = "select * from ai.list_checkpoints(%s, '', null, null, null) order by checkpoint_id"
    with psycopg.connect(db.dsn("tenant_a"), autocommit=True) as conn:
        a = Client(conn)
        a.create_session(thread)
        parent = None
        for n in (1, 20, 40):  # whole list values, as 0.1.0 writes every version
            parent = put_checkpoint_at(
                conn, thread, parent, "msgpack", b"\x80", {"step": n}, {"messages": f"{n:04}"},
                [ChannelValue("messages", f"{n:04}", "msgpack", ormsgpack.packb(items[:n]))],
            )  # fmt: skip
        a.put_writes(thread, "", parent, "task", [PendingWrite(0, "messages", "msgpack", ormsgpack.packb(items[-1:]))])
        before = conn.execute(read, (thread,)).fetchall()
    sqitch(["deploy", "--verify"], db.env, ROOT)
    with psycopg.connect(db.dsn("tenant_a"), autocommit=True) as conn:
        assert conn.execute(read, (thread,)).fetchall() == before
        # a step of this release extends the release's whole value with the items it appends
        more = [{"role": "assistant", "content": "reply"}]
        conn.execute(
            "select ai.put_checkpoint(%s, '', 'c-next', %s, 'msgpack', %s, '{}', %s,"
            " row(array['messages'], array['0041'], array['msgpack'], array[%s], array['0040'])::ai.checkpoint_values)",
            (thread, parent, b"\x80", psycopg.types.json.Jsonb({"messages": "0041"}), ormsgpack.packb(more)),
        )
        (channels, blobs) = conn.execute(
            "select blob_channels, blobs from ai.get_checkpoint(%s, '', 'c-next')", (thread,)
        ).fetchone()
        assert channels == ["messages"] and ormsgpack.unpackb(blobs[0]) == items + more
