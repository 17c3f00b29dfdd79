"""The console's pages and actions: each one calls ``ai`` functions only, as the logged-in role."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .. import errors
from .app import (
    JOB_STATUSES,
    SESSION_STATUSES,
    Console,
    Login,
    Refused,
    as_json,
    build_tree,
    parse_age,
    parse_meta,
    plain,
    query_string,
    sse_response,
    throughput_chart,
    verify_password,
    with_user,
)

Conn = psycopg.Connection[Any]


def _console(request: Request) -> Console:
    console: Console = request.state.console
    return console


def _guarded(request: Request, work: Callable[[], Response]) -> Response:
    """Runs a page; a refusal is a 403 page, a domain error (AS...) a 400 page with its message."""
    console = _console(request)
    try:
        return work()
    except Refused as refused:
        return console.render(request, "error.html", 403, title="Refused", message=str(refused))
    except errors.AgentStateError as error:
        return console.render(request, "error.html", 400, title=type(error).__name__, message=str(error))
    except ValueError as error:
        return console.render(request, "error.html", 400, title="Bad request", message=str(error))
    except psycopg.Error as error:
        return console.render(request, "error.html", 500, title="Database error", message=str(error).strip())


def _attachment(name: str) -> str:
    """A JSON download's header, its file name made of the URL's ids: letters, digits, '.', '-', '_'."""
    return f'attachment; filename="{re.sub(r"[^A-Za-z0-9._-]", "_", name)[:120]}.json"'


def _back(request: Request, default: str) -> str:
    """Where an action returns: a path of this console (never another site)."""
    root = str(request.scope.get("root_path", ""))
    target: str = str(request.query_params.get("next") or default)
    if not target.startswith("/") or target.startswith("//"):
        target = default
    return root + target


# -- login -------------------------------------------------------------------------------------------


async def login(request: Request) -> Response:
    console = _console(request)
    state: Login = request.state.login
    if request.method == "GET":
        return console.render(request, "login.html", title="Log in", error=None)
    form = await request.form()
    try:
        console.check_csrf(request, form)
    except Refused as refused:
        return console.render(request, "login.html", 403, title="Log in", error=str(refused))
    user = str(form.get("user") or "").strip()
    password = str(form.get("password") or "")
    if not user:
        return console.render(request, "login.html", 400, title="Log in", error="a user name is needed")
    if console.config.auth == "password":
        stored = console.users.get(user)
        if stored is None or not verify_password(password, stored):
            return console.render(request, "login.html", 401, title="Log in", error="wrong user name or password")
        console.logins.log_in(state, user, None)
        state.conninfo = None
    else:
        conninfo = with_user(console.config.database_url, user, password)

        def check() -> str | None:
            try:
                with psycopg.connect(conninfo, autocommit=True) as conn:
                    conn.execute("select ai.sees_all_owners()", prepare=False)
                return None
            except psycopg.Error as error:
                return f"cannot log in as {user}: {str(error).strip().splitlines()[0]}"

        problem = await run_in_threadpool(check)
        if problem is not None:
            return console.render(request, "login.html", 401, title="Log in", error=problem)
        console.logins.log_in(state, user, password)
        state.conninfo = conninfo
    return RedirectResponse(_back(request, "/runs"), status_code=303)


async def logout(request: Request) -> Response:
    console = _console(request)
    form = await request.form()
    try:
        console.check_csrf(request, form)
    except Refused as refused:
        return console.render(request, "error.html", 403, title="Refused", message=str(refused))
    state: Login = request.state.login
    state.user, state.password, state.conninfo = None, None, None
    return RedirectResponse(f"{request.scope.get('root_path', '')}/login", status_code=303)


def home(request: Request) -> Response:
    return RedirectResponse(f"{request.scope.get('root_path', '')}/runs", status_code=303)


# -- runs --------------------------------------------------------------------------------------------


def _runs_context(console: Console, conn: Conn, request: Request) -> dict[str, Any]:
    q = request.query_params
    kind = q.get("kind") or "jobs"
    if kind not in ("jobs", "sessions"):
        raise ValueError("kind is jobs or sessions")
    status = q.get("status") or None
    queue = q.get("queue") or None
    owner = q.get("owner") or None
    age = parse_age(q.get("age"))
    meta = parse_meta(q.get("meta"))
    meta_args = meta if meta is not None else (None, None)  # (path, value): ai.find_jobs / ai.find_sessions
    before = q.get("before") or None
    limit = console.config.page_size
    now = console.rows(conn, "select ai.now() as now")[0]["now"]
    ident = console.identity(conn)
    rows: list[dict[str, Any]]
    next_before: str | None = None
    if kind == "jobs":
        if status:
            status = status.upper()
        if status and status not in JOB_STATUSES:
            raise ValueError(f"status {status} is not one of {', '.join(JOB_STATUSES)}")
        cursor = int(before) if before else None
        rows = console.rows(
            conn,
            "select * from ai.find_jobs(%s, %s, %s, %s, %s, %s, %s, %s)",
            (queue, status, owner, age, *meta_args, limit, cursor),
        )
        if len(rows) == limit:
            next_before = str(rows[-1]["job_id"])
    else:
        if status and status not in SESSION_STATUSES:
            raise ValueError(f"status {status} is not one of {', '.join(SESSION_STATUSES)}")
        rows = console.rows(
            conn,
            "select * from ai.find_sessions(%s, %s, %s, %s, %s, %s, %s)",
            (status, owner, age, *meta_args, limit, before),
        )
        if len(rows) == limit:
            next_before = str(rows[-1]["thread_id"])
    stats = console.rows(conn, "select * from ai.queue_stats(%s)", (queue,))
    counts = {s: sum(int(r[s.lower()] or 0) for r in stats) for s in JOB_STATUSES}
    session_counts: dict[str, int] = {}
    if kind == "sessions":
        counted = console.rows(conn, "select * from ai.session_status_counts(%s)", (owner,))
        session_counts = {r["status"]: int(r["sessions"]) for r in counted}
    filters = {
        "kind": kind,
        "status": q.get("status"),
        "queue": queue,
        "owner": owner,
        "age": q.get("age"),
        "meta": q.get("meta"),
    }
    return {
        "kind": kind,
        "rows": rows,
        "filters": filters,
        "counts": counts,
        "session_counts": session_counts,
        "queues": [r["queue"] for r in stats],
        "next_url": "?" + query_string({**filters, "before": next_before}) if next_before else None,
        "first_url": "?" + query_string(filters) if before else None,
        "partial_url": "?" + query_string({**filters, "before": before, "partial": 1}),
        "operator": ident["operator"],
        "role": ident["role"],
        "now": now,
        "poll_seconds": console.config.poll_seconds,
        "job_statuses": JOB_STATUSES,
        "session_statuses": SESSION_STATUSES,
    }


def runs(request: Request) -> Response:
    console = _console(request)

    def work() -> Response:
        with console.connect(request.state.login) as conn:
            context = _runs_context(console, conn, request)
        if request.query_params.get("partial"):
            return console.render(request, "_runs_table.html", **context)
        return console.render(request, "runs.html", title="Runs", **context)

    return _guarded(request, work)


async def events(request: Request) -> Response:
    return sse_response(_console(request), request.state.login)


# -- a run -------------------------------------------------------------------------------------------


def _run_context(console: Console, conn: Conn, thread_id: str) -> dict[str, Any]:
    ident = console.identity(conn)
    session = console.rows(conn, "select * from ai.get_session(%s)", (thread_id,))[0]  # AS001: not yours
    timeline = console.rows(conn, "select * from ai.session_timeline(%s, %s)", (thread_id, 1000))
    tree = console.rows(conn, "select * from ai.checkpoint_tree(%s, '', %s)", (thread_id, 1000))
    jobs = console.rows(conn, "select * from ai.list_jobs(null, null, %s, %s)", (thread_id, 100))
    attempts = {j["job_id"]: console.rows(conn, "select * from ai.job_attempts(%s)", (j["job_id"],)) for j in jobs}
    start = session["created_at"] - timedelta(days=1)
    end = console.rows(conn, "select ai.now() + interval '1 day' as t")[0]["t"]
    usage = [
        u
        for u in console.rows(conn, "select * from ai.usage_summary(%s, %s, array['thread', 'model'])", (start, end))
        if u["thread_id"] == thread_id
    ]
    streams = console.rows(conn, "select * from ai.list_streams(%s)", (thread_id,))
    forks = console.rows(conn, "select * from ai.list_forks(%s, %s)", (thread_id, 100))
    approvals = [
        r for r in console.rows(conn, "select * from ai.pending_approvals(null, %s)", (1000,))
        if r["thread_id"] == thread_id
    ]  # fmt: skip
    return {
        "session": session,
        "timeline": timeline,
        "tree": build_tree(tree),
        "checkpoints": len(tree),
        "jobs": jobs,
        "attempts": attempts,
        "usage": usage,
        "streams": streams,
        "forks": forks,
        "approvals": approvals,
        "operator": ident["operator"],
        "role": ident["role"],
        "thread_id": thread_id,
    }


def run(request: Request) -> Response:
    console = _console(request)
    thread_id = request.path_params["thread_id"]

    def work() -> Response:
        with console.connect(request.state.login) as conn:
            context = _run_context(console, conn, thread_id)
        return console.render(request, "run.html", title=f"Run {thread_id}", **context)

    return _guarded(request, work)


def item(request: Request) -> Response:
    """One timeline item's whole detail as a JSON download (what the page cut)."""
    console = _console(request)
    thread_id, kind, ref = (request.path_params[k] for k in ("thread_id", "item", "ref"))

    def work() -> Response:
        with console.connect(request.state.login) as conn:
            rows = console.rows(conn, "select * from ai.session_timeline(%s, %s)", (thread_id, 10000))
        found = [r for r in rows if r["item"] == kind and r["ref"] == ref]
        if not found:
            raise errors.NotFound(f"no {kind} {ref} in thread {thread_id}")
        return Response(
            as_json(found[0]),
            media_type="application/json",
            headers={"Content-Disposition": _attachment(f"{kind}-{ref}")},
        )

    return _guarded(request, work)


