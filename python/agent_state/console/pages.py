"""The console's pages and actions: each one calls ``ai`` functions only, as the logged-in role."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

import psycopg
from psycopg.types.json import Jsonb, set_json_loads
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .. import errors
from ..run_story import attempt_story
from .core import (
    JOB_STATUSES,
    SESSION_STATUSES,
    Console,
    Login,
    LoginRefused,
    Refused,
    as_json,
    bounded_json_loads,
    build_tree,
    plain,
    query_string,
    sse_response,
    throughput_chart,
    verify_password,
    visitor_conninfo,
)
from .lineage import lineage_svg, node_name, state_diff
from .params import BadParameter, Param, accepts

Conn = psycopg.Connection[Any]
log = logging.getLogger("agent_state.console")

# The one message of a failed login, whatever failed (no such role, a wrong password, a server
# that would not ask for one, the database out of reach): the reason goes to the console's log.
LOGIN_FAILED = "wrong user name or password"

# The parameters the pages read (agent_state.console.params): ids as the SQL API bounds them
# (1 to 255 characters, any but NUL), other words without control characters.
ID = Param("id", 255, required=True)
TEXT = Param("text", 255)
NEXT = {"next": Param("path", 2000)}
CSRF = {"csrf": Param("text", 200)}
THREAD_AND_CHECKPOINT = {"thread_id": ID, "checkpoint_id": ID}


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
    except errors.NotFound as error:  # an unknown thread, job or checkpoint (or another tenant's)
        return console.render(request, "error.html", 404, title="Not found", message=str(error))
    except errors.AgentStateError as error:
        return console.render(request, "error.html", 400, title=type(error).__name__, message=str(error))
    except ValueError as error:
        return console.render(request, "error.html", 400, title="Bad request", message=str(error))
    except psycopg.OperationalError:  # the text names the server's address: in the log only
        log.exception("console: the database is out of reach")
        message = "the database cannot be reached as this role now: try again, or log in again"
        return console.render(request, "error.html", 503, title="Database unavailable", message=message)
    except psycopg.Error:  # the text may quote the console's SQL: in the log only
        log.exception("console: the database refused a page's query")
        message = "the database refused this page's query; the error is in the console's log"
        return console.render(request, "error.html", 500, title="Database error", message=message)


def _attachment(name: str) -> str:
    """A JSON download's header, its file name made of the URL's ids: letters, digits, '.', '-', '_'."""
    return f'attachment; filename="{re.sub(r"[^A-Za-z0-9._-]", "_", name)[:120]}.json"'


def _back(request: Request, default: str) -> str:
    """Where an action returns: a path of this console (never another site)."""
    root = str(request.scope.get("root_path", ""))
    target: str = str(request.state.params.get("next") or default)  # a path of this console (params)
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        target = default
    return root + target


# -- login -------------------------------------------------------------------------------------------


@accepts(query=NEXT, form={**CSRF, "user": Param("text", 63), "password": Param("secret", 1000)})
async def login(request: Request) -> Response:
    console = _console(request)
    state: Login = request.state.login
    if request.method == "GET":
        return console.render(request, "login.html", title="Log in", error=None)
    form, params = request.state.form, request.state.params
    try:
        console.check_csrf(request, form)
    except Refused as refused:
        return console.render(request, "login.html", 403, title="Log in", error=str(refused))
    user = str(params["user"] or "").strip()
    password = str(params["password"] or "")
    if not user or len(user.encode()) > 63:
        return console.render(request, "login.html", 400, title="Log in", error="a user name (1 to 63 bytes) is needed")
    if console.config.auth == "password":
        stored = console.users.get(user)
        if stored is None or not verify_password(password, stored):
            return console.render(request, "login.html", 401, title="Log in", error=LOGIN_FAILED)
        console.logins.log_in(state, user, None)
        state.conninfo = None
    else:
        try:  # refused before any connection: no password (libpq would look for one of its own)
            conninfo = visitor_conninfo(console.config.database_url, user, password)
        except LoginRefused as refused:
            return console.render(request, "login.html", 400, title="Log in", error=str(refused))

        def check() -> bool:
            try:
                with psycopg.connect(conninfo, autocommit=True) as conn:
                    conn.execute("select ai.sees_all_owners()", prepare=False)
                return True
            except psycopg.Error as error:
                log.info("console: login as %r refused: %s", user, str(error).strip())
                return False

        if not await run_in_threadpool(check):
            return console.render(request, "login.html", 401, title="Log in", error=LOGIN_FAILED)
        console.logins.log_in(state, user, password)
        state.conninfo = conninfo
    return RedirectResponse(_back(request, "/runs"), status_code=303)


@accepts(form=CSRF)
async def logout(request: Request) -> Response:
    console = _console(request)
    try:
        console.check_csrf(request, request.state.form)
    except Refused as refused:
        return console.render(request, "error.html", 403, title="Refused", message=str(refused))
    state: Login = request.state.login
    state.user, state.password, state.conninfo = None, None, None
    return RedirectResponse(f"{request.scope.get('root_path', '')}/login", status_code=303)


@accepts()
def home(request: Request) -> Response:
    return RedirectResponse(f"{request.scope.get('root_path', '')}/runs", status_code=303)


# -- runs --------------------------------------------------------------------------------------------


def _runs_context(console: Console, conn: Conn, request: Request) -> dict[str, Any]:
    q, p = request.query_params, request.state.params
    kind = p["kind"] or "jobs"
    status = p["status"]
    queue = p["queue"]
    owner = p["owner"]
    age = p["age"]
    meta = p["meta"]
    meta_args = meta if meta is not None else (None, None)  # (path, value): ai.find_jobs / ai.find_sessions
    before = p["before"]
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
        cursor = Param("int", 20, low=1).parse("before", before)  # a job id
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
        # each session's run status from its jobs: one read for the page (ai.thread_run_status)
        statuses = {
            r["thread_id"]: r
            for r in console.rows(conn, "select * from ai.thread_run_status(%s)", ([r["thread_id"] for r in rows],))
        }
        rows = [{**r, "run": statuses.get(r["thread_id"])} for r in rows]
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


RUNS_QUERY = {
    "kind": Param("choice", 16, choices=("jobs", "sessions")),
    "status": TEXT,  # one of the kind's statuses: checked with the kind
    "queue": Param("id", 255),
    "owner": TEXT,
    "age": Param("age", 32),
    "meta": Param("meta", 1300),
    "before": Param("id", 255),  # a job id, or a thread id
    "partial": Param("flag", 8),
}


@accepts(query=RUNS_QUERY)
def runs(request: Request) -> Response:
    console = _console(request)

    def work() -> Response:
        with console.connect(request.state.login) as conn:
            context = _runs_context(console, conn, request)
        if request.state.params["partial"]:
            return console.render(request, "_runs_table.html", **context)
        return console.render(request, "runs.html", title="Runs", **context)

    return _guarded(request, work)


@accepts()
async def events(request: Request) -> Response:
    return sse_response(_console(request), request.state.login)


# -- a run -------------------------------------------------------------------------------------------


TIMELINE_PAGE = 100  # items of the timeline on one page of the run page
TIMELINE_ITEMS = ("job", "message", "checkpoint", "event", "side_effect")
TIMELINE_QUERY = {
    "before_at": Param("text", 64),  # the last row's created_at, item and ref: the older page
    "before_item": Param("choice", 16, choices=TIMELINE_ITEMS),
    "before_ref": Param("id", 255),
    "shown": Param("int", 19, low=0),  # how many newer items the pages before showed (for "n to m of N")
    "notice": Param("choice", 16, choices=("approved", "rejected", "edited")),  # after an action
    "notice_thread": Param("id", 255),
}


def _time(name: str, text: str) -> datetime:
    """A cursor's time: ISO 8601 with its zone (as the pages write it into their links)."""
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BadParameter(f"{name} is not a time (ISO 8601)") from None
    if value.tzinfo is None:
        raise BadParameter(f"{name} needs a time zone")
    return value


