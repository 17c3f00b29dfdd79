"""The console tells the story of a run (issue 32), over plain HTTP (tests/python/console_http.py):
the timeline opens at the newest items and pages to older ones (item 1), each attempt of a job is
a row of the story, a takeover and the fence included (item 2), a session list shows each
thread's run status (item 4), approvals give feedback and keep their history (item 6), the
lineage is a picture with named checkpoints and a diff by channel (item 3), and the HTTP hygiene
(item 8: a 404 page, Content-Security-Policy, the cookie's Secure flag).

The console runs with ``auth="none"`` as a test role (what a host application mounts behind its
own login); the login itself is tested in test_console_login.py."""

from __future__ import annotations

import html
import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, urlencode

import psycopg
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from console_http import Served, Visitor

from agent_state.console import create_app

pytestmark = pytest.mark.session_features("the console connects to the server itself for its pages")


@pytest.fixture(scope="module")
def consoles(module_role_dsn: Callable[[str], str]) -> Iterator[dict[str, int]]:
    with (
        Served(create_app(module_role_dsn("app_service"), auth="none")) as operator,
        Served(create_app(module_role_dsn("tenant_a"), auth="none")) as tenant,
        Served(create_app(module_role_dsn("tenant_a"), auth="none", secure_cookies=True)) as secure,
    ):
        yield {"operator": operator.port, "tenant": tenant.port, "secure": secure.port}


@pytest.fixture
def visit(consoles: dict[str, int]) -> Iterator[Callable[[str], Visitor]]:
    made: list[Visitor] = []

    def visitor(who: str) -> Visitor:
        made.append(Visitor(consoles[who]))
        return made[-1]

    yield visitor
    for v in made:
        v.close()


def _sql(role_dsn: Callable[[str], str], role: str, statement: str, params: tuple[Any, ...] = ()) -> list[Any]:
    with psycopg.connect(role_dsn(role), autocommit=True) as conn:
        cur = conn.execute(statement, params)
        return cur.fetchall() if cur.description else []