def _checkpoint_state(conn: Conn, thread_id: str, checkpoint_id: str) -> dict[str, Any] | None:
    """The checkpoint decoded by the LangGraph saver (``ai.get_checkpoint`` underneath) when the
    langgraph extra is installed; otherwise None (the page then shows metadata only)."""
    try:
        from ..langgraph import AgentStateSaver
    except ImportError:
        return None
    saver = AgentStateSaver(conn)
    found = saver.get_tuple(
        {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}}
    )
    if found is None:
        return None
    state: dict[str, Any] = plain(found.checkpoint.get("channel_values", {}))
    return state


def checkpoint(request: Request) -> Response:
    console = _console(request)
    thread_id, checkpoint_id = request.path_params["thread_id"], request.path_params["checkpoint_id"]

    def work() -> Response:
        conninfo = request.state.login.conninfo or console.config.database_url
        with console.connect(request.state.login) as conn:
            ident = console.identity(conn)
            console.rows(conn, "select * from ai.get_session(%s)", (thread_id,))  # AS001: not yours
            tree = console.rows(conn, "select * from ai.checkpoint_tree(%s, '', %s)", (thread_id, 10000))
            node = next((r for r in tree if r["checkpoint_id"] == checkpoint_id), None)
            if node is None:
                raise errors.NotFound(f"no checkpoint {checkpoint_id} in thread {thread_id}")
            # the saver reads tuple rows: a connection of its own
            with psycopg.connect(conninfo, autocommit=True, prepare_threshold=None) as plain_conn:
                state = _checkpoint_state(plain_conn, thread_id, checkpoint_id)
                parent_id = node["parent_checkpoint_id"]
                parent = _checkpoint_state(plain_conn, thread_id, parent_id) if parent_id else {}
        if request.query_params.get("download"):
            return Response(
                as_json({"checkpoint": node, "state": state}),
                media_type="application/json",
                headers={"Content-Disposition": _attachment(f"checkpoint-{checkpoint_id}")},
            )
        diff = list(
            difflib.unified_diff(
                as_json(parent or {}).splitlines(),
                as_json(state or {}).splitlines(),
                fromfile=f"parent {parent_id or '(none)'}",
                tofile=f"checkpoint {checkpoint_id}",
                lineterm="",
            )
        )
        return console.render(
            request,
            "checkpoint.html",
            title=f"Checkpoint {checkpoint_id}",
            thread_id=thread_id,
            node=node,
            state=state,
            diff=diff,
            operator=ident["operator"],
            download="?download=1",
        )

    return _guarded(request, work)


