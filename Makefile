# mzspark build / run / test entry points.
#
#   make run    # create .venv if needed, install, build the JVM UDF jar, start the server on 127.0.0.1:6875
#   make jar    # build/jvm/mzspark-udfs.jar from compute/jvm/src (installs a JDK if javac is missing)
#   make test   # install + Debian packages the client tests need, run all of tests/
#   make lint   # ruff + import-linter + mypy
#   make slt    # the whole sqllogictest corpus (../shared/slt/sqlite) against mzspark (slow)
#   make slt-plans  # plan every corpus query without Spark; rewrites tests/slt/PLAN_FAILURES.md
#   make tpch SF=0.1 # TPC-H: mzspark vs spark.sql vs DuckDB vs PostgreSQL (benches/tpch.py)
#   make pg-regress # PostgreSQL's regression scripts vs a real PostgreSQL 15; rewrites tests/pg_regress/RESULTS.md
#   make oracle SEEDS=0:100000 TIER=light  # random queries vs PostgreSQL 15 + TLP/NoREC (long)
#   make ivm-oracle IVM_SEEDS=0:200 IVM_OBJECTS=4 IVM_WRITES=8  # maintained objects after every write vs PostgreSQL 15
#   make slt-auto-index  # the sqllogictest corpus, each SELECT also through an indexed view
#   make test-hydration-5m  # operator hydration statuses and the plan page at 5M rows (slow)
#   make cluster        # a Spark standalone master + 2 workers on this machine (scripts/cluster.sh)
#   make cluster-stop   # stop them; then: make run MASTER=spark://127.0.0.1:17077 DATA=$$PWD/mzdata
#
# Overridable: make run LISTEN=0.0.0.0:6875 DATA=/var/lib/mzdata MASTER=spark://host:7077

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := run

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

LISTEN ?= 127.0.0.1:6875
DATA ?= ./mzdata
MASTER ?= local[2]
SERVER_ARGS ?=

# Per-test timeout (seconds); includes fixture set-up, i.e. the first Spark start.
TEST_TIMEOUT ?= 300
PYTEST_ARGS ?=

# Debian packages the integration tests use (JDBC driver, javac, psql, chromium + its
# WebDriver for the plan page's browser test).
JDBC_JAR := /usr/share/java/postgresql.jar

.PHONY: run test lint install deps-test deps-jdk jar clean test-hydration-5m cluster cluster-stop cluster-status

# (Re)create the venv when it is missing, its interpreter does not run (e.g. a venv copied
# from another machine) or it has no pip (venv creation interrupted); reinstall only when
# pyproject.toml changed.
$(STAMP): pyproject.toml
	@if ! $(PY) -c 'import sys, pip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then \
	  $(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "mzspark needs Python >= 3.11, $(PYTHON) is " + sys.version.split()[0])'; \
	  echo "creating $(VENV) with $(PYTHON)"; \
	  rm -rf $(VENV); \
	  $(PYTHON) -m venv $(VENV); \
	fi
	$(PY) -m pip install --disable-pip-version-check -q -e '.[dev]'
	touch $@

install: $(STAMP)

# The Spark Java UDFs (compute/jvm/src, built by compute/render/jvm.py: reproducible, and
# rebuilt by the server itself when a source changed); the SparkSession loads the jar.
JVM_JAR := build/jvm/mzspark-udfs.jar
JVM_SRC := $(shell find compute/jvm/src -name '*.java')

$(JVM_JAR): $(JVM_SRC) compute/render/jvm.py $(STAMP) | deps-jdk
	$(PY) -m compute.render.jvm

jar: $(JVM_JAR)

# javac for the jar (sudo only when not root)
deps-jdk:
	@if ! command -v javac >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo -n"; fi; \
	  echo "installing Debian packages: default-jdk-headless"; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends default-jdk-headless; \
	fi

run: $(STAMP) $(JVM_JAR)
	exec $(PY) -m server --listen-addr $(LISTEN) --data-dir $(DATA) --spark-master '$(MASTER)' $(SERVER_ARGS)

# Install the Debian packages the client tests need, only those missing; `apt-get update`
# at most once, and only when something must be installed; sudo only when not root.
deps-test:
	@pkgs=""; \
	[ -f $(JDBC_JAR) ] || pkgs="$$pkgs libpostgresql-jdbc-java"; \
	command -v javac >/dev/null 2>&1 || pkgs="$$pkgs default-jdk-headless"; \
	command -v psql >/dev/null 2>&1 || pkgs="$$pkgs postgresql-client"; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || pkgs="$$pkgs postgresql"; \
	command -v chromium >/dev/null 2>&1 || pkgs="$$pkgs chromium"; \
	command -v chromedriver >/dev/null 2>&1 || pkgs="$$pkgs chromium-driver"; \
	if [ -n "$$pkgs" ]; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo -n"; fi; \
	  echo "installing Debian packages:$$pkgs"; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$pkgs; \
	fi

test: $(STAMP) deps-test $(JVM_JAR)
	$(PY) -m pytest -p no:cacheprovider --timeout=$(TEST_TIMEOUT) tests/ $(PYTEST_ARGS)

