"""Spark SQL text building blocks: type names, literals, casts, raise_error, let-bindings."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from functools import lru_cache

from compute.render.types import spark_type, to_spark_value
from sql import numeric_ops
from sql.errors import unsupported
from sql.types import SqlType

INTS = ("int2", "int4", "int8")
# comparison functions (sql.func) and their Spark SQL operators
COMPARISONS = {"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


@lru_cache(maxsize=512)
def sql_type(t: SqlType) -> str:
    """The Spark SQL type name of a SqlType (e.g. `int`, `decimal(38,10)`, `struct<...>`)."""
    return spark_type(t).simpleString()


def quote(s: str) -> str:
    """A Spark SQL string literal (backslash escapes are interpreted by Spark's parser)."""
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def cast(x: str, t: SqlType | str) -> str:
    return f"CAST({x} AS {t if isinstance(t, str) else sql_type(t)})"


def lit(v: object, t: SqlType) -> str:
    """A typed literal."""
    if v is None:
        # an unconstrained numeric NULL has no digits: decimal(1,0) widens to the other side's
        # type (was decimal(38,10): Spark's UNION / CASE widening of a decimal(38,24) numeric
        # statistic with it kept 28 integer digits and cut the scale to 10)
        if t.name == "numeric" and t.numeric_precision_scale() is None:
            return cast("NULL", "DECIMAL(1,0)")
        return cast("NULL", t)
    n = t.name
    if (e := t.element) is not None and n.startswith("_"):
        return cast(f"array({', '.join(lit(x, e) for x in v)})", t)
    if n == "interval":
        m, d, us = to_spark_value(v, t)
        return f"named_struct('months', CAST({int(m)} AS INT), 'days', CAST({int(d)} AS INT), 'micros', CAST({int(us)} AS BIGINT))"
    if n == "bool":
        return "TRUE" if v else "FALSE"
    sv = to_spark_value(v, t)
    if n in INTS or n in ("oid", "uint8", "mz_timestamp", "time"):
        return cast(str(int(sv)), t)
    if n in ("float4", "float8"):
        return cast(quote(repr(float(sv))), t)
    if n == "numeric":
        return _numeric_lit(Decimal(sv), t)
    if n == "date":
        return f"DATE '{sv.isoformat()}'"
    if n == "timestamp":
        return f"TIMESTAMP_NTZ '{sv.isoformat(sep=' ')}'"
    if n == "timestamptz":
        assert isinstance(sv, dt.datetime)
        return f"TIMESTAMP_LTZ '{sv.astimezone(dt.UTC).replace(tzinfo=None).isoformat(sep=' ')}'"
    if n == "bytea":
        return f"X'{bytes(sv).hex()}'"
    return cast(quote(str(sv)), t)


def _numeric_lit(d: Decimal, t: SqlType) -> str:
    """A numeric literal of exactly its value: typed numeric(p, s) as declared; an
    unconstrained one as decimal(its digits, its scale) (was decimal(38,10), rounding
    0.000000000001 to 0), 0A000 beyond Spark's 38 digits."""
    if t.numeric_precision_scale() is not None:
        return cast(quote(str(d)), t)
    if d != 0 and d.adjusted() >= 38:
        raise unsupported(f"numeric value {d} in a computation (more than 38 digits)")
    if d.as_tuple().exponent > 0:  # type: ignore[operator]
        d = d.quantize(Decimal(1), context=numeric_ops.context())
    digits, scale = len(d.as_tuple().digits), numeric_ops.dscale(d)
    if max(digits, scale) > 38:  # trailing fractional zeros do not count
        d = d.normalize(numeric_ops.context())
        if d.as_tuple().exponent > 0:  # type: ignore[operator]
            d = d.quantize(Decimal(1), context=numeric_ops.context())
        digits, scale = len(d.as_tuple().digits), numeric_ops.dscale(d)
        if max(digits, scale) > 38:
            raise unsupported(f"numeric value {d:f} in a computation (more than 38 digits)")
    return cast(quote(format(d, "f")), f"DECIMAL({max(digits, scale, 1)},{scale})")


def raise_error(msg: str, t: SqlType | str = "string") -> str:
    """An expression failing the query with `msg` (a `[SQLSTATE] ` prefix sets the state)."""
    return cast(f"raise_error({quote(msg)})", t)


def let_bind(value: str, body) -> str:
    """`body(v)` with v bound to `value` once (Spark SQL has no LET: a one-element transform)."""
    v = fresh_var()
    return f"element_at(transform(array({value}), {v} -> {body(v)}), 1)"


_vars = itertools.count()


def fresh_var() -> str:
    """A fresh lambda variable name (nested lambdas never shadow each other)."""
    return f"_v{next(_vars) % 1_000_000}"
