"""Names read off the AST: the SqlType of a type name and the output column name of a select item."""

from __future__ import annotations

from sqlglot import exp

from sql import datetime_typmods, func
from sql.errors import (
    SqlError,
    unsupported,
)
from sql.func_names import pg_function_name
from sql.scope import BoundQuery, CatalogReader, ItemRef, Scope, ScopeColumn  # noqa: F401 (re-exported)
from sql.types import (
    DECIMAL_MAX_DIGITS,
    NUMERIC_MAX_PRECISION,
    SqlType,
    numeric_typmod,
)

_DTYPES: dict[str, str] = {
    "INT": "int4", "BIGINT": "int8", "SMALLINT": "int2", "FLOAT": "float4", "DOUBLE": "float8",
    "DECIMAL": "numeric", "TEXT": "text", "NAME": "name", "VARCHAR": "varchar", "CHAR": "bpchar", "NCHAR": "bpchar",
    "DATE": "date", "TIME": "time", "TIMESTAMP": "timestamp", "TIMESTAMPTZ": "timestamptz",
    "INTERVAL": "interval", "BOOLEAN": "bool", "VARBINARY": "bytea", "BINARY": "bytea",
    "JSONB": "jsonb", "JSON": "jsonb", "UUID": "uuid", "UINT": "uint8",
}


def sql_type_of(dt: exp.DataType) -> SqlType:
    """sqlglot DataType -> SqlType (with typmods)."""
    if dt.this == exp.DataType.Type.ARRAY:
        if len(dt.expressions) != 1 or not isinstance(dt.expressions[0], exp.DataType):
            raise unsupported(f"type {dt.sql(dialect='postgres')}")
        return func.array_of(sql_type_of(dt.expressions[0]))
    if isinstance(dt.this, exp.Interval):  # INTERVAL DAY TO SECOND ...
        return SqlType("interval", datetime_typmods.qualifier_typmod(dt.this.args.get("unit")))
    if isinstance(dt, exp.ObjectIdentifier):  # sqlglot parses regclass, regtype, ... this way
        from sql.types import TYPE_ALIASES

        oid_name = TYPE_ALIASES.get(str(dt.this).lower())
        if oid_name:
            return SqlType(oid_name)
        raise SqlError("42704", f'type "{str(dt.this).lower()}" does not exist')
    if dt.this == exp.DataType.Type.USERDEFINED:
        raw = dt.args.get("kind") or dt.sql(dialect="postgres")
        from sql.types import TYPE_ALIASES

        name = TYPE_ALIASES.get(str(raw).lower())
        if name:
            return SqlType(name)
        raise SqlError("42704", f'type "{raw}" does not exist')
    name = _DTYPES.get(dt.this.name)
    if name is None:
        raise unsupported(f"type {dt.sql(dialect='postgres')}")
    params = [int(p.this.this) if isinstance(p, exp.DataTypeParam) and isinstance(p.this, exp.Literal) else None for p in dt.expressions]
    if name == "numeric" and params:
        p = params[0] if params[0] is not None else 38
        s = params[1] if len(params) > 1 and params[1] is not None else 0
        if not 1 <= p <= NUMERIC_MAX_PRECISION:
            raise SqlError("22023", f"NUMERIC precision {p} must be between 1 and {NUMERIC_MAX_PRECISION}")
        if s > DECIMAL_MAX_DIGITS:
            # values are Spark decimals of at most 38 digits: more fractional digits would be
            # rounded away
            raise unsupported(f"NUMERIC scale {s} (more than {DECIMAL_MAX_DIGITS} fractional digits)")
        return SqlType("numeric", numeric_typmod(p, s))
    if name in ("varchar", "bpchar"):
        if params and params[0] is not None:
            return SqlType(name, params[0] + 4)
        return SqlType(name, 5 if name == "bpchar" else -1)
    if name in ("timestamp", "timestamptz", "time", "interval") and params and params[0] is not None:
        return SqlType(name, datetime_typmods.precision_typmod(name, params[0]))
    return SqlType(name)


def _output_name(e: exp.Expression) -> str:
    """The output column name of a select item: its alias, else PostgreSQL's FigureColname."""
    if isinstance(e, exp.Alias):
        return e.alias
    return _figure_colname(e)[0] or "?column?"


# strengths of a figured name (Postgres' FigureColnameInternal): a column or function name
# beats a type or CASE name, which beats none
_STRONG, _WEAK, _NONE = 2, 1, 0


