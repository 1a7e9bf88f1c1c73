"""SqlType -> Spark DataType, and Arrow results -> Python values (sql/types.py docstring)."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

from pyspark.sql import types as T

from sql.types import Interval, SqlType

INTERVAL_STRUCT = T.StructType([
    T.StructField("months", T.IntegerType()),
    T.StructField("days", T.IntegerType()),
    T.StructField("micros", T.LongType()),
])


def spark_type(t: SqlType) -> T.DataType:
    n = t.name
    if n == "bool":
        return T.BooleanType()
    if n == "int2":
        return T.ShortType()
    if n == "int4":
        return T.IntegerType()
    if n in ("int8", "oid", "uint8", "mz_timestamp"):
        return T.LongType()
    if n == "float4":
        return T.FloatType()
    if n == "float8":
        return T.DoubleType()
    if n == "numeric":
        return T.DecimalType(*t.decimal_precision_scale())
    if n in ("text", "varchar", "bpchar", "name", "jsonb", "uuid", "unknown"):
        return T.StringType()
    if n == "date":
        return T.DateType()
    if n == "timestamp":
        return T.TimestampNTZType()
    if n == "timestamptz":
        return T.TimestampType()
    if n == "time":
        return T.LongType()
    if n == "interval":
        return INTERVAL_STRUCT
    if n == "bytea":
        return T.BinaryType()
    if n == "record":  # planner-internal composites (window functions, ordered aggregates)
        return T.StructType([T.StructField(f"f{i}", spark_type(f)) for i, f in enumerate(t.fields)])
    if n == "list":
        return T.ArrayType(spark_type(t.fields[0]))
    if (e := t.element) is not None and n.startswith("_"):
        return T.ArrayType(spark_type(e))
    raise ValueError(f"no Spark type for {t}")


def to_spark_value(v: Any, t: SqlType) -> Any:
    """Python value (sql/types.py) -> the value Spark expects for spark_type(t)."""
    if v is None:
        return None
    n = t.name
    if (e := t.element) is not None and n.startswith("_"):
        return [to_spark_value(x, e) for x in v]
    if n == "interval":
        return (v.months, v.days, v.micros)
    if n == "time":
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    if n == "uuid":
        return str(v)
    if n == "timestamptz" and isinstance(v, dt.datetime) and v.tzinfo is None:
        return v.replace(tzinfo=dt.UTC)
    return v


def from_arrow_value(v: Any, t: SqlType) -> Any:
    if v is None:
        return None
    n = t.name
    if (e := t.element) is not None and n.startswith("_"):
        return [from_arrow_value(x, e) for x in v]
    if n == "record" and t.fields:
        fields = list(v.values()) if isinstance(v, dict) else list(v)
        return tuple(from_arrow_value(x, ft) for x, ft in zip(fields, t.fields, strict=True))
    if n == "interval":
        if isinstance(v, dict):
            return Interval(v["months"], v["days"], v["micros"])
        return Interval(*v)
    if n == "time":
        us = int(v)
        s, micro = divmod(us, 1_000_000)
        m, sec = divmod(s, 60)
        h, mi = divmod(m, 60)
        return dt.time(h, mi, sec, micro)
    if n == "uuid":
        return uuid.UUID(v)
    if n == "timestamptz" and isinstance(v, dt.datetime):
        return v.astimezone(dt.UTC) if v.tzinfo else v.replace(tzinfo=dt.UTC)
    if n == "timestamp" and isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.replace(tzinfo=None)
    if n == "numeric" and isinstance(v, Decimal):
        return _trim_decimal(v, t)
    if n == "float4" and isinstance(v, float):
        return v
    return v


def _trim_decimal(d: Decimal, t: SqlType) -> Decimal:
    if t.numeric_precision_scale() is not None:
        return d
    # unconstrained numeric: drop the storage scale's trailing zeros (Postgres keeps the
    # value's own scale; we do not track it through Spark's fixed-scale decimals)
    if d == d.to_integral_value():
        return d.quantize(Decimal(1))
    return d.normalize()
