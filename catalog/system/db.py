"""The system relations in DuckDB: an in-memory database `mzsys` attached to the catalog's
connection (so the locked-down configuration applies to it too).

Layout (see `relations.py`): every base relation is a view `mzsys.<schema>.<name>` over
`mzsys.static.<name>` (rows that never change: built-in types, functions, the system
relations themselves) UNION ALL `mzsys.snap.<name>` (rows derived from the catalog: user
schemas, tables, views, indexes, their columns, keys and defaults). Derived relations
(`pg_tables`, `information_schema.columns`, the hydration views, ...) are DuckDB views
defined over those. The snapshot is rebuilt in one DuckDB transaction whenever the catalog's
version changes (every DDL), before the next system query runs, so system relations are
always in sync with the catalog. The tables the compute controller writes (hydration
statuses, LIR mapping) live in `mzsys.state`.

Nothing here reads or writes files: rows are built in Python and inserted as Arrow tables.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from catalog.model import CatalogReader, Item
from catalog.system import idents, pg15_data
from catalog.system.format import format_type
from catalog.system.relations import (
    BOOTSTRAP_SUPERUSER_OID,
    BTREE_AM,
    DUCK_SCHEMAS,
    FN,
    HEAP_AM,
    MZ_PROC_FIRST_OID,
    MZSYS,
    PG_DEFAULT_TABLESPACE,
    PG_GLOBAL_TABLESPACE,
    SNAP,
    STATE,
    STATIC,
    SYSTEM_RELATIONS,
    UTF8_ENCODING,
    attrdef_oid,
    duck_type,
    pkey_constraint_oid,
    pkey_index_oid,
)
from catalog.system.rows import (
    SYSTEM_SCHEMA_OIDS,
    attr_row,
    class_row,
    definition_of,
    index_row,
    mz_column,
    mz_type_category,
    plain_column,
    primary_key_of,
    quote_ident,
    quoted,
    reserved_keywords,
    rows_table,
    schema_id_of,
    uint8_types,
)
from catalog.system.views import DERIVED_VIEWS, MACROS
from sql.redact import redact_literals
from sql.types import TYPE_BY_OID, TYPE_INFOS, Interval, SqlType

if TYPE_CHECKING:
    import duckdb


log = logging.getLogger("mzspark.catalog.system")
REFRESH_POLL_S = 0.05

DATABASE_NAME = "materialize"
DATABASE_OID = 16384
PG_CLASS_OID = 1259
PG_CONSTRAINT_OID = 2606
PG_TYPE_OID = 1247

ROLES = (
    # oid, name, superuser
    (BOOTSTRAP_SUPERUSER_OID, "materialize", True),
)
ROLE_IDS = {BOOTSTRAP_SUPERUSER_OID: "u1"}

# Materialize's unsigned 8-byte integer, in mz_catalog like Materialize's own.
UINT8_PROCS = (("uint8in", 2275, 16462), ("uint8out", 16462, 2275), ("uint8recv", 2281, 16462), ("uint8send", 16462, 17))


# ---- Python-side lookups (reg* output, name resolution) -----------------------------------------

@dataclass
class Lookups:
    """Name <-> OID maps for reg* types, refreshed with the snapshot."""

    namespaces: dict[int, str] = field(default_factory=dict)
    namespace_oids: dict[str, int] = field(default_factory=dict)
    classes: dict[int, tuple[str, str]] = field(default_factory=dict)  # oid -> (schema, name)
    class_oids: dict[tuple[str, str], int] = field(default_factory=dict)
    types: dict[int, str] = field(default_factory=dict)  # oid -> format_type(oid, NULL)
    type_names: dict[int, tuple[str, str]] = field(default_factory=dict)  # oid -> (schema, typname)
    type_oids: dict[str, int] = field(default_factory=dict)  # typname / format name -> oid
    procs: dict[int, str] = field(default_factory=dict)
    proc_oids: dict[str, int] = field(default_factory=dict)
    roles: dict[int, str] = field(default_factory=dict)
    role_oids: dict[str, int] = field(default_factory=dict)
    type_base: dict[int, str] = field(default_factory=dict)  # oid -> name without modifiers
    array_elems: dict[int, int] = field(default_factory=dict)  # true array oid -> element oid

    def format_type(self, oid: int | None, typmod: int | None) -> str | None:
        return format_type(oid, typmod, self.type_base, self.array_elems)


# ---- The database --------------------------------------------------------------------------------

class SystemDb:
    """System relations on the catalog's DuckDB connection. Thread safe: each thread
    queries through its own cursor; snapshot rebuilds are serialised."""

    def __init__(self, catalog: CatalogReader, con: duckdb.DuckDBPyConnection) -> None:
        self._catalog = catalog
        self._con = con
        self._local = threading.local()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        self._refresh_lock = threading.Lock()
        self._version = -1
        self.started_at = dt.datetime.now(dt.UTC)
        self.static_lookups = Lookups()
        self.lookups = Lookups()
        self._pk_cache: dict[str, tuple[str, ...]] = {}
        self._static: dict[str, pa.Table] = {}  # built-in rows of relations that also get catalog rows
        self._visible_paths: set[tuple[str, ...]] = set()
        self._snap: dict[str, pa.Table] = {}  # catalog-derived rows last written, per table
        self._closed = False
        self.state_version = 0  # bumped by every write of the controller's introspection state
        try:
            self._setup()
        except BaseException:
            # leave nothing half-built behind: the next attempt starts from scratch
            con.execute(f"DETACH DATABASE IF EXISTS {MZSYS}")
            raise
        self.refresh()
        threading.Thread(target=self._refresher, name="system-relations-refresh", daemon=True).start()

    # -- plumbing ------------------------------------------------------------------------------

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        cur = getattr(self._local, "cur", None)
        if cur is None:
            with self._catalog._lock:
                cur = self._con.cursor()
                self._cursors.append(cur)
            self._local.cur = cur
        return cur

    @property
    def version(self) -> int:
        """The catalog version the system relations currently reflect."""
        return self._version

    def query(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[tuple[str, str]], list[tuple[Any, ...]]]:
        """Run a (rewritten, whitelisted) query: ([(name, duckdb type)], rows)."""
        self.refresh()
        cur = self._cursor()
        res = cur.execute(sql, list(params))
        desc = [(d[0], str(d[1])) for d in (res.description or [])]
        return desc, res.fetchall()

    def describe(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[str, str]]:
        """Result columns of a query without computing it (LIMIT 0)."""
        self.refresh()
        cur = self._cursor()
        res = cur.execute(f"SELECT * FROM ({sql}) AS _q LIMIT 0", list(params))
        return [(d[0], str(d[1])) for d in (res.description or [])]

    # -- setup ---------------------------------------------------------------------------------

    def _setup(self) -> None:
        con = self._con
        attached = {r[0] for r in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()}
        if MZSYS not in attached:
            con.execute(f"ATTACH ':memory:' AS {MZSYS}")
        for s in (*DUCK_SCHEMAS.values(), "fn", "static", "snap"):
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {MZSYS}.{s}")
        derived = set(DERIVED_VIEWS)
        for key, rel in SYSTEM_RELATIONS.items():
            if key in derived:
                continue
            # one table per relation: static rows are written once, catalog-derived rows
            # replaced (together with the static ones) by every refresh
            cols = ", ".join(f"{quoted(c)} {duck_type(t)}" for c, t in rel.columns)
            con.execute(f"CREATE TABLE {rel.duck} ({cols})")
        # helper tables for functions
        con.execute(f"CREATE TABLE {STATIC}.type_names (oid UINTEGER, name VARCHAR, elem UINTEGER)")
        con.execute(f"CREATE TABLE {STATIC}.keywords (word VARCHAR, catcode VARCHAR, barelabel BOOLEAN, catdesc VARCHAR, baredesc VARCHAR)")
        con.execute(f"CREATE TABLE {STATIC}.proc_signatures (oid UINTEGER, result VARCHAR, arguments VARCHAR, identity_arguments VARCHAR)")
        con.execute(f"CREATE TABLE {SNAP}.indexdef (oid UINTEGER, colno INTEGER, def VARCHAR)")
        con.execute(f"CREATE TABLE {SNAP}.constraintdef (oid UINTEGER, def VARCHAR)")
        con.execute(f"CREATE TABLE {SNAP}.viewdef (oid UINTEGER, def VARCHAR)")
        con.execute(f"CREATE TABLE {SNAP}.items (id VARCHAR, oid UINTEGER, kind VARCHAR)")
        con.execute(f"CREATE TABLE {SNAP}.visible (sp VARCHAR, oid UINTEGER, visible BOOLEAN, name VARCHAR)")
        reserved = sorted(reserved_keywords())
        roles = " ".join(f"WHEN {oid} THEN '{name}'" for oid, name, _sup in ROLES)
        generated = [
            f"CREATE MACRO {FN}.pg_get_userbyid(o) AS CASE o {roles} ELSE 'unknown (OID=' || o::VARCHAR || ')' END",
            f"CREATE MACRO {FN}.regrole_out(o) AS CASE WHEN o IS NULL THEN NULL WHEN o = 0 THEN '-' "
            f"ELSE CASE o {roles} ELSE o::VARCHAR END END",
            f"CREATE MACRO {FN}.is_reserved(s) AS regexp_full_match(s, '{'|'.join(reserved)}')",
        ]
        for sql in generated:
            con.execute(sql)
        self._register_functions(con)
        for i, sql in enumerate(MACROS):
            # unique table aliases per macro: macros nest, and DuckDB expands them inline
            sql = re.sub(r"\b_m([a-z]\w*)", lambda m, i=i: f"_m{i}_{m.group(1)}", sql)
            con.execute(sql.format(FN=FN, STATIC=STATIC, SNAP=SNAP, STATE=STATE, MZSYS=MZSYS, PG=f"{MZSYS}.pg"))
        for key, sql in DERIVED_VIEWS.items():
            rel = SYSTEM_RELATIONS[key]
            body = sql.format(FN=FN, STATIC=STATIC, SNAP=SNAP, STATE=STATE, MZSYS=MZSYS, PG=f"{MZSYS}.pg")
            have = {d[0] for d in con.execute(f"SELECT * FROM ({body}) AS _d LIMIT 0").description}
            proj = ", ".join(f'CAST({quoted(c) if c in have else "NULL"} AS {duck_type(t)}) AS {quoted(c)}'
                             for c, t in rel.columns)
            con.execute(f"CREATE VIEW {rel.duck} AS SELECT {proj} FROM ({body}) AS _d")
        self._fill_static()

    def _register_functions(self, con: duckdb.DuckDBPyConnection) -> None:
        """Scalar functions implemented in Python (Postgres' exact rules, no subqueries)."""
        from duckdb.sqltypes import INTEGER, UINTEGER, VARCHAR

        def fmt(oid: int | None, typmod: int | None) -> str | None:
            return self.lookups.format_type(oid, typmod)

        def regtype(oid: int | None) -> str | None:
            if oid is None:
                return None
            if oid == 0:
                return "-"
            name = self.lookups.format_type(oid, None)
            return str(oid) if name == "???" else name

        con.create_function("mzsys_format_type", fmt, [UINTEGER, INTEGER], VARCHAR, null_handling="special")
        con.create_function("mzsys_regtype_out", regtype, [UINTEGER], VARCHAR, null_handling="special")

        def parse_ident(text: str | None, strict: bool | None) -> list[str] | None:
            return None if text is None or strict is None else idents.parse_ident(text, strict)

        from duckdb import list_type
        from duckdb.sqltypes import BOOLEAN

        con.create_function("mzsys_parse_ident", parse_ident, [VARCHAR, BOOLEAN], list_type(VARCHAR),
                            null_handling="special")

        from sql.text_input import truncate_name

        def names(xs: list[str | None] | None) -> list[str | None] | None:  # a cast to name[]
            return None if xs is None else [None if x is None else truncate_name(x) for x in xs]

        con.create_function("mzsys_truncate_name", truncate_name, [VARCHAR], VARCHAR)  # a cast to name
        con.create_function("mzsys_truncate_names", names, [list_type(VARCHAR)], list_type(VARCHAR),
                            null_handling="special")

    def close(self) -> None:
        """Close the per-thread cursors (the catalog closes the connection). Waits for a
        rebuild in progress (the background refresher) so the connection is idle after."""
        with self._refresh_lock:
            self._closed = True
        for cur in self._cursors:
            with contextlib.suppress(Exception):
                cur.close()
        self._cursors.clear()

    def _insert(self, con: duckdb.DuckDBPyConnection, table: str, data: pa.Table) -> None:
        if data.num_rows:
            con.from_arrow(data).insert_into(table)

    def _insert_static(self, con: duckdb.DuckDBPyConnection, name: str, data: pa.Table) -> None:
        """Built-in rows of relation `name` (mz_* names are mz_catalog's, others pg_catalog's)."""
        schema = "pg_catalog"
        if name.startswith("mz_"):
            schema = "mz_catalog" if ("mz_catalog", name) in SYSTEM_RELATIONS else "mz_internal"
        rel = SYSTEM_RELATIONS[(schema, name)]
        self._insert(con, rel.duck, data)
        self._static[rel.duck] = data

    def _fill_static(self) -> None:
        con = self._con
        rels = SYSTEM_RELATIONS
        lk = self.static_lookups
        # types
        tcols, trows = pg15_data.TYPES
        types = [dict(zip(tcols, r, strict=True)) for r in trows]
        types += uint8_types()
        self._insert_static(con, "pg_type", rows_table(rels[("pg_catalog", "pg_type")], types))
        names = []
        for t in types:
            oid = t["oid"]
            info = TYPE_BY_OID.get(oid)
            elem = t["typelem"] if t["typsubscript"] == 6179 and t["typstorage"] != "p" else 0
            base = info.pg_name if info is not None and info.category != "A" else t["typname"]
            names.append((oid, base, elem))
            lk.type_names[oid] = ("pg_catalog" if t["typnamespace"] == 11 else "mz_catalog", t["typname"])
            lk.type_oids.setdefault(t["typname"], oid)
        for oid, base, elem in names:
            lk.type_base[oid] = base
            if elem:
                lk.array_elems[oid] = elem
        for oid, _base, _elem in names:
            lk.types[oid] = lk.format_type(oid, None) or "???"
            lk.type_oids.setdefault(lk.types[oid], oid)
        for alias, canon in (("int", "int4"), ("integer", "int4"), ("smallint", "int2"), ("bigint", "int8"),
                             ("boolean", "bool"), ("real", "float4"), ("double precision", "float8"),
                             ("float", "float8"), ("decimal", "numeric"), ("character varying", "varchar"),
                             ("character", "bpchar"), ("char", "bpchar"), ("timestamp with time zone", "timestamptz"),
                             ("timestamp without time zone", "timestamp"), ("time without time zone", "time")):
            lk.type_oids[alias] = TYPE_INFOS[canon].oid
        self._insert(con, f"{STATIC}.type_names", pa.table({
            "oid": pa.array([n[0] for n in names], pa.uint32()),
            "name": [n[1] for n in names],
            "elem": pa.array([n[2] for n in names], pa.uint32()),
        }))
        # functions
        pcols, prows = pg15_data.PROCS
        procs = [dict(zip(pcols, r, strict=True)) for r in prows]
        for p in procs:
            p["proisagg"] = p["prokind"] == "a"
            p["proiswindow"] = p["prokind"] == "w"
        sigs = dict(pg15_data.PROC_SIGNATURES)
        for i, (name, arg, ret) in enumerate(UINT8_PROCS):
            oid = MZ_PROC_FIRST_OID + i
            procs.append({"oid": oid, "proname": name, "pronamespace": 11, "proowner": BOOTSTRAP_SUPERUSER_OID,
                          "prolang": 12, "procost": 1.0, "prokind": "f", "proisstrict": True,
                          "provolatile": "i", "proparallel": "s", "pronargs": 1, "prorettype": ret,
                          "proargtypes": [arg], "prosrc": name})
            argname = TYPE_BY_OID[arg].pg_name if arg in TYPE_BY_OID else "internal"
            sigs[oid] = (TYPE_BY_OID[ret].pg_name, argname, argname)
        self._insert_static(con, "pg_proc", rows_table(rels[("pg_catalog", "pg_proc")], procs))
        for p in procs:
            lk.procs[p["oid"]] = p["proname"]
            lk.proc_oids.setdefault(p["proname"], p["oid"])
        self._insert(con, f"{STATIC}.proc_signatures", pa.table({
            "oid": pa.array(list(sigs), pa.uint32()),
            "result": [s[0] for s in sigs.values()],
            "arguments": [s[1] for s in sigs.values()],
            "identity_arguments": [s[2] for s in sigs.values()],
        }))
        # access methods, collations, languages, keywords
        for key, (cols, data) in (("pg_am", pg15_data.AM), ("pg_collation", pg15_data.COLLATIONS),
                                  ("pg_language", pg15_data.LANGUAGES)):
            dict_rows = []
            for r in data:
                d = dict(zip(cols, r, strict=True))
                if key == "pg_language":
                    d["lanacl"] = None
                if key == "pg_am" and d["amtype"] == "i":
                    btree = d["amname"] == "btree"
                    d.update(amstrategies=5 if btree else 1, amsupport=2 if btree else 1, amcanorder=btree,
                             amcanbackward=btree, amcanunique=btree, amcanmulticol=d["amname"] != "hash",
                             amoptionalkey=d["amname"] != "hash", amsearcharray=btree, amsearchnulls=d["amname"] != "hash",
                             amclusterable=d["amname"] != "hash", ampredlocks=btree)
                dict_rows.append(d)
            self._insert_static(con, key, rows_table(rels[("pg_catalog", key)], dict_rows))
        kcols, krows = pg15_data.KEYWORDS
        self._insert(con, f"{STATIC}.keywords", pa.table({c: [r[i] for r in krows] for i, c in enumerate(kcols)}))
        # roles, database, tablespaces
        self._insert_static(con, "pg_authid", rows_table(rels[("pg_catalog", "pg_authid")], [
            {"oid": oid, "rolname": name, "rolsuper": sup, "rolinherit": True, "rolcreaterole": sup,
             "rolcreatedb": sup, "rolcanlogin": True, "rolreplication": sup, "rolbypassrls": sup,
             "rolconnlimit": -1}
            for oid, name, sup in ROLES]))
        for oid, name, _sup in ROLES:
            lk.roles[oid] = name
            lk.role_oids[name] = oid
        self._insert_static(con, "pg_database", rows_table(rels[("pg_catalog", "pg_database")], [{
            "oid": DATABASE_OID, "datname": DATABASE_NAME, "datdba": BOOTSTRAP_SUPERUSER_OID,
            "encoding": UTF8_ENCODING, "datlocprovider": "c", "datistemplate": False, "datallowconn": True,
            "datconnlimit": -1, "datminmxid": 1, "dattablespace": PG_DEFAULT_TABLESPACE,
            "datcollate": "C", "datctype": "C"}]))
        self._insert_static(con, "pg_tablespace", rows_table(rels[("pg_catalog", "pg_tablespace")], [
            {"oid": PG_DEFAULT_TABLESPACE, "spcname": "pg_default", "spcowner": BOOTSTRAP_SUPERUSER_OID},
            {"oid": PG_GLOBAL_TABLESPACE, "spcname": "pg_global", "spcowner": BOOTSTRAP_SUPERUSER_OID}]))
        self._insert_static(con, "pg_timezone_names", rows_table(rels[("pg_catalog", "pg_timezone_names")], [
            {"name": "UTC", "abbrev": "UTC", "utc_offset": Interval(), "is_dst": False}]))
        self._insert_static(con, "pg_timezone_abbrevs", rows_table(rels[("pg_catalog", "pg_timezone_abbrevs")], [
            {"abbrev": "UTC", "utc_offset": Interval(), "is_dst": False}]))
        self._insert_static(con, "mz_roles", rows_table(rels[("mz_catalog", "mz_roles")], [
            {"id": ROLE_IDS[oid], "oid": oid, "name": name, "inherit": True} for oid, name, _s in ROLES]
            + [{"id": "s1", "oid": 16661, "name": "mz_system", "inherit": True}]))
        self._insert_static(con, "mz_databases", rows_table(rels[("mz_catalog", "mz_databases")], [{
            "id": "u1", "oid": DATABASE_OID, "name": DATABASE_NAME, "owner_id": "u1",
            "privileges": ["u1=UC/u1"]}]))
        # the system relations themselves: pg_class / pg_attribute / mz_* rows
        classes, attrs, mz_objs, mz_cols = [], [], [], []
        for rel in rels.values():
            nsp = SYSTEM_SCHEMA_OIDS[rel.schema]
            classes.append(class_row(rel.oid, rel.name, nsp, rel.kind, len(rel.columns)))
            for i, (cname, t) in enumerate(rel.columns, start=1):
                attrs.append(attr_row(rel.oid, cname, t, i, cname in rel.notnull, False))
                mz_cols.append(mz_column(f"s{rel.oid}", cname, i, t, True, None))
            mz_objs.append({"id": f"s{rel.oid}", "oid": rel.oid, "schema_id": f"s{nsp}", "name": rel.name,
                            "type": "table" if rel.kind == "r" else "view", "owner_id": "s1"})
            lk.classes[rel.oid] = (rel.schema, rel.name)
            lk.class_oids[(rel.schema, rel.name)] = rel.oid
        self._insert_static(con, "pg_class", rows_table(rels[("pg_catalog", "pg_class")], classes))
        self._insert_static(con, "pg_attribute", rows_table(rels[("pg_catalog", "pg_attribute")], attrs))
        self._insert_static(con, "mz_objects", rows_table(rels[("mz_catalog", "mz_objects")], mz_objs))
        self._insert_static(con, "mz_relations", rows_table(rels[("mz_catalog", "mz_relations")], mz_objs))
        self._insert_static(con, "mz_columns", rows_table(rels[("mz_catalog", "mz_columns")], mz_cols))
        self._insert_static(con, "mz_tables", rows_table(rels[("mz_catalog", "mz_tables")], [
            dict(o, create_sql=None) for o in mz_objs if o["type"] == "table"]))
        self._insert_static(con, "mz_views", rows_table(rels[("mz_catalog", "mz_views")], [
            o for o in mz_objs if o["type"] == "view"]))
        self._insert_static(con, "mz_types", rows_table(rels[("mz_catalog", "mz_types")], [
            {"id": f"s{t['oid']}", "oid": t["oid"], "schema_id": f"s{t['typnamespace']}", "name": t["typname"],
             "category": mz_type_category(t), "owner_id": "s1"} for t in types]))

    # -- the snapshot of the catalog -----------------------------------------------------------

    def refresh(self, force: bool = False) -> None:
        """Rebuild the catalog-derived rows if the catalog changed since the last build."""
        if not force and self._catalog.version == self._version:
            return
        with self._refresh_lock:
            if self._closed:  # the catalog is shutting down; its connection is going away
                return
            version = self._catalog.version
            if not force and version == self._version:
                return
            snap, lookups = self._build_snapshot()
            for path in self._visible_paths:
                snap.setdefault(f"{SNAP}.visible", _empty_visible())
                snap[f"{SNAP}.visible"] = pa.concat_tables([snap[f"{SNAP}.visible"], _visible_rows(lookups, path)])
            changed = {t: d for t, d in snap.items() if not _same(self._snap.get(t), d)}
            gone = {t for t in self._snap if t not in snap}
            cur = self._cursor()
            cur.begin()
            try:
                for table in (*changed, *gone):
                    if table in _CATALOG_ROWS:
                        # keep the built-in rows; replace only the catalog's
                        cur.execute(f"DELETE FROM {table} WHERE {_CATALOG_ROWS[table]}")
                    else:
                        cur.execute(f"DELETE FROM {table}")
                for table, data in changed.items():
                    self._insert(cur, table, data)
            except BaseException:
                cur.rollback()
                raise
            cur.commit()
            self._snap = {t: d for t, d in snap.items() if d.num_rows}
            self.lookups = lookups
            self._version = version

    def _refresher(self) -> None:
        """Rebuild the snapshot soon after every DDL, so catalog queries rarely wait for it."""
        while not self._closed:
            time.sleep(REFRESH_POLL_S)
            try:
                self.refresh()
            except Exception:  # noqa: BLE001 - the next query retries (and reports) it
                log.debug("background refresh of the system relations failed", exc_info=True)

    def visible_key(self, path: tuple[str, ...]) -> str:
        """Key of the rows of `mzsys.snap.visible` listing the relations visible with search
        path `path` (what pg_table_is_visible answers); computed on first use, then kept up
        to date by every refresh."""
        key = ",".join(path)
        if path in self._visible_paths:
            return key
        with self._refresh_lock:
            if path not in self._visible_paths:
                cur = self._cursor()
                rows = _visible_rows(self.lookups, path)
                self._insert(cur, f"{SNAP}.visible", rows)
                prev = self._snap.get(f"{SNAP}.visible")
                self._snap[f"{SNAP}.visible"] = rows if prev is None else pa.concat_tables([prev, rows])
                self._visible_paths.add(path)
        return key

    def primary_key(self, item: Item) -> tuple[str, ...]:
        """Primary key columns of a table, from its CREATE TABLE statement."""
        pk = self._pk_cache.get(item.create_sql)
        if pk is None:
            pk = primary_key_of(item.create_sql, [c.name for c in item.columns])
            self._pk_cache[item.create_sql] = pk
        return pk

    def _build_snapshot(self) -> tuple[dict[str, pa.Table], Lookups]:
        cat = self._catalog
        rels = SYSTEM_RELATIONS
        st = self.static_lookups
        lk = Lookups(
            namespaces={}, namespace_oids={}, classes=dict(st.classes), class_oids=dict(st.class_oids),
            types=st.types, type_names=st.type_names, type_oids=st.type_oids, procs=st.procs,
            proc_oids=st.proc_oids, roles=st.roles, role_oids=st.role_oids, type_base=st.type_base,
            array_elems=st.array_elems,
        )
        schemas = cat.schemas()
        schema_oid = {name: oid for oid, name in schemas}
        for oid, name in schemas:
            lk.namespaces[oid] = name
            lk.namespace_oids[name] = oid
        items = cat.items()
        by_id = {i.id: i for i in items}
        classes, attrs, indexes, constraints, attrdefs, depends = [], [], [], [], [], []
        indexdefs, constraintdefs, viewdefs, item_rows = [], [], [], []
        mz: dict[str, list[dict[str, Any]]] = {k: [] for k in (
            "mz_schemas", "mz_tables", "mz_views", "mz_materialized_views", "mz_indexes", "mz_index_columns",
            "mz_columns", "mz_objects", "mz_relations", "mz_sources", "mz_clusters", "mz_cluster_replicas",
            "mz_object_dependencies", "mz_object_fully_qualified_names")}
        has_index = {i.on_id for i in items if i.kind == "index"}
        pks = {i.id: self.primary_key(i) for i in items if i.kind == "table"}
        for oid, name in schemas:
            mz["mz_schemas"].append({"id": schema_id_of(cat, name, oid), "oid": oid, "database_id": None if cat.is_system_schema(name) else "u1",
                                     "name": name, "owner_id": "s1" if cat.is_system_schema(name) else "u1",
                                     "privileges": []})
        kind_char = {"table": "r", "source": "r", "view": "v", "materialized-view": "m", "index": "i"}
        mz_type = {"table": "table", "source": "source", "view": "view", "materialized-view": "materialized-view", "index": "index"}
        for it in items:
            nsp = schema_oid.get(it.schema, 0)
            kind = kind_char[it.kind]
            schema_id = schema_id_of(cat, it.schema, nsp)
            item_rows.append({"id": it.id, "oid": it.oid, "kind": it.kind})
            lk.classes[it.oid] = (it.schema, it.name)
            lk.class_oids[(it.schema, it.name)] = it.oid
            cls = class_row(it.oid, it.name, nsp, kind, len(it.columns))
            cls["relhasindex"] = it.id in has_index or bool(pks.get(it.id))
            cls["relam"] = {"r": HEAP_AM, "m": HEAP_AM, "i": BTREE_AM}.get(kind, 0)
            cls["relfilenode"] = it.oid if kind != "v" else 0
            classes.append(cls)
            cluster_id = "u1" if it.kind in ("materialized-view", "index", "source") else None
            obj = {"id": it.id, "oid": it.oid, "schema_id": schema_id, "name": it.name, "type": mz_type[it.kind],
                   "owner_id": "u1", "cluster_id": cluster_id, "privileges": ["u1=arwd/u1"]}
            mz["mz_objects"].append(obj)
            mz["mz_object_fully_qualified_names"].append({
                "id": it.id, "name": it.name, "object_type": mz_type[it.kind], "schema_id": schema_id,
                "schema_name": it.schema, "database_id": "u1", "database_name": DATABASE_NAME})
            for dep in it.all_dependencies():
                mz["mz_object_dependencies"].append({"object_id": it.id, "referenced_object_id": dep})
                if dep in by_id:
                    depends.append({"classid": PG_CLASS_OID, "objid": it.oid, "objsubid": 0,
                                    "refclassid": PG_CLASS_OID, "refobjid": by_id[dep].oid, "refobjsubid": 0,
                                    "deptype": "a" if it.kind == "index" else "n"})
            if it.kind != "index":
                mz["mz_relations"].append(obj)
                for pos, c in enumerate(it.columns, start=1):
                    attrs.append(attr_row(it.oid, c.name, c.type, pos, not c.nullable, c.default_sql is not None))
                    mz["mz_columns"].append(mz_column(it.id, c.name, pos, c.type, c.nullable, c.default_sql))
                    if c.default_sql is not None:
                        attrdefs.append({"oid": attrdef_oid(it.oid, pos), "adrelid": it.oid, "adnum": pos,
                                         "adbin": c.default_sql, "adsrc": c.default_sql})
            create = {"create_sql": it.create_sql, "redacted_create_sql": redact_literals(it.create_sql)}
            definition = definition_of(it.create_sql)
            if it.kind == "table":
                mz["mz_tables"].append({**obj, **create})
            elif it.kind == "view":
                mz["mz_views"].append({**obj, **create, "definition": definition})
                viewdefs.append({"oid": it.oid, "def": " " + definition})
            elif it.kind == "materialized-view":
                mz["mz_materialized_views"].append({**obj, **create, "definition": definition, "cluster_id": "u1"})
                viewdefs.append({"oid": it.oid, "def": " " + definition})
            elif it.kind == "source":
                kind = "subsource" if it.depends_on and it.shard_id is not None else "load-generator"
                mz["mz_sources"].append({**obj, **create, "type": kind, "cluster_id": "u1"})
            elif it.kind == "index":
                on = by_id.get(it.on_id or "")
                mz["mz_indexes"].append({"id": it.id, "oid": it.oid, "name": it.name, "on_id": it.on_id,
                                         "cluster_id": "u1", "owner_id": "u1", **create})
                if on is not None:
                    self._index_rows(it, on, indexes, attrs, indexdefs, mz["mz_index_columns"], is_pk=False)
            pk = pks.get(it.id)
            if pk:
                self._pkey_rows(it, pk, nsp, classes, indexes, attrs, constraints, indexdefs, constraintdefs, depends, lk)
        for c in cat.clusters():
            mz["mz_clusters"].append({"id": c.id, "name": c.name, "owner_id": "s1", "privileges": [],
                                      "managed": True, "size": "spark", "replication_factor": 1, "disk": False,
                                      "availability_zones": [], "introspection_debugging": False,
                                      "introspection_interval": Interval(micros=1_000_000)})
        for r in cat.cluster_replicas():
            mz["mz_cluster_replicas"].append({"id": r.id, "name": r.name, "cluster_id": r.cluster_id,
                                              "size": "spark", "owner_id": "s1", "disk": False})
        namespaces = [{"oid": oid, "nspname": name, "nspowner": BOOTSTRAP_SUPERUSER_OID} for oid, name in schemas]
        descriptions, comments = [], []
        for (iid, sub), text in sorted(cat.comments().items()):
            if (it := by_id.get(iid)) is None:
                continue
            descriptions.append({"objoid": it.oid, "classoid": PG_CLASS_OID, "objsubid": sub, "description": text})
            comments.append({"id": iid, "object_type": mz_type[it.kind], "object_sub_id": sub or None, "comment": text})

        def t(schema: str, name: str, rows: list[dict[str, Any]]) -> pa.Table:
            return rows_table(rels[(schema, name)], rows)

        def rel(schema: str, name: str) -> str:
            return rels[(schema, name)].duck

        out: dict[str, pa.Table] = {
            rel("pg_catalog", "pg_namespace"): t("pg_catalog", "pg_namespace", namespaces),
            rel("pg_catalog", "pg_class"): t("pg_catalog", "pg_class", classes),
            rel("pg_catalog", "pg_attribute"): t("pg_catalog", "pg_attribute", attrs),
            rel("pg_catalog", "pg_index"): t("pg_catalog", "pg_index", indexes),
            rel("pg_catalog", "pg_constraint"): t("pg_catalog", "pg_constraint", constraints),
            rel("pg_catalog", "pg_attrdef"): t("pg_catalog", "pg_attrdef", attrdefs),
            rel("pg_catalog", "pg_depend"): t("pg_catalog", "pg_depend", depends),
            rel("pg_catalog", "pg_description"): t("pg_catalog", "pg_description", descriptions),
            rel("mz_internal", "mz_comments"): t("mz_internal", "mz_comments", comments),
            f"{SNAP}.indexdef": pa.table({"oid": pa.array([r["oid"] for r in indexdefs], pa.uint32()),
                                         "colno": pa.array([r["colno"] for r in indexdefs], pa.int32()),
                                         "def": [r["def"] for r in indexdefs]}),
            f"{SNAP}.constraintdef": pa.table({"oid": pa.array([r["oid"] for r in constraintdefs], pa.uint32()),
                                              "def": [r["def"] for r in constraintdefs]}),
            f"{SNAP}.viewdef": pa.table({"oid": pa.array([r["oid"] for r in viewdefs], pa.uint32()),
                                        "def": [r["def"] for r in viewdefs]}),
            f"{SNAP}.items": pa.table({"id": [r["id"] for r in item_rows],
                                      "oid": pa.array([r["oid"] for r in item_rows], pa.uint32()),
                                      "kind": [r["kind"] for r in item_rows]}),
        }
        for name, rows in mz.items():
            schema = "mz_internal" if name in ("mz_object_dependencies", "mz_object_fully_qualified_names") else "mz_catalog"
            out[rel(schema, name)] = t(schema, name, rows)
        return out, lk

    def _index_rows(self, it: Item, on: Item, indexes: list, attrs: list, indexdefs: list,
                    mz_index_columns: list, *, is_pk: bool) -> None:
        names = [c.name for c in on.columns]
        keys = []
        for pos, expr in enumerate(it.index_keys, start=1):
            col = plain_column(expr, names)
            attnum = names.index(col) + 1 if col is not None else 0
            ctype = on.columns[attnum - 1].type if attnum else SqlType("text")
            keys.append(attnum)
            attrs.append(attr_row(it.oid, col if col is not None else f"expr{pos - 1 or ''}" if pos > 1 else "expr",
                                   ctype, pos, False, False))
            indexdefs.append({"oid": it.oid, "colno": pos, "def": quote_ident(col) if col is not None else expr})
            mz_index_columns.append({"index_id": it.id, "index_position": pos,
                                     "on_position": attnum or None, "on_expression": None if attnum else expr,
                                     "nullable": on.columns[attnum - 1].nullable if attnum else True})
        exprs = [k for k, a in zip(it.index_keys, keys, strict=True) if a == 0]
        indexes.append(index_row(it.oid, on.oid, keys, [on.columns[a - 1].type if a else SqlType("text") for a in keys],
                                  primary=is_pk, exprs=exprs))
        cols = ", ".join(quote_ident(plain_column(e, names) or "") if a else e
                         for e, a in zip(it.index_keys, keys, strict=True))
        indexdefs.append({"oid": it.oid, "colno": 0,
                          "def": f"CREATE INDEX {quote_ident(it.name)} ON {quote_ident(on.schema)}.{quote_ident(on.name)} USING btree ({cols})"})

    def _pkey_rows(self, it: Item, pk: tuple[str, ...], nsp: int, classes: list, indexes: list, attrs: list,
                   constraints: list, indexdefs: list, constraintdefs: list, depends: list, lk: Lookups) -> None:
        names = [c.name for c in it.columns]
        idx_oid = pkey_index_oid(it.oid)
        con_oid = pkey_constraint_oid(it.oid)
        iname = f"{it.name}_pkey"
        cls = class_row(idx_oid, iname, nsp, "i", len(pk))
        cls["relam"] = BTREE_AM
        cls["relfilenode"] = idx_oid
        classes.append(cls)
        lk.classes[idx_oid] = (it.schema, iname)
        lk.class_oids[(it.schema, iname)] = idx_oid
        keys = [names.index(c) + 1 for c in pk]
        for pos, k in enumerate(keys, start=1):
            attrs.append(attr_row(idx_oid, names[k - 1], it.columns[k - 1].type, pos, False, False))
            indexdefs.append({"oid": idx_oid, "colno": pos, "def": quote_ident(names[k - 1])})
        indexes.append(index_row(idx_oid, it.oid, keys, [it.columns[k - 1].type for k in keys], primary=True, exprs=[]))
        cols = ", ".join(quote_ident(c) for c in pk)
        indexdefs.append({"oid": idx_oid, "colno": 0, "def": f"CREATE UNIQUE INDEX {quote_ident(iname)} ON "
                                                             f"{quote_ident(it.schema)}.{quote_ident(it.name)} USING btree ({cols})"})
        constraints.append({"oid": con_oid, "conname": iname, "connamespace": nsp, "contype": "p",
                            "condeferrable": False, "condeferred": False, "convalidated": True,
                            "conrelid": it.oid, "contypid": 0, "conindid": idx_oid, "conparentid": 0,
                            "confrelid": 0, "confupdtype": " ", "confdeltype": " ", "confmatchtype": " ",
                            "conislocal": True, "coninhcount": 0, "connoinherit": True, "conkey": keys})
        constraintdefs.append({"oid": con_oid, "def": f"PRIMARY KEY ({cols})"})
        depends.append({"classid": PG_CLASS_OID, "objid": idx_oid, "objsubid": 0, "refclassid": PG_CONSTRAINT_OID,
                        "refobjid": con_oid, "refobjsubid": 0, "deptype": "i"})
        for k in keys:
            depends.append({"classid": PG_CONSTRAINT_OID, "objid": con_oid, "objsubid": 0,
                            "refclassid": PG_CLASS_OID, "refobjid": it.oid, "refobjsubid": k, "deptype": "a"})

    # -- introspection state (written by the compute controller) -------------------------------

    def _write_state(self, fn: Callable[[duckdb.DuckDBPyConnection], None]) -> None:
        with self._refresh_lock:
            cur = self._cursor()
            cur.begin()
            try:
                fn(cur)
            except BaseException:
                cur.rollback()
                raise
            cur.commit()
            self.state_version += 1

    def set_operator_hydration(self, object_id: str, replica_id: str,
                               statuses: Sequence[tuple[int, int, bool]]) -> None:
        """Replace the per-worker hydration statuses of one object on one replica with
        `(plan_node_id, worker_id, hydrated)` rows."""
        rel = SYSTEM_RELATIONS[("mz_internal", "mz_compute_operator_hydration_statuses_per_worker")]

        def write(cur: duckdb.DuckDBPyConnection) -> None:
            cur.execute(f"DELETE FROM {STATE}.{rel.name} WHERE object_id = ? AND replica_id = ?", [object_id, replica_id])
            self._insert(cur, f"{STATE}.{rel.name}", rows_table(rel, [
                {"object_id": object_id, "plan_node_id": n, "replica_id": replica_id, "worker_id": w, "hydrated": h}
                for n, w, h in statuses]))

        self._write_state(write)

    def set_hydration_time(self, object_id: str, replica_id: str, time_ns: int | None) -> None:
        """Record (or clear, with None) how long an object took to hydrate on a replica."""
        rel = SYSTEM_RELATIONS[("mz_internal", "mz_compute_hydration_times")]

        def write(cur: duckdb.DuckDBPyConnection) -> None:
            cur.execute(f"DELETE FROM {STATE}.{rel.name} WHERE object_id = ? AND replica_id = ?", [object_id, replica_id])
            if time_ns is not None:
                self._insert(cur, f"{STATE}.{rel.name}", rows_table(rel, [
                    {"replica_id": replica_id, "object_id": object_id, "time_ns": time_ns}]))

        self._write_state(write)

    def set_lir_mapping(self, global_id: str, rows: Sequence[tuple[int, str, int | None, int]]) -> None:
        """Replace the LIR mapping of one dataflow with `(lir_id, operator, parent_lir_id,
        nesting)` rows."""
        rel = SYSTEM_RELATIONS[("mz_internal", "mz_lir_mapping")]

        def write(cur: duckdb.DuckDBPyConnection) -> None:
            cur.execute(f"DELETE FROM {STATE}.{rel.name} WHERE global_id = ?", [global_id])
            self._insert(cur, f"{STATE}.{rel.name}", rows_table(rel, [
                {"global_id": global_id, "lir_id": i, "operator": op, "parent_lir_id": p, "nesting": n}
                for i, op, p, n in rows]))

        self._write_state(write)

    def drop_introspection(self, object_id: str) -> None:
        """Forget everything reported about a dropped object."""

        def write(cur: duckdb.DuckDBPyConnection) -> None:
            cur.execute(f"DELETE FROM {STATE}.mz_compute_operator_hydration_statuses_per_worker WHERE object_id = ?", [object_id])
            cur.execute(f"DELETE FROM {STATE}.mz_compute_hydration_times WHERE object_id = ?", [object_id])
            cur.execute(f"DELETE FROM {STATE}.mz_lir_mapping WHERE global_id = ?", [object_id])

        self._write_state(write)


# Tables holding both built-in rows and catalog-derived ones: which rows are the catalog's.
_CATALOG_ROWS = {
    SYSTEM_RELATIONS[("pg_catalog", "pg_class")].duck: "oid >= 20000",
    SYSTEM_RELATIONS[("pg_catalog", "pg_attribute")].duck: "attrelid >= 20000",
    **{SYSTEM_RELATIONS[("mz_catalog", n)].duck: "id NOT LIKE 's%'"
       for n in ("mz_objects", "mz_relations", "mz_columns", "mz_tables", "mz_views", "mz_types")},
}


def _same(a: pa.Table | None, b: pa.Table) -> bool:
    if a is None:
        return b.num_rows == 0
    return a.num_rows == b.num_rows and a.equals(b)


def _empty_visible() -> pa.Table:
    return pa.table({"sp": pa.array([], pa.string()), "oid": pa.array([], pa.uint32()),
                     "visible": pa.array([], pa.bool_()), "name": pa.array([], pa.string())})


def _visible_rows(lk: Lookups, path: tuple[str, ...]) -> pa.Table:
    """For search path `path`, every relation: whether it is visible (in a schema of the
    path and not hidden by a relation of the same name in an earlier schema) and how
    regclass prints it (unqualified when visible)."""
    rank = {s: i for i, s in enumerate(path)}
    best: dict[str, tuple[int, int]] = {}
    for oid, (schema, name) in lk.classes.items():
        r = rank.get(schema)
        if r is None:
            continue
        cur = best.get(name)
        if cur is None or r < cur[0]:
            best[name] = (r, oid)
    visible = {oid for _r, oid in best.values()}
    oids, flags, names = [], [], []
    for oid, (schema, name) in lk.classes.items():
        oids.append(oid)
        flags.append(oid in visible)
        names.append(quote_ident(name) if oid in visible else f"{quote_ident(schema)}.{quote_ident(name)}")
    key = ",".join(path)
    return pa.table({"sp": pa.array([key] * len(oids), pa.string()), "oid": pa.array(oids, pa.uint32()),
                     "visible": pa.array(flags, pa.bool_()), "name": pa.array(names, pa.string())})


