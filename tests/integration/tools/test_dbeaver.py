"""DBeaver's PostgreSQL plugin (org.jkiss.dbeaver.ext.postgresql: PostgreSQLDataSource,
PostgreSQLDatabase, PostgreSQLSchema, PostgreSQLTableBase, ...): connection start-up and
the navigator's reads of databases, schemas, tables, columns, constraints, indexes, types
and roles. DBeaver uses pgjdbc: prepared statements with `$n` parameters."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.integration.harness import MzServer
from tests.integration.tools.replay import connect, run_extended, spark_jobs

pytestmark = pytest.mark.integration

STARTUP = [
    ("SET application_name = 'DBeaver 24.0.0 - Main <materialize>'", None),
    ("SELECT current_schema(),session_user", None),
    ("SHOW search_path", None),
    ("select * from pg_catalog.pg_settings where name=%s", ("standard_conforming_strings",)),
    ("SELECT db.oid,db.* FROM pg_catalog.pg_database db WHERE datallowconn AND NOT datistemplate OR db.datname =%s ORDER BY db.datname", ("materialize",)),
    ("SELECT a.oid,a.* FROM pg_catalog.pg_roles a ORDER BY a.rolname", None),
    ("SELECT t.oid,t.*,pg_tablespace_location(t.oid) loc FROM pg_catalog.pg_tablespace t ORDER BY t.oid", None),
    ("SELECT l.oid,l.* FROM pg_catalog.pg_language l", None),
    ("SELECT e.oid,e.* FROM pg_catalog.pg_extension e ORDER BY e.oid", None),
    ("SELECT am.oid,am.* FROM pg_catalog.pg_am am ORDER BY am.oid", None),
    ("SELECT c.oid,c.* FROM pg_catalog.pg_collation c ORDER BY c.oid", None),
]

SCHEMAS = """SELECT n.oid,n.*,d.description FROM pg_catalog.pg_namespace n
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=n.oid AND d.objsubid=0 AND d.classoid='pg_namespace'::regclass
 ORDER BY nspname"""

TABLES = """SELECT c.oid,c.*,t.relname as tabrelname,rn.nspname as tabrelnsp,d.description
FROM pg_catalog.pg_class c
LEFT OUTER JOIN pg_catalog.pg_class t ON t.oid=c.reltoastrelid
LEFT OUTER JOIN pg_catalog.pg_namespace rn ON rn.oid=t.relnamespace
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND d.objsubid=0 AND d.classoid='pg_class'::regclass
WHERE c.relnamespace=%s AND c.relkind not in ('i','I','c')"""

COLUMNS = """SELECT c.relname,a.*,pg_catalog.pg_get_expr(ad.adbin, ad.adrelid, true) as def_value,dsc.description,dep.objid
FROM pg_catalog.pg_attribute a
INNER JOIN pg_catalog.pg_class c ON (a.attrelid=c.oid)
LEFT OUTER JOIN pg_catalog.pg_attrdef ad ON (a.attrelid=ad.adrelid AND a.attnum = ad.adnum)
LEFT OUTER JOIN pg_catalog.pg_description dsc ON (c.oid=dsc.objoid AND a.attnum = dsc.objsubid)
LEFT OUTER JOIN pg_depend dep on dep.refobjid = a.attrelid AND dep.deptype = 'i' and dep.refobjsubid = a.attnum and dep.classid = dep.refclassid
WHERE NOT a.attisdropped AND c.relkind not in ('i','I','c') AND c.oid=%s
ORDER BY a.attnum"""

CONSTRAINTS = """SELECT c.oid,c.*,t.relname as tabrelname,rt.relnamespace as refnamespace,d.description, case when c.contype='c' then "substring"(pg_get_constraintdef(c.oid), 7) else null end consrc_copy
FROM pg_catalog.pg_constraint c
INNER JOIN pg_catalog.pg_class t ON t.oid=c.conrelid
LEFT OUTER JOIN pg_catalog.pg_class rt ON rt.oid=c.confrelid
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND d.objsubid=0 AND d.classoid='pg_constraint'::regclass
WHERE t.relnamespace=%s AND t.oid=%s
ORDER BY c.oid"""

INDEXES = """SELECT i.*,i.indkey as keys,c.relname,c.relnamespace,c.relam,c.reltablespace,tc.relname as tabrelname,dsc.description,pg_catalog.pg_get_expr(i.indpred, i.indrelid) as pred_expr,pg_catalog.pg_get_expr(i.indexprs, i.indrelid, true) as expr,pg_catalog.pg_relation_size(i.indexrelid) as index_rel_size,pg_catalog.pg_stat_get_numscans(i.indexrelid) as index_num_scans
FROM pg_catalog.pg_index i
INNER JOIN pg_catalog.pg_class c ON c.oid=i.indexrelid
INNER JOIN pg_catalog.pg_class tc ON tc.oid=i.indrelid
LEFT OUTER JOIN pg_catalog.pg_description dsc ON i.indexrelid=dsc.objoid
WHERE  i.indrelid=%s
ORDER BY tabrelname, c.relname"""

TYPES = """SELECT t.oid,t.*,c.relkind,format_type(nullif(t.typbasetype, 0), t.typtypmod) as base_type_name, d.description
FROM pg_catalog.pg_type t
LEFT OUTER JOIN pg_catalog.pg_type et ON et.oid=t.typelem
LEFT OUTER JOIN pg_catalog.pg_class c ON c.oid=t.typrelid
LEFT OUTER JOIN pg_catalog.pg_description d ON t.oid=d.objoid
WHERE t.typname IS NOT NULL
AND (c.relkind IS NULL OR c.relkind = 'c') AND (et.typcategory IS NULL OR et.typcategory <> 'C')"""

PROCEDURES = """SELECT p.oid,p.*,pg_catalog.pg_get_function_arguments(p.oid) as arguments_str, pg_catalog.pg_get_function_result(p.oid) as result_str, d.description
FROM pg_catalog.pg_proc p
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=p.oid
WHERE p.pronamespace=%s
ORDER BY p.proname"""

VIEW_DEF = "SELECT pg_catalog.pg_get_viewdef(%s, true)"

SESSIONS = "SELECT sa.* FROM pg_catalog.pg_stat_activity sa"


def test_dbeaver_navigator(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t, v = uniq("items"), uniq("items_v")
    with connect(mz_server) as conn:
        conn.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, label varchar(40) NOT NULL, price numeric(8,2) DEFAULT 0)")
        conn.execute(f"CREATE VIEW {v} AS SELECT id, label FROM {t}")
        jobs = spark_jobs(conn)
        for sql, params in STARTUP:
            run_extended(conn, sql, params)
        schemas = {row[2]: row[0] for row in run_extended(conn, SCHEMAS)}
        assert {"public", "pg_catalog", "information_schema", "mz_catalog", "mz_internal"} <= set(schemas)
        public = schemas["public"]
        tables = run_extended(conn, TABLES, (public,))
        by_name = {row[2]: row for row in tables}  # c.oid, then c.* starting with oid, relname
        assert t in by_name and v in by_name
        assert by_name[t][17] == "r" and by_name[v][17] == "v"  # relkind: c.oid, then pg_class column 17
        table_oid = by_name[t][0]
        cols = run_extended(conn, COLUMNS, (table_oid,))
        assert [(r[0], r[2], r[6]) for r in cols] == [(t, "id", 1), (t, "label", 2), (t, "price", 3)]
        assert cols[2][-3] == "0"  # def_value
        cons = run_extended(conn, CONSTRAINTS, (public, table_oid))
        assert [(r[2], r[4]) for r in cons] == [(f"{t}_pkey", "p")]
        idx = run_extended(conn, INDEXES, (table_oid,))
        assert len(idx) == 1 and idx[0][6] is True  # indisprimary
        assert run_extended(conn, TYPES)
        assert run_extended(conn, PROCEDURES, (public,)) == []
        view_oid = by_name[v][0]
        (definition,), = run_extended(conn, VIEW_DEF, (view_oid,))
        assert "SELECT" in definition.upper() and t in definition
        assert any(r[2] for r in run_extended(conn, SESSIONS))
        assert spark_jobs(conn) == jobs, "catalog queries must not start Spark jobs"
