"""Shared fixtures: the test database `make test` prepared (deployed with sqitch, test roles made).

AGENT_STATE_TEST_DSN names it. Tests connect as the superuser for set-up and as the login roles
tenant_a, tenant_b (members of ai_user) and app_service (member of ai_service) to exercise RLS.

`make test` runs the suite directly, then again through a real PgBouncer in transaction pooling
(scripts/pgbouncer.sh), with AGENT_STATE_TEST_DSN naming the pooler and
AGENT_STATE_TEST_DIRECT_DSN the server: that second run (``--pooled``) holds only the tests whose
connections the pooler changes (is_pooled, POOLED_ENV and NOT_POOLED below). A test that needs a
real session (LISTEN, a session-level
``set_config``, advisory session locks, SET ROLE across statements) says so with
``@pytest.mark.session_features("why")`` and then always connects directly: those features do not
work through a transaction pooler, by design, and the library does not rely on them.
AGENT_STATE_TEST_POOLER_DSN names the pooler in both runs, for the tests written for it.

Parallel runs (pytest-xdist, ``-n N``): each worker gets a database of its own, copied from the
test database (``create database ... template``, which copies the deployed schema and the test
roles' grants in well under a second instead of deploying again), and the AGENT_STATE_TEST_*DSN
variables of the worker name it, so a test sees one database whatever it reads. Roles and the
server itself are shared by the workers, so the tests that touch those run alone: the parts and
tiers below.

Parts (``--part``): ``parallel`` (under xdist), ``beside`` (in lanes, each a process of its own
running one test at a time, at the same time as the parallel part), ``serial`` (alone, after
both), ``all`` (default). Every test is in exactly one of them: SERIAL below names the files that
must run alone (they restart or kill the server, end every backend of a shared role, time lock
waits); BESIDE the files that must not run beside a test of their own kind (they make databases
and cluster-wide roles of fixed names, or read a whole database) but may share the server with
the parallel part, and their lanes (``--lane``); everything else is parallel.
Tiers (``--tier``): ``check`` (`make check`, the contributor's inner loop) leaves out the tests
in SLOW; ``full`` (default, `make test`) runs every test. A test therefore cannot fall out of
`make test`: the parts are complements, and the tiers only ever remove from `check`.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from agent_state import Client

HERE = Path(__file__).resolve().parent

# Files whose tests must run alone (`make test-python` runs them after the parallel part, without
# xdist), and why. A new file is parallel unless it is named here.
SERIAL = {
    "test_database_crash.py": "kills the postmaster: every other worker's connections die",
    "test_queue_outage.py": "stops the server for longer than a lease: every other worker's connections die",
    "test_retry.py": "restarts the server, ends every backend of the shared tenant roles",
    "test_dropped_connection.py": "ends every backend of tenant_a, a role every worker uses",
    "test_upgrade_under_load.py": "times lock waits of a deploy under a load of workers",
    "test_worker_outage.py": "stops the server for 20 s: every other worker's connections die",
}

# Files that run beside the parallel part (scripts/pytest-parts.sh), in lanes: a process per
# lane, one test at a time, the lanes at the same time as the parallel part and as each other.
# They make databases or cluster-wide roles of fixed names ("if not exists, create": two at once
# would race), so two files that make the same ones share a lane; nothing of theirs is shared with
# the parallel part's tests or another lane's. Each lane works on a database of its own, copied
# from the template as a worker's is (its AGENT_STATE_TEST_LANE). (pytest-xdist's --dist loadgroup
# would keep a file on one worker, but it renames items through Node._nodeid, which pytest 9 no
# longer reads: no group is formed.) file: (lane, why it is not parallel)
BESIDE = {
    "test_bench_scripts.py": ("bench", "the bench scripts' databases and roles (bench/common.bash)"),
    "test_migrations.py": ("deploy", "creates the cluster-wide role agent_state_deployer"),
    "test_schema_bundle.py": ("deploy", "creates the cluster-wide role agent_state_deployer"),
    "test_upgrade.py": ("upgrade", "makes databases from the templates of deployed_templates (minutes of sqitch)"),
    "test_own_server_url.py": ("upgrade", "creates the cluster-wide roles own_server_owner and own_server_bypass"),
    # The console's browser tests run on a server of their own that asks for passwords
    # (password_server.py: initdb, a deploy, a PgBouncer), with a headless Chromium: heavy, so
    # beside the parallel workers rather than among them.
    "test_console.py": ("upgrade", "a server of its own and a headless Chromium (a browser drives every page)"),
}


# Left out of `make check` (the check tier; `make test` runs them): a file, or one test of it
# (``file::test``, every parametrisation), each taking tens of seconds or more on a 2-core machine
# (`pytest --durations`, docs/benchmarks.md "Test run time"), or restarting the server.
SLOW = {
    "test_bench_scripts.py",  # each bench script end to end
    "test_database_crash.py",
    "test_queue_outage.py",  # stops and starts the server
    "test_retry.py",
    "test_worker_outage.py",  # 20 s outages, and a 35 s one before a worker starts
    "test_upgrade.py",
    "test_upgrade_under_load.py",
    "test_migrations.py",
    "test_schema_bundle.py",
    "test_package_build.py",  # a wheel built in an isolated build environment
    "test_readme_install.py",  # a fresh clone and virtualenv, the README's pip install (about a minute)
    "test_first_contact.py::test_make_demo_with_a_superusers_url_deploys_with_verify_as_a_nologin_owner_and_runs_the_demo",
    "test_own_server_url.py",
    "test_console.py",  # a headless Chromium drives every page
    "test_console_hostile.py::test_hostile_values_in_every_parameter_of_every_page",  # ~1,000 requests
    "test_cli_hostile.py::test_every_argument_of_every_subcommand_takes_hostile_values",  # ~1,000 runs
    "test_queue_crash.py",  # real processes killed and stopped
    "test_side_effect_crash.py",
    "test_queue_model.py",  # the hypothesis state machine of the queue
    "test_checkpoint_read_plans.py",  # loads a million rows of another tenant (about 40 s)
    "test_isolation_matrix.py::test_every_function_with_another_tenants_ids_fails_closed",
    "test_openai_agents_session.py::test_a_conversation_survives_a_process_restart_between_turns",
    "test_demo.py::test_the_demo_crashes_resumes_approves_and_keeps_every_promise",
    "test_demo.py::test_the_demos_story_is_the_records_of_ai_job_attempts",  # the same run of the demo
    "test_graph_runs.py::test_a_worker_killed_mid_node_resumes_in_a_fresh_process_from_the_last_checkpoint",
    "test_graph_runs.py::test_a_killed_workers_run_is_taken_over_within_two_seconds_whatever_the_lease",
    "test_graph_runs.py::test_an_interrupt_waits_for_a_person_and_another_process_resumes_it",
    "test_compaction.py::test_long_session_compacted_repeatedly",
    "test_cli.py::test_a_database_without_the_schema_says_how_to_deploy_it_and_deploy_does",
}

# The pooled run (`make test-python-pooled`, ``--pooled``) runs again, through PgBouncer in
# transaction pooling, only the tests that connect differently there: those that take the ``dsn``
# fixture (through ``conn``, ``client``, ``role_dsn``, ...: it names the pooler in that run),
# unless marked ``session_features`` (their ``dsn`` is the server itself), and the files of
# POOLED_ENV. Every other test connects exactly as in the direct run (``direct_dsn``,
# ``module_dsn`` and ``pooler_dsn`` name the same in both runs; a test without them does not reach
# the test database at all), so running it again would only repeat the direct run.
POOLED_ENV = {
    "test_demo.py": "the demo's module fixture runs examples/demo.py on AGENT_STATE_TEST_DSN (the pooler in that run)",
}

# Left out of the pooled run although they take ``dsn``: a file, or one test of it
# (``file::test``), and why. Either what they do cannot go through a pooler, or what they check
# is decided before any connection is made, so the direct run already holds the whole answer.
NOT_POOLED = {
    "test_migrations.py": "sqitch and the deploy tooling connect directly to databases of their own",
    "test_upgrade.py": "sqitch connects directly to databases of its own (the client writes only prepare rows)",
    "test_pooler.py": "already through the pooler in the direct run (pooler_dsn)",
    "test_retry.py": "restarts the server, ends every backend of the shared tenant roles",
    "test_database_crash.py": "kills the server",
    "test_worker_outage.py": "stops the server",
    "test_bench_scripts.py": "the bench scripts make databases of their own and connect to them directly",
    "test_console.py": "the console LISTENs: its browser tests connect directly in both runs",
    "test_cli_hostile.py::test_every_argument_of_every_subcommand_takes_hostile_values": (
        "~1,000 runs of argument parsing, refused before the CLI connects (test_cli.py runs the CLI through the pooler)"
    ),
    "test_readme_install.py": (
        "a fresh clone, a virtualenv and pip install (about a minute) before two commands the pooled run holds"
        " elsewhere: the deploy's 'already deployed' (test_cli.py) and the swap as written (test_readme.py)"
    ),
}


def _named(item: pytest.Item, names: set[str] | dict[str, Any]) -> bool:
    """Whether ``names`` holds the item's file or ``file::test`` (every parametrisation)."""
    name = getattr(item, "originalname", item.name)
    return item.path.name in names or f"{item.path.name}::{name}" in names


