"""MIR scalar -> Spark SQL expression text, with Postgres semantics where Spark's differ.

Expressions are rendered as text (one JVM parse per query instead of one py4j round trip per
expression node). Every rendered expression is fully parenthesised so composing texts never
depends on Spark's operator precedence; `cols` are the texts of the input columns.
"""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from functools import lru_cache
from typing import assert_never

from compute.render.types import spark_type, to_spark_value
from sql.errors import unsupported
from sql.scalar import (
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    If,
    Literal,
    Scalar,
    record_get_index,
)
from sql.types import SqlType

_INTS = ("int2", "int4", "int8")


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
    if n in _INTS or n in ("oid", "uint8", "mz_timestamp", "time"):
        return cast(str(int(sv)), t)
    if n in ("float4", "float8"):
        return cast(quote(repr(float(sv))), t)
    if n == "numeric":
        return cast(quote(str(Decimal(sv))), t)
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


def render_scalar(e: Scalar, cols: list[str]) -> str:
    match e:
        case Column(index=i):
            return cols[i]
        case Literal(value=v, typ=t):
            return lit(v, t)
        case CallUnary(func=f, expr=x, typ=t):
            if (i := record_get_index(f)) is not None:
                return f"({render_scalar(x, cols)}).f{i}"
            return _unary(f, render_scalar(x, cols), x.typ, t)
        case CallBinary(func=f, expr1=a, expr2=b, typ=t):
            return _binary(f, render_scalar(a, cols), render_scalar(b, cols), a.typ, b.typ, t)
        case CallVariadic(func=f, exprs=xs, typ=t):
            return _variadic(f, [render_scalar(x, cols) for x in xs], [x.typ for x in xs], t)
        case If(cond=c, then=a, els=b):
            return f"(CASE WHEN {render_scalar(c, cols)} THEN {render_scalar(a, cols)} ELSE {render_scalar(b, cols)} END)"
        case _:
            assert_never(e)


def raise_error(msg: str, t: SqlType | str = "string") -> str:
    """An expression failing the query with `msg` (a `[SQLSTATE] ` prefix sets the state)."""
    return cast(f"raise_error({quote(msg)})", t)


def _cast(x: str, src: SqlType, dst: SqlType) -> str:
    s, d = src.name, dst.name
    if _is_array(src) and d in ("text", "varchar"):
        return _array_text(x, src)
    if _is_array(src) and _is_array(dst):
        v = _var()
        return f"transform({x}, {v} -> {_cast(v, src.element, dst.element)})"  # type: ignore[arg-type]
    if d in _INTS and s in ("float4", "float8"):
        return cast(f"bround({x}, 0)", dst)  # rint(): half to even
    if d in _INTS and s == "numeric":
        return cast(f"round({x}, 0)", dst)  # half away from zero
    if d in ("varchar", "bpchar") and (n := dst.char_length()) is not None:
        y = f"substring(CAST({x} AS STRING), 1, {n})"
        return f"rpad({y}, {n}, ' ')" if d == "bpchar" else y
    if d == "mz_timestamp" and s in ("timestamptz", "timestamp", "date"):
        return f"unix_millis(CAST({x} AS TIMESTAMP))"
    if s == "mz_timestamp" and d in ("timestamptz", "timestamp"):
        return cast(f"timestamp_millis({x})", dst)
    if d == "bool" and s in _INTS:
        return f"({x} <> 0)"
    if d in _INTS and s == "bool":
        return cast(f"(CASE WHEN {x} THEN 1 ELSE 0 END)", dst)
    if d in ("text", "varchar") and s == "bool":
        return f"(CASE WHEN {x} THEN 'true' WHEN NOT {x} THEN 'false' END)"
    if d in ("text", "varchar") and s == "bpchar":
        return f"rtrim({x})"
    return cast(x, dst)


