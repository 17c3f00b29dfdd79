"""The operator's command line: ``agent-state SUBCOMMAND ...``.

Each subcommand is a small function registered in :data:`COMMANDS`; later ones (queue stats,
approvals, archive) join the same parser. The database is ``--database-url`` or ``DATABASE_URL``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from .client import Client
from .replay import Run, replay


def _load(target: str) -> Run:
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise SystemExit(f"--run takes module:function, not {target!r}")
    function: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        function = getattr(function, part)
    return function  # type: ignore[no-any-return]


def cmd_replay(args: argparse.Namespace, client: Client) -> int:
    """Replays a recorded thread from a checkpoint with a candidate and prints the differences."""
    result = replay(
        client,
        args.thread,
        args.from_checkpoint,
        _load(args.run),
        candidate=args.candidate or args.run,
        checkpoint_ns=args.namespace,
        record=not args.no_record,
    )
    comparison = result.comparison
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
    return 0 if comparison.passed else 1


COMMANDS: dict[str, Callable[[argparse.Namespace, Client], int]] = {"replay": cmd_replay}


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="agent-state", description="Operate agent-state from the shell.")
    root.add_argument("--database-url", default=os.environ.get("DATABASE_URL"), help="default: $DATABASE_URL")
    sub = root.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("replay", help="replay a recorded thread from a checkpoint and diff the outcome")
    rp.add_argument("thread")
    rp.add_argument("--from", dest="from_checkpoint", required=True, metavar="CHECKPOINT")
    rp.add_argument(
        "--run", required=True, metavar="MODULE:FUNCTION", help="run(client, fork_thread_id, checkpoint_id)"
    )
    rp.add_argument("--candidate", help="the name recorded in ai.eval_runs (default: the --run target)")
    rp.add_argument("--namespace", default="", help="checkpoint namespace (default: the root)")
    rp.add_argument("--no-record", action="store_true", help="do not write an ai.eval_runs row")
    return root


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not args.database_url:
        print("agent-state: set DATABASE_URL or pass --database-url", file=sys.stderr)
        return 2
    with psycopg.connect(args.database_url, autocommit=True) as conn:
        return COMMANDS[args.command](args, Client(conn))


if __name__ == "__main__":
    sys.exit(main())
