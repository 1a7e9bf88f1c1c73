"""Postgres value codec: Python values (see `sql.types`) <-> pgwire text and binary formats.

Text output follows Postgres' output functions with the defaults Materialize clients see
(`DateStyle=ISO, MDY`, `TimeZone=UTC`); IntervalStyle, bytea_output and extra_float_digits
follow the session (`TextStyle`). Binary formats are the ones of
Postgres' send/recv functions. Input errors are `SqlError`s with Postgres' SQLSTATEs and
messages.
"""

from __future__ import annotations

import datetime as dt
import json
import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from server.pgwire.record_codec import record_binary_encoder, record_text_encoder
from sql import interval_text
from sql.errors import (
    CHARACTER_NOT_IN_REPERTOIRE,
    DATETIME_FIELD_OVERFLOW,
    FEATURE_NOT_SUPPORTED,
    INVALID_BINARY_REPRESENTATION,
    SqlError,
)
from sql.literal import format_float4, format_float8, format_float_digits, quote_array_element
from sql.text_input import parse_text, round_f32, type_label
from sql.types import ARRAY_ELEMENT, Interval, SqlType

Encoder = Callable[[Any], bytes]
Decoder = Callable[[bytes], Any]

_PG_EPOCH_DATE = dt.date(2000, 1, 1)
_PG_EPOCH_ORDINAL = _PG_EPOCH_DATE.toordinal()
_PG_EPOCH = dt.datetime(2000, 1, 1)
_PG_EPOCH_TZ = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
_UNIX_EPOCH = dt.datetime(1970, 1, 1)
_USECS_PER_DAY = 86_400_000_000
_USECS_PER_HOUR = 3_600_000_000
_USECS_PER_MINUTE = 60_000_000
_USECS_PER_SEC = 1_000_000

_I16 = struct.Struct("!h")
_I32 = struct.Struct("!i")
_U32 = struct.Struct("!I")
_I64 = struct.Struct("!q")
_U64 = struct.Struct("!Q")
_F32 = struct.Struct("!f")
_F64 = struct.Struct("!d")
_INTERVAL = struct.Struct("!qii")

TEXT_TYPE = SqlType("text")

# ---------------------------------------------------------------------------------------------
# Text output
# ---------------------------------------------------------------------------------------------


def format_numeric(v: Any) -> str:
    if not isinstance(v, Decimal):
        v = Decimal(repr(v)) if isinstance(v, float) else Decimal(v)
    if v.is_nan():
        return "NaN"
    if v.is_infinite():
        return "Infinity" if v > 0 else "-Infinity"
    if v.is_zero():
        v = v.copy_abs()
    return format(v, "f")


def _frac(micro: int) -> str:
    return f".{micro:06d}".rstrip("0") if micro else ""


def format_time(v: dt.time) -> str:
    return f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}{_frac(v.microsecond)}"


def format_date(v: dt.date) -> str:
    if isinstance(v, dt.datetime):
        v = v.date()
    return f"{v.year:04d}-{v.month:02d}-{v.day:02d}"


def format_timestamp(v: dt.datetime) -> str:
    return (
        f"{v.year:04d}-{v.month:02d}-{v.day:02d} "
        f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}{_frac(v.microsecond)}"
    )


def format_timestamptz(v: dt.datetime) -> str:
    if v.tzinfo is not None:
        v = v.astimezone(dt.UTC)
    return format_timestamp(v) + "+00"


def _as_interval(v: Any) -> Interval:
    if isinstance(v, Interval):
        return v
    if isinstance(v, dt.timedelta):
        return Interval(0, v.days, v.seconds * _USECS_PER_SEC + v.microseconds)
    raise TypeError(f"not an interval: {v!r}")


def format_interval(v: Any, style: str = "postgres") -> str:
    """EncodeInterval in the session's IntervalStyle (sql.interval_text)."""
    return interval_text.format_interval(_as_interval(v), style)


def format_bytea(v: bytes, output: str = "hex") -> str:
    """byteaout in `output` (the session's bytea_output): hex `\\x…`, or escape: printable
    ASCII as itself, a backslash doubled, any other byte as `\\ooo`."""
    if output != "escape":
        return "\\x" + bytes(v).hex()
    return "".join("\\\\" if b == 0x5C else chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}" for b in bytes(v))


