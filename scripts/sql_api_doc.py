"""Prints docs/sql-api.md from the catalog: every public function of schema ai with its comment.

Usage: python scripts/sql_api_doc.py DSN > docs/sql-api.md   (make docs does it)
A test regenerates it from the test database and compares it with the committed file.
"""

from __future__ import annotations

import sys

import psycopg

QUERY = """
select p.proname,
       p.prokind,
       pg_get_function_identity_arguments(p.oid) as identity,
       pg_get_function_arguments(p.oid) as arguments,
       pg_get_function_result(p.oid) as result,
       coalesce(obj_description(p.oid, 'pg_proc'), '') as comment
from pg_proc p
join pg_namespace n on n.oid = p.pronamespace
where n.nspname = 'ai' and p.proname !~ '^_'
order by p.proname, identity
"""


def render(dsn: str) -> str:
    lines = [
        "# SQL API reference",
        "",
        "Generated from the catalog by `make docs` (scripts/sql_api_doc.py): every public function of",
        "schema `ai`, its signature and its `COMMENT ON FUNCTION`. Functions whose names start with `_`",
        "are internal. A procedure (`procedure ai.name(...)`) returns nothing and is run with `CALL`.",
        "Error codes: [errors.md](errors.md).",
        "",
    ]
    with psycopg.connect(dsn) as conn:
        for name, kind, _identity, arguments, result, comment in conn.execute(QUERY):
            if kind == "p":  # pg_get_function_result is NULL for a procedure
                signature = [f"procedure ai.{name}({arguments})"]
            else:
                signature = [f"ai.{name}({arguments})", f"  returns {result}"]
            lines += [f"## `ai.{name}`", "", "```sql", *signature, "```", ""]
            lines += [comment, ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(render(sys.argv[1]))
