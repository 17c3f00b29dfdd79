"""What the console's pages stand on: its configuration, logins and their cookie, rendering,
connections, guards, formatting and the server-sent events (docs/console.md). The pages
(``pages.py``) take a :class:`Console` from the request; ``app.py`` puts one there and routes to
them, so neither of those two imports the other's module.

Each request opens one connection as the logged-in role (the database-credentials login) or as the
console's own role (the password-file login), calls ``ai`` functions only, and closes it. The sync
endpoints run in Starlette's thread pool; the one async endpoint is the server-sent events stream,
which LISTENs on the queues' channels (``ai.queue_channel``) over a connection of its own.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import os
import secrets
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import psycopg
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb, set_json_loads
from starlette.requests import Request
from starlette.responses import HTMLResponse, StreamingResponse

from .. import errors
from ..client import abehind_pooler
from ..run_story import when

HERE = Path(__file__).parent
log = logging.getLogger("agent_state.console")
COOKIE = "agent_state_console"
JOB_STATUSES = ("PENDING", "IN_PROGRESS", "AWAITING_HUMAN", "COMPLETED", "FAILED", "CANCELLED")
SESSION_STATUSES = ("active", "waiting", "completed", "failed", "cancelled")
PBKDF2_ITERATIONS = 200_000


# -- configuration and logins --------------------------------------------------------------------


@dataclass(frozen=True)
class ConsoleConfig:
    """How the console connects and who may log in.

    ``database_url``: the database (a libpq URL or key=value string). ``auth``: ``"database"`` (the
    login form takes a database role and its password; every call runs as that role),
    ``"password"`` (users and password hashes in ``password_file``, one ``name:hash`` a line made by
    ``agent-state console --hash-password``; every call runs as ``database_url``'s role) or
    ``"none"`` (no login: for mounting behind the host application's own authentication; every call
    runs as ``database_url``'s role). ``read_only`` hides and refuses every action.
    ``payload_limit``: characters of a payload rendered inline; longer ones are cut, with a download
    link. ``poll_seconds``: the refresh period when the queue's notifications cannot be heard (a
    tenant, which may not LISTEN on the queues' channels, or a transaction pooler); ``listen=False``
    always polls. ``secret`` encrypts and signs the login cookie (:class:`LoginCookies`): give every
    console process the same one (at least 32 characters) and a login survives a restart and works
    on any of them; without one each app makes a random one, so its logins end with it.
    ``session_hours``: how long a login lasts. ``secure_cookies``: the login cookie is always sent
    ``Secure`` (behind a proxy that ends TLS); without it, only on a request that came over https."""

    database_url: str
    auth: str = "database"
    password_file: str | None = None
    read_only: bool = False
    payload_limit: int = 2000
    poll_seconds: float = 5.0
    listen: bool = True
    page_size: int = 50
    session_hours: float = 12.0
    secret: str | None = None
    secure_cookies: bool = False

    def __post_init__(self) -> None:
        if self.auth not in ("database", "password", "none"):
            raise ValueError(f"auth must be 'database', 'password' or 'none', not {self.auth!r}")
        if self.auth == "password" and not self.password_file:
            raise ValueError("auth='password' needs password_file")
        if self.payload_limit < 1 or self.page_size < 1 or self.poll_seconds <= 0 or self.session_hours <= 0:
            raise ValueError("payload_limit, page_size, poll_seconds and session_hours must be positive")
        if self.secret is not None and len(self.secret) < 32:
            raise ValueError("secret must be at least 32 characters (e.g. secrets.token_urlsafe(32))")


def hash_password(password: str, *, salt: bytes | None = None, iterations: int = PBKDF2_ITERATIONS) -> str:
    """A password file's hash: ``pbkdf2_sha256$iterations$salt$hash`` (base64)."""
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    b64 = base64.b64encode
    return f"pbkdf2_sha256${iterations}${b64(salt).decode()}${b64(digest).decode()}"


def verify_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches a hash made by :func:`hash_password` (constant time)."""
    try:
        scheme, iterations, salt, digest = stored.split("$")
        if scheme != "pbkdf2_sha256":
            return False
        got = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(salt), int(iterations))
        return hmac.compare_digest(got, base64.b64decode(digest))
    except (ValueError, TypeError):
        return False


def read_password_file(path: str) -> dict[str, str]:
    """``name:hash`` lines (blank lines and ``#`` comments skipped)."""
    users: dict[str, str] = {}
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, stored = line.partition(":")
        if name and stored:
            users[name.strip()] = stored.strip()
    return users


@dataclass
class Login:
    """One browser's console session: its CSRF token and, once logged in, who and how to connect.
    It lives in the browser's cookie (:class:`LoginCookies`), never in the console's memory."""

    csrf: str
    created: float
    user: str | None = None
    password: str | None = None  # the database-credentials login's: encrypted in the cookie, never in clear
    conninfo: str | None = None  # made from user and password on each request; never in the cookie

    def fields(self) -> tuple[Any, ...]:
        return (self.csrf, self.created, self.user, self.password)


def _fernet_key(secret: str) -> bytes:
    """The cookie key: HKDF-SHA256 of the console's secret (so any length of secret makes a key)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"agent-state console login v1").derive(
        secret.encode()
    )
    return base64.urlsafe_b64encode(raw)


class LoginCookies:
    """Logins kept in the browser's cookie, encrypted and authenticated with a key made from the
    console's secret (Fernet: AES-128-CBC and HMAC-SHA256). Every console process given the same
    secret reads the same cookies, so a login survives a restart and works behind a balancer; a
    cookie made with another secret, altered, or older than ``hours`` (counted from the login, or
    for a visitor not logged in from the first visit) is refused. ``clock`` is the time in seconds (tests move it)."""

    def __init__(self, secret: str, hours: float, clock: Callable[[], float] = time.time):
        from cryptography.fernet import Fernet

        self.fernet = Fernet(_fernet_key(secret))
        self.hours = hours
        self.clock = clock

    def new(self) -> Login:
        return Login(csrf=secrets.token_urlsafe(32), created=self.clock())

    def log_in(self, login: Login, user: str, password: str | None) -> None:
        """``login`` is now ``user``'s (with the database role's ``password``), for ``hours`` from now."""
        login.user, login.password, login.created = user, password, self.clock()

    def dump(self, login: Login) -> str:
        body = {"c": login.csrf, "t": login.created, "u": login.user, "p": login.password}
        return self.fernet.encrypt_at_time(json.dumps(body).encode(), int(self.clock())).decode()

    def load(self, cookie: str | None) -> Login | None:
        """The cookie's login, or None (no cookie, made with another secret, altered, or expired)."""
        from cryptography.fernet import InvalidToken

        if not cookie:
            return None
        now = self.clock()
        try:
            # the token's own time: made no later than now (and, with the body's, at most hours ago)
            body = json.loads(self.fernet.decrypt_at_time(cookie.encode(), int(self.hours * 3600) + 1, int(now)))
            login = Login(csrf=str(body["c"]), created=float(body["t"]), user=body.get("u"), password=body.get("p"))
        except (InvalidToken, ValueError, KeyError, TypeError):
            return None
        if not 0 <= now - login.created <= self.hours * 3600:
            return None
        return login


class Refused(Exception):
    """An action the console refuses (CSRF, read-only, not an operator): 403 with the reason."""


# -- formatting -----------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A value as JSON-able data (datetimes, decimals, bytes, LangChain messages, dataclasses)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [plain(v) for v in value]
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (bytes, memoryview)):
        return f"<{len(bytes(value))} bytes>"
    dump = getattr(value, "model_dump", None) or getattr(value, "dict", None)
    if callable(dump):
        try:
            return plain(dump())
        except Exception:
            pass
    if hasattr(value, "__dataclass_fields__"):
        return {k: plain(getattr(value, k)) for k in value.__dataclass_fields__}
    return str(value)


TOO_DEEP = {"(not shown)": "JSON nested deeper than the console reads"}


def bounded_json_loads(data: str | bytes) -> Any:
    """json.loads for the console's connections: a document nested deeper than Python's recursion
    limit (Postgres stores far deeper ones: a tenant's event can hold one) reads as a placeholder,
    so the page of that run still renders."""
    try:
        return json.loads(data)
    except RecursionError:
        return dict(TOO_DEEP)


def as_json(value: Any) -> str:
    return json.dumps(plain(value), indent=2, sort_keys=True, ensure_ascii=False)


def age_text(value: timedelta | float | None) -> str:
    if value is None:
        return "-"
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


# -- the checkpoint tree --------------------------------------------------------------------------


@dataclass
class TreeNode:
    row: dict[str, Any]
    children: list[TreeNode] = field(default_factory=list)

    @property
    def fork(self) -> bool:
        return len(self.children) > 1


def build_tree(rows: list[dict[str, Any]]) -> list[TreeNode]:
    """Checkpoints under their parents (a parent outside the rows makes a root), oldest first."""
    nodes = {r["checkpoint_id"]: TreeNode(r) for r in rows}
    roots: list[TreeNode] = []
    for r in sorted(rows, key=lambda r: r["checkpoint_id"]):
        parent = nodes.get(r["parent_checkpoint_id"] or "")
        (parent.children if parent is not None else roots).append(nodes[r["checkpoint_id"]])
    return roots


# -- the chart --------------------------------------------------------------------------------------


def throughput_chart(rows: list[dict[str, Any]], now: datetime, *, buckets: int = 12, minutes: int = 5) -> Markup:
    """An inline SVG of one queue's last hour from ``ai.queue_throughput`` rows: bars of the jobs
    finished per bucket (completed and failed; the left axis, jobs per bucket), a line of their
    mean latency (enqueue to finish; the right axis, in seconds, minutes or hours), a time axis
    in minutes before now (UTC). Built from numbers only, so nothing in it needs escaping."""
    width, height = 420, 150
    left, right, top_pad, bottom = 44, 52, 14, 30
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    counts = [0] * buckets
    means = [0.0] * buckets
    step = timedelta(minutes=minutes)
    epoch = datetime(2000, 1, 1, tzinfo=timezone.utc)
    last = epoch + ((now - epoch) // step) * step  # the bucket holding now, as the SQL aligns them
    first = last - (buckets - 1) * step
    for r in rows:
        i = int((r["bucket_start"] - first) // step)
        if 0 <= i < buckets:
            counts[i] = int(r["completed"]) + int(r["failed"])
            means[i] = r["mean_latency"].total_seconds() if r["mean_latency"] is not None else 0.0
    top = max(counts) or 1
    top_latency = max(means) or 1.0
    bar = plot_w / buckets
    base = top_pad + plot_h
    parts = [
        f'<svg class="chart" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
        f"<title>jobs finished per {minutes} min (bars, left axis) and their mean latency (line, right axis), "
        f"the last {buckets * minutes} min up to {now.astimezone(timezone.utc):%H:%M} UTC</title>",
        # the axes: jobs (left), latency (right), time (below)
        f'<line class="axis" x1="{left}" y1="{top_pad}" x2="{left}" y2="{base}" stroke="#888"/>',
        f'<line class="axis" x1="{left}" y1="{base}" x2="{left + plot_w}" y2="{base}" stroke="#888"/>',
        f'<line class="axis" x1="{left + plot_w}" y1="{top_pad}" x2="{left + plot_w}" y2="{base}" stroke="#d9534f"/>',
        f'<text class="tick" x="{left - 4}" y="{top_pad + 4}" font-size="10" text-anchor="end">{top}</text>',
        f'<text class="tick" x="{left - 4}" y="{base}" font-size="10" text-anchor="end">0</text>',
        f'<text class="unit" x="4" y="{top_pad + plot_h / 2:.0f}" font-size="10" '
        f'transform="rotate(-90 8 {top_pad + plot_h / 2:.0f})" text-anchor="middle">jobs / {minutes} min</text>',
        f'<text class="tick" x="{left + plot_w + 4}" y="{top_pad + 4}" font-size="10" fill="#d9534f">'
        f"{age_text(top_latency if any(means) else None)}</text>",
        f'<text class="tick" x="{left + plot_w + 4}" y="{base}" font-size="10" fill="#d9534f">0 s</text>',
        f'<text class="unit" x="{left + plot_w + 4}" y="{top_pad + plot_h / 2:.0f}" font-size="10" '
        f'fill="#d9534f">latency</text>',
    ]
    for k in range(0, buckets + 1, max(1, buckets // 4)):  # time ticks: minutes before now
        x = left + k * bar
        ago = (buckets - k) * minutes
        label = "now" if ago == 0 else f"-{ago} min"
        parts.append(f'<line x1="{x:.1f}" y1="{base}" x2="{x:.1f}" y2="{base + 3}" stroke="#888"/>')
        parts.append(
            f'<text class="tick" x="{x:.1f}" y="{base + 14}" font-size="10" text-anchor="middle">{label}</text>'
        )
    parts.append(
        f'<text class="unit" x="{left + plot_w / 2:.0f}" y="{height - 2}" font-size="10" text-anchor="middle">'
        f"time (UTC, {minutes} min buckets)</text>"
    )
    points = []
    for i, n in enumerate(counts):
        h = plot_h * n / top
        x = left + i * bar
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{base - h:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" fill="#5b8def">'
            f"<title>{n} finished, mean latency {age_text(means[i])}</title></rect>"
        )
        ly = base - plot_h * means[i] / top_latency
        points.append(f"{x + bar / 2:.1f},{ly:.1f}")
    parts.append(f'<polyline fill="none" stroke="#d9534f" stroke-width="2" points="{" ".join(points)}"/>')
    parts.append("</svg>")
    return Markup("".join(parts))


# -- the app ----------------------------------------------------------------------------------------


class Console:
    """The pages and actions; :func:`create_app` wraps it in a Starlette app."""

    def __init__(self, config: ConsoleConfig):
        self.config = config
        self.logins = LoginCookies(config.secret or secrets.token_urlsafe(32), config.session_hours)
        self.users = read_password_file(config.password_file) if config.password_file else {}
        self.env = Environment(
            loader=FileSystemLoader(str(HERE / "templates")),
            autoescape=select_autoescape(default=True, default_for_string=True),
        )
        self.env.filters["when"] = when
        self.env.filters["age"] = age_text
        self.env.filters["json"] = as_json
        self.env.globals["payload"] = self.payload

    # - rendering

    def payload(self, value: Any, download: str | None = None, expanded: bool = False) -> Markup:
        """A payload as escaped text, cut at payload_limit characters with a download link. A JSON
        document (not a plain string) is collapsed (``<details>``) under a one-line summary when it
        spans more than a few lines, so a page of them stays short (``expanded``: shown open, for
        what a person decides on)."""
        text = value if isinstance(value, str) else as_json(value)
        limit = self.config.payload_limit
        if len(text) <= limit:
            body = Markup('<pre class="payload">{}</pre>').format(text)
        else:
            link = Markup(' <a class="download" href="{}">download all ({} characters)</a>').format(download, len(text))
            body = Markup(
                '<pre class="payload truncated">{}…</pre><span class="cut">cut at {} characters.{}</span>'
            ).format(text[:limit], limit, link if download else "")
        if expanded or isinstance(value, str) or text.count("\n") < 4:
            return body
        brief = json.dumps(plain(value), sort_keys=True, ensure_ascii=False)
        brief = brief if len(brief) <= 80 else brief[:79] + "…"
        return Markup('<details class="json"><summary>{}</summary>{}</details>').format(brief, body)

    def render(self, request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        login = request.state.login
        root = request.scope.get("root_path", "")
        html = self.env.get_template(name).render(
            request=request,
            root=root,
            csrf=login.csrf if login else "",
            user=login.user if login else None,
            read_only=self.config.read_only,
            auth=self.config.auth,
            **context,
        )
        return HTMLResponse(html, status_code=status)

    # - connections

    @contextmanager
    def connect(self, login: Login) -> Iterator[psycopg.Connection[Any]]:
        conninfo = login.conninfo or self.config.database_url
        with psycopg.connect(conninfo, autocommit=True, prepare_threshold=None, row_factory=dict_row) as conn:
            set_json_loads(bounded_json_loads, conn)
            yield conn

    @staticmethod
    def rows(conn: psycopg.Connection[Any], sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        try:
            with conn.cursor(row_factory=dict_row) as cur:
                return list(cur.execute(sql, params, prepare=False).fetchall())
        except psycopg.Error as error:
            raise errors.translate(error) from error

    def identity(self, conn: psycopg.Connection[Any]) -> dict[str, Any]:
        return self.rows(conn, "select ai.calling_role() as role, ai.sees_all_owners() as operator")[0]

    # - guards

    def check_csrf(self, request: Request, form: Any) -> None:
        login = request.state.login
        sent = (form.get("csrf") if form is not None else None) or request.headers.get("x-csrf-token") or ""
        if login is None or not hmac.compare_digest(str(sent).encode(errors="replace"), login.csrf.encode()):
            raise Refused("CSRF token missing or wrong: reload the page and try again")

    def check_action(self, operator_only: bool, ident: dict[str, Any]) -> None:
        if self.config.read_only:
            raise Refused("this console is read-only: actions are disabled")
        if operator_only and not ident["operator"]:
            raise Refused("only a service role acting for nobody (an operator) may do this")


def query_string(params: dict[str, Any]) -> str:
    return urlencode({k: v for k, v in params.items() if v not in (None, "")})


def jsonb(value: Any) -> Jsonb:
    return Jsonb(value)


async def _queue_channels(conn: psycopg.AsyncConnection[Any]) -> set[str]:
    cur = await conn.execute("select ai.queue_channel(queue) from ai.queue_stats()", prepare=False)
    return {r[0] for r in await cur.fetchall()}


async def sse_stream(console: Console, login: Login, interval: float) -> AsyncIterator[str]:
    """Server-sent events: ``change`` when a queue's channel is notified (LISTEN), else ``poll``
    (the client then re-reads every ``interval`` seconds). The queues are read again every
    ``interval`` seconds (at most 15): a queue that appears after the page loaded is listened to
    from then on, and its appearance is itself a change. A tenant cannot name the channels
    (ai.queue_channel is for ai_service), and through a transaction pooler (found as the client
    finds it, ``abehind_pooler``) LISTEN hears nothing: both poll."""
    conninfo = login.conninfo or console.config.database_url
    channels: set[str] = set()
    conn: psycopg.AsyncConnection[Any] | None = None
    if console.config.listen:
        try:
            conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True, prepare_threshold=None)
            if not await abehind_pooler(conn):  # a transaction pooler would not deliver the notifications
                channels = await _queue_channels(conn)
            for channel in sorted(channels):
                await conn.execute(sql.SQL("listen {}").format(sql.Identifier(channel)), prepare=False)
        except psycopg.Error:
            channels = set()
    if not channels:
        if conn is not None:
            await conn.close()
        yield f"event: poll\ndata: {interval}\n\n"
        return
    assert conn is not None
    rescan = min(15.0, max(0.5, interval))
    try:
        yield f"event: listening\ndata: {len(channels)}\n\n"
        while True:
            got = False
            gen = conn.notifies(timeout=rescan, stop_after=1)
            async for _ in gen:
                got = True
            fresh = await _queue_channels(conn) - channels
            for channel in sorted(fresh):  # a queue that appeared meanwhile: listen to it too
                await conn.execute(sql.SQL("listen {}").format(sql.Identifier(channel)), prepare=False)
            channels |= fresh
            got = got or bool(fresh)
            yield "event: change\ndata: 1\n\n" if got else ": keep-alive\n\n"
            if got:
                await asyncio.sleep(0.5)  # coalesce a burst of enqueues into one refresh
    finally:
        await conn.close()


def sse_response(console: Console, login: Login) -> StreamingResponse:
    return StreamingResponse(
        sse_stream(console, login, console.config.poll_seconds),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store"},
    )


# The authentication methods a visitor's connection accepts: the server must ask for the password
# the visitor typed. A server that lets the role in without one (trust, peer, ident, a client
# certificate alone) is refused by libpq itself (require_auth, libpq 16 and later).
PASSWORD_METHODS = "scram-sha-256,md5,password"
# A password file that cannot exist ("/dev/null" is a directory nowhere): libpq reads no
# ~/.pgpass or PGPASSFILE for a visitor's connection.
NO_PASSFILE = f"{os.devnull}/agent-state-console-reads-no-password-file"
# Options of the console's URL that carry the console's own credentials: never a visitor's.
_CREDENTIALS = ("user", "password", "passfile", "require_auth", "sslcert", "sslkey", "sslpassword", "sslcertmode")


class LoginRefused(Exception):
    """A login the console refuses before it connects (no password): the one login message."""


def visitor_conninfo(database_url: str, user: str, password: str) -> str:
    """The connection string of a visitor of the database-credentials login: the console's URL for
    *where* (host, port, database, TLS), and for *who* exactly what the visitor typed. libpq fills
    an option from the environment (PGPASSWORD, PGSERVICE's file, ~/.pgpass) only when the string
    leaves it unset; here the role, the password (never empty), the password file (none) and the
    accepted methods (password ones only) are all set, so none of the console process's own
    credentials can log a visitor in, and a server that would let the role in without asking for
    the password (trust, peer) is refused."""
    if not password:
        raise LoginRefused("a password is needed")
    if "\x00" in user or "\x00" in password:
        raise LoginRefused("a NUL character is not allowed")
    params: dict[str, Any] = {k: v for k, v in conninfo_to_dict(database_url).items() if k not in _CREDENTIALS}
    params.update(user=user, password=password, passfile=NO_PASSFILE, require_auth=PASSWORD_METHODS)
    params.setdefault("connect_timeout", 10)
    return make_conninfo(**params)
