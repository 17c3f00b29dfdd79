"""The console served by uvicorn in a thread, and a plain HTTP visitor of it (http.client, one
keep-alive connection, the login cookie kept): for the tests that speak HTTP to the console
without a browser (test_console_login.py, test_console_hostile.py)."""

from __future__ import annotations

import http.client
import re
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import uvicorn

from agent_state.console.app import COOKIE


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    """``with Served(app) as served:`` the app on 127.0.0.1:``served.port`` until the block ends."""

    def __init__(self, app: Any):
        self.port = free_port()
        self.server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="critical", timeout_graceful_shutdown=5)
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Served:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "the console did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: str


class Visitor:
    """One browser without a browser: a keep-alive connection, the console's cookie, its CSRF token."""

    def __init__(self, port: int, prefix: str = ""):
        self.port, self.prefix = port, prefix
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.cookie = ""
        self.csrf = ""

    def close(self) -> None:
        self.conn.close()

    def request(
        self, method: str, target: str, body: bytes | None = None, *, stream: bool = False,
        headers: dict[str, str] | None = None,
    ) -> Answer:  # fmt: skip
        """``target`` is sent as written (raw percent-encoding, bad UTF-8 and all); ``headers``
        are more headers (latin-1, as HTTP/1.1 sends them)."""
        headers = {**({"Cookie": f"{COOKIE}={self.cookie}"} if self.cookie else {}), **(headers or {})}
        if body is not None:
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        self.conn.putrequest(method, self.prefix + target, skip_accept_encoding=True)
        for name, value in {**headers, "Content-Length": str(len(body or b""))}.items():
            self.conn.putheader(name, value.encode("latin-1", errors="replace"))
        self.conn.endheaders(body)
        response = self.conn.getresponse()
        found = {k.lower(): v for k, v in response.getheaders()}
        if stream:  # a server-sent events stream: the head only, then a new connection
            self.conn.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            return Answer(response.status, found, "")
        text = response.read().decode(errors="replace")
        cookie = re.search(rf"{COOKIE}=([^;]*)", found.get("set-cookie", ""))
        if cookie:
            self.cookie = cookie.group(1)
        token = re.search(r'name="csrf" value="([^"]*)"', text)
        if token:
            self.csrf = token.group(1)
        return Answer(response.status, found, text)

    def get(self, target: str) -> Answer:
        return self.request("GET", target)

    def post(self, target: str, form: dict[str, str] | bytes) -> Answer:
        body = form if isinstance(form, bytes) else urlencode(form).encode()
        return self.request("POST", target, body)

    def log_in(self, user: str, password: str) -> Answer:
        self.get("/login")
        return self.post("/login", {"csrf": self.csrf, "user": user, "password": password})
