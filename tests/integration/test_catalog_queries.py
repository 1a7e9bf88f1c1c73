"""Catalog-only queries: the introspection relations of DESIGN §8 (names, PG types, empty
until dataflows report), mz_catalog / pg_catalog / information_schema kept in sync with
DDL, catalog functions answering what PostgreSQL 15 answers, and no Spark job for any of it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.integration.tools.reference import connect as reference_connect
from tests.integration.tools.reference import materialize_reference
from tests.integration.tools.replay import spark_jobs

pytestmark = pytest.mark.integration

TEXT, OID, INT2, INT4, INT8, BOOL, INTERVAL, UINT8, TEXT_ARRAY = 25, 26, 21, 23, 20, 16, 1186, 16462, 1009

# DESIGN §8 (and Materialize's docs for the mz_catalog columns named there)
SHAPES: dict[str, list[tuple[str, int]]] = {
    "mz_internal.mz_compute_operator_hydration_statuses_per_worker": [
        ("object_id", TEXT), ("plan_node_id", UINT8), ("replica_id", TEXT), ("worker_id", UINT8), ("hydrated", BOOL)],
    "mz_internal.mz_compute_operator_hydration_statuses": [
        ("object_id", TEXT), ("plan_node_id", UINT8), ("replica_id", TEXT), ("hydrated", BOOL)],
    "mz_internal.mz_compute_hydration_statuses": [
        ("object_id", TEXT), ("replica_id", TEXT), ("hydrated", BOOL), ("hydration_time", INTERVAL)],
    "mz_internal.mz_hydration_statuses": [("object_id", TEXT), ("replica_id", TEXT), ("hydrated", BOOL)],
    "mz_internal.mz_lir_mapping": [
        ("global_id", TEXT), ("lir_id", UINT8), ("operator", TEXT), ("parent_lir_id", UINT8), ("nesting", INT2)],
    "mz_introspection.mz_lir_mapping": [
        ("global_id", TEXT), ("lir_id", UINT8), ("operator", TEXT), ("parent_lir_id", UINT8), ("nesting", INT2)],
    "mz_catalog.mz_databases": [("id", TEXT), ("oid", OID), ("name", TEXT), ("owner_id", TEXT), ("privileges", TEXT_ARRAY)],
    "mz_catalog.mz_schemas": [("id", TEXT), ("oid", OID), ("database_id", TEXT), ("name", TEXT), ("owner_id", TEXT),
                              ("privileges", TEXT_ARRAY)],
    "mz_catalog.mz_index_columns": [("index_id", TEXT), ("index_position", UINT8), ("on_position", UINT8),
                                    ("on_expression", TEXT), ("nullable", BOOL)],
    "mz_catalog.mz_columns": [("id", TEXT), ("name", TEXT), ("position", UINT8), ("nullable", BOOL), ("type", TEXT),
                              ("default", TEXT), ("type_oid", OID), ("type_mod", INT4)],
    "mz_catalog.mz_cluster_replicas": [("id", TEXT), ("name", TEXT), ("cluster_id", TEXT), ("size", TEXT),
                                       ("availability_zone", TEXT), ("owner_id", TEXT), ("disk", BOOL)],
}
RELATIONS = ["mz_tables", "mz_views", "mz_materialized_views", "mz_indexes", "mz_index_columns", "mz_columns",
             "mz_objects", "mz_schemas", "mz_databases", "mz_clusters", "mz_cluster_replicas", "mz_sources", "mz_types"]


@pytest.fixture(scope="module")
def reference() -> Iterator[tuple[str, int]]:
    with materialize_reference("pgref-catalog-") as ref:
        yield ref


def test_spark_job_counter(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    """The counter the other tests rely on really counts Spark jobs."""
    t = uniq("t")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (a int)")
        conn.execute(f"INSERT INTO {t} VALUES (1), (2), (3)")
        before = spark_jobs(conn)
        assert conn.execute(f"SELECT sum(a) FROM {t}").fetchall() == [(6,)]  # a Spark job
        after = spark_jobs(conn)
        assert after > before
        conn.execute("SELECT * FROM pg_catalog.pg_class").fetchall()
        conn.execute("SELECT * FROM mz_catalog.mz_tables").fetchall()
        assert spark_jobs(conn) == after


def test_introspection_relations(mz_server: MzServer) -> None:
    with mz_server.connect() as conn:
        jobs = spark_jobs(conn)
        for rel, shape in SHAPES.items():
            cur = conn.execute(f"SELECT * FROM {rel}")
            assert [(d.name, d.type_code) for d in cur.description] == shape, rel
        for name in RELATIONS:
            conn.execute(f"SELECT * FROM mz_catalog.{name}").fetchall()
        # the hydration relations agree with each other (they are filled by the compute
        # controller as dataflows hydrate; empty until then)
        per_worker = conn.execute("SELECT object_id, plan_node_id, replica_id, bool_and(hydrated) FROM "
                                  "mz_internal.mz_compute_operator_hydration_statuses_per_worker GROUP BY 1, 2, 3").fetchall()
        operators = conn.execute("SELECT * FROM mz_internal.mz_compute_operator_hydration_statuses").fetchall()
        assert sorted(per_worker) == sorted(operators)
        compute = conn.execute("SELECT object_id, replica_id, hydrated FROM mz_internal.mz_compute_hydration_statuses").fetchall()
        everything = conn.execute("SELECT object_id, replica_id, hydrated FROM mz_internal.mz_hydration_statuses").fetchall()
        assert set(compute) <= set(everything)
        replicas = {r for (r,) in conn.execute("SELECT id FROM mz_catalog.mz_cluster_replicas").fetchall()}
        assert {r for _, r, _ in everything} <= replicas
        maintained = {i for (i,) in conn.execute("SELECT id FROM mz_catalog.mz_indexes UNION ALL "
                                                 "SELECT id FROM mz_catalog.mz_materialized_views").fetchall()}
        reported = {o for o, *_ in operators}
        assert {o for o, _, _ in compute} <= maintained | reported
        for object_id, _replica, hydrated in compute:
            nodes = [h for o, _n, _r, h in operators if o == object_id]
            if nodes:
                assert hydrated == all(nodes)
        assert conn.execute("SELECT id, name FROM mz_catalog.mz_clusters").fetchall() == [("u1", "quickstart")]
        assert conn.execute("SELECT id, name, cluster_id FROM mz_catalog.mz_cluster_replicas").fetchall() == [("u1", "r1", "u1")]
        assert conn.execute("SELECT name FROM mz_catalog.mz_databases").fetchall() == [("materialize",)]
        uint8 = conn.execute("SELECT t.oid, typname, typlen, typcategory, typarray, n.nspname FROM pg_type t "
                             "JOIN pg_namespace n ON n.oid = t.typnamespace WHERE typname = 'uint8'").fetchall()
        assert uint8 == [(UINT8, "uint8", 8, "N", 16463, "mz_catalog")]
        assert spark_jobs(conn) == jobs


def test_catalog_follows_ddl(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t, v, mv, i = uniq("t"), uniq("v"), uniq("mv"), uniq("i")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (a int NOT NULL, b text)")
        conn.execute(f"CREATE VIEW {v} AS SELECT a FROM {t}")
        conn.execute(f"CREATE MATERIALIZED VIEW {mv} AS SELECT b FROM {t}")
        conn.execute(f"CREATE INDEX {i} ON {t} (b)")
        kinds = dict(conn.execute("SELECT relname, relkind FROM pg_class WHERE relname IN (%s, %s, %s, %s)",
                                  (t, v, mv, i)).fetchall())
        assert kinds == {t: "r", v: "v", mv: "m", i: "i"}
        (tid,), = conn.execute("SELECT id FROM mz_catalog.mz_tables WHERE name = %s", (t,)).fetchall()
        assert conn.execute("SELECT name, position::int, nullable, type FROM mz_catalog.mz_columns WHERE id = %s ORDER BY position",
                            (tid,)).fetchall() == [("a", 1, False, "integer"), ("b", 2, True, "text")]
        (iid, on_id), = conn.execute("SELECT id, on_id FROM mz_catalog.mz_indexes WHERE name = %s", (i,)).fetchall()
        assert on_id == tid
        assert conn.execute("SELECT index_position, on_position, on_expression FROM mz_catalog.mz_index_columns "  # uint8: text in psycopg
                            "WHERE index_id = %s", (iid,)).fetchall() == [("1", "2", None)]
        objs = dict(conn.execute("SELECT name, type FROM mz_catalog.mz_objects WHERE name IN (%s, %s, %s, %s)",
                                 (t, v, mv, i)).fetchall())
        assert objs == {t: "table", v: "view", mv: "materialized-view", i: "index"}
        assert conn.execute("SELECT table_type FROM information_schema.tables WHERE table_name = %s", (v,)).fetchall() == [("VIEW",)]
        (definition,), = conn.execute("SELECT definition FROM pg_views WHERE viewname = %s", (v,)).fetchall()
        assert t in definition
        assert conn.execute("SELECT matviewname FROM pg_matviews WHERE matviewname = %s", (mv,)).fetchall() == [(mv,)]
        statuses = conn.execute("SELECT object_id, replica_id FROM mz_internal.mz_compute_hydration_statuses "
                                "WHERE object_id IN (SELECT id FROM mz_catalog.mz_objects WHERE name IN (%s, %s))",
                                (mv, i)).fetchall()
        assert len(statuses) == 2 and all(r == "u1" for _, r in statuses)
        conn.execute(f"DROP MATERIALIZED VIEW {mv}")
        conn.execute(f"DROP VIEW {v}")
        conn.execute(f"DROP TABLE {t} CASCADE")
        assert conn.execute("SELECT count(*) FROM pg_class WHERE relname IN (%s, %s, %s, %s)", (t, v, mv, i)).fetchall() == [(0,)]
        assert conn.execute("SELECT count(*) FROM mz_catalog.mz_columns WHERE id = %s", (tid,)).fetchall() == [(0,)]


def compare(mz: psycopg.Connection, pg: psycopg.Connection, sql: str, params: tuple[object, ...] = ()) -> None:
    ours = mz.execute(sql, params or None).fetchall()
    theirs = pg.execute(sql, params or None).fetchall()
    assert ours == theirs, f"{sql}\nmzspark:  {ours}\npostgres: {theirs}"


def test_functions_like_postgres(mz_server: MzServer, reference: tuple[str, int]) -> None:
    with mz_server.connect() as mz, reference_connect(reference) as pg:
        jobs = spark_jobs(mz)
        compare(mz, pg, "SELECT format_type(t::oid, m) FROM (VALUES (23, -1), (1043, 24), (1043, -1), (1042, -1), "
                        "(1042, 5), (1700, 655366), (1700, -1), (1184, -1), (1184, 3), (1114, -1), (1083, 2), "
                        "(1007, -1), (1015, 24), (22, -1), (30, -1), (18, -1), (19, -1), (25, -1), (16, -1), "
                        "(2205, -1), (1009, -1), (1231, 655366)) AS v(t, m)")
        compare(mz, pg, "SELECT format_type(1043, NULL), format_type(1042, NULL), format_type(NULL, -1)")
        compare(mz, pg, "SELECT quote_ident(x) FROM (VALUES ('abc'), ('ABC'), ('select'), ('a b'), ('a\"b'), "
                        "('_x1'), ('1x'), ('user'), ('name')) AS v(x)")
        compare(mz, pg, "SELECT 'int4'::regtype::text, 'character varying'::regtype::text, 'pg_class'::regclass::oid, "
                        "'pg_catalog.pg_type'::regclass::text, 'int4'::regtype::oid, 'array_in'::regproc::oid, "
                        "'_int4'::regtype::text, 'int4[]'::regtype::oid, 'pg_catalog'::regnamespace::oid")
        compare(mz, pg, "SELECT typname, typlen, typbyval, typtype, typcategory, typdelim, typelem, typarray, "
                        "typinput::text, typoutput::text, typreceive::text, typsend::text, typbasetype, typtypmod, "
                        "typcollation FROM pg_type WHERE oid IN (16, 18, 19, 20, 21, 22, 23, 25, 26, 30, 700, 701, "
                        "1007, 1009, 1043, 1082, 1114, 1184, 1186, 1700, 2205, 3802) ORDER BY oid")
        compare(mz, pg, "SELECT count(*), count(*) FILTER (WHERE catcode = 'R') FROM pg_get_keywords()")
        compare(mz, pg, "SELECT oid, nspname FROM pg_namespace WHERE nspname IN ('pg_catalog', 'public')")
        compare(mz, pg, "SELECT oid, relname, relkind, relnatts FROM pg_class WHERE oid IN "
                        "('pg_index'::regclass, 'pg_attribute'::regclass, 'pg_type'::regclass) ORDER BY oid")
        compare(mz, pg, "SELECT attname, atttypid, attlen, attnum, attnotnull FROM pg_attribute "
                        "WHERE attrelid = 'pg_catalog.pg_index'::regclass AND attnum > 0 ORDER BY attnum")
        compare(mz, pg, "SELECT pg_catalog.array_lower(ARRAY['a','b'], 1), pg_catalog.array_upper(ARRAY['a','b'], 1), "
                        "string_to_array('a,b,c', ','), current_setting('standard_conforming_strings'), "
                        "has_table_privilege('pg_class', 'select'), has_schema_privilege('public', 'usage'), "
                        "pg_table_is_visible('pg_class'::regclass), pg_type_is_visible(23)")
        compare(mz, pg, "SELECT relname FROM pg_class c WHERE c.relname OPERATOR(pg_catalog.~) '^(pg_am)$' "
                        "COLLATE pg_catalog.default AND pg_catalog.pg_table_is_visible(c.oid)")
        compare(mz, pg, "SELECT s, pg_get_keywords.word FROM generate_series(1, 2) s, pg_get_keywords() "
                        "WHERE pg_get_keywords.word = 'select'")
        assert spark_jobs(mz) == jobs


def test_table_metadata_like_postgres(mz_server: MzServer, reference: tuple[str, int], uniq: Callable[[str], str]) -> None:
    t = uniq("m")
    ddl = (f"CREATE TABLE {t} (id int NOT NULL, code varchar(12) NOT NULL, amount numeric(12,3), at timestamptz, "
           f"note text DEFAULT 'n/a', big bigint, PRIMARY KEY (id, code))")
    with mz_server.connect() as mz, reference_connect(reference) as pg:
        mz.execute(ddl)
        pg.execute(ddl)
        jobs = spark_jobs(mz)
        compare(mz, pg, "SELECT column_name, ordinal_position, is_nullable, data_type, "
                        "character_maximum_length, character_octet_length, numeric_precision, numeric_precision_radix, "
                        "numeric_scale, datetime_precision, udt_name, is_updatable "
                        "FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position", (t,))
        compare(mz, pg, "SELECT attname, atttypid, attlen, attnum, atttypmod, attbyval, attalign, attstorage, "
                        "attnotnull, atthasdef, attcollation, attisdropped FROM pg_attribute "
                        "WHERE attrelid = %s::regclass AND attnum > 0 ORDER BY attnum", (t,))
        compare(mz, pg, "SELECT relkind, relnatts, relhasindex, relpersistence, relam, relhasrules, relispopulated "
                        "FROM pg_class WHERE relname = %s", (t,))
        compare(mz, pg, "SELECT i.indnatts, i.indisunique, i.indisprimary, i.indkey::text, c.relname, "
                        "pg_get_indexdef(i.indexrelid), pg_get_indexdef(i.indexrelid, 2, true) FROM pg_index i "
                        "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = %s::regclass", (t,))
        compare(mz, pg, "SELECT conname, contype, conkey, pg_get_constraintdef(oid), pg_get_constraintdef(oid, true) "
                        "FROM pg_constraint WHERE conrelid = %s::regclass", (t,))
        compare(mz, pg, "SELECT tc.constraint_name, tc.constraint_type, kcu.column_name, kcu.ordinal_position "
                        "FROM information_schema.table_constraints tc JOIN information_schema.key_column_usage kcu "
                        "ON kcu.constraint_name = tc.constraint_name AND kcu.table_name = tc.table_name "
                        "WHERE tc.table_name = %s AND tc.constraint_type = 'PRIMARY KEY' ORDER BY 4", (t,))
        # column defaults are shown as written (Postgres deparses them: 'n/a'::text)
        assert mz.execute("SELECT a.attname, pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_attribute a "
                          "ON a.attrelid = d.adrelid AND a.attnum = d.adnum WHERE d.adrelid = %s::regclass",
                          (t,)).fetchall() == [("note", "'n/a'")]
        compare(mz, pg, "SELECT schemaname, tablename, indexname FROM pg_indexes WHERE tablename = %s", (t,))
        compare(mz, pg, "SELECT schemaname, tablename, tableowner, hasindexes FROM pg_tables WHERE tablename = %s", (t,))
        assert spark_jobs(mz) == jobs
