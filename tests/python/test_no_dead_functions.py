"""No dead code in schema ai (issue 22): every internal function (ai._*) is used by the schema
itself, or docs/security.md names it as kept on purpose.

Used means: another function of schema ai or ai_archive names it in its body (pg_proc.prosrc), or a
catalog object depends on it (a CHECK constraint, a trigger, a column default, a view, a policy:
pg_depend). Comments do not count: ai._lock_thread lived on for a release after claim_job and
claim_jobs wrote its lock into their query, only their comments naming it.
"""

from __future__ import annotations

import re
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[2]

UNUSED = r"""
select p.oid::regprocedure::text
from pg_proc p
where p.pronamespace = 'ai'::regnamespace and p.proname ~ '^_'
  -- named in the code of another function, comments left out (a comment naming it is no call)
  and not exists (select from pg_proc q
                  where q.pronamespace in ('ai'::regnamespace, 'ai_archive'::regnamespace) and q.oid <> p.oid
                    and regexp_replace(regexp_replace(q.prosrc, '/\*.*?\*/', '', 'g'), '--[^\n]*', '', 'g')
                        ~ ('\m' || p.proname || '\M'))
  -- or used by a catalog object: a CHECK, a trigger, a default, a view, a policy
  and not exists (select from pg_depend d
                  where d.refclassid = 'pg_proc'::regclass and d.refobjid = p.oid
                    and d.classid in ('pg_constraint'::regclass, 'pg_trigger'::regclass, 'pg_attrdef'::regclass,
                                      'pg_rewrite'::regclass, 'pg_policy'::regclass))
order by 1
"""


def _kept_on_purpose() -> set[str]:
    """The names docs/security.md lists under 'Internal functions kept on purpose'."""
    text = (ROOT / "docs" / "security.md").read_text()
    match = re.search(r"^## Internal functions kept on purpose\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, "docs/security.md has no section 'Internal functions kept on purpose'"
    return set(re.findall(r"`ai\.(_[a-z0-9_]+)\(", match.group(1)))


def test_every_internal_function_is_used_or_kept_on_purpose(dsn: str) -> None:
    with psycopg.connect(dsn) as conn:
        unused = [name for (name,) in conn.execute(UNUSED)]
    kept = _kept_on_purpose()
    dead = [name for name in unused if name.split("(")[0].removeprefix("ai.") not in kept]
    assert dead == [], (
        "internal functions nothing calls (drop them, or say in docs/security.md, "
        "'Internal functions kept on purpose', why they stay): " + ", ".join(dead)
    )


def test_what_docs_security_keeps_on_purpose_exists_and_is_not_used(dsn: str) -> None:
    """The list stays short and true: each name exists, and is still unused (else it needs no excuse)."""
    with psycopg.connect(dsn) as conn:
        unused = {name.split("(")[0].removeprefix("ai.") for (name,) in conn.execute(UNUSED)}
        existing = {
            name for (name,) in conn.execute("select proname from pg_proc where pronamespace = 'ai'::regnamespace")
        }
    kept = _kept_on_purpose()
    assert kept - existing == set(), "docs/security.md keeps functions the schema does not have"
    assert kept - unused == set(), "docs/security.md keeps functions that are used after all: take them off the list"
