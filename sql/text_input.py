"""PostgreSQL text input of every type: `parse_text(s, t)` is the type's input function.

One implementation for the wire codec (text-format parameters), plan-time casts of string
literals (`sql.literal.cast_value`), COPY FROM / INSERT text fields and the system relations.
Errors are `SqlError`s with Postgres' SQLSTATEs and messages; the typmod of `t` applies
(varchar(n) / char(n) length, numeric(p, s), datetime precision, interval fields).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import struct
import uuid
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any

from sql import datetime_text
from sql.errors import (
    CHARACTER_NOT_IN_REPERTOIRE,
    DATETIME_FIELD_OVERFLOW,
    FEATURE_NOT_SUPPORTED,
    INVALID_TEXT_REPRESENTATION,
    NUMERIC_VALUE_OUT_OF_RANGE,
    STRING_DATA_RIGHT_TRUNCATION,
    SqlError,
    unsupported,
)
from sql.interval import adjust_interval, parse_interval, round_micros
from sql.types import ARRAY_ELEMENT, Interval, SqlType

_FLT_MAX = 3.4028234663852886e38

# The type name Postgres uses in "invalid input syntax for type X" messages.
_INPUT_NAMES = {
    "time": "time",
    "timestamp": "timestamp",
    "timestamptz": "timestamp with time zone",
}


def type_label(t: SqlType) -> str:
    """The name of `t` in Postgres' input error messages."""
    if t.name in _INPUT_NAMES:
        return _INPUT_NAMES[t.name]
    try:
        return t.info.pg_name
    except KeyError:
        return t.name


def _syntax(t: SqlType, text: str) -> SqlError:
    return SqlError(INVALID_TEXT_REPRESENTATION, f'invalid input syntax for type {type_label(t)}: "{text}"')


def _out_of_range(t: SqlType, text: str) -> SqlError:
    return SqlError(NUMERIC_VALUE_OUT_OF_RANGE, f'value "{text}" is out of range for type {type_label(t)}')


def round_f32(v: float) -> float:
    """`v` rounded to the nearest float4."""
    return struct.unpack("f", struct.pack("f", v))[0]


# ---- strings ----------------------------------------------------------------------------

NAMEDATALEN = 64


def truncate_name(s: str) -> str:
    """A `name` value: at most NAMEDATALEN - 1 = 63 bytes of UTF-8, cut at a character boundary."""
    b = s.encode()
    if len(b) < NAMEDATALEN:
        return s
    return b[:NAMEDATALEN - 1].decode(errors="ignore")


def fit_string(s: str, t: SqlType, explicit: bool) -> str:
    """varchar(n) / char(n): too long is 22001 unless the excess is blanks or the cast is
    explicit (then cut); char(n) pads with blanks."""
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


def _parse_name(s: str, t: SqlType) -> str:
    return truncate_name(s)


def _parse_varchar(s: str, t: SqlType) -> str:
    return fit_string(s, t, explicit=False)


# ---- numbers ----------------------------------------------------------------------------


def _parse_bool(s: str, t: SqlType) -> bool:
    v = s.strip().lower()
    if v:
        if "true".startswith(v) or "yes".startswith(v) or v in ("on", "1"):
            return True
        if "false".startswith(v) or "no".startswith(v) or v in ("of", "off", "0"):
            return False
    raise _syntax(t, s)


_INT_RE = re.compile(r"\s*[+-]?\d+\s*\Z")
_INT_RANGES = {
    "int2": (-(2**15), 2**15 - 1),
    "int4": (-(2**31), 2**31 - 1),
    "int8": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**64 - 1),
}


def _parse_int(s: str, t: SqlType) -> int:
    if not _INT_RE.match(s):
        raise _syntax(t, s)
    v = int(s)
    lo, hi = _INT_RANGES[t.name]
    if not lo <= v <= hi:
        raise _out_of_range(t, s)
    return v


def _parse_oid(s: str, t: SqlType) -> int:
    """oidin: a negative number down to -2^31 wraps around (like Postgres)."""
    if not _INT_RE.match(s):
        raise _syntax(t, s)
    v = int(s)
    if not -(2**31) <= v <= 2**32 - 1:
        raise _out_of_range(t, s)
    return v & 0xFFFFFFFF


