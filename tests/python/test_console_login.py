"""The console's database-credentials login authenticates with exactly what the visitor typed
(issue 37, item 1).

Before: ``with_user()`` dropped an empty password, so libpq looked for one of the console
process's own: ``PGPASSWORD``, a ``.pgpass`` line, a service file's ``password``, or no password at
all where pg_hba.conf says ``trust``. ``POST /login`` with ``user=console_svc&password=`` then
answered 303 and every tenant's runs were the visitor's. Now an empty password is refused before
any connection, the visitor's connection names its role, its password, no password file and
``require_auth`` (password methods only), so no credential of the process is ever used and a server
that would not ask for the password is refused.

The private cluster trusts its socket, so these tests run a server of their own that asks for
passwords (tests/python/password_server.py), with one ``trust`` line for the role
``trusted_login``. The console process's credentials are those of ``console_svc`` (an ``ai_service``
member, an operator): each test puts them where libpq would find them, then logs in as a visitor
without them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from console_http import Served, Visitor
from password_server import PasswordServer, password

from agent_state import Client
from agent_state.console import create_app

SVC = "console_svc"
TRUSTED = "trusted_login"
LOGIN_FAILED = "wrong user name or password"


@pytest.fixture(scope="module")
def server() -> Iterator[dict[str, Any]]:
    """The password-asking server, the schema deployed, a tenant's run and the console's role."""
    if not Path(os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin"), "initdb").exists():
        pytest.skip("no initdb (PGBIN) for a server of the test's own")
    with PasswordServer(trusted=(TRUSTED,)) as pg:
        db = pg.deploy()
        pg.add_role(SVC, group="ai_service")
        pg.add_role(TRUSTED, group="ai_service")
        with psycopg.connect(pg.url("tenant_a", db, password=password("tenant_a")), autocommit=True) as conn:
            Client(conn).create_session("tenant-a-secret-run")
        yield {"pg": pg, "db": db, "svc_url": pg.url(SVC, db)}


@pytest.fixture(autouse=True)
def no_credentials_of_the_runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each test starts from no password source of the process but those it sets itself."""
    for name in ("PGPASSWORD", "PGPASSFILE", "PGSERVICE", "PGSERVICEFILE", "PGREQUIREAUTH", "PGUSER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.pgpass, no ~/.pg_service.conf of the runner


def _visit(url: str) -> Iterator[Visitor]:
    with Served(create_app(url)) as served:
        visitor = Visitor(served.port)
        try:
            yield visitor
        finally:
            visitor.close()


@pytest.fixture
def console(server: dict[str, Any]) -> Iterator[Visitor]:
    """A console whose URL is console_svc's, without a password: the process's own credentials
    are wherever the test put them."""
    yield from _visit(server["svc_url"])


def _refused(answer: Any, server: dict[str, Any]) -> None:
    assert answer.status in (400, 401), (answer.status, answer.body[:500])
    assert "location" not in answer.headers
    assert str(server["pg"].dir) not in answer.body and "5432" not in answer.body  # no address


def _empty_and_wrong_are_refused(console: Visitor, server: dict[str, Any]) -> None:
    empty = console.log_in(SVC, "")
    _refused(empty, server)
    assert "a password is needed" in empty.body
    wrong = console.log_in(SVC, "not-the-password")
    _refused(wrong, server)
    assert LOGIN_FAILED in wrong.body
    assert console.get("/runs").status == 303, "still logged out"


def test_a_login_without_a_password_does_not_use_pgpassword(
    console: Visitor, server: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", password(SVC))
    with psycopg.connect(server["svc_url"]) as conn:  # the process itself logs in with it
        assert conn.execute("select current_user").fetchone() == (SVC,)
    _empty_and_wrong_are_refused(console, server)


def test_a_login_without_a_password_does_not_use_a_pgpass_line(
    server: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pgpass = tmp_path / ".pgpass"
    pgpass.write_text(f"*:*:*:{SVC}:{password(SVC)}\n")
    pgpass.chmod(0o600)  # libpq reads ~/.pgpass (HOME is tmp_path) and, below, the URL's passfile
    with psycopg.connect(server["svc_url"]) as conn:
        assert conn.execute("select current_user").fetchone() == (SVC,)
    for url in (server["svc_url"], f"{server['svc_url']} passfile={pgpass}"):
        for console in _visit(url):
            _empty_and_wrong_are_refused(console, server)


def test_a_login_without_a_password_does_not_use_a_service_file(
    server: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    services = tmp_path / "pg_service.conf"
    services.write_text(f"[console]\nuser={SVC}\npassword={password(SVC)}\n")
    monkeypatch.setenv("PGSERVICEFILE", str(services))
    monkeypatch.setenv("PGSERVICE", "console")
    with psycopg.connect(server["svc_url"]) as conn:
        assert conn.execute("select current_user").fetchone() == (SVC,)
    for console in _visit(server["svc_url"]):
        _empty_and_wrong_are_refused(console, server)


def test_a_trust_line_does_not_log_anyone_in(console: Visitor, server: dict[str, Any]) -> None:
    with psycopg.connect(server["pg"].url(TRUSTED, server["db"])) as conn:  # the trust line: no password asked
        assert conn.execute("select current_user").fetchone() == (TRUSTED,)
    for typed in ("anything", password(TRUSTED)):  # even its real password: the server never asked for it
        answer = console.log_in(TRUSTED, typed)
        _refused(answer, server)
        assert LOGIN_FAILED in answer.body
    assert console.get("/runs").status == 303


def test_the_right_password_logs_in_and_reads_as_that_role(console: Visitor, server: dict[str, Any]) -> None:
    assert console.log_in(SVC, password(SVC)).status == 303
    page = console.get("/runs?kind=sessions")
    assert page.status == 200 and "operator" in page.body and "tenant-a-secret-run" in page.body
    tenant = Visitor(console.port)
    try:
        assert tenant.log_in("tenant_a", password("tenant_a")).status == 303
        assert "tenant-a-secret-run" in tenant.get("/runs?kind=sessions").body
        assert tenant.log_in("tenant_b", password("tenant_a")).status == 401  # another role's password
    finally:
        tenant.close()


def test_the_visitor_connection_string_names_every_credential() -> None:
    from agent_state.console.app import NO_PASSFILE, LoginRefused, visitor_conninfo

    found = psycopg.conninfo.conninfo_to_dict(
        visitor_conninfo("host=/tmp/x dbname=d user=svc password=own passfile=/p sslkey=/k", "tenant_a", "typed")
    )
    assert found["user"] == "tenant_a" and found["password"] == "typed" and found["passfile"] == NO_PASSFILE
    assert found["require_auth"] == "scram-sha-256,md5,password" and "sslkey" not in found
    assert (found["host"], found["dbname"]) == ("/tmp/x", "d")
    assert not Path(NO_PASSFILE).exists()
    with pytest.raises(LoginRefused):
        visitor_conninfo("dbname=d", "tenant_a", "")
