"""Hostile values in every parameter of every console route (issue 37, item 3).

The routes and their parameters are read from the app itself: each endpoint declares what it reads
(``agent_state.console.params.accepts``), and a route that declares nothing fails here, so a route
is covered the day it is added. Each path parameter, query parameter and form field gets, in turn,
overflowing and negative numbers, words where numbers go, control characters and NULs, huge
strings, bad UTF-8 and broken escapes in the percent-encoding, JSON nested too deep, a repeated
name; the others keep harmless values (ids nothing has, a queue of the test's own, so no action
reaches anybody's job). Every answer must be below 500 and show no SQL text, no traceback and no
address of the server, and the keep-alive connection must still serve the next request.

Before: ``/runs?kind=jobs&before=9999…`` answered 500 with the console's SQL, ``/runs?age=99999999999d``
raised OverflowError and reset the connection, a CSRF token with a non-ASCII character raised
TypeError, and a failed login showed libpq's text with the server's socket and port.
"""

from __future__ import annotations

import ipaddress
import os
import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import psycopg
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from console_http import Answer, Served, Visitor
from psycopg.conninfo import conninfo_to_dict
from starlette.routing import Route

from agent_state import Client
from agent_state.console import create_app
from agent_state.console.params import Param, accepted

pytestmark = pytest.mark.session_features("the console connects to the server itself for its pages")

# Raw (already percent-encoded) hostile values: sent as written.
HOSTILE = [
    "9" * 40,  # overflows any integer column
    "-1",
    "1e309",
    "NaN",
    "99999999999d",  # an age past timedelta's range
    "abc",  # a word where a number goes
    "%00",  # NUL
    "a%00b",
    "%01%1B%5B31m%7F%C2%85",  # C0, escape, DEL, C1
    "%0D%0ASet-Cookie:%20x=1",  # a header injection attempt
    "%FF%FE%C0%AF",  # bad UTF-8
    "%ED%A0%80",  # a UTF-8 encoded surrogate
    "%",  # a broken escape
    "%zz",
    "x" * 6000,  # huge for a query or a path (uvicorn bounds the request line)
    "%27%20or%201=1%20--",
    "%3Cscript%3Ealert(1)%3C/script%3E",
    "%5B" * 3000,  # JSON nested too deep
    "%2F%2Fevil.example",  # a redirect to another site
    "/%5Cevil.example",
    "%E2%80%AE%F0%9F%98%80",  # right-to-left override, an emoji
]
HUGE_FORM_VALUE = "y" * 300_000
LEAKS = ("Traceback", 'File "', "LINE 1", "HINT:", "CONTEXT:", "from ai.", "select ai.", "psycopg", ".s.PGSQL")


def _declared(app: Any) -> list[tuple[Route, Any]]:
    routes = [r for r in app.routes if isinstance(r, Route)]
    assert routes, "the console has routes"
    found = []
    for route in routes:
        spec = accepted(route.endpoint)
        assert spec is not None, f"route {route.path} declares no parameters (agent_state.console.params.accepts)"
        assert set(spec.path) == set(route.param_convertors), f"{route.path}: its path parameters are declared"
        found.append((route, spec))
    return found


def _default(name: str, param: Param, queue: str) -> str:
    """A harmless valid value: ids nothing has, the test's own queue, no confirmation."""
    if param.kind == "int":
        return str(2**62) if param.high > 2**62 else ""
    if param.kind == "choice":
        return param.choices[0] if param.required else ""
    if param.kind == "json":
        return "%7B%7D"
    if name == "queue":
        return queue
    if param.required or name in ("model", "user", "password"):
        return f"hostile-{name}-{uuid.uuid4().hex[:6]}"
    return ""


def _path(route: Route, values: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)(:\w+)?\}", lambda m: values[m.group(1)], route.path)


