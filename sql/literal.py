"""Plan-time evaluation of casts on literals (Postgres input/output rules, pure Python).

`parse_text(s, t)` is a type's input function; `cast_value(v, src, dst)` casts a Python
value. Used to type string literals against their context and to cast INSERT values.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import struct
import uuid
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any

from sql.datetime_text import parse_date, parse_time, parse_timestamp
from sql.errors import (
    CHARACTER_NOT_IN_REPERTOIRE,
    DATETIME_FIELD_OVERFLOW,
    INVALID_TEXT_REPRESENTATION,
    NUMERIC_VALUE_OUT_OF_RANGE,
    STRING_DATA_RIGHT_TRUNCATION,
    SqlError,
)
from sql.interval import adjust_interval, round_micros
from sql.interval import parse_interval as interval_in
from sql.types import Interval, SqlType

_INT_RANGE = {"int2": (-(2**15), 2**15 - 1), "int4": (-(2**31), 2**31 - 1), "int8": (-(2**63), 2**63 - 1), "oid": (0, 2**32 - 1), "uint8": (0, 2**64 - 1)}
_PG_NAMES = {"int2": "smallint", "int4": "integer", "int8": "bigint", "float4": "real", "float8": "double precision", "bool": "boolean"}


def _bad(t: SqlType, s: str) -> SqlError:
    return SqlError(INVALID_TEXT_REPRESENTATION, f'invalid input syntax for type {_PG_NAMES.get(t.name, t.pg_format())}: "{s}"')


def _range_err(t: SqlType, s: Any = None) -> SqlError:
    if t.name in ("int2", "int4", "int8"):
        return SqlError(NUMERIC_VALUE_OUT_OF_RANGE, f"{_PG_NAMES[t.name]} out of range")
    return SqlError(NUMERIC_VALUE_OUT_OF_RANGE, f'value "{s}" is out of range for type {t.pg_format()}')


def check_int(v: int, t: SqlType) -> int:
    lo, hi = _INT_RANGE[t.name]
    if not lo <= v <= hi:
        raise _range_err(t, v)
    return v


def parse_text(s: str, t: SqlType) -> Any:
    """The type's input function: text -> Python value (22P02 on bad input)."""
    if "\x00" in s:
        raise SqlError(CHARACTER_NOT_IN_REPERTOIRE, 'invalid byte sequence for encoding "UTF8": 0x00')
    n = t.name
    if n in ("text", "unknown"):
        return s
    if n == "name":
        return truncate_name(s)
    if (elem := t.element) is not None and n.startswith("_"):
        return [None if x is None else parse_text(x, elem) for x in split_array_text(s, t)]
    if n in ("varchar", "bpchar"):
        return fit_string(s, t, explicit=False)
    if n in _INT_RANGE:
        st = s.strip()
        if not re.fullmatch(r"[+-]?\d+", st):
            raise _bad(t, s)
        return check_int(int(st), t)
    if n == "numeric":
        st = s.strip()
        try:
            d = Decimal(st)
        except InvalidOperation:
            raise _bad(t, s) from None
        if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(?i:nan|infinity|inf)", st):
            raise _bad(t, s)
        if not d.is_finite():
            # Spark's decimal has no NaN / Infinity: refused, never an internal error later
            from sql.errors import unsupported

            raise unsupported(f"numeric value {'NaN' if d.is_nan() else 'Infinity'}")
        return fit_numeric(d, t)
    if n == "mz_timestamp":
        st = s.strip()
        if re.fullmatch(r"\d+", st):
            return int(st)
        return cast_value(parse_timestamp(s, tz=True), SqlType("timestamptz"), t)
    if n in ("float4", "float8"):
        st = s.strip().lower()
        special = {"nan": math.nan, "infinity": math.inf, "+infinity": math.inf, "-infinity": -math.inf, "inf": math.inf, "+inf": math.inf, "-inf": -math.inf}
        if st in special:
            return special[st]
        if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", st):
            raise _bad(t, s)
        v = float(st)
        if math.isinf(v):
            raise _range_err(t, s)
        return round_f32(v) if n == "float4" and abs(v) <= 3.4028235e38 else v
    if n == "bool":
        st = s.strip().lower()
        if st in ("t", "tr", "tru", "true", "y", "ye", "yes", "on", "1"):
            return True
        if st in ("f", "fa", "fal", "fals", "false", "n", "no", "of", "off", "0"):
            return False
        raise _bad(t, s)
    if n == "date":
        return parse_date(s)
    if n == "timestamp":
        return parse_timestamp(s, tz=False)
    if n == "timestamptz":
        return parse_timestamp(s, tz=True)
    if n == "time":
        return parse_time(s)
    if n == "interval":
        return parse_interval(s, t.typmod)
    if n == "jsonb":
        from sql import jsonb

        return jsonb.canonical(s)
    if n == "uuid":
        try:
            return uuid.UUID(s.strip())
        except ValueError:
            raise _bad(t, s) from None
    if n == "bytea":
        return parse_bytea(s)
    raise _bad(t, s)


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def parse_bytea(s: str) -> bytes:
    """byteain: `\\x` then hex digit pairs (white space between pairs allowed), else the
    escape format: `\\\\` is a backslash, `\\ooo` (octal, 000-377) a byte, other characters
    their UTF-8 bytes; any other backslash is a syntax error."""
    if s.startswith("\\x"):
        hexpart = "".join(s[2:].split())
        for c in hexpart:
            if c not in _HEX_DIGITS:
                raise SqlError("22023", f'invalid hexadecimal digit: "{c}"')
        if len(hexpart) % 2:
            raise SqlError("22023", "invalid hexadecimal data: odd number of digits")
        return bytes.fromhex(hexpart)
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode()
            i += 1
        elif s[i + 1:i + 2] == "\\":
            out.append(0x5C)
            i += 2
        elif re.fullmatch(r"[0-3][0-7][0-7]", s[i + 1:i + 4]):
            out.append(int(s[i + 1:i + 4], 8))
            i += 4
        else:
            raise SqlError(INVALID_TEXT_REPRESENTATION, "invalid input syntax for type bytea")
    return bytes(out)


