"""SQL scalar types with their Postgres identities (OIDs, names, lengths).

Python value representation used everywhere outside Spark (parameters, result rows,
constants): bool -> bool; int2/int4/int8/oid/uint8 -> int; float4/float8 -> float;
numeric -> decimal.Decimal; text/varchar/bpchar/name/jsonb -> str; date -> datetime.date;
time -> datetime.time; timestamp -> naive datetime.datetime; timestamptz -> aware
datetime.datetime (UTC); interval -> Interval; bytea -> bytes; uuid -> uuid.UUID;
NULL -> None.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Interval:
    """A Postgres interval: months, days and microseconds are independent fields."""

    months: int = 0
    days: int = 0
    micros: int = 0


@dataclass(frozen=True, slots=True)
class TypeInfo:
    name: str  # our canonical name, e.g. "int4"
    oid: int
    pg_name: str  # format_type() name, e.g. "integer"
    typlen: int  # -1 = varlena
    array_oid: int
    category: str  # pg_type.typcategory


_INFOS = [
    TypeInfo("bool", 16, "boolean", 1, 1000, "B"),
    TypeInfo("bytea", 17, "bytea", -1, 1001, "U"),
    TypeInfo("char", 18, '"char"', 1, 1002, "Z"),
    TypeInfo("name", 19, "name", 64, 1003, "S"),
    TypeInfo("int8", 20, "bigint", 8, 1016, "N"),
    TypeInfo("int2", 21, "smallint", 2, 1005, "N"),
    TypeInfo("int2vector", 22, "int2vector", -1, 1006, "A"),
    TypeInfo("int4", 23, "integer", 4, 1007, "N"),
    TypeInfo("regproc", 24, "regproc", 4, 1008, "N"),
    TypeInfo("text", 25, "text", -1, 1009, "S"),
    TypeInfo("oid", 26, "oid", 4, 1028, "N"),
    TypeInfo("oidvector", 30, "oidvector", -1, 1013, "A"),
    TypeInfo("json", 114, "json", -1, 199, "U"),
    TypeInfo("float4", 700, "real", 4, 1021, "N"),
    TypeInfo("float8", 701, "double precision", 8, 1022, "N"),
    TypeInfo("unknown", 705, "unknown", -2, 0, "X"),
    TypeInfo("bpchar", 1042, "character", -1, 1014, "S"),
    TypeInfo("varchar", 1043, "character varying", -1, 1015, "S"),
    TypeInfo("date", 1082, "date", 4, 1182, "D"),
    TypeInfo("time", 1083, "time without time zone", 8, 1183, "D"),
    TypeInfo("timestamp", 1114, "timestamp without time zone", 8, 1115, "D"),
    TypeInfo("timestamptz", 1184, "timestamp with time zone", 8, 1185, "D"),
    TypeInfo("interval", 1186, "interval", 16, 1187, "T"),
    TypeInfo("numeric", 1700, "numeric", -1, 1231, "N"),
    TypeInfo("regclass", 2205, "regclass", 4, 2210, "N"),
    TypeInfo("regtype", 2206, "regtype", 4, 2211, "N"),
    TypeInfo("uuid", 2950, "uuid", 16, 2951, "U"),
    TypeInfo("jsonb", 3802, "jsonb", -1, 3807, "U"),
    TypeInfo("regnamespace", 4089, "regnamespace", 4, 4090, "N"),
    # Materialize's unsigned 8-byte integer; the OID is Materialize's.
    TypeInfo("uint8", 16462, "uint8", 8, 16463, "N"),
    # Materialize's timestamp of its timeline (epoch milliseconds), text format decimal
    TypeInfo("mz_timestamp", 16552, "mz_timestamp", 8, 16553, "U"),
    TypeInfo("record", 2249, "record", -1, 2287, "P"),
    # Materialize's list pseudo-type (planner-internal here: window aggregates build lists)
    TypeInfo("list", 16384, "list", -1, 0, "P"),
    # Catalog-internal types (columns of pg_catalog relations, results of catalog functions).
    TypeInfo("tid", 27, "tid", 6, 1010, "U"),
    TypeInfo("xid", 28, "xid", 4, 1011, "U"),
    TypeInfo("cid", 29, "cid", 4, 1012, "U"),
    TypeInfo("pg_node_tree", 194, "pg_node_tree", -1, 0, "Z"),
    TypeInfo("inet", 869, "inet", -1, 1041, "I"),
    TypeInfo("aclitem", 1033, "aclitem", 12, 1034, "U"),
    TypeInfo("regprocedure", 2202, "regprocedure", 4, 2207, "N"),
    TypeInfo("regoper", 2203, "regoper", 4, 2208, "N"),
    TypeInfo("regoperator", 2204, "regoperator", 4, 2209, "N"),
    TypeInfo("cstring", 2275, "cstring", -2, 1263, "P"),
    TypeInfo("void", 2278, "void", 4, 0, "P"),
    TypeInfo("pg_lsn", 3220, "pg_lsn", 8, 3221, "U"),
    TypeInfo("regconfig", 3734, "regconfig", 4, 3735, "N"),
    TypeInfo("regdictionary", 3769, "regdictionary", 4, 3770, "N"),
    TypeInfo("regrole", 4096, "regrole", 4, 4097, "N"),
    TypeInfo("regcollation", 4191, "regcollation", 4, 4192, "N"),
    TypeInfo("xid8", 5069, "xid8", 8, 271, "U"),
]

# Array types: "_<element>" (Postgres' own naming), category "A", element in ARRAY_ELEMENT.
# int2vector and oidvector are arrays too (0-based subscripts, space-separated text form).
ARRAY_ELEMENT: dict[str, str] = {"int2vector": "int2", "oidvector": "oid"}
for _t in list(_INFOS):
    if _t.array_oid and _t.category not in ("P",) and _t.name not in ("int2vector", "oidvector"):
        _INFOS.append(TypeInfo("_" + _t.name, _t.array_oid, _t.pg_name + "[]", -1, 0, "A"))
        ARRAY_ELEMENT["_" + _t.name] = _t.name
for _n, _oid in (("int2vector", 1006), ("oidvector", 1013)):
    _INFOS.append(TypeInfo("_" + _n, _oid, _n + "[]", -1, 0, "A"))
    ARRAY_ELEMENT["_" + _n] = _n

TYPE_INFOS: dict[str, TypeInfo] = {t.name: t for t in _INFOS}
TYPE_BY_OID: dict[int, TypeInfo] = {t.oid: t for t in _INFOS}

# Spellings accepted in DDL and casts -> canonical name.
TYPE_ALIASES: dict[str, str] = {
    "bool": "bool", "boolean": "bool",
    "int2": "int2", "smallint": "int2",
    "int4": "int4", "int": "int4", "integer": "int4",
    "int8": "int8", "bigint": "int8",
    "float4": "float4", "real": "float4",
    "float8": "float8", "double precision": "float8", "double": "float8", "float": "float8",
    "numeric": "numeric", "decimal": "numeric",
    "text": "text", "string": "text",
    "varchar": "varchar", "character varying": "varchar",
    "bpchar": "bpchar", "char": "bpchar", "character": "bpchar",
    "date": "date",
    "time": "time", "time without time zone": "time",
    "timestamp": "timestamp", "timestamp without time zone": "timestamp",
    "timestamptz": "timestamptz", "timestamp with time zone": "timestamptz",
    "interval": "interval",
    "bytea": "bytea",
    "jsonb": "jsonb", "json": "jsonb",
    "uuid": "uuid",
    "oid": "oid",
    "name": "name",
    "uint8": "uint8",
    "regclass": "regclass", "regtype": "regtype",
    "mz_timestamp": "mz_timestamp",
}


@dataclass(frozen=True, slots=True)
class SqlType:
    """A scalar type. `typmod` follows Postgres: -1 = none; varchar(n)/bpchar(n) -> n + 4;
    numeric(p, s) -> ((p << 16) | s) + 4. `fields` structures the planner-internal composite
    types: a `record`'s field types, a `list`'s (single) element type; () otherwise."""

    name: str
    typmod: int = -1
    fields: tuple[SqlType, ...] = ()

    @property
    def info(self) -> TypeInfo:
        return TYPE_INFOS[self.name]

    @property
    def oid(self) -> int:
        return self.info.oid

    @property
    def is_numeric(self) -> bool:
        return self.name in NUMERIC_TYPES

    @property
    def is_string(self) -> bool:
        return self.name in STRING_TYPES

    def numeric_precision_scale(self) -> tuple[int, int] | None:
        if self.name != "numeric" or self.typmod < 4:
            return None
        m = self.typmod - 4
        return (m >> 16) & 0xFFFF, m & 0xFFFF

    def decimal_precision_scale(self) -> tuple[int, int]:
        """The (precision, scale) of the Spark / Arrow decimal holding this numeric's values:
        numeric(p, s) -> decimal(min(max(p, s), 38), s) (a value beyond 38 digits is 22003),
        unconstrained -> decimal(38, 10)."""
        ps = self.numeric_precision_scale()
        if ps is None:
            return DECIMAL_MAX_DIGITS, 10
        p, s = ps
        return max(1, min(max(p, s), DECIMAL_MAX_DIGITS)), min(s, DECIMAL_MAX_DIGITS)

    def char_length(self) -> int | None:
        if self.name in ("varchar", "bpchar") and self.typmod >= 4:
            return self.typmod - 4
        return None

    @property
    def element(self) -> SqlType | None:
        """The element type of an array type (int2vector/oidvector included), else None."""
        e = ARRAY_ELEMENT.get(self.name)
        return SqlType(e) if e is not None else None

    def pg_format(self) -> str:
        """format_type(oid, typmod)."""
        base = self.info.pg_name
        if self.name == "numeric" and (ps := self.numeric_precision_scale()):
            return f"numeric({ps[0]},{ps[1]})"
        if self.name in ("varchar", "bpchar") and (n := self.char_length()) is not None:
            return f"{base}({n})"
        if self.typmod >= 0 and self.name in ("timestamp", "timestamptz", "time"):
            word, _, rest = base.partition(" ")
            return f"{word}({self.typmod}) {rest}"
        if self.typmod >= 0 and self.name == "interval":
            from sql.interval_typmod import format_typmod

            return base + format_typmod(self.typmod)
        return base

    def seconds_precision(self) -> int | None:
        """The fractional-seconds precision of timestamp(p) / time(p) / interval(p), else None."""
        if self.typmod < 0:
            return None
        if self.name in ("timestamp", "timestamptz", "time"):
            return self.typmod
        if self.name == "interval":
            return None if self.typmod & 0xFFFF == 0xFFFF else self.typmod & 0xFFFF
        return None

    def __str__(self) -> str:
        return self.pg_format()


def record_type(fields: tuple[SqlType, ...]) -> SqlType:
    """The anonymous record type `row(f0, f1, ...)` with the given field types."""
    return SqlType("record", -1, tuple(fields))


def list_type(element: SqlType) -> SqlType:
    """Materialize's `element list` type."""
    return SqlType("list", -1, (element,))


