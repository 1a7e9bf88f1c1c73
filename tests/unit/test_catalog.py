"""The durable catalog: schemas, items, ids/oids, persistence, SQLSTATEs, DuckDB lockdown."""

from __future__ import annotations

import threading
from pathlib import Path

import duckdb
import pytest

from catalog.catalog import (
    DEFAULT_CLUSTER,
    FIRST_USER_OID,
    SYSTEM_SCHEMAS,
    TEMP_SCHEMA_PREFIX,
    Catalog,
    Column,
)
from sql.errors import SqlError
from sql.types import INT4, INTERVAL, TEXT, SqlType, numeric_typmod

COLS = (Column("a", INT4, nullable=False), Column("b", TEXT, default_sql="'x'"))


@pytest.fixture
def cat(tmp_path: Path):
    c = Catalog(tmp_path)
    yield c
    c.close()


def table(c: Catalog, name: str, schema: str = "public"):
    return c.create_item(
        schema=schema,
        name=name,
        kind="table",
        create_sql=f"CREATE TABLE {name} (a int NOT NULL, b text DEFAULT 'x')",
        columns=COLS,
        with_shard=True,
    )


def view(c: Catalog, name: str, deps: list[str], schema: str = "public", kind: str = "view"):
    return c.create_item(
        schema=schema,
        name=name,
        kind=kind,
        create_sql=f"CREATE VIEW {name} AS ...",
        columns=COLS,
        depends_on=deps,
        with_shard=kind == "materialized-view",
    )


def index(c: Catalog, name: str, on: str):
    return c.create_item(
        schema="public",
        name=name,
        kind="index",
        create_sql=f"CREATE INDEX {name} ON ...",
        columns=COLS,
        with_shard=False,
        on_id=on,
        index_keys=("a", "b || 'x'"),
    )


def sqlstate(excinfo: pytest.ExceptionInfo[SqlError]) -> str:
    return excinfo.value.sqlstate


# ---------------------------------------------------------------------------------------
# bootstrap


def test_bootstrap(cat: Catalog) -> None:
    names = {n for _, n in cat.schemas()}
    assert names == {"public", *SYSTEM_SCHEMAS}
    oids = [o for o, _ in cat.schemas()]
    assert len(set(oids)) == len(oids)
    assert all(cat.schema_exists(n) for n in names)
    assert [(c.id, c.name) for c in cat.clusters()] == [("u1", DEFAULT_CLUSTER)]
    assert [(r.id, r.name, r.cluster_id) for r in cat.cluster_replicas()] == [("u1", "r1", "u1")]
    assert cat.items() == []
    assert cat.get_system_vars() == {}
    assert (Path(cat.data_dir) / "catalog.duckdb").exists()


# ---------------------------------------------------------------------------------------
# schemas


def test_create_schema(cat: Catalog) -> None:
    cat.create_schema("s")
    assert cat.schema_exists("s")
    oid = cat.schema_oid("s")
    assert oid is not None and oid >= FIRST_USER_OID
    with pytest.raises(SqlError) as e:
        cat.create_schema("s")
    assert sqlstate(e) == "42P06"
    cat.create_schema("s", if_not_exists=True)
    for sys_schema in SYSTEM_SCHEMAS:
        with pytest.raises(SqlError) as e:
            cat.create_schema(sys_schema)
        assert sqlstate(e) == "42P06"


def test_drop_schema(cat: Catalog) -> None:
    with pytest.raises(SqlError) as e:
        cat.drop_schema("nope")
    assert sqlstate(e) == "3F000"
    assert cat.drop_schema("nope", if_exists=True) == []
    with pytest.raises(SqlError) as e:
        cat.drop_schema("mz_catalog")
    assert sqlstate(e) == "42501"

    cat.create_schema("s")
    t = table(cat, "t", "s")
    other = table(cat, "other")
    v = view(cat, "v", [t.id])  # public.v depends on s.t
    w = view(cat, "w", [v.id, other.id])
    with pytest.raises(SqlError) as e:
        cat.drop_schema("s")
    assert sqlstate(e) == "2BP01"
    assert cat.schema_exists("s")
    dropped = cat.drop_schema("s", cascade=True)
    assert [i.id for i in dropped] == [w.id, v.id, t.id]
    assert not cat.schema_exists("s")
    assert [i.id for i in cat.items()] == [other.id]

    cat.create_schema("e")
    assert cat.drop_schema("e") == []
    assert not cat.schema_exists("e")


