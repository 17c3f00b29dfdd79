"""Every bench script runs end to end, as `make bench` runs it, at its smallest size (issue 20).

Each bench/*.sh makes a database of its own on the server of DATABASE_URL (bench/common.bash), deploys
the schema as its owner and runs its fixtures: here DATABASE_URL is the test server's superuser
URL with the deploying role of `make` (AGENT_STATE_DEPLOY_USER), as on the private cluster, and
once more as a user's server is: a role with CREATEDB and CREATEROLE and no superuser, which
deploys itself. Sizes come from each script's environment variables; each run is bounded by a
timeout. Asserted: exit 0, and the table or file each prints or writes. Figures are not checked
(never timings in tests). Not in the pooled run (the scripts make databases of their own and
connect to them directly; conftest.py NOT_POOLED).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"

SMALL = {
    "BENCH_SECONDS": "1",
    "BENCH_REPEATS": "1",
    "BENCH_CPU_REPEATS": "1",
    # capacity: one short point per stack, one run length
    "BENCH_CAPACITY_LEVELS": "2",
    "BENCH_CAPACITY_NODES": "2",
    "BENCH_CAPACITY_WARMUP": "1",
    "BENCH_CAPACITY_WINDOW": "2",
    "BENCH_CAPACITY_POOL": "2",
    "BENCH_CAPACITY_WAL_LEVEL": "2",
    "BENCH_CAPACITY_OP_REPEAT": "2",
    "BENCH_CAPACITY_OP_ROUNDS": "1",
    # queue and retention
    "BENCH_QUEUE_SINGLE": "20",
    "BENCH_QUEUE_BATCHES": "1",
    "BENCH_QUEUE_FINISHED": "200",
    "BENCH_QUEUE_PYJOBS": "20",
    "BENCH_QUEUE_CLIENTS": "1",
    "BENCH_QUEUE_PROCESSES": "1",
    "BENCH_RETENTION_SESSIONS": "5",
    "BENCH_RETENTION_QUEUE": "5000",  # more than 2 clients claim in BENCH_SECONDS
    "BENCH_RETENTION_JOB_SIZES": "1000 2000",  # the per-session cost against the jobs tables' size
    "BENCH_RETENTION_SCALE_SESSIONS": "5",
    "BENCH_TENANT_ROWS": "2000",
    # the others
    "BENCH_COMPACTION_MESSAGES": "200",
    "BENCH_CALLS": "20",
    "BENCH_STREAM_CHUNKS": "50",
    "BENCH_CHAIN": "20",
    "BENCH_MEMORY_ITEMS": "200",
    "BENCH_THREADS": "1",
    "BENCH_GROWTH_STEPS": "3",
    "BENCH_GROWTH_MODES": "plain",
    "BENCH_GROWTH_COMPRESSIONS": "pglz",
    "BENCH_READ_STEPS": "20",
    "BENCH_READ_CROWDS": "1000",
    "BENCH_READ_RUNS": "1",
    "BENCH_READ_INVOKES": "3",
    "BENCH_READ_DEPTHS": "2",
    "BENCH_READ_DEPTH_INVOKES": "3",
    "BENCH_TP_JOBS": "40",
    "BENCH_TP_THREADS": "8",
    "BENCH_TP_LEVELS": "2",
    "BENCH_TRACING_ROUNDS": "1",
    "BENCH_TRACING_JOBS": "20",
    "BENCH_TRACING_STEPS": "3",
    # citus: never makes a formation here (tests/citus/test_bench.py runs it on make test-citus's)
    "BENCH_CITUS_MAKE": "0",
    "BENCH_CITUS_LEVEL": "2",
    "BENCH_CITUS_NODES": "2",
    "BENCH_CITUS_WARMUP": "1",
    "BENCH_CITUS_WINDOW": "2",
    "FAIR_BACKLOG": "300",
    "FAIR_CLAIMS": "20",
}

# script -> (timeout s, text its output must hold)
SCRIPTS = {
    "capacity.sh": (180, "lease renewal HOT share"),
    "checkpoint_growth.sh": (120, "bytes by table"),
    "citus.sh": (180, "citus bench"),
    "checkpoint_reads.sh": (240, "durable runs"),
    "checkpoints.sh": (120, "bytes on disk per checkpoint"),
    "compaction.sh": (90, "context_window calls per second"),
    "connections.sh": (90, "append_message (new key)"),
    "fairness.sh": (240, "another tenant's job"),
    "memory.sh": (120, "search filter ($gt, one user)"),
    "queue.sh": (240, "Python workers"),
    "retention.sh": (120, "archive_sessions rows moved"),
    "sessions.sh": (90, "appends per second"),
    "streams.sh": (90, "LISTEN/NOTIFY"),
    "tenant_reads.sh": (120, "pending_approvals"),
    "throughput.sh": (240, "queue throughput"),
    "tracing.sh": (180, "tracing cost"),
    "typescript.sh": (120, "AgentStateSaver (TS, RLS on)"),
}


def test_every_bench_script_is_covered() -> None:
    tools = {"run_all.sh", "schema_ab.sh", "security_ab.sh", "capacity_ab.sh"}  # run on trees or revisions named
    on_disk = {p.name for p in BENCH.glob("*.sh")} - tools
    assert on_disk == set(SCRIPTS)


def _admin_url(dsn: str) -> tuple[str, dict[str, str]]:
    """The test server's URL as a libpq URL the scripts can extend (?user=...), and the PG*
    environment that names its host and port."""
    params: dict[str, Any] = conninfo_to_dict(dsn)
    host = params.get("host") or os.environ.get("PGHOST", "")
    port = params.get("port") or os.environ.get("PGPORT", "")
    user = params.get("user") or os.environ.get("PGUSER", "")
    return f"postgresql://{user}@/{params.get('dbname', 'postgres')}", {"PGHOST": host, "PGPORT": port, "PGUSER": user}


def run_bench(
    script: str, url: str, extra_env: dict[str, str], tmp_path: Path, unset: tuple[str, ...] = (), **more: str
) -> str:
    timeout, expected = SCRIPTS.get(script, (180, ""))
    env = {**os.environ, **SMALL, **extra_env, **more, "DATABASE_URL": url, "VPY": str(ROOT / ".venv/bin/python")}
    # The database test-db deployed this revision into (as the deploy user, who owns it): each
    # script copies it instead of deploying again (bench/common.bash); one that deploys as
    # another role (the non-superuser case below) still deploys.
    if os.environ.get("AGENT_STATE_TEST_TEMPLATE"):
        env["BENCH_TEMPLATE"] = os.environ["AGENT_STATE_TEST_TEMPLATE"]
    for name in unset:
        env.pop(name, None)
    env.setdefault("BENCH_CAPACITY_OUT", str(tmp_path / "results.json"))
    env.setdefault("BENCH_CAPACITY_SVG", str(tmp_path / "capacity.svg"))
    env.setdefault("BENCH_CITUS_OUT", str(tmp_path / "citus.json"))
    env.pop("POOLER_URL", None)
    done = subprocess.run([str(BENCH / script)], env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{script} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert expected in done.stdout, f"{script}: no {expected!r} in\n{done.stdout[-3000:]}"
    return done.stdout


def _can_make_databases(dsn: str) -> bool:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "select rolsuper or (rolcreatedb and rolcreaterole) from pg_roles where rolname = current_user"
        ).fetchone()
    return bool(row and row[0])


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_bench_script_runs_at_its_smallest_size(script: str, direct_dsn: str, tmp_path: Path) -> None:
    if not _can_make_databases(direct_dsn):
        pytest.skip("the test role may not create databases and roles (bench/common.bash)")
    url, env = _admin_url(direct_dsn)
    out = run_bench(script, url, env, tmp_path)
    if script == "capacity.sh":
        data = json.loads((tmp_path / "results.json").read_text())
        assert {r["stack"] for r in data["results"]} == {"ours", "stock", "stock-saver-per-run"}
        assert (tmp_path / "results.md").read_text().count("stock-saver-per-run") > 1
        assert (tmp_path / "capacity.svg").read_text().startswith("<svg")
        assert "Ratios against stock-saver-per-run" in out


def test_schema_ab_against_this_revision(direct_dsn: str, tmp_path: Path) -> None:
    if not _can_make_databases(direct_dsn):
        pytest.skip("the test role may not create databases and roles (bench/common.bash)")
    url, env = _admin_url(direct_dsn)
    out = run_bench("schema_ab.sh", url, env, tmp_path, BASE_REV="HEAD", BENCH_QUEUE_SINGLE="20")
    assert "ai.put_checkpoint" in out


def test_capacity_on_a_server_of_ones_own_without_a_superuser(direct_dsn: str, tmp_path: Path) -> None:
    """DATABASE_URL of a role with CREATEDB and CREATEROLE only: it deploys the schema itself (no
    AGENT_STATE_DEPLOY_USER), makes the fixtures' roles and the stock schema; no pg_walinspect."""
    role = "bench_url_admin"
    with psycopg.connect(direct_dsn, autocommit=True) as admin:
        if not admin.execute("select rolsuper from pg_roles where rolname = current_user").fetchone()[0]:  # type: ignore[index]
            pytest.skip("needs a superuser to make the role")
        admin.execute(
            sql.SQL(
                "do $$ begin if not exists (select from pg_roles where rolname = {}) then"
                " create role {} login createdb createrole; end if; end $$"
            ).format(sql.Literal(role), sql.Identifier(role))
        )
    url, env = _admin_url(make_conninfo(direct_dsn, user=role))
    run_bench("capacity.sh", url, env, tmp_path, unset=("AGENT_STATE_DEPLOY_USER",))
    data = json.loads((tmp_path / "results.json").read_text())
    assert all(r["errors"] == 0 for r in data["results"]), [r["error_kinds"] for r in data["results"]]


def test_a_role_that_may_not_make_databases_is_told_in_one_line(direct_dsn: str, tmp_path: Path) -> None:
    url, env = _admin_url(make_conninfo(direct_dsn, user="tenant_a"))
    done = subprocess.run(
        [str(BENCH / "sessions.sh")],
        env={**os.environ, **env, "DATABASE_URL": url},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "agent_state_bench_sessions: the role tenant_a of DATABASE_URL must be a superuser or have CREATEDB and"
        " CREATEROLE (it makes the bench's database and roles)"
    ]
