"""agent_state.schema: the bundle shipped in the package, status() and deploy() on empty, bundled,
sqitch-deployed and foreign databases, and the documented move of a bundled database to sqitch."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
import tarfile
import threading
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from catalog import catalog
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from sql_objects import offenders, plan_units, read_plan
from test_migrations import DEPLOY_USER, _env, _run

from agent_state import schema
from agent_state.langgraph import AgentStateSaver, AsyncAgentStateSaver

ROOT = Path(__file__).resolve().parents[2]
LAST = schema.bundle_version()


@pytest.fixture
def empty_db(dsn: str) -> Iterator[Any]:
    """Makes empty databases owned by a role (the deploying role by default: a non-superuser, as
    docs/security.md requires); each call returns a DSN that connects as that owner."""
    made: list[str] = []
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(
            sql.SQL(
                "do $$ begin if not exists (select from pg_roles where rolname = {}) then"
                " create role {} login createrole; end if; end $$"
            ).format(sql.Literal(DEPLOY_USER), sql.Identifier(DEPLOY_USER))
        )

        def make(owner: str = DEPLOY_USER) -> str:
            name = f"agent_state_bundle_{uuid.uuid4().hex[:10]}"
            admin.execute(sql.SQL("create database {} owner {}").format(sql.Identifier(name), sql.Identifier(owner)))
            made.append(name)
            params: dict[str, Any] = conninfo_to_dict(dsn)
            params["dbname"] = name
            params["user"] = owner
            return make_conninfo(**params)

        yield make
        for name in made:
            admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


def _as(url: str, user: str) -> str:
    params: dict[str, Any] = conninfo_to_dict(url)
    params["user"] = user
    return make_conninfo(**params)


def _sqitch_env(url: str) -> dict[str, str]:
    return _env(url, conninfo_to_dict(url)["dbname"])


def test_the_package_carries_the_same_bundle_as_sql_ai_sql() -> None:
    assert schema.bundle_sql() == (ROOT / "sql" / "ai.sql").read_text(), "run `make bundle`"
    plan = [line.split()[0] for line in (ROOT / "sqitch.plan").read_text().splitlines() if line[:1].isalpha()]
    assert list(dict.fromkeys(plan)) == schema.bundle_changes()  # a reworked change once
    assert plan[-1] == LAST


def test_the_package_copy_is_a_build_product_not_a_file_in_git() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "python/agent_state/sql"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert tracked.stdout == "", "python/agent_state/sql/ai.sql is made by the build (python/setup.py), not committed"


def _built(command: list[str], out: Path, pattern: str) -> Path:
    """Runs a build into ``out`` and returns the one file it made."""
    done = subprocess.run([*command, str(out)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    (made,) = out.glob(pattern)
    return made


def test_a_built_wheel_and_sdist_carry_the_same_bytes_as_sql_ai_sql(tmp_path: Path) -> None:
    """The build copies sql/ai.sql into the package (python/setup.py): the wheel built from the
    checkout, the sdist, and the wheel built from the sdist hold it byte for byte."""
    source = tmp_path / "checkout"
    shutil.copytree(ROOT / "python", source / "python", ignore=shutil.ignore_patterns("*.egg-info", "build", "dist"))
    (source / "sql").mkdir()
    shutil.copyfile(ROOT / "sql" / "ai.sql", source / "sql" / "ai.sql")
    (source / "LICENSE").write_bytes((ROOT / "LICENSE").read_bytes())
    expected = (ROOT / "sql" / "ai.sql").read_bytes()
    wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q"]
    built = _built([*wheel, str(source / "python"), "-w"], tmp_path / "wheel", "agent_state-*.whl")
    with zipfile.ZipFile(built) as archive:
        assert archive.read("agent_state/sql/ai.sql") == expected
    sdist = [sys.executable, "-m", "build", "--sdist", str(source / "python"), "--outdir"]
    tarball = _built(sdist, tmp_path / "sdist", "agent_state-*.tar.gz")
    with tarfile.open(tarball) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("/agent_state/sql/ai.sql"))
        packed = archive.extractfile(member)
        assert packed is not None and packed.read() == expected
    built = _built([*wheel, str(tarball), "-w"], tmp_path / "from-sdist", "agent_state-*.whl")
    with zipfile.ZipFile(built) as archive:
        assert archive.read("agent_state/sql/ai.sql") == expected


def test_setup_on_an_empty_database_deploys_the_bundle_with_sqitchs_catalog(empty_db: Any) -> None:
    by_setup, by_sqitch = empty_db(), empty_db()
    with AgentStateSaver.from_conn_string(by_setup) as checkpointer:
        assert schema.status(checkpointer.conn) == schema.SchemaStatus(False, None, [], None, schema.bundle_changes())
        status = checkpointer.setup()
        assert (status.deployed, status.version, status.source, status.compatible) == (True, LAST, "bundle", True)
        assert status.changes == schema.bundle_changes() and status.missing == []
        assert checkpointer.setup() == status  # idempotent
    _run(["sqitch", "--quiet", "deploy", "db:pg:"], _sqitch_env(by_sqitch))
    bundled, deployed = catalog(_sqitch_env(by_setup)), catalog(_sqitch_env(by_sqitch))
    # The one difference: the bundle's version marker in the schema's comment.
    marker = f" (installed from the bundle up to change {LAST})"
    assert marker in bundled
    assert bundled.replace(marker, "") == deployed


def test_setup_works_as_a_non_superuser_that_owns_the_database(dsn: str, empty_db: Any) -> None:
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(
            "do $$ begin if not exists (select from pg_roles where rolname = 'agent_state_deployer') then"
            " create role agent_state_deployer login nosuperuser nocreaterole nocreatedb; end if; end $$"
        )
    url = empty_db(owner="agent_state_deployer")  # ai_user and ai_service exist on the cluster already
    with AgentStateSaver.from_conn_string(_as(url, "agent_state_deployer")) as checkpointer:
        assert checkpointer.setup().version == LAST
    # Tenants work in it at once, and their setup() only checks.
    with AgentStateSaver.from_conn_string(_as(url, "tenant_a")) as checkpointer:
        assert checkpointer.setup().compatible
        checkpointer.put_writes(
            {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}}, [("a", 1)], "task"
        )


def test_two_setups_racing_on_an_empty_database_deploy_once(empty_db: Any) -> None:
    url = empty_db()
    results: list[Any] = []

    def setup() -> None:
        try:
            with AgentStateSaver.from_conn_string(url) as checkpointer:
                results.append(checkpointer.setup().compatible)
        except Exception as error:
            results.append(error)

    runners = [threading.Thread(target=setup) for _ in range(2)]
    for r in runners:
        r.start()
    for r in runners:
        r.join(120)
    assert results == [True, True]


def test_status_of_a_sqitch_deployed_database_reads_the_registry(dsn: str, role_dsn: Any) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        found = schema.status(conn)
    assert (found.source, found.version, found.compatible, found.missing) == ("sqitch", LAST, True, [])
    assert found.changes == schema.bundle_changes()
    # A tenant may not read sqitch's registry: the functions the package calls decide.
    with psycopg.connect(role_dsn("tenant_a"), autocommit=True) as tenant:
        found = schema.status(tenant)
        assert (found.deployed, found.source, found.compatible) == (True, None, True)
        assert AgentStateSaver(tenant).setup() == found


def test_a_role_without_an_agent_state_grant_is_told_so_not_given_a_permission_error(role_dsn: Any) -> None:
    with psycopg.connect(role_dsn("outsider"), autocommit=True) as conn:  # neither ai_user nor ai_service
        found = schema.status(conn)
        assert (found.deployed, found.compatible) == (True, False)
        with pytest.raises(schema.SchemaError, match="grant the role ai_user or ai_service"):
            AgentStateSaver(conn).setup()


def test_a_role_that_may_not_create_the_schema_gets_an_error_naming_what_to_run(empty_db: Any) -> None:
    url = empty_db()
    with psycopg.connect(_as(url, "tenant_a"), autocommit=True) as conn:
        with pytest.raises(schema.SchemaError, match=r"sqitch deploy.*psql -v ON_ERROR_STOP=1 -f sql/ai\.sql"):
            AgentStateSaver(conn).setup()
        assert not schema.status(conn).deployed, "nothing half-written"


def test_an_older_bundle_install_is_refused_with_the_upgrade_commands(empty_db: Any) -> None:
    url = empty_db()
    with psycopg.connect(url, autocommit=True) as conn:
        schema.deploy(conn)
        # a change before the bundle's version (the plan's last change): not the version itself,
        # which a change added after the release tag follows in the bundle's order
        older = next(c for c in reversed(schema.bundle_changes()[:-1]) if c != schema.bundle_version())
        conn.execute(
            sql.SQL("comment on schema ai is {}").format(
                sql.Literal(f"agent-state (installed from the bundle up to change {older})")
            )
        )
        found = schema.status(conn)
        ours = schema.bundle_changes()
        assert (found.version, found.missing, found.compatible) == (older, ours[ours.index(older) + 1 :], False)
        with pytest.raises(schema.SchemaError, match=f"sqitch deploy --log-only --to {older}"):
            schema.deploy(conn)


def test_a_bundled_database_moves_to_sqitch_as_docs_upgrading_md_says(empty_db: Any) -> None:
    url = empty_db()
    with psycopg.connect(url, autocommit=True) as conn:
        version = schema.deploy(conn).version
    env = _sqitch_env(url)
    # A plain sqitch deploy fails on the bundled schema...
    failed = subprocess.run(["sqitch", "deploy", "db:pg:"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert failed.returncode != 0 and 'schema "ai" already exists' in failed.stdout + failed.stderr
    # ...the documented path: record the installed changes without running them, then deploy.
    assert version == LAST
    _run(["sqitch", "--quiet", "deploy", "--log-only", "--to", schema.bundle_sqitch_change(), "db:pg:"], env)
    _run(["sqitch", "--quiet", "deploy", "--verify", "db:pg:"], env)
    _run(["sqitch", "--quiet", "verify", "db:pg:"], env)
    with psycopg.connect(url, autocommit=True) as conn:
        found = schema.status(conn)
    assert (found.source, found.version, found.compatible) == ("sqitch", LAST, True)


def test_async_deploy_and_status_on_an_empty_database(empty_db: Any) -> None:
    url = empty_db()

    async def run() -> None:
        async with await psycopg.AsyncConnection.connect(url) as conn:  # not autocommit
            assert not (await schema.astatus(conn)).deployed
            assert (await schema.adeploy(conn)).compatible
            assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        async with AsyncAgentStateSaver.from_conn_string(url) as checkpointer:
            assert (await checkpointer.setup()).version == LAST

    asyncio.run(run())


def test_setup_deploys_on_a_pipeline_a_non_autocommit_connection_and_a_pool(empty_db: Any) -> None:
    from psycopg_pool import ConnectionPool

    # Pipeline mode: the bundle runs on a connection of its own (a script cannot be pipelined).
    with AgentStateSaver.from_conn_string(empty_db(), pipeline=True) as checkpointer:
        assert checkpointer.setup().version == LAST
    # Outside autocommit: installed and committed, nothing left open.
    url = empty_db()
    with psycopg.connect(url) as conn:
        assert AgentStateSaver(conn).setup().version == LAST
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    with psycopg.connect(url, autocommit=True) as other:
        assert schema.status(other).compatible
    # A pool.
    with ConnectionPool(empty_db(), min_size=1, max_size=1, open=True) as pool:
        assert AgentStateSaver(pool).setup().version == LAST


def _bundle_sections(text: str) -> list[tuple[str, str]]:
    parts = re.split(r"(?m)^-- ===== change: ([a-z_0-9]+) =====$", text)
    return list(zip(parts[1::2], parts[2::2], strict=True))


def test_the_bundle_holds_each_change_once_and_each_object_once() -> None:
    """Each change's current deploy script, once (a reworked change at its first place); so the
    bundle breaks the one-definition rule exactly where the deploy scripts do
    (test_one_definition.py), and defines nothing twice besides."""
    sections = _bundle_sections((ROOT / "sql" / "ai.sql").read_text())
    names = [name for name, _ in sections]
    plan_text = (ROOT / "sqitch.plan").read_text()
    assert names == list(dict.fromkeys(e.change for e in read_plan(plan_text) if e.tag is None))
    units, _ = plan_units(plan_text, lambda change: (ROOT / "deploy" / f"{change}.sql").read_text())
    assert offenders(sections) == offenders(units)
