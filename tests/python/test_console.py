"""The operator console (agent_state.console) in a real browser: Debian's chromium, driven by Playwright.

One uvicorn server in a thread serves three mounts of the console over a database of the module's
own: ``/rw`` (log in with database credentials), ``/ro`` (the same, read-only) and ``/pw`` (a
password file). The database-credentials login takes only a server that asks for the role's
password (docs/console.md), which the private cluster, trusting its socket, does not: the module
runs a server of its own that does (tests/python/password_server.py: the schema deployed, the test
roles with their passwords, a PgBouncer of its own for the pooled mount).
The pages are checked as the browser renders them; each page is screenshotted for a tenant and for an
operator into tests/python/artifacts/console/ (git-ignored). The console LISTENs (server-sent events),
so the module connects to the server itself, never through the pooler.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, TypedDict

import psycopg
import pytest

pytest.importorskip("starlette")
playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect
import uvicorn  # noqa: E402
from password_server import PasswordServer, password  # noqa: E402
from psycopg_pool import ConnectionPool  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.routing import Mount  # noqa: E402

from agent_state import Client, NewMessage, Worker  # noqa: E402
from agent_state.console import create_app, hash_password  # noqa: E402
from agent_state.graph_runs import GraphRuns  # noqa: E402

pytestmark = pytest.mark.session_features("the console LISTENs on the queues' channels for its server-sent events")

CHROMIUM = os.environ.get("AGENT_STATE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).parent / "artifacts" / "console"
SCRIPT = "<script>window.__pwned = 1</script><b>bold?</b>"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self, dsn: str, password_file: Path | None, pooled: str | None, mounts: dict[str, Any] | None = None):
        app = Starlette(
            routes=[Mount(f"/{name}", sub) for name, sub in mounts.items()]
            if mounts is not None
            else [
                Mount("/rw", create_app(dsn, poll_seconds=1.0)),
                Mount("/ro", create_app(dsn, read_only=True)),
                Mount("/pw", create_app(dsn, auth="password", password_file=str(password_file))),
                *([Mount("/pooled", create_app(pooled, poll_seconds=1.0))] if pooled else []),
            ]
        )
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", timeout_graceful_shutdown=5)
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "the console did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


class State(TypedDict):
    steps: list[str]


def _graph() -> Any:
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    def draft(state: State) -> dict[str, Any]:
        return {"steps": [*state["steps"], "draft"]}

    def approve(state: State) -> dict[str, Any]:
        decision = interrupt({"send": "refund", "amount": 30, "note": SCRIPT})
        return {"steps": [*state["steps"], f"approved={decision.get('approved')}"]}

    def publish(state: State) -> dict[str, Any]:
        return {"steps": [*state["steps"], "published"]}

    g = StateGraph(State)
    g.add_node("draft", draft)
    g.add_node("approve", approve)
    g.add_node("publish", publish)
    g.add_edge(START, "draft")
    g.add_edge("draft", "approve")
    g.add_edge("approve", "publish")
    g.add_edge("publish", END)
    return g.compile()


@pytest.fixture(scope="module")
def password_server() -> Iterator[dict[str, str]]:
    """A server that asks for passwords, the schema deployed, a PgBouncer in front of it."""
    if not Path(os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin"), "initdb").exists():
        pytest.fail("no initdb (PGBIN): `make deps` installs postgresql-15")
    with PasswordServer() as pg:
        db = pg.deploy()
        pooler = pg.start_pooler()
        yield {"url": pg.url("postgres", db), "pooler": f"{pooler} dbname={db}"}


@pytest.fixture(scope="module")
def module_role_dsn(password_server: dict[str, str]) -> Callable[[str], str]:
    """The module's database as a test role, with its password (conftest's is the private cluster)."""
    return lambda user: f"{password_server['url']} user={user} password='{password(user)}'"


@pytest.fixture(scope="module")
def world(
    password_server: dict[str, str], module_role_dsn: Callable[[str], str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """Runs of two tenants: tenant_a's with a message holding a script and a FAILED job, tenant_b's
    secret one; a graph run of tenant_a's waiting for approval (a worker ran it to its interrupt)."""
    pytest.importorskip("langgraph")
    tag = uuid.uuid4().hex[:8]
    queue = f"console-{tag}"
    a_thread, b_thread, g_thread = f"console-a-{tag}", f"console-b-{tag}", f"console-graph-{tag}"
    with psycopg.connect(module_role_dsn("tenant_a"), autocommit=True) as conn:
        a = Client(conn)
        a.create_session(a_thread, {"team": "refunds"})
        a.append_message(a_thread, "assistant", SCRIPT)
        a.append_message(a_thread, "user", "x" * 5000)  # over the payload limit: cut, with a download link
        a.open_stream(a_thread, "answer-1")
        a.append_stream_chunks(a_thread, "answer-1", 1, ["streamed ", "text"])
        failed = a.enqueue_job(a_thread, {"task": "fails"}, queue, max_attempts=1)
    with psycopg.connect(module_role_dsn("tenant_b"), autocommit=True) as conn:
        b = Client(conn)
        b.create_session(b_thread, {"team": "secret"})
        b.append_message(b_thread, "user", "tenant b's secret")
    service = module_role_dsn("app_service")
    with psycopg.connect(service, autocommit=True) as conn:
        s = Client(conn)
        job = s.claim_job("console-test-worker", timedelta(minutes=1), queue)
        assert job is not None and job.job_id == failed.job_id
        s.fail_job(job.job_id, job.fencing_token, "boom: <img src=x onerror=alert(1)>")
    graph = _graph()
    gqueue = f"console-graph-{tag}"
    with psycopg.connect(module_role_dsn("tenant_a"), autocommit=True) as conn:
        run = GraphRuns(Client(conn), graph, queue=gqueue).start(g_thread, {"steps": []})
    _drain(service, graph, gqueue)
    password_file = tmp_path_factory.mktemp("console") / "passwords"
    password_file.write_text(f"# operators\nops:{hash_password('s3cret')}\n")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pooler = f"{password_server['pooler']} user=app_service"  # the console's URL; a visitor's role replaces it
    with Server(module_role_dsn("app_service"), password_file, pooler) as server:
        yield {
            "base": server.base,
            "a_thread": a_thread,
            "b_thread": b_thread,
            "g_thread": g_thread,
            "g_job": run.job_id,
            "graph": graph,
            "gqueue": gqueue,
            "queue": queue,
            "failed_job": failed.job_id,
            "service": service,
            "pooled": pooler is not None,
        }