# -- approvals ---------------------------------------------------------------------------------------


def approvals(request: Request) -> Response:
    console = _console(request)

    def work() -> Response:
        with console.connect(request.state.login) as conn:
            ident = console.identity(conn)
            rows = console.rows(conn, "select * from ai.pending_approvals(null, %s)", (1000,))
        return console.render(request, "approvals.html", title="Approvals", rows=rows, operator=ident["operator"])

    return _guarded(request, work)


async def resolve(request: Request) -> Response:
    """approve / reject / edit and approve, through ``ai.resolve_human``. A service acting for
    nobody decides for the thread's owner (``ai.act_as`` in the same transaction)."""
    console = _console(request)
    form = await request.form()

    def work() -> Response:
        console.check_csrf(request, form)
        thread_id = str(form.get("thread_id") or "")
        checkpoint_id = str(form.get("checkpoint_id") or "")
        choice = str(form.get("decision") or "")
        decision: dict[str, Any]
        if choice == "approve":
            decision = {"approved": True}
        elif choice == "reject":
            decision = {"approved": False}
            if form.get("reason"):
                decision["reason"] = str(form.get("reason"))
        elif choice == "edit":
            try:
                edited = json.loads(str(form.get("edited_action") or ""))
            except json.JSONDecodeError as error:
                raise ValueError(f"the edited action is not JSON: {error}") from error
            decision = {"approved": True, "edited_action": edited}
        else:
            raise ValueError("decision is approve, reject or edit")
        with console.connect(request.state.login) as conn:
            ident = console.identity(conn)
            console.check_action(False, ident)
            with conn.transaction():
                if ident["operator"]:
                    owner = console.rows(conn, "select owner from ai.get_session(%s)", (thread_id,))[0]["owner"]
                    console.rows(conn, "select ai.act_as(%s)", (owner,))
                console.rows(
                    conn, "select * from ai.resolve_human(%s, %s, %s)", (thread_id, checkpoint_id, Jsonb(decision))
                )
        return RedirectResponse(_back(request, "/approvals"), status_code=303)

    return await run_in_threadpool(_guarded, request, work)


