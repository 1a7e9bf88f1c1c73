"""sqlglot building blocks of the catalog rewrite: parsing, cast types, expression builders, scopes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from catalog.system.relations import FN, SysRelation, duck_type
from sql.errors import SYNTAX_ERROR, UNDEFINED_OBJECT, SqlError
from sql.parse import quote_keyword_aliases
from sql.types import ARRAY_ELEMENT, TYPE_ALIASES, TYPE_INFOS, SqlType

SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "mz_catalog", "mz_internal", "mz_introspection")
TEXT = SqlType("text")
NAME = SqlType("name")
BOOL = SqlType("bool")
INT4 = SqlType("int4")
INT8 = SqlType("int8")
OID = SqlType("oid")


# ---- parsing -----------------------------------------------------------------------------------

_ARRAY_CAST = re.compile(r"::\s*((?:pg_catalog\s*\.\s*)?(?:\"char\"|[A-Za-z_][A-Za-z0-9_]*))\s*\[\s*\]")


def parse_pg(sql: str) -> exp.Expression:
    """Parse one Postgres statement with sqlglot (a few casts sqlglot cannot parse, like
    `$1::oid[]`, are spelled as the array type's name first)."""
    try:
        return _parse(sql)
    except (ParseError, TokenError):
        fixed = quote_keyword_aliases(_ARRAY_CAST.sub(lambda m: "::" + _array_type_name(m.group(1)), sql))
        if fixed == sql:
            raise
        return _parse(fixed)


def _array_type_name(t: str) -> str:
    base = t.split(".")[-1].strip().strip('"')
    canon = TYPE_ALIASES.get(base.lower(), base.lower())
    return f'"_{canon}"'


def _parse(sql: str) -> exp.Expression:
    stmts = [s for s in sqlglot.parse(sql, read="postgres") if s is not None]
    if len(stmts) != 1:
        raise SqlError(SYNTAX_ERROR, "syntax error: expected one statement")
    # unquoted identifiers fold to lower case, as PostgreSQL folds them (`AT.attname` = `at.attname`)
    return normalize_identifiers(stmts[0], dialect="postgres")


# ---- type helpers -------------------------------------------------------------------------------------

_DOMAIN_TYPES = {"sql_identifier": "name", "character_data": "varchar", "cardinal_number": "int4",
                 "yes_or_no": "varchar", "time_stamp": "timestamptz"}
_CATALOG_CAST_TYPES = {"regclass", "regtype", "regproc", "regprocedure", "regnamespace", "regrole", "oid"}


def _type_key(dt: exp.Expression) -> str:
    """Lower-case type name of a cast target without schema, modifiers or array brackets."""
    if isinstance(dt, exp.ObjectIdentifier) or (isinstance(dt, exp.DataType) and isinstance(dt.this, str)):
        return str(dt.this).lower()
    if isinstance(dt, exp.DataType):
        if dt.this == exp.DataType.Type.USERDEFINED:
            kind = dt.args.get("kind")
            name = kind.name if isinstance(kind, (exp.Identifier, exp.Dot)) else str(kind)
            if isinstance(kind, exp.Dot):
                name = kind.expression.name
            return name.lower() if not (isinstance(kind, exp.Identifier) and kind.quoted) else name
        return dt.this.value.lower()
    return dt.sql().lower()


_SQLGLOT_TYPES = {
    "int": "int4", "smallint": "int2", "bigint": "int8", "boolean": "bool", "float": "float4",
    "double": "float8", "decimal": "numeric", "text": "text", "varchar": "varchar", "char": "bpchar",
    "nchar": "bpchar", "nvarchar": "varchar", "name": "name", "date": "date", "time": "time",
    "timestamp": "timestamp", "timestamptz": "timestamptz", "interval": "interval", "json": "json",
    "jsonb": "jsonb", "uuid": "uuid", "varbinary": "bytea", "binary": "bytea", "blob": "bytea",
    "bytea": "bytea", "tinyint": "int2", "bit": "bool", "money": "numeric", "inet": "inet",
    "ubigint": "uint8", "xid": "xid",
}


def pg_type_of_cast(dt: exp.Expression) -> SqlType:
    """The Postgres type a cast target names (42704 if unknown)."""
    if isinstance(dt, exp.DataType) and dt.this == exp.DataType.Type.ARRAY:
        inner = dt.expressions[0] if dt.expressions else None
        elem = pg_type_of_cast(inner) if inner is not None else TEXT
        name = "_" + elem.name
        if name not in ARRAY_ELEMENT:
            raise SqlError(UNDEFINED_OBJECT, f'type "{elem.name}[]" does not exist')
        return SqlType(name)
    key = _type_key(dt)
    key = _DOMAIN_TYPES.get(key, key)
    name = _SQLGLOT_TYPES.get(key) or TYPE_ALIASES.get(key) or (key if key in TYPE_INFOS else None)
    if key == "char" and isinstance(dt, exp.DataType) and dt.this == exp.DataType.Type.USERDEFINED:
        name = "char"  # "char" (quoted): the one-byte type
    if name is None:
        raise SqlError(UNDEFINED_OBJECT, f'type "{key}" does not exist')
    typmod = -1
    if isinstance(dt, exp.DataType) and dt.expressions:
        nums = [int(p.this.this) if isinstance(p, exp.DataTypeParam) and isinstance(p.this, exp.Literal) else None
                for p in dt.expressions]
        if name in ("varchar", "bpchar") and nums and nums[0] is not None:
            typmod = nums[0] + 4
        elif name == "numeric" and nums and nums[0] is not None:
            typmod = ((nums[0] << 16) | (nums[1] if len(nums) > 1 and nums[1] is not None else 0)) + 4
    return SqlType(name, typmod)


def _duck_dt(t: SqlType) -> exp.DataType:
    return exp.DataType.build(duck_type(t), dialect="duckdb")


def _cast(e: exp.Expression, t: SqlType) -> exp.Expression:
    return exp.Cast(this=e, to=_duck_dt(t))


def _fn(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=f"{FN}.{name}", expressions=list(args))


def _lit(v: Any) -> exp.Expression:
    if v is None:
        return exp.Null()
    if isinstance(v, bool):
        return exp.Boolean(this=v)
    if isinstance(v, (int, float)):
        return exp.Literal.number(v)
    if isinstance(v, (list, tuple)):
        return exp.Array(expressions=[_lit(x) for x in v])
    return exp.Literal.string(str(v))


def _typed_lit(v: Any, t: SqlType) -> exp.Expression:
    return _cast(_lit(v), t)


# ---- scopes ----------------------------------------------------------------------------------------

@dataclass
class Source:
    alias: str
    columns: list[tuple[str, SqlType | None]]
    relation: SysRelation | None = None  # a system relation (it has system columns)


@dataclass
class Scope:
    parent: Scope | None = None
    sources: list[Source] = field(default_factory=list)
    ctes: dict[str, list[tuple[str, SqlType | None]]] = field(default_factory=dict)
    aliases: dict[str, SqlType | None] = field(default_factory=dict)  # output aliases (ORDER BY)

    def cte(self, name: str) -> list[tuple[str, SqlType | None]] | None:
        s: Scope | None = self
        while s is not None:
            if name in s.ctes:
                return s.ctes[name]
            s = s.parent
        return None

    def column(self, table: str | None, name: str) -> tuple[bool, SqlType | None]:
        found, t, _alias = self.resolve(table, name)
        return found, t

    def resolve(self, table: str | None, name: str) -> tuple[bool, SqlType | None, str | None]:
        """(found, type, alias of the source it comes from; None for an output alias)."""
        s: Scope | None = self
        while s is not None:
            for src in s.sources:
                if table is not None and src.alias != table:
                    continue
                for c, t in src.columns:
                    if c == name:
                        return True, t, src.alias
                if table is not None:
                    return False, None, None
            if table is None and name in s.aliases:
                return True, s.aliases[name], None
            s = s.parent
        return False, None, None

    def has_source(self, alias: str) -> Source | None:
        s: Scope | None = self
        while s is not None:
            for src in s.sources:
                if src.alias == alias:
                    return src
            s = s.parent
        return None


# ---- placeholders -------------------------------------------------------------------------------

class _Param(exp.Expression):
    """A `$n` placeholder whose type is decided once the whole query has been seen."""

    arg_types = {"this": True}


def _placeholder_index(node: exp.Expression) -> int | None:
    if isinstance(node, exp.Parameter):
        inner = node.this
        if isinstance(inner, exp.Literal) and not inner.is_string:
            return int(inner.this)
        if isinstance(inner, exp.Var) and inner.name.isdigit():
            return int(inner.name)
    if isinstance(node, exp.Placeholder) and node.name and node.name.isdigit():
        return int(node.name)
    return None


# ---- expression helpers --------------------------------------------------------------------------

def _coerce(n: exp.Expression, other: SqlType | None) -> exp.Expression:
    """Comparing a string literal (Postgres' unknown) with a typed value: type the literal."""
    if other is not None and isinstance(n, exp.Literal) and n.is_string:
        if other.name in ("bool",):
            return _lit(n.this.strip().lower() in ("t", "true", "yes", "on", "1"))
        if other.name in ARRAY_ELEMENT:
            return _typed_lit(_array_literal(n.this), other)
        return _cast(n, other)
    return n


def _array_literal(text: str) -> list[Any]:
    """Elements of a Postgres array literal ('{a,b}'), as text."""
    from sql.text_input import parse_text

    return parse_text(text, SqlType("_text"))


def _split_ident(s: str) -> list[str]:
    parts = []
    for m in re.finditer(r'"((?:[^"]|"")*)"|([^."]+)', s):
        if m.group(1) is not None:
            parts.append(m.group(1).replace('""', '"'))
        else:
            parts.append(m.group(2).strip().lower())
    return parts


def _rename(cols: list[tuple[str, SqlType | None]], names: list[str]) -> list[tuple[str, SqlType | None]]:
    if not names:
        return list(cols)
    return [(names[i] if i < len(names) else c, t) for i, (c, t) in enumerate(cols)]


def _func_args(node: exp.Expression) -> list[exp.Expression]:
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    out = []
    for key in node.arg_types:
        v = node.args.get(key)
        if isinstance(v, exp.Expression):
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, exp.Expression))
    return out