def _timeline_cursor(params: dict[str, Any]) -> tuple[datetime | None, str | None, str | None]:
    at, item, ref = params["before_at"], params["before_item"], params["before_ref"]
    if at is None and item is None and ref is None:
        return None, None, None
    if at is None or item is None or ref is None:
        raise BadParameter("before_at, before_item and before_ref go together (the last row of a page)")
    return _time("before_at", str(at)), str(item), str(ref)


def _run_context(console: Console, conn: Conn, thread_id: str, params: dict[str, Any], root: str) -> dict[str, Any]:
    ident = console.identity(conn)
    session = console.rows(conn, "select * from ai.get_session(%s)", (thread_id,))[0]  # AS001: not yours
    before_at, before_item, before_ref = _timeline_cursor(params)
    shown = int(params["shown"] or 0) if before_at is not None else 0
    timeline = console.rows(
        conn,
        "select * from ai.session_timeline_newest(%s, %s, %s, %s, %s)",
        (thread_id, TIMELINE_PAGE, before_at, before_item, before_ref),
    )
    total = console.rows(conn, "select ai.session_timeline_total(%s) as n", (thread_id,))[0]["n"]
    older_url = None
    if len(timeline) == TIMELINE_PAGE and shown + len(timeline) < total:
        last = timeline[-1]
        older_url = "?" + query_string(
            {
                "before_at": last["created_at"].isoformat(),
                "before_item": last["item"],
                "before_ref": last["ref"],
                "shown": shown + len(timeline),
            }
        )
    tree = console.rows(conn, "select * from ai.checkpoint_tree(%s, '', %s)", (thread_id, 1000))
    nodes = {
        r["checkpoint_id"]: r
        for r in console.rows(
            conn, "select * from ai.checkpoint_nodes(%s, '', %s)", (thread_id, [r["checkpoint_id"] for r in tree])
        )
    }
    jobs = console.rows(conn, "select * from ai.list_jobs(null, null, %s, %s)", (thread_id, 100))
    attempts = {
        j["job_id"]: attempt_story(j, console.rows(conn, "select * from ai.job_attempts(%s)", (j["job_id"],)))
        for j in jobs
    }
    run_status = console.rows(conn, "select * from ai.thread_run_status(%s)", ([thread_id],))
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
    decisions = console.rows(conn, "select * from ai.decided_approvals(null, %s, %s)", (thread_id, 50))
    return {
        "decisions": decisions,
        "notice": _notice(params),
        "session": session,
        "run_status": run_status[0] if run_status else None,
        "timeline": timeline,
        "timeline_total": total,
        "timeline_first": shown + 1,
        "timeline_last": shown + len(timeline),
        "older_url": older_url,
        "newest_url": "?" if before_at is not None else None,
        "tree": build_tree(tree),
        "lineage": lineage_svg(tree, nodes, f"{root}/runs/{quote(thread_id, safe='')}/checkpoints/"),
        "node_names": {r["checkpoint_id"]: node_name(r, nodes) for r in tree},
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


@accepts(path={"thread_id": ID}, query=TIMELINE_QUERY)
def run(request: Request) -> Response:
    console = _console(request)
    thread_id = request.state.params["thread_id"]

    def work() -> Response:
        with console.connect(request.state.login) as conn:
            context = _run_context(console, conn, thread_id, request.state.params, request.scope.get("root_path", ""))
        return console.render(request, "run.html", title=f"Run {thread_id}", **context)

    return _guarded(request, work)


@accepts(path={"thread_id": ID, "item": Param("text", 64, required=True), "ref": ID})
def item(request: Request) -> Response:
    """One timeline item's whole detail as a JSON download (what the page cut)."""
    console = _console(request)
    thread_id, kind, ref = (request.state.params[k] for k in ("thread_id", "item", "ref"))

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
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}}
    try:
        found = saver.get_tuple(config)  # type: ignore[arg-type]
        values = found.checkpoint.get("channel_values", {}) if found is not None else None
    except psycopg.Error:
        raise
    except Exception:  # a checkpoint LangGraph did not write (another serializer, another shape)
        log.info("console: checkpoint %s of %r is not LangGraph's", checkpoint_id, thread_id, exc_info=True)
        return {"(not a LangGraph checkpoint)": "its bytes are not shown"}
    if values is None:
        return None
    state: dict[str, Any] = plain(values) if isinstance(values, dict) else {"(channel values)": plain(values)}
    return state