_FLOAT_RE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_FLOAT_SPECIAL = {
    "nan": math.nan,
    "infinity": math.inf,
    "+infinity": math.inf,
    "-infinity": -math.inf,
    "inf": math.inf,
    "+inf": math.inf,
    "-inf": -math.inf,
}


def _parse_float(s: str, t: SqlType) -> float:
    v = s.strip()
    special = _FLOAT_SPECIAL.get(v.lower())
    if special is not None:
        return special
    if not _FLOAT_RE.match(v):
        raise _syntax(t, s)
    f = float(v)
    nonzero = any(c in "123456789" for c in v.split("e")[0].split("E")[0])
    if t.name == "float4":
        if math.isinf(f) or abs(f) > _FLT_MAX:
            raise SqlError(NUMERIC_VALUE_OUT_OF_RANGE, f'"{s}" is out of range for type real')
        f32 = round_f32(f)
        if f32 == 0 and nonzero:
            raise SqlError(NUMERIC_VALUE_OUT_OF_RANGE, f'"{s}" is out of range for type real')
        return f32
    if math.isinf(f) or (f == 0 and nonzero):
        raise SqlError(NUMERIC_VALUE_OUT_OF_RANGE, f'"{s}" is out of range for type double precision')
    return f


_NUMERIC_SPECIAL = {
    "nan": Decimal("NaN"),
    "infinity": Decimal("Infinity"),
    "+infinity": Decimal("Infinity"),
    "-infinity": Decimal("-Infinity"),
    "inf": Decimal("Infinity"),
    "+inf": Decimal("Infinity"),
    "-inf": Decimal("-Infinity"),
}


def fit_numeric(d: Decimal, t: SqlType) -> Decimal:
    """numeric(p, s): round half away from zero to s digits; 22003 if it does not fit."""
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


def _parse_numeric(s: str, t: SqlType) -> Decimal:
    v = s.strip()
    special = _NUMERIC_SPECIAL.get(v.lower())
    if special is not None:
        return special
    if not _FLOAT_RE.match(v):
        raise _syntax(t, s)
    try:
        d = Decimal(v)
    except InvalidOperation:
        raise _syntax(t, s) from None
    return fit_numeric(d, t)


def _parse_mz_timestamp(s: str, t: SqlType) -> int:
    """mz_timestamp: milliseconds since the Unix epoch, or a timestamptz's text."""
    st = s.strip()
    if re.fullmatch(r"\d+", st):
        return int(st)
    v = datetime_text.parse_timestamp(s, tz=True)
    aware = v if v.tzinfo else v.replace(tzinfo=dt.UTC)
    return int(aware.timestamp() * 1000)


# ---- date / time ------------------------------------------------------------------------

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


def _parse_date(s: str, t: SqlType) -> dt.date:
    return datetime_text.parse_date(s)


def _parse_time(s: str, t: SqlType) -> dt.time:
    return datetime_text.parse_time(s)


def _parse_timestamp(s: str, t: SqlType) -> dt.datetime:
    v = datetime_text.parse_timestamp(s, tz=t.name == "timestamptz")
    return fit_datetime(v, t) if t.typmod >= 0 else v


def _parse_interval(s: str, t: SqlType) -> Interval:
    return parse_interval(s, t.typmod)


# ---- bytea, uuid, json, reg* --------------------------------------------------------------

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


def _parse_bytea(s: str, t: SqlType) -> bytes:
    return parse_bytea(s)


_UUID_RE = re.compile(r"(\{)?((?:[0-9a-fA-F]{4}-?){7}[0-9a-fA-F]{4})(?(1)\})")


def _parse_uuid(s: str, t: SqlType) -> uuid.UUID:
    """uuid_in: 32 hex digits, a hyphen allowed after any group of four, optionally in braces."""
    m = _UUID_RE.fullmatch(s)
    if m is None:
        raise _syntax(t, s)
    return uuid.UUID(m.group(2).replace("-", ""))


