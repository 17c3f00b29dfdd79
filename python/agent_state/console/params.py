"""Every parameter of every console route, parsed and bounded before any SQL (docs/console.md).

Each endpoint declares what it reads with :func:`accepts`: its path parameters, its query
parameters and, for a POST, its form fields, each with a :class:`Param` that says what a value may
be (a bounded text without control characters, an integer in range, one of a few words, an age, a
metadata filter, JSON, a path of this console). The wrapper parses them all before the page runs and
answers a bad one with 400 and a message naming the parameter; the page reads the parsed values
from ``request.state.params``. A route that declares nothing cannot be added unnoticed:
``tests/python/test_console_hostile.py`` reads these declarations from the app's routes and sends
hostile values to each one.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from functools import wraps
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

BIGINT_MAX = 2**63 - 1
# Any C0 control character, DEL, or a C1 control character; NUL among them (no Postgres text holds it).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_AGE = re.compile(r"(\d{1,19})([smhd])")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_AGE = timedelta(days=36500)  # a hundred years: the longest age a filter may name
MAX_FORM_BYTES = 1_000_000  # a form over this is refused before it is parsed


class BadParameter(ValueError):
    """A parameter the console refuses: 400 with this message (it never echoes a long value)."""


def _shown(value: str) -> str:
    """A value as a message may quote it: printable, at most 40 characters."""
    cut = value[:40] + ("…" if len(value) > 40 else "")
    return repr(_CONTROL.sub("?", cut))


@dataclass(frozen=True)
class Param:
    """What one parameter may hold. ``kind``: ``text`` (one line of at most ``max_length``
    characters, no control character), ``id`` (an id as the SQL API takes it: at most
    ``max_length`` characters, anything but NUL, so the console opens every run a tenant could
    make), ``lines`` (text that may hold newlines and tabs), ``int`` (decimal digits,
    ``low`` to ``high``), ``choice`` (one of ``choices``; ``upper`` compares upper-cased),
    ``flag`` (empty, 0, 1, true, false), ``age`` (a number and a unit: 30m, 2h, 7d), ``meta``
    (``key=value``, ``a.b=value``), ``json`` (a JSON document, parsed), ``path`` (a path of this
    console, for ``next``), ``secret`` (a password) and ``document`` (a text the page parses itself,
    such as JSON it reads for one action only): anything but NUL. ``required``: empty is refused."""

    kind: str = "text"
    max_length: int = 255
    choices: tuple[str, ...] = ()
    low: int = 0
    high: int = BIGINT_MAX
    required: bool = False
    upper: bool = False

    def parse(self, name: str, raw: str | None) -> Any:
        value = "" if raw is None else raw
        if len(value) > self.max_length and self.kind != "int":  # a number too long: the number's message
            raise BadParameter(f"{name} is longer than {self.max_length} characters")
        if "\x00" in value:
            raise BadParameter(f"{name} holds a NUL character")
        if value == "":
            if self.required:
                raise BadParameter(f"{name} is needed")
            return False if self.kind == "flag" else None
        if self.kind in ("id", "secret", "document"):
            return value
        if self.kind == "json":  # json.loads refuses a raw control character but whitespace itself
            try:
                return json.loads(value)
            except (ValueError, RecursionError) as error:
                raise BadParameter(f"{name} is not JSON: {str(error)[:80]}") from None
        if _CONTROL_BUT_LINES.search(value) if self.kind == "lines" else _CONTROL.search(value):
            raise BadParameter(f"{name} holds a control character")
        if self.kind in ("text", "lines"):
            return value
        if self.kind == "int":
            if not value.isascii() or not value.isdigit() or len(value) > 19 or not self.low <= int(value) <= self.high:
                raise BadParameter(f"{name} must be a whole number from {self.low} to {self.high}, not {_shown(value)}")
            return int(value)
        if self.kind == "choice":
            word = value.upper() if self.upper else value
            if word not in self.choices:
                raise BadParameter(f"{name} must be one of {', '.join(self.choices)}, not {_shown(value)}")
            return word
        if self.kind == "flag":
            if value.lower() not in ("0", "1", "true", "false", "yes", "no", "on", "off"):
                raise BadParameter(f"{name} must be 1 or 0, not {_shown(value)}")
            return value.lower() in ("1", "true", "yes", "on")
        if self.kind == "age":
            return parse_age(name, value)
        if self.kind == "meta":
            return parse_meta(name, value)
        if self.kind == "path":
            if not value.startswith("/") or value.startswith("//") or "\\" in value:
                raise BadParameter(f"{name} must be a path of this console (starting with one /)")
            return value
        raise AssertionError(f"unknown parameter kind {self.kind}")


def parse_age(name: str, text: str) -> timedelta:
    """``30m``, ``2h``, ``7d`` (spaces around allowed): at most a hundred years."""
    m = _AGE.fullmatch(text.strip())
    if m is None:
        raise BadParameter(f"{name} {_shown(text)} is not a number and a unit (s, m, h, d), e.g. 2h")
    seconds = int(m.group(1)) * _SECONDS[m.group(2)]
    if seconds > MAX_AGE.total_seconds():
        raise BadParameter(f"{name} is more than {MAX_AGE.days} days")
    return timedelta(seconds=seconds)


def parse_meta(name: str, text: str) -> tuple[list[str], str]:
    """``key=value`` or ``a.b=value``: a path into the session config or the job payload and the
    value it must hold (``config #>> path = value``, in ai.find_sessions and ai.find_jobs)."""
    key, sep, value = text.partition("=")
    path = [label.strip() for label in key.split(".")]
    if not sep or not key.strip() or any(not label for label in path):
        raise BadParameter(f"{name} {_shown(text)} is not key=value (a.b=value for a nested key)")
    if len(path) > 20:
        raise BadParameter(f"{name} names a key deeper than 20 levels")
    return path, value.strip()


@dataclass(frozen=True)
class Accepts:
    """What one endpoint reads: path parameters, query parameters, form fields."""

    path: Mapping[str, Param]
    query: Mapping[str, Param]
    form: Mapping[str, Param]


def parse(spec: Accepts, request: Request, form: Mapping[str, Any] | None) -> dict[str, Any]:
    """Every declared parameter's value, parsed (BadParameter for the first bad one). A name sent
    twice is refused; names not declared are ignored (nothing reads them)."""
    found: dict[str, Any] = {}
    for name, param in spec.path.items():
        found[name] = param.parse(name, request.path_params.get(name))
    for name, param in spec.query.items():
        values = request.query_params.getlist(name)
        if len(values) > 1:
            raise BadParameter(f"{name} is given {len(values)} times")
        found[name] = param.parse(name, values[0] if values else None)
    if spec.form:
        assert form is not None
        for name, param in spec.form.items():
            got = form.getlist(name) if hasattr(form, "getlist") else [form.get(name)]
            values = [v for v in got if v is not None]
            if len(values) > 1:
                raise BadParameter(f"{name} is given {len(values)} times")
            if values and not isinstance(values[0], str):
                raise BadParameter(f"{name} must be text, not a file")
            found[name] = param.parse(name, values[0] if values else None)
    return found


Endpoint = Callable[[Request], Any]


def accepts(
    *, path: Mapping[str, Param] | None = None, query: Mapping[str, Param] | None = None,
    form: Mapping[str, Param] | None = None,
) -> Callable[[Endpoint], Callable[[Request], Awaitable[Response]]]:  # fmt: skip
    """Declares an endpoint's parameters; the endpoint runs only once all of them parse, with
    ``request.state.params`` holding the values (and ``request.state.form`` the form)."""
    spec = Accepts(path or {}, query or {}, form or {})

    def wrap(endpoint: Endpoint) -> Callable[[Request], Awaitable[Response]]:
        is_async = inspect.iscoroutinefunction(endpoint)

        @wraps(endpoint)
        async def run(request: Request) -> Response:
            def bad_request(message: str) -> Response:
                page: Response = request.state.console.render(
                    request, "error.html", 400, title="Bad request", message=message
                )
                return page

            try:
                form_data = None
                if spec.form:
                    length = request.headers.get("content-length") or ""
                    if length.isdigit() and int(length) > MAX_FORM_BYTES:
                        raise BadParameter(f"the form is larger than {MAX_FORM_BYTES} bytes")
                    form_data = await request.form(max_files=0, max_fields=100)
                request.state.form = form_data
                request.state.params = parse(spec, request, form_data)
            except BadParameter as bad:
                return bad_request(str(bad))
            except Exception as error:  # a form Starlette cannot read (bad encoding, too many fields)
                return bad_request(f"the request cannot be read: {type(error).__name__}")
            if is_async:
                response: Response = await endpoint(request)
            else:
                response = await run_in_threadpool(endpoint, request)
            return response

        run.accepts = spec  # type: ignore[attr-defined]
        return run

    return wrap


def accepted(endpoint: Any) -> Accepts | None:
    """An endpoint's declaration (None for an endpoint that declares nothing)."""
    spec = getattr(endpoint, "accepts", None)
    return spec if isinstance(spec, Accepts) else None
