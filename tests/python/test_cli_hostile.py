"""Hostile values in every argument of every ``agent-state`` subcommand (issue 37: "treat every
input of the console and the CLI as hostile").

The subcommands and their arguments are read from the CLI's own parser, so a new one is covered the
day it is added. Each argument gets, in turn, overflowing numbers, NaN and infinities, a duration
past timedelta's range, words where numbers go, control characters, bytes that are not UTF-8,
huge strings, JSON nested too deep and the empty string, the others keeping harmless values. The
CLI must answer each with at most one line on stderr, an exit code of 0, 1 or 2, and never a
traceback. ``worker``, ``console`` and ``deploy`` are only parsed (given good values they would
serve, or deploy); ``archive`` always runs with ``--dry-run``.

Before: ``archive --older-than 99999999999d`` raised OverflowError out of argparse and
``approve T C --decision '[[[…'`` RecursionError, both as tracebacks.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import pytest

from agent_state import cli

HOSTILE = [
    "9" * 40,
    "-1",
    "1e309",
    "nan",
    "inf",
    "99999999999d",
    "abc",
    "\x01\x1b[31m\x7f\u0085",
    "\udcff\udcfe",  # bytes of the command line that are not UTF-8 (as Python gives them)
    "x" * 100_000,
    "[" * 100_000,
    "' or 1=1 --",
    "",
]
PARSE_ONLY = {"worker", "console", "deploy"}


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    [sub] = [a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _arguments(p: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in p._actions if not isinstance(a, argparse._HelpAction) and a.nargs != 0]


def _good(action: argparse.Action) -> str | None:
    """A harmless value for a required argument (None: leave it out)."""
    if action.choices:
        return "ls" if "ls" in action.choices else str(next(iter(action.choices)))
    if action.dest in ("run",):
        return "no_such_module_here:run"
    if action.dest == "source":
        return "host=/nonexistent-dir port=1 dbname=x connect_timeout=1"
    return f"hostile-{action.dest}" if action.required or not action.option_strings else None


def _argv(command: str, p: argparse.ArgumentParser, target: argparse.Action, value: str) -> list[str]:
    options: list[str] = []
    positionals: list[str] = []
    for action in _arguments(p):
        given = value if action is target else _good(action)
        if given is None:
            continue
        if action.option_strings:
            options.append(f"{action.option_strings[0]}={given}")
        elif action.nargs != "?" or action is target or given:
            positionals.append(given)
    if command == "archive":
        options += ["--dry-run", "--quiet"]
    if command == "metrics":
        options += ["--once"]  # a scrape to stdout, not a server that waits for SIGTERM
    return [command, *options, *(["--", *positionals] if positionals else [])]


def test_every_argument_of_every_subcommand_takes_hostile_values(
    role_dsn: Callable[[str], str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", role_dsn("app_service"))
    commands = _subcommands()
    assert len(commands) >= 15
    tried = 0
    for command, p in commands.items():
        for action in _arguments(p):
            for value in HOSTILE:
                if action.dest == "database_url" and value == "":
                    continue  # the empty URL is $DATABASE_URL's: a good value, not a hostile one
                argv = _argv(command, p, action, value)
                where = f"{command} {action.dest}={value[:30]!r}"
                if command in PARSE_ONLY:
                    try:
                        cli.parser().parse_args(argv)
                    except SystemExit as exit_:
                        assert exit_.code == 2, where
                    except Exception as error:  # what the test looks for
                        pytest.fail(f"{where}: {type(error).__name__} out of the parser")
                    capsys.readouterr()
                    continue
                code = cli.main(argv)
                out, err = capsys.readouterr()
                assert code in (0, 1, 2), (where, code, err[-500:])
                assert "Traceback" not in err + out, (where, err[-2000:])
                assert len(err.strip().splitlines()) <= 1, (where, err[-2000:])
                if code:
                    assert err.startswith("agent-state"), (where, err[:300])
                tried += 1
    assert tried > 300


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["archive", "--older-than", "99999999999d", "--dry-run"], "is longer than 36500 days"),
        (["approve", "t", "c", "--decision", "[" * 100_000], "nested too deep"),
        (["jobs", "--before", "9" * 30], "is not a whole number"),
        (["status", "--lease", "nan"], "is not a number of seconds"),
        (["show", "\udcff"], "is not UTF-8 text"),
        (["console", "--port", "70000"], "is not a whole number from 1 to 65535"),
        (["console", "--host", "no-such-host.invalid"], "cannot listen on no-such-host.invalid"),
        (["console", "--host", "x" * 100_000], "cannot listen on"),
    ],
)
def test_a_bad_argument_is_one_line_that_names_it(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err