@dataclass(frozen=True)
class TextStyle:
    """The session settings text output depends on: IntervalStyle, bytea_output and
    extra_float_digits (> 0: shortest round-trip floats; <= 0: that many digits fewer than
    FLT_DIG / DBL_DIG)."""

    interval_style: str = "postgres"
    bytea_output: str = "hex"
    extra_float_digits: int = 1


DEFAULT_STYLE = TextStyle()


def _json_text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def _enc_str(v: Any) -> bytes:
    return (v if isinstance(v, str) else str(v)).encode()


def _enc_int(v: Any) -> bytes:
    return b"%d" % v


_TEXT_ENCODERS: dict[str, Encoder] = {
    "bool": lambda v: b"t" if v else b"f",
    "int2": _enc_int,
    "int4": _enc_int,
    "int8": _enc_int,
    "oid": _enc_int,
    "uint8": _enc_int,
    "float4": lambda v: format_float4(v).encode(),
    "float8": lambda v: format_float8(v).encode(),
    "numeric": lambda v: format_numeric(v).encode(),
    "date": lambda v: format_date(v).encode(),
    "time": lambda v: format_time(v).encode(),
    "timestamp": lambda v: format_timestamp(v).encode(),
    "timestamptz": lambda v: format_timestamptz(v).encode(),
    "interval": lambda v: format_interval(v).encode(),
    "bytea": lambda v: format_bytea(v).encode(),
    "uuid": lambda v: str(v).encode(),
    "jsonb": lambda v: _json_text(v).encode(),
    "json": lambda v: _json_text(v).encode(),
}


def text_encoder(t: SqlType, style: TextStyle = DEFAULT_STYLE) -> Encoder:
    """The text-format encoder for values of type `t` (str() for types without a rule), in
    the session's `style` (IntervalStyle, bytea_output, extra_float_digits)."""
    if t.name in ARRAY_ELEMENT:
        return _array_text_encoder(t, style)
    if t.name == "record":
        return record_text_encoder(t, lambda ft: text_encoder(ft, style))
    if t.name == "interval" and style.interval_style != "postgres":
        return lambda v: format_interval(v, style.interval_style).encode()
    if t.name == "bytea" and style.bytea_output == "escape":
        return lambda v: format_bytea(v, "escape").encode()
    if t.name == "float8" and style.extra_float_digits <= 0:
        return lambda v: format_float_digits(float(v), 15 + style.extra_float_digits).encode()
    if t.name == "float4" and style.extra_float_digits <= 0:
        return lambda v: format_float_digits(round_f32(float(v)), 6 + style.extra_float_digits).encode()
    return _TEXT_ENCODERS.get(t.name, _enc_str)


def encode_text(value: Any, sqltype: SqlType) -> bytes:
    return text_encoder(sqltype)(value)


# ---------------------------------------------------------------------------------------------
# Binary output
# ---------------------------------------------------------------------------------------------

_NUMERIC_POS = 0x0000
_NUMERIC_NEG = 0x4000
_NUMERIC_NAN = 0xC000
_NUMERIC_PINF = 0xD000
_NUMERIC_NINF = 0xF000


def numeric_to_binary(v: Any) -> bytes:
    """numeric_send: ndigits, weight, sign, dscale, then base-10000 digits."""
    if not isinstance(v, Decimal):
        v = Decimal(repr(v)) if isinstance(v, float) else Decimal(v)
    if v.is_nan():
        return struct.pack("!hhHh", 0, 0, _NUMERIC_NAN, 0)
    if v.is_infinite():
        # Postgres reports dscale 32 for infinities (header bits of the special value).
        return struct.pack("!hhHh", 0, 0, _NUMERIC_PINF if v > 0 else _NUMERIC_NINF, 32)
    sign, digit_tuple, exponent = v.as_tuple()
    exponent = int(exponent)
    dscale = max(0, -exponent)
    n = int("".join(map(str, digit_tuple)) or "0")
    frac_groups = (dscale + 3) // 4
    n *= 10 ** (exponent + 4 * frac_groups)
    groups: list[int] = []
    while n:
        n, g = divmod(n, 10000)
        groups.append(g)
    groups.reverse()
    if not groups:
        return struct.pack("!hhHh", 0, 0, _NUMERIC_POS, dscale)
    weight = len(groups) - 1 - frac_groups
    while groups and groups[-1] == 0:
        groups.pop()
    return struct.pack(
        f"!hhHh{len(groups)}h",
        len(groups),
        weight,
        _NUMERIC_NEG if sign else _NUMERIC_POS,
        dscale,
        *groups,
    )


