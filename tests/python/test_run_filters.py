"""The runs page's filters (owner, age, metadata) apply in SQL before the page's limit (issue 23's
leftover, issue 33): more rows that match than a page, older than a page of rows that do not
match, and the first page still holds only matches, the newest first, with the Older link reaching
the rest. A filter applied to the fetched page instead (the newest rows of every kind, then kept
or not in Python) would show an empty or short first page here.

The console's HTTP pages without a browser (console_http.Served), a page of 5 rows; the browser
test of the same (test_console.py) runs in `make test` only, ai.find_jobs' and ai.find_sessions'
own behaviour is pgTAP's (tests/pgtap/find_jobs, tests/pgtap/find_sessions)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest
from conftest import dsn_as
from console_http import Served, Visitor

from agent_state import Client
from agent_state.console import create_app

PAGE = 5


@pytest.fixture
def runs_page(dsn_as_role: Callable[[str], str]) -> Iterator[Visitor]:
    app = create_app(dsn_as_role("app_service"), auth="none", page_size=PAGE, listen=False)
    with Served(app) as server:
        visitor = Visitor(server.port)
        try:
            yield visitor
        finally:
            visitor.close()


@pytest.fixture
def dsn_as_role(direct_dsn: str) -> Callable[[str], str]:
    """The server itself as a role (the console LISTENs elsewhere; here it only reads)."""
    return lambda user: dsn_as(direct_dsn, user)


def _threads(body: str) -> list[str]:
    return re.findall(r'<tr class="run" data-thread="([^"]+)"', body)


def _older(body: str) -> str | None:
    found = re.search(r'<a id="older" href="([^"]+)"', body)
    return found.group(1).replace("&amp;", "&") if found else None


def test_a_filter_matching_rows_older_than_a_page_of_others_still_finds_them(
    runs_page: Visitor, dsn_as_role: Callable[[str], str]
) -> None:
    tag = uuid.uuid4().hex[:8]
    queue = f"run-filters-{tag}"
    with psycopg.connect(dsn_as_role("app_service"), autocommit=True) as conn:
        service = Client(conn)
        with service.acting_as("tenant_a") as a:
            for i in range(PAGE + 2):  # the matches, first (older)
                thread = f"filter-match-{tag}-{i:02d}"
                a.create_session(thread, {"pick": tag})
                a.enqueue_job(thread, {"pick": {"tag": tag}}, queue)
        with service.acting_as("tenant_b") as b:
            for i in range(PAGE + 2):  # then more than a page that do not match
                thread = f"filter-other-{tag}-{i:02d}"
                b.create_session(thread, {"pick": f"not-{tag}"})
                b.enqueue_job(thread, {"pick": {"tag": f"not-{tag}"}}, queue)
    matches = [f"filter-match-{tag}-{i:02d}" for i in reversed(range(PAGE + 2))]  # newest first
    for query in (
        f"kind=jobs&queue={queue}&meta=pick.tag={tag}",
        f"kind=jobs&queue={queue}&owner=tenant_a",
        f"kind=jobs&queue={queue}&owner=tenant_a&age=1h",
        f"kind=sessions&meta=pick={tag}",
        f"kind=sessions&owner=tenant_a&meta=pick={tag}&age=1h",
    ):
        first = runs_page.get(f"/runs?{query}")
        assert first.status == 200, first.body[-500:]
        assert _threads(first.body) == matches[:PAGE], query
        older = _older(first.body)
        assert older is not None, query
        rest = runs_page.get(f"/runs{older}")
        assert _threads(rest.body) == matches[PAGE:], query
    with psycopg.connect(dsn_as_role("app_service"), autocommit=True) as conn:
        for (job_id,) in conn.execute("select job_id from ai.list_jobs(%s, null, null, 100)", (queue,)).fetchall():
            Client(conn).cancel_job(job_id)
