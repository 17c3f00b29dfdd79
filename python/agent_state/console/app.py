"""The console's Starlette app (docs/console.md): routes to the pages (``pages.py``), the login
cookie, the security headers and the error page around every request. The pages see only the
:class:`~agent_state.console.core.Console` this module puts in ``request.state``: they never import
this module, and this module imports theirs to route to them.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from . import pages, workers
from .core import (
    COOKIE,
    NO_PASSFILE,
    Console,
    ConsoleConfig,
    Login,
    LoginRefused,
    hash_password,
    verify_password,
    visitor_conninfo,
)

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "COOKIE",
    "NO_PASSFILE",
    "Console",
    "ConsoleConfig",
    "LoginRefused",
    "create_app",
    "hash_password",
    "verify_password",
    "visitor_conninfo",
]

log = logging.getLogger("agent_state.console")
STATIC = Path(__file__).parent / "static"
# No inline script or style anywhere: the pages' one script and their style sheet are files under
# /static; the pictures are inline SVG made of numbers and escaped text (no script in them).
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


def _https(console: Console, request: Request) -> bool:
    """Whether the login cookie is sent ``Secure``: always with ``secure_cookies``, else when this
    request came over https (uvicorn takes ``X-Forwarded-Proto`` from the proxies it trusts:
    ``--forwarded-allow-ips``, 127.0.0.1 by default; a header from anyone else is ignored)."""
    return console.config.secure_cookies or request.url.scheme == "https"


def _login_for(console: Console, request: Request) -> tuple[Login, bool]:
    """The cookie's login (its database connection string made again from the role and password),
    or a new visitor's (a CSRF token, nobody logged in; True: its cookie is to be set)."""
    login = console.logins.load(request.cookies.get(COOKIE))
    if login is None:
        return console.logins.new(), True
    if console.config.auth == "database" and login.user is not None:
        try:
            login.conninfo = visitor_conninfo(console.config.database_url, login.user, login.password or "")
        except LoginRefused:  # a login without a password (a cookie of an older console): logged out
            login.user, login.password, login.conninfo = None, None, None
    elif console.config.auth != "database":
        login.password = None
    return login, False


def create_app(database_url: str | None = None, *, config: ConsoleConfig | None = None, **options: Any) -> Starlette:
    """The console as an ASGI app. ``create_app(url, auth="password", password_file=...)`` or
    ``create_app(config=ConsoleConfig(...))``; the options are :class:`ConsoleConfig`'s fields."""
    if config is None:
        if database_url is None:
            raise ValueError("create_app needs database_url or config")
        config = ConsoleConfig(database_url=database_url, **options)
    console = Console(config)
    routes = [
        Route("/", pages.home),
        Route("/login", pages.login, methods=["GET", "POST"]),
        Route("/logout", pages.logout, methods=["POST"]),
        Route("/runs", pages.runs),
        Route("/events", pages.events),
        Route("/runs/{thread_id:path}/checkpoints/{checkpoint_id}", pages.checkpoint),
        Route("/runs/{thread_id:path}/item/{item}/{ref:path}", pages.item),
        Route("/runs/{thread_id:path}", pages.run),
        Route("/approvals", pages.approvals),
        Route("/approvals/resolve", pages.resolve, methods=["POST"]),
        Route("/approval", pages.approval),
        Route("/queues", pages.queues),
        Route("/workers", workers.workers),
        Route("/actions/job", pages.job_action, methods=["POST"]),
        Route("/actions/fork", pages.fork, methods=["POST"]),
        Route("/actions/replay", pages.replay, methods=["POST"]),
        Route("/actions/bulk", pages.bulk, methods=["POST"]),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]

    async def session_and_errors(request: Request, call_next: Any) -> Response:
        login, fresh = _login_for(console, request)
        before = login.fields()
        request.state.login = login
        request.state.console = console
        path = request.url.path[len(request.scope.get("root_path", "")) :] or "/"
        if console.config.auth == "none":
            login.user = login.user or "console"
        if login.user is None and path != "/login" and not path.startswith("/static/"):
            response: Response = RedirectResponse(f"{request.scope.get('root_path', '')}/login", status_code=303)
        else:
            try:
                response = await call_next(request)
            except Exception:  # never a traceback, SQL or an address on a page: in the log only
                log.exception("console: %s %s failed", request.method, path)
                response = console.render(
                    request, "error.html", 500, title="Internal error",
                    message="the console failed on this page; the error is in the console's log",
                )  # fmt: skip
        if fresh or login.fields() != before:  # a new visitor, a login, a logout: the cookie again
            response.set_cookie(
                COOKIE,
                console.logins.dump(login),
                max_age=int(console.config.session_hours * 3600),
                httponly=True,
                secure=_https(console, request),
                samesite="strict",
                path="/",
            )
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response

    app = Starlette(routes=routes, middleware=[Middleware(BaseHTTPMiddleware, dispatch=session_and_errors)])
    app.state.console = console
    return app
