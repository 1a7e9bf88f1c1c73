"""Grafana's PostgreSQL data source (pkg/tsdb/grafana-postgresql-datasource and its query
editor's meta queries): version probe, TimescaleDB detection, and the table / column
pickers, which walk `search_path` with `string_to_array`, `generate_series` and array
subscripts. Grafana's Go driver sends extended-protocol statements."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.integration.harness import MzServer
from tests.integration.tools.replay import connect, run_extended, spark_jobs

pytestmark = pytest.mark.integration

VERSION = "SELECT current_setting('server_version_num')::int/100 AS version"
TIMESCALE = "SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'"

TABLES = """select quote_ident(table_name) as "table" from information_schema.tables
    where quote_ident(table_schema) not in ('information_schema',
                             'pg_catalog',
                             '_timescaledb_cache',
                             '_timescaledb_catalog',
                             '_timescaledb_internal',
                             '_timescaledb_config',
                             'timescaledb_information',
                             'timescaledb_experimental')
      and table_type = 'BASE TABLE' and quote_ident(table_schema) IN (
      SELECT
        CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
      FROM
        generate_series(
          array_lower(string_to_array(current_setting('search_path'),','),1),
          array_upper(string_to_array(current_setting('search_path'),','),1)
        ) as i,
        string_to_array(current_setting('search_path'),',') s
      )"""

COLUMNS = """select quote_ident(column_name) as "column", data_type as "type"
    from information_schema.columns
    where quote_ident(table_name) = %s"""

TIME_COLUMNS = """SELECT quote_ident(column_name) AS "column" FROM information_schema.columns
WHERE quote_ident(table_name) = %s AND data_type IN ('timestamp without time zone', 'timestamp with time zone', 'bigint', 'integer', 'double precision', 'real')"""

SCHEMAS = """SELECT quote_ident(schema_name) AS "schema" FROM information_schema.schemata
WHERE schema_name NOT LIKE 'pg_%%' AND schema_name <> 'information_schema' ORDER BY 1"""


def test_grafana_query_editor(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("metrics")
    with connect(mz_server) as conn:
        conn.execute(f"CREATE TABLE {t} (ts timestamptz NOT NULL, host text, value double precision)")
        jobs = spark_jobs(conn)
        assert run_extended(conn, VERSION) == [(905,)]
        assert run_extended(conn, TIMESCALE) == []
        assert (t,) in run_extended(conn, TABLES)
        # Grafana's queries have no ORDER BY: rows come in any order
        assert sorted(run_extended(conn, COLUMNS, (t,))) == sorted([
            ("ts", "timestamp with time zone"), ("host", "text"), ("value", "double precision")])
        assert sorted(run_extended(conn, TIME_COLUMNS, (t,))) == [("ts",), ("value",)]
        assert ("public",) in run_extended(conn, SCHEMAS)
        assert spark_jobs(conn) == jobs, "catalog queries must not start Spark jobs"
