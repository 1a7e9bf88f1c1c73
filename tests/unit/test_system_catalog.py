"""The DuckDB-served system relations (catalog/system): built-in rows, the snapshot of the
catalog and its refresh on DDL, visibility, primary keys from CREATE TABLE, the
introspection state API for the compute controller, format_type, and the lockdown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from catalog.catalog import Catalog, Column
from catalog.system.db import SystemDb
from catalog.system.relations import SYSTEM_RELATIONS, duck_type, pg_type_of_duck
from catalog.system.rows import primary_key_of
from sql.types import SqlType


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[Catalog]:
    cat = Catalog(tmp_path / "data")
    try:
        yield cat
    finally:
        cat.close()


def q(db: SystemDb, sql: str) -> list[tuple]:
    return db.query(sql)[1]


def table(cat: Catalog, name: str, sql: str, cols: list[Column], schema: str = "public") -> str:
    return cat.create_item(schema=schema, name=name, kind="table", create_sql=sql, columns=cols, with_shard=True).id


def test_builtin_rows(catalog: Catalog) -> None:
    db = catalog.system_db()
    assert q(db, "SELECT typname, typlen, typarray FROM mzsys.pg.pg_type WHERE oid = 23") == [("int4", 4, 1007)]
    assert q(db, "SELECT typname, typnamespace, typarray FROM mzsys.pg.pg_type WHERE oid = 16462") == [("uint8", 16656, 16463)]
    assert q(db, "SELECT proname FROM mzsys.pg.pg_proc WHERE oid = 2400") == [("array_recv",)]
    assert q(db, "SELECT nspname FROM mzsys.pg.pg_namespace ORDER BY oid") == [
        ("pg_catalog",), ("public",), ("mz_catalog",), ("mz_internal",), ("information_schema",),
            ("mz_introspection",)]
    n = q(db, "SELECT count(*) FROM mzsys.pg.pg_class WHERE relnamespace = 11")[0][0]
    assert n == sum(1 for r in SYSTEM_RELATIONS.values() if r.schema == "pg_catalog")
    # every system relation's columns are in pg_attribute, in order
    cols = q(db, "SELECT attname FROM mzsys.pg.pg_attribute WHERE attrelid = 1259 ORDER BY attnum")
    assert [c for (c,) in cols] == [c for c, _ in SYSTEM_RELATIONS[("pg_catalog", "pg_class")].columns]
    assert q(db, "SELECT rolname, rolsuper FROM mzsys.pg.pg_roles") == [("materialize", True)]
    assert q(db, "SELECT datname, encoding FROM mzsys.pg.pg_database") == [("materialize", 6)]


def test_snapshot_follows_ddl(catalog: Catalog) -> None:
    db = catalog.system_db()
    tid = table(catalog, "t", "CREATE TABLE t (a int PRIMARY KEY, b text NOT NULL, c numeric(10,2) DEFAULT 1)",
                [Column("a", SqlType("int4"), False), Column("b", SqlType("text"), False),
                 Column("c", SqlType("numeric", ((10 << 16) | 2) + 4), True, "1")])
    db.refresh()
    t = catalog.get_item_by_id(tid)
    assert t is not None
    assert q(db, f"SELECT relname, relkind, relnatts, relhasindex FROM mzsys.pg.pg_class WHERE oid = {t.oid}") == [("t", "r", 3, True)]
    assert q(db, f"SELECT attname, atttypid, atttypmod, attnotnull, atthasdef FROM mzsys.pg.pg_attribute "
                 f"WHERE attrelid = {t.oid} ORDER BY attnum") == [
        ("a", 23, -1, True, False), ("b", 25, -1, True, False), ("c", 1700, 655366, False, True)]
    # the primary key: a unique index named <table>_pkey and a 'p' constraint over it
    assert q(db, f"SELECT c.relname, i.indisprimary, i.indisunique, i.indkey FROM mzsys.pg.pg_index i "
                 f"JOIN mzsys.pg.pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = {t.oid}") == [("t_pkey", True, True, [1])]
    assert q(db, f"SELECT conname, contype, conkey FROM mzsys.pg.pg_constraint WHERE conrelid = {t.oid}") == [("t_pkey", "p", [1])]
    assert q(db, f"SELECT adnum, adbin FROM mzsys.pg.pg_attrdef WHERE adrelid = {t.oid}") == [(3, "1")]
    assert q(db, "SELECT name, type FROM mzsys.mzc.mz_objects WHERE id = 'u1'") == [("t", "table")]
    assert q(db, "SELECT name, position, nullable, type FROM mzsys.mzc.mz_columns WHERE id = 'u1' ORDER BY position") == [
        ("a", 1, False, "integer"), ("b", 2, False, "text"), ("c", 3, True, "numeric")]
    idx = catalog.create_item(schema="public", name="t_b", kind="index", create_sql="CREATE INDEX t_b ON t (b)",
                              columns=[], with_shard=False, on_id=tid, index_keys=["b"])
    db.refresh()
    assert q(db, f"SELECT indkey, indisprimary FROM mzsys.pg.pg_index WHERE indexrelid = {idx.oid}") == [([2], False)]
    assert q(db, f"SELECT def FROM mzsys.snap.indexdef WHERE oid = {idx.oid} AND colno = 0") == [
        ("CREATE INDEX t_b ON public.t USING btree (b)",)]
    assert q(db, "SELECT index_position, on_position FROM mzsys.mzc.mz_index_columns") == [(1, 2)]
    builtin = q(db, "SELECT count(*) FROM mzsys.pg.pg_class WHERE oid < 20000")[0][0]
    catalog.drop_items([idx.id, tid])
    db.refresh()
    assert q(db, "SELECT count(*) FROM mzsys.pg.pg_class WHERE oid >= 20000") == [(0,)]
    assert q(db, "SELECT count(*) FROM mzsys.pg.pg_class WHERE oid < 20000")[0][0] == builtin  # built-ins kept
    assert q(db, "SELECT count(*) FROM mzsys.pg.pg_constraint") == [(0,)]


def test_visibility_follows_search_path(catalog: Catalog) -> None:
    db = catalog.system_db()
    catalog.create_schema("s2")
    table(catalog, "x", "CREATE TABLE x (a int)", [Column("a", SqlType("int4"))])
    table(catalog, "x", "CREATE TABLE s2.x (a int)", [Column("a", SqlType("int4"))], schema="s2")
    db.refresh()
    pub, s2 = catalog.get_item("public", "x"), catalog.get_item("s2", "x")
    assert pub is not None and s2 is not None
    for path, visible in ((("pg_catalog", "public", "s2"), pub.oid), (("pg_catalog", "s2", "public"), s2.oid)):
        key = db.visible_key(path)
        rows = dict(q(db, f"SELECT oid, visible FROM mzsys.snap.visible WHERE sp = '{key}' AND oid IN ({pub.oid}, {s2.oid})"))
        assert rows == {visible: True, (s2.oid if visible == pub.oid else pub.oid): False}
    key = db.visible_key(("pg_catalog", "public"))
    names = dict(q(db, f"SELECT oid, name FROM mzsys.snap.visible WHERE sp = '{key}' AND oid IN ({pub.oid}, {s2.oid})"))
    assert names == {pub.oid: "x", s2.oid: "s2.x"}
    assert q(db, "SELECT mzsys.fn.pg_table_is_visible(1259, 'pg_catalog,public')") == [(True,)]


def test_primary_key_from_create_sql() -> None:
    cols = ["a", "b", "c"]
    assert primary_key_of("CREATE TABLE t (a int PRIMARY KEY, b text)", cols) == ("a",)
    assert primary_key_of("CREATE TABLE t (a int, b text, c int, PRIMARY KEY (c, a))", cols) == ("c", "a")
    assert primary_key_of('CREATE TABLE "T" (a int NOT NULL, b text)', cols) == ()
    assert primary_key_of("not sql at all", cols) == ()


def test_introspection_state(catalog: Catalog) -> None:
    db = catalog.system_db()
    before = db.state_version
    db.set_operator_hydration("u7", "u1", [(0, 0, True), (0, 1, True), (1, 0, True), (1, 1, False)])
    assert db.state_version > before
    assert q(db, "SELECT object_id, plan_node_id, replica_id, hydrated FROM mzsys.mzi.mz_compute_operator_hydration_statuses "
                 "ORDER BY plan_node_id") == [("u7", 0, "u1", True), ("u7", 1, "u1", False)]
    assert q(db, "SELECT object_id, hydrated, hydration_time FROM mzsys.mzi.mz_compute_hydration_statuses") == [("u7", False, None)]
    db.set_operator_hydration("u7", "u1", [(0, 0, True), (0, 1, True), (1, 0, True), (1, 1, True)])
    db.set_hydration_time("u7", "u1", 2_500_000_000)
    (row,) = q(db, "SELECT object_id, hydrated, hydration_time FROM mzsys.mzi.mz_compute_hydration_statuses")
    assert row[:2] == ("u7", True) and row[2].total_seconds() == 2.5
    assert q(db, "SELECT object_id, hydrated FROM mzsys.mzi.mz_hydration_statuses") == [("u7", True)]
    db.set_lir_mapping("u7", [(0, "Get::PassArrangements", 1, 1), (1, "TopK::Basic", None, 0)])
    assert q(db, "SELECT lir_id, operator, parent_lir_id, nesting FROM mzsys.mzi.mz_lir_mapping ORDER BY lir_id") == [
        (0, "Get::PassArrangements", 1, 1), (1, "TopK::Basic", None, 0)]
    assert q(db, "SELECT lir_id, operator FROM mzsys.mzx.mz_lir_mapping ORDER BY lir_id") == [
        (0, "Get::PassArrangements"), (1, "TopK::Basic")]
    db.drop_introspection("u7")
    assert q(db, "SELECT count(*) FROM mzsys.mzi.mz_compute_operator_hydration_statuses_per_worker") == [(0,)]
    assert q(db, "SELECT count(*) FROM mzsys.mzi.mz_lir_mapping") == [(0,)]


def test_format_type(catalog: Catalog) -> None:
    lk = catalog.system_db().lookups
    cases = {(23, -1): "integer", (1043, 24): "character varying(20)", (1043, None): "character varying",
             (1042, -1): "bpchar", (1042, None): "character", (1042, 5): "character(1)", (1700, 655366): "numeric(10,2)",
             (1184, 3): "timestamp(3) with time zone", (1083, -1): "time without time zone", (1007, -1): "integer[]",
             (1015, 24): "character varying(20)[]", (22, -1): "int2vector", (18, -1): '"char"', (16462, -1): "uint8",
             (0, -1): "-", (99999, -1): "???"}
    for (oid, mod), want in cases.items():
        assert lk.format_type(oid, mod) == want, (oid, mod)
    assert q(catalog.system_db(), "SELECT mzsys.fn.format_type(1043, 24), mzsys.fn.format_type(NULL, 1)") == [
        ("character varying(20)", None)]


def test_duckdb_stays_locked_down(catalog: Catalog, tmp_path: Path) -> None:
    db = catalog.system_db()
    for sql in (f"SELECT * FROM read_csv('{tmp_path}/x.csv')", "INSTALL httpfs", f"ATTACH '{tmp_path}/a.db'",
                f"COPY (SELECT 1) TO '{tmp_path}/out.csv'", "SET enable_external_access = true"):
        with pytest.raises(Exception) as info:
            db.query(sql)
        assert "Permission" in type(info.value).__name__ or "configuration" in str(info.value).lower(), sql
    assert not any(tmp_path.glob("*.csv")) and not (tmp_path / "a.db").exists()


def test_type_storage_round_trip() -> None:
    for name in ("bool", "int2", "int4", "int8", "text", "oid", "float8", "uint8", "_int2", "_text", "_oid",
                 "timestamptz", "interval"):
        t = SqlType(name)
        assert pg_type_of_duck(duck_type(t)) == t or name in ("oid",), name
    assert duck_type(SqlType("regclass")) == "UINTEGER" and duck_type(SqlType("int2vector")) == "SMALLINT[]"
    assert pg_type_of_duck("UINTEGER") == SqlType("oid") and pg_type_of_duck("DECIMAL(10,2)") == SqlType("numeric")