@accepts(path=THREAD_AND_CHECKPOINT, query={"download": Param("flag", 8)})
def checkpoint(request: Request) -> Response:
    console = _console(request)
    thread_id, checkpoint_id = request.state.params["thread_id"], request.state.params["checkpoint_id"]

    def work() -> Response:
        conninfo = request.state.login.conninfo or console.config.database_url
        with console.connect(request.state.login) as conn:
            ident = console.identity(conn)
            console.rows(conn, "select * from ai.get_session(%s)", (thread_id,))  # AS001: not yours
            tree = console.rows(conn, "select * from ai.checkpoint_tree(%s, '', %s)", (thread_id, 10000))
            node = next((r for r in tree if r["checkpoint_id"] == checkpoint_id), None)
            if node is None:
                raise errors.NotFound(f"no checkpoint {checkpoint_id} in thread {thread_id}")
            parent_row = next((r for r in tree if r["checkpoint_id"] == node["parent_checkpoint_id"]), None)
            names = {
                r["checkpoint_id"]: r
                for r in console.rows(
                    conn, "select * from ai.checkpoint_nodes(%s, '', %s)",
                    (thread_id, [checkpoint_id, *([parent_row["checkpoint_id"]] if parent_row else [])]),
                )
            }  # fmt: skip
            # the saver reads tuple rows: a connection of its own
            with psycopg.connect(conninfo, autocommit=True, prepare_threshold=None) as plain_conn:
                set_json_loads(bounded_json_loads, plain_conn)
                state = _checkpoint_state(plain_conn, thread_id, checkpoint_id)
                parent_id = node["parent_checkpoint_id"]
                parent = _checkpoint_state(plain_conn, thread_id, parent_id) if parent_id else {}
        if request.state.params["download"]:
            return Response(
                as_json({"checkpoint": node, "state": state}),
                media_type="application/json",
                headers={"Content-Disposition": _attachment(f"checkpoint-{checkpoint_id}")},
            )
        return console.render(
            request,
            "checkpoint.html",
            title=f"Checkpoint {checkpoint_id}",
            thread_id=thread_id,
            node=node,
            node_label=node_name(node, names),
            paused=bool((names.get(checkpoint_id) or {}).get("interrupted")),
            parent_name=node_name(parent_row, names) if parent_row is not None else None,
            state=state,
            changes=state_diff(parent, state) if state is not None else None,
            operator=ident["operator"],
            download="?download=1",
        )

    return _guarded(request, work)