def _func_display(node: exp.Expression) -> str:
    name = node.name if isinstance(node, exp.Anonymous) else (node.sql_name() if hasattr(node, "sql_name") else node.key)
    n = len(_func_args(node))
    return f"{name.lower()}({', '.join(['unknown'] * n)})"


# ---- column names ---------------------------------------------------------------------------------

_TYPED_NAMES: dict[type, str] = {}
for _cls_name, _name in {"Count": "count", "Sum": "sum", "Min": "min", "Max": "max", "Avg": "avg",
                         "ArrayAgg": "array_agg", "GroupConcat": "string_agg", "Coalesce": "coalesce",
                         "Nullif": "nullif", "Greatest": "greatest", "Least": "least", "Lower": "lower",
                         "Upper": "upper", "Length": "length", "Substring": "substring", "Trim": "btrim",
                         "Concat": "concat", "LogicalAnd": "bool_and", "LogicalOr": "bool_or",
                         "RowNumber": "row_number", "CurrentTimestamp": "now", "ArraySize": "array_length",
                         "CurrentSchema": "current_schema", "CurrentUser": "current_user",
                         "ArrayToString": "array_to_string", "StringToArray": "string_to_array",
                         "Explode": "unnest", "ExplodingGenerateSeries": "generate_series",
                         "GenerateSeries": "generate_series", "StrPosition": "strpos", "Left": "left",
                         "Right": "right", "SplitPart": "split_part", "Replace": "replace",
                         "RegexpReplace": "regexp_replace", "CurrentDatabase": "current_database",
                         "CurrentSchemas": "current_schemas", "Version": "version", "CurrentVersion": "version",
                         "SessionUser": "session_user", "CurrentCatalog": "current_catalog"}.items():
    _cls = getattr(exp, _cls_name, None)
    if _cls is not None:
        _TYPED_NAMES[_cls] = _name