# issue 12's acceptance size: the hydration-status test over 5M rows (CI runs 200k)
test-hydration-5m: $(STAMP) deps-test
	MZSPARK_HYDRATION_ROWS=5000000 $(PY) -m pytest -p no:cacheprovider --timeout=3600 tests/integration/test_hydration_status.py tests/integration/test_plan_page.py

# A Spark standalone cluster from the venv's PySpark (settings: see scripts/cluster.sh, e.g.
# make cluster WORKERS=3 WORKER_MEMORY=2g MASTER_PORT=7077); idempotent, waits until ready.
cluster: $(STAMP)
	PYTHON=$(PY) scripts/cluster.sh start

cluster-stop:
	PYTHON=$(PY) scripts/cluster.sh stop

cluster-status:
	PYTHON=$(PY) scripts/cluster.sh status

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -c 'import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())'
	$(PY) -m mypy

clean:
	rm -rf build *.egg-info spark-warehouse metastore_db derby.log
	find . -name __pycache__ -type d -prune -not -path './$(VENV)/*' -exec rm -rf {} +

# sqllogictest corpus (not part of `make test`; CI runs a subset via tests/integration).
#   make slt SLT_JOBS=1 SLT_ARGS='--failures slt-failures.jsonl --limit 200'
SLT_CORPUS ?= ../shared/slt/sqlite
SLT_JOBS ?= 3
SLT_ARGS ?=

.PHONY: slt slt-plans slt-auto-index

slt: $(STAMP)
	$(PY) -m tests.slt.runner --jobs $(SLT_JOBS) --check-pg $(SLT_ARGS) $(SLT_CORPUS)

# Materialize's --auto-index-selects mode: every SELECT record is also run as CREATE VIEW +
# CREATE DEFAULT INDEX + SELECT * FROM the view and must match too (same corpus and options).
slt-auto-index: $(STAMP)
	$(PY) -m tests.slt.runner --jobs $(SLT_JOBS) --check-pg --auto-index-selects $(SLT_ARGS) $(SLT_CORPUS)

slt-plans: $(STAMP)
	$(PY) -m tests.slt.plans --write-md tests/slt/PLAN_FAILURES.md $(SLT_CORPUS)

# TPC-H side by side (benches/tpch.py); installs the `bench` extra (tpchgen-cli) first.
#   make tpch SF=1 TPCH_ARGS='--runs 5 --queries 1,18'
SF ?= 0.1
TPCH_ARGS ?=
BENCH_STAMP := $(VENV)/.installed-bench

$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install --disable-pip-version-check -q -e '.[dev,bench]'
	touch $@

.PHONY: tpch

tpch: $(BENCH_STAMP) deps-test $(JVM_JAR)
	$(PY) benches/tpch.py --sf $(SF) $(TPCH_ARGS)

# PostgreSQL 15's regression scripts, statement by statement against a throwaway PostgreSQL 15
# (not part of `make test`; CI runs a sample via tests/integration/test_pg_regress_sample.py).
#   make pg-regress PG_REGRESS_ARGS='--files select,case --failures pg-regress-failures.jsonl'
PG_REGRESS_ARGS ?= --failures pg-regress-failures.jsonl

.PHONY: pg-regress

pg-regress: $(STAMP) deps-test
	$(PY) -m tests.pg_regress.runner --write-md tests/pg_regress/RESULTS.md $(PG_REGRESS_ARGS)

# Random-query oracle (tests/oracle): SEEDS=START:COUNT, TIER=full|light; starts its own
# mzspark server and PostgreSQL 15, prints every discrepancy (seed, SQL, both outcomes,
# minimized SQL) and a summary with queries/s; findings also go to ORACLE_OUT (JSON lines).
SEEDS ?= 0:100000
TIER ?= full
ORACLE_OUT ?= oracle-findings.jsonl
ORACLE_ARGS ?= --minimize

.PHONY: oracle

oracle: $(STAMP) deps-test
	$(PY) -m tests.oracle --seed-start $(word 1,$(subst :, ,$(SEEDS))) --count $(word 2,$(subst :, ,$(SEEDS))) --tier $(TIER) --out $(ORACLE_OUT) $(ORACLE_ARGS)

# IVM oracle (tests/ivm): IVM_SEEDS=START:COUNT programs, each IVM_OBJECTS maintained objects
# (materialized views, indexed views) and IVM_WRITES random writes; after CREATE and after every
# write every object must equal PostgreSQL 15 and mzspark's one-shot SELECT of its definition.
# Starts its own mzspark and PostgreSQL; mismatches (minimized to a SQL script) go to IVM_OUT.
IVM_SEEDS ?= 0:200
IVM_OBJECTS ?= 4
IVM_WRITES ?= 8
IVM_OUT ?= ivm-findings.jsonl
IVM_ARGS ?= --minimize

.PHONY: ivm-oracle

ivm-oracle: $(STAMP) deps-test
	$(PY) -m tests.ivm --seed-start $(word 1,$(subst :, ,$(IVM_SEEDS))) --count $(word 2,$(subst :, ,$(IVM_SEEDS))) --objects $(IVM_OBJECTS) --writes $(IVM_WRITES) --out $(IVM_OUT) $(IVM_ARGS)