def _check(answer: Answer, where: str, secrets: tuple[str, ...]) -> None:
    assert answer.status < 500, f"{where}: {answer.status} {answer.body[:300]}"
    for leak in (*LEAKS, *secrets):
        assert leak not in answer.body, f"{where}: the page shows {leak!r}: {answer.body[:500]}"
    assert "x=1" not in answer.headers.get("set-cookie", ""), where


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@pytest.fixture(scope="module")
def served(module_dsn: str) -> Iterator[dict[str, Any]]:
    service = conninfo_to_dict(module_dsn)
    service["user"] = "app_service"
    url = psycopg.conninfo.make_conninfo(**service)
    host = str(service.get("host") or os.environ.get("PGHOST") or "")
    port = str(service.get("port") or os.environ.get("PGPORT") or "5432")
    # the host as a page could leak it: a socket path or a name as it is; an address (a TCP URL,
    # as on a Citus formation) only in a connection string's forms, since the workers page rightly
    # shows the workers' client addresses, 127.0.0.1 among them
    hosts = [f"host={host}", f"@{host}"] if _is_address(host) else [host] if host else []
    secrets = (f"port={port}", f":{port}", f"port {port}", *hosts)
    pages = create_app(url, auth="none", poll_seconds=1.0)
    logins = create_app(url)  # the database-credentials login: a visitor's own role and password
    from starlette.applications import Starlette
    from starlette.routing import Mount

    app = Starlette(routes=[Mount("/pages", pages), Mount("/login", logins)])
    with Served(app) as server:
        yield {"port": server.port, "pages": pages, "logins": logins, "secrets": secrets, "url": url}


def _fuzz(app: Any, visitor: Visitor, secrets: tuple[str, ...], only: Callable[[Route], bool]) -> int:
    queue = f"hostile-{uuid.uuid4().hex[:8]}"
    sent = 0
    for route, spec in _declared(app):
        if not only(route):
            continue
        post = "POST" in (route.methods or ())
        stream = route.path == "/events"
        base_path = {n: _default(n, p, queue) for n, p in spec.path.items()}
        base_query = {n: _default(n, p, queue) for n, p in spec.query.items()}
        base_form = {n: _default(n, p, queue) for n, p in spec.form.items()}
        targets = [("path", n) for n in spec.path] + [("query", n) for n in spec.query]
        targets += [("form", n) for n in spec.form] + [("query", "undeclared")]
        for place, name in targets:
            values = list(HOSTILE) + (["REPEAT", HUGE_FORM_VALUE] if place != "path" else [])
            for value in values:
                visitor.get("/login")  # a fresh CSRF token (a login may have replaced the cookie)
                path, query, form = dict(base_path), dict(base_query), dict(base_form)
                if "csrf" in form:
                    form["csrf"] = quote(visitor.csrf)
                repeat = value == "REPEAT"
                if value == HUGE_FORM_VALUE and place == "query":
                    continue  # the request line's bound: uvicorn answers 400 and closes
                {"path": path, "query": query, "form": form}[place][name] = "x" if repeat else value
                target = _path(route, path)
                qs = "&".join(f"{k}={v}" for k, v in query.items() if v != "")
                if repeat and place == "query":
                    qs += f"&{name}=y"
                target += f"?{qs}" if qs else ""
                body = "&".join(f"{k}={v}" for k, v in form.items() if v != "")
                if repeat and place == "form":
                    body += f"&{name}=y"
                where = (
                    f"{'POST' if post else 'GET'} {target[:120]} [{place} {name}={value[:30]!r}] body={body[:120]!r}"
                )
                if post:
                    answer = visitor.request("POST", target, body.encode())
                else:
                    answer = visitor.request("GET", target, stream=stream)
                _check(answer, where, secrets)
                sent += 1
    return sent


def test_every_route_declares_its_parameters(served: dict[str, Any]) -> None:
    assert len(_declared(served["pages"])) >= 15


def test_hostile_values_in_every_parameter_of_every_page(served: dict[str, Any]) -> None:
    visitor = Visitor(served["port"], "/pages")
    try:
        assert visitor.get("/runs").status == 200
        sent = _fuzz(served["pages"], visitor, served["secrets"], lambda r: r.path != "/login")
        assert sent > 500
        assert visitor.get("/runs").status == 200, "the keep-alive connection still serves"
    finally:
        visitor.close()