def test_create_item_in_bad_schema(cat: Catalog) -> None:
    with pytest.raises(SqlError) as e:
        table(cat, "t", "nope")
    assert sqlstate(e) == "3F000"
    with pytest.raises(SqlError) as e:
        table(cat, "t", "mz_internal")
    assert sqlstate(e) == "42501"


# ---------------------------------------------------------------------------------------
# items


def test_create_and_get_items(cat: Catalog) -> None:
    t = table(cat, "t")
    assert t.id == "u1" and t.oid == FIRST_USER_OID
    assert t.shard_id is not None
    assert t.columns == COLS
    assert t.qualified_name == "materialize.public.t"
    v = view(cat, "v", [t.id])
    assert v.id == "u2" and v.oid > t.oid and v.shard_id is None
    assert v.depends_on == (t.id,)
    mv = view(cat, "mv", [v.id], kind="materialized-view")
    assert mv.shard_id is not None and mv.shard_id != t.shard_id
    i = index(cat, "t_idx", t.id)
    assert i.on_id == t.id and i.index_keys == ("a", "b || 'x'")
    assert cat.get_item("public", "t") == t
    assert cat.get_item("public", "nope") is None
    assert cat.get_item_by_id(v.id) == v
    assert cat.get_item_by_oid(mv.oid) == mv
    assert [x.id for x in cat.items()] == ["u1", "u2", "u3", "u4"]
    assert cat.items("index") == [i]
    assert cat.items("materialized-view") == [mv]


def test_name_collisions_share_one_namespace(cat: Catalog) -> None:
    t = table(cat, "t")
    for kind in ("table", "view", "materialized-view", "index", "source"):
        with pytest.raises(SqlError) as e:
            cat.create_item(
                schema="public",
                name="t",
                kind=kind,
                create_sql="...",
                columns=COLS,
                with_shard=False,
                on_id=t.id if kind == "index" else None,
            )
        assert sqlstate(e) == "42P07"
        assert 'table "materialize.public.t" already exists' in e.value.message
    cat.create_schema("s")
    assert table(cat, "t", "s").schema == "s"


def test_unknown_dependency(cat: Catalog) -> None:
    with pytest.raises(SqlError) as e:
        view(cat, "v", ["u99"])
    assert sqlstate(e) == "42P01"
    with pytest.raises(ValueError):
        cat.create_item(
            schema="public", name="x", kind="sink", create_sql="", columns=(), with_shard=False
        )


def test_dependents_and_drop(cat: Catalog) -> None:
    t = table(cat, "t")
    u = table(cat, "u")
    v = view(cat, "v", [t.id])
    idx = index(cat, "v_idx", v.id)
    w = view(cat, "w", [v.id, u.id], kind="materialized-view")
    x = view(cat, "x", [w.id])
    assert [i.id for i in cat.dependents(t.id)] == [x.id, w.id, idx.id, v.id]
    assert [i.id for i in cat.dependents(u.id)] == [x.id, w.id]
    assert cat.dependents(x.id) == []
    with pytest.raises(SqlError) as e:
        cat.dependents("u42")
    assert sqlstate(e) == "42P01"

    # Dropping an item that others still depend on is refused.
    with pytest.raises(SqlError) as e:
        cat.drop_items([t.id])
    assert sqlstate(e) == "2BP01"
    with pytest.raises(SqlError) as e:
        cat.drop_items([v.id])  # the index still depends on v
    assert sqlstate(e) == "2BP01"
    with pytest.raises(SqlError) as e:
        cat.drop_items(["u99"])
    assert sqlstate(e) == "42P01"
    assert len(cat.items()) == 6

    w_shard = w.shard_id
    assert w_shard is not None
    cat.drop_items([d.id for d in cat.dependents(t.id)] + [t.id])
    assert [i.id for i in cat.items()] == [u.id]
    assert cat.get_item("public", "t") is None
    with pytest.raises(SqlError) as e:
        cat.shard_batches(w_shard)
    assert sqlstate(e) == "42P01"
    # The name is free again, ids and oids are not reused.
    t2 = table(cat, "t")
    assert t2.id == "u7" and t2.oid == FIRST_USER_OID + 6


