"""pgAdmin 4 (pgadmin-org/pgadmin4, web/pgadmin): what its psycopg 3 driver sends when it
connects (utils/driver/psycopg3/connection.py, servers/templates/connect/sql/default/
check_recovery.sql) and the browser tree's `nodes.sql` templates for databases, schemas
(with the catalog macros of schemas/templates/catalog/pg/macros/catalogs.sql), tables and
columns, then View Data (tools/sqleditor/templates/sqleditor/sql/default/primary_keys.sql
and objectquery.sql). The Jinja templates are filled in as pgAdmin fills them for a plain
PostgreSQL 15 server (`last_system_oid` 16383, `show_sysobj` off). psycopg 3 sends a
statement without parameters as one simple-protocol message; every statement is replayed
over the simple and the extended protocol."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.integration.tools.replay import connect, run_extended, run_simple, spark_jobs

pytestmark = pytest.mark.integration

# connection.py: _initialize, after connecting (one simple-protocol message)
SESSION_SETUP = ("SET DateStyle=ISO; SET client_min_messages=notice; "
                 "SELECT set_config('bytea_output','hex',false) FROM pg_show_all_settings() "
                 "WHERE name = 'bytea_output'; SET client_encoding='UTF8';")

VERSION = "SELECT version()"

DATABASE = """
SELECT
    db.oid as did, db.datname, db.datallowconn,
    pg_encoding_to_char(db.encoding) AS serverencoding,
    has_database_privilege(db.oid, 'CREATE') as cancreate,
    datistemplate
FROM
    pg_catalog.pg_database db
WHERE db.datname = current_database()"""

GSSAPI = """
        SELECT
             gss_authenticated, encrypted
        FROM
            pg_catalog.pg_stat_gssapi
        WHERE pid = pg_backend_pid()"""

USER_INFO = """
        SELECT
            roles.oid as id, roles.rolname as name,
            roles.rolsuper as is_superuser,
            CASE WHEN roles.rolsuper THEN true ELSE roles.rolcreaterole END as
            can_create_role,
            CASE WHEN roles.rolsuper THEN true
            ELSE roles.rolcreatedb END as can_create_db,
            CASE WHEN 'pg_signal_backend'=ANY(ARRAY(WITH RECURSIVE cte AS (
            SELECT pg_roles.oid,pg_roles.rolname FROM pg_catalog.pg_roles
                WHERE pg_roles.oid = roles.oid
            UNION ALL
            SELECT m.roleid,pgr.rolname FROM cte cte_1
                JOIN pg_catalog.pg_auth_members m ON m.member = cte_1.oid
                JOIN pg_catalog.pg_roles pgr ON pgr.oid = m.roleid)
            SELECT rolname  FROM cte)) THEN True
            ELSE False END as can_signal_backend
        FROM
            pg_catalog.pg_roles as roles
        WHERE
            rolname = current_user"""

CHECK_RECOVERY = """SELECT CASE WHEN usesuper
       THEN pg_catalog.pg_is_in_recovery()
       ELSE FALSE
       END as inrecovery,
       CASE WHEN usesuper AND pg_catalog.pg_is_in_recovery()
       THEN pg_is_wal_replay_paused()
       ELSE FALSE
       END as isreplaypaused
FROM pg_catalog.pg_user WHERE usename=current_user"""

# databases/templates/databases/sql/default/nodes.sql (no did, no db_restrictions)
DATABASES = """SELECT
    db.oid as did, db.datname as name, ta.spcname as spcname, db.datallowconn,
    db.datistemplate AS is_template,
    pg_catalog.has_database_privilege(db.oid, 'CREATE') as cancreate, datdba as owner,
    descr.description
FROM
    pg_catalog.pg_database db
    LEFT OUTER JOIN pg_catalog.pg_tablespace ta ON db.dattablespace = ta.oid
    LEFT OUTER JOIN pg_catalog.pg_shdescription descr ON (
        db.oid=descr.objoid AND descr.classoid='pg_database'::regclass
    )
WHERE
    db.oid > 16383::OID OR db.datname IN ('postgres', 'edb')

ORDER BY datname"""

# schemas/templates/schemas/pg/default/sql/nodes.sql (no scid, show_sysobj off)
SCHEMAS = """SELECT
    nsp.oid,
    nsp.nspname as name,
    pg_catalog.has_schema_privilege(nsp.oid, 'CREATE') as can_create,
    pg_catalog.has_schema_privilege(nsp.oid, 'USAGE') as has_usage,
    des.description
FROM
    pg_catalog.pg_namespace nsp
    LEFT OUTER JOIN pg_catalog.pg_description des ON
        (des.objoid=nsp.oid AND des.classoid='pg_namespace'::regclass)
