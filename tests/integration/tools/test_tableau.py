"""Tableau's PostgreSQL connector, which runs on psqlODBC: the driver's connection set-up
(one simple-protocol message with several statements, large-object type probe), the
catalog functions behind SQLTables / SQLColumns / SQLPrimaryKeys, and psqlODBC's
UseDeclareFetch mode, which reads results through WITH HOLD cursors."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.integration.harness import MzServer
from tests.integration.tools.replay import connect, run_extended, run_simple, spark_jobs

pytestmark = pytest.mark.integration

STARTUP = "SET DateStyle = 'ISO';SET extra_float_digits = 2;show transaction_isolation"
LO_TYPE = "select oid, typbasetype from pg_type where typname = 'lo'"
ENCODING = "select pg_client_encoding()"

SQL_TABLES = """select relname, nspname, relkind from pg_catalog.pg_class c, pg_catalog.pg_namespace n
where relkind in ('r', 'v', 'm', 'f', 'p') and nspname not in ('pg_catalog', 'information_schema', 'pg_toast', 'pg_temp_1')
and n.oid = relnamespace order by nspname, relname"""

SQL_COLUMNS = """select n.nspname, c.relname, a.attname, a.atttypid, t.typname, a.attnum, a.attlen, a.atttypmod, a.attnotnull,
c.relhasrules, c.relkind, c.oid, pg_get_expr(d.adbin, d.adrelid), case t.typtype when 'd' then t.typbasetype else 0 end,
t.typtypmod, c.relhasoids, '', c.relhassubclass
from (((pg_catalog.pg_class c inner join pg_catalog.pg_namespace n on n.oid = c.relnamespace and c.relname like %s
and n.nspname like 'public') inner join pg_catalog.pg_attribute a on (not a.attisdropped) and a.attnum > 0 and a.attrelid = c.oid)
inner join pg_catalog.pg_type t on t.oid = a.atttypid) left outer join pg_attrdef d on a.atthasdef and d.adrelid = a.attrelid
and d.adnum = a.attnum order by n.nspname, c.relname, attnum"""

SQL_PRIMARY_KEYS = """select ta.attname, ia.attnum, ic.relname, n.nspname, tc.relname
from pg_catalog.pg_attribute ta, pg_catalog.pg_attribute ia, pg_catalog.pg_class tc, pg_catalog.pg_index i,
pg_catalog.pg_namespace n, pg_catalog.pg_class ic
where tc.relname = %s AND n.nspname = 'public' AND tc.oid = i.indrelid AND n.oid = tc.relnamespace
AND i.indisprimary = 't' AND ia.attrelid = i.indexrelid AND ta.attrelid = i.indrelid
AND ta.attnum = i.indkey[ia.attnum-1] AND (NOT ta.attisdropped) AND (NOT ia.attisdropped)
AND ic.oid = i.indexrelid order by ia.attnum"""


def test_tableau_psqlodbc(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("sales")
    with connect(mz_server) as conn:
        conn.execute(f"CREATE TABLE {t} (region text NOT NULL, day date NOT NULL, amount numeric(12,2), PRIMARY KEY (region, day))")
        jobs = spark_jobs(conn)
        results = run_simple(conn, STARTUP)
        assert results[-1] == [("strict serializable",)]
        assert run_simple(conn, LO_TYPE) == [[]]
        assert run_simple(conn, ENCODING) == [[("UTF8",)]]
        tables = run_extended(conn, SQL_TABLES)
        assert (t, "public", "r") in tables
        assert all(nsp not in ("pg_catalog", "information_schema") for _, nsp, _ in tables)
        cols = run_extended(conn, SQL_COLUMNS, (t,))
        assert [(r[2], r[4], r[5], r[8]) for r in cols] == [
            ("region", "text", 1, True), ("day", "date", 2, True), ("amount", "numeric", 3, False)]
        assert cols[2][7] == ((12 << 16) | 2) + 4  # atttypmod of numeric(12,2)
        pks = run_extended(conn, SQL_PRIMARY_KEYS, (t,))
        assert [(r[0], r[1], r[2]) for r in pks] == [("region", 1, f"{t}_pkey"), ("day", 2, f"{t}_pkey")]
        # UseDeclareFetch: results through a cursor, in a transaction and WITH HOLD outside one
        conn.autocommit = False
        run_simple(conn, f'declare "SQL_CUR0x55d1" cursor for {SQL_TABLES}')
        fetched = run_simple(conn, 'fetch 1 in "SQL_CUR0x55d1"')[0]
        while True:  # psqlODBC fetches in chunks until one comes back empty
            chunk = run_simple(conn, 'fetch 100 in "SQL_CUR0x55d1"')[0]
            if not chunk:
                break
            fetched += chunk
        assert fetched == tables
        run_simple(conn, 'close "SQL_CUR0x55d1"')
        conn.commit()
        conn.autocommit = True
        run_simple(conn, f'declare "SQL_CUR0x55d2" cursor with hold for {SQL_TABLES}')
        assert run_simple(conn, 'fetch 1000 in "SQL_CUR0x55d2"')[0] == tables
        assert run_simple(conn, 'fetch 1000 in "SQL_CUR0x55d2"')[0] == []
        run_simple(conn, 'close "SQL_CUR0x55d2"')
        assert spark_jobs(conn) == jobs, "catalog queries must not start Spark jobs"
