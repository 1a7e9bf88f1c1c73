"""The system relations served to clients: their schemas, names, OIDs, kinds and columns
(name, Postgres type), and how each is stored in DuckDB.

`pg_catalog` and `information_schema` relations have Postgres 15's own column lists and OIDs
(from `pg15_data`, extracted from a real server). `mz_catalog` and `mz_internal` relations
have Materialize's column names and the types of DESIGN §8. Every relation lives in the
in-memory DuckDB database `mzsys` (see `db.py`) as `mzsys.<duck schema>.<name>`.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.system import pg15_data
from sql.types import ARRAY_ELEMENT, TYPE_INFOS, SqlType

# The in-memory DuckDB database holding the system relations, and its schemas.
MZSYS = "mzsys"
DUCK_SCHEMAS = {
    "pg_catalog": "pg",
    "information_schema": "info",
    "mz_catalog": "mzc",
    "mz_internal": "mzi",
    "mz_introspection": "mzx",
}
FN = f"{MZSYS}.fn"  # macros
STATIC = f"{MZSYS}.static"  # rows that never change (built-in types, procs, system relations)
SNAP = f"{MZSYS}.snap"  # rows derived from the catalog, rebuilt when it changes
STATE = f"{MZSYS}.mzi"  # introspection state written by the compute controller: mz_internal tables

# OIDs of objects that are not catalog items.
BOOTSTRAP_SUPERUSER_OID = 10  # the `materialize` role (Postgres' bootstrap superuser oid)
MZ_SYSTEM_ROLE_OID = 16661
MZ_SUPPORT_ROLE_OID = 16662
MZ_CATALOG_FIRST_OID = 16500
MZ_INTERNAL_FIRST_OID = 16600
MZ_INTROSPECTION_FIRST_OID = 16670
MZ_PROC_FIRST_OID = 16470  # uint8 I/O functions
PG_DEFAULT_TABLESPACE = 1663
PG_GLOBAL_TABLESPACE = 1664
HEAP_AM = 2
BTREE_AM = 403
DEFAULT_COLLATION = 100
UTF8_ENCODING = 6
# Objects implied by catalog items (a table's primary key index and constraint, column
# defaults) get OIDs derived from the item's OID, above any OID the catalog hands out.
DERIVED_KEY_BASE = 2_500_000_000  # + item oid * 4 + (0: pkey index, 1: pkey constraint)
DERIVED_ATTRDEF_BASE = 3_000_000_000  # + item oid * 1024 + attnum


def pkey_index_oid(item_oid: int) -> int:
    return DERIVED_KEY_BASE + item_oid * 4


def pkey_constraint_oid(item_oid: int) -> int:
    return DERIVED_KEY_BASE + item_oid * 4 + 1


def attrdef_oid(item_oid: int, attnum: int) -> int:
    return DERIVED_ATTRDEF_BASE + item_oid * 1024 + attnum


@dataclass(frozen=True, slots=True)
class SysRelation:
    schema: str  # pg_catalog | information_schema | mz_catalog | mz_internal
    name: str
    oid: int
    kind: str  # pg_class.relkind: 'r' table, 'v' view
    columns: tuple[tuple[str, SqlType], ...]
    # Rows come from the session (pg_settings, pg_stat_activity, ...): the rewrite injects
    # them as VALUES instead of reading DuckDB.
    session: bool = False
    notnull: frozenset[str] = frozenset()  # columns Postgres declares NOT NULL

    @property
    def duck(self) -> str:
        return f"{MZSYS}.{DUCK_SCHEMAS[self.schema]}.{self.name}"

    def column_types(self) -> dict[str, SqlType]:
        return dict(self.columns)


def _t(name: str, typmod: int = -1) -> SqlType:
    # Postgres pseudo-types of a few catalog columns (anyarray) are served as text[].
    return SqlType(name if name in TYPE_INFOS else "_text", typmod)


# ---- Materialize relations ------------------------------------------------------------------

_OWNED = [("owner_id", "text"), ("privileges", "_text")]
MZ_CATALOG: dict[str, list[tuple[str, str]]] = {
    "mz_databases": [("id", "text"), ("oid", "oid"), ("name", "text"), *_OWNED],
    "mz_schemas": [("id", "text"), ("oid", "oid"), ("database_id", "text"), ("name", "text"), *_OWNED],
    "mz_tables": [("id", "text"), ("oid", "oid"), ("schema_id", "text"), ("name", "text"), *_OWNED,
                  ("create_sql", "text"), ("redacted_create_sql", "text"), ("source_id", "text")],
    "mz_views": [("id", "text"), ("oid", "oid"), ("schema_id", "text"), ("name", "text"),
                 ("definition", "text"), *_OWNED, ("create_sql", "text"), ("redacted_create_sql", "text")],
    "mz_materialized_views": [("id", "text"), ("oid", "oid"), ("schema_id", "text"), ("name", "text"),
                              ("cluster_id", "text"), ("definition", "text"), *_OWNED,
                              ("create_sql", "text"), ("redacted_create_sql", "text")],
    "mz_indexes": [("id", "text"), ("oid", "oid"), ("name", "text"), ("on_id", "text"),
                   ("cluster_id", "text"), ("owner_id", "text"), ("create_sql", "text"),
                   ("redacted_create_sql", "text")],
    "mz_index_columns": [("index_id", "text"), ("index_position", "uint8"), ("on_position", "uint8"),
                         ("on_expression", "text"), ("nullable", "bool")],
    "mz_columns": [("id", "text"), ("name", "text"), ("position", "uint8"), ("nullable", "bool"),
                   ("type", "text"), ("default", "text"), ("type_oid", "oid"), ("type_mod", "int4")],
    "mz_objects": [("id", "text"), ("oid", "oid"), ("schema_id", "text"), ("name", "text"),
                   ("type", "text"), ("owner_id", "text"), ("cluster_id", "text"), ("privileges", "_text")],
    "mz_relations": [("id", "text"), ("oid", "oid"), ("schema_id", "text"), ("name", "text"),
                     ("type", "text"), ("owner_id", "text"), ("cluster_id", "text"), ("privileges", "_text")],
    "mz_clusters": [("id", "text"), ("name", "text"), *_OWNED, ("managed", "bool"), ("size", "text"),
                    ("replication_factor", "int4"), ("disk", "bool"), ("availability_zones", "_text"),
                    ("introspection_debugging", "bool"), ("introspection_interval", "interval")],
    "mz_cluster_replicas": [("id", "text"), ("name", "text"), ("cluster_id", "text"), ("size", "text"),
                            ("availability_zone", "text"), ("owner_id", "text"), ("disk", "bool")],
    "mz_sources": [("id", "text"), ("oid", "oid"), ("schema_id", "text"), ("name", "text"), ("type", "text"),
                   ("connection_id", "text"), ("size", "text"), ("envelope_type", "text"),
                   ("key_format", "text"), ("value_format", "text"), ("cluster_id", "text"), *_OWNED,
                   ("create_sql", "text"), ("redacted_create_sql", "text")],
    "mz_sinks": [("id", "text"), ("oid", "oid"), ("schema_id", "text"), ("name", "text"), ("type", "text"),
                 ("connection_id", "text"), ("size", "text"), ("envelope_type", "text"), ("format", "text"),
                 ("cluster_id", "text"), ("owner_id", "text"), ("create_sql", "text"),
                 ("redacted_create_sql", "text")],
    "mz_connections": [("id", "text"), ("oid", "oid"), ("schema_id", "text"), ("name", "text"),
                       ("type", "text"), *_OWNED, ("create_sql", "text"), ("redacted_create_sql", "text")],
    "mz_secrets": [("id", "text"), ("oid", "oid"), ("schema_id", "text"), ("name", "text"), *_OWNED],
    "mz_types": [("id", "text"), ("oid", "oid"), ("schema_id", "text"), ("name", "text"),
                 ("category", "text"), *_OWNED, ("create_sql", "text"), ("redacted_create_sql", "text")],
    "mz_functions": [("id", "text"), ("oid", "oid"), ("schema_id", "text"), ("name", "text"),
                     ("argument_type_ids", "_text"), ("variadic_argument_type_id", "text"),
                     ("return_type_id", "text"), ("returns_set", "bool"), ("owner_id", "text")],
    "mz_roles": [("id", "text"), ("oid", "oid"), ("name", "text"), ("inherit", "bool")],
    "mz_role_members": [("role_id", "text"), ("member", "text"), ("grantor", "text")],
}

MZ_INTERNAL: dict[str, list[tuple[str, str]]] = {
    "mz_compute_operator_hydration_statuses_per_worker": [
        ("object_id", "text"), ("plan_node_id", "uint8"), ("replica_id", "text"),
        ("worker_id", "uint8"), ("hydrated", "bool")],
    "mz_compute_operator_hydration_statuses": [
        ("object_id", "text"), ("plan_node_id", "uint8"), ("replica_id", "text"), ("hydrated", "bool")],
    "mz_compute_hydration_statuses": [
        ("object_id", "text"), ("replica_id", "text"), ("hydrated", "bool"), ("hydration_time", "interval")],
    "mz_compute_hydration_times": [("replica_id", "text"), ("object_id", "text"), ("time_ns", "uint8")],
    "mz_hydration_statuses": [("object_id", "text"), ("replica_id", "text"), ("hydrated", "bool")],
    "mz_lir_mapping": [("global_id", "text"), ("lir_id", "uint8"), ("operator", "text"),
                       ("parent_lir_id", "uint8"), ("nesting", "int2")],
    "mz_object_dependencies": [("object_id", "text"), ("referenced_object_id", "text")],
    "mz_object_fully_qualified_names": [
        ("id", "text"), ("name", "text"), ("object_type", "text"), ("schema_id", "text"),
        ("schema_name", "text"), ("database_id", "text"), ("database_name", "text")],
    "mz_comments": [("id", "text"), ("object_type", "text"), ("object_sub_id", "int4"), ("comment", "text")],
    "mz_cluster_replica_statuses": [("replica_id", "text"), ("process_id", "uint8"), ("status", "text"),
                                    ("reason", "text"), ("updated_at", "timestamptz")],
    "mz_sessions": [("id", "text"), ("connection_id", "int4"), ("role_id", "text"),
                    ("client_ip", "text"), ("connected_at", "timestamptz")],
    # mzspark's own: how many Spark jobs the server has started (catalog queries start none),
    # the analyzer / optimizer rule runs of its driver, and the one-shot queries whose analysed
    # plan was a Spark plan template's (compute.render.templates)
    "mzspark_spark_jobs": [("jobs_started", "int8"), ("rule_runs", "int8"), ("plan_template_hits", "int8")],
    # the frontier of every maintained dataflow (compute.controller)
    "mz_compute_frontiers": [("object_id", "text"), ("replica_id", "text"), ("time", "mz_timestamp")],
    # mzspark's own: the Spark storage memory held by cached collections (indexes, views' state)
    "mzspark_spark_storage": [("cached_rdds", "int8"), ("memory_bytes", "int8")],
    # mzspark's own: each hydrated dataflow's expiration (NULL: none; compute.expiration), the
    # future updates its temporal filters hold, every update its Spark state holds (pending,
    # arrangements, an index's rows), and when the replica last (re)started
    "mzspark_dataflow_expiration": [("object_id", "text"), ("replica_id", "text"), ("expiration", "mz_timestamp"),
                                    ("pending_updates", "int8"), ("held_updates", "int8"),
                                    ("replica_started", "mz_timestamp")],
}

# mz_introspection: the replica's introspection (a view over the controller's state)
MZ_INTROSPECTION: dict[str, list[tuple[str, str]]] = {
    "mz_lir_mapping": MZ_INTERNAL["mz_lir_mapping"],
}

# Relations whose rows depend on the session or on live server state.
SESSION_RELATIONS = {
    ("pg_catalog", "pg_settings"),
    ("pg_catalog", "pg_stat_activity"),
    ("mz_internal", "mz_sessions"),
    ("mz_internal", "mzspark_spark_jobs"),
    ("mz_internal", "mz_compute_frontiers"),
    ("mz_internal", "mzspark_spark_storage"),
    ("mz_internal", "mzspark_dataflow_expiration"),
    ("mz_internal", "mz_cluster_replica_statuses"),
}
# Tables the compute controller writes (everything else is derived or static).
STATE_TABLES = (
    "mz_compute_operator_hydration_statuses_per_worker",
    "mz_compute_hydration_times",
    "mz_lir_mapping",
)


# Columns Postgres removed after 9.5 that clients still query from a server reporting
# server_version 9.5 (psql's \d reads pg_class.relhasoids, \df pg_proc.proisagg, ...).
LEGACY_COLUMNS: dict[tuple[str, str], list[tuple[str, str]]] = {
    ("pg_catalog", "pg_class"): [("relhasoids", "bool")],
    ("pg_catalog", "pg_proc"): [("proisagg", "bool"), ("proiswindow", "bool")],
    ("pg_catalog", "pg_attrdef"): [("adsrc", "text")],
    ("pg_catalog", "pg_constraint"): [("consrc", "text")],
    ("pg_catalog", "pg_am"): [  # pre-9.6 capability flags (pgjdbc's getIndexInfo reads amcanorder)
        ("amstrategies", "int2"), ("amsupport", "int2"), ("amcanorder", "bool"), ("amcanorderbyop", "bool"),
        ("amcanbackward", "bool"), ("amcanunique", "bool"), ("amcanmulticol", "bool"), ("amoptionalkey", "bool"),
        ("amsearcharray", "bool"), ("amsearchnulls", "bool"), ("amstorage", "bool"), ("amclusterable", "bool"),
        ("ampredlocks", "bool"), ("amkeytype", "oid")],
}


def _build() -> dict[tuple[str, str], SysRelation]:
    out: dict[tuple[str, str], SysRelation] = {}
    for schema in ("pg_catalog", "information_schema"):
        for name, (oid, kind, cols) in pg15_data.RELATIONS[schema].items():
            legacy = LEGACY_COLUMNS.get((schema, name), [])
            columns = tuple((c, _t(t)) for c, t, _mod, _nn in [*cols, *((c, t, -1, False) for c, t in legacy)])
            notnull = frozenset(c for c, _t2, _mod, nn in cols if nn)
            out[(schema, name)] = SysRelation(schema, name, oid, kind, columns, (schema, name) in SESSION_RELATIONS, notnull)
    for schema, rels, first in (("mz_catalog", MZ_CATALOG, MZ_CATALOG_FIRST_OID),
                                ("mz_internal", MZ_INTERNAL, MZ_INTERNAL_FIRST_OID),
                                ("mz_introspection", MZ_INTROSPECTION, MZ_INTROSPECTION_FIRST_OID)):
        for i, (name, cols) in enumerate(rels.items()):
            kind = "r" if (name in STATE_TABLES and schema == "mz_internal") or schema == "mz_catalog" else "v"
            columns = tuple((c, _t(t)) for c, t in cols)
            out[(schema, name)] = SysRelation(schema, name, first + i, kind, columns, (schema, name) in SESSION_RELATIONS)
    return out


SYSTEM_RELATIONS: dict[tuple[str, str], SysRelation] = _build()
RELATIONS_BY_NAME: dict[str, list[SysRelation]] = {}
for _rel in SYSTEM_RELATIONS.values():
    RELATIONS_BY_NAME.setdefault(_rel.name, []).append(_rel)


# ---- DuckDB storage of Postgres types ---------------------------------------------------------

_DUCK_SCALAR = {
    "bool": "BOOLEAN", "int2": "SMALLINT", "int4": "INTEGER", "int8": "BIGINT", "uint8": "UBIGINT",
    "float4": "FLOAT", "float8": "DOUBLE", "numeric": "DOUBLE", "date": "DATE", "time": "TIME",
    "timestamp": "TIMESTAMP", "timestamptz": "TIMESTAMPTZ", "interval": "INTERVAL", "bytea": "BLOB",
    "xid8": "UBIGINT",
}
# Types stored as their OID (UINTEGER): oid itself and the reg* / transaction id types.
OID_LIKE = frozenset({
    "oid", "regclass", "regtype", "regproc", "regprocedure", "regoper", "regoperator",
    "regnamespace", "regrole", "regcollation", "regconfig", "regdictionary", "xid", "cid",
})
REG_TYPES = frozenset({"regclass", "regtype", "regproc", "regprocedure", "regnamespace", "regrole"})


def duck_type(t: SqlType) -> str:
    """The DuckDB type storing values of Postgres type `t`."""
    if t.name in ARRAY_ELEMENT:
        return duck_type(SqlType(ARRAY_ELEMENT[t.name])) + "[]"
    if t.name in OID_LIKE:
        return "UINTEGER"
    return _DUCK_SCALAR.get(t.name, "VARCHAR")


_PG_OF_DUCK = {
    "VARCHAR": "text", "UINTEGER": "oid", "SMALLINT": "int2", "INTEGER": "int4", "BIGINT": "int8",
    "HUGEINT": "numeric", "UBIGINT": "uint8", "USMALLINT": "int4", "UTINYINT": "int2",
    "TINYINT": "int2", "FLOAT": "float4", "DOUBLE": "float8", "BOOLEAN": "bool", "DATE": "date",
    "TIME": "time", "TIMESTAMP": "timestamp", "TIMESTAMP WITH TIME ZONE": "timestamptz",
    "TIMESTAMPTZ": "timestamptz", "INTERVAL": "interval", "BLOB": "bytea", "UUID": "uuid",
    "NULL": "text", '"NULL"': "text",
}


def pg_type_of_duck(duck: str) -> SqlType:
    """The Postgres type of a DuckDB result column (used when nothing more precise is known)."""
    d = duck.upper()
    if d.endswith("[]"):
        elem = pg_type_of_duck(d[:-2])
        name = "_" + elem.name
        return SqlType(name) if name in ARRAY_ELEMENT else SqlType("_text")
    if d.startswith("DECIMAL"):
        return SqlType("numeric")
    if d.startswith("STRUCT") or d.startswith("MAP"):
        return SqlType("record")
    return SqlType(_PG_OF_DUCK.get(d, "text"))
