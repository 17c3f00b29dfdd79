"""Make a copy of the pgTAP files read as the owner and assert on a formation's coordinator.

scripts/citus-test.sh's owner-reads mode runs this on its copy of tests/pgtap (the files
themselves unchanged; the script's comment says why). Four rewrites, none of what is asserted:

1. After each `reset role;`, the superuser's identity is carried to the shards
   (ai._formation_caller, acting for nobody) and the role set to the schema owner, so the
   superuser's reads go over the owner's connections, which the tenants' calls used
   (AS_SUPERUSER).
2. The superuser's `delete from` a distributed table before a tenant writes (a file that counts
   only its own rows) runs the same way, then `reset role;` gives the superuser back: Citus
   refuses the tenants' calls on placements the superuser modified in the transaction. The
   queue's tables are the coordinator's own (no placements), and are left alone; and the
   superuser's raw `update ai.agent_jobs` after a `reset role;` runs as the superuser (`set local
   role none;`, then the owner's role again): its triggers let the superuser move a job where
   they refuse the owner, and the table has no placements. Not one that sets IN_PROGRESS or a
   fencing token: that writes the thread's fence on its shard (ai.distribute()'s trigger), which
   the owner's connections read and write, so it stays the owner's.
3. A temporary table a tenant makes (`create temp table r as select ... from ai.f(...);`) is
   granted to public after its statement: the superuser reads it on one server, and its reads
   run as the owner here.
4. On a formation, `select is((select count(*) from ai.t where thread_id =
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
AS_SUPERUSER = (
    "do $as_superuser$ declare v text := coalesce(current_setting($$ai.acting_owner$$, true), $$$$);"
    " begin perform set_config($$ai.acting_owner$$, $$$$, true); perform ai._formation_caller(session_user);"
    " perform set_config($$ai.acting_owner$$, v, true); end $as_superuser$; set local role agent_state_owner;"
)
RESET_ROLE = re.compile(r"(?m)^reset role;")
# a line that changes the role: the superuser's (`reset role;`) or another's
ROLE_LINE = re.compile(r"(?m)^(?:reset role;|set (?:local )?role [^;]+;)")
SUPERUSER_DELETE = re.compile(r"(?m)^delete from (?:ai|ai_archive)\.(\w+)\b[^;]*;")
# ai.distribute() leaves these on the coordinator as plain tables: no placements to conflict on
JOBS_UPDATE = re.compile(r"(?m)^update ai\.agent_jobs\b[^;]*;")
FENCE_MOVES = re.compile(r"IN_PROGRESS|fencing_token\s*=")
TEMP_TABLE = re.compile(r"(?m)^create temp(?:orary)? table (?:if not exists )?(\w+)\b[^;]*;[ \t]*$")
COORDINATOR_TABLES = {
    "agent_jobs",
    "agent_jobs_archive",
    "job_fences",
    "notify_key",
    "queue_workers",
    "lease_timelines",
}


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


def superuser_deletes(text: str) -> str:
    """The superuser's deletes from distributed tables run as the carried superuser, as the owner;
    its raw updates of the coordinator's jobs after a `reset role;` run as the superuser."""
    superuser = True
    reset = False  # after a `reset role;`: the owner's role in the owner-reads mode
    parts: list[str] = []
    pos = 0
    events = [*ROLE_LINE.finditer(text), *SUPERUSER_DELETE.finditer(text), *JOBS_UPDATE.finditer(text)]
    for m in sorted(events, key=lambda m: m.start()):
        if m.re is ROLE_LINE:
            superuser = reset = m.group(0) == "reset role;"
        elif m.re is JOBS_UPDATE:
            if reset and not FENCE_MOVES.search(m.group(0)):
                parts += [text[pos : m.start()], "set local role none; ", m.group(0), " ", AS_SUPERUSER]
                pos = m.end()
        elif superuser and not reset and m.group(1) not in COORDINATOR_TABLES:
            parts += [text[pos : m.start()], AS_SUPERUSER, " ", m.group(0), " reset role;"]
            pos = m.end()
    parts.append(text[pos:])
    return "".join(parts)


def owner_reads(text: str) -> str:
    """The file with the superuser's steps over the owner's connections (rewrites 1 to 3)."""
    text = TEMP_TABLE.sub(lambda m: f"{m.group(0)} grant select on pg_temp.{m.group(1)} to public;", text)
    return RESET_ROLE.sub(lambda m: "reset role; " + AS_SUPERUSER, superuser_deletes(text))


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
        path.write_text(rewrite(owner_reads(path.read_text())))


if __name__ == "__main__":
    main(sys.argv[1])