# -- queues ------------------------------------------------------------------------------------------


def queues(request: Request) -> Response:
    console = _console(request)

    def work() -> Response:
        with console.connect(request.state.login) as conn:
            ident = console.identity(conn)
            stats = console.rows(conn, "select * from ai.queue_stats()")
            now = console.rows(conn, "select ai.now() as now")[0]["now"]
            buckets = console.rows(conn, "select * from ai.queue_throughput(null, '1 hour', '5 minutes')")
            charts = {
                s["queue"]: throughput_chart([b for b in buckets if b["queue"] == s["queue"]], now) for s in stats
            }
            workers: list[dict[str, Any]] | None
            try:
                workers = console.rows(conn, "select * from ai.list_workers(%s)", (100,))
            except (errors.AgentStateError, psycopg.Error):
                workers = None  # for ai_service only
        return console.render(
            request,
            "queues.html",
            title="Queues",
            stats=stats,
            charts=charts,
            workers=workers,
            operator=ident["operator"],
        )

    return _guarded(request, work)


# -- operator actions --------------------------------------------------------------------------------


async def job_action(request: Request) -> Response:
    """retry (``ai.retry_dead_job``), cancel (``ai.cancel_job``), release a stuck lease
    (``ai.release_job`` with the job's current fencing token): service role only."""
    console = _console(request)
    form = await request.form()

    def work() -> Response:
        console.check_csrf(request, form)
        action = str(form.get("action") or "")
        job_id = int(str(form.get("job_id") or "0"))
        with console.connect(request.state.login) as conn:
            console.check_action(True, console.identity(conn))
            if action == "retry":
                console.rows(conn, "select * from ai.retry_dead_job(%s)", (job_id,))
            elif action == "cancel":
                console.rows(conn, "select * from ai.cancel_job(%s)", (job_id,))
            elif action == "release":
                job = console.rows(conn, "select * from ai.get_job(%s)", (job_id,))[0]
                console.rows(conn, "select * from ai.release_job(%s, %s)", (job_id, job["fencing_token"]))
            else:
                raise ValueError("action is retry, cancel or release")
        return RedirectResponse(_back(request, "/runs"), status_code=303)

    return await run_in_threadpool(_guarded, request, work)