NAMEDATALEN = 64


def truncate_name(s: str) -> str:
    """A `name` value: at most NAMEDATALEN - 1 = 63 bytes of UTF-8, cut at a character boundary."""
    b = s.encode()
    if len(b) < NAMEDATALEN:
        return s
    return b[:NAMEDATALEN - 1].decode(errors="ignore")


def fit_string(s: str, t: SqlType, explicit: bool) -> str:
    n = t.char_length()
    if n is None:
        return s
    if t.name == "bpchar":
        if len(s) > n:
            if s[n:].strip(" ") == "" or explicit:
                return s[:n]
            raise SqlError(STRING_DATA_RIGHT_TRUNCATION, f"value too long for type character({n})")
        return s.ljust(n)
    if len(s) > n:
        if s[n:].strip(" ") == "" or explicit:
            return s[:n]
        raise SqlError(STRING_DATA_RIGHT_TRUNCATION, f"value too long for type character varying({n})")
    return s


def fit_numeric(d: Decimal, t: SqlType) -> Decimal:
    ps = t.numeric_precision_scale()
    if ps is None or not d.is_finite():
        return d
    p, sc = ps
    if d.adjusted() >= p - sc and d != 0:  # also keeps quantize within its context's precision
        raise _numeric_overflow(p, sc)
    # a context holding every digit numeric(p, s) allows (the default one keeps 28)
    q = d.quantize(Decimal(1).scaleb(-sc), context=Context(prec=p + sc + 2, rounding=ROUND_HALF_UP))
    if q.adjusted() >= p - sc and q != 0:
        raise _numeric_overflow(p, sc)
    return q


def _numeric_overflow(p: int, sc: int) -> SqlError:
    return SqlError(NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow",
                    detail=f"A field with precision {p}, scale {sc} must round to an absolute value less than 10^{p - sc}.")


def parse_interval(s: str, typmod: int = -1) -> Interval:
    """interval_in (sql.interval)."""
    return interval_in(s, typmod)


def cast_value(v: Any, src: SqlType, dst: SqlType, explicit: bool = True) -> Any:
    """Cast a Python value of type `src` to `dst` (plan-time folding of casts on literals);
    a datetime typmod then rounds the fractional seconds (and truncates an interval's
    fields right of its qualifier)."""
    out = _cast_value(v, src, dst, explicit)
    if out is None or dst.typmod < 0 or dst.name not in ("timestamp", "timestamptz", "time", "interval"):
        return out
    return fit_datetime(out, dst)


_PG_EPOCH = dt.datetime(2000, 1, 1)


