"""System relation rows: their Arrow tables and the pg_* / mz_* row builders over catalog items."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa

from catalog.model import CatalogReader
from catalog.system import pg15_data
from catalog.system.relations import (
    BOOTSTRAP_SUPERUSER_OID,
    DEFAULT_COLLATION,
    HEAP_AM,
    MZ_PROC_FIRST_OID,
    SysRelation,
    duck_type,
)
from sql.types import ARRAY_ELEMENT, TYPE_INFOS, Interval, SqlType

# ---- Arrow conversion ---------------------------------------------------------------------------

def arrow_type(duck: str) -> pa.DataType:
    if duck.endswith("[]"):
        return pa.list_(arrow_type(duck[:-2]))
    return {
        "VARCHAR": pa.string(), "UINTEGER": pa.uint32(), "SMALLINT": pa.int16(), "INTEGER": pa.int32(),
        "BIGINT": pa.int64(), "UBIGINT": pa.uint64(), "FLOAT": pa.float32(), "DOUBLE": pa.float64(),
        "BOOLEAN": pa.bool_(), "TIMESTAMPTZ": pa.timestamp("us", tz="UTC"),
        "TIMESTAMP": pa.timestamp("us"), "DATE": pa.date32(), "TIME": pa.time64("us"),
        "INTERVAL": pa.month_day_nano_interval(), "BLOB": pa.binary(),
    }[duck]


def arrow_value(v: Any) -> Any:
    if isinstance(v, Interval):
        return pa.scalar((v.months, v.days, v.micros * 1000), pa.month_day_nano_interval()).as_py()
    return v


def default_of(t: SqlType) -> Any:
    """The value of a column nobody set: false / 0 for flags and numbers, else NULL."""
    if t.name == "bool":
        return False
    if t.name in ("int2", "int4", "int8", "oid", "uint8", "float4", "float8", "regproc", "regclass",
                  "regtype", "xid", "cid", "regnamespace"):
        return 0
    return None


def rows_table(rel: SysRelation, rows: Iterable[dict[str, Any]]) -> pa.Table:
    """An Arrow table with the relation's columns from dict rows (missing keys: defaults)."""
    rows = list(rows)
    arrays = []
    names = []
    for name, t in rel.columns:
        d = default_of(t)
        vals = [arrow_value(r.get(name, d)) for r in rows]
        arrays.append(pa.array(vals, type=arrow_type(duck_type(t))))
        names.append(name)
    return pa.Table.from_arrays(arrays, names=names)


# ---- row builders --------------------------------------------------------------------------------

SYSTEM_SCHEMA_OIDS = {"pg_catalog": 11, "mz_catalog": 16656, "mz_internal": 16657, "information_schema": 16658,
                      "mz_introspection": 16659}
TYPE_ROWS: dict[int, dict[str, Any]] = {}


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def schema_id_of(cat: CatalogReader, name: str, oid: int) -> str:
    return f"s{oid}" if cat.is_system_schema(name) else f"u{oid}"


def type_row(oid: int) -> dict[str, Any]:
    if not TYPE_ROWS:
        cols, rows = pg15_data.TYPES
        for r in rows:
            d = dict(zip(cols, r, strict=True))
            TYPE_ROWS[d["oid"]] = d
        for d in uint8_types():
            TYPE_ROWS[d["oid"]] = d
    return TYPE_ROWS.get(oid, {})


def uint8_types() -> list[dict[str, Any]]:
    base = {"typnamespace": 16656, "typowner": BOOTSTRAP_SUPERUSER_OID, "typisdefined": True, "typdelim": ",",
            "typrelid": 0, "typnotnull": False, "typbasetype": 0, "typtypmod": -1, "typndims": 0,
            "typcollation": 0, "typmodin": 0, "typmodout": 0, "typanalyze": 0, "typsubscript": 0}
    return [
        {**base, "oid": 16462, "typname": "uint8", "typlen": 8, "typbyval": True, "typtype": "b",
         "typcategory": "N", "typispreferred": False, "typelem": 0, "typarray": 16463,
         "typinput": MZ_PROC_FIRST_OID, "typoutput": MZ_PROC_FIRST_OID + 1,
         "typreceive": MZ_PROC_FIRST_OID + 2, "typsend": MZ_PROC_FIRST_OID + 3, "typalign": "d",
         "typstorage": "p"},
        {**base, "oid": 16463, "typname": "_uint8", "typlen": -1, "typbyval": False, "typtype": "b",
         "typcategory": "A", "typispreferred": False, "typelem": 16462, "typarray": 0,
         "typinput": 750, "typoutput": 751, "typreceive": 2400, "typsend": 2401, "typalign": "d",
         "typstorage": "x", "typsubscript": 6179},
    ]


def class_row(oid: int, name: str, nsp: int, kind: str, natts: int) -> dict[str, Any]:
    return {
        "oid": oid, "relname": name, "relnamespace": nsp, "reltype": 0, "reloftype": 0,
        "relowner": BOOTSTRAP_SUPERUSER_OID, "relam": HEAP_AM if kind in ("r", "m") else 0,
        "relfilenode": oid if kind != "v" else 0, "reltablespace": 0, "relpages": 0, "reltuples": -1.0,
        "relallvisible": 0, "reltoastrelid": 0, "relhasindex": False, "relisshared": False,
        "relpersistence": "p", "relkind": kind, "relnatts": natts, "relchecks": 0,
        "relhasrules": kind == "v", "relhastriggers": False, "relhassubclass": False,
        "relrowsecurity": False, "relforcerowsecurity": False, "relispopulated": True,
        "relreplident": "n" if kind in ("v", "i") else "d", "relispartition": False, "relrewrite": 0,
        "relfrozenxid": 0, "relminmxid": 0,
    }