def is_slow(item: pytest.Item) -> bool:
    return _named(item, SLOW)


def is_pooled(item: pytest.Item) -> bool:
    """Whether the pooled run learns something from the item (POOLED_ENV and NOT_POOLED above)."""
    if _named(item, NOT_POOLED):
        return False
    if item.path.name in POOLED_ENV:
        return True
    through_dsn = "dsn" in getattr(item, "fixturenames", ())
    return through_dsn and item.get_closest_marker("session_features") is None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agent-state")
    group.addoption(
        "--part",
        choices=("all", "parallel", "beside", "serial"),
        default="all",
        help="parallel: the tests that may share the server with others (run under xdist);"
        " beside: the files of BESIDE, one at a time beside the parallel part;"
        " serial: the files of SERIAL, run alone; all (default): every part",
    )
    group.addoption(
        "--lane",
        default=None,
        help="with --part beside: only the files of this lane of BESIDE, on a copy of the template of its own",
    )
    group.addoption(
        "--tier",
        choices=("full", "check"),
        default="full",
        help="check: leave out the files of SLOW (make check); full (default): every test",
    )
    group.addoption(
        "--pooled",
        action="store_true",
        help="the pooled run: only the tests that connect differently through the pooler (is_pooled)",
    )


def part_of(path: Path) -> str:
    """The part a test file belongs to: exactly one of parallel, beside and serial."""
    return "serial" if path.name in SERIAL else "beside" if path.name in BESIDE else "parallel"


