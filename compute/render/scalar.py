"""MIR scalar -> Spark Column, with Postgres semantics where Spark's differ."""

from __future__ import annotations

from decimal import Decimal
from typing import assert_never

from pyspark.sql import Column as SCol
from pyspark.sql import functions as F

from compute.render.types import spark_type, to_spark_value
from sql.errors import unsupported
from sql.scalar import CallBinary, CallUnary, CallVariadic, Column, If, Literal, Scalar
from sql.types import SqlType

_INTS = ("int2", "int4", "int8")


def lit(v: object, t: SqlType) -> SCol:
    st = spark_type(t)
    if v is None:
        return F.lit(None).cast(st)
    if t.name == "interval":
        sv = to_spark_value(v, t)
        return F.struct(F.lit(sv[0]).cast("int").alias("months"), F.lit(sv[1]).cast("int").alias("days"), F.lit(sv[2]).cast("long").alias("micros"))
    if isinstance(v, Decimal):
        return F.lit(v).cast(st)
    return F.lit(to_spark_value(v, t)).cast(st)


def render_scalar(e: Scalar, cols: list[SCol]) -> SCol:
    match e:
        case Column(index=i):
            return cols[i]
        case Literal(value=v, typ=t):
            return lit(v, t)
        case CallUnary(func=f, expr=x, typ=t):
            return _unary(f, render_scalar(x, cols), x.typ, t)
        case CallBinary(func=f, expr1=a, expr2=b, typ=t):
            return _binary(f, render_scalar(a, cols), render_scalar(b, cols), a.typ, b.typ, t)
        case CallVariadic(func=f, exprs=xs, typ=t):
            return _variadic(f, [render_scalar(x, cols) for x in xs], [x.typ for x in xs], t)
        case If(cond=c, then=a, els=b):
            return F.when(render_scalar(c, cols), render_scalar(a, cols)).otherwise(render_scalar(b, cols))
        case _:
            assert_never(e)


def _cast(x: SCol, src: SqlType, dst: SqlType) -> SCol:
    s, d = src.name, dst.name
    st = spark_type(dst)
    if d in _INTS and s in ("float4", "float8"):
        return F.bround(x, 0).cast(st)  # rint(): half to even
    if d in _INTS and s == "numeric":
        return F.round(x, 0).cast(st)  # half away from zero
    if d in ("varchar", "bpchar") and (n := dst.char_length()) is not None:
        y = x.cast("string")
        y = F.substring(y, 1, n)
        return F.rpad(y, n, " ") if d == "bpchar" else y
    if d == "mz_timestamp" and s in ("timestamptz", "timestamp"):
        return F.unix_millis(x.cast("timestamp"))
    if d == "mz_timestamp" and s == "date":
        return F.unix_millis(x.cast("timestamp"))
    if s == "mz_timestamp" and d in ("timestamptz", "timestamp"):
        return F.timestamp_millis(x).cast(st)
    if d == "bool" and s in _INTS:
        return x != 0
    if d in _INTS and s == "bool":
        return F.when(x, F.lit(1)).otherwise(F.lit(0)).cast(st)
    if d in ("text", "varchar") and s == "bool":
        return F.when(x, F.lit("true")).when(~x, F.lit("false"))
    if d in ("text", "varchar") and s == "bpchar":
        return F.rtrim(x)
    return x.cast(st)


def _unary(f: str, x: SCol, xt: SqlType, t: SqlType) -> SCol:
    match f:
        case "not":
            return ~x
        case "neg":
            return -x
        case "is_null":
            return x.isNull()
        case "is_true":
            return F.coalesce(x, F.lit(False))
        case "is_false":
            return F.coalesce(~x, F.lit(False))
        case "cast":
            return _cast(x, xt, t)
        case "abs":
            return F.abs(x)
        case "lower":
            return F.lower(x)
        case "upper":
            return F.upper(x)
        case "length" | "char_length":
            return F.length(x)
        case "octet_length":
            return F.octet_length(x)
        case "btrim":
            return F.trim(x)
        case "ltrim":
            return F.ltrim(x)
        case "rtrim":
            return F.rtrim(x)
        case "reverse":
            return F.reverse(x)
        case "initcap":
            return F.initcap(x)
        case "md5":
            return F.md5(x)
        case "ascii":
            return F.ascii(x)
        case "chr":
            return F.chr(x)
        case "round":
            return F.bround(x, 0) if xt.name in ("float4", "float8") else F.round(x, 0)
        case "trunc":
            return F.when(x >= 0, F.floor(x)).otherwise(F.ceil(x)).cast(spark_type(t))
        case "ceil":
            return F.ceil(x).cast(spark_type(t))
        case "floor":
            return F.floor(x).cast(spark_type(t))
        case "sign":
            return F.signum(x).cast(spark_type(t))
        case "sqrt":
            return F.sqrt(x).cast(spark_type(t))
        case "exp":
            return F.exp(x).cast(spark_type(t))
        case "ln":
            return F.log(x).cast(spark_type(t))
        case "log10":
            return F.log10(x).cast(spark_type(t))
        case "cbrt":
            return F.cbrt(x)
        case "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "radians" | "degrees":
            return getattr(F, f)(x)
        case "to_hex":
            return F.lower(F.hex(x))
    raise unsupported(f"function {f}")