def test_hostile_values_in_the_login_form(served: dict[str, Any]) -> None:
    visitor = Visitor(served["port"], "/login")
    try:
        assert _fuzz(served["logins"], visitor, served["secrets"], lambda r: r.path == "/login") > 50
    finally:
        visitor.close()


def test_a_bad_parameter_is_a_400_that_names_it(served: dict[str, Any]) -> None:
    visitor = Visitor(served["port"], "/pages")
    try:
        for target, words in (
            ("/runs?kind=jobs&before=" + "9" * 30, "before must be a whole number"),
            ("/runs?age=99999999999d", "age is more than 36500 days"),
            ("/runs?age=soon", "is not a number and a unit"),
            ("/runs?kind=files", "kind must be one of jobs, sessions"),
            ("/runs?owner=a%00b", "owner holds a NUL character"),
            ("/runs?queue=q&owner=a%01b", "owner holds a control character"),
            ("/runs/t%00/checkpoints/c", "thread_id holds a NUL character"),
            ("/runs/" + "t" * 300, "thread_id is longer than 255 characters"),
        ):
            answer = visitor.get(target)
            assert answer.status == 400 and words in answer.body, (target, answer.status, answer.body[-800:])
        answer = visitor.get("/runs?kind=jobs&before=99")  # a good one still serves
        assert answer.status == 200
        for target in ("/%5Cevil.example", "//evil.example", "https://evil.example"):  # no redirect elsewhere
            visitor.get("/login")
            answer = visitor.post(
                f"/actions/job?next={target}", {"csrf": visitor.csrf, "action": "retry", "job_id": "1"}
            )
            assert answer.status == 400 and "location" not in answer.headers, (target, answer.status)
            assert "next must be a path of this console" in answer.body
    finally:
        visitor.close()


def test_a_failed_login_shows_one_message_and_no_address(served: dict[str, Any]) -> None:
    visitor = Visitor(served["port"], "/login")
    try:
        for user in ("app_service", "no_such_role", "postgres"):
            answer = visitor.log_in(user, "a-wrong-password")
            assert answer.status == 401 and "wrong user name or password" in answer.body, answer.body[-500:]
            _check(answer, user, served["secrets"])
    finally:
        visitor.close()


def test_a_checkpoint_langgraph_did_not_write_shows_its_metadata(served: dict[str, Any], module_dsn: str) -> None:
    pytest.importorskip("langgraph")
    thread = f"hostile-checkpoint-{uuid.uuid4().hex[:8]}"
    tenant = conninfo_to_dict(module_dsn)
    tenant["user"] = "tenant_a"
    with psycopg.connect(psycopg.conninfo.make_conninfo(**tenant), autocommit=True) as conn:
        client = Client(conn)
        client.create_session(thread)
        first = client.put_checkpoint(thread, "", "c1", None, "msgpack", b"\x01\xc1 not msgpack")
        client.put_checkpoint(thread, "", "c2", first, "json", b'["not", "a", "checkpoint"]')
    visitor = Visitor(served["port"], "/pages")
    try:
        for checkpoint in (first, "c2"):
            answer = visitor.get(f"/runs/{thread}/checkpoints/{checkpoint}")
            assert answer.status == 200, answer.body[-800:]
            assert "not a LangGraph checkpoint" in answer.body
            _check(answer, checkpoint, served["secrets"])
    finally:
        visitor.close()


HOSTILE_HEADERS = [
    "9" * 40,
    "\xff\xfe\xe9",  # latin-1 bytes that are not UTF-8
    "a\x01b\x7f",
    "x" * 8000,
    "gAAAAA" + "A" * 200,  # looks like a Fernet token
    '=;,"\\',
]