# -- approvals ---------------------------------------------------------------------------------------


HISTORY_PAGE = 50  # decisions on one page of the approvals' history
NOTICES = {"approved": "Approved", "rejected": "Rejected", "edited": "Approved with the edited action"}


@accepts(
    query={
        "before_at": Param("text", 64), "before_id": Param("id", 255),  # the history's next page
        "notice": Param("choice", 16, choices=tuple(NOTICES)), "notice_thread": Param("id", 255),
    },
)  # fmt: skip
def approvals(request: Request) -> Response:
    console = _console(request)
    p = request.state.params

    def work() -> Response:
        before_at = None
        if (p["before_at"] is None) != (p["before_id"] is None):
            raise BadParameter("before_at and before_id go together (the last row of a page)")
        if p["before_at"] is not None:
            before_at = _time("before_at", str(p["before_at"]))
        with console.connect(request.state.login) as conn:
            ident = console.identity(conn)
            rows = console.rows(conn, "select * from ai.pending_approvals(null, %s)", (1000,))
            history = console.rows(
                conn,
                "select * from ai.decided_approvals(null, null, %s, %s, %s)",
                (HISTORY_PAGE, before_at, p["before_id"]),
            )
        older = None
        if len(history) == HISTORY_PAGE:
            last = history[-1]
            older = "?" + query_string({"before_at": last["decided_at"].isoformat(), "before_id": last["approval_id"]})
        return console.render(
            request, "approvals.html", title="Approvals", rows=rows, history=history, older_url=older,
            operator=ident["operator"], notice=_notice(p),
        )  # fmt: skip

    return _guarded(request, work)


