"""begin_side_effect returning one ai.side_effect_begin against v0.1.0's table of one row, on one
server (docs/benchmarks.md, "The NULL-proof delegated write").

In a scratch copy of the private test database (`make test-db` first; `eval "$(make -s env)"`):
the function as it was at REV (`git show REV:deploy/side_effects_functions.sql`, renamed
ai.begin_side_effect_ab_old, owned by the schema owner) beside the deployed one; tenant_a calls
each N times in alternation, on a new key (a reservation) and on a held key ('busy'); medians of
the client's wall clock. The scratch database is dropped after.

    .venv/bin/python scripts/begin_side_effect_shape_ab.py [REV] [N]
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import time
import uuid

import psycopg

SCRATCH = "agent_state_ab_begin"


def old_definition(rev: str) -> str:
    deployed = subprocess.run(
        ["git", "show", f"{rev}:deploy/side_effects_functions.sql"], check=True, capture_output=True, text=True
    ).stdout
    found = re.search(r"^create or replace function ai\.begin_side_effect\(.*?^\$\$;", deployed, re.M | re.S)
    assert found is not None, "no begin_side_effect at that revision"
    return (
        found.group(0)
        .replace("ai.begin_side_effect(", "ai.begin_side_effect_ab_old(")
        .replace("begin_side_effect.", "begin_side_effect_ab_old.")
    )


def main(rev: str, n: int) -> None:
    with psycopg.connect("dbname=postgres", autocommit=True) as admin:
        admin.execute(f"drop database if exists {SCRATCH} with (force)")
        admin.execute(f"create database {SCRATCH} template agent_state_test")
    try:
        with psycopg.connect(f"dbname={SCRATCH}", autocommit=True) as owner:
            owner.execute("set role agent_state_owner")
            owner.execute(old_definition(rev))
            owner.execute(
                "grant execute on function"
                " ai.begin_side_effect_ab_old(text,text,jsonb,bigint,bigint,interval) to ai_user"
            )
        calls = {
            "one row": "select * from ai.begin_side_effect(%s, %s, '{}')",
            "table": "select * from ai.begin_side_effect_ab_old(%s, %s, '{}')",
        }
        with psycopg.connect(f"dbname={SCRATCH} user=tenant_a", autocommit=True) as conn:
            t = f"ab-{uuid.uuid4().hex[:8]}"
            conn.execute("select ai.create_session(%s)", (t,))
            for path in ("a new key", "a held key"):
                took: dict[str, list[float]] = {name: [] for name in calls}
                for i in range(n):
                    for name in sorted(calls, reverse=bool(i % 2)):
                        key = f"{name}-{i}" if path == "a new key" else f"{name}-held"
                        start = time.perf_counter()
                        conn.execute(calls[name], (t, key)).fetchone()
                        took[name].append((time.perf_counter() - start) * 1000)
                print(
                    f"{path}: "
                    + ", ".join(f"{k} {statistics.median(v):.4f} ms" for k, v in took.items())
                    + f" ({n} each)"
                )
    finally:
        with psycopg.connect("dbname=postgres", autocommit=True) as admin:
            admin.execute(f"drop database if exists {SCRATCH} with (force)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "a6871c3", int(sys.argv[2]) if len(sys.argv) > 2 else 3000)