def test_hostile_cookies_and_csrf_headers_on_every_route(served: dict[str, Any]) -> None:
    """The login cookie and the X-CSRF-Token header are inputs too: a forged, huge or binary one
    is a stranger (the login page) or a refusal, never a 500."""
    for mount, app in (("/pages", served["pages"]), ("/login", served["logins"])):
        visitor = Visitor(served["port"], mount)
        try:
            for route, _spec in _declared(app):
                post = "POST" in (route.methods or ())
                target = _path(route, {n: "hostile-id" for n in route.param_convertors})
                for value in HOSTILE_HEADERS:
                    visitor.get("/login")
                    good_cookie = visitor.cookie
                    for cookie, csrf in ((value, visitor.csrf), (good_cookie, value)):
                        visitor.cookie = cookie
                        answer = visitor.request(
                            "POST" if post else "GET", target, b"" if post else None,
                            stream=route.path == "/events", headers={"X-CSRF-Token": csrf},
                        )  # fmt: skip
                        _check(answer, f"{mount}{target} cookie={cookie[:20]!r} csrf={csrf[:20]!r}", served["secrets"])
                        if post and csrf == value:  # refused, or (not logged in) sent to the login
                            refused = answer.status in (400, 403)
                            assert refused or answer.headers.get("location", "").endswith("/login"), (target, answer)
        finally:
            visitor.close()


def test_a_run_whose_id_holds_control_characters_opens(served: dict[str, Any], module_dsn: str) -> None:
    """The SQL API takes any id of 1 to 255 characters but NUL: the console opens every run a
    tenant can make, control characters and all (and escapes them on the page)."""
    thread = f"hostile-\x01\x1b[31m-<b>-{uuid.uuid4().hex[:8]}"
    tenant = conninfo_to_dict(module_dsn)
    tenant["user"] = "tenant_a"
    with psycopg.connect(psycopg.conninfo.make_conninfo(**tenant), autocommit=True) as conn:
        Client(conn).create_session(thread)
    visitor = Visitor(served["port"], "/pages")
    try:
        answer = visitor.get(f"/runs/{quote(thread, safe='')}")
        assert answer.status == 200, answer.body[-800:]
        assert "<b>" not in answer.body and "&lt;b&gt;" in answer.body
    finally:
        visitor.close()


def test_a_run_with_json_nested_deeper_than_python_reads_still_renders(served: dict[str, Any], module_dsn: str) -> None:
    """Postgres stores JSON nested far deeper than Python's json.loads reads (a RecursionError): a
    tenant's event of 5,000 levels made the run's page and the item's download a 500."""
    thread = f"hostile-deep-{uuid.uuid4().hex[:8]}"
    tenant = conninfo_to_dict(module_dsn)
    tenant["user"] = "tenant_a"
    with psycopg.connect(psycopg.conninfo.make_conninfo(**tenant), autocommit=True) as conn:
        Client(conn).create_session(thread)
        conn.execute(
            """select ai.record_event(%s, 'note', ('{"a":' || repeat('[', 5000) || repeat(']', 5000) || '}')::jsonb)""",
            (thread,),
        )
    visitor = Visitor(served["port"], "/pages")
    try:
        answer = visitor.get(f"/runs/{thread}")
        assert answer.status == 200 and "JSON nested deeper than the console reads" in answer.body, answer.body[-500:]
    finally:
        visitor.close()


def test_a_form_with_a_file_too_many_fields_or_too_many_bytes_is_a_400(served: dict[str, Any]) -> None:
    visitor = Visitor(served["port"], "/pages")
    try:
        visitor.get("/login")
        boundary = "hostileboundary"
        multipart = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n{visitor.csrf}\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="job_id"; filename="x.txt"\r\n'
            f"Content-Type: text/plain\r\n\r\n1\r\n--{boundary}--\r\n"
        ).encode()
        answers = [
            visitor.request(
                "POST",
                "/actions/job",
                multipart,
                headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
            ),
            visitor.post("/actions/job", "&".join(f"f{i}=1" for i in range(500)).encode()),
            visitor.post("/actions/job", b"csrf=" + b"x" * 1_100_000),
        ]
        for answer in answers:
            assert answer.status == 400, (answer.status, answer.body[-300:])
            _check(answer, "form", served["secrets"])
        assert visitor.get("/queues").status == 200
    finally:
        visitor.close()