def _notice(p: dict[str, Any]) -> str | None:
    """The flash of the page an action returned to: one of a few fixed sentences and a thread id
    (escaped on the page like any other text)."""
    if not p.get("notice"):
        return None
    thread = p.get("notice_thread")
    return NOTICES[str(p["notice"])] + (f": thread {thread}" if thread else "")


@accepts(query=THREAD_AND_CHECKPOINT)
def approval(request: Request) -> Response:
    """One approval: the staged action, the state the graph paused with (the checkpoint's channel
    values at the interrupt), the decision form, and the thread's earlier decisions."""
    console = _console(request)
    thread_id, checkpoint_id = request.state.params["thread_id"], request.state.params["checkpoint_id"]

    def work() -> Response:
        conninfo = request.state.login.conninfo or console.config.database_url
        with console.connect(request.state.login) as conn:
            ident = console.identity(conn)
            console.rows(conn, "select * from ai.get_session(%s)", (thread_id,))  # AS001: not yours
            pending = [
                r for r in console.rows(conn, "select * from ai.pending_approvals(null, %s)", (10000,))
                if r["thread_id"] == thread_id and r["checkpoint_id"] == checkpoint_id
            ]  # fmt: skip
            history = console.rows(conn, "select * from ai.decided_approvals(null, %s, %s)", (thread_id, HISTORY_PAGE))
            decided = [h for h in history if h["checkpoint_id"] == checkpoint_id]
            if not pending and not decided:
                raise errors.NotFound(f"no approval at checkpoint {checkpoint_id} of thread {thread_id}")
            with psycopg.connect(conninfo, autocommit=True, prepare_threshold=None) as plain_conn:
                set_json_loads(bounded_json_loads, plain_conn)
                state = _checkpoint_state(plain_conn, thread_id, checkpoint_id)
        return console.render(
            request, "approval.html", title=f"Approval of {thread_id}", a=(pending or decided)[0],
            pending=bool(pending), state=state, history=history, thread_id=thread_id, operator=ident["operator"],
        )  # fmt: skip

    return _guarded(request, work)


@accepts(
    query=NEXT,
    form={
        **CSRF, **THREAD_AND_CHECKPOINT,
        "decision": Param("choice", 16, required=True, choices=("approve", "reject", "edit")),
        "reason": Param("lines", 10_000),
        "edited_action": Param("document", 900_000),  # the form always sends it: JSON for "edit" only
    },
)  # fmt: skip
async def resolve(request: Request) -> Response:
    """approve / reject / edit and approve, through ``ai.resolve_human``. A service acting for
    nobody decides for the thread's owner (``ai.act_as`` in the same transaction)."""
    console = _console(request)
    form, p = request.state.form, request.state.params

    def work() -> Response:
        console.check_csrf(request, form)
        thread_id, checkpoint_id, choice = p["thread_id"], p["checkpoint_id"], p["decision"]
        decision: dict[str, Any]
        if choice == "approve":
            decision = {"approved": True}
        elif choice == "reject":
            decision = {"approved": False}
            if p["reason"]:
                decision["reason"] = p["reason"]
        else:
            if p["edited_action"] is None:
                raise BadParameter("edited_action is needed to edit and approve")
            edited = Param("json", 900_000).parse("edited_action", p["edited_action"])
            decision = {"approved": True, "edited_action": edited}
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
        back = _back(request, "/approvals")
        notice = {"approve": "approved", "reject": "rejected", "edit": "edited"}[choice]
        back += ("&" if "?" in back else "?") + query_string({"notice": notice, "notice_thread": thread_id})
        return RedirectResponse(back, status_code=303)

    return await run_in_threadpool(_guarded, request, work)