# numeric(p, s): p up to PostgreSQL's 1000; the values are decimals of at most 38 digits
NUMERIC_MAX_PRECISION = 1000
DECIMAL_MAX_DIGITS = 38


def numeric_typmod(precision: int, scale: int) -> int:
    return ((precision << 16) | scale) + 4


BOOL = SqlType("bool")
INT2 = SqlType("int2")
INT4 = SqlType("int4")
INT8 = SqlType("int8")
FLOAT4 = SqlType("float4")
FLOAT8 = SqlType("float8")
NUMERIC = SqlType("numeric")
TEXT = SqlType("text")
VARCHAR = SqlType("varchar")
BPCHAR = SqlType("bpchar")
DATE = SqlType("date")
TIME = SqlType("time")
TIMESTAMP = SqlType("timestamp")
TIMESTAMPTZ = SqlType("timestamptz")
INTERVAL = SqlType("interval")
BYTEA = SqlType("bytea")
JSONB = SqlType("jsonb")
UUID = SqlType("uuid")
OID = SqlType("oid")
UNKNOWN = SqlType("unknown")
UINT8 = SqlType("uint8")
MZ_TIMESTAMP = SqlType("mz_timestamp")

NUMERIC_TYPES = frozenset({"int2", "int4", "int8", "float4", "float8", "numeric", "oid", "uint8"})
STRING_TYPES = frozenset({"text", "varchar", "bpchar", "name"})


def type_from_oid(oid: int) -> SqlType:
    info = TYPE_BY_OID.get(oid)
    return SqlType(info.name) if info else UNKNOWN
