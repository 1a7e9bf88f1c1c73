"""Apache Superset's PostgreSQL engine (superset/db_engine_specs/postgres.py, through
SQLAlchemy's PostgreSQL dialect): the dialect's start-up probes, the catalog / schema /
table pickers (`get_catalog_names`' own query, then the inspector's `get_schema_names`,
`get_table_names` | `get_foreign_table_names`, `get_view_names`), a dataset's metadata
(`get_columns`, `get_pk_constraint`, `get_foreign_keys`, `get_indexes`,
`get_table_comment`), SQL Lab's prequeries (`SELECT pg_backend_pid()`, `set search_path`),
the table preview (`select_star`: the columns, LIMIT 100) and a chart's time grain and
datetime literals (`DATE_TRUNC`, `TO_TIMESTAMP`, `TO_DATE`, `epoch_to_dttm`). The
inspector runs with the psycopg2 dialect (parameters interpolated by the client: simple
protocol) and the psycopg 3 dialect (server-side `$n` parameters: extended protocol), and
every answer is compared with PostgreSQL 15 holding the same tables."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa

from tests.integration.harness import MzServer
from tests.integration.tools.reference import connect as reference_connect
from tests.integration.tools.reference import materialize_reference
from tests.integration.tools.replay import spark_jobs

pytestmark = pytest.mark.integration

DIALECTS = ["postgresql+psycopg2", "postgresql+psycopg"]

CATALOGS = """
SELECT datname FROM pg_database
WHERE datistemplate = false;
            """

# BaseEngineSpec.select_star(show_cols=True, limit=100), as SQLAlchemy compiles it
PREVIEW = "SELECT id, customer, amount, placed, at \nFROM public.{t}\n LIMIT 100"

# a chart: the month time grain over a time range (Superset's time-range filter, here with
# SQL timestamp literals)
CHART = """SELECT DATE_TRUNC('month', placed) AS placed_month, count(*) AS count, sum(amount) AS sum_amount
FROM public.{t}
WHERE at >= TIMESTAMP '2024-01-15 00:00:00.000000' AND at < TIMESTAMP '2024-03-01 00:00:00.000000'
GROUP BY DATE_TRUNC('month', placed) ORDER BY placed_month LIMIT 10000"""

# PostgresBaseEngineSpec.convert_dttm spells datetime filters with TO_TIMESTAMP / TO_DATE and a
# format. to_timestamp(text, text) answers as PostgreSQL 15 (sql.to_timestamp; Materialize has
# only to_timestamp(double)); to_date is not in Materialize's surface (42883, as Materialize
# answers; Superset shows it as the chart's error).
CONVERT_DTTM = [
    ("SELECT TO_TIMESTAMP('2024-01-15 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')", None),
    ("SELECT TO_DATE('2024-01-10', 'YYYY-MM-DD')", "42883"),
]

EPOCH = "SELECT (timestamp 'epoch' + 1700000000 * interval '1 second') AS dttm"


SETUP = [
    "CREATE TABLE {t} (id int NOT NULL, customer text, amount numeric(10,2), placed date, at timestamp, PRIMARY KEY (id))",
    "CREATE INDEX {t}_placed ON {t} (placed)",
    "CREATE VIEW {v} AS SELECT id, customer FROM {t}",
    "INSERT INTO {t} SELECT g, 'c' || g, g * 1.5, DATE '2024-01-01' + g, "
    "TIMESTAMP '2024-01-01 00:00:00' + g * INTERVAL '7 hours' FROM generate_series(1, 300) g",
]


def setup(conn: psycopg.Connection, t: str, v: str) -> None:
    """Each statement in its own transaction (an autocommit connection)."""
    for sql in SETUP:
        conn.execute(sql.format(t=t, v=v))


def superset_session(eng: sa.Engine, t: str, v: str, *, pg: bool) -> dict[str, Any]:
    """What Superset asks when a user adds the database, browses it and previews a table."""
    out: dict[str, Any] = {}
    with eng.connect() as conn:
        out["catalogs"] = sorted(r[0] for r in conn.execute(sa.text(CATALOGS)))
    insp = sa.inspect(eng)
    out["schemas"] = insp.get_schema_names()
    out["tables"] = sorted(set(insp.get_table_names("public")) | set(insp.get_foreign_table_names("public")))
    out["views"] = sorted(insp.get_view_names("public"))
    cols = insp.get_columns(t, "public")
    out["columns"] = [(c["name"], str(c["type"]), c["nullable"], c["default"], c.get("comment")) for c in cols]
    out["pk"] = insp.get_pk_constraint(t, "public")
    out["fks"] = insp.get_foreign_keys(t, "public")
    out["indexes"] = [(i["name"], i["column_names"], i["unique"]) for i in insp.get_indexes(t, "public")]
    out["comment"] = insp.get_table_comment(t, "public")
    out["view_columns"] = [(c["name"], str(c["type"])) for c in insp.get_columns(v, "public")]
    with eng.connect() as conn:
        (pid,) = conn.execute(sa.text("SELECT pg_backend_pid()")).one()
        out["pid_is_int"] = isinstance(pid, int)
        conn.execute(sa.text('set search_path = "public"'))
        out["preview"] = [tuple(r) for r in conn.execute(sa.text(PREVIEW.format(t=t)))]
        out["all_rows"] = sorted(tuple(r) for r in conn.execute(sa.text(f"SELECT id, customer, amount, placed, at FROM {t}")))
        out["chart"] = [tuple(r) for r in conn.execute(sa.text(CHART.format(t=t)))]
        out["epoch"] = [tuple(r) for r in conn.execute(sa.text(EPOCH))]
        out["convert_dttm"] = [r[0] for sql, code in CONVERT_DTTM if code is None for r in conn.execute(sa.text(sql))]
    if not pg:
        for sql, code in CONVERT_DTTM:
            if code is None:
                continue
            with eng.connect() as conn, pytest.raises(sa.exc.DBAPIError) as err:
                conn.execute(sa.text(sql))
            orig = err.value.orig
            assert (getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)) == code, sql
    return out


@pytest.fixture(scope="module")
def reference() -> Iterator[tuple[str, int]]:
    with materialize_reference("pgref-superset-") as ref:
        yield ref


@pytest.mark.parametrize("dialect", DIALECTS)
def test_superset_database_browse_and_preview(mz_server: MzServer, reference: tuple[str, int],
                                              uniq: Callable[[str], str], dialect: str) -> None:
    t, v = uniq("orders"), uniq("orders_v")
    mz = sa.create_engine(mz_server.url(dialect), poolclass=sa.pool.NullPool)
    pg = sa.create_engine(f"{dialect}://materialize@{reference[0]}:{reference[1]}/materialize",
                          poolclass=sa.pool.NullPool)
    with mz_server.connect() as conn:
        setup(conn, t, v)
    with reference_connect(reference) as conn:
        setup(conn, t, v)
    statements: list[str] = []
    sa.event.listen(mz, "before_cursor_execute", lambda *a: statements.append(a[2]))
    got, want = superset_session(mz, t, v, pg=False), superset_session(pg, t, v, pg=True)
    converted = want.pop("convert_dttm")
    assert len(converted) == 1 and got.pop("convert_dttm") == converted

    # Materialize's own schemas are listed beside PostgreSQL's user schemas
    assert {"mz_catalog", "mz_internal", "public"} <= set(got.pop("schemas"))
    assert "public" in want.pop("schemas")
    # the server's databases differ (PostgreSQL has `postgres`); both list `materialize`
    assert "materialize" in got.pop("catalogs") and "materialize" in want.pop("catalogs")
    assert t in got["tables"] and v in got["views"]
    got["tables"], want["tables"] = [x for x in got["tables"] if x == t], [x for x in want["tables"] if x == t]
    got["views"], want["views"] = [x for x in got["views"] if x == v], [x for x in want["views"] if x == v]
    assert len(got["preview"]) == 100 and len(got["chart"]) == 6  # February to July
    # no ORDER BY: any 100 distinct rows of the table (PostgreSQL's 100 may be others)
    table = {r[0]: r for r in want.pop("all_rows")}
    assert got.pop("all_rows") == sorted(table.values())
    preview, want_preview = got.pop("preview"), want.pop("preview")
    assert len({r[0] for r in preview}) == len(want_preview) == 100
    assert all(table[r[0]] == r for r in preview)
    # SQLAlchemy reads INCLUDE columns only from servers of version 11 or later (we report 9.5)
    assert want["pk"].pop("dialect_options") == {"postgresql_include": []}
    assert got == want
    assert any("pg_catalog.pg_attribute" in s for s in statements), "the inspector's own SQL was replayed"


def test_superset_catalog_reads_start_no_spark_job(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t, v = uniq("orders"), uniq("orders_v")
    eng = sa.create_engine(mz_server.url("postgresql+psycopg"), poolclass=sa.pool.NullPool)
    with mz_server.connect() as conn:
        for sql in SETUP[:3]:  # no rows: reflection reads none
            conn.execute(sql.format(t=t, v=v))
    with mz_server.connect() as c:
        jobs = spark_jobs(c)
    insp = sa.inspect(eng)
    insp.get_schema_names()
    insp.get_table_names("public")
    insp.get_foreign_table_names("public")
    insp.get_columns(t, "public")
    insp.get_pk_constraint(t, "public")
    insp.get_foreign_keys(t, "public")
    insp.get_indexes(t, "public")
    with mz_server.connect() as c:
        assert spark_jobs(c) == jobs, "reflection must not start Spark jobs"
