"""Composite values on the wire (server/pgwire/record_codec.py): Postgres' record_out quoting and
record_send layout, for records of known field types and for DuckDB's structs (dicts)."""

from __future__ import annotations

import struct
from decimal import Decimal

import pytest

from server.pgwire.codec import encode_binary, encode_text, has_binary
from sql.errors import SqlError
from sql.text_input import parse_value
from sql.types import INT4, NUMERIC, TEXT, SqlType, record_type


@pytest.mark.parametrize(("value", "typ", "want"), [
    ({"x": 100, "n": 1}, SqlType("record"), "(100,1)"),  # _pg_expandarray's struct
    ((1, "a b", None, '"q"', "", [1, 2], "x\\y"), SqlType("record"), '(1,"a b",,"""q""","","{1,2}","x\\\\y")'),
    ((Decimal("1.50"), "(", ")"), record_type((NUMERIC, TEXT, TEXT)), '(1.50,"(",")")'),
    (((1, 2), None), SqlType("record"), '("(1,2)",)'),
])
def test_record_text(value: object, typ: SqlType, want: str) -> None:
    assert encode_text(value, typ).decode() == want


def test_record_binary() -> None:
    t = record_type((INT4, TEXT))
    assert has_binary(t)
    got = encode_binary((7, None), t)
    assert got == struct.pack("!iIiiIi", 2, 23, 4, 7, 25, -1)


@pytest.mark.parametrize("text", ["NaN", "-Infinity", "inf"])
def test_non_finite_numeric_is_refused(text: str) -> None:
    with pytest.raises(SqlError) as e:
        parse_value(text, NUMERIC)
    assert e.value.sqlstate == "0A000"
