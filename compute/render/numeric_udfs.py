"""Numeric division and transcendental functions computed as PostgreSQL does: Spark's decimal
division keeps 6 to 10 fractional digits and its exp/ln/power/sqrt go through doubles.

Division (and avg's sum / count), exact products, round / trunc to a computed scale, sqrt,
min_scale and trim_scale are Spark Java UDFs (compute/jvm/src, mzspark.udf.NumericUdfs:
NumericOps mirrors sql.numeric_ops value for value, checked against it and PostgreSQL 15 by
tests/integration/test_numeric_jvm_vs_postgres.py); exp / ln / log / power are an Arrow
Python UDF over sql.numeric_ops (`_udf`, which also states every function's semantics in
Python: the reference the Java code is tested against).

The result's Spark type is decimal(38, S), S fixed per call site from the operands' types
(`result_scale`): Postgres' result scale follows the values' magnitudes, Spark's is static.
A value whose digits (trailing zeros aside) do not fit decimal(38, S) fails with 0A000,
never rounded to other digits; one beyond Materialize's 39 significant digits is 22003.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, localcontext

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from compute.render.jsonb import ERR, checked
from sql import numeric_ops
from sql.errors import SqlError
from sql.types import SqlType

_UNARY: dict[str, Callable[[Decimal], Decimal]] = {
    "exp": numeric_ops.exp, "ln": numeric_ops.ln, "log10": numeric_ops.log10, "sqrt": numeric_ops.sqrt,
    "min_scale": numeric_ops.min_scale, "trim_scale": numeric_ops.trim_scale,
}
_BINARY: dict[str, Callable[[Decimal, Decimal], Decimal]] = {
    "div": numeric_ops.div, "div_avg": numeric_ops.div, "pow": numeric_ops.power, "power": numeric_ops.power,
    "log": numeric_ops.log,
    "round": lambda x, n: numeric_ops.round_to(x, int(n)),
    "trunc": lambda x, n: numeric_ops.round_to(x, int(n), truncate=True),
}



def _mul(a: Decimal, b: Decimal) -> Decimal:
    with localcontext(numeric_ops.context()):
        return a * b


# computed exactly, then rounded half away from zero to the call's scale (the digits past it
# are beyond what decimal(38, S) holds; Materialize likewise rounds to its 39 digits)
_ROUNDED: dict[str, Callable[[Decimal, Decimal], Decimal]] = {"mul": _mul}
FUNCTIONS = frozenset(_UNARY) | frozenset(_BINARY)
# computed in the JVM: function -> its Java UDF class (mz_numeric_<lowercase name> in SQL)
JVM_UDFS = {"div": "Div", "div_avg": "Div", "mul": "Mul", "round": "Round", "trunc": "Trunc", "sqrt": "Sqrt",
            "min_scale": "MinScale", "trim_scale": "TrimScale"}
_JVM_CLASS = "mzspark.udf.NumericUdfs$"
# one-argument calls computed by the UDF (round(x) / trunc(x) are Spark's own)
UNARY_FUNCTIONS = frozenset(_UNARY)
BINARY_FUNCTIONS = frozenset(_BINARY)

# integer digits kept when nothing bounds them better (the rest of 38 is the scale)
_DEFAULT_INT_DIGITS = 14
_INT_DIGITS = {"int2": 5, "int4": 10, "int8": 19, "uint8": 20, "oid": 10}


def _int_digits(t: SqlType) -> int:
    """Digits before the point a value of type `t` can have (unconstrained numeric: 28)."""
    if (ps := t.numeric_precision_scale()) is not None:
        return ps[0] - ps[1]
    return _INT_DIGITS.get(t.name, 28)


def _scale(t: SqlType) -> int:
    if (ps := t.numeric_precision_scale()) is not None:
        return ps[1]
    return 0 if t.name in _INT_DIGITS else 10


def result_scale(f: str, args: list[SqlType]) -> int:
    """S of the decimal(38, S) a call returns: room for the integer digits its operands
    allow (at most _DEFAULT_INT_DIGITS; ln/log results are below 10^8), the rest scale."""
    match f:
        case "trim_scale" | "min_scale":
            # no more fractional digits than the argument (min_scale: an integer)
            return _scale(args[0]) if f == "trim_scale" else 0
        case "div":
            ints = _int_digits(args[0]) + _scale(args[1])
        case "sqrt":
            ints = (_int_digits(args[0]) + 1) // 2
        case "ln" | "log" | "log10":
            ints = 8
        case _:
            ints = _DEFAULT_INT_DIGITS
    return 38 - max(0, min(ints, _DEFAULT_INT_DIGITS))


def fit(v: Decimal, scale: int) -> str:
    """v's text when its digits (trailing zeros aside) fit decimal(38, scale), else ERR + 0A000."""
    t = v.normalize(numeric_ops.context()) if v != 0 else Decimal(0)
    exp = t.as_tuple().exponent
    assert isinstance(exp, int)
    if -exp > scale or (t != 0 and t.adjusted() >= 38 - scale):
        return ERR + (f"[0A000] numeric result {format(t, 'f')} in a computation keeping {38 - scale} integer and"
                      f" {scale} fractional digits (Spark's decimal(38,{scale}))")
    return format(v, "f")


