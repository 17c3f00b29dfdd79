"""The operator's command line: ``agent-state SUBCOMMAND ...`` (docs/cli.md).

Every subcommand is one SQL function of the ``ai`` schema underneath (``sessions`` is
``ai.list_sessions``, ``show`` is ``ai.session_timeline_newest``, ...), so what the command line shows is
what a tenant or a service may see through the SQL API, row level security included.

- The database is ``--database-url``, else ``$DATABASE_URL``, else libpq's ``PG*`` variables.
- ``--json`` on every read command prints one JSON document on stdout instead of a table.
- An error is one line on stderr, never a traceback (``AGENT_STATE_DEBUG=1`` shows it).
- Exit codes: 0 success, 1 a verdict that failed (``replay`` FAIL, ``status`` of a database without
  the schema, ``retry``/``cancel``/``release`` of a job in a state the action does not apply to),
  2 a usage, connection or database error (an unknown thread, a refused call, ...); a bare
  ``agent-state`` prints its usage on stderr and exits 2.
- Every human-readable output goes through :func:`terminal_safe`: text an agent wrote cannot send
  the terminal control sequences (``ESC ]0;...BEL`` retitles it, ``ESC [2J`` clears it).
- A reader that goes away early (``agent-state show X | head``) ends nothing with an error: the
  rest of the output is dropped and the command finishes its work, with that work's exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import json
import os
import re
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

import psycopg
from psycopg.rows import dict_row

from . import errors
from .client import Client
from .models import Approval, Job, JobKeyStatus, QueueStats, Session, from_row
from .run_story import attempt_story

EXIT_OK = 0
EXIT_VERDICT = 1
EXIT_ERROR = 2

NOT_DEPLOYED = "schema ai is not deployed: run `agent-state deploy` or `sqitch deploy`"

Conn = psycopg.Connection[Any]


class CliError(Exception):
    """A failure reported as one line on stderr with an exit code (2 unless told)."""

    def __init__(self, message: str, code: int = EXIT_ERROR):
        super().__init__(message)
        self.code = code


# -- helpers: one line per error, SQL calls, output ----------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _describe(error: psycopg.Error) -> str:
    """One line for a psycopg error, naming the fix where there is one."""
    sqlstate = error.sqlstate or ""
    primary = error.diag.message_primary if sqlstate else None
    text = _one_line(primary or str(error))
    if sqlstate == "3F000" and '"ai"' in text:  # invalid_schema_name
        return NOT_DEPLOYED
    if sqlstate == "42883" and "ai." in text:  # undefined_function: an older schema
        return f"{text}: the database's schema is older than this agent-state (see `agent-state status`)"
    return text


def _translated(error: psycopg.Error) -> Exception:
    translated = errors.translate(error)
    return error if translated is error else translated


def _rows(conn: Conn, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """One SQL function call, its rows as dicts; our SQLSTATEs become agent_state exceptions."""
    try:
        with conn.cursor(row_factory=dict_row) as cur:
            cur.execute(sql, params)
            return cur.fetchall() if cur.description is not None else []
    except psycopg.Error as error:
        raise _translated(error) from error


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, memoryview)):
        return bytes(value).hex()
    return value


# C0 controls but tab and newline, DEL, and the C1 controls (U+0080 to U+009F: U+009B is a CSI on
# terminals that read 8-bit controls): what a terminal acts on instead of showing.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` as a terminal may show it: every control character but newline and tab written as
    an escape (ESC as ``\\x1b``, BEL as ``\\x07``), so that text an agent wrote (a message, an
    error, a payload, a thread id) cannot retitle the operator's terminal (``ESC ]0;...BEL``),
    clear it (``ESC [2J``) or move its cursor. Every human-readable line of the CLI goes through it
    (main() wraps stdout in :class:`TerminalSafeOutput`; errors in ``_fail``)."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class TerminalSafeOutput:
    """A text stream that writes through :func:`terminal_safe` to another, and that a reader
    going away early (EPIPE: ``| head``) does not stop: the rest is dropped (the file descriptor
    points at /dev/null from then on, so the interpreter's last flush is quiet too)."""

    def __init__(self, stream: Any):
        self.stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self.stream.write(terminal_safe(text))
            except BrokenPipeError:
                self._drop()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._drop()

    def _drop(self) -> None:
        self.gone = True
        with contextlib.suppress(OSError, ValueError, AttributeError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
            os.close(devnull)

    def isatty(self) -> bool:
        return bool(self.stream.isatty())

    def fileno(self) -> int:
        return int(self.stream.fileno())

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _json_text(value: Any) -> str:
    """One JSON document: json escapes the C0 controls; the C1 ones and DEL (allowed raw in JSON)
    are escaped too (``\\u009b``), so the document is as safe on a terminal as the text output."""
    text = json.dumps(_jsonable(value), indent=2, ensure_ascii=False)
    return re.sub("[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", text)


def _print_json(value: Any) -> None:
    print(_json_text(value))


def _when(value: datetime | None) -> str:
    return "" if value is None else value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _age(value: timedelta | None) -> str:
    if value is None:
        return ""
    seconds = int(value.total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = [f"{days}d" if days else "", f"{hours}h" if hours else "", f"{minutes}m" if minutes else ""]
    return "".join(parts) + (f"{seconds}s" if seconds or not any(parts) else "")


def _brief(value: Any, width: int = 60) -> str:
    """A JSON value on one line, cut to width characters."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(_jsonable(value), ensure_ascii=False, sort_keys=True)
    text = _one_line(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> None:
    """Plain columns, the last one unpadded; '(none)' for no rows."""
    if not rows:
        print("(none)")
        return
    cells = [[str(c) for c in headers]] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for row in cells:
        padded = [c.ljust(widths[i]) if i < len(row) - 1 else c for i, c in enumerate(row)]
        print("  ".join(padded).rstrip())


_DURATION = re.compile(r"(\d+)([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


MAX_DURATION = timedelta(days=36500)  # a hundred years: the longest duration an option takes


def _shown(text: str) -> str:
    """An argument as an error message quotes it: at most 40 characters, non-UTF-8 bytes escaped."""
    return repr(text[:40] + ("…" if len(text) > 40 else ""))


def duration(text: str) -> timedelta:
    """``90d``, ``12h``, ``30m``, ``45s``, ``2w`` or a sum of them (``1d12h``), at most 36,500 days."""
    parts = _DURATION.findall(text.strip())
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        raise argparse.ArgumentTypeError(f"{_shown(text)} is not a duration like 90d, 12h, 30m, 45s or 1d12h")
    total = timedelta()
    try:
        for number, unit in parts:
            if len(number) > 12:
                raise OverflowError
            total += timedelta(**{_UNITS[unit]: int(number)})
    except OverflowError:
        total = MAX_DURATION * 2
    if total > MAX_DURATION:
        raise argparse.ArgumentTypeError(f"{_shown(text)} is longer than {MAX_DURATION.days} days")
    return total


def json_document(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error.msg} at character {error.pos}") from error
    except RecursionError:
        raise argparse.ArgumentTypeError("not JSON this program reads: nested too deep") from None


def whole_number(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a decimal whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        digits = text.strip()
        body = digits[1:] if digits[:1] in "+-" else digits
        if not body.isascii() or not body.isdigit():
            raise ValueError(text)  # argparse: "invalid int value: 'many'"
        if len(body) > 19 or not low <= int(digits) <= high:
            raise argparse.ArgumentTypeError(f"{_shown(text)} is not a whole number from {low} to {high}")
        return int(digits)

    parse.__name__ = "int"
    return parse


def _seconds(text: str, *, zero: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not ((value >= 0 if zero else value > 0) and value <= 86400):  # also NaN and infinities
        bound = "from 0 to 86400" if zero else "above 0, at most 86400"
        raise argparse.ArgumentTypeError(f"{_shown(text)} is not a number of seconds {bound}")
    return value


def seconds(text: str) -> float:
    """An argparse type: a number of seconds, more than 0 and at most a day."""
    return _seconds(text, zero=False)


def seconds_or_zero(text: str) -> float:
    """An argparse type: a threshold in seconds, 0 (anything) to a day."""
    return _seconds(text, zero=True)


def text_argument(text: str) -> str:
    """An argparse type for every text argument: UTF-8 (the database's encoding) without NUL."""
    try:
        text.encode()
    except UnicodeEncodeError:  # bytes of the command line that are not UTF-8 (surrogate escapes)
        raise argparse.ArgumentTypeError(f"{_shown(text)} is not UTF-8 text") from None
    return text


# Every whole-number option's range (the default: a bigint; the SQL API bounds it further, e.g. a
# row limit 1 to 10,000, with its own message); every float one is seconds; every text one is
# text_argument. _bounded applies them to the whole parser.
_BIGINT = (-(2**63), 2**63 - 1)
_WHOLE_NUMBERS = {"port": (1, 65535), "concurrency": (1, 10_000), "width": (1, 1_000_000)}


def _bounded(root: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Gives every argument of every subcommand a type that bounds it (parsed before any SQL)."""
    for action in root._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _bounded(sub)
        elif action.nargs != 0 and action.type is int:
            action.type = whole_number(*_WHOLE_NUMBERS.get(action.dest, _BIGINT))
        elif action.nargs != 0 and action.type is float:
            action.type = seconds
        elif action.nargs != 0 and action.type is None:
            action.type = text_argument
    return root


def _load(target: str, option: str) -> Any:
    """The object ``module:attr`` names (attr may be dotted), imported from the current directory too."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise CliError(f"{option} takes module:attr, not {target!r}")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: the project's own modules are importable
    try:
        value: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise CliError(f"{option} {target}: cannot import {module_name!r} ({error})") from error
    except Exception as error:  # the module raised while being imported
        raise CliError(
            f"{option} {target}: importing {module_name!r} failed: {type(error).__name__}: {error}"
        ) from error
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise CliError(f"{option} {target}: {module_name!r} has no attribute {attribute!r}")
        value = getattr(value, part)
    return value


# -- progress -----------------------------------------------------------------------------------


@contextlib.contextmanager
def progress(total: int, label: str, *, enabled: bool = True, stream: Any = None) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr (rich's when installed and stderr is a terminal, else plain), as
    ``advance(n)``. Plain output is a bar redrawn in place on a terminal, one line per step elsewhere."""
    out = sys.stderr if stream is None else stream
    done = 0
    if not enabled:
        yield lambda n: None
        return
    rich_progress: Any = None
    if out.isatty():
        with contextlib.suppress(ImportError):
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            rich_progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(file=out),
            )
    if rich_progress is not None:
        with rich_progress:
            task = rich_progress.add_task(label, total=total or None)
            yield lambda n: rich_progress.advance(task, n)
        return

    def draw(n: int) -> None:
        nonlocal done
        done += n
        of = max(total, done)  # more may have become due since the count
        share = done / of if of else 1.0
        if out.isatty():
            out.write(f"\r{label} [{'#' * int(30 * share):<30}] {done}/{of}")
        else:
            out.write(f"{label}: {done}/{of} ({share:.0%})\n")
        out.flush()

    yield draw
    if out.isatty() and done:
        out.write("\n")


# -- the subcommands ----------------------------------------------------------------------------


# Transactions of this database that hold a lock on a table of ai or ai_archive and began longer
# ago than a lease: a worker stuck inside a fenced transaction, or a session left idle in one
# (docs/operations.md). Another role's xact_start is visible with pg_read_all_stats (pg_monitor);
# without it, such a holder is counted as hidden.
_LONG_LOCKS = """
select a.pid, a.usename::text as role, a.application_name, a.state,
       pg_catalog.clock_timestamp() - a.xact_start as held_for,
       pg_catalog.array_agg(distinct l.relation::regclass::text order by l.relation::regclass::text) as tables
from pg_catalog.pg_locks l
join pg_catalog.pg_stat_activity a on a.pid = l.pid
join pg_catalog.pg_class c on c.oid = l.relation
where l.granted and l.locktype = 'relation' and a.datname = pg_catalog.current_database()
  and c.relnamespace::regnamespace::text in ('ai', 'ai_archive') and a.pid <> pg_catalog.pg_backend_pid()
  and a.xact_start < pg_catalog.clock_timestamp() - %(lease)s::interval
group by a.pid, a.usename, a.application_name, a.state, a.xact_start
order by a.xact_start
"""
_HIDDEN_LOCKS = """
select count(distinct l.pid)
from pg_catalog.pg_locks l
join pg_catalog.pg_stat_activity a on a.pid = l.pid
join pg_catalog.pg_class c on c.oid = l.relation
where l.granted and l.locktype = 'relation' and a.datname = pg_catalog.current_database()
  and c.relnamespace::regnamespace::text in ('ai', 'ai_archive') and a.xact_start is null
  and a.pid <> pg_catalog.pg_backend_pid()
"""


def _fleet(conn: Conn, lease: timedelta) -> dict[str, Any]:
    """What `status` reports beyond the schema: the workers alive (``ai.list_workers``, for
    ai_service: None for a tenant), the fill of the cluster's notification queue
    (``pg_notification_queue_usage()``, 0 to 1: at 1 every NOTIFY, so every enqueue, fails), the
    age of the oldest due PENDING job per queue (``ai.queue_stats``), and the transactions holding
    locks on the schema longer than ``lease``."""
    found: dict[str, Any] = {}
    with conn.cursor() as cur:
        row = cur.execute("select pg_catalog.pg_notification_queue_usage()").fetchone()
        found["notification_queue_usage"] = float(row[0]) if row else 0.0
    try:
        found["workers"] = _rows(conn, "select * from ai.list_workers()")
    except errors.AgentStateError:
        found["workers"] = None
    except psycopg.Error:
        found["workers"] = None
    stats = [from_row(QueueStats, r) for r in _rows(conn, "select * from ai.queue_stats()")]
    found["oldest_due_pending"] = {q.queue: q.oldest_due_age for q in stats if q.due}
    # the keys (fair shares and limits), the largest backlogs first; a tenant's own keys only
    keys = [from_row(JobKeyStatus, r) for r in _rows(conn, "select * from ai.job_key_status(max_rows => 1000)")]
    found["keys"] = sorted(keys, key=lambda k: (-k.backlog, -k.in_flight, k.queue, k.key))
    found["long_lock_holders"] = _rows(conn, _LONG_LOCKS, {"lease": lease})  # type: ignore[arg-type]
    with conn.cursor() as cur:
        row = cur.execute(_HIDDEN_LOCKS).fetchone()
        found["hidden_lock_holders"] = int(row[0]) if row else 0
    return found


def cmd_status(args: argparse.Namespace, conn: Conn) -> int:
    """Is the schema deployed, at which version, with which changes (``agent_state.schema.status``),
    against this package's; and, when it is usable, the fleet: workers alive, the notification
    queue's fill, the oldest due job per queue, long lock holders. Exit 1 when the schema is absent
    or lacks changes this package needs."""
    from . import schema

    state = schema.status(conn)
    wanted = schema.bundle_version()
    lease = timedelta(seconds=args.lease)
    fleet = _fleet(conn, lease) if state.deployed and state.compatible else None
    if args.json:
        _print_json({**_jsonable(state), "package": wanted, "pending": state.missing, "fleet": _jsonable(fleet)})
    elif not state.deployed:
        print(NOT_DEPLOYED)
    else:
        how = {"sqitch": "deployed with sqitch", "bundle": "deployed from the bundle"}.get(
            state.source or "", "deployed"
        )
        listed = "" if args.verbose or not state.changes else " (--verbose lists them)"
        print(
            f"schema ai is {how}: version {state.version or 'unknown'}, {_count(len(state.changes), 'change')}{listed}"
        )
        if args.verbose:
            for change in state.changes:
                print(f"  {change}")
        print(f"this agent-state needs up to change {wanted}")
        if state.missing:
            print(f"pending upgrades (this agent-state needs them): {', '.join(state.missing)}: see docs/upgrading.md")
        else:
            print("pending upgrades: none")
        if fleet is not None:
            _print_fleet(fleet, lease, None if args.verbose else STATUS_LINES)
    return EXIT_OK if state.deployed and state.compatible else EXIT_VERDICT


#: The most workers, queues and lock holders `status` lists without --verbose (one screen).
STATUS_LINES = 5


def _shown_first(items: Sequence[Any], most: int | None) -> tuple[Sequence[Any], str]:
    """The first ``most`` items (all when None) and a line saying how many more there are."""
    if most is None or len(items) <= most:
        return items, ""
    return items[:most], f"  and {len(items) - most} more (--verbose lists them)"


def _print_fleet(fleet: dict[str, Any], lease: timedelta, most: int | None = None) -> None:
    workers = fleet["workers"]
    if workers is None:
        print("workers alive: not visible to this role (ai.list_workers is for ai_service)")
    else:
        alive = [w for w in workers if w["state"] == "alive"]
        others = {state: sum(1 for w in workers if w["state"] == state) for state in ("stale", "stopped")}
        more = ", ".join(f"{n} {state}" for state, n in others.items() if n)
        print(f"workers alive: {len(alive)}" + (f" ({more}: agent-state workers)" if more else ""))
        shown, rest = _shown_first(alive, most)
        for w in shown:
            print(f"  {w['worker']}: {_count(w['jobs'], 'job')}, last heard {_when(w['heard_at'])}")
        if rest:
            print(rest)
    print(f"notification queue: {fleet['notification_queue_usage'] * 100:.1f} % full")
    due = sorted(fleet["oldest_due_pending"].items(), key=lambda qa: qa[1] or timedelta(), reverse=True)
    shown_due, rest = _shown_first(due, most)
    print("oldest due PENDING job per queue: " + (", ".join(f"{q} {_age(a)}" for q, a in shown_due) or "none")
          + (f", and {len(due) - len(shown_due)} more queues" if rest else ""))  # fmt: skip
    keys = fleet.get("keys") or []
    shown_keys, rest = _shown_first(keys, most)
    print("keys (in flight/limit, tokens, backlog), largest backlog first:" + ("" if keys else " none"))
    for k in shown_keys:
        print(f"  {_key_line(k)}")
    if rest:
        print(rest)
    holders = fleet["long_lock_holders"]
    print(f"transactions holding locks on ai longer than a lease ({_age(lease)}): {len(holders) or 'none'}")
    shown_holders, rest = _shown_first(holders, most)
    for h in shown_holders:
        print(f"  pid {h['pid']} ({h['role']}, {h['application_name'] or '-'}, {h['state']}) for {_age(h['held_for'])}:"
              f" {', '.join(h['tables'])}")  # fmt: skip
    if rest:
        print(rest)
    if fleet["hidden_lock_holders"]:
        print(
            f"  and {fleet['hidden_lock_holders']} of other roles whose age this role may not read (grant pg_monitor)"
        )


def cmd_deploy(args: argparse.Namespace, conn: Conn) -> int:
    """Deploys the bundled schema into a database that has none (``agent_state.schema.deploy``);
    a database that already holds it is left as it is. Connected as a superuser, it deploys as
    the owner role ``agent_state_owner`` (made when missing) and says so in one line. On a Citus
    coordinator it then distributes the schema (``ai.distribute()``) and says so in one line."""
    from . import schema

    before = schema.status(conn)
    state = schema.deploy(conn)  # SchemaError (one line) when the schema is too old or the role may not
    if args.json:
        _print_json({"deployed_now": not before.deployed, **_jsonable(state)})
    elif before.deployed:
        if state.note:  # a Citus coordinator: distributed now (ai.distribute())
            print(f"schema ai is already deployed (version {state.version or 'unknown'})")
            print(state.note)
        else:
            print(f"schema ai is already deployed (version {state.version or 'unknown'}): nothing to do")
    else:
        print(f"deployed schema ai version {state.version} ({_count(len(state.changes), 'change')}) from the bundle")
        if state.note:  # a superuser's connection: the owner role it deployed as
            print(state.note)
    return EXIT_OK


def _run_statuses(conn: Conn, thread_ids: Sequence[str]) -> dict[str, str]:
    """Each listed thread's run status from its jobs, in one read (``ai.thread_run_status``)."""
    rows = _rows(conn, "select thread_id, run_status from ai.thread_run_status(%s)", (list(thread_ids),))
    return {r["thread_id"]: r["run_status"] for r in rows}


def cmd_sessions(args: argparse.Namespace, conn: Conn) -> int:
    """``ai.list_sessions``: newest first, by status and/or owner, with each thread's run status
    (``ai.thread_run_status``: running, waiting, queued, completed, failed, cancelled; - for none)."""
    rows = _rows(
        conn, "select * from ai.list_sessions(%s, %s, %s, %s)", (args.status, args.owner, args.limit, args.before)
    )
    sessions = [from_row(Session, r) for r in rows]
    runs = _run_statuses(conn, [s.thread_id for s in sessions])
    if args.json:
        _print_json([{**_jsonable(s), "run_status": runs.get(s.thread_id)} for s in sessions])
        return EXIT_OK
    _table(
        [
            (s.thread_id, s.owner, runs.get(s.thread_id, "-"), s.status, s.last_seq, _when(s.created_at),
             _when(s.updated_at))
            for s in sessions
        ],
        ("THREAD", "OWNER", "RUN", "SESSION", "MESSAGES", "CREATED", "UPDATED"),
    )  # fmt: skip
    return EXIT_OK


def timeline_cursor(text: str) -> tuple[datetime, str, str]:
    """``show --before``: the first row's ``TIME,ITEM,REF`` of the page after (as ``show`` prints
    it under the table): an ISO time with its zone, an item, a ref (the ref may hold commas)."""
    at, _, rest = text.partition(",")
    item, _, ref = rest.partition(",")
    try:
        when = datetime.fromisoformat(at)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not TIME,ITEM,REF (an ISO time with its zone first): {text!r}") from None
    if when.tzinfo is None or item not in ("job", "message", "checkpoint", "event", "side_effect") or not ref:
        raise argparse.ArgumentTypeError(f"not TIME,ITEM,REF (as show prints it under its table): {text!r}")
    return when, item, ref


def _attempt_lines(conn: Conn, thread: str) -> list[str]:
    """The thread's jobs, each with its attempts as lines of the story (agent_state.run_story)."""
    lines = []
    for job in _rows(conn, "select * from ai.list_jobs(null, null, %s, %s)", (thread, 100)):
        attempts = _rows(conn, "select * from ai.job_attempts(%s)", (job["job_id"],))
        lines.append(
            f"job {job['job_id']} ({job['queue']}): {job['status']}, attempts {job['attempts']}/{job['max_attempts']}"
        )
        for a in attempt_story(job, attempts):
            counted = f"attempt {a['attempt']} of {a['max_attempts']}" if a["counted"] else "not counted"
            text = a["text"] + (f": {_one_line(a['error'])}" if a["error"] else "")
            lines.append(f"  claim {a['claim']}  {counted}  {a['worker']}  claimed {_when(a['claimed_at'])}  {text}")
    return lines


def cmd_show(args: argparse.Namespace, conn: Conn) -> int:
    """``ai.session_timeline_newest``: a thread's newest items (jobs, messages, checkpoints, events
    and side effects), printed oldest first so the newest is last; ``--before`` pages to older
    ones; then each job's attempts."""
    at, item, ref = args.before or (None, None, None)
    rows = _rows(
        conn, "select * from ai.session_timeline_newest(%s, %s, %s, %s, %s)", (args.thread, args.limit, at, item, ref)
    )
    rows.reverse()
    if args.json:
        _print_json(rows)
        return EXIT_OK
    total = _rows(conn, "select ai.session_timeline_total(%s) as n", (args.thread,))[0]["n"]
    skipped = args.skip if args.before else 0
    if rows:
        first, last = skipped + 1, skipped + len(rows)
        print(f"thread {args.thread}: items {first:,} to {last:,} of {total:,}, counted from the newest (newest last)")
    else:
        print(f"thread {args.thread}: no items {'before the cursor' if args.before else ''} ({total:,} in all)")
    lines = []
    for r in rows:
        detail = r["detail"]
        if r["item"] == "message":
            detail = detail.get("content")
        elif r["item"] == "checkpoint":
            parent = detail.get("parent_checkpoint_id")
            ns = detail.get("checkpoint_ns")
            step = (detail.get("metadata") or {}).get("step")
            detail = " ".join(
                p
                for p in (
                    f"ns={ns}" if ns else "",
                    f"step={step}" if step is not None else "",
                    f"parent={parent}" if parent else "root",
                )
                if p
            )
        elif r["item"] == "job":
            detail = {k: v for k, v in detail.items() if v is not None}
        lines.append((_when(r["created_at"]), r["item"], r["ref"], r["label"], _brief(detail, args.width)))
    _table(lines, ("TIME", "ITEM", "REF", "LABEL", "DETAIL"))
    if rows and skipped + len(rows) < total and len(rows) == args.limit:
        oldest = rows[0]
        cursor = f"{oldest['created_at'].isoformat()},{oldest['item']},{oldest['ref']}"
        print(
            f"older: agent-state show {shlex.quote(args.thread)} --before {shlex.quote(cursor)}"
            f" --skip {skipped + len(rows)}"
        )
    story = _attempt_lines(conn, args.thread)
    if story:
        print()
        print("\n".join(story))
    return EXIT_OK


def _tree_lines(nodes: list[dict[str, Any]]) -> list[str]:
    """Checkpoints drawn as a tree (children under their parent, oldest first), iteratively."""
    ids = {n["checkpoint_id"] for n in nodes}
    children: dict[str | None, list[dict[str, Any]]] = {}
    for node in sorted(nodes, key=lambda n: n["checkpoint_id"]):
        parent = node["parent_checkpoint_id"] if node["parent_checkpoint_id"] in ids else None
        children.setdefault(parent, []).append(node)

    def label(node: dict[str, Any]) -> str:
        meta = node.get("metadata") or {}
        bits = [node["checkpoint_id"]]
        if meta.get("source"):
            bits.append(str(meta["source"]))
        if meta.get("step") is not None:
            bits.append(f"step {meta['step']}")
        bits.append(_when(node["created_at"]))
        parent = node["parent_checkpoint_id"]
        if parent and parent not in ids:
            bits.append(f"(parent {parent} not shown)")
        if node.get("is_current"):
            bits.append("<- current")
        return "  ".join(bits)

    lines: list[str] = []
    # (node, prefix for its children, its own connector)
    stack: list[tuple[dict[str, Any], str, str]] = [(n, "", "") for n in reversed(children.get(None, []))]
    while stack:
        node, prefix, connector = stack.pop()
        lines.append(prefix + connector + label(node))
        kids = children.get(node["checkpoint_id"], [])
        child_prefix = prefix + ("" if not connector else ("    " if connector == "└── " else "│   "))
        for i, kid in reversed(list(enumerate(kids))):
            stack.append((kid, child_prefix, "└── " if i == len(kids) - 1 else "├── "))
    return lines


def cmd_lineage(args: argparse.Namespace, conn: Conn) -> int:
    """``ai.checkpoint_tree`` (the whole thread) or ``ai.checkpoint_lineage`` (below one checkpoint)."""
    if args.checkpoint is None:
        nodes = _rows(conn, "select * from ai.checkpoint_tree(%s, %s, %s)", (args.thread, args.namespace, args.limit))
    else:
        nodes = _rows(
            conn,
            "select * from ai.checkpoint_lineage(%s, %s, %s, 'descendants')",
            (args.thread, args.checkpoint, args.namespace),
        )
    if args.json:
        _print_json(nodes)
        return EXIT_OK
    if not nodes:
        print(
            f"thread {args.thread} has no checkpoints" + (f" in namespace {args.namespace!r}" if args.namespace else "")
        )
        return EXIT_OK
    branches = sum(1 for n in nodes if sum(1 for m in nodes if m["parent_checkpoint_id"] == n["checkpoint_id"]) > 1)
    print(f"thread {args.thread}: {len(nodes)} checkpoints, {branches} branching")
    for line in _tree_lines(nodes):
        print(line)
    return EXIT_OK


def cmd_jobs(args: argparse.Namespace, conn: Conn) -> int:
    """``ai.list_jobs``: newest first, by queue, status and/or thread."""
    status = args.status.upper() if args.status else None
    rows = _rows(
        conn,
        "select * from ai.list_jobs(%s, %s, %s, %s, %s)",
        (args.queue, status, args.thread, args.limit, args.before),
    )
    jobs = [from_row(Job, r) for r in rows]
    if args.json:
        _print_json(jobs)
        return EXIT_OK
    _table(
        [
            (
                j.job_id,
                j.thread_id,
                j.queue,
                j.status,
                f"{j.attempts}/{j.max_attempts}",
                _when(j.run_at),
                f"{j.lease_owner} until {_when(j.lease_expires_at)}" if j.lease_owner else "",
                _brief(j.last_error, 50),
            )
            for j in jobs
        ],
        ("JOB", "THREAD", "QUEUE", "STATUS", "ATTEMPTS", "RUN_AT", "LEASE", "LAST_ERROR"),
    )
    return EXIT_OK


def _queue_stats(conn: Conn, queue: str | None) -> list[QueueStats]:
    return [from_row(QueueStats, r) for r in _rows(conn, "select * from ai.queue_stats(%s)", (queue,))]


def _key_status(conn: Conn, args: argparse.Namespace) -> list[JobKeyStatus]:
    return [
        from_row(JobKeyStatus, r)
        for r in _rows(
            conn,
            "select * from ai.job_key_status(%s, %s, %s, %s)",
            (args.queue, args.limit, args.after_queue, args.after_key),
        )
    ]


def cmd_queues(args: argparse.Namespace, conn: Conn) -> int:
    """The queues and their keys: ``stats`` and then ``keys`` of a queue (or of all) in one view;
    ``--json``: {"queues": [...], "keys": [...]}."""
    if args.json:
        _print_json({"queues": _queue_stats(conn, args.queue), "keys": _key_status(conn, args)})
        return EXIT_OK
    cmd_stats(args, conn)
    print()
    return cmd_keys(args, conn)


def cmd_stats(args: argparse.Namespace, conn: Conn) -> int:
    """``ai.queue_stats``: per queue, jobs by status, due jobs, expired leases, oldest due age."""
    stats = _queue_stats(conn, args.queue)
    if args.json:
        _print_json(stats)
        return EXIT_OK
    _table(
        [
            (
                s.queue,
                s.pending,
                s.due,
                s.in_progress,
                s.expired_leases,
                s.awaiting_human,
                s.completed,
                s.failed,
                s.cancelled,
                _age(s.oldest_due_age),
            )
            for s in stats
        ],
        (
            "QUEUE",
            "PENDING",
            "DUE",
            "IN_PROGRESS",
            "EXPIRED",
            "AWAITING_HUMAN",
            "COMPLETED",
            "FAILED",
            "CANCELLED",
            "OLDEST_DUE",
        ),
    )
    return EXIT_OK


def _key_line(k: JobKeyStatus) -> str:
    limit = "" if k.max_in_flight is None else f"/{k.max_in_flight}"
    tokens = "" if k.tokens is None else f", {k.tokens:.1f} tokens ({k.rate_per_minute:g}/min, burst {k.burst})"
    weight = "" if k.weight == 1 else f", weight {k.weight:g}"
    return f"{k.queue}/{k.key}: {k.in_flight}{limit} in flight{tokens}, {k.backlog} pending ({k.due} due){weight}"


def cmd_keys(args: argparse.Namespace, conn: Conn) -> int:
    """``ai.job_key_status``: each key of a queue (or of all), what an operator set (weight,
    max_in_flight, rate_per_minute, burst), its running jobs, tokens and backlog. A tenant sees
    only the keys of its own jobs, counted over its own jobs (no tokens)."""
    keys = _key_status(conn, args)
    if args.json:
        _print_json(keys)
        return EXIT_OK

    def number(v: float | None) -> str:
        return "" if v is None else f"{v:g}"

    _table(
        [
            (
                k.queue,
                k.key,
                number(k.weight),
                k.in_flight,
                number(k.max_in_flight),
                number(k.rate_per_minute),
                number(k.burst),
                "" if k.tokens is None else f"{k.tokens:.1f}",
                k.backlog,
                k.due,
            )
            for k in keys
        ],
        ("QUEUE", "KEY", "WEIGHT", "IN_FLIGHT", "LIMIT", "RATE/MIN", "BURST", "TOKENS", "BACKLOG", "DUE"),
    )
    return EXIT_OK


def cmd_workers(args: argparse.Namespace, conn: Conn) -> int:
    """``ai.list_workers``: every worker of the registry (idle ones too) and every lease holder,
    its state (alive, stale, stopped), queue, what it holds and when it was last heard from. For
    ai_service: a tenant gets one line (exit 2), as workers' holdings span tenants."""
    try:
        workers = _rows(conn, "select * from ai.list_workers(%s, %s, %s)", (args.limit, args.after, args.stale_after))
    except (errors.PermissionDenied, psycopg.errors.InsufficientPrivilege) as error:
        raise CliError("workers are not visible to this role (ai.list_workers is for ai_service)") from error
    if args.json:
        _print_json(workers)
        return EXIT_OK
    counts = {state: sum(1 for w in workers if w["state"] == state) for state in ("alive", "stale", "stopped")}
    print(
        f"{_count(len(workers), 'worker')}: "
        + ", ".join(f"{n} {state}" for state, n in counts.items())
        + f" (stale: no liveness hold, or silent for {_age(args.stale_after)})"
    )
    if not workers:
        return EXIT_OK

    def threads(ids: list[str]) -> str:
        return ",".join(ids[:3]) + (f",… ({len(ids)})" if len(ids) > 3 else "")

    _table(
        [
            (
                w["worker"],
                w["state"],
                w["queue"] or "",
                w["jobs"],
                threads(w["thread_ids"]),
                _when(w["heard_at"]),
                _when(w["started_at"]),
                w["client_addr"] or "",
            )
            for w in workers
        ],
        ("WORKER", "STATE", "QUEUE", "JOBS", "THREADS", "LAST_HEARD", "STARTED", "ADDRESS"),
    )
    return EXIT_OK


# The console's job actions (agent_state.console.pages.job_action): the SQL each calls, what the
# job becomes, the errors that mean "this job is not in a state the action applies to" (exit 1).
_JOB_ACTIONS = {
    "retry": ("select * from ai.retry_dead_job(%s)", "retried"),
    "cancel": ("select * from ai.cancel_job(%s)", "cancelled"),
    "release": ("select * from ai.release_job(%s, %s)", "released"),
}


def cmd_job_action(args: argparse.Namespace, conn: Conn) -> int:
    """``retry`` (``ai.retry_dead_job``: a FAILED job PENDING again, due now, attempts reset),
    ``cancel`` (``ai.cancel_job``) and ``release`` (``ai.release_job`` with the job's current
    fencing token: a stuck lease given back, the attempt not counted), the console's job actions,
    each job in turn. Exit 0 when every job was acted on, 1 when one was in a state the action does
    not apply to (nothing changed for it: AS004, AS006), 2 when one could not be (an unknown job,
    another tenant's, a role without the grant: one line each on stderr)."""
    sql, done_word = _JOB_ACTIONS[args.command]
    results: list[dict[str, Any]] = []
    code = EXIT_OK
    for job_id in args.job_ids:
        before: Job | None = None
        try:
            before = from_row(Job, _rows(conn, "select * from ai.get_job(%s)", (job_id,))[0])
            if args.command == "release":
                if before.status != "IN_PROGRESS":
                    raise errors.LeaseLost(
                        f"job {job_id} is {before.status}: only an IN_PROGRESS job has a lease to release"
                    )
                after = from_row(Job, _rows(conn, sql, (job_id, before.fencing_token))[0])
            else:
                after = from_row(Job, _rows(conn, sql, (job_id,))[0])
        except (errors.InvalidTransition, errors.LeaseLost) as error:
            code = max(code, EXIT_VERDICT)
            results.append({"job_id": job_id, "done": False, "status": before.status if before else None,
                            "error": _one_line(str(error))})  # fmt: skip
        except (errors.AgentStateError, psycopg.Error) as error:
            code = EXIT_ERROR
            message = _describe(error) if isinstance(error, psycopg.Error) else _one_line(str(error))
            results.append({"job_id": job_id, "done": False, "status": before.status if before else None,
                            "error": message})  # fmt: skip
        else:
            results.append({"job_id": job_id, "done": True, "status": after.status, "error": None})
            if not args.json:
                held = f", held by {before.lease_owner}" if args.command == "release" and before.lease_owner else ""
                print(f"{done_word} job {job_id}: now {after.status} (was {before.status}{held})")
        if not args.json and results[-1]["error"] is not None:
            _fail(results[-1]["error"])
    if args.json:
        _print_json(results)
    return code


def cmd_approvals(args: argparse.Namespace, conn: Conn) -> int:
    """``ai.pending_approvals``: what waits for a person, oldest first."""
    rows = _rows(conn, "select * from ai.pending_approvals(%s, %s, %s)", (args.owner, args.limit, args.after))
    approvals = [from_row(Approval, r) for r in rows]
    if args.json:
        _print_json(approvals)
        return EXIT_OK
    _table(
        [
            (a.thread_id, a.checkpoint_id, a.job_id, a.owner, _when(a.requested_at), _brief(a.action, args.width))
            for a in approvals
        ],
        ("THREAD", "CHECKPOINT", "JOB", "OWNER", "REQUESTED", "ACTION"),
    )
    return EXIT_OK


def _resolve(args: argparse.Namespace, conn: Conn, decision: Any) -> int:
    """``ai.resolve_human``. A service that acts for nobody decides for the thread's owner (``ai.act_as``);
    the approval records the operator's role as ``decided_by``."""
    client = Client(conn)
    sees_all = _rows(conn, "select ai.sees_all_owners() as v")[0]["v"]
    if sees_all:
        owner = client.get_session(args.thread).owner
        with client.acting_as(owner) as bound:
            approval = bound.resolve_human(args.thread, args.checkpoint, decision)
    else:
        approval = client.resolve_human(args.thread, args.checkpoint, decision)
    if args.json:
        _print_json(approval)
    else:
        print(
            f"resolved approval {approval.approval_id} of thread {approval.thread_id} at checkpoint "
            f"{approval.checkpoint_id}: {_brief(approval.decision)}; job {approval.job_id} is PENDING again"
        )
    return EXIT_OK


def cmd_approve(args: argparse.Namespace, conn: Conn) -> int:
    return _resolve(args, conn, {"approved": True} if args.decision is None else args.decision)


def cmd_reject(args: argparse.Namespace, conn: Conn) -> int:
    decision: dict[str, Any] = {"approved": False}
    if args.reason:
        decision["reason"] = args.reason
    return _resolve(args, conn, decision)


def cmd_archive(args: argparse.Namespace, conn: Conn) -> int:
    """``ai.archive_jobs`` then ``ai.archive_sessions``, batch after batch (each its own transaction),
    with ``ai.archive_backlog`` as the progress bar's total."""
    older = args.older_than
    jobs_older = args.jobs_older_than if args.jobs_older_than is not None else older
    backlog = _rows(conn, "select * from ai.archive_backlog(%s, %s)", (older, jobs_older))[0]
    if args.dry_run:
        if args.json:
            _print_json({"dry_run": True, **backlog})
        else:
            print(f"would archive {_count(backlog['sessions'], 'session')} and {_count(backlog['jobs'], 'job')}")
        return EXIT_OK
    jobs = sessions = 0
    rows_moved: dict[str, int] = {}
    with progress(backlog["jobs"], "archiving jobs", enabled=not args.quiet) as advance:
        while True:
            n = _rows(conn, "select ai.archive_jobs(%s, %s) as n", (jobs_older, args.batch_size))[0]["n"]
            if not n:
                break
            jobs += n
            advance(n)
    with progress(backlog["sessions"], "archiving sessions", enabled=not args.quiet) as advance:
        while True:
            batch = _rows(conn, "select * from ai.archive_sessions(%s, %s)", (older, args.batch_size))
            if not batch:
                break
            sessions += len(batch)
            for row in batch:
                for table, count in row["rows_moved"].items():
                    rows_moved[table] = rows_moved.get(table, 0) + count
            advance(len(batch))
    # sessions a sweep could not move stay hot, listed with the error (docs/operations.md, "Retention")
    skipped = len(_rows(conn, "select thread_id from ai.archive_skips(10000)", ()))
    if args.json:
        _print_json({"sessions": sessions, "jobs": jobs, "rows_moved": rows_moved, "skipped": skipped})
    else:
        rows = sum(rows_moved.values())
        print(f"archived {_count(sessions, 'session')} ({_count(rows, 'row')} with them) and {_count(jobs, 'job')}")
        if skipped:
            print(f"{_count(skipped, 'session')} could not be moved and stay hot: select * from ai.archive_skips()")
    return EXIT_OK


def cmd_restore(args: argparse.Namespace, conn: Conn) -> int:
    """``ai.restore_session``: an archived session back into the hot tables."""
    session = Client(conn).restore_session(args.thread)
    if args.json:
        _print_json(session)
    else:
        print(f"restored thread {session.thread_id} ({session.status}, {session.last_seq} messages)")
    return EXIT_OK


def cmd_worker(args: argparse.Namespace, conn: Conn) -> int:
    """Runs a Worker: ``--handler module:function`` on a queue, or ``--graph module:attr`` as durable graph runs."""
    Client(conn).now()  # the schema is there (one clear line if not) before threads start
    conn.close()  # the worker's pool has its own connections
    conninfo = _conninfo(args)
    options: dict[str, Any] = {"lease": args.lease, "poll_interval": args.poll_interval}
    if args.graph:
        graph = _load(args.graph, "--graph")
        if not hasattr(graph, "invoke"):
            raise CliError(f"--graph {args.graph}: not a compiled LangGraph graph (it has no .invoke)")
        try:
            from .graph_runs import graph_worker
        except ImportError as error:
            raise CliError(f"worker --graph needs LangGraph: pip install 'agent-state[langgraph]' ({error})") from error
        graph_run_worker = graph_worker(
            conninfo, graph, queue=args.queue or "graph-runs", concurrency=args.concurrency or 1, **options
        )
        stats = graph_run_worker.run(drain=args.drain) if args.drain else graph_run_worker.run()
    else:
        handler = _load(args.handler, "--handler")
        if not callable(handler):
            raise CliError(f"--handler {args.handler}: not a function")
        from psycopg_pool import ConnectionPool

        from .worker import Worker

        concurrency = args.concurrency or 4
        with ConnectionPool(
            conninfo, min_size=1, max_size=concurrency + 2, kwargs={"autocommit": True}, open=True
        ) as pool:
            worker = Worker(pool, handler, args.queue or "default", concurrency, **options)
            stats = worker.run(drain=args.drain)
    print(
        f"worker stopped: {stats.claimed} claimed, {stats.completed} completed, {stats.failed} failed, "
        f"{stats.lost} lost, {stats.released} released, {stats.paused} paused",
        file=sys.stderr,
    )
    return EXIT_OK


def cmd_import_langgraph(args: argparse.Namespace, conn: Conn) -> int:
    """Copies threads from LangGraph's PostgresSaver tables (agent_state.langgraph_import)."""
    try:
        from .langgraph_import import import_from_postgres_saver
    except ImportError as error:
        raise CliError(f"import-langgraph needs LangGraph: pip install 'agent-state[langgraph]' ({error})") from error
    try:
        source = psycopg.connect(args.source, autocommit=True, **_timeout(args.source))
    except psycopg.Error as error:
        raise CliError(f"cannot connect to the source database (--from): {_describe(error)}") from error
    with source:
        result = import_from_postgres_saver(source, conn, thread_ids=args.thread or None)
    if args.json:
        _print_json(result)
    else:
        print(f"imported: {_brief(_jsonable(result), 200)}")
    return EXIT_OK


def cmd_replay(args: argparse.Namespace, conn: Conn) -> int:
    """Replays a recorded thread from a checkpoint with a candidate and prints the differences."""
    from .replay import replay

    result = replay(
        Client(conn),
        args.thread,
        args.from_checkpoint,
        _load(args.run, "--run"),
        candidate=args.candidate or args.run,
        checkpoint_ns=args.namespace,
        record=not args.no_record,
    )
    comparison = result.comparison
    if args.json:
        _print_json(
            {
                "thread_id": args.thread,
                "from_checkpoint_id": args.from_checkpoint,
                "fork_thread_id": result.fork_thread_id,
                "passed": comparison.passed,
                "final_score": comparison.final_score,
                "eval_id": None if result.eval_run is None else result.eval_run.eval_id,
                **comparison.as_json(),
            }
        )
        return EXIT_OK if comparison.passed else EXIT_VERDICT
    print(f"replayed {args.thread} from {args.from_checkpoint} on fork {result.fork_thread_id}")
    print(
        f"tools: {len(comparison.expected_tools)} recorded, {len(comparison.actual_tools)} replayed, "
        f"{len(comparison.tool_mismatches)} different; final answer score {comparison.final_score:.2f}"
    )
    for line in comparison.diff_lines():
        print(line)
    if result.eval_run is not None:
        print(f"recorded as eval run {result.eval_run.eval_id}")
    print("PASS" if comparison.passed else "FAIL")
    return EXIT_OK if comparison.passed else EXIT_VERDICT


def _check_listen(host: str, port: int) -> None:
    """CliError (one line) unless ``host:port`` resolves and can be bound now; uvicorn would log
    the failure as an error of its own and exit 3."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except (OSError, UnicodeError, ValueError) as error:
        raise CliError(f"cannot listen on {host[:80]}:{port}: {error}") from error


def cmd_console(args: argparse.Namespace) -> int:
    """Serves the operator console (agent_state.console) with uvicorn until SIGINT/SIGTERM."""
    try:
        from .console import ConsoleConfig, create_app, hash_password
    except ImportError as error:
        raise CliError(f"the console needs its extra: pip install 'agent-state[console]' ({error})") from error
    if args.hash_password:
        print(hash_password(sys.stdin.readline().rstrip("\n")))
        return EXIT_OK
    import uvicorn

    if args.auth == "password" and not args.password_file:
        raise CliError("--auth password needs --password-file")
    secret = os.environ.get("AGENT_STATE_CONSOLE_SECRET") or None
    if args.secret_file:
        try:
            secret = Path(args.secret_file).read_text().strip()
        except OSError as error:
            raise CliError(f"cannot read --secret-file: {error}") from error
    try:
        config = ConsoleConfig(
            database_url=_conninfo(args),
            auth=args.auth,
            password_file=args.password_file,
            read_only=args.read_only,
            payload_limit=args.payload_limit,
            poll_seconds=args.poll_seconds,
            listen=not args.no_listen,
            secret=secret,
            secure_cookies=args.secure_cookies,
        )
    except ValueError as error:  # a bad option (a secret too short, a limit not positive)
        raise CliError(str(error)) from error
    _check_listen(args.host, args.port)
    print(f"agent-state console on http://{args.host}:{args.port}/ ({'read-only, ' if args.read_only else ''}"
          f"login: {args.auth})", flush=True)  # fmt: skip
    uvicorn.run(create_app(config=config), host=args.host, port=args.port, log_level="warning")
    return EXIT_OK


def _memory_client(args: argparse.Namespace, conn: Conn) -> Iterator[Client]:
    """The client the memory commands use: acting for ``--owner`` (a service), else the caller."""
    client = Client(conn)
    if args.owner:
        with client.acting_as(args.owner) as bound:
            yield bound
    else:
        yield client


def _memory_move(args: argparse.Namespace, conn: Conn, namespace: tuple[str, ...]) -> int:
    """``memory archive`` (ai.archive_memory) and ``memory restore`` (ai.restore_memory): batch
    after batch of --batch-size items, each batch its own transaction, until one is not full."""
    moved = superseded = 0
    while True:
        for client in _memory_client(args, conn):
            if args.action == "archive":
                n = client.archive_memory(namespace, args.batch_size)
                moved += n
            else:
                batch = client.restore_memory(namespace, args.batch_size)
                n = batch.restored + batch.superseded
                moved += batch.restored
                superseded += batch.superseded
        if n < args.batch_size:
            break
    where = "/".join(namespace) or "all namespaces"
    if args.json:
        _print_json({"archived": moved} if args.action == "archive" else {"restored": moved, "superseded": superseded})
    elif args.action == "archive":
        print(f"archived {_count(moved, 'memory item')} ({where})")
    else:
        dropped = f"{superseded} archived copies dropped for a live item written since"
        print(f"restored {_count(moved, 'memory item')} ({where}); {dropped}")
    return EXIT_OK


def cmd_memory(args: argparse.Namespace, conn: Conn) -> int:
    """Long-term memory per namespace (docs/memory.md): ``ls`` (ai.list_memory_namespaces, or
    ai.search_memory with --items), ``show`` (ai.get_memory), ``rm`` (ai.delete_memory),
    ``archive`` (ai.archive_memory) and ``restore`` (ai.restore_memory) of a prefix."""
    namespace = tuple(args.namespace.split("/")) if args.namespace else ()
    if args.action in ("archive", "restore"):
        return _memory_move(args, conn, namespace)
    if args.action != "ls" and (not namespace or args.key is None):
        raise CliError(
            f"memory {args.action} takes a namespace and a key: agent-state memory {args.action} users/alice prefs"
        )
    for client in _memory_client(args, conn):
        if args.action == "ls" and not args.items:
            found = client.list_memory_namespaces(prefix=namespace or None, limit=args.limit)
            if args.json:
                _print_json([list(n) for n in found])
            else:
                _table([("/".join(n),) for n in found], ("NAMESPACE",))
        elif args.action == "ls":
            items = client.search_memory(namespace, query=args.query, limit=args.limit)
            if args.json:
                _print_json(items)
            else:
                rows = [
                    (
                        "/".join(i.namespace),
                        i.key,
                        _when(i.updated_at),
                        _when(i.expires_at),
                        _brief(i.value, args.width),
                    )
                    for i in items
                ]
                _table(rows, ("NAMESPACE", "KEY", "UPDATED", "EXPIRES", "VALUE"))
        elif args.action == "show":
            item = client.get_memory(namespace, args.key)
            if item is None:
                raise CliError(f"no memory item {args.key!r} in {args.namespace}")
            if args.json:
                _print_json(item)
            else:
                print(json.dumps(item.value, indent=2, ensure_ascii=False, sort_keys=True))
        else:
            if not client.delete_memory(namespace, args.key):
                raise CliError(f"no memory item {args.key!r} in {args.namespace}")
            if not args.json:
                print(f"deleted {args.namespace} {args.key}")
    return EXIT_OK


def cmd_metrics(args: argparse.Namespace, conn: Conn) -> int:
    """``ai.metrics()`` in Prometheus' text format: one scrape on stdout (--once), or an HTTP
    endpoint on --host:--port (any path) until SIGINT/SIGTERM; each scrape calls the function once."""
    try:
        from prometheus_client import generate_latest, start_http_server

        from .prometheus import DatabaseCollector, registry
    except ImportError as error:
        raise CliError(f"metrics need their extra: pip install 'agent-state[metrics]' ({error})") from error
    collector = DatabaseCollector(lambda: _connect(args), conn)
    reg = registry(collector)
    if args.once:
        sys.stdout.write(generate_latest(reg).decode())
        return EXIT_OK
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        server, thread = start_http_server(args.port, addr=args.host, registry=reg)
    except (OSError, UnicodeError, ValueError) as error:  # a host that does not resolve, or is no host name
        raise CliError(f"cannot listen on {args.host}:{args.port}: {error}") from error
    print(f"serving metrics on http://{args.host}:{server.server_port}/metrics", flush=True)
    stop.wait()
    server.shutdown()
    thread.join(5)
    collector.close()
    return EXIT_OK


COMMANDS: dict[str, Callable[[argparse.Namespace, Conn], int]] = {
    "status": cmd_status,
    "deploy": cmd_deploy,
    "sessions": cmd_sessions,
    "show": cmd_show,
    "lineage": cmd_lineage,
    "jobs": cmd_jobs,
    "stats": cmd_stats,
    "keys": cmd_keys,
    "queues": cmd_queues,
    "workers": cmd_workers,
    "retry": cmd_job_action,
    "cancel": cmd_job_action,
    "release": cmd_job_action,
    "approvals": cmd_approvals,
    "approve": cmd_approve,
    "reject": cmd_reject,
    "worker": cmd_worker,
    "import-langgraph": cmd_import_langgraph,
    "archive": cmd_archive,
    "restore": cmd_restore,
    "replay": cmd_replay,
    "memory": cmd_memory,
    "metrics": cmd_metrics,
}


# -- the parser ---------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (exit 2) instead of the usage block."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: {message} (see {self.prog} --help)\n")
        raise SystemExit(EXIT_ERROR)


def _version() -> str:
    try:
        return metadata.version("agent-state")
    except metadata.PackageNotFoundError:
        return "unknown"


def parser() -> argparse.ArgumentParser:
    root = _Parser(
        prog="agent-state",
        description="Operate agent-state from the shell. Each subcommand calls one SQL function of schema ai.",
        epilog="The database: --database-url, else $DATABASE_URL, else libpq's PG* variables. Exit codes: 0 ok, "
        "1 a failed verdict (replay FAIL, status: not deployed, retry/cancel/release: a job in another state), "
        "2 a usage, connection or database error.",
    )
    root.add_argument("--version", action="version", version=f"agent-state {_version()}")
    root.add_argument("--database-url", metavar="DSN", help="a libpq URL or key=value string (default: $DATABASE_URL)")
    sub = root.add_subparsers(dest="command", required=True, metavar="COMMAND")

    json_option = _Parser(add_help=False)
    json_option.add_argument("--json", action="store_true", help="print one JSON document instead of text")

    # --database-url after the subcommand too (it does not reset one given before it)
    url_option = _Parser(add_help=False)
    url_option.add_argument("--database-url", metavar="DSN", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    def command(name: str, help: str, *, reads: bool = True) -> argparse.ArgumentParser:
        parents = [url_option, json_option] if reads else [url_option]
        return sub.add_parser(name, help=help, description=help, parents=parents)

    p = command(
        "status",
        "the schema's version against this package's, pending upgrades, workers alive, the notification queue,"
        " the oldest due job per queue, long lock holders (exit 1 if the schema is absent or too old)",
    )
    p.add_argument(
        "--lease",
        type=seconds_or_zero,  # 0: every transaction that holds locks
        default=60.0,
        metavar="SECONDS",
        help="report transactions holding locks longer than this (default 60, the workers' lease)",
    )
    p.add_argument(
        "--verbose", action="store_true", help="list every change, worker, queue and lock holder (default: a screen)"
    )
    command("deploy", "deploy the bundled schema into a database without one (no sqitch needed)")

    p = command("sessions", "sessions, newest first (ai.list_sessions)")
    p.add_argument("--status", choices=("active", "waiting", "completed", "failed", "cancelled"))
    p.add_argument("--owner")
    p.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    p.add_argument("--before", metavar="THREAD", help="the next page: sessions older than this one")

    p = command(
        "show", "a thread's newest items: jobs, messages, checkpoints, events, side effects; then each job's attempts"
    )
    p.add_argument("thread")
    p.add_argument("--limit", type=int, default=100, help="at most this many items, the newest (default 100)")
    p.add_argument("--before", type=timeline_cursor, metavar="TIME,ITEM,REF", help="the older page (show prints it)")
    p.add_argument("--skip", type=int, default=0, help=argparse.SUPPRESS)  # the items the newer pages showed
    p.add_argument("--width", type=int, default=80, help="cut details to this many characters (default 80)")

    p = command("lineage", "a thread's checkpoints drawn as a tree with its branches (ai.checkpoint_tree)")
    p.add_argument("thread")
    p.add_argument("checkpoint", nargs="?", help="only the tree below this checkpoint (ai.checkpoint_lineage)")
    p.add_argument("--namespace", default="", help="checkpoint namespace (default: the root)")
    p.add_argument("--limit", type=int, default=1000, help="the newest this many checkpoints (default 1000)")

    p = command("jobs", "jobs, newest first (ai.list_jobs)")
    p.add_argument("--queue")
    p.add_argument(
        "--status",
        type=str.upper,
        choices=("PENDING", "IN_PROGRESS", "AWAITING_HUMAN", "COMPLETED", "FAILED", "CANCELLED"),
    )
    p.add_argument("--thread")
    p.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    p.add_argument("--before", type=int, metavar="JOB_ID", help="the next page: jobs older than this job id")

    p = command("stats", "jobs per queue and status, due jobs, expired leases (ai.queue_stats)")
    p.add_argument("--queue")

    for name, help in (
        ("keys", "each key of the queues: weight, jobs in flight and limit, rate, tokens, backlog (ai.job_key_status)"),
        ("queues", "the queues (as stats) and then their keys (as keys), in one view"),
    ):
        p = command(name, help)
        p.add_argument("--queue")
        p.add_argument("--limit", type=int, default=100, help="keys: at most this many (default 100, at most 1000)")
        p.add_argument("--after-queue", help="the next page: keys after this queue and --after-key")
        p.add_argument("--after-key", help="the next page: keys after --after-queue and this key")

    p = command(
        "workers",
        "the workers, idle ones too: alive, stale or stopped, their queue, the jobs and threads each holds,"
        " when each was last heard from (ai.list_workers; for ai_service)",
    )
    p.add_argument(
        "--stale-after",
        type=duration,
        default=timedelta(minutes=1),
        help="a worker without a liveness hold is stale when silent this long (default 1m)",
    )
    p.add_argument("--limit", type=int, default=100, help="at most this many, by worker id (default 100)")
    p.add_argument("--after", metavar="WORKER", help="the next page: workers after this one")

    for name, help in (
        ("retry", "put FAILED jobs back: PENDING, due now, attempts reset (ai.retry_dead_job; for ai_service)"),
        ("cancel", "cancel PENDING, IN_PROGRESS or AWAITING_HUMAN jobs (ai.cancel_job)"),
        ("release", "give back the lease of IN_PROGRESS jobs: PENDING, due now, the attempt not counted"
         " (ai.release_job with the job's fencing token; for ai_service)"),
    ):  # fmt: skip
        p = command(name, help + "; exit 1 if a job is in a state the action does not apply to")
        p.add_argument("job_ids", nargs="+", type=int, metavar="JOB_ID")

    p = command("approvals", "what waits for a person, oldest first (ai.pending_approvals)")
    p.add_argument("--owner")
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--after", metavar="APPROVAL_ID", help="the next page: approvals after this one")
    p.add_argument("--width", type=int, default=60, help="cut actions to this many characters (default 60)")

    p = command("approve", "resolve what a thread waits for with a decision (ai.resolve_human)")
    p.add_argument("thread")
    p.add_argument("checkpoint")
    p.add_argument("--decision", type=json_document, metavar="JSON", help='default: {"approved": true}')

    p = command("reject", 'resolve with {"approved": false, "reason": ...} (ai.resolve_human)')
    p.add_argument("thread")
    p.add_argument("checkpoint")
    p.add_argument("--reason")

    p = command("worker", "run a worker until SIGTERM or SIGINT", reads=False)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--graph", metavar="MODULE:ATTR", help="a compiled LangGraph graph: durable graph runs")
    what.add_argument("--handler", metavar="MODULE:FUNCTION", help="handler(job, ctx) for each job of the queue")
    p.add_argument("--queue", help="default: graph-runs with --graph, default with --handler")
    p.add_argument("--concurrency", type=int, help="jobs at once (default 1 with --graph, 4 with --handler)")
    p.add_argument("--lease", type=duration, default=timedelta(seconds=60), help="lease per claim (default 60s)")
    p.add_argument("--poll-interval", type=float, default=1.0, help="seconds between polls (default 1)")
    p.add_argument("--drain", action="store_true", help="exit once nothing is left to claim")

    p = command("import-langgraph", "copy threads from LangGraph's PostgresSaver tables")
    p.add_argument("--from", dest="source", required=True, metavar="DSN", help="the database PostgresSaver wrote")
    p.add_argument("--thread", action="append", metavar="ID", help="only this thread (repeat; default: all)")

    p = command("archive", "move finished sessions and jobs to the archive, batch by batch (ai.archive_sessions)")
    p.add_argument("--older-than", type=duration, default=timedelta(days=90), help="sessions finished before (90d)")
    p.add_argument("--jobs-older-than", type=duration, help="finished jobs before (default: --older-than)")
    p.add_argument("--batch-size", type=int, default=1000, help="per transaction (default 1000)")
    p.add_argument("--dry-run", action="store_true", help="only count what would move (ai.archive_backlog)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")

    p = command(
        "console", "serve the operator console: runs, approvals, queues (pip install agent-state[console])", reads=False
    )
    p.add_argument("--host", default="127.0.0.1", help="listen on this address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8023, help="listen on this port (default 8023)")
    p.add_argument(
        "--auth",
        choices=("database", "password"),
        default="database",
        help="log in with a database role and its password (default), or with a --password-file",
    )
    p.add_argument("--password-file", metavar="PATH", help="name:hash lines (--hash-password makes a hash)")
    p.add_argument("--read-only", action="store_true", help="hide and refuse every action")
    p.add_argument("--payload-limit", type=int, default=2000, help="characters of a payload shown inline (2000)")
    p.add_argument("--poll-seconds", type=float, default=5.0, help="refresh period when not listening (5)")
    p.add_argument("--no-listen", action="store_true", help="always poll (behind a transaction pooler)")
    p.add_argument(
        "--secure-cookies", action="store_true",
        help="send the login cookie Secure always (behind a proxy that ends TLS; https requests get it anyway)",
    )  # fmt: skip
    p.add_argument("--hash-password", action="store_true", help="read a password on stdin, print its hash, exit")
    p.add_argument(
        "--secret-file",
        metavar="PATH",
        help="the login cookie's secret (32+ characters; else $AGENT_STATE_CONSOLE_SECRET): the same one in "
        "every console process keeps logins across restarts and processes; without one they end with the process",
    )

    p = command(
        "metrics",
        "the queue's and its guarantees' figures in Prometheus' text format (ai.metrics; pip install"
        " agent-state[metrics]): an HTTP endpoint for a scrape, or one scrape with --once",
        reads=False,
    )
    p.add_argument("--once", action="store_true", help="print one scrape to stdout and exit")
    p.add_argument("--host", default="127.0.0.1", help="listen on this address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=9478, help="listen on this port (default 9478)")

    p = command("restore", "move an archived session back (ai.restore_session)")
    p.add_argument("thread")

    p = command(
        "memory", "long-term memory per namespace (labels joined by /): ls, show, rm, archive, restore (docs/memory.md)"
    )
    p.add_argument("action", choices=("ls", "show", "rm", "archive", "restore"))
    p.add_argument(
        "namespace", nargs="?", default="", help="e.g. users/alice (ls, archive, restore: a prefix; default: all)"
    )
    p.add_argument("key", nargs="?", help="the item's key (show, rm)")
    p.add_argument("--items", action="store_true", help="ls: the items under the prefix, not the namespaces")
    p.add_argument("--query", help="ls --items: full-text search over the items")
    p.add_argument("--owner", help="a service: the end user whose memory (ai.act_as)")
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--width", type=int, default=60, help="cut values to this many characters (default 60)")
    p.add_argument(
        "--batch-size", type=int, default=1000, help="archive, restore: items per transaction (default 1000)"
    )

    p = command("replay", "replay a recorded thread from a checkpoint and diff the outcome")
    p.add_argument("thread")
    p.add_argument("--from", dest="from_checkpoint", required=True, metavar="CHECKPOINT")
    p.add_argument("--run", required=True, metavar="MODULE:FUNCTION", help="run(client, fork_thread_id, checkpoint_id)")
    p.add_argument("--candidate", help="the name recorded in ai.eval_runs (default: the --run target)")
    p.add_argument("--namespace", default="", help="checkpoint namespace (default: the root)")
    p.add_argument("--no-record", action="store_true", help="do not write an ai.eval_runs row")
    return _bounded(root)


# -- main ---------------------------------------------------------------------------------------


def _conninfo(args: argparse.Namespace) -> str:
    """--database-url, else $DATABASE_URL, else '' (libpq then reads PGHOST, PGDATABASE, ...)."""
    return args.database_url or os.environ.get("DATABASE_URL") or ""


def _timeout(conninfo: str) -> dict[str, Any]:
    """A connect timeout of 10 s unless the DSN or PGCONNECT_TIMEOUT names one (libpq waits forever)."""
    if "connect_timeout" in conninfo or os.environ.get("PGCONNECT_TIMEOUT"):
        return {}
    return {"connect_timeout": 10}


def _connect(args: argparse.Namespace) -> Conn:
    conninfo = _conninfo(args)
    try:
        return psycopg.connect(conninfo, autocommit=True, **_timeout(conninfo))
    except psycopg.ProgrammingError as error:  # a DSN libpq cannot parse
        raise CliError(f"bad database URL: {_one_line(str(error))}") from error
    except psycopg.Error as error:
        raise CliError(f"cannot connect to the database: {_one_line(str(error))}") from error


def _fail(message: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # stderr closed too: nothing to tell
        sys.stderr.write(f"agent-state: {terminal_safe(_one_line(message))}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; every human-readable output escaped and a closed stdout dropped
    (TerminalSafeOutput)."""
    stdout = sys.stdout
    safe = TerminalSafeOutput(stdout)
    sys.stdout = safe
    try:
        code = _main(argv)
        safe.flush()
        return code
    finally:
        sys.stdout = stdout


def _main(argv: Sequence[str] | None) -> int:
    if not (sys.argv[1:] if argv is None else argv):  # a bare `agent-state`: its usage, as argparse's error does
        parser().print_help(sys.stderr)
        return EXIT_ERROR
    try:
        args = parser().parse_args(argv)
    except SystemExit as exit_:  # --help, --version, a usage error (already printed on one line)
        return exit_.code if isinstance(exit_.code, int) else EXIT_ERROR
    except Exception as error:  # an argument no type expected (one line, never a traceback)
        _fail(f"bad arguments: {type(error).__name__}: {str(error)[:200]}")
        return EXIT_ERROR
    try:
        if args.command == "console":
            return cmd_console(args)
        with _connect(args) as conn:
            return COMMANDS[args.command](args, conn)
    except CliError as error:
        _fail(str(error))
        return error.code
    except errors.AgentStateError as error:
        _fail(str(error))
        return EXIT_ERROR
    except psycopg.Error as error:
        _fail(_describe(error))
        return EXIT_ERROR
    except KeyboardInterrupt:
        _fail("interrupted")
        return 130
    except Exception as error:
        if os.environ.get("AGENT_STATE_DEBUG"):
            raise
        _fail(f"{type(error).__name__}: {error} (AGENT_STATE_DEBUG=1 shows the traceback)")
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
