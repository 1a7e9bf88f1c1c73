"""SQL values <-> Arrow batches (catalog/storage/arrow_types.py)."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid

import pyarrow as pa
import pytest

from catalog.storage.arrow_types import (
    arrow_to_rows,
    arrow_to_updates,
    arrow_type,
    batch_schema,
    rows_to_arrow,
)
from sql.errors import SqlError
from sql.types import (
    BOOL,
    BPCHAR,
    BYTEA,
    DATE,
    FLOAT4,
    FLOAT8,
    INT2,
    INT4,
    INT8,
    INTERVAL,
    JSONB,
    NUMERIC,
    OID,
    TEXT,
    TIME,
    TIMESTAMP,
    TIMESTAMPTZ,
    UINT8,
    UUID,
    VARCHAR,
    Interval,
    SqlType,
    numeric_typmod,
)

D = decimal.Decimal
NUM_10_2 = SqlType("numeric", numeric_typmod(10, 2))


def test_arrow_type_mapping() -> None:
    assert arrow_type(BOOL) == pa.bool_()
    assert arrow_type(INT2) == pa.int16()
    assert arrow_type(INT4) == pa.int32()
    assert arrow_type(INT8) == pa.int64()
    assert arrow_type(FLOAT4) == pa.float32()
    assert arrow_type(FLOAT8) == pa.float64()
    assert arrow_type(NUM_10_2) == pa.decimal128(10, 2)
    assert arrow_type(NUMERIC) == pa.decimal128(38, 10)
    for t in (TEXT, VARCHAR, BPCHAR, JSONB, UUID):
        assert arrow_type(t) == pa.string()
    assert arrow_type(DATE) == pa.date32()
    assert arrow_type(TIME) == pa.int64()
    assert arrow_type(TIMESTAMP) == pa.timestamp("us")
    assert arrow_type(TIMESTAMPTZ) == pa.timestamp("us", tz="UTC")
    assert arrow_type(INTERVAL) == pa.struct(
        [("months", pa.int32()), ("days", pa.int32()), ("micros", pa.int64())]
    )
    assert arrow_type(BYTEA) == pa.binary()
    assert arrow_type(OID) == pa.int64()
    assert arrow_type(UINT8) == pa.int64()
    with pytest.raises(SqlError) as e:
        arrow_type(SqlType("record"))
    assert e.value.sqlstate == "0A000"


def test_batch_schema() -> None:
    s = batch_schema([INT4, TEXT])
    assert s.names == ["c0", "c1", "time", "diff"]
    assert s.field("time").type == pa.int64() and s.field("diff").type == pa.int64()


ALL_TYPES = [
    BOOL,
    INT2,
    INT4,
    INT8,
    FLOAT4,
    FLOAT8,
    NUM_10_2,
    NUMERIC,
    TEXT,
    VARCHAR,
    JSONB,
    UUID,
    DATE,
    TIME,
    TIMESTAMP,
    TIMESTAMPTZ,
    INTERVAL,
    BYTEA,
    OID,
    UINT8,
]
ROW = (
    True,
    -3,
    7,
    2**40,
    1.5,
    2.25,
    D("12.30"),
    D("3.14159"),
    "héllo",
    "v",
    '{"a": 1}',
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    dt.date(2024, 2, 29),
    dt.time(13, 14, 15, 16),
    dt.datetime(2024, 1, 2, 3, 4, 5, 6),
    dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=dt.UTC),
    Interval(1, 2, 3_000_000),
    b"\x00\xff",
    26,
    2**62,
)


def test_roundtrip_all_types() -> None:
    rows = [ROW, tuple(None for _ in ROW)]
    t = rows_to_arrow(ALL_TYPES, rows, time=42, diff=[1, -2])
    assert t.schema == batch_schema(ALL_TYPES)
    back = arrow_to_rows(t, ALL_TYPES)
    assert back == rows
    # timestamptz comes back as an aware UTC datetime, unconstrained numeric normalized.
    assert back[0][15].utcoffset() == dt.timedelta(0)
    assert str(back[0][7]) == "3.14159"
    assert str(back[0][6]) == "12.30"
    assert arrow_to_updates(t, ALL_TYPES) == [(rows[0], 42, 1), (rows[1], 42, -2)]


def test_conversions() -> None:
    cols = [NUMERIC, NUM_10_2, TIMESTAMPTZ, TIMESTAMP, UUID, NUMERIC]
    plus2 = dt.timezone(dt.timedelta(hours=2))
    rows = [
        (
            D("100"),
            D("1.005"),  # rounds half up to the declared scale
            dt.datetime(2024, 1, 1, 2, 0, tzinfo=plus2),
            dt.datetime(2024, 1, 1, 2, 0, tzinfo=plus2),
            "12345678-1234-5678-1234-567812345678",
            7,
        )
    ]
    (r,) = arrow_to_rows(rows_to_arrow(cols, rows, 1, 1), cols)
    assert str(r[0]) == "100"
    assert r[1] == D("1.01")
    assert r[2] == dt.datetime(2024, 1, 1, 0, 0, tzinfo=dt.UTC)
    assert r[3] == dt.datetime(2024, 1, 1, 0, 0)
    assert r[4] == uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert r[5] == D(7)


def test_no_columns() -> None:
    t = rows_to_arrow([], [(), ()], 5, 1)
    assert t.num_rows == 2 and t.column_names == ["time", "diff"]
    assert arrow_to_rows(t, []) == [(), ()]


@pytest.mark.parametrize(
    ("typ", "value"),
    [
        (NUM_10_2, D("123456789.5")),
        (NUMERIC, D("NaN")),
        (INT2, 40_000),
        (INT4, 2**40),
    ],
)
def test_out_of_range(typ: SqlType, value: object) -> None:
    with pytest.raises(SqlError) as e:
        rows_to_arrow([typ], [(value,)], 1, 1)
    assert e.value.sqlstate == "22003"


def test_diff_length_mismatch() -> None:
    with pytest.raises(ValueError):
        rows_to_arrow([INT4], [(1,), (2,)], 1, [1])