def _micros(delta: dt.timedelta) -> int:
    return delta.days * _USECS_PER_DAY + delta.seconds * _USECS_PER_SEC + delta.microseconds


def _time_micros(v: dt.time) -> int:
    return ((v.hour * 60 + v.minute) * 60 + v.second) * _USECS_PER_SEC + v.microsecond


def _enc_timestamptz_bin(v: dt.datetime) -> bytes:
    if v.tzinfo is None:
        return _I64.pack(_micros(v - _PG_EPOCH))
    return _I64.pack(_micros(v - _PG_EPOCH_TZ))


def _enc_interval_bin(v: Any) -> bytes:
    iv = _as_interval(v)
    return _INTERVAL.pack(iv.micros, iv.days, iv.months)


def _enc_uuid_bin(v: Any) -> bytes:
    return v.bytes if isinstance(v, uuid.UUID) else uuid.UUID(str(v)).bytes


def _enc_date_bin(v: dt.date) -> bytes:
    if isinstance(v, dt.datetime):
        v = v.date()
    return _I32.pack(v.toordinal() - _PG_EPOCH_ORDINAL)


_BINARY_ENCODERS: dict[str, Encoder] = {
    "bool": lambda v: b"\x01" if v else b"\x00",
    "int2": _I16.pack,
    "int4": _I32.pack,
    "int8": _I64.pack,
    "oid": _U32.pack,
    "regclass": _U32.pack,
    "regtype": _U32.pack,
    "regproc": _U32.pack,
    "regnamespace": _U32.pack,
    "uint8": _U64.pack,
    "float4": lambda v: _F32.pack(float(v)),
    "float8": lambda v: _F64.pack(float(v)),
    "numeric": numeric_to_binary,
    "text": _enc_str,
    "varchar": _enc_str,
    "bpchar": _enc_str,
    "name": _enc_str,
    "char": _enc_str,
    "unknown": _enc_str,
    "json": lambda v: _json_text(v).encode(),
    "jsonb": lambda v: b"\x01" + _json_text(v).encode(),
    "date": _enc_date_bin,
    "time": lambda v: _I64.pack(_time_micros(v)),
    "timestamp": lambda v: _I64.pack(_micros(v.replace(tzinfo=None) - _PG_EPOCH)),
    "timestamptz": _enc_timestamptz_bin,
    "interval": _enc_interval_bin,
    "bytea": bytes,
    "uuid": _enc_uuid_bin,
}


def has_binary(t: SqlType) -> bool:
    """Whether values of `t` can be sent and received in binary format."""
    if t.name in ARRAY_ELEMENT:
        return has_binary(SqlType(ARRAY_ELEMENT[t.name]))
    if t.name == "record":
        return all(has_binary(f) for f in t.fields)
    return t.name in _BINARY_ENCODERS


def binary_encoder(t: SqlType) -> Encoder:
    if t.name in ARRAY_ELEMENT:
        return _array_binary_encoder(t)
    if t.name == "record":
        return record_binary_encoder(t, binary_encoder)
    enc = _BINARY_ENCODERS.get(t.name)
    if enc is None:
        raise SqlError("42883", f"no binary output function available for type {type_label(t)}")
    return enc


def encode_binary(value: Any, sqltype: SqlType) -> bytes:
    return binary_encoder(sqltype)(value)


# ---------------------------------------------------------------------------------------------
# Text input
# ---------------------------------------------------------------------------------------------