def fit_datetime(v: Any, t: SqlType) -> Any:
    """AdjustTimestampForTypmod / AdjustTimeForTypmod / AdjustIntervalForTypmod: round the
    microseconds to t's precision, half away from zero (timestamps count from 2000-01-01)."""
    if t.name == "interval":
        return adjust_interval(v, t.typmod)
    p = t.seconds_precision()
    if p is None or p >= 6:
        return v
    if t.name == "time":
        us = ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
        r = round_micros(us, p)
        if r >= 86_400_000_000:
            from sql.errors import FEATURE_NOT_SUPPORTED

            raise SqlError(FEATURE_NOT_SUPPORTED, "time value 24:00:00 not supported")
        return (dt.datetime.min + dt.timedelta(microseconds=r)).time()
    naive = v.replace(tzinfo=None)
    delta = naive - _PG_EPOCH
    us = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    try:
        out = _PG_EPOCH + dt.timedelta(microseconds=round_micros(us, p))
    except OverflowError:
        raise SqlError(DATETIME_FIELD_OVERFLOW, "timestamp out of range") from None
    return out.replace(tzinfo=v.tzinfo)


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
        return parse_text(str(v), dst)
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


def round_f32(v: float) -> float:
    return struct.unpack("f", struct.pack("f", v))[0]


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
    parts = []
    years, mons = divmod(abs(iv.months), 12)
    sign = "-" if iv.months < 0 else ""
    if years:
        parts.append(f"{sign}{years} year{'s' if years != 1 else ''}")
    if mons:
        parts.append(f"{sign}{mons} mon{'s' if mons != 1 else ''}")
    if iv.days:
        parts.append(f"{iv.days} day{'s' if abs(iv.days) != 1 else ''}")
    if iv.micros or not parts:
        us = abs(iv.micros)
        h, rem = divmod(us, 3_600_000_000)
        m, rem = divmod(rem, 60_000_000)
        sec, frac = divmod(rem, 1_000_000)
        t = f"{'-' if iv.micros < 0 else ''}{h:02d}:{m:02d}:{sec:02d}"
        if frac:
            t += f".{frac:06d}".rstrip("0")
        parts.append(t)
    return " ".join(parts)


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
_VECTOR_TYPES = frozenset({"int2vector", "oidvector"})
_ARRAY_QUOTE = re.compile(r'[{},"\\\s]')


def quote_array_element(s: str) -> str:
    """An element's text inside an array's text form (quoted when it must be)."""
    if s == "" or s.upper() == "NULL" or _ARRAY_QUOTE.search(s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return s


def split_array_text(text: str, t: SqlType) -> list[str | None]:
    """The element texts (None = NULL) of a one-dimensional array's text form."""
    from sql.errors import FEATURE_NOT_SUPPORTED

    s = text.strip()
    if t.name in _VECTOR_TYPES:
        return list(s.split()) if s else []
    if len(s) < 2 or s[0] != "{" or s[-1] != "}":
        raise SqlError(INVALID_TEXT_REPRESENTATION, f'malformed array literal: "{text}"')
    body = s[1:-1]
    out: list[str | None] = []
    i, n = 0, len(body)
    if not body.strip():
        return out
    while i <= n:
        while i < n and body[i].isspace():
            i += 1
        if i < n and body[i] == "{":
            raise SqlError(FEATURE_NOT_SUPPORTED, "multidimensional arrays are not supported")
        if i < n and body[i] == '"':
            i += 1
            buf = []
            while i < n and body[i] != '"':
                if body[i] == "\\" and i + 1 < n:
                    i += 1
                buf.append(body[i])
                i += 1
            if i >= n:
                raise SqlError(INVALID_TEXT_REPRESENTATION, f'malformed array literal: "{text}"')
            i += 1
            out.append("".join(buf))
            while i < n and body[i].isspace():
                i += 1
        else:
            j = i
            buf = []
            while j < n and body[j] != ",":
                if body[j] == "\\" and j + 1 < n:
                    j += 1
                elif body[j] in '{}"':  # only escaped or quoted inside an element (array_in)
                    raise SqlError(INVALID_TEXT_REPRESENTATION, f'malformed array literal: "{text}"')
                buf.append(body[j])
                j += 1
            item = "".join(buf).strip()
            out.append(None if item.upper() == "NULL" else item)
            i = j
        if i < n and body[i] != ",":
            raise SqlError(INVALID_TEXT_REPRESENTATION, f'malformed array literal: "{text}"')
        i += 1
    return out