def _text(body: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def test_the_run_page_opens_at_the_newest_message_and_pages_to_older_ones(role_dsn, visit) -> None:  # type: ignore[no-untyped-def]
    thread = f"long-{uuid.uuid4()}"
    _sql(role_dsn, "tenant_a", "select ai.create_session(%s)", (thread,))
    _sql(
        role_dsn, "tenant_a",
        "select count(ai.append_message_idempotent(%s, 'user', to_jsonb('message number ' || i))) "
        "from generate_series(1, 1100) i", (thread,),
    )  # fmt: skip
    page = visit("tenant").get(f"/runs/{quote(thread, safe='')}")
    assert page.status == 200
    assert "message number 1100" in page.body  # the newest, which the first 1,000 left out
    shown = {int(n) for n in re.findall(r"message number (\d+)", page.body)}
    assert shown == set(range(1001, 1101)), "the newest hundred, not the oldest thousand"
    [(total,)] = _sql(role_dsn, "tenant_a", "select count(*) from ai.session_timeline(%s, 10000)", (thread,))
    assert total > 1100  # the messages, and the session's own events
    assert f"items 1 to 100 of {total:,}" in _text(page.body), "the page says how many items there are"
    older = re.search(r'<a id="timeline-older" href="([^"]+)"', page.body)
    assert older is not None, "a link to the older items"
    second = visit("tenant").get(f"/runs/{quote(thread, safe='')}" + html.unescape(older.group(1)))
    assert second.status == 200
    assert {int(n) for n in re.findall(r"message number (\d+)", second.body)} == set(range(901, 1001))
    assert f"items 101 to 200 of {total:,}" in _text(second.body)
    assert 'id="timeline-newest"' in second.body
    bad = visit("tenant").get(f"/runs/{quote(thread, safe='')}?before_at=2030-01-01T00:00:00Z&before_item=message")
    assert bad.status == 400  # a cursor in part


def _crash_and_resume(role_dsn: Callable[[str], str]) -> tuple[str, int]:
    """A job whose first worker's lease ran out (the frozen clock moves past it), taken over by a
    second worker that completes it; the first worker's late write is refused by the fence."""
    thread, queue = f"crash-{uuid.uuid4()}", f"q-{uuid.uuid4().hex[:8]}"
    _sql(role_dsn, "tenant_a", "select ai.create_session(%s)", (thread,))
    [(job,)] = _sql(
        role_dsn, "tenant_a", "select job_id from ai.enqueue_job(%s, '{}', %s, max_attempts => 5)", (thread, queue)
    )
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as conn:
        conn.execute("select set_config('ai.frozen_now', '2031-01-01 00:00:00+00', false)")
        [(_, token1)] = conn.execute(
            "select job_id, fencing_token from ai.claim_job('worker-one', '30 seconds', %s)", (queue,)
        ).fetchall()
        conn.execute("select set_config('ai.frozen_now', '2031-01-01 00:05:00+00', false)")
        [(_, token2)] = conn.execute(
            "select job_id, fencing_token from ai.claim_job('worker-two', '30 seconds', %s)", (queue,)
        ).fetchall()
        with pytest.raises(psycopg.Error) as refused:
            conn.execute("select ai.complete_job(%s, %s)", (job, token1))
        assert refused.value.sqlstate == "AS006"
        conn.execute("select ai.complete_job(%s, %s)", (job, token2))
    return thread, job


def test_a_crashed_and_resumed_run_tells_each_attempt(role_dsn, visit) -> None:  # type: ignore[no-untyped-def]
    thread, _ = _crash_and_resume(role_dsn)
    page = visit("tenant").get(f"/runs/{quote(thread, safe='')}")
    assert page.status == 200
    rows = re.findall(r'<tr class="attempt[^"]*"[^>]*>(.*?)</tr>', page.body, re.S)
    assert len(rows) == 2, page.body
    first, second = (_text(r) for r in rows)
    assert "worker-one" in first and "lease expired" in first and "2031-01-01 00:00:30" in first
    assert "taken over by worker-two" in first and "fence" in first  # the old worker's writes are refused
    assert "worker-two" in second and "completed" in second
    assert "attempt 1 of 5" in first and "attempt 2 of 5" in second
    assert "Attempts 2/5" in _text(page.body)


def test_a_session_list_shows_the_run_status_from_the_jobs(role_dsn, visit) -> None:  # type: ignore[no-untyped-def]
    thread, _ = _crash_and_resume(role_dsn)
    page = visit("tenant").get("/runs?kind=sessions&owner=tenant_a")
    assert page.status == 200
    row = re.search(rf'<tr class="run" data-thread="{re.escape(thread)}">(.*?)</tr>', page.body, re.S)
    assert row is not None
    assert 'class="run-status run-completed"' in row.group(1)


def test_an_unknown_thread_is_a_404_page(visit) -> None:  # type: ignore[no-untyped-def]
    page = visit("tenant").get(f"/runs/nobody-{uuid.uuid4()}")
    assert page.status == 404
    assert "Not found" in page.body and "<html" in page.body


def test_every_page_carries_a_content_security_policy_without_inline_script(visit) -> None:  # type: ignore[no-untyped-def]
    v = visit("operator")
    for path in ("/runs", "/runs?kind=sessions", "/approvals", "/queues", "/login"):
        page = v.get(path)
        policy = page.headers.get("content-security-policy", "")
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy, path
        assert not re.search(r"<script(?![^>]*\bsrc=)", page.body), f"{path}: an inline script"
        assert not re.search(r"\son[a-z]+=", page.body), f"{path}: an inline event handler"
        assert "<style" not in page.body, path
    assert v.get("/static/console.js").status == 200


def test_the_cookie_is_secure_under_https_or_when_configured(visit) -> None:  # type: ignore[no-untyped-def]
    plain = visit("tenant").get("/login").headers.get("set-cookie", "")
    assert "secure" not in plain.lower()
    forwarded = visit("tenant").request("GET", "/login", headers={"X-Forwarded-Proto": "https"})
    assert "secure" in forwarded.headers.get("set-cookie", "").lower()  # a proxy uvicorn trusts (127.0.0.1)
    configured = visit("secure").get("/login").headers.get("set-cookie", "")
    assert "secure" in configured.lower()


def _graph_thread(role_dsn: Callable[[str], str]) -> tuple[str, list[Any]]:
    """A LangGraph run of draft -> publish on the tenant's saver, then a branch: the state updated
    at the draft's checkpoint (as a person would, to try again from there) and run on."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    from agent_state.langgraph import AgentStateSaver

    class State(TypedDict):
        steps: list[str]

    def draft(state: State) -> dict[str, Any]:
        return {"steps": [*state["steps"], "draft"]}

    def publish(state: State) -> dict[str, Any]:
        return {"steps": [*state["steps"], "published"]}

    g = StateGraph(State)
    g.add_node("draft", draft)
    g.add_node("publish", publish)
    g.add_edge(START, "draft")
    g.add_edge("draft", "publish")
    g.add_edge("publish", END)
    thread = f"lineage-{uuid.uuid4()}"
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        conn.execute("select ai.create_session(%s)", (thread,))
        app = g.compile(checkpointer=AgentStateSaver(conn))
        config: Any = {"configurable": {"thread_id": thread}}
        app.invoke({"steps": []}, config)
        history = list(app.get_state_history(config))  # newest first
        drafted = next(h for h in history if h.values.get("steps") == ["draft"])
        branch = app.update_state(drafted.config, {"steps": ["draft", "edited"]})
        app.invoke(None, branch)
        return thread, list(app.get_state_history(config))


def test_the_lineage_is_a_picture_of_named_checkpoints_with_branches(role_dsn, visit) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("langgraph")
    thread, history = _graph_thread(role_dsn)
    page = visit("tenant").get(f"/runs/{quote(thread, safe='')}")
    assert page.status == 200
    svg = re.search(r'<svg class="lineage".*?</svg>', page.body, re.S)
    assert svg is not None, "the lineage is drawn server-side as SVG"
    picture = svg.group(0)
    assert "<script" not in picture
    links = re.findall(r'<a class="checkpoint( head)?" data-checkpoint="([^"]+)" href="([^"]+)">', picture)
    assert len(links) == len(history)
    assert [cid for head, cid, _ in links if head] == [history[0].config["configurable"]["checkpoint_id"]]
    labels = [_text(t) for t in re.findall(r"<text [^>]*>(.*?)</text>", picture, re.S)]
    assert any(label.startswith("draft · step 1") for label in labels), labels
    assert any(label.startswith("publish · step 2") for label in labels), labels
    assert any(label.startswith("input · step -1") for label in labels), labels
    assert any(label.startswith("update_state") for label in labels), labels  # the branch's first checkpoint
    lanes = {float(x) for x in re.findall(r'<circle cx="([\d.]+)"', picture)}
    assert len(lanes) >= 2, "the branch has a lane of its own"


def test_a_checkpoint_page_names_its_node_links_its_parent_and_diffs_by_channel(role_dsn, visit) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("langgraph")
    thread, history = _graph_thread(role_dsn)
    published = next(h for h in history if h.values.get("steps") == ["draft", "published"])
    cid = published.config["configurable"]["checkpoint_id"]
    parent = published.parent_config["configurable"]["checkpoint_id"]
    page = visit("tenant").get(f"/runs/{quote(thread, safe='')}/checkpoints/{cid}")
    assert page.status == 200
    assert _text(re.search(r'<span id="node-name">(.*?)</span>', page.body).group(1)) == "publish"  # type: ignore[union-attr]
    assert re.search(rf'<a id="parent-link" href="[^"]*/checkpoints/{re.escape(parent)}"', page.body)
    row = re.search(r'<tr class="change change-(\w+)" data-channel="steps">(.*?)</tr>', page.body, re.S)
    assert row is not None and row.group(1) == "changed"
    assert "<details>" in row.group(2) and "published" in row.group(2)  # the values, collapsed


def _paused_run(role_dsn: Callable[[str], str]) -> tuple[str, str]:
    """A LangGraph run paused at an interrupt after its draft step, and its approval request."""
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph
    from langgraph.types import interrupt

    from agent_state.langgraph import AgentStateSaver

    class State(TypedDict):
        steps: list[str]

    def draft(state: State) -> dict[str, Any]:
        return {"steps": [*state["steps"], "drafted a refund"]}

    def approve(state: State) -> dict[str, Any]:
        interrupt({"send": "refund"})
        return {"steps": [*state["steps"], "approved"]}

    g = StateGraph(State)
    g.add_node("draft", draft)
    g.add_node("approve", approve)
    g.add_edge(START, "draft")
    g.add_edge("draft", "approve")
    g.add_edge("approve", END)
    thread, queue = f"paused-{uuid.uuid4()}", f"q-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as conn:
        conn.execute("select ai.create_session(%s)", (thread,))
        app = g.compile(checkpointer=AgentStateSaver(conn))
        config: Any = {"configurable": {"thread_id": thread}}
        app.invoke({"steps": []}, config)
        checkpoint = app.get_state(config).config["configurable"]["checkpoint_id"]
        [(job,)] = conn.execute("select job_id from ai.enqueue_job(%s, '{}', %s)", (thread, queue)).fetchall()
    with psycopg.connect(role_dsn("app_service"), autocommit=True) as conn:
        [(token,)] = conn.execute("select fencing_token from ai.claim_job('w', '1 minute', %s)", (queue,)).fetchall()
        conn.execute(
            "select ai.request_human(%s, %s, %s, %s)", (job, token, checkpoint, '{"send": "refund", "amount": 30}')
        )
    return thread, checkpoint


def test_an_approval_shows_the_paused_state_gives_feedback_and_keeps_the_history(role_dsn, visit) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("langgraph")
    thread, checkpoint = _paused_run(role_dsn)
    v = visit("tenant")
    page = v.get("/approvals?" + urlencode({"thread_id": thread}))
    assert page.status == 200
    link = f"/approval?{urlencode({'thread_id': thread, 'checkpoint_id': checkpoint})}"
    assert html.escape(link) in page.body
    paused = v.get(link)
    assert paused.status == 200
    state = re.search(r'<div id="paused-state">(.*?)</div>', paused.body, re.S)
    assert state is not None and 'data-channel="steps"' in state.group(1) and "drafted a refund" in state.group(1)
    answer = v.post(
        "/approvals/resolve?next=/approvals",
        {"csrf": v.csrf, "thread_id": thread, "checkpoint_id": checkpoint, "decision": "reject", "reason": "too much"},
    )
    assert answer.status == 303
    back = v.get(answer.headers["location"])
    notice = re.search(r'<p class="ok notice" id="notice" role="status">(.*?)</p>', back.body)
    assert notice is not None and _text(notice.group(1)) == f"Rejected: thread {thread}"
    row = re.search(
        rf'<tr class="decision decision-resolved" data-thread="{re.escape(thread)}">(.*?)</tr>', back.body, re.S
    )
    assert row is not None, "the decision is in the history"
    cells = _text(row.group(1))
    assert "rejected" in cells and "too much" in cells and "tenant_a" in cells and "UTC" in cells
    run_page = v.get(f"/runs/{quote(thread, safe='')}")
    assert 'id="decisions"' in run_page.body and "too much" in run_page.body


def test_live_refresh_hears_a_queue_that_appears_after_the_page_loaded(role_dsn, module_role_dsn) -> None:  # type: ignore[no-untyped-def]
    import http.client
    import time

    _sql(role_dsn, "tenant_a", "select ai.create_session(%s)", (f"queue-seed-{uuid.uuid4()}",))
    seed = f"seed-{uuid.uuid4()}"
    _sql(role_dsn, "tenant_a", "select ai.create_session(%s)", (seed,))
    _sql(role_dsn, "tenant_a", "select ai.enqueue_job(%s, '{}', %s)", (seed, f"old-{uuid.uuid4().hex[:8]}"))
    with Served(create_app(module_role_dsn("app_service"), auth="none", poll_seconds=1.0)) as served:
        conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
        conn.request("GET", "/events")
        stream = conn.getresponse()
        assert stream.status == 200

        def next_event(deadline: float) -> str:
            while time.monotonic() < deadline:
                line = stream.readline().decode().strip()
                if line.startswith("event: "):
                    return line.removeprefix("event: ")
            raise AssertionError("no event before the deadline")

        assert next_event(time.monotonic() + 30) == "listening"
        thread, queue = f"new-queue-{uuid.uuid4()}", f"new-{uuid.uuid4().hex[:8]}"
        _sql(role_dsn, "tenant_a", "select ai.create_session(%s)", (thread,))
        _sql(role_dsn, "tenant_a", "select ai.enqueue_job(%s, '{}', %s)", (thread, queue))
        assert next_event(time.monotonic() + 30) == "change"  # the new queue, heard without a reload
        conn.close()


def test_the_bulk_action_starts_at_the_pages_status_and_times_carry_their_zone(visit) -> None:  # type: ignore[no-untyped-def]
    page = visit("operator").get("/runs?kind=jobs&status=pending")
    assert page.status == 200
    form = re.search(r'<form method="post" action="/actions/bulk".*?</form>', page.body, re.S)
    assert form is not None
    assert re.search(r"<option selected>PENDING</option>", form.group(0)), "the status the page filters on"
    queues = visit("operator").get("/queues")
    chart = re.search(r'<svg class="chart".*?</svg>', queues.body, re.S)
    assert chart is not None
    assert "jobs / 5 min" in chart.group(0) and "latency" in chart.group(0) and "now" in chart.group(0)
    assert "time (UTC" in chart.group(0)
    times = re.findall(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d( UTC)?", page.body)
    assert times and all(zone == " UTC" for zone in times)


def test_the_queues_page_has_a_keys_table_and_a_tenant_sees_only_its_own_keys(role_dsn, visit) -> None:  # type: ignore[no-untyped-def]
    queue, mine, theirs = f"keys-{uuid.uuid4().hex[:8]}", f"mine-{uuid.uuid4()}", f"theirs-{uuid.uuid4()}"
    _sql(role_dsn, "tenant_a", "select ai.create_session(%s)", (mine,))
    _sql(role_dsn, "tenant_a", "select ai.enqueue_job(%s, '{}', %s, key => 'provider-a')", (mine, queue))
    _sql(role_dsn, "tenant_b", "select ai.create_session(%s)", (theirs,))
    _sql(role_dsn, "tenant_b", "select ai.enqueue_job(%s, '{}', %s, key => 'secret-of-b')", (theirs, queue))
    _sql(role_dsn, "app_service", "select ai.set_job_key(%s, 'provider-a', 1, 7, 60, 3)", (queue,))
    operator = visit("operator").get("/queues")
    rows = re.findall(r'<tr class="key">(.*?)</tr>', operator.body, re.S)
    mine_row = next(_text(r).split() for r in rows if "provider-a" in r)
    assert mine_row == [queue, "provider-a", "1", "0", "7", "60", "3", "3.0", "1", "1"]
    assert any("secret-of-b" in r for r in rows)
    tenant = visit("tenant").get("/queues")
    assert "provider-a" in tenant.body and "secret-of-b" not in tenant.body