def bytes_to_str(data: bytes) -> str:
    """UTF-8 decode a value received from the client, rejecting NULs like Postgres."""
    if b"\x00" in data:
        raise SqlError(
            CHARACTER_NOT_IN_REPERTOIRE, 'invalid byte sequence for encoding "UTF8": 0x00'
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        bad = " ".join(f"0x{b:02x}" for b in e.object[e.start : e.end])
        raise SqlError(
            CHARACTER_NOT_IN_REPERTOIRE, f'invalid byte sequence for encoding "UTF8": {bad}'
        ) from None


def decode_text(data: bytes, sqltype: SqlType | None) -> Any:
    """Decode a text-format parameter with the type's input function (an unknown type
    decodes to str)."""
    text = bytes_to_str(bytes(data))
    return text if sqltype is None else parse_text(text, sqltype)


# ---------------------------------------------------------------------------------------------
# Binary input
# ---------------------------------------------------------------------------------------------


def _bad_binary() -> SqlError:
    return SqlError(INVALID_BINARY_REPRESENTATION, "incorrect binary data format")


def _fixed(st: struct.Struct) -> Decoder:
    def dec(data: bytes) -> Any:
        if len(data) != st.size:
            raise _bad_binary()
        return st.unpack(data)[0]

    return dec


def numeric_from_binary(data: bytes) -> Decimal:
    if len(data) < 8:
        raise _bad_binary()
    ndigits, weight, sign, dscale = struct.unpack_from("!hhHh", data)
    if ndigits < 0 or len(data) != 8 + 2 * ndigits or dscale < 0:
        raise _bad_binary()
    if sign == _NUMERIC_NAN:
        return Decimal("NaN")
    if sign == _NUMERIC_PINF:
        return Decimal("Infinity")
    if sign == _NUMERIC_NINF:
        return Decimal("-Infinity")
    if sign not in (_NUMERIC_POS, _NUMERIC_NEG):
        raise SqlError(INVALID_BINARY_REPRESENTATION, 'invalid sign in external "numeric" value')
    groups = struct.unpack_from(f"!{ndigits}h", data, 8)
    if any(not 0 <= g < 10000 for g in groups):
        raise SqlError(INVALID_BINARY_REPRESENTATION, 'invalid digit in external "numeric" value')
    n = 0
    for g in groups:
        n = n * 10000 + g
    exponent = (weight - ndigits + 1) * 4
    if exponent > -dscale:
        n *= 10 ** (exponent + dscale)
    elif exponent < -dscale:
        n //= 10 ** (-dscale - exponent)
    digits = tuple(int(c) for c in str(n))
    return Decimal((1 if sign == _NUMERIC_NEG else 0, digits, -dscale))


def _dec_str(data: bytes) -> str:
    return bytes_to_str(bytes(data))


def _dec_jsonb(data: bytes) -> str:
    if not data or data[0] != 1:
        raise SqlError(
            INVALID_BINARY_REPRESENTATION,
            f"unsupported jsonb version number {data[0] if data else 0}",
        )
    return parse_text(_dec_str(data[1:]), SqlType("jsonb"))


def _dec_bool(data: bytes) -> bool:
    if len(data) != 1:
        raise _bad_binary()
    return data != b"\x00"


def _dec_float4(data: bytes) -> float:
    return _fixed(_F32)(data)


def _dec_date(data: bytes) -> dt.date:
    days = _fixed(_I32)(data)
    try:
        return dt.date.fromordinal(days + _PG_EPOCH_ORDINAL)
    except (ValueError, OverflowError):
        raise SqlError(DATETIME_FIELD_OVERFLOW, "date out of range") from None


def _dec_time(data: bytes) -> dt.time:
    us = _fixed(_I64)(data)
    if not 0 <= us < _USECS_PER_DAY:
        raise SqlError(DATETIME_FIELD_OVERFLOW, "time out of range")
    return (dt.datetime.min + dt.timedelta(microseconds=us)).time()


def _dec_timestamp(data: bytes) -> dt.datetime:
    us = _fixed(_I64)(data)
    try:
        return _PG_EPOCH + dt.timedelta(microseconds=us)
    except OverflowError:
        raise SqlError(DATETIME_FIELD_OVERFLOW, "timestamp out of range") from None


def _dec_timestamptz(data: bytes) -> dt.datetime:
    return _dec_timestamp(data).replace(tzinfo=dt.UTC)


def _dec_interval(data: bytes) -> Interval:
    if len(data) != _INTERVAL.size:
        raise _bad_binary()
    micros, days, months = _INTERVAL.unpack(data)
    return Interval(months, days, micros)


def _dec_uuid(data: bytes) -> uuid.UUID:
    if len(data) != 16:
        raise _bad_binary()
    return uuid.UUID(bytes=bytes(data))


_BINARY_DECODERS: dict[str, Decoder] = {
    "bool": _dec_bool,
    "int2": _fixed(_I16),
    "int4": _fixed(_I32),
    "int8": _fixed(_I64),
    "oid": _fixed(_U32),
    "regclass": _fixed(_U32),
    "regtype": _fixed(_U32),
    "regproc": _fixed(_U32),
    "regnamespace": _fixed(_U32),
    "uint8": _fixed(_U64),
    "float4": _dec_float4,
    "float8": _fixed(_F64),
    "numeric": numeric_from_binary,
    "text": _dec_str,
    "varchar": _dec_str,
    "bpchar": _dec_str,
    "name": _dec_str,
    "char": _dec_str,
    "unknown": _dec_str,
    "json": lambda d: parse_text(_dec_str(d), SqlType("json")),
    "jsonb": _dec_jsonb,
    "date": _dec_date,
    "time": _dec_time,
    "timestamp": _dec_timestamp,
    "timestamptz": _dec_timestamptz,
    "interval": _dec_interval,
    "bytea": bytes,
    "uuid": _dec_uuid,
}


def decode_binary(data: bytes, sqltype: SqlType | None) -> Any:
    """Decode a binary-format parameter (an unknown type is taken as UTF-8 text)."""
    if sqltype is None:
        return _dec_str(data)
    if sqltype.name in ARRAY_ELEMENT:
        return _decode_array_binary(data, sqltype)
    dec = _BINARY_DECODERS.get(sqltype.name)
    if dec is None:
        raise SqlError(
            FEATURE_NOT_SUPPORTED,
            f"binary format is not supported for parameters of type {type_label(sqltype)}",
        )
    return dec(data)


# ---------------------------------------------------------------------------------------------
# Arrays (one-dimensional; values are Python lists). int2vector / oidvector use the array
# binary format but a space-separated text form and 0-based subscripts.
# ---------------------------------------------------------------------------------------------

_VECTOR_TYPES = frozenset({"int2vector", "oidvector"})
_quote_array_element = quote_array_element


def _array_text_encoder(t: SqlType, style: TextStyle = DEFAULT_STYLE) -> Encoder:
    elem = SqlType(ARRAY_ELEMENT[t.name])
    enc = text_encoder(elem, style)
    if t.name in _VECTOR_TYPES:
        return lambda v: b" ".join(enc(x) for x in v)
    delim = b";" if elem.name == "box" else b","

    def encode(v: Any) -> bytes:
        if isinstance(v, (str, bytes)):
            return v.encode() if isinstance(v, str) else v
        parts = [
            b"NULL" if x is None else _quote_array_element(enc(x).decode()).encode() for x in v
        ]
        return b"{" + delim.join(parts) + b"}"

    return encode


def _array_binary_encoder(t: SqlType) -> Encoder:
    elem = SqlType(ARRAY_ELEMENT[t.name])
    enc = binary_encoder(elem)
    elem_oid = elem.oid
    lower = 0 if t.name in _VECTOR_TYPES else 1

    def encode(v: Any) -> bytes:
        items = list(v)
        if not items:
            return struct.pack("!iiI", 0, 0, elem_oid)
        has_null = any(x is None for x in items)
        out = [struct.pack("!iiIii", 1, 1 if has_null else 0, elem_oid, len(items), lower)]
        for x in items:
            if x is None:
                out.append(_I32.pack(-1))
            else:
                data = enc(x)
                out.append(_I32.pack(len(data)))
                out.append(data)
        return b"".join(out)

    return encode


def _decode_array_binary(data: bytes, t: SqlType) -> list[Any]:
    elem = SqlType(ARRAY_ELEMENT[t.name])
    try:
        ndim, _flags, _oid = struct.unpack_from("!iiI", data, 0)
        pos = 12
        if ndim == 0:
            return []
        if ndim != 1:
            raise SqlError(FEATURE_NOT_SUPPORTED, "multidimensional arrays are not supported")
        size, _lower = struct.unpack_from("!ii", data, pos)
        pos += 8
        out: list[Any] = []
        for _ in range(size):
            (length,) = _I32.unpack_from(data, pos)
            pos += 4
            if length < 0:
                out.append(None)
                continue
            out.append(decode_binary(bytes(data[pos : pos + length]), elem))
            pos += length
    except struct.error:
        raise _bad_binary() from None
    if pos != len(data):
        raise _bad_binary()
    return out