COLLATABLE = frozenset({"text", "varchar", "bpchar", "name", "_text", "_varchar", "_bpchar", "_name"})


def attr_row(rel_oid: int, name: str, t: SqlType, num: int, notnull: bool, hasdef: bool) -> dict[str, Any]:
    tr = type_row(t.oid)
    return {
        "attrelid": rel_oid, "attname": name, "atttypid": t.oid, "attstattarget": -1,
        "attlen": tr.get("typlen", -1), "attnum": num, "attndims": 1 if t.name in ARRAY_ELEMENT and t.name.startswith("_") else 0,
        "attcacheoff": -1, "atttypmod": t.typmod, "attbyval": tr.get("typbyval", False),
        "attalign": tr.get("typalign", "i"), "attstorage": tr.get("typstorage", "p"), "attcompression": "",
        "attnotnull": notnull, "atthasdef": hasdef, "atthasmissing": False, "attidentity": "",
        "attgenerated": "", "attisdropped": False, "attislocal": True, "attinhcount": 0,
        "attcollation": tr.get("typcollation", 0),
    }


def index_row(oid: int, rel_oid: int, keys: list[int], types: list[SqlType], *, primary: bool,
               exprs: list[str]) -> dict[str, Any]:
    n = len(keys)
    return {
        "indexrelid": oid, "indrelid": rel_oid, "indnatts": n, "indnkeyatts": n, "indisunique": primary,
        "indnullsnotdistinct": False, "indisprimary": primary, "indisexclusion": False, "indimmediate": True,
        "indisclustered": False, "indisvalid": True, "indcheckxmin": False, "indisready": True,
        "indislive": True, "indisreplident": False, "indkey": keys,
        "indcollation": [DEFAULT_COLLATION if t.name in COLLATABLE else 0 for t in types],
        "indclass": [0] * n, "indoption": [0] * n,
        "indexprs": " ".join(exprs) if exprs else None,
    }


def mz_column(obj_id: str, name: str, pos: int, t: SqlType, nullable: bool, default: str | None) -> dict[str, Any]:
    return {"id": obj_id, "name": name, "position": pos, "nullable": nullable, "type": mz_type_name(t),
            "default": default, "type_oid": t.oid, "type_mod": t.typmod}


def mz_type_name(t: SqlType) -> str:
    """Materialize's `mz_columns.type`: the type name without modifiers."""
    if t.name in ARRAY_ELEMENT and t.name.startswith("_"):
        return mz_type_name(SqlType(ARRAY_ELEMENT[t.name])) + "[]"
    return TYPE_INFOS[t.name].pg_name if t.name in TYPE_INFOS else t.name


def mz_type_category(t: dict[str, Any]) -> str:
    if t["typcategory"] == "A":
        return "array"
    if t["typtype"] == "p":
        return "pseudo"
    return "base"


def quote_ident(s: str) -> str:

    if re.fullmatch(r"[a-z_][a-z0-9_$]*", s) and s not in reserved_keywords():
        return s
    return '"' + s.replace('"', '""') + '"'


RESERVED: set[str] = set()


def reserved_keywords() -> set[str]:
    if not RESERVED:
        cols, rows = pg15_data.KEYWORDS
        RESERVED.update(r[0] for r in rows if r[1] != "U")
    return RESERVED


def plain_column(expr: str, names: Sequence[str]) -> str | None:
    """The column an index key expression names, if it is a plain column reference."""
    e = expr.strip()
    if e.startswith('"') and e.endswith('"') and e[1:-1].replace('""', '"') in names:
        return e[1:-1].replace('""', '"')
    low = e.lower()
    return low if low in names else (e if e in names else None)


def definition_of(create_sql: str) -> str:
    """The query of a CREATE [MATERIALIZED] VIEW statement (what pg_get_viewdef shows)."""

    m = re.search(r"(?is)\bas\s+(select|with|values|table|\()(.*)$", create_sql)
    if not m:
        return ""
    body = (m.group(1) + m.group(2)).strip().rstrip(";").strip()
    return body + ";"


def primary_key_of(create_sql: str, columns: Sequence[str]) -> tuple[str, ...]:
    """Primary key columns named by a CREATE TABLE statement ((): none or unparseable)."""
    import sqlglot
    from sqlglot import exp

    try:
        ast = sqlglot.parse_one(create_sql, read="postgres")
    except Exception:  # noqa: BLE001 - a statement we cannot parse has no key we can report
        return ()
    schema = ast.this if isinstance(ast, exp.Create) else None
    if not isinstance(schema, exp.Schema):
        return ()
    out: list[str] = []
    for d in schema.expressions:
        if isinstance(d, exp.ColumnDef):
            for c in d.args.get("constraints") or []:
                if isinstance(c.args.get("kind"), exp.PrimaryKeyColumnConstraint):
                    out.append(d.name)
        elif isinstance(d, exp.PrimaryKey):
            out.extend(e.name for e in d.expressions)
    return tuple(c for c in dict.fromkeys(out) if c in columns)