def _figure_colname(node: exp.Expression) -> str:
    """The column name Postgres gives an unaliased select-list expression (FigureColname)."""
    if isinstance(node, exp.Column):
        return node.name
    if isinstance(node, exp.Dot):
        if isinstance(node.expression, exp.Func):
            return _figure_colname(node.expression)
        return node.expression.name if isinstance(node.expression, exp.Identifier) else "?column?"
    if isinstance(node, exp.Cast):
        inner = _figure_colname(node.this)
        if inner != "?column?":
            return inner
        key = _type_key(node.to)
        try:
            t = pg_type_of_cast(node.to)
        except SqlError:
            return key
        return {"int4": "int4", "int8": "int8", "bool": "bool", "float8": "float8"}.get(t.name, t.name if not t.name.startswith("_") else key)
    if isinstance(node, exp.Paren):
        return _figure_colname(node.this)
    if isinstance(node, (exp.Collate,)):
        return _figure_colname(node.this)
    if isinstance(node, exp.Case):
        return "case"
    if isinstance(node, exp.Exists):
        return "exists"
    if isinstance(node, exp.Array):
        return "array"
    if isinstance(node, exp.Subquery):
        sel = node.this
        if isinstance(sel, exp.Select) and sel.expressions:
            first = sel.expressions[0]
            return first.alias if isinstance(first, exp.Alias) else _figure_colname(first)
        return "?column?"
    if isinstance(node, (exp.Window,)):
        return _figure_colname(node.this)
    if isinstance(node, exp.Filter):
        return _figure_colname(node.this)
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    if isinstance(node, (exp.CurrentUser,)):
        return "current_user"
    if isinstance(node, exp.Func) and not isinstance(node, (exp.Binary, exp.Unary, exp.Connector)):
        name = _TYPED_NAMES.get(type(node))
        if name:
            return name
        sql_names = getattr(type(node), "_sql_names", None)
        if sql_names:
            return sql_names[0].lower()
        return type(node).__name__.lower()
    if isinstance(node, (exp.Var, exp.Identifier)):
        return node.name.lower()
    return "?column?"