def _binary(f: str, a: SCol, b: SCol, at: SqlType, bt: SqlType, t: SqlType) -> SCol:
    match f:
        case "add":
            return (a + b).cast(spark_type(t)) if t.name in _INTS else a + b
        case "sub":
            if at.name == "date" and bt.name == "date":
                return F.datediff(a, b)
            return (a - b).cast(spark_type(t)) if t.name in _INTS else a - b
        case "mul":
            return (a * b).cast(spark_type(t)) if t.name in _INTS else a * b
        case "div":
            if t.name in _INTS:
                # Spark's integral `div` truncates toward zero like Postgres; ANSI raises on 0
                return F.call_function("div", a, b).cast(spark_type(t))
            return a / b
        case "div_avg":
            return a / b
        case "mod" | "mod_fn":
            return a % b
        case "pow" | "power":
            return F.pow(a, b).cast(spark_type(t))
        case "eq":
            return a == b
        case "ne":
            return a != b
        case "lt":
            return a < b
        case "le":
            return a <= b
        case "gt":
            return a > b
        case "ge":
            return a >= b
        case "concat":
            return F.concat(a, b)
        case "like":
            return F.call_function("like", a, b)
        case "ilike":
            return F.call_function("ilike", a, b)
        case "round":
            return F.call_function("round", a, b)
        case "trunc":
            return F.call_function("round", a - a % F.pow(F.lit(10), -b).cast("decimal(38,10)"), b)
        case "substr":
            return F.call_function("substr", a, F.greatest(b, F.lit(1)))
        case "strpos" | "position":
            return F.call_function("instr", a, b)
        case "repeat":
            return F.call_function("repeat", a, F.greatest(b, F.lit(0)))
        case "left":
            return F.left(a, b)
        case "right":
            return F.right(a, b)
        case "btrim":
            return _trim_chars(a, b, leading=True, trailing=True)
        case "ltrim":
            return _trim_chars(a, b, leading=True, trailing=False)
        case "rtrim":
            return _trim_chars(a, b, leading=False, trailing=True)
        case "atan2":
            return F.atan2(a, b)
        case "raise_error":
            # a [SQLSTATE] prefix lets compute.render.errors recover the state
            return F.raise_error(F.concat(F.lit("["), a, F.lit("] "), b)).cast(spark_type(t))
        case "greatest":
            return F.greatest(a, b)
        case "least":
            return F.least(a, b)
    raise unsupported(f"function {f}")


def _substr3(a: SCol, b: SCol, n: SCol) -> SCol:
    """Postgres substr(s, start, len): a start below 1 shortens the length."""
    start = F.greatest(b, F.lit(1))
    length = F.greatest(b + n - start, F.lit(0))
    return F.when(n < 0, F.raise_error(F.lit("negative substring length not allowed"))).otherwise(
        F.call_function("substr", a, start, length)
    )


def _trim_chars(a: SCol, chars: SCol, leading: bool, trailing: bool) -> SCol:
    cls = F.concat(F.lit("["), F.regexp_replace(chars, r"([\\\]\[\^\-])", r"\\$1"), F.lit("]+"))
    out = a
    if leading:
        out = F.call_function("regexp_replace", out, F.concat(F.lit("^"), cls), F.lit(""))
    if trailing:
        out = F.call_function("regexp_replace", out, F.concat(cls, F.lit("$")), F.lit(""))
    return out


def _variadic(f: str, xs: list[SCol], ts: list[SqlType], t: SqlType) -> SCol:
    match f:
        case "and":
            out = xs[0]
            for x in xs[1:]:
                out = out & x
            return out
        case "or":
            out = xs[0]
            for x in xs[1:]:
                out = out | x
            return out
        case "coalesce":
            return F.coalesce(*xs)
        case "greatest":
            return F.greatest(*xs)
        case "least":
            return F.least(*xs)
        case "concat":
            return F.concat(*[F.coalesce(x, F.lit("")) for x in xs])
        case "mz_now" | "now":
            raise unsupported("mz_now() outside a one-shot SELECT's WHERE/HAVING (temporal filters in maintained dataflows)")
        case "concat_ws":
            return F.call_function("concat_ws", *xs)
        case "substr":
            return _substr3(xs[0], xs[1], xs[2])
        case "replace":
            return F.call_function("replace", *xs)
        case "lpad":
            return F.call_function("lpad", *(xs if len(xs) == 3 else xs + [F.lit(" ")]))
        case "rpad":
            return F.call_function("rpad", *(xs if len(xs) == 3 else xs + [F.lit(" ")]))
        case "split_part":
            return F.call_function("split_part", *xs)
        case "translate":
            return F.call_function("translate", *xs)
    raise unsupported(f"function {f}")