_SAME_NAME_UNARY = ("abs", "lower", "upper", "octet_length", "ltrim", "rtrim", "reverse", "initcap", "md5",
                    "ascii", "chr", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan", "radians", "degrees")
_TYPED_UNARY = {"ceil": "ceil", "floor": "floor", "sign": "signum", "sqrt": "sqrt", "exp": "exp", "ln": "ln", "log10": "log10"}


_vars = itertools.count()


def _var() -> str:
    """A fresh lambda variable name (nested lambdas never shadow each other)."""
    return f"_v{next(_vars) % 1_000_000}"


def _is_array(t: SqlType) -> bool:
    return t.name.startswith("_") and t.element is not None


_ARRAY_SPECIAL = quote(r'[{},"\\\s]')
_BACKSLASH, _BACKSLASH2, _DQUOTE, _DQUOTE_ESC = quote("\\"), quote("\\\\"), quote('"'), quote('\\"')


def _array_text(x: str, t: SqlType) -> str:
    """An array's Postgres text form: {a,"b c",NULL} (elements quoted when they must be)."""
    v, e = _var(), t.element
    assert e is not None
    txt = _cast(v, e, SqlType("text"))
    escaped = f"replace(replace({txt}, {_BACKSLASH}, {_BACKSLASH2}), {_DQUOTE}, {_DQUOTE_ESC})"
    quoted = (f"(CASE WHEN {txt} = '' OR upper({txt}) = 'NULL' OR {txt} RLIKE {_ARRAY_SPECIAL}"
              f" THEN concat({_DQUOTE}, {escaped}, {_DQUOTE}) ELSE {txt} END)")
    return f"concat('{{', array_join(transform({x}, {v} -> CASE WHEN {v} IS NULL THEN 'NULL' ELSE {quoted} END), ','), '}}')"


def _array_binary(f: str, a: str, b: str, at: SqlType, bt: SqlType, t: SqlType) -> str | None:
    """Array functions and operators of two arguments (None: not one of them)."""
    match f:
        case "array_index":
            return f"(CASE WHEN {b} >= 1 THEN try_element_at({a}, {b}) END)"
        case "array_length" | "array_upper":
            return f"(CASE WHEN {b} = 1 AND size({a}) > 0 THEN size({a}) END)"
        case "array_lower":
            return f"(CASE WHEN {b} = 1 AND size({a}) > 0 THEN 1 END)"
        case "array_to_string":
            v = _var()
            return f"array_join(transform({a}, {v} -> {_cast(v, at.element, SqlType('text'))}), {b})"  # type: ignore[arg-type]
        case "array_position":
            v = _var()
            return f"CAST(nullif(array_position(transform({a}, {v} -> {v} <=> {b}), TRUE), 0) AS INT)"
        case "array_remove":
            v = _var()
            return f"filter({a}, {v} -> NOT ({v} <=> {b}))"
        case "array_cat":
            return f"(CASE WHEN {a} IS NULL THEN {b} WHEN {b} IS NULL THEN {a} ELSE concat({a}, {b}) END)"
        case "array_append":
            return f"(CASE WHEN {a} IS NULL THEN array({b}) ELSE concat({a}, array({b})) END)"
        case "array_prepend":
            return f"(CASE WHEN {b} IS NULL THEN array({a}) ELSE concat(array({a}), {b}) END)"
        case "concat" if _is_array(at) and _is_array(bt):
            return _array_binary("array_cat", a, b, at, bt, t)
        case "concat" if _is_array(at):
            return _array_binary("array_append", a, b, at, bt, t)
        case "concat" if _is_array(bt):
            return _array_binary("array_prepend", a, b, at, bt, t)
        case "array_contains" | "array_contained":
            big, small = (a, b) if f == "array_contains" else (b, a)
            x, y = _var(), _var()
            return (f"(CASE WHEN {a} IS NOT NULL AND {b} IS NOT NULL THEN"
                    f" forall({small}, {y} -> exists({big}, {x} -> coalesce({x} = {y}, FALSE))) END)")
        case "array_overlap":
            x, y = _var(), _var()
            return (f"(CASE WHEN {a} IS NOT NULL AND {b} IS NOT NULL THEN"
                    f" exists({a}, {x} -> exists({b}, {y} -> coalesce({x} = {y}, FALSE))) END)")
    if f.endswith(("_any", "_all")) and f[:-4] in _COMPARISONS:
        v = _var()
        test = _binary(f[:-4], a, v, at, bt.element, SqlType("bool"))  # type: ignore[arg-type]
        return f"{'exists' if f.endswith('_any') else 'forall'}({b}, {v} -> {test})"
    return None


def _unary(f: str, x: str, xt: SqlType, t: SqlType) -> str:
    if f == "cardinality":
        return f"(CASE WHEN {x} IS NOT NULL THEN size({x}) END)"
    if f == "array_ndims":
        return f"(CASE WHEN size({x}) > 0 THEN 1 END)"
    if f in _SAME_NAME_UNARY:
        return f"{f}({x})"
    if f in _TYPED_UNARY:
        return cast(f"{_TYPED_UNARY[f]}({x})", t)
    match f:
        case "not":
            return f"(NOT {x})"
        case "neg":
            return f"(- {x})"
        case "is_null":
            return f"({x} IS NULL)"
        case "is_true":
            return f"coalesce({x}, FALSE)"
        case "is_false":
            return f"coalesce(NOT {x}, FALSE)"
        case "cast":
            return _cast(x, xt, t)
        case "length" | "char_length":
            return f"length({x})"
        case "btrim":
            return f"trim({x})"
        case "round":
            return f"bround({x}, 0)" if xt.name in ("float4", "float8") else f"round({x}, 0)"
        case "trunc":
            return cast(f"(CASE WHEN {x} >= 0 THEN floor({x}) ELSE ceil({x}) END)", t)
        case "to_hex":
            return f"lower(hex({x}))"
    raise unsupported(f"function {f}")


_COMPARISONS = {"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _binary(f: str, a: str, b: str, at: SqlType, bt: SqlType, t: SqlType) -> str:
    if (arr := _array_binary(f, a, b, at, bt, t)) is not None:
        return arr
    if f in _COMPARISONS:
        return f"({a} {_COMPARISONS[f]} {b})"
    match f:
        case "add" | "sub" | "mul":
            if f == "sub" and at.name == "date" and bt.name == "date":
                return f"datediff({a}, {b})"
            e = f"({a} {'+' if f == 'add' else '-' if f == 'sub' else '*'} {b})"
            return cast(e, t) if t.name in _INTS else e
        case "div":
            if t.name in _INTS:
                # Spark's integral `div` truncates toward zero like Postgres; ANSI raises on 0
                return cast(f"div({a}, {b})", t)
            return f"({a} / {b})"
        case "div_avg":
            if t.name == "numeric":
                # the count is integral: as DECIMAL(20,0) the quotient keeps Spark's full
                # scale 10 (decimal(38,10) / decimal(38,10) would round to scale 6)
                return cast(f"({a} / CAST({b} AS DECIMAL(20,0)))", t)
            return f"({a} / {b})"
        case "mod" | "mod_fn":
            return f"({a} % {b})"
        case "pow" | "power":
            return cast(f"power({a}, {b})", t)
        case "concat":
            return f"concat({a}, {b})"
        case "like" | "ilike" | "round":
            return f"{f}({a}, {b})"
        case "trunc":
            return f"round({a} - {a} % CAST(power(10, - {b}) AS DECIMAL(38,10)), {b})"
        case "substr":
            return f"substr({a}, greatest({b}, 1))"
        case "strpos" | "position":
            return f"instr({a}, {b})"
        case "repeat":
            return f"repeat({a}, greatest({b}, 0))"
        case "left" | "right" | "atan2" | "greatest" | "least":
            return f"{f}({a}, {b})"
        case "btrim":
            return _trim_chars(a, b, leading=True, trailing=True)
        case "ltrim":
            return _trim_chars(a, b, leading=True, trailing=False)
        case "rtrim":
            return _trim_chars(a, b, leading=False, trailing=True)
        case "raise_error":
            # a [SQLSTATE] prefix lets compute.render.errors recover the state
            return cast(f"raise_error(concat('[', {a}, '] ', {b}))", t)
    raise unsupported(f"function {f}")


def _substr3(a: str, b: str, n: str) -> str:
    """Postgres substr(s, start, len): a start below 1 shortens the length."""
    start = f"greatest({b}, 1)"
    length = f"greatest({b} + {n} - {start}, 0)"
    return f"(CASE WHEN {n} < 0 THEN {raise_error('negative substring length not allowed')} ELSE substr({a}, {start}, {length}) END)"


_CLASS_SPECIALS = quote(r"([\\\]\[\^\-])")
_ESCAPE_GROUP = quote(r"\\$1")


def _trim_chars(a: str, chars: str, leading: bool, trailing: bool) -> str:
    cls = f"concat('[', regexp_replace({chars}, {_CLASS_SPECIALS}, {_ESCAPE_GROUP}), ']+')"
    out = a
    if leading:
        out = f"regexp_replace({out}, concat('^', {cls}), '')"
    if trailing:
        out = f"regexp_replace({out}, concat({cls}, '$'), '')"
    return out


def _variadic(f: str, xs: list[str], ts: list[SqlType], t: SqlType) -> str:
    match f:
        case "row":
            return "named_struct(" + ", ".join(f"'f{i}', {x}" for i, x in enumerate(xs)) + ")"
        case "list_create":
            return f"array({', '.join(xs)})" if xs else cast("array()", t)
        case "and" | "or":
            return "(" + f" {f.upper()} ".join(xs) + ")"
        case "array_create":
            return f"array({', '.join(xs)})"
        case "array_to_string":
            v = _var()
            return f"array_join(transform({xs[0]}, {v} -> {_cast(v, ts[0].element, SqlType('text'))}), {xs[1]}, {xs[2]})"  # type: ignore[arg-type]
        case "coalesce" | "greatest" | "least" | "concat_ws" | "replace" | "split_part" | "translate":
            return f"{f}({', '.join(xs)})"
        case "concat":
            return "concat(" + ", ".join(f"coalesce({x}, '')" for x in xs) + ")"
        case "mz_now" | "now":
            raise unsupported("mz_now() outside a one-shot SELECT's WHERE/HAVING (temporal filters in maintained dataflows)")
        case "substr":
            return _substr3(xs[0], xs[1], xs[2])
        case "lpad" | "rpad":
            return f"{f}({', '.join(xs if len(xs) == 3 else [*xs, quote(' ')])})"
    raise unsupported(f"function {f}")