def _drain(service: str, graph: Any, queue: str) -> None:
    with ConnectionPool(service, min_size=1, max_size=4, kwargs={"autocommit": True}) as pool:
        runs = GraphRuns(Client(pool), graph, queue=queue)
        Worker(pool, runs.handler, queue, concurrency=1, poll_interval=0.05, listen=False).run(
            drain=True, install_signal_handlers=False
        )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make deps` installs Debian's chromium")
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _page(browser: Any, world: dict[str, Any], mount: str, user: str, typed: str | None = None, base: str = "") -> Any:
    """A fresh browser context logged in on one mount (of the module's server, or of ``base``), with
    the role's password (``typed``: another)."""
    base = base or world["base"]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{base}/{mount}/login")
    page.fill("input[name=user]", user)
    page.fill("input[name=password]", password(user) if typed is None else typed)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/{mount}/runs")
    return page


def _returned(url: str) -> re.Pattern[str]:
    """The page an action returns to: ``url``, with a notice of what was done in its query."""
    return re.compile(re.escape(url) + r"(\?.*)?$")


def _shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("who", ["tenant_a", "app_service"])
def test_each_page_renders_for_a_tenant_and_for_an_operator(browser: Any, world: dict[str, Any], who: str) -> None:
    page = _page(browser, world, "rw", who)
    role = "operator" if who == "app_service" else "tenant"
    assert f"{who}" in page.inner_text("header") and role in page.inner_text("header")
    page.goto(f"{world['base']}/rw/runs?queue={world['queue']}")
    assert world["a_thread"] in page.inner_text("#runs")
    _shot(page, f"runs-{role}")
    page.goto(f"{world['base']}/rw/runs?kind=sessions")
    assert world["a_thread"] in page.inner_text("#runs")
    _shot(page, f"sessions-{role}")
    page.goto(f"{world['base']}/rw/runs/{world['g_thread']}")
    assert page.inner_text("#thread-id") == world["g_thread"]
    assert "AWAITING_HUMAN" in page.inner_text("#jobs")
    assert page.locator("#lineage li").count() >= 2
    _shot(page, f"run-{role}")
    page.locator("#lineage a").last.click()
    page.wait_for_selector("#diff")
    assert "draft" in page.inner_text("main")
    _shot(page, f"checkpoint-{role}")
    page.goto(f"{world['base']}/rw/approvals")
    assert world["g_thread"] in page.inner_text("#approvals")
    _shot(page, f"approvals-{role}")
    page.goto(f"{world['base']}/rw/queues")
    assert world["queue"] in page.inner_text("#queues")
    assert page.locator("#queues svg.chart").count() >= 1
    row = page.locator("tr.queue", has_text=world["queue"])  # its one FAILED job, in the last hour's chart
    assert "1 finished" in row.locator("svg.chart").inner_html()
    assert ("Not visible" in page.inner_text("#workers")) == (role == "tenant")
    _shot(page, f"queues-{role}")
    # the operator's actions are shown to the operator only
    page.goto(f"{world['base']}/rw/runs?queue={world['queue']}")
    assert (page.locator("button.retry").count() > 0) == (role == "operator")
    page.context.close()


def test_a_tenant_never_sees_another_tenants_run(browser: Any, world: dict[str, Any]) -> None:
    page = _page(browser, world, "rw", "tenant_a")
    for query in ("kind=sessions", f"kind=jobs&queue={world['queue']}", "kind=jobs"):
        page.goto(f"{world['base']}/rw/runs?{query}")
        text = page.content()
        assert world["b_thread"] not in text
        if "queue" in query or "sessions" in query:
            assert world["a_thread"] in text
    page.goto(f"{world['base']}/rw/runs/{world['b_thread']}")
    assert "secret" not in page.content()
    assert page.inner_text("h1") == "Not found"  # a 404 page: unknown and another tenant's alike
    page.goto(f"{world['base']}/rw/approvals")
    assert world["b_thread"] not in page.content()
    operator = _page(browser, world, "rw", "app_service")
    operator.goto(f"{world['base']}/rw/runs?kind=sessions")
    assert world["b_thread"] in operator.content()  # the operator does see it: the filter is RLS, not the page
    page.context.close()
    operator.context.close()


def test_a_runs_streams_and_the_session_counts(browser: Any, world: dict[str, Any]) -> None:
    page = _page(browser, world, "rw", "tenant_a")
    page.goto(f"{world['base']}/rw/runs/{world['a_thread']}")
    stream = page.locator("#streams tr.stream")
    assert "answer-1" in stream.inner_text() and "open" in stream.inner_text()
    page.goto(f"{world['base']}/rw/runs?kind=sessions")
    with psycopg.connect(world["service"], autocommit=True) as conn, Client(conn).acting_as("tenant_a") as a:
        counts = a.session_status_counts()
    for status, n in counts.items():
        assert page.inner_text(f"#counts .session-count[data-status={status}]") == str(n)
    page.context.close()


def test_a_message_with_a_script_renders_as_text(browser: Any, world: dict[str, Any]) -> None:
    page = _page(browser, world, "rw", "tenant_a")
    page.goto(f"{world['base']}/rw/runs/{world['a_thread']}")
    assert SCRIPT in page.inner_text("#timeline")  # shown as its characters
    assert page.evaluate("window.__pwned") is None  # never run
    assert page.locator("#timeline b").count() == 0
    # a payload over the limit is cut, with a download link to all of it
    link = page.locator("#timeline a.download").first
    assert "5002" in link.inner_text() or "download all" in link.inner_text()
    with page.expect_download() as download:
        link.click()
    assert "x" * 5000 in Path(download.value.path()).read_text()
    page.context.close()


def test_the_approval_flow_end_to_end(browser: Any, world: dict[str, Any]) -> None:
    """A graph run waits → a click on Approve → a worker resumes it → the page shows COMPLETED."""
    page = _page(browser, world, "rw", "tenant_a")
    page.goto(f"{world['base']}/rw/approvals")
    row = page.locator(f"tr.approval[data-thread='{world['g_thread']}']")
    assert "refund" in row.inner_text()
    row.locator("button.approve").click()
    page.wait_for_url(_returned(f"{world['base']}/rw/approvals"))  # with the decision's notice
    assert world["g_thread"] not in page.inner_text("#approvals")
    _drain(world["service"], world["graph"], world["gqueue"])
    page.goto(f"{world['base']}/rw/runs/{world['g_thread']}")
    assert page.inner_text(f"tr.job[data-job='{world['g_job']}'] .job-status") == "COMPLETED"
    assert "approved=True" in page.inner_text("#lineage") or page.locator("#lineage li").count() >= 4
    page.context.close()


def test_an_operator_retries_a_failed_job(browser: Any, world: dict[str, Any]) -> None:
    page = _page(browser, world, "rw", "app_service")
    page.goto(f"{world['base']}/rw/runs/{world['a_thread']}")
    job = page.locator(f"tr.job[data-job='{world['failed_job']}']")
    assert job.locator(".job-status").inner_text() == "FAILED"
    assert "<img src=x onerror=alert(1)>" in job.inner_text()  # the error, as text
    job.locator("button.retry").click()
    page.wait_for_url(f"{world['base']}/rw/runs/{world['a_thread']}")
    assert page.locator(f"tr.job[data-job='{world['failed_job']}'] .job-status").inner_text() == "PENDING"
    with psycopg.connect(world["service"], autocommit=True) as conn:
        assert Client(conn).get_job(world["failed_job"]).status == "PENDING"
        Client(conn).cancel_job(world["failed_job"])  # leave nothing for other tests' workers
    page.context.close()


def test_a_post_without_the_csrf_token_is_refused(browser: Any, world: dict[str, Any]) -> None:
    page = _page(browser, world, "rw", "app_service")
    page.goto(f"{world['base']}/rw/runs")
    for token in (None, "forged"):
        form = {"job_id": str(world["failed_job"]), "action": "cancel"}
        if token:
            form["csrf"] = token
        response = page.request.post(f"{world['base']}/rw/actions/job", form=form)
        assert response.status == 403 and "CSRF" in response.text()
    # a tenant is refused the operator's actions even with the right token
    tenant = _page(browser, world, "rw", "tenant_a")
    token = tenant.locator("input[name=csrf]").first.get_attribute("value")
    response = tenant.request.post(
        f"{world['base']}/rw/actions/job", form={"job_id": str(world["failed_job"]), "action": "retry", "csrf": token}
    )
    assert response.status == 403 and "operator" in response.text()
    page.context.close()
    tenant.context.close()


def test_read_only_mode_hides_and_refuses_every_action(browser: Any, world: dict[str, Any]) -> None:
    page = _page(browser, world, "ro", "app_service")
    assert page.is_visible("#read-only")
    page.goto(f"{world['base']}/ro/runs?queue={world['queue']}")
    page.goto(f"{world['base']}/ro/runs/{world['a_thread']}")
    page.goto(f"{world['base']}/ro/approvals")
    for path in ("runs", f"runs/{world['a_thread']}", f"runs/{world['g_thread']}", "approvals"):
        page.goto(f"{world['base']}/ro/{path}")
        assert page.locator("main form[method=post]").count() == 0, path
    _shot(page, "run-read-only")
    token = page.locator("header input[name=csrf]").get_attribute("value")
    for action, form in [
        ("actions/job", {"job_id": str(world["failed_job"]), "action": "retry"}),
        ("actions/bulk", {"action": "retry"}),
        ("actions/fork", {"thread_id": world["g_thread"], "checkpoint_id": "x"}),
        ("approvals/resolve", {"thread_id": world["g_thread"], "checkpoint_id": "x", "decision": "approve"}),
    ]:
        response = page.request.post(f"{world['base']}/ro/{action}", form={**form, "csrf": token or ""})
        assert response.status == 403 and "read-only" in response.text(), action
    page.context.close()


def test_the_password_file_login(browser: Any, world: dict[str, Any]) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{world['base']}/pw/runs")
    assert page.url.endswith("/pw/login")
    page.fill("input[name=user]", "ops")
    page.fill("input[name=password]", "wrong")
    page.click("button[type=submit]")
    assert "wrong user name or password" in page.inner_text("#login-error")
    page.fill("input[name=user]", "ops")
    page.fill("input[name=password]", "s3cret")
    page.click("button[type=submit]")
    page.wait_for_url(f"{world['base']}/pw/runs")
    assert "operator" in page.inner_text("header")  # the console's own role: app_service
    context.close()


def test_bulk_retry_asks_for_a_confirmation_with_the_count(browser: Any, world: dict[str, Any]) -> None:
    tag = uuid.uuid4().hex[:8]
    queue = f"console-bulk-{tag}"
    with psycopg.connect(world["service"], autocommit=True) as conn:
        s = Client(conn)
        with s.acting_as("tenant_a") as a:
            a.create_session(f"bulk-{tag}")
            for i in range(3):
                a.enqueue_job(f"bulk-{tag}", {"i": i}, queue, max_attempts=1)
        for _ in range(3):
            job = s.claim_job("bulk-worker", timedelta(minutes=1), queue)
            assert job is not None
            s.fail_job(job.job_id, job.fencing_token, "boom")
    page = _page(browser, world, "rw", "app_service")
    page.goto(f"{world['base']}/rw/runs?queue={queue}")
    page.fill("#bulk input[name=queue]", queue)
    page.click("#bulk-retry")
    assert "3 jobs" in page.inner_text("#bulk-count")
    page.click("#bulk-confirm")
    assert "retry: 3 of 3 jobs" in page.inner_text("#message")
    with psycopg.connect(world["service"], autocommit=True) as conn:
        jobs = conn.execute("select job_id, status from ai.list_jobs(%s)", (queue,)).fetchall()
        assert [status for _, status in jobs] == ["PENDING"] * 3
        for job_id, _ in jobs:
            Client(conn).cancel_job(job_id)
    page.context.close()


def test_the_runs_page_refreshes_when_the_queue_notifies(browser: Any, world: dict[str, Any]) -> None:
    """An operator's page LISTENs (server-sent events): an enqueue refreshes the table by itself."""
    page = _page(browser, world, "rw", "app_service")
    page.goto(f"{world['base']}/rw/runs?queue={world['gqueue']}")
    # the pages allow no eval (Content-Security-Policy): expect() waits without a script of its own
    expect(page.locator("#refresh-mode")).to_contain_text("live")
    new_thread = f"console-live-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(world["service"], autocommit=True) as conn, Client(conn).acting_as("tenant_a") as a:
        a.create_session(new_thread)
        job = a.enqueue_job(new_thread, {}, world["gqueue"])
    page.wait_for_selector(f"tr.run[data-thread='{new_thread}']", timeout=20_000)
    with psycopg.connect(world["service"], autocommit=True) as conn:
        Client(conn).cancel_job(job.job_id)
    page.context.close()


def test_a_tenant_page_falls_back_to_polling(browser: Any, world: dict[str, Any]) -> None:
    """A tenant may not name the queues' channels: its page polls instead (as behind a pooler)."""
    page = _page(browser, world, "rw", "tenant_a")
    expect(page.locator("#refresh-mode")).to_contain_text("every")
    expect(page.locator("body")).to_have_attribute("data-refreshes", re.compile(r"^[1-9][0-9]*$"))
    page.context.close()


def _waiting_run(world: dict[str, Any], owner_dsn: str) -> tuple[str, int]:
    """Another graph run of tenant_a's, run by a worker up to its interrupt."""
    thread = f"console-wait-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(owner_dsn, autocommit=True) as conn:
        job = GraphRuns(Client(conn), world["graph"], queue=world["gqueue"]).start(thread, {"steps": []})
    _drain(world["service"], world["graph"], world["gqueue"])
    return thread, job.job_id


def test_edit_and_approve_and_reject(
    browser: Any, world: dict[str, Any], module_role_dsn: Callable[[str], str]
) -> None:
    """Edit the staged action and approve (the operator, for the owner); reject with a reason (the tenant)."""
    edited, e_job = _waiting_run(world, module_role_dsn("tenant_a"))
    rejected, r_job = _waiting_run(world, module_role_dsn("tenant_a"))
    operator = _page(browser, world, "rw", "app_service")
    operator.goto(f"{world['base']}/rw/approvals")
    row = operator.locator(f"tr.approval[data-thread='{edited}']")
    row.locator("summary").click()
    row.locator("textarea[name=edited_action]").fill('{"send": "refund", "amount": 20}')
    row.locator("button.edit-approve").click()
    operator.wait_for_url(_returned(f"{world['base']}/rw/approvals"))
    tenant = _page(browser, world, "rw", "tenant_a")
    tenant.goto(f"{world['base']}/rw/runs/{rejected}")
    tenant.locator("#approvals input[name=reason]").fill("too much")
    tenant.locator("#approvals button.reject").click()
    tenant.wait_for_url(_returned(f"{world['base']}/rw/runs/{rejected}"))
    assert tenant.locator("#approvals").count() == 0
    with psycopg.connect(world["service"], autocommit=True) as conn:
        c = Client(conn)
        decisions = {thread: c.get_job(job).payload["human"] for thread, job in ((edited, e_job), (rejected, r_job))}
    assert decisions[edited]["decision"] == {"approved": True, "edited_action": {"send": "refund", "amount": 20}}
    assert decisions[edited]["decided_by"] == "app_service"
    assert decisions[rejected]["decision"] == {"approved": False, "reason": "too much"}
    assert decisions[rejected]["decided_by"] == "tenant_a"
    _drain(world["service"], world["graph"], world["gqueue"])
    operator.context.close()
    tenant.context.close()


def test_an_operator_releases_a_stuck_lease_and_cancels(browser: Any, world: dict[str, Any]) -> None:
    queue = f"console-lease-{uuid.uuid4().hex[:8]}"
    thread = f"console-lease-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(world["service"], autocommit=True) as conn:
        s = Client(conn)
        with s.acting_as("tenant_a") as a:
            a.create_session(thread)
            a.enqueue_job(thread, {}, queue)
        held = s.claim_job("stuck-worker", timedelta(hours=1), queue)
        assert held is not None
    page = _page(browser, world, "rw", "app_service")
    page.goto(f"{world['base']}/rw/runs/{thread}")
    job = page.locator(f"tr.job[data-job='{held.job_id}']")
    assert job.locator(".job-status").inner_text() == "IN_PROGRESS" and "stuck-worker" in job.inner_text()
    page.once("dialog", lambda dialog: dialog.accept())  # "Release the lease of job N?"
    job.locator("button.release").click()
    page.wait_for_url(f"{world['base']}/rw/runs/{thread}")
    assert page.locator(f"tr.job[data-job='{held.job_id}'] .job-status").inner_text() == "PENDING"
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(f"tr.job[data-job='{held.job_id}'] button.cancel").click()
    page.wait_for_url(f"{world['base']}/rw/runs/{thread}")
    assert page.locator(f"tr.job[data-job='{held.job_id}'] .job-status").inner_text() == "CANCELLED"
    with psycopg.connect(world["service"], autocommit=True) as conn:
        s = Client(conn)
        assert s.get_job(held.job_id).status == "CANCELLED"
        attempts = conn.execute("select outcome from ai.job_attempts(%s)", (held.job_id,)).fetchall()
        assert [o for (o,) in attempts] == ["released"]
    page.context.close()


def test_an_operator_forks_and_replays_with_another_model(browser: Any, world: dict[str, Any]) -> None:
    page = _page(browser, world, "rw", "app_service")
    page.goto(f"{world['base']}/rw/runs/{world['g_thread']}")
    first = page.locator("#lineage li").first
    checkpoint_id = first.locator("a").first.inner_text()
    first.locator("button.fork-button").first.click()
    page.wait_for_selector("#thread-id")
    forked = page.inner_text("#thread-id")
    assert forked != world["g_thread"] and checkpoint_id in page.inner_text("#lineage")
    assert "tenant_a" in page.inner_text("main")  # the fork keeps the owner
    page.goto(f"{world['base']}/rw/runs/{world['g_thread']}")
    first = page.locator("#lineage li").first
    first.locator("input[name=model]").first.fill("candidate-model-2")
    first.locator("button.replay-button").first.click()
    page.wait_for_selector("#thread-id")
    replayed = page.inner_text("#thread-id")
    assert replayed not in (forked, world["g_thread"])
    assert "PENDING" in page.inner_text("#jobs")
    assert "candidate-model-2" in page.inner_text("#jobs .replay-of")
    with psycopg.connect(world["service"], autocommit=True) as conn:
        rows = conn.execute("select job_id, payload, owner, queue from ai.list_jobs(null, null, %s)", (replayed,))
        [(job_id, payload, owner, queue)] = rows.fetchall()
        assert payload["replay"] == {
            "from_thread": world["g_thread"],
            "from_checkpoint": checkpoint_id,
            "model": "candidate-model-2",
        }
        assert owner == "tenant_a" and queue == world["gqueue"]
        Client(conn).cancel_job(job_id)
    # the source run's page lists both, with the checkpoint each started from, linked
    page.goto(f"{world['base']}/rw/runs/{world['g_thread']}")
    for thread, model in ((forked, None), (replayed, "candidate-model-2")):
        row = page.locator(f"#forks tr.fork[data-thread='{thread}']")
        assert row.locator(".from-checkpoint").inner_text() == checkpoint_id
        assert (model or "fork") in row.locator(".replay-model").inner_text()
    page.locator(f"#forks tr.fork[data-thread='{replayed}'] a").first.click()
    page.wait_for_url(f"{world['base']}/rw/runs/{replayed}")
    page.context.close()


class ModelState(TypedDict):
    steps: list[str]


def _model_graph() -> Any:
    """A graph whose last node records the model its run was given (config["configurable"]["model"])."""
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph import END, START, StateGraph

    def first(state: ModelState) -> dict[str, Any]:
        return {"steps": [*state["steps"], "first"]}

    def answer(state: ModelState, config: RunnableConfig) -> dict[str, Any]:
        model = (config.get("configurable") or {}).get("model", "recorded-model")
        return {"steps": [*state["steps"], f"model={model}"]}

    g = StateGraph(ModelState)
    g.add_node("first", first)
    g.add_node("answer", answer)
    g.add_edge(START, "first")
    g.add_edge("first", "answer")
    g.add_edge("answer", END)
    return g.compile()


def test_a_replay_from_the_console_runs_with_the_chosen_model(
    browser: Any, world: dict[str, Any], module_role_dsn: Callable[[str], str]
) -> None:
    """Replayed from the console with model X, the graph's node is given X: the new run's state shows it."""
    from agent_state.langgraph import AgentStateSaver

    graph = _model_graph()
    tag = uuid.uuid4().hex[:8]
    queue, thread = f"console-model-{tag}", f"console-model-{tag}"
    with psycopg.connect(module_role_dsn("tenant_a"), autocommit=True) as conn:
        first_job = GraphRuns(Client(conn), graph, queue=queue).start(thread, {"steps": []})
    _drain(world["service"], graph, queue)
    with psycopg.connect(world["service"], autocommit=True) as conn:
        assert Client(conn).get_job(first_job.job_id).result["steps"] == ["first", "model=recorded-model"]
        history = list(graph.copy(update={"checkpointer": AgentStateSaver(conn)}).get_state_history(
            {"configurable": {"thread_id": thread}}
        ))  # fmt: skip
    [before_answer] = [h.config["configurable"]["checkpoint_id"] for h in history if h.next == ("answer",)]
    page = _page(browser, world, "rw", "app_service")
    page.goto(f"{world['base']}/rw/runs/{thread}")
    node = page.locator(f"#lineage li[data-checkpoint='{before_answer}']")
    node.locator("> form input[name=model]").fill("candidate-x")
    node.locator("> form button.replay-button").click()
    page.wait_for_selector("#thread-id")
    replayed = page.inner_text("#thread-id")
    assert replayed != thread
    _drain(world["service"], graph, queue)
    page.goto(f"{world['base']}/rw/runs/{replayed}")
    assert page.locator("#jobs .job-status").first.inner_text() == "COMPLETED"
    page.locator("#lineage span.current a").click()
    page.wait_for_selector("#diff")
    assert "model=candidate-x" in page.inner_text("main")
    _shot(page, "replay-with-a-model")
    with psycopg.connect(world["service"], autocommit=True) as conn:
        [job] = conn.execute("select result from ai.list_jobs(null, null, %s)", (replayed,)).fetchall()
        assert job[0]["steps"] == ["first", "model=candidate-x"]
    # the source's page lists the replay, from that checkpoint, with that model
    page.goto(f"{world['base']}/rw/runs/{thread}")
    row = page.locator(f"#forks tr.fork[data-thread='{replayed}']")
    assert row.locator(".from-checkpoint").inner_text() == before_answer
    assert "candidate-x" in row.locator(".replay-model").inner_text()
    page.context.close()


def test_filters_apply_before_the_page_and_the_cursor_reaches_the_rest(browser: Any, world: dict[str, Any]) -> None:
    """More matching rows than a page, placed before (older than) a page of rows that do not match:
    the first page is all matches and the Older link reaches the rest, for metadata and owner filters
    on jobs and sessions; a tenant naming another owner sees nothing."""
    tag = uuid.uuid4().hex[:8]
    queue = f"console-filter-{tag}"
    with psycopg.connect(world["service"], autocommit=True) as conn:
        s = Client(conn)
        with s.acting_as("tenant_a") as a:
            for i in range(55):  # the matches, first (older)
                thread = f"console-match-{tag}-{i:02d}"
                a.create_session(thread, {"pick": tag})
                a.enqueue_job(thread, {"pick": {"tag": tag}, "i": i}, queue)
        with s.acting_as("tenant_b") as b:
            for i in range(55):  # then more than a page of rows that do not match
                thread = f"console-other-{tag}-{i:02d}"
                b.create_session(thread, {"pick": f"not-{tag}"})
                b.enqueue_job(thread, {"pick": {"tag": f"not-{tag}"}, "i": i}, queue)
    page = _page(browser, world, "rw", "app_service")
    for query in (
        f"kind=jobs&queue={queue}&meta=pick.tag={tag}",
        f"kind=jobs&queue={queue}&owner=tenant_a",
        f"kind=sessions&meta=pick={tag}",
        f"kind=sessions&owner=tenant_a&meta=pick={tag}&age=1h",
    ):
        page.goto(f"{world['base']}/rw/runs?{query}")
        text = page.inner_text("#runs")
        assert page.locator("#runs tr.run").count() == 50, query
        assert f"console-match-{tag}-54" in text and "console-other-" not in text, query
        page.click("#older")
        assert page.locator("#runs tr.run").count() == 5, query
        assert f"console-match-{tag}-00" in page.inner_text("#runs"), query
    tenant = _page(browser, world, "rw", "tenant_a")
    tenant.goto(f"{world['base']}/rw/runs?kind=jobs&queue={queue}&owner=tenant_b")
    assert tenant.locator("#runs tr.run").count() == 0 and f"console-other-{tag}" not in tenant.content()
    tenant.goto(f"{world['base']}/rw/runs?kind=sessions&owner=tenant_b")
    assert tenant.locator("#runs tr.run").count() == 0 and "console-b-" not in tenant.content()
    with psycopg.connect(world["service"], autocommit=True) as conn:
        for (job_id,) in conn.execute("select job_id from ai.list_jobs(%s, null, null, 1000)", (queue,)).fetchall():
            Client(conn).cancel_job(job_id)
    page.context.close()
    tenant.context.close()


def test_a_login_outlives_the_app_and_ends_with_another_secret_or_its_hours(
    browser: Any, module_role_dsn: Callable[[str], str]
) -> None:
    """The login lives in an encrypted cookie: an app made again with the same secret (a restart, or
    another process behind a balancer) still knows it, one with another secret does not, and it ends
    after session_hours. The database password is never in the cookie in clear."""
    secret, other = "s" * 40, "o" * 40
    dsn = module_role_dsn("app_service")
    later = create_app(dsn, secret=secret, session_hours=1)
    mounts = {
        "first": create_app(dsn, secret=secret),
        "again": create_app(dsn, secret=secret),  # the same secret, a new app object: a restart
        "other": create_app(dsn, secret=other),
        "later": later,
    }
    typed = password("tenant_a")
    with Server(dsn, None, None, mounts) as server:
        page = _page(browser, {}, "first", "tenant_a", typed, base=server.base)
        cookies = page.context.cookies()
        [cookie] = [c for c in cookies if c["name"] == "agent_state_console"]
        assert typed not in cookie["value"] and "tenant_a" not in cookie["value"]
        page.context.close()

        def visit(mount: str) -> Any:
            context = browser.new_context(storage_state={"cookies": cookies, "origins": []})
            page = context.new_page()
            page.goto(f"{server.base}/{mount}/runs")
            return page

        page = visit("again")
        assert page.url.endswith("/again/runs") and "tenant_a" in page.inner_text("header")
        assert "tenant" in page.inner_text("header")  # connected as tenant_a: the password came back
        page.context.close()
        page = visit("other")
        assert page.url.endswith("/other/login")
        page.context.close()
        page = visit("later")
        assert page.url.endswith("/later/runs")  # within its hour
        page.context.close()
        logins, clock = later.state.console.logins, time.time
        logins.clock = lambda: clock() + 3601
        page = visit("later")
        assert page.url.endswith("/later/login")  # an hour and a second after the login
        page.context.close()
        # the hour counts from the login, not from the visit that first got the login form
        context = browser.new_context()
        page = context.new_page()
        page.goto(f"{server.base}/later/login")  # the visitor's cookie: now + 3601 s
        logins.clock = lambda: clock() + 3601 + 3000
        page.fill("input[name=user]", "tenant_a")
        page.fill("input[name=password]", password("tenant_a"))
        page.click("button[type=submit]")
        page.wait_for_url(f"{server.base}/later/runs")
        logins.clock = lambda: clock() + 3601 + 3000 + 3000  # 100 min after the form, 50 after the login
        page.goto(f"{server.base}/later/runs")
        assert page.url.endswith("/later/runs")
        logins.clock = lambda: clock() + 3601 + 3000 + 3601
        page.goto(f"{server.base}/later/runs")
        assert page.url.endswith("/later/login")
        context.close()


def test_filters_in_the_url_and_keyset_pages(browser: Any, world: dict[str, Any]) -> None:
    tag = uuid.uuid4().hex[:8]
    queue = f"console-pages-{tag}"
    with psycopg.connect(world["service"], autocommit=True) as conn, Client(conn).acting_as("tenant_a") as a:
        for i in range(55):  # more than a page (50)
            thread = f"console-page-{tag}-{i:02d}"
            a.create_session(thread, {"batch": tag, "i": i})
            a.enqueue_job(thread, {"i": i, "tag": tag}, queue)
    page = _page(browser, world, "rw", "tenant_a")
    page.goto(f"{world['base']}/rw/runs?kind=jobs&queue={queue}&status=PENDING")
    assert page.locator("#runs tr.run").count() == 50
    assert page.inner_text("#counts .count[data-status=PENDING]") == "55"
    page.click("#older")
    assert page.locator("#runs tr.run").count() == 5
    assert f"console-page-{tag}-00" in page.inner_text("#runs")
    page.goto(f"{world['base']}/rw/runs?kind=jobs&queue={queue}&meta=i=7")
    assert page.locator("#runs tr.run").count() == 1 and f"console-page-{tag}-07" in page.inner_text("#runs")
    page.goto(f"{world['base']}/rw/runs?kind=sessions&owner=tenant_a&meta=batch={tag}&age=1h")
    assert page.locator("#runs tr.run").count() == 50  # the newest page, all of this batch
    page.click("#older")  # sessions page by ai.list_sessions' before_thread_id
    assert f"console-page-{tag}-00" in page.inner_text("#runs")
    assert f"console-page-{tag}-54" not in page.inner_text("#runs")
    page.goto(f"{world['base']}/rw/runs?kind=jobs&age=bad")
    assert "not a number and a unit" in page.inner_text("#message")
    with psycopg.connect(world["service"], autocommit=True) as conn:
        for (job_id,) in conn.execute("select job_id from ai.list_jobs(%s)", (queue,)).fetchall():
            Client(conn).cancel_job(job_id)
    page.context.close()


def test_the_cli_hashes_a_password_and_needs_a_password_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import io

    from agent_state import cli
    from agent_state.console import verify_password

    monkeypatch.setattr("sys.stdin", io.StringIO("s3cret\n"))
    assert cli.main(["console", "--hash-password"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("pbkdf2_sha256$") and verify_password("s3cret", line) and not verify_password("x", line)
    assert cli.main(["console", "--auth", "password"]) == 2
    assert "--auth password needs --password-file" in capsys.readouterr().err
    short = tmp_path / "secret"
    short.write_text("too short\n")
    assert cli.main(["console", "--secret-file", str(short)]) == 2  # refused before it serves
    assert "secret must be at least 32 characters" in capsys.readouterr().err


def test_an_operators_page_behind_a_pooler_polls(browser: Any, world: dict[str, Any]) -> None:
    """Through PgBouncer in transaction pooling LISTEN hears nothing: the console finds the pooler
    and its page polls, and still sees a new job."""
    if not world["pooled"]:
        pytest.skip("AGENT_STATE_TEST_POOLER_DSN is not set (no PgBouncer: `make test` starts one)")
    page = _page(browser, world, "pooled", "app_service")
    page.goto(f"{world['base']}/pooled/runs?queue={world['gqueue']}")
    expect(page.locator("#refresh-mode")).to_contain_text("every")
    new_thread = f"console-pooled-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(world["service"], autocommit=True) as conn, Client(conn).acting_as("tenant_a") as a:
        a.create_session(new_thread)
        job = a.enqueue_job(new_thread, {}, world["gqueue"])
    page.wait_for_selector(f"tr.run[data-thread='{new_thread}']", timeout=20_000)
    with psycopg.connect(world["service"], autocommit=True) as conn:
        Client(conn).cancel_job(job.job_id)
    page.context.close()


# -- the story of a run (issue 32), as the browser renders it; screenshots kept with the others ----


def test_a_crashed_and_resumed_runs_page_tells_the_takeover(
    browser: Any, world: dict[str, Any], module_role_dsn: Callable[[str], str]
) -> None:
    """A worker's lease ran out (the frozen clock moved past it), a second worker took the job over
    and completed it: the run page shows both attempts, the expiry, the takeover and the fence."""
    thread, queue = f"console-crash-{uuid.uuid4().hex[:8]}", f"console-crash-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(module_role_dsn("tenant_a"), autocommit=True) as conn:
        Client(conn).create_session(thread)
        job = Client(conn).enqueue_job(thread, {"task": "crashes once"}, queue)
        Client(conn).append_message(thread, "assistant", "working on it")
    with psycopg.connect(world["service"], autocommit=True) as conn:
        # the password server's roles may not freeze the clock: a lease of a second, and the second
        # worker's claim tried until the lease has ended (bounded)
        conn.execute("select ai.claim_job('worker-one', '1 second', %s)", (queue,))
        deadline = time.monotonic() + 30
        while not (rows := conn.execute("select fencing_token from ai.claim_job('worker-two', '5 minutes', %s)",
                                        (queue,)).fetchall()):  # fmt: skip
            assert time.monotonic() < deadline, "worker-one's lease did not end"
            time.sleep(0.2)
        conn.execute("select ai.complete_job(%s, %s)", (job.job_id, rows[0][0]))
    page = _page(browser, world, "rw", "tenant_a")
    page.goto(f"{world['base']}/rw/runs/{thread}")
    attempts = page.locator("#jobs tr.attempt")
    assert attempts.count() == 2
    first, second = attempts.nth(0).inner_text(), attempts.nth(1).inner_text()
    assert "worker-one" in first and "lease expired at" in first and "UTC" in first
    assert "taken over by worker-two" in first and "the fence refuses worker-one's writes" in first
    assert "worker-two" in second and "completed" in second and "attempt 2 of 5" in second
    assert page.inner_text(".run-status") == "completed"
    _shot(page, "story-crashed-and-resumed")
    page.context.close()


def test_the_lineage_picture(browser: Any, world: dict[str, Any]) -> None:
    page = _page(browser, world, "rw", "tenant_a")
    page.goto(f"{world['base']}/rw/runs/{world['g_thread']}")
    picture = page.locator("#lineage-picture svg.lineage")
    assert picture.locator("a.checkpoint").count() >= 3
    assert picture.locator("a.checkpoint.head").count() == 1
    labels = picture.locator("text").all_text_contents()  # SVG text has no innerText
    assert any(label.startswith("draft · step 1") for label in labels), labels
    assert any(label.startswith("input · step -1") for label in labels), labels
    picture.screenshot(path=str(ARTIFACTS / "lineage-picture.png"))
    _shot(page, "lineage")
    picture.locator("a.checkpoint", has_text="draft").first.click()  # a plain link: no script needed
    page.wait_for_selector("#node-name")
    assert page.inner_text("#node-name") == "draft"
    assert page.locator("#parent-link").count() == 1
    assert page.locator("#changes tr[data-channel=steps]").count() == 1
    _shot(page, "checkpoint-named-with-its-diff")
    page.context.close()


def test_the_approvals_history(browser: Any, world: dict[str, Any], module_role_dsn: Callable[[str], str]) -> None:
    thread, _ = _waiting_run(world, module_role_dsn("tenant_a"))
    page = _page(browser, world, "rw", "tenant_a")
    page.goto(f"{world['base']}/rw/approvals")
    row = page.locator(f"tr.approval[data-thread='{thread}']")
    row.locator("a.approval-link").click()
    page.wait_for_selector("#paused-state")
    assert "draft" in page.inner_text("#paused-state")  # the state the graph paused with
    _shot(page, "approval-paused-state")
    page.locator("input[name=reason]").fill("not this week")
    page.locator("button.reject").click()
    page.wait_for_url(_returned(f"{world['base']}/rw/approvals"))
    assert page.inner_text("#notice") == f"Rejected: thread {thread}"
    decided = page.locator(f"#history tr.decision[data-thread='{thread}']")
    assert "rejected" in decided.inner_text() and "not this week" in decided.inner_text()
    assert "tenant_a" in decided.locator(".decided-by").inner_text()
    _shot(page, "approvals-history")
    page.context.close()


def test_the_long_timeline_pager(browser: Any, world: dict[str, Any], module_role_dsn: Callable[[str], str]) -> None:
    thread = f"console-long-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(module_role_dsn("tenant_a"), autocommit=True) as conn:
        a = Client(conn)
        a.create_session(thread)
        for start in range(1, 1101, 275):
            a.append_messages(thread, [NewMessage("user", f"message number {i}") for i in range(start, start + 275)])
    page = _page(browser, world, "rw", "tenant_a")
    page.goto(f"{world['base']}/rw/runs/{thread}")
    assert "message number 1100" in page.inner_text("#timeline")
    assert page.inner_text("#timeline-pager").startswith("items 1 to 100 of 1,1")
    _shot(page, "timeline-newest")
    page.locator("#timeline-older").click()
    page.wait_for_selector("#timeline-newest")
    assert "items 101 to 200" in page.inner_text("#timeline-pager")
    text = page.inner_text("#timeline")
    assert "message number 1000" in text and "message number 1001" not in text
    _shot(page, "timeline-older")
    page.context.close()
