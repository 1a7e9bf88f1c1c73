"""Plan-time evaluation of casts on literals and Postgres text output (pure Python).

`cast_value(v, src, dst)` casts a Python value (text input is `sql.text_input`);
`to_text(v, t)` is a type's output function. Used to type string literals against their
context and to cast INSERT values.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import Any

from sql.errors import NUMERIC_VALUE_OUT_OF_RANGE, SqlError
from sql.text_input import (
    fit_datetime,
    fit_numeric,
    fit_string,
    parse_value,
    round_f32,
    truncate_name,
)
from sql.types import Interval, SqlType

_INT_RANGE = {"int2": (-(2**15), 2**15 - 1), "int4": (-(2**31), 2**31 - 1), "int8": (-(2**63), 2**63 - 1), "oid": (0, 2**32 - 1), "uint8": (0, 2**64 - 1)}
_PG_NAMES = {"int2": "smallint", "int4": "integer", "int8": "bigint", "float4": "real", "float8": "double precision", "bool": "boolean"}


def _range_err(t: SqlType, s: Any = None) -> SqlError:
    if t.name in ("int2", "int4", "int8"):
        return SqlError(NUMERIC_VALUE_OUT_OF_RANGE, f"{_PG_NAMES[t.name]} out of range")
    return SqlError(NUMERIC_VALUE_OUT_OF_RANGE, f'value "{s}" is out of range for type {t.pg_format()}')


def check_int(v: int, t: SqlType) -> int:
    lo, hi = _INT_RANGE[t.name]
    if not lo <= v <= hi:
        raise _range_err(t, v)
    return v


def cast_value(v: Any, src: SqlType, dst: SqlType, explicit: bool = True) -> Any:
    """Cast a Python value of type `src` to `dst` (plan-time folding of casts on literals);
    a datetime typmod then rounds the fractional seconds (and truncates an interval's
    fields right of its qualifier)."""
    out = _cast_value(v, src, dst, explicit)
    if out is None or dst.typmod < 0 or dst.name not in ("timestamp", "timestamptz", "time", "interval"):
        return out
    return fit_datetime(out, dst)


_JSONB_SCALAR_TARGETS = {"numeric": "number", "int2": "number", "int4": "number", "int8": "number",
                         "float4": "number", "float8": "number", "bool": "boolean"}


def _jsonb_scalar(v: str, dst: SqlType) -> tuple[Any, SqlType]:
    """jsonb -> numeric/integer/float/bool (PG's jsonb_numeric, jsonb_int4, jsonb_bool, ...) =
    the jsonb scalar of the matching kind, cast from numeric (or bool); any other kind is 22023
    `cannot cast jsonb <kind> to type <type>`, any other target 42846."""
    from sql import jsonb

    want = _JSONB_SCALAR_TARGETS.get(dst.name)
    if want is None:
        raise SqlError("42846", f"cannot cast type jsonb to {dst.pg_format()}")
    kind = jsonb.typeof(v)
    if kind != want:
        raise SqlError("22023", f"cannot cast jsonb {kind} to type {dst.pg_format()}")
    x = jsonb.parse(v)
    return (x, SqlType("bool")) if want == "boolean" else (x, SqlType("numeric"))


def _cast_value(v: Any, src: SqlType, dst: SqlType, explicit: bool = True) -> Any:
    if v is None:
        return None
    s, d = src.name, dst.name
    if src.element is not None and dst.element is not None and s.startswith("_") and d.startswith("_"):
        return [None if x is None else _cast_value(x, src.element, dst.element, explicit) for x in v]
    if s in ("unknown", "text", "varchar", "bpchar", "name") and d not in ("text", "varchar", "bpchar", "name"):
        return parse_value(str(v), dst)
    if s == "jsonb" and d not in ("text", "varchar", "bpchar", "name", "jsonb"):
        return _cast_value(*_jsonb_scalar(v, dst), dst, explicit)
    if d in ("text", "varchar", "bpchar", "name"):
        txt = v if isinstance(v, str) else to_text(v, src)
        if s == "bpchar" and d != "bpchar":
            txt = txt.rstrip(" ")  # char(n) -> text/varchar drops the blank padding
        return fit_string(txt, dst, explicit) if d in ("varchar", "bpchar") else truncate_name(txt) if d == "name" else txt
    if d == "mz_timestamp":
        if isinstance(v, dt.datetime):
            aware = v if v.tzinfo else v.replace(tzinfo=dt.UTC)
            return int(aware.timestamp() * 1000)
        if isinstance(v, dt.date):
            return int(dt.datetime(v.year, v.month, v.day, tzinfo=dt.UTC).timestamp() * 1000)
        return int(v)
    if s == "mz_timestamp" and d in ("timestamptz", "timestamp"):
        t = dt.datetime.fromtimestamp(int(v) / 1000, tz=dt.UTC)
        return t if d == "timestamptz" else t.replace(tzinfo=None)
    if d in _INT_RANGE:
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, float):
            if math.isnan(v) or math.isinf(v):
                raise _range_err(dst, v)
            return check_int(int(round(v)), dst)  # round half to even, like rint()
        if isinstance(v, Decimal):
            if not v.is_finite():
                raise _range_err(dst, v)
            return check_int(int(v.quantize(Decimal(1), rounding=ROUND_HALF_UP)), dst)
        return check_int(int(v), dst)
    if d == "numeric":
        if isinstance(v, float):
            if math.isinf(v):
                raise SqlError(NUMERIC_VALUE_OUT_OF_RANGE, "cannot convert infinity to numeric")
            if math.isnan(v):
                from sql.errors import unsupported

                raise unsupported("numeric value NaN")
            # float8_numeric / float4_numeric: the value printed to DBL_DIG / FLT_DIG digits
            return fit_numeric(Decimal(f"{v:.{6 if src.name == 'float4' else 15}g}"), dst)
        return fit_numeric(Decimal(v), dst)
    if d in ("float4", "float8"):
        f = float(v)
        if d == "float4" and not math.isinf(f) and abs(f) > 3.4028235e38:
            raise _range_err(dst, v)
        return round_f32(f) if d == "float4" and not math.isinf(f) and not math.isnan(f) else f
    if d == "bool":
        if isinstance(v, int):
            return v != 0
        return bool(v)
    if d == "date" and isinstance(v, dt.datetime):
        return v.date()
    if d == "timestamp":
        if isinstance(v, dt.datetime):
            return v.replace(tzinfo=None)
        if isinstance(v, dt.date):
            return dt.datetime(v.year, v.month, v.day)
    if d == "timestamptz":
        if isinstance(v, dt.datetime):
            return v if v.tzinfo else v.replace(tzinfo=dt.UTC)
        if isinstance(v, dt.date):
            return dt.datetime(v.year, v.month, v.day, tzinfo=dt.UTC)
    if s == d:
        return v
    raise SqlError("42846", f"cannot cast type {src.pg_format()} to {dst.pg_format()}")


def format_float(v: float, t: SqlType | None = None) -> str:
    """Postgres' text output of a float8 (or, with `t` float4, a real)."""
    return format_float4(v) if t is not None and t.name == "float4" else format_float8(v)


def _digits_exponent(s: str) -> tuple[str, int]:
    """Significant digits (no trailing zeros) and scientific exponent of a positive float's
    repr-style string ('123.5', '1e-05', '1.5e+16')."""
    mant, _, exp = s.partition("e")
    ip, _, fp = mant.partition(".")
    digits = ip + fp
    stripped = digits.lstrip("0")
    e = len(ip) - 1 - (len(digits) - len(stripped)) + (int(exp) if exp else 0)
    return stripped.rstrip("0") or "0", e


def _format_shortest(v: float, repr_digits: str, fixed_max_exp: int) -> str:
    """Postgres' (Ryu-based) float output: fixed notation for 1e-4 <= |v| < 10**fixed_max_exp."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, v) < 0 else ""
    if v == 0:
        return sign + "0"
    digits, e = _digits_exponent(repr_digits.lstrip("-"))
    if -4 <= e < fixed_max_exp:
        if e >= 0:
            if len(digits) <= e + 1:
                body = digits + "0" * (e + 1 - len(digits))
            else:
                body = digits[: e + 1] + "." + digits[e + 1 :]
        else:
            body = "0." + "0" * (-e - 1) + digits
    else:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        body = f"{mant}e{'-' if e < 0 else '+'}{abs(e):02d}"
    return sign + body


def format_float_digits(v: float, digits: int) -> str:
    """float4out / float8out with extra_float_digits <= 0: C's `%.*g` with `digits` (at least 1)
    significant digits (FLT_DIG or DBL_DIG plus extra_float_digits)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return f"{v:.{max(digits, 1)}g}"


def format_float8(v: float) -> str:
    v = float(v)
    r = repr(v)
    # Fast path: Python's repr is fixed-point for 1e-4 <= |v| < 1e16, like Postgres below 1e15.
    if "e" not in r and 1e-4 <= abs(v) < 1e15:
        return r[:-2] if r.endswith(".0") else r
    return _format_shortest(v, r, 15)


def format_float4(v: float) -> str:
    v = float(v)
    if math.isnan(v) or math.isinf(v) or v == 0:
        return _format_shortest(v, "0", 6)
    v32 = round_f32(v)
    for prec in range(1, 10):
        s = f"{v32:.{prec - 1}e}"
        if round_f32(float(s)) == v32:
            return _format_shortest(v32, s, 6)
    return _format_shortest(v32, repr(v32), 6)



def format_interval(iv: Interval) -> str:
    """interval_out in IntervalStyle postgres (was: a copy without the mixed-sign `+` and
    with `-1 mon` for -1 month; `'-1 mons 40 days'::interval::text` printed it)."""
    from sql.interval_text import format_interval as interval_out

    return interval_out(iv, "postgres")


def to_text(v: Any, t: SqlType | None) -> str:
    """The type's output function: Python value -> Postgres text."""
    if isinstance(v, list):
        elem = t.element if t is not None else None
        return "{" + ",".join("NULL" if x is None else quote_array_element(to_text(x, elem)) for x in v) + "}"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return format_float(v, t)
    if isinstance(v, Decimal):
        if v.is_nan():
            return "NaN"
        return format(v, "f")
    if isinstance(v, dt.datetime):
        base = v.strftime("%Y-%m-%d %H:%M:%S")
        if v.microsecond:
            base += f".{v.microsecond:06d}".rstrip("0")
        if v.tzinfo is not None:
            base += "+00"
        return base
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, dt.time):
        base = v.strftime("%H:%M:%S")
        if v.microsecond:
            base += f".{v.microsecond:06d}".rstrip("0")
        return base
    if isinstance(v, Interval):
        return format_interval(v)
    if isinstance(v, bytes):
        return "\\x" + v.hex()
    return str(v)


def round_half_even(d: Decimal) -> Decimal:
    return d.quantize(Decimal(1), rounding=ROUND_HALF_EVEN)


# ---- one-dimensional arrays (text form) ---------------------------------------------------
_ARRAY_QUOTE = re.compile(r'[{},"\\\s]')


def quote_array_element(s: str) -> str:
    """An element's text inside an array's text form (quoted when it must be)."""
    if s == "" or s.upper() == "NULL" or _ARRAY_QUOTE.search(s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return s