def _parse_jsonb(s: str, t: SqlType) -> str:
    """jsonb_in: the canonical text of the value."""
    from sql import jsonb

    return jsonb.dumps(jsonb.parse(s))


def _parse_json(s: str, t: SqlType) -> str:
    """json_in: validated, kept as written."""
    from sql import jsonb

    jsonb.parse(s)
    return s


def _parse_char(s: str, t: SqlType) -> str:
    """charin: the first byte (an ASCII character here; a non-ASCII first character or the
    `\\ooo` octal form is refused)."""
    if s == "" or (s[0].isascii() and not re.fullmatch(r"\\[0-3][0-7][0-7]", s)):
        return s[:1]
    raise unsupported('this "char" input')


_REG_TYPES = frozenset({"regclass", "regtype", "regproc", "regprocedure", "regnamespace", "regrole"})


def _parse_reg(s: str, t: SqlType) -> int | str:
    """reg* input: an OID, else the name (resolved against the catalog by the caller)."""
    return int(s) if s.strip().isdigit() else s


# ---- arrays (one-dimensional; int2vector / oidvector: space-separated) -------------------

_VECTOR_TYPES = frozenset({"int2vector", "oidvector"})


def split_array_text(text: str, t: SqlType) -> list[str | None]:
    """The element texts (None = NULL) of a one-dimensional array's text form."""
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


def _parse_array(s: str, t: SqlType) -> list[Any]:
    elem = SqlType(ARRAY_ELEMENT[t.name])
    return [None if x is None else parse_text(x, elem) for x in split_array_text(s, t)]


# ---- dispatch -----------------------------------------------------------------------------

_STRING_INPUT = frozenset({"text", "unknown"})

_TEXT_PARSERS: dict[str, Callable[[str, SqlType], Any]] = {
    "name": _parse_name,
    "char": _parse_char,
    "varchar": _parse_varchar,
    "bpchar": _parse_varchar,
    "bool": _parse_bool,
    "int2": _parse_int,
    "int4": _parse_int,
    "int8": _parse_int,
    "uint8": _parse_int,
    "oid": _parse_oid,
    "float4": _parse_float,
    "float8": _parse_float,
    "numeric": _parse_numeric,
    "mz_timestamp": _parse_mz_timestamp,
    "date": _parse_date,
    "time": _parse_time,
    "timestamp": _parse_timestamp,
    "timestamptz": _parse_timestamp,
    "interval": _parse_interval,
    "bytea": _parse_bytea,
    "uuid": _parse_uuid,
    "jsonb": _parse_jsonb,
    "json": _parse_json,
    "regclass": _parse_reg,
    "regtype": _parse_reg,
    "regproc": _parse_reg,
    "regprocedure": _parse_reg,
    "regnamespace": _parse_reg,
    "regrole": _parse_reg,
}


def parse_text(s: str, t: SqlType) -> Any:
    """The type's input function: text -> Python value (see `sql.types`); 22P02 on bad
    input, 0A000 for a type without one."""
    if "\x00" in s:
        raise SqlError(CHARACTER_NOT_IN_REPERTOIRE, 'invalid byte sequence for encoding "UTF8": 0x00')
    if t.name in _STRING_INPUT:
        return s
    if t.name in ARRAY_ELEMENT:
        return _parse_array(s, t)
    parser = _TEXT_PARSERS.get(t.name)
    if parser is None:
        raise unsupported(f"text input of type {type_label(t)}")
    return parser(s, t)


def parse_value(s: str, t: SqlType) -> Any:
    """`parse_text` for a value the engine computes with: a numeric NaN / Infinity (also
    inside an array) is refused with 0A000, as Spark's decimal has neither, and so is a reg*
    value (its input needs the catalog: only catalog queries resolve it)."""
    if t.name in _REG_TYPES:
        raise unsupported(f"text input of type {type_label(t)} outside catalog queries")
    v = parse_text(s, t)
    for d in v if isinstance(v, list) else (v,):
        if isinstance(d, Decimal) and not d.is_finite():
            raise unsupported(f"numeric value {'NaN' if d.is_nan() else 'Infinity'}")
    return v