def _arg(v: object, keep: str) -> Decimal:
    """An argument's value; an unconstrained numeric's trailing zeros are the storage
    scale's, not the value's display scale (dropped, as Materialize prints it)."""
    d = Decimal(v)  # type: ignore[arg-type]
    if keep == "1" or d == 0:
        return d
    t = d.normalize(numeric_ops.context())
    return t.quantize(Decimal(1), context=numeric_ops.context()) if t.as_tuple().exponent > 0 else t  # type: ignore[operator]


def _udf(f: str, a: object, b: object, scale: int, keep: str) -> str | None:
    if a is None or ((f in _BINARY or f in _ROUNDED) and b is None):
        return None
    try:
        if f in _UNARY:
            v = _UNARY[f](_arg(a, keep[0]))
        elif f in _ROUNDED:
            v = numeric_ops.checked(_ROUNDED[f](_arg(a, keep[0]), _arg(b, keep[1])), scale)
        else:
            v = _BINARY[f](_arg(a, keep[0]), _arg(b, keep[1]) if f not in ("round", "trunc") else b)  # type: ignore[arg-type]
    except SqlError as e:
        return ERR + f"[{e.sqlstate}] {e.message}"
    return fit(v, scale)


def _keeps_scale(t: SqlType) -> str:
    """'1' when a value of type t carries its display scale (numeric(p, s): s)."""
    return "1" if t.numeric_precision_scale() is not None else "0"


def call(f: str, args: list[str], types: list[SqlType]) -> str:
    """The Spark SQL expression of numeric function `f` over the rendered arguments."""
    s = result_scale(f, types)
    b = args[1] if len(args) > 1 else "CAST(NULL AS DECIMAL(1,0))"
    keep = "".join(_keeps_scale(t) for t in types).ljust(2, "1")
    if (cls := JVM_UDFS.get(f)) is not None:
        operands = ", ".join(args[:2] if f not in _UNARY else args[:1])
        return checked(f"mz_numeric_{cls.lower()}({operands}, {s}, '{keep}')", f"DECIMAL(38,{s})")
    return checked(f"mz_numeric_fn('{f}', {args[0]}, {b}, {s}, '{keep}')", f"DECIMAL(38,{s})")


def python_udf(f: str) -> bool:
    """Is numeric function f computed by the Python UDF (Spark refuses one inside a lambda)?"""
    return f in FUNCTIONS and f not in JVM_UDFS


_DECIMAL = re.compile(r"DECIMAL\(\d+,\s*(\d+)\)", re.IGNORECASE)


def _spark_scale(sql: str, t: SqlType) -> int:
    """A lower bound of the scale of the Spark decimal `sql` (of type t) evaluates to: the
    canonical scale of t, or the largest DECIMAL(p, s) its text casts to (a numeric UDF's
    result is decimal(38, result_scale))."""
    return max([_scale(t), *(int(m) for m in _DECIMAL.findall(sql))])


def exact_product(a: str, b: str, at: SqlType, bt: SqlType) -> str | None:
    """numeric a * b computed exactly (rounded to decimal(38, 24)) when Spark's own product
    would keep too few integer digits, else None (Spark's * is exact here). Without
    precision loss Spark types decimal(p1, s1) * decimal(p2, s2) as decimal(38, min(s1 + s2,
    38)): two quotients or averages (decimal(38, 24) each) multiply into decimal(38, 38), and
    avg(x) * avg(y) = 3174 overflowed (22003) where PostgreSQL answers."""
    if _spark_scale(a, at) + _spark_scale(b, bt) <= 38 - _DEFAULT_INT_DIGITS:
        return None
    return call("mul", [a, b], [at, bt])


def register(spark: SparkSession) -> None:
    """The Python UDF and the Java UDFs (their jar is on the session's classpath: spark.jars,
    compute.render.jvm)."""
    spark.udf.register("mz_numeric_fn", F.udf(_udf, T.StringType(), useArrow=True))
    for cls in sorted(set(JVM_UDFS.values())):
        spark.udf.registerJavaFunction(f"mz_numeric_{cls.lower()}", _JVM_CLASS + cls, T.StringType())