def _file_out(config: pytest.Config, path: Path) -> bool:
    """Whether every test of a file is left out by --part, --lane, --tier and --pooled (by its name)."""
    part, tier, lane = config.getoption("part"), config.getoption("tier"), config.getoption("lane")
    return (
        (part != "all" and part_of(path) != part)
        or (tier == "check" and path.name in SLOW)
        or (lane is not None and BESIDE.get(path.name, (None,))[0] != lane)
        or (config.getoption("pooled") and path.name in NOT_POOLED)
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A file the options leave out whole is not even imported: a lane, the serial part or the
    pooled run does not pay for collecting (importing) the whole suite to deselect most of it."""
    if collection_path.parent == HERE and collection_path.name.startswith("test_") and collection_path.suffix == ".py":
        return True if _file_out(config, collection_path) else None
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    pooled = config.getoption("pooled")
    keep, drop = [], []
    for item in items:
        out = (
            _file_out(config, item.path)
            or (config.getoption("tier") == "check" and is_slow(item))
            or (pooled and not is_pooled(item))
        )
        (drop if out else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "session_features(reason): needs a real session (LISTEN, session-level set_config, advisory"
        " session locks, SET ROLE across statements): connects directly, never through the pooler",
    )
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    lane = config.getoption("lane")
    if lane and worker:
        pytest.exit("--lane runs one process: not under xdist", returncode=4)
    if (worker or lane) and os.environ.get("AGENT_STATE_TEST_DSN"):
        _use_worker_database(worker or f"lane_{lane}")


def pytest_unconfigure(config: pytest.Config) -> None:
    clone = os.environ.get("AGENT_STATE_TEST_WORKER_DATABASE")
    if clone and (os.environ.get("PYTEST_XDIST_WORKER") or config.getoption("lane")):
        with psycopg.connect(_with_db(_direct(), "postgres"), autocommit=True) as admin:
            admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(clone)))


def _direct() -> str:
    return os.environ.get("AGENT_STATE_TEST_DIRECT_DSN") or os.environ["AGENT_STATE_TEST_DSN"]


def _with_db(dsn: str, dbname: str) -> str:
    params: dict[str, Any] = conninfo_to_dict(dsn)
    params["dbname"] = dbname
    return make_conninfo(**params)


def _use_worker_database(worker: str) -> None:
    """This xdist worker's (or beside lane's) own database: a copy of the test database (or of the template it was
    copied from, AGENT_STATE_TEST_TEMPLATE), owned by
    the same role, made afresh; every AGENT_STATE_TEST_*DSN variable then names it (through the
    pooler where it named the pooler), before any test module is imported."""
    direct = _direct()
    dbname = conninfo_to_dict(direct).get("dbname") or "agent_state_test"
    # The pristine copy `make test-db` deployed, when it names one (no session ever sits on it)
    template = os.environ.get("AGENT_STATE_TEST_TEMPLATE") or dbname
    clone = f"{dbname}_{worker}"
    with psycopg.connect(_with_db(direct, "postgres"), autocommit=True) as admin:
        row = admin.execute(
            "select pg_catalog.pg_get_userbyid(datdba) from pg_catalog.pg_database where datname = %s", (template,)
        ).fetchone()
        if row is None:
            pytest.exit(f"the test database {template} does not exist: run the tests with `make test`", returncode=2)
        admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(clone)))
        create = sql.SQL("create database {} template {} owner {}").format(
            sql.Identifier(clone), sql.Identifier(template), sql.Identifier(row[0])
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                admin.execute(create)
                break
            except psycopg.errors.ObjectInUse:  # a session on the template (PgBouncer's, a psql): retry
                if time.monotonic() > deadline:
                    raise
                admin.execute(
                    "select pg_catalog.pg_terminate_backend(pid) from pg_catalog.pg_stat_activity"
                    " where datname = %s and pid <> pg_catalog.pg_backend_pid()",
                    (template,),
                )
                time.sleep(0.1)
    for name in ("AGENT_STATE_TEST_DSN", "AGENT_STATE_TEST_DIRECT_DSN", "AGENT_STATE_TEST_POOLER_DSN"):
        value = os.environ.get(name)
        if value:
            os.environ[name] = _with_db(value, clone)
    os.environ["AGENT_STATE_TEST_WORKER_DATABASE"] = clone


def _env_dsn() -> str:
    value = os.environ.get("AGENT_STATE_TEST_DSN")
    if not value:
        pytest.exit("AGENT_STATE_TEST_DSN is not set: run the tests with `make test`", returncode=2)
    return value


@pytest.fixture
def dsn(request: pytest.FixtureRequest) -> str:
    """The database under test: through the pooler in the pooled run, except for tests marked
    ``session_features``, which get the server itself."""
    if request.node.get_closest_marker("session_features") is not None:
        return os.environ.get("AGENT_STATE_TEST_DIRECT_DSN") or _env_dsn()
    return _env_dsn()


@pytest.fixture(scope="module")
def module_dsn() -> str:
    """For module-scoped set-up (it outlives any one test's marker): the server itself."""
    return os.environ.get("AGENT_STATE_TEST_DIRECT_DSN") or _env_dsn()


@pytest.fixture(scope="module")
def module_role_dsn(module_dsn: str):  # type: ignore[no-untyped-def]
    return lambda user: dsn_as(module_dsn, user)


@pytest.fixture
def direct_dsn() -> str:
    """The server itself, never a pooler (set-up that needs a session, server restarts)."""
    return os.environ.get("AGENT_STATE_TEST_DIRECT_DSN") or _env_dsn()


@pytest.fixture
def pooler_dsn() -> str:
    """The same database through PgBouncer in transaction pooling (scripts/pgbouncer.sh)."""
    value = os.environ.get("AGENT_STATE_TEST_POOLER_DSN")
    if not value:
        pytest.skip("AGENT_STATE_TEST_POOLER_DSN is not set (no PgBouncer: `make test` starts one)")
    return value


def dsn_as(dsn: str, user: str) -> str:
    """The same database, as another login role (trust auth on the private cluster)."""
    params: dict[str, Any] = conninfo_to_dict(dsn)
    params["user"] = user
    return make_conninfo(**params)


def superuser_reads(conn: psycopg.Connection[Any]) -> list[str]:
    """The statements that give a transaction back to the superuser after a role wrote in it (a
    test that writes as a tenant, then reads every row as the superuser, in one transaction that
    is rolled back): ``reset role``. On a Citus formation a tenant's writes reached the shards
    over the schema owner's connections (SECURITY DEFINER), and Citus refuses another user's query
    on those placements in the same transaction ("cannot perform query on placements that were
    modified in this transaction by a different user"): there the superuser's identity is carried
    to the shards (ai._formation_caller, acting for nobody) and the role set to the owner, as
    scripts/citus-test.sh's owner-reads mode does for pgTAP; every policy lets the carried
    superuser see every row, as the superuser sees them on one server."""
    citus = conn.execute("select exists (select from pg_catalog.pg_extension where extname = 'citus')").fetchone()
    if not (citus and citus[0]):
        return ["reset role"]
    owner = conn.execute("select nspowner::regrole::text from pg_catalog.pg_namespace where nspname = 'ai'").fetchone()
    assert owner is not None
    return [
        "reset role",
        "do $as_superuser$ declare v text := coalesce(current_setting('ai.acting_owner', true), '');"
        " begin perform set_config('ai.acting_owner', '', true); perform ai._formation_caller(session_user);"
        " perform set_config('ai.acting_owner', v, true); end $as_superuser$",
        f"set local role {owner[0]}",
    ]


@pytest.fixture
def fresh_database(direct_dsn: str) -> Iterator[str]:
    """An empty database owned by the deploy role (as `createdb app` by that role makes one), on
    the server itself in both runs (so a test that takes only this connects as in the direct run,
    and the pooled run leaves it out: is_pooled)."""
    name = f"fresh_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(direct_dsn, autocommit=True) as admin:
        admin.execute(f'create database "{name}" owner agent_state_owner')
    params = conninfo_to_dict(direct_dsn)
    params["dbname"] = name
    try:
        yield dsn_as(make_conninfo(**params), "agent_state_owner")
    finally:
        with psycopg.connect(direct_dsn, autocommit=True) as admin:
            admin.execute(f'drop database "{name}" with (force)')


@pytest.fixture
def role_dsn(dsn: str):  # type: ignore[no-untyped-def]
    return lambda user: dsn_as(dsn, user)


@pytest.fixture
def conn(dsn: str) -> Iterator[psycopg.Connection[Any]]:
    """A raw connection for the test's own SQL. Through the pooler it never prepares statements
    (psycopg prepares a query run five times, and a transaction pooler hands the next transaction
    to another server session), as docs/connections.md asks of any raw connection there; the
    client's own calls detect the pooler by themselves (test_pooler.py)."""
    direct = os.environ.get("AGENT_STATE_TEST_DIRECT_DSN")
    pooled = direct is not None and dsn != direct
    with psycopg.connect(dsn, autocommit=True, prepare_threshold=None if pooled else 5) as connection:
        yield connection


@pytest.fixture
def client(conn: psycopg.Connection[Any]) -> Client:
    return Client(conn)


@pytest.fixture(scope="session")
def deployed_templates() -> Iterator[Callable[[str | None], str]]:
    """``deployed_templates(tag)``: the name of a database into which the deploying role deployed
    this checkout's plan up to ``@tag`` (None: HEAD) with sqitch, made the first time a test of
    the session asks for that version and dropped at the session's end. A test copies it
    (``create database ... template``, catalog.py's ``owner_databases``: ``make(template)``) and
    works on its copy, so the upgrade tests deploy the release and HEAD once per run instead of
    once per test; nothing ever connects to a template itself (a copy needs it idle)."""
    from catalog import DEPLOY_USER, ROOT, ensure_deploy_user, env_for, may_create_databases, sqitch

    admin_dsn = _with_db(_direct(), "postgres")
    made: list[str] = []
    ready: dict[str | None, str] = {}

    def deployed(tag: str | None) -> str:
        if tag not in ready:
            name = f"agent_state_deployed_{uuid.uuid4().hex[:12]}"
            with psycopg.connect(admin_dsn, autocommit=True) as admin:
                if not may_create_databases(admin):
                    pytest.skip("the test role may not create databases")
                ensure_deploy_user(admin)
                admin.execute(
                    sql.SQL("create database {} owner {}").format(sql.Identifier(name), sql.Identifier(DEPLOY_USER))
                )
            made.append(name)
            to = ["--to", f"@{tag}"] if tag else []
            sqitch(["deploy", "--verify", *to], dict(env_for(_direct(), name), PGUSER=DEPLOY_USER), ROOT)
            ready[tag] = name
        return ready[tag]

    yield deployed
    if made:
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            for name in made:
                admin.execute(sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name)))


@pytest.fixture
def stock_dsn(dsn: str) -> Iterator[str]:
    """LangGraph's stock PostgresSaver beside ours: a schema of its own with its tables, which the
    returned dsn puts first on the search_path (a test using it is marked ``session_features``:
    the schema is named by the options startup parameter)."""
    from langgraph.checkpoint.postgres import PostgresSaver

    schema = f"lgstock_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("create schema {}").format(sql.Identifier(schema)))
    stock = make_conninfo(dsn, options=f"-c search_path={schema}")
    with PostgresSaver.from_conn_string(stock) as saver:
        saver.setup()
    yield stock
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("drop schema {} cascade").format(sql.Identifier(schema)))


@pytest.fixture
def thread_id() -> str:
    return f"test-{uuid.uuid4()}"