WHERE
     nspname NOT LIKE E'pg\\\\_%' AND
    NOT (
    (nsp.nspname = 'pg_catalog' AND EXISTS
        (SELECT 1 FROM pg_catalog.pg_class WHERE relname = 'pg_class' AND
            relnamespace = nsp.oid LIMIT 1)) OR
    (nsp.nspname = 'pgagent' AND EXISTS
        (SELECT 1 FROM pg_catalog.pg_class WHERE relname = 'pga_job' AND
            relnamespace = nsp.oid LIMIT 1)) OR
    (nsp.nspname = 'information_schema' AND EXISTS
        (SELECT 1 FROM pg_catalog.pg_class WHERE relname = 'tables' AND
            relnamespace = nsp.oid LIMIT 1))
    )

ORDER BY nspname"""

# schemas/tables/templates/tables/sql/default/nodes.sql (scid filled in, no tid)
TABLES = """SELECT rel.oid, rel.relname AS name,
    (SELECT count(*) FROM pg_catalog.pg_trigger WHERE tgrelid=rel.oid AND tgisinternal = FALSE) AS triggercount,
    (SELECT count(*) FROM pg_catalog.pg_trigger WHERE tgrelid=rel.oid AND tgisinternal = FALSE AND tgenabled = 'O') AS has_enable_triggers,
    (CASE WHEN rel.relkind = 'p' THEN true ELSE false END) AS is_partitioned,
    (SELECT count(1) FROM pg_catalog.pg_inherits WHERE inhrelid=rel.oid LIMIT 1) as is_inherits,
    (SELECT count(1) FROM pg_catalog.pg_inherits WHERE inhparent=rel.oid LIMIT 1) as is_inherited,
    des.description
FROM pg_catalog.pg_class rel
    LEFT OUTER JOIN pg_catalog.pg_description des ON (des.objoid=rel.oid AND des.objsubid=0 AND des.classoid='pg_class'::regclass)
    WHERE rel.relkind IN ('r','s','t','p') AND rel.relnamespace = {scid}::oid
    AND NOT rel.relispartition
    ORDER BY rel.relname"""

# schemas/tables/templates/columns/sql/default/nodes.sql (tid filled in)
COLUMNS = """SELECT DISTINCT att.attname as name, att.attnum as OID, pg_catalog.format_type(ty.oid,NULL) AS datatype,
pg_catalog.format_type(ty.oid,att.atttypmod) AS displaytypname,
att.attnotnull as not_null,
CASE WHEN att.atthasdef OR att.attidentity != '' OR ty.typdefault IS NOT NULL THEN True
ELSE False END as has_default_val, des.description, seq.seqtypid
FROM pg_catalog.pg_attribute att
    JOIN pg_catalog.pg_type ty ON ty.oid=atttypid
    JOIN pg_catalog.pg_namespace tn ON tn.oid=ty.typnamespace
    JOIN pg_catalog.pg_class cl ON cl.oid=att.attrelid
    JOIN pg_catalog.pg_namespace na ON na.oid=cl.relnamespace
    LEFT OUTER JOIN pg_catalog.pg_type et ON et.oid=ty.typelem
    LEFT OUTER JOIN pg_catalog.pg_attrdef def ON adrelid=att.attrelid AND adnum=att.attnum
    LEFT OUTER JOIN (pg_catalog.pg_depend JOIN pg_catalog.pg_class cs ON classid='pg_class'::regclass AND objid=cs.oid AND cs.relkind='S') ON refobjid=att.attrelid AND refobjsubid=att.attnum
    LEFT OUTER JOIN pg_catalog.pg_namespace ns ON ns.oid=cs.relnamespace
    LEFT OUTER JOIN pg_catalog.pg_index pi ON pi.indrelid=att.attrelid AND indisprimary
    LEFT OUTER JOIN pg_catalog.pg_description des ON (des.objoid=att.attrelid AND des.objsubid=att.attnum AND des.classoid='pg_class'::regclass)
    LEFT OUTER JOIN pg_catalog.pg_sequence seq ON cs.oid=seq.seqrelid
WHERE

    att.attrelid = {tid}::oid
    AND att.attnum > 0
    AND att.attisdropped IS FALSE
ORDER BY att.attnum"""

# tools/sqleditor/templates/sqleditor/sql/default/primary_keys.sql (obj_id filled in)
PRIMARY_KEYS = """SELECT at.attname, at.attnum, ty.typname
FROM pg_catalog.pg_attribute at LEFT JOIN pg_catalog.pg_type ty ON (ty.oid = at.atttypid)
JOIN pg_catalog.pg_class as cl ON cl.oid=AT.attrelid
JOIN pg_catalog.pg_namespace as nsp ON nsp.oid=cl.relnamespace
WHERE
    attrelid={tid}::oid AND
