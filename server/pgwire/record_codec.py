"""Composite (record) values on the wire: Postgres' record_out / record_send.

A record value arrives as a tuple, a Spark Row, or a dict (DuckDB's struct); its field types
are the record type's `fields` when the planner knows them, else inferred from the Python
values (DuckDB's catalog functions return structs of plain values)."""

from __future__ import annotations

import datetime as dt
import re
import struct
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from sql.types import ARRAY_ELEMENT, SqlType

Encoder = Callable[[Any], bytes]
_NEEDS_QUOTES = re.compile(r'[",\\()\s]')
_ARRAY_OF = {elem: arr for arr, elem in ARRAY_ELEMENT.items() if arr.startswith("_")}


def record_fields(v: Any) -> list[Any]:
    """The field values of a record value, in order."""
    if isinstance(v, dict):
        return list(v.values())
    return list(v)


def value_type(v: Any) -> SqlType:
    """The Postgres type of a Python value (for records whose field types are not known)."""
    if isinstance(v, bool):
        return SqlType("bool")
    if isinstance(v, int):
        return SqlType("int4" if -(2**31) <= v < 2**31 else "int8")
    if isinstance(v, float):
        return SqlType("float8")
    if isinstance(v, Decimal):
        return SqlType("numeric")
    if isinstance(v, bytes):
        return SqlType("bytea")
    if isinstance(v, dt.datetime):
        return SqlType("timestamptz" if v.tzinfo is not None else "timestamp")
    if isinstance(v, dt.date):
        return SqlType("date")
    if isinstance(v, dt.time):
        return SqlType("time")
    if isinstance(v, (dict, tuple)):
        return SqlType("record")
    if isinstance(v, list):
        elems = [value_type(x) for x in v if x is not None]
        arr = _ARRAY_OF.get(elems[0].name) if elems else None
        return SqlType(arr or "_text")
    return SqlType("text")


def _field_types(t: SqlType, fields: list[Any]) -> list[SqlType]:
    if t.name == "record" and len(t.fields) == len(fields):
        return list(t.fields)
    return [value_type(x) for x in fields]


def quote_record_field(s: str) -> str:
    """record_out's quoting: double quotes around an empty value or one holding a quote,
    backslash, comma, parenthesis or white space; quotes and backslashes doubled inside."""
    if s == "" or _NEEDS_QUOTES.search(s):
        return '"' + s.replace("\\", "\\\\").replace('"', '""') + '"'
    return s


def record_text_encoder(t: SqlType, text_encoder: Callable[[SqlType], Encoder]) -> Encoder:
    """`(f1,f2,...)`, a NULL field empty."""

    def encode(v: Any) -> bytes:
        if isinstance(v, (str, bytes)):
            return v.encode() if isinstance(v, str) else v
        fields = record_fields(v)
        types = _field_types(t, fields)
        parts = ["" if x is None else quote_record_field(text_encoder(ft)(x).decode()) for x, ft in zip(fields, types, strict=True)]
        return ("(" + ",".join(parts) + ")").encode()

    return encode


def record_binary_encoder(t: SqlType, binary_encoder: Callable[[SqlType], Encoder]) -> Encoder:
    """record_send: int32 field count, then per field its type OID, int32 length (-1 NULL), bytes."""

    def encode(v: Any) -> bytes:
        fields = record_fields(v)
        types = _field_types(t, fields)
        out = [struct.pack("!i", len(fields))]
        for x, ft in zip(fields, types, strict=True):
            if x is None:
                out.append(struct.pack("!Ii", ft.oid, -1))
            else:
                data = binary_encoder(ft)(x)
                out.append(struct.pack("!Ii", ft.oid, len(data)))
                out.append(data)
        return b"".join(out)

    return encode