def test_rename(cat: Catalog) -> None:
    t = table(cat, "t")
    table(cat, "other")
    v = view(cat, "v", [t.id])
    with pytest.raises(SqlError) as e:
        cat.rename_item(t.id, "other")
    assert sqlstate(e) == "42P07"
    with pytest.raises(SqlError) as e:
        cat.rename_item("u77", "z")
    assert sqlstate(e) == "42P01"
    r = cat.rename_item(
        t.id,
        "t2",
        create_sql_updates={
            t.id: "CREATE TABLE t2 (...)",
            v.id: "CREATE VIEW v AS SELECT * FROM t2",
        },
    )
    assert r.name == "t2" and r.id == t.id and r.oid == t.oid and r.shard_id == t.shard_id
    assert r.create_sql == "CREATE TABLE t2 (...)"
    assert cat.get_item("public", "t") is None
    assert cat.get_item("public", "t2") == r
    assert cat.get_item_by_id(v.id).create_sql == "CREATE VIEW v AS SELECT * FROM t2"  # type: ignore[union-attr]
    table(cat, "t")  # the old name is free


def test_system_vars(cat: Catalog) -> None:
    cat.set_system_var("compute_replica_expiration_offset", "3d")
    cat.set_system_var("max_tables", "10")
    cat.set_system_var("max_tables", "20")
    assert cat.get_system_vars() == {"compute_replica_expiration_offset": "3d", "max_tables": "20"}
    cat.set_system_var("max_tables", None)
    cat.set_system_var("never_set", None)
    assert cat.get_system_vars() == {"compute_replica_expiration_offset": "3d"}


def test_version_bumps_on_ddl(cat: Catalog) -> None:
    v0 = cat.version
    t = table(cat, "t")
    v1 = cat.version
    cat.rename_item(t.id, "t2")
    v2 = cat.version
    cat.set_system_var("x", "1")
    v3 = cat.version
    assert v0 < v1 < v2 < v3


# ---------------------------------------------------------------------------------------
# persistence


def test_reopen_preserves_everything(tmp_path: Path) -> None:
    c = Catalog(tmp_path)
    c.create_schema("s")
    numeric = SqlType("numeric", numeric_typmod(10, 2))
    t = c.create_item(
        schema="s",
        name="t",
        kind="table",
        create_sql="CREATE TABLE s.t (...)",
        columns=(Column("n", numeric, nullable=False, default_sql="0"), Column("i", INTERVAL)),
        with_shard=True,
    )
    v = view(c, "v", [t.id])
    i = index(c, "v_idx", v.id)
    c.set_system_var("enable_x", "on")
    items, schemas, version = c.items(), c.schemas(), c.version
    c.close()
    c.close()  # idempotent

    c2 = Catalog(tmp_path)
    try:
        assert c2.items() == items == [t, v, i]
        assert c2.schemas() == schemas
        assert c2.version == version
        assert c2.get_system_vars() == {"enable_x": "on"}
        assert c2.get_item("s", "t").columns[0].type == numeric  # type: ignore[union-attr]
        assert c2.dependents(t.id) == [i, v]
        assert c2.shard_batches(t.shard_id) == []  # type: ignore[arg-type]
    finally:
        c2.close()