def _figure_colname(e: exp.Expression) -> tuple[str | None, int]:
    """(name, strength) of an expression, as Postgres names an unaliased select item: columns,
    calls, EXISTS, ARRAY, ROW and scalar subqueries by their own names; a cast by its argument's
    name if that is strong, else by the type; CASE by its ELSE if strong, else "case";
    operators not at all (`?column?`)."""
    match e:
        case exp.Column(this=exp.Star()) if e.table:
            return e.table, _STRONG  # t.* names its item, as in `(t.*)::text`
        case exp.Column():
            return e.name, _STRONG
        case exp.Subquery() | exp.Select() | exp.Union() | exp.Except() | exp.Intersect() | exp.Values():
            return _query_output_name(e), _STRONG
        case exp.Exists():
            return "exists", _STRONG
        case exp.AtTimeZone():  # a call of timezone(zone, x)
            return "timezone", _STRONG
        case exp.Cast():
            name, strength = _figure_colname(e.this)
            return (name, strength) if strength == _STRONG else (_cast_type_name(e.args["to"]), _WEAK)
        case exp.Interval():  # INTERVAL '...' is a cast of a literal
            return "interval", _WEAK
        case exp.Paren() | exp.Filter() | exp.WithinGroup() | exp.Collate() | exp.Bracket():
            return _figure_colname(e.this)
        case exp.Window():
            return _figure_colname(e.this)
        case exp.Case():
            default = e.args.get("default")
            name, strength = _figure_colname(default) if default is not None else (None, _NONE)
            return (name, strength) if strength == _STRONG else ("case", _WEAK)
        case exp.Array():
            return "array", _STRONG
        case exp.Coalesce():
            return "coalesce", _STRONG
        case exp.Nullif():
            return "nullif", _STRONG
        case exp.Anonymous():
            return pg_function_name(e), _STRONG
        case exp.Func() if _is_written_call(e):
            return _SQL_VALUE_FUNCTION_NAMES.get(type(e)) or pg_function_name(e), _STRONG
    return None, _NONE


def _is_written_call(e: exp.Func) -> bool:
    """A typed node the user wrote as a call (an aggregate, a special-syntax form, an SQL value
    function), not an operator that sqlglot models as a function (`^`, `->`, `~`, `@>`, ...)."""
    from sql.func_names import SPECIAL_SYNTAX_NAMES
    from sql.parse import ORIGINAL_NAME_KEY

    return ORIGINAL_NAME_KEY in e.meta or type(e) in SPECIAL_SYNTAX_NAMES or type(e) in _SQL_VALUE_FUNCTION_NAMES


def _cast_type_name(dt: exp.DataType) -> str:
    """The type name Postgres gives a cast's column: the (element) type's own name."""
    if dt.this == exp.DataType.Type.JSON:
        return "json"
    t = sql_type_of(dt)
    while t.element is not None and t.name.startswith("_"):
        t = t.element
    return t.name


def _query_output_name(q: exp.Expression) -> str:
    """A scalar subquery is named by its query's first output column (Postgres)."""
    while isinstance(q, (exp.Subquery, exp.Paren)):
        q = q.this
    if isinstance(q, (exp.Union, exp.Except, exp.Intersect)):
        return _query_output_name(q.this)
    if isinstance(q, exp.Values):
        return "column1"
    if _star_over_values(q):
        return "column1"
    if isinstance(q, exp.Select) and q.expressions and not isinstance(q.expressions[0], exp.Star) \
            and not (isinstance(q.expressions[0], exp.Column) and isinstance(q.expressions[0].this, exp.Star)):
        return _output_name(q.expressions[0])
    return "?column?"


def _star_over_values(q: exp.Expression) -> bool:
    """`SELECT * FROM (VALUES ..)` without column aliases (as `WITH .. VALUES ..` is read)."""
    if not (isinstance(q, exp.Select) and len(q.expressions) == 1 and isinstance(q.expressions[0], exp.Star)):
        return False
    src = q.args.get("from_") or q.args.get("from")
    sub = src.this if src is not None else None
    if q.args.get("joins") or not isinstance(sub, exp.Subquery) or not isinstance(sub.this, exp.Values):
        return False
    alias = sub.args.get("alias")
    return alias is None or not alias.columns


# SQL value functions (no parentheses) are named by their keyword, as Postgres 10+ does
_SQL_VALUE_FUNCTION_NAMES: dict[type, str] = {
    exp.CurrentDate: "current_date", exp.CurrentTimestamp: "current_timestamp", exp.CurrentTime: "current_time",
    exp.Localtimestamp: "localtimestamp", exp.Localtime: "localtime", exp.SessionUser: "session_user",
    exp.CurrentUser: "current_user", exp.CurrentSchema: "current_schema", exp.CurrentCatalog: "current_catalog",
}