# -- queues ------------------------------------------------------------------------------------------


@accepts()
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
            # fair shares and limits: the keys with jobs (a tenant: its own, counted over its own jobs)
            keys = console.rows(conn, "select * from ai.job_key_status(max_rows => %s)", (100,))
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
            keys=keys,
            workers=workers,
            operator=ident["operator"],
        )

    return _guarded(request, work)


# -- operator actions --------------------------------------------------------------------------------


@accepts(
    query=NEXT,
    form={
        **CSRF,
        "action": Param("choice", 16, required=True, choices=("retry", "cancel", "release")),
        "job_id": Param("int", 20, required=True, low=1),
    },
)
async def job_action(request: Request) -> Response:
    """retry (``ai.retry_dead_job``), cancel (``ai.cancel_job``), release a stuck lease
    (``ai.release_job`` with the job's current fencing token): service role only."""
    console = _console(request)
    form, p = request.state.form, request.state.params

    def work() -> Response:
        console.check_csrf(request, form)
        action, job_id = p["action"], p["job_id"]
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


@accepts(form={**CSRF, **THREAD_AND_CHECKPOINT})
async def fork(request: Request) -> Response:
    """``ai.fork_thread`` from a checkpoint: a new thread of the same owner; shows its page."""
    console = _console(request)
    form, p = request.state.form, request.state.params

    def work() -> Response:
        console.check_csrf(request, form)
        thread_id, checkpoint_id = p["thread_id"], p["checkpoint_id"]
        with console.connect(request.state.login) as conn:
            console.check_action(True, console.identity(conn))
            new = console.rows(conn, "select ai.fork_thread(%s, %s) as t", (thread_id, checkpoint_id))[0]["t"]
        return RedirectResponse(f"{request.scope.get('root_path', '')}/runs/{new}", status_code=303)

    return await run_in_threadpool(_guarded, request, work)


@accepts(form={**CSRF, **THREAD_AND_CHECKPOINT, "model": TEXT})
async def replay(request: Request) -> Response:
    """Replay with another model: ``ai.fork_thread`` from the checkpoint, then ``ai.enqueue_job`` on
    the fork in the queue of the thread's last job, with ``{"graph_input": null, "replay":
    {from_thread, from_checkpoint, model}}`` as payload: a graph run (agent_state.graph_runs) goes on
    from the fork's checkpoint with the model in ``config["configurable"]["model"]`` (docs/console.md)."""
    console = _console(request)
    form, p = request.state.form, request.state.params

    def work() -> Response:
        console.check_csrf(request, form)
        thread_id, checkpoint_id = p["thread_id"], p["checkpoint_id"]
        model = str(p["model"] or "").strip()
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


@accepts(
    form={
        **CSRF,
        "action": Param("choice", 16, required=True, choices=("retry", "cancel")),
        "queue": TEXT,
        "status": Param("choice", 32, choices=JOB_STATUSES, upper=True),
        "confirm": Param("int", 8, high=10_000_000),
    },
)
async def bulk(request: Request) -> Response:
    """Retry or cancel every job of a filter (queue, status), after a confirmation page with the count;
    the second POST carries the count it confirmed, and the action runs over the jobs listed again."""
    console = _console(request)
    form, p = request.state.form, request.state.params

    def work() -> Response:
        console.check_csrf(request, form)
        action, queue, status = p["action"], p["queue"], p["status"]
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
            confirmed = p["confirm"]
            if confirmed is None or confirmed != len(ids):
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