attnum = ANY (
(SELECT con.conkey FROM pg_catalog.pg_class rel LEFT OUTER JOIN pg_catalog.pg_constraint con ON con.conrelid=rel.oid
JOIN pg_catalog.pg_namespace as nsp ON nsp.oid=REL.relnamespace
AND con.contype='p' WHERE rel.relkind IN ('r','s','t', 'p') AND
    rel.oid = ({tid})::oid
)::oid[])"""

OBJECT_NAME = """SELECT n.nspname, r.relname
FROM pg_catalog.pg_class r
    LEFT JOIN pg_catalog.pg_namespace n ON (r.relnamespace = n.oid)
WHERE r.oid = {tid};"""

# tools/sqleditor/templates/sqleditor/sql/default/objectquery.sql: "View/Edit Data > First
# 100 Rows" sorts by the primary key
PREVIEW = """SELECT * FROM public.{table}
ORDER BY id ASC
LIMIT 100"""


def both(conn: psycopg.Connection, sql: str) -> list[tuple[Any, ...]]:
    """The rows of `sql` over the simple protocol, checked equal to the extended protocol's."""
    simple = run_simple(conn, sql)[0]
    assert run_extended(conn, sql.rstrip().rstrip(";")) == simple, sql
    return simple


def test_pgadmin_connect_browse_and_view_data(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("orders")
    with connect(mz_server) as conn:
        conn.execute(f"CREATE TABLE {t} (id int NOT NULL PRIMARY KEY, customer text, amount numeric(10,2), placed date)")
        conn.execute(f"INSERT INTO {t} SELECT g, 'c' || g, g * 1.5, DATE '2024-01-01' + g FROM generate_series(1, 150) g")
        results = run_simple(conn, SESSION_SETUP)
        assert results == [[], [], [("hex",)], []]
        (version,), = both(conn, VERSION)
        assert version.startswith("PostgreSQL ")
        (did, datname, allowconn, encoding, cancreate, istemplate), = both(conn, DATABASE)
        assert (datname, allowconn, encoding, istemplate) == ("materialize", True, "UTF8", False)
        # pgAdmin reads pg_stat_gssapi only from a server of version 12 or later (we report
        # 9.5, as Materialize does); Materialize has no pg_stat_gssapi: a clean 42P01, which
        # pgAdmin tolerates (it skips the GSSAPI details when the query fails)
        with pytest.raises(psycopg.errors.UndefinedTable):
            run_simple(conn, GSSAPI)
        with pytest.raises(psycopg.errors.UndefinedTable):
            run_extended(conn, GSSAPI)
        (_, name, superuser, *_rest), = both(conn, USER_INFO)
        assert name == "materialize" and superuser is True
        assert both(conn, CHECK_RECOVERY) == [(False, False)]
        # the CASE never calls pg_is_wal_replay_paused(); called, it is PostgreSQL's error
        # outside recovery (55000), raised when evaluated
        for run in (run_simple, run_extended):
            with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="recovery is not in progress"):
                run(conn, "SELECT pg_is_wal_replay_paused()")
        jobs = spark_jobs(conn)

        databases = both(conn, DATABASES)
        assert "materialize" in [r[1] for r in databases]
        schemas = {r[1]: r for r in both(conn, SCHEMAS)}
        assert "public" in schemas
        assert not {"pg_catalog", "information_schema"} & set(schemas)
        tables = both(conn, TABLES.format(scid=schemas["public"][0]))
        (oid, _, triggers, enabled, partitioned, inherits, inherited, _descr), = [r for r in tables if r[1] == t]
        assert (triggers, enabled, partitioned, inherits, inherited) == (0, 0, False, 0, 0)
        columns = both(conn, COLUMNS.format(tid=oid))
        assert [(r[0], r[1], r[2], r[3], r[4]) for r in columns] == [
            ("id", 1, "integer", "integer", True),
            ("customer", 2, "text", "text", False),
            ("amount", 3, "numeric", "numeric(10,2)", False),
            ("placed", 4, "date", "date", False)]
        assert both(conn, PRIMARY_KEYS.format(tid=oid)) == [("id", 1, "int4")]
        assert both(conn, OBJECT_NAME.format(tid=oid)) == [("public", t)]
        assert spark_jobs(conn) == jobs, "catalog queries must not start Spark jobs"

        rows = both(conn, PREVIEW.format(table=t))
        assert len(rows) == 100 and [r[0] for r in rows] == list(range(1, 101))
        assert rows[0][1:] == ("c1", Decimal("1.50"), datetime.date(2024, 1, 2))