async def fork(request: Request) -> Response:
    """``ai.fork_thread`` from a checkpoint: a new thread of the same owner; shows its page."""
    console = _console(request)
    form = await request.form()

    def work() -> Response:
        console.check_csrf(request, form)
        thread_id, checkpoint_id = str(form.get("thread_id") or ""), str(form.get("checkpoint_id") or "")
        with console.connect(request.state.login) as conn:
            console.check_action(True, console.identity(conn))
            new = console.rows(conn, "select ai.fork_thread(%s, %s) as t", (thread_id, checkpoint_id))[0]["t"]
        return RedirectResponse(f"{request.scope.get('root_path', '')}/runs/{new}", status_code=303)

    return await run_in_threadpool(_guarded, request, work)


async def replay(request: Request) -> Response:
    """Replay with another model: ``ai.fork_thread`` from the checkpoint, then ``ai.enqueue_job`` on
    the fork in the queue of the thread's last job, with ``{"graph_input": null, "replay":
    {from_thread, from_checkpoint, model}}`` as payload: a graph run (agent_state.graph_runs) goes on
    from the fork's checkpoint with the model in ``config["configurable"]["model"]`` (docs/console.md)."""
    console = _console(request)
    form = await request.form()

    def work() -> Response:
        console.check_csrf(request, form)
        thread_id, checkpoint_id = str(form.get("thread_id") or ""), str(form.get("checkpoint_id") or "")
        model = str(form.get("model") or "").strip()
        if not model:
            raise ValueError("name the model to replay with")
        with console.connect(request.state.login) as conn:
            console.check_action(True, console.identity(conn))
            jobs = console.rows(conn, "select * from ai.list_jobs(null, null, %s, 1)", (thread_id,))
            queue = jobs[0]["queue"] if jobs else "graph-runs"
            owner = console.rows(conn, "select owner from ai.get_session(%s)", (thread_id,))[0]["owner"]
            with conn.transaction():
                console.rows(conn, "select ai.act_as(%s)", (owner,))
                new = console.rows(conn, "select ai.fork_thread(%s, %s) as t", (thread_id, checkpoint_id))[0]["t"]
                payload = {
                    "graph_input": None,  # agent_state.graph_runs.INPUT_KEY: on from the fork's checkpoint
                    "replay": {"from_thread": thread_id, "from_checkpoint": checkpoint_id, "model": model},
                }
                console.rows(conn, "select * from ai.enqueue_job(%s, %s, %s)", (new, Jsonb(payload), queue))
        return RedirectResponse(f"{request.scope.get('root_path', '')}/runs/{new}", status_code=303)

    return await run_in_threadpool(_guarded, request, work)


_BULK = {"retry": "select * from ai.retry_dead_job(%s)", "cancel": "select * from ai.cancel_job(%s)"}


async def bulk(request: Request) -> Response:
    """Retry or cancel every job of a filter (queue, status), after a confirmation page with the count;
    the second POST carries the count it confirmed, and the action runs over the jobs listed again."""
    console = _console(request)
    form = await request.form()

    def work() -> Response:
        console.check_csrf(request, form)
        action = str(form.get("action") or "")
        queue = str(form.get("queue") or "") or None
        status = str(form.get("status") or "") or None
        if action == "retry":
            status = "FAILED"
        elif action == "cancel":
            if status not in ("PENDING", "IN_PROGRESS", "AWAITING_HUMAN"):
                raise ValueError("bulk cancel needs a status filter of PENDING, IN_PROGRESS or AWAITING_HUMAN")
        else:
            raise ValueError("action is retry or cancel")
        with console.connect(request.state.login) as conn:
            console.check_action(True, console.identity(conn))
            ids = [
                r["job_id"]
                for r in console.rows(conn, "select * from ai.list_jobs(%s, %s, null, %s)", (queue, status, 10000))
            ]
            confirmed = form.get("confirm")
            if confirmed is None or int(str(confirmed)) != len(ids):
                return console.render(
                    request, "confirm.html", title="Confirm", action=action, queue=queue, job_status=status,
                    count=len(ids), stale=confirmed is not None,
                )  # fmt: skip
            statement = _BULK[action]
            done = 0
            for job_id in ids:
                try:
                    console.rows(conn, statement, (job_id,))
                    done += 1
                except (errors.InvalidTransition, errors.NotFound):
                    pass  # finished or moved meanwhile
        return console.render(
            request, "error.html", title="Done", message=f"{action}: {done} of {len(ids)} jobs", ok=True
        )

    return await run_in_threadpool(_guarded, request, work)
