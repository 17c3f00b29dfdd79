"""Make a copy of the pgTAP files evaluate their assertions on a formation's coordinator.

scripts/citus-test.sh's owner-reads mode runs this on its copy of tests/pgtap (the files
themselves unchanged). On a formation, `select is((select count(*) from ai.t where thread_id =
'x'), n, '...');` reads one thread's rows only, so Citus plans the whole statement as one router
query and runs it on the worker that holds the thread, pgTAP's is() included, where pgTAP has no
plan ("You tried to run a test without a plan!"). Here every statement that is one pgTAP call and
nothing else (`select is(...);`, ok, results_eq, throws_ok, ...) gets `from pg_temp._one`: a
one-row temporary table of the coordinator (created after the file's `begin;`, readable by every
role). A statement that reads a table of the coordinator and distributed tables is no router
query: Citus runs the distributed subqueries as subplans on the workers (the same rows, with the
same filters) and the call itself on the coordinator. What a file asserts does not change: one row
in FROM evaluates the call once, with the same arguments.

    python scripts/pgtap_coordinator_asserts.py DIR   # rewrites the .sql files under DIR in place
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

CALLS = (
    "is|isnt|ok|results_eq|results_ne|set_eq|bag_eq|cmp_ok|is_empty|isnt_empty"
    "|lives_ok|throws_ok|throws_like|row_eq|matches|alike"
)
STATEMENT = re.compile(r"(?m)^select (?:" + CALLS + r")\(")
DOLLAR_TAG = re.compile(r"\$[A-Za-z_0-9]*\$")
ONE = "\nbegin;\ncreate temp table if not exists _one as select 1 as one; grant select on pg_temp._one to public;\n"


def closing_paren(text: str, start: int) -> int:
    """The index of the parenthesis that closes the one at `start` (quotes and $$ skipped), or -1."""
    depth = 0
    i = start
    while i < len(text):
        c = text[i]
        if c == "'":
            i += 1
            while i < len(text):
                if text[i] == "'":
                    if i + 1 < len(text) and text[i + 1] == "'":
                        i += 2
                        continue
                    break
                i += 1
        elif c == "$" and (tag := DOLLAR_TAG.match(text, i)):
            end = text.find(tag.group(0), tag.end())
            if end < 0:
                return -1
            i = end + len(tag.group(0)) - 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def rewrite(text: str) -> str:
    """The file with `from pg_temp._one` after every statement that is one pgTAP call."""
    parts: list[str] = []
    pos = 0
    for m in STATEMENT.finditer(text):
        if m.start() < pos:
            continue
        end = closing_paren(text, m.end() - 1)
        if end < 0 or not re.match(r"\s*;", text[end + 1 :]):
            continue  # not one call and nothing else (a FROM of its own, \gset, ...)
        parts += [text[pos : end + 1], " from pg_temp._one"]
        pos = end + 1
    parts.append(text[pos:])
    return "".join(parts).replace("\nbegin;\n", ONE, 1)


def main(folder: str) -> None:
    for path in Path(folder).rglob("*.sql"):
        path.write_text(rewrite(path.read_text()))


if __name__ == "__main__":
    main(sys.argv[1])
