"""Arrow representation of SQL values in shard batches.

A batch is an Arrow table with columns `c0 .. cN` (the item's columns, typed by
`arrow_type`), `time` (int64, epoch ms) and `diff` (int64). Python values follow the
representation documented in `sql/types.py`.

| SQL type                                   | Arrow type                                   |
|--------------------------------------------|----------------------------------------------|
| bool                                       | bool                                         |
| int2 / int4 / int8                         | int16 / int32 / int64                        |
| float4 / float8                            | float32 / float64                            |
| numeric(p, s)                              | decimal128(p, s)                             |
| numeric (unconstrained)                    | decimal128(38, 10)                           |
| text, varchar, bpchar, name, char, jsonb,  | string                                       |
| json, uuid, unknown                        |                                              |
| date                                       | date32                                       |
| time                                       | int64 (microseconds since midnight)          |
| timestamp                                  | timestamp('us')                              |
| timestamptz                                | timestamp('us', tz='UTC')                    |
| interval                                   | struct<months int32, days int32, micros int64> |
| bytea                                      | binary                                       |
| oid, uint8, regclass, regtype, regproc,    | int64                                        |
| regnamespace                               |                                              |
| one-dimensional array `_t` (e.g. int4[])   | list<arrow_type(t)>                          |
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from sql.errors import (
    FEATURE_NOT_SUPPORTED,
    INVALID_PARAMETER_VALUE,
    NUMERIC_VALUE_OUT_OF_RANGE,
    SqlError,
)
from sql.types import Interval, SqlType

TIME_COLUMN = "time"
DIFF_COLUMN = "diff"

UNCONSTRAINED_NUMERIC_PRECISION = 38
UNCONSTRAINED_NUMERIC_SCALE = 10

INTERVAL_ARROW = pa.struct(
    [
        pa.field("months", pa.int32()),
        pa.field("days", pa.int32()),
        pa.field("micros", pa.int64()),
    ]
)

_STRING_TYPES = frozenset(
    {"text", "varchar", "bpchar", "name", "char", "jsonb", "json", "uuid", "unknown"}
)
_INT64_TYPES = frozenset({"int8", "oid", "uint8", "regclass", "regtype", "regproc", "regnamespace"})
_SIMPLE: dict[str, pa.DataType] = {
    "bool": pa.bool_(),
    "int2": pa.int16(),
    "int4": pa.int32(),
    "float4": pa.float32(),
    "float8": pa.float64(),
    "date": pa.date32(),
    "time": pa.int64(),
    "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "interval": INTERVAL_ARROW,
    "bytea": pa.binary(),
}

_UTC = dt.UTC


def column_name(i: int) -> str:
    return f"c{i}"


def arrow_type(t: SqlType) -> pa.DataType:
    """The Arrow type that stores values of SQL type `t`."""
    if t.name in _SIMPLE:
        return _SIMPLE[t.name]
    if t.name in _INT64_TYPES:
        return pa.int64()
    if t.name in _STRING_TYPES:
        return pa.string()
    if t.name == "numeric":
        p, s = _numeric_ps(t)
        return pa.decimal128(p, s)
    if (e := _array_element(t)) is not None:
        return pa.list_(arrow_type(e))
    raise SqlError(FEATURE_NOT_SUPPORTED, f"type {t} not yet supported in tables")


def batch_schema(columns: Sequence[SqlType]) -> pa.Schema:
    """Schema of a batch for an item with the given column types."""
    fields = [pa.field(column_name(i), arrow_type(t)) for i, t in enumerate(columns)]
    fields.append(pa.field(TIME_COLUMN, pa.int64(), nullable=False))
    fields.append(pa.field(DIFF_COLUMN, pa.int64(), nullable=False))
    return pa.schema(fields)


def _numeric_ps(t: SqlType) -> tuple[int, int]:
    if t.numeric_precision_scale() is None:
        return UNCONSTRAINED_NUMERIC_PRECISION, UNCONSTRAINED_NUMERIC_SCALE
    return t.decimal_precision_scale()


# --------------------------------------------------------------------------------------
# Python -> Arrow


def _to_decimal(t: SqlType) -> Callable[[Any], decimal.Decimal]:
    p, s = _numeric_ps(t)
    unconstrained = t.numeric_precision_scale() is None
    quantum = decimal.Decimal(1).scaleb(-s)
    ctx = decimal.Context(prec=80, rounding=decimal.ROUND_HALF_UP)

    def conv(v: Any) -> decimal.Decimal:
        d = v if isinstance(v, decimal.Decimal) else decimal.Decimal(str(v))
        if not d.is_finite():
            raise SqlError(NUMERIC_VALUE_OUT_OF_RANGE, f"numeric value {d} cannot be stored")
        try:
            q = d.quantize(quantum, context=ctx)
        except decimal.InvalidOperation:  # more digits than the context holds
            raise SqlError(NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow") from None
        if len(q.as_tuple().digits) > p and q != 0:
            raise SqlError(NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow")
        if unconstrained and q != d:
            # Postgres keeps every digit of a numeric without a scale; rounding would store
            # another value
            raise SqlError(FEATURE_NOT_SUPPORTED, f"numeric value {d:f} has more than {s} fractional digits:"
                           f" a numeric column without a scale keeps {s}",
                           hint=f"Declare the column numeric(p, s) or round the value to {s} digits.")
        return q

    return conv


def _time_to_micros(v: Any) -> int:
    if isinstance(v, dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    if isinstance(v, dt.timedelta):
        return (v.days * 86_400 + v.seconds) * 1_000_000 + v.microseconds
    return int(v)


def _interval_to_struct(v: Any) -> dict[str, int]:
    if isinstance(v, Interval):
        return {"months": v.months, "days": v.days, "micros": v.micros}
    if isinstance(v, dt.timedelta):
        return {
            "months": 0,
            "days": v.days,
            "micros": v.seconds * 1_000_000 + v.microseconds,
        }
    if isinstance(v, dict):
        return {"months": v["months"], "days": v["days"], "micros": v["micros"]}
    raise TypeError(f"not an interval: {v!r}")


def _timestamp_naive(v: Any) -> Any:
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(_UTC).replace(tzinfo=None)
    return v


def _timestamp_utc(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            return v.replace(tzinfo=_UTC)
        return v.astimezone(_UTC)
    return v


def _uuid_text(v: Any) -> str:
    return str(v) if isinstance(v, uuid.UUID) else str(uuid.UUID(str(v)))


def _array_element(t: SqlType) -> SqlType | None:
    """The element type of a one-dimensional array type (not int2vector/oidvector)."""
    return t.element if t.name.startswith("_") else None


def _each(conv: Callable[[Any], Any] | None) -> Callable[[Any], Any] | None:
    """A converter of lists applying `conv` to every non-NULL element."""
    if conv is None:
        return None
    return lambda vs: [None if v is None else conv(v) for v in vs]


def _to_python_converter(t: SqlType) -> Callable[[Any], Any] | None:
    if (e := _array_element(t)) is not None:
        return _each(_to_python_converter(e))
    match t.name:
        case "numeric":
            return _to_decimal(t)
        case "time":
            return _time_to_micros
        case "interval":
            return _interval_to_struct
        case "timestamp":
            return _timestamp_naive
        case "timestamptz":
            return _timestamp_utc
        case "uuid":
            return _uuid_text
        case "bytea":
            return lambda v: bytes(v) if not isinstance(v, bytes) else v
        case _:
            return None


def values_to_arrow(t: SqlType, values: Sequence[Any]) -> pa.Array:
    """One column of Python values (None = NULL) as an Arrow array of `arrow_type(t)`."""
    at = arrow_type(t)
    conv = _to_python_converter(t)
    if conv is not None:
        values = [None if v is None else conv(v) for v in values]
    try:
        return pa.array(values, type=at)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError) as e:
        state = NUMERIC_VALUE_OUT_OF_RANGE if t.is_numeric else INVALID_PARAMETER_VALUE
        raise SqlError(state, f"cannot store value as {t}: {e}") from e


def rows_to_arrow(
    columns: Sequence[SqlType],
    rows: Sequence[tuple[Any, ...]],
    time: int,
    diff: int | Sequence[int],
) -> pa.Table:
    """Rows of Python values -> a batch table `c0..cN, time, diff`.

    `diff` is one multiplicity for every row or one per row."""
    n = len(rows)
    arrays: list[pa.Array] = []
    for i, t in enumerate(columns):
        arrays.append(values_to_arrow(t, [r[i] for r in rows]))
    arrays.append(pa.array([time] * n, type=pa.int64()))
    if isinstance(diff, int):
        arrays.append(pa.array([diff] * n, type=pa.int64()))
    else:
        if len(diff) != n:
            raise ValueError(f"{len(diff)} diffs for {n} rows")
        arrays.append(pa.array(list(diff), type=pa.int64()))
    return pa.Table.from_arrays(arrays, schema=batch_schema(columns))


# --------------------------------------------------------------------------------------
# Arrow -> Python


def _normalize_unconstrained(d: decimal.Decimal) -> decimal.Decimal:
    n = d.normalize()
    if n.as_tuple().exponent > 0:  # type: ignore[operator]
        n = n.quantize(decimal.Decimal(1))
    return n


def _from_arrow_converter(t: SqlType) -> Callable[[Any], Any] | None:
    if (e := _array_element(t)) is not None:
        return _each(_from_arrow_converter(e))
    match t.name:
        case "numeric":
            if t.numeric_precision_scale() is None:
                return _normalize_unconstrained
            return None
        case "time":

            def to_time(v: int) -> dt.time:
                secs, micros = divmod(int(v), 1_000_000)
                mins, s = divmod(secs, 60)
                h, m = divmod(mins, 60)
                return dt.time(h % 24, m, s, micros)

            return to_time
        case "interval":
            return lambda v: Interval(v["months"], v["days"], v["micros"])
        case "timestamptz":
            return lambda v: v.astimezone(_UTC)
        case "uuid":
            return uuid.UUID
        case _:
            return None


def arrow_column_to_values(t: SqlType, arr: pa.Array | pa.ChunkedArray) -> list[Any]:
    values = arr.to_pylist()
    conv = _from_arrow_converter(t)
    if conv is None:
        return values
    return [None if v is None else conv(v) for v in values]


def arrow_to_rows(table: pa.Table, columns: Sequence[SqlType]) -> list[tuple[Any, ...]]:
    """The data columns `c0..cN` of a batch as Python rows (time and diff are ignored)."""
    cols = [arrow_column_to_values(t, table.column(column_name(i))) for i, t in enumerate(columns)]
    if not cols:
        return [() for _ in range(table.num_rows)]
    return list(zip(*cols, strict=True))


def arrow_to_updates(
    table: pa.Table, columns: Sequence[SqlType]
) -> list[tuple[tuple[Any, ...], int, int]]:
    """A batch as `(row, time, diff)` updates."""
    rows = arrow_to_rows(table, columns)
    times = table.column(TIME_COLUMN).to_pylist()
    diffs = table.column(DIFF_COLUMN).to_pylist()
    return list(zip(rows, times, diffs, strict=True))
