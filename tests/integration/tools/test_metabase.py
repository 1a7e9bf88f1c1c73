"""Metabase's PostgreSQL driver (metabase/src/metabase/driver/postgres.clj and the
sql-jdbc sync code): connection set-up, `describe-database`, `describe-fields`, enum
detection. Metabase talks through pgjdbc, so statements are prepared with `$n` parameters."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.integration.harness import MzServer
from tests.integration.tools.replay import connect, run_extended, spark_jobs

pytestmark = pytest.mark.integration

STARTUP = [
    "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
    "SET SESSION TIMEZONE TO 'UTC'",
    "SELECT 1",
    "SHOW TRANSACTION ISOLATION LEVEL",
    "SELECT current_setting('server_version_num')",
]

DESCRIBE_DATABASE = """
SELECT n.nspname AS schema, c.relname AS name,
  CASE c.relkind WHEN 'r' THEN 'TABLE' WHEN 'p' THEN 'PARTITIONED TABLE' WHEN 'v' THEN 'VIEW'
    WHEN 'f' THEN 'FOREIGN TABLE' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE NULL END AS type,
  d.description AS description, stat.n_live_tup AS estimated_row_count
FROM pg_catalog.pg_class c
INNER JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid
LEFT JOIN pg_catalog.pg_description d ON c.oid = d.objoid AND d.objsubid = 0 AND d.classoid = 'pg_class'::regclass
LEFT OUTER JOIN pg_stat_user_tables stat ON c.oid = stat.relid
WHERE c.relnamespace = n.oid
  AND c.relkind IN ('r', 'p', 'v', 'f', 'm')
  AND n.nspname !~ '^information_schema$' AND n.nspname !~ '^pg_' AND n.nspname <> 'pg_catalog'
  AND n.nspname NOT IN (%s, %s)
  AND has_schema_privilege(n.nspname, 'USAGE')
  AND (has_table_privilege(c.oid, 'SELECT') OR has_any_column_privilege(c.oid, 'SELECT'))
ORDER BY type, schema, name
"""

DESCRIBE_FIELDS = """
SELECT c.column_name AS "name",
  CASE WHEN c.udt_schema IN ('public', 'pg_catalog') THEN format('%%s', c.udt_name)
       ELSE format('"%%s"."%%s"', c.udt_schema, c.udt_name) END AS "database-type",
  c.ordinal_position - 1 AS "database-position",
  c.table_schema AS "table-schema",
  c.table_name AS "table-name",
  pk.column_name IS NOT NULL AS "pk?",
  COL_DESCRIPTION(CAST(CAST(FORMAT('%%I.%%I', CAST(c.table_schema AS TEXT), CAST(c.table_name AS TEXT)) AS REGCLASS) AS OID), c.ordinal_position) AS "field-comment",
  ((column_default IS NULL) OR (LOWER(column_default) = 'null')) AND (is_nullable = 'NO')
    AND NOT ((column_default IS NOT NULL) AND (column_default LIKE '%%(%%)')) AS "database-required",
  ((column_default IS NOT NULL) AND (column_default LIKE 'nextval(%%')) OR (is_identity = 'YES') AS "database-is-auto-increment"
FROM information_schema.columns AS c
LEFT JOIN (
  SELECT tc.table_schema, tc.table_name, kc.column_name
  FROM information_schema.table_constraints AS tc
  INNER JOIN information_schema.key_column_usage AS kc
    ON (tc.constraint_name = kc.constraint_name) AND (tc.table_schema = kc.table_schema) AND (tc.table_name = kc.table_name)
  WHERE tc.constraint_type = 'PRIMARY KEY'
) AS pk ON (c.table_schema = pk.table_schema) AND (c.table_name = pk.table_name) AND (c.column_name = pk.column_name)
WHERE c.table_schema !~ '^information_schema|catalog_history|pg_'
  AND (c.table_schema IN (%s)) AND (c.table_name IN (%s))
ORDER BY "table-schema" ASC, "table-name" ASC, "database-position" ASC
"""

ENUMS = "SELECT DISTINCT t.typname FROM pg_enum e LEFT JOIN pg_type t ON t.oid = e.enumtypid"

TIMEZONE = "SELECT current_setting('TIMEZONE') AS timezone"


def test_metabase_sync(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("orders")
    with connect(mz_server) as conn:
        conn.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, customer text NOT NULL, total numeric(10,2), placed timestamptz)")
        jobs = spark_jobs(conn)
        for sql in STARTUP:
            run_extended(conn, sql)
        tables = run_extended(conn, DESCRIBE_DATABASE, ("mz_catalog", "mz_internal"))
        assert (("public", t, "TABLE", None, 0) in tables), tables
        assert not {schema for schema, *_ in tables} & {"pg_catalog", "information_schema", "mz_catalog", "mz_internal"}
        fields = run_extended(conn, DESCRIBE_FIELDS, ("public", t))
        assert [(f[0], f[1], f[2], f[5], f[7]) for f in fields] == [
            ("id", "int4", 0, True, True),
            ("customer", "text", 1, False, True),
            ("total", "numeric", 2, False, False),
            ("placed", "timestamptz", 3, False, False),
        ]
        assert run_extended(conn, ENUMS) == []
        assert run_extended(conn, TIMEZONE) == [("UTC",)]
        assert spark_jobs(conn) == jobs, "catalog queries must not start Spark jobs"