def test_ids_and_oids_never_reused_after_restart(tmp_path: Path) -> None:
    c = Catalog(tmp_path)
    a = table(c, "a")
    b = table(c, "b")
    c.create_schema("s")
    s_oid = c.schema_oid("s")
    c.drop_items([b.id])
    c.drop_schema("s")
    c.close()

    c = Catalog(tmp_path)
    new = table(c, "b")
    c.create_schema("s")
    assert new.id == "u3"
    used = {a.oid, b.oid, s_oid}
    assert new.oid not in used and new.oid > max(used)  # type: ignore[type-var]
    assert c.schema_oid("s") not in used
    assert new.shard_id not in {a.shard_id, b.shard_id}
    c.close()


def test_closed_catalog_refuses(tmp_path: Path) -> None:
    c = Catalog(tmp_path)
    c.close()
    with pytest.raises(SqlError) as e:
        table(c, "t")
    assert e.value.sqlstate == "XX000"


# ---------------------------------------------------------------------------------------
# DuckDB lockdown


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('/etc/passwd')",
        "SELECT * FROM read_parquet('/etc/passwd')",
        "COPY (SELECT 1) TO '/tmp/mzspark-should-not-exist.csv'",
        "ATTACH '/tmp/mzspark-should-not-exist.duckdb' AS x",
        "SET enable_external_access = true",
        "RESET enable_external_access",
        "SET lock_configuration = false",
        "INSTALL httpfs",
        "LOAD httpfs",
    ],
)
def test_duckdb_external_access_refused(cat: Catalog, sql: str) -> None:
    with pytest.raises(duckdb.Error):
        cat.execute_sql(sql)
    assert not Path("/tmp/mzspark-should-not-exist.csv").exists()
    # The connection stays usable for catalog queries afterwards.
    assert cat.execute_sql("SELECT count(*) FROM durable.items") == [(0,)]


def test_duckdb_holds_metadata_only(cat: Catalog) -> None:
    tables = {
        t
        for (t,) in cat.execute_sql(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'durable'"
        )
    }
    assert tables == {
        "meta",
        "schemas",
        "items",
        "columns",
        "dependencies",
        "clusters",
        "cluster_replicas",
        "system_vars",
        "shards",
        "batches",
        "uppers",
        "comments",
    }


# ---------------------------------------------------------------------------------------
# concurrency


def test_concurrent_creates(cat: Catalog) -> None:
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for j in range(10):
                table(cat, f"t_{k}_{j}")
        except BaseException as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    items = cat.items()
    assert len(items) == 80
    assert len({i.id for i in items}) == 80
    assert len({i.oid for i in items}) == 80
    assert len({i.shard_id for i in items}) == 80


def test_open_twice_refused(tmp_path: Path) -> None:
    c = Catalog(tmp_path)
    with pytest.raises(SqlError):
        Catalog(tmp_path)
    c.close()
    Catalog(tmp_path).close()


def test_reopen_drops_temporary_schemas(tmp_path: Path) -> None:
    """Temporary items of sessions of an earlier run (a crash skips their cleanup) are gone
    when the catalog opens again; their shards are dropped with them."""
    c = Catalog(tmp_path)
    keep = table(c, "keep")
    c.create_schema(f"{TEMP_SCHEMA_PREFIX}1000")
    tmp = table(c, "keep", schema=f"{TEMP_SCHEMA_PREFIX}1000")
    view(c, "v", [tmp.id], schema=f"{TEMP_SCHEMA_PREFIX}1000")
    assert tmp.temporary and tmp.qualified_name == "mz_temp.keep" and not keep.temporary
    c.close()

    c2 = Catalog(tmp_path)
    try:
        assert c2.items() == [keep]
        assert not c2.schema_exists(f"{TEMP_SCHEMA_PREFIX}1000")
        assert tmp.shard_id not in c2.shard_ids()
    finally:
        c2.close()
