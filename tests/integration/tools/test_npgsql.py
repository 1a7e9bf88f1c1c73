"""Npgsql's type loading (PostgresDatabaseInfo.LoadBackendTypes), which Power BI and every
.NET client run when a connection opens: `SELECT version()`, then one batch with the big
pg_type query (arrays recognised by their `typreceive` function `array_recv`, ranges via
pg_range, domains via typbasetype), the composite-type fields and the enum labels; then
the GetSchema("Tables"/"Columns") metadata queries Power BI's navigator uses."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.integration.harness import MzServer
from tests.integration.tools.replay import connect, run_extended, run_simple, spark_jobs

pytestmark = pytest.mark.integration

TYPES = """SELECT ns.nspname, t.oid, t.typname, t.typtype, t.typnotnull, t.elemtypoid
FROM (
    -- Arrays have typtype=b - this subquery identifies them by their typreceive and converts their typtype to a
    -- We first do this for the type (innerest-most subquery), and then for its element type
    -- This also returns the array element, range subtype and domain base type as elemtypoid
    SELECT
        typ.oid, typ.typnamespace, typ.typname, typ.typtype, typ.typrelid, typ.typnotnull, typ.relkind,
        elemtyp.oid AS elemtypoid, elemtyp.typname AS elemtypname, elemcls.relkind AS elemrelkind,
        CASE WHEN elemproc.proname='array_recv' THEN 'a' ELSE elemtyp.typtype END AS elemtyptype
    FROM (
        SELECT typ.oid, typnamespace, typname, typrelid, typnotnull, relkind, typelem AS elemoid,
            CASE WHEN proc.proname='array_recv' THEN 'a' ELSE typ.typtype END AS typtype,
            CASE
                WHEN proc.proname='array_recv' THEN typ.typelem
                WHEN typ.typtype='r' THEN rngsubtype
                WHEN typ.typtype='d' THEN typ.typbasetype
            END AS elemtypoid
        FROM pg_type AS typ
        LEFT JOIN pg_class AS cls ON (cls.oid = typ.typrelid)
        LEFT JOIN pg_proc AS proc ON proc.oid = typ.typreceive
        LEFT JOIN pg_range ON (pg_range.rngtypid = typ.oid)
    ) AS typ
    LEFT JOIN pg_type AS elemtyp ON elemtyp.oid = elemtypoid
    LEFT JOIN pg_class AS elemcls ON (elemcls.oid = elemtyp.typrelid)
    LEFT JOIN pg_proc AS elemproc ON elemproc.oid = elemtyp.typreceive
) AS t
JOIN pg_namespace AS ns ON (ns.oid = typnamespace)
WHERE
    typtype IN ('b', 'r', 'm', 'e', 'd') OR -- Base, range, multirange, enum, domain
    (typtype = 'c' AND relkind='c') OR -- User-defined free-standing composites (not table composites) by default
    (typtype = 'p' AND typname IN ('record', 'void')) OR -- Some special supported pseudo-types
    (typtype = 'a' AND (  -- Array of...
        elemtyptype IN ('b', 'r', 'm', 'e', 'd') OR -- Array of base, range, multirange, enum, domain
        (elemtyptype = 'p' AND elemtypname IN ('record', 'void')) OR -- Arrays of special supported pseudo-types
        (elemtyptype = 'c' AND elemrelkind='c') -- Array of user-defined free-standing composites (not table composites) by default
    ))
ORDER BY CASE
       WHEN typtype IN ('b', 'e', 'p') THEN 0           -- First base types, enums, pseudo-types
       WHEN typtype = 'r' THEN 1                        -- Ranges after
       WHEN typtype = 'm' THEN 2                        -- Multiranges after
       WHEN typtype = 'c' THEN 3                        -- Composites after
       WHEN typtype = 'd' AND elemtyptype <> 'a' THEN 4 -- Domains over non-arrays after
       WHEN typtype = 'a' THEN 5                        -- Arrays after
       WHEN typtype = 'd' AND elemtyptype = 'a' THEN 6  -- Domains over arrays last
END;

-- Load field definitions for (free-standing) composite types
SELECT typ.oid, att.attname, att.atttypid
FROM pg_type AS typ
JOIN pg_namespace AS ns ON (ns.oid = typ.typnamespace)
JOIN pg_class AS cls ON (cls.oid = typ.typrelid)
JOIN pg_attribute AS att ON (att.attrelid = typ.typrelid)
WHERE
  (typ.typtype = 'c' AND cls.relkind='c') AND
  attnum > 0 AND     -- Don't load system attributes
  NOT attisdropped
ORDER BY typ.oid, att.attnum;

-- Load enum fields
SELECT pg_type.oid, enumlabel
FROM pg_enum
JOIN pg_type ON pg_type.oid=enumtypid
ORDER BY oid, enumsortorder;"""

GET_SCHEMA_TABLES = """SELECT table_catalog, table_schema, table_name, table_type
FROM information_schema.tables
WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')
ORDER BY table_type, table_schema, table_name"""

GET_SCHEMA_COLUMNS = """SELECT table_catalog, table_schema, table_name, column_name, ordinal_position, column_default,
  is_nullable, udt_name AS data_type, character_maximum_length, character_octet_length, numeric_precision,
  numeric_precision_radix, numeric_scale, datetime_precision, character_set_catalog, character_set_schema,
  character_set_name, collation_catalog
FROM information_schema.columns
WHERE table_catalog = %s AND table_name = %s
ORDER BY ordinal_position"""


def test_npgsql_type_loading(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("accounts")
    with connect(mz_server) as conn:
        conn.execute(f"CREATE TABLE {t} (id int NOT NULL, owner varchar(64), balance numeric(14,2), opened date)")
        jobs = spark_jobs(conn)
        (version,), = run_simple(conn, "SELECT version();")[0]
        assert version.startswith("PostgreSQL 9.5")
        types, composites, enums = run_simple(conn, TYPES)
        by_name = {(r[0], r[2]): r for r in types}
        assert by_name[("pg_catalog", "int4")][3] == "b"
        assert by_name[("pg_catalog", "_int4")][3] == "a" and by_name[("pg_catalog", "_int4")][5] == 23
        assert by_name[("mz_catalog", "uint8")][3] == "b"
        assert by_name[("pg_catalog", "record")][3] == "p"
        order = [r[3] for r in types]
        assert order.index("a") > max(i for i, k in enumerate(order) if k == "b")  # arrays after base types
        assert composites == [] and enums == []
        tables = run_extended(conn, GET_SCHEMA_TABLES)
        assert ("materialize", "public", t, "BASE TABLE") in tables
        cols = run_extended(conn, GET_SCHEMA_COLUMNS, ("materialize", t))
        assert [(r[3], r[4], r[6], r[7], r[8], r[10], r[12]) for r in cols] == [
            ("id", 1, "NO", "int4", None, 32, 0),
            ("owner", 2, "YES", "varchar", 64, None, None),
            ("balance", 3, "YES", "numeric", None, 14, 2),
            ("opened", 4, "YES", "date", None, None, None),
        ]
        assert spark_jobs(conn) == jobs, "catalog queries must not start Spark jobs"
