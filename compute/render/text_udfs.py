"""Postgres text output of floating-point values and interval input, as Arrow Python UDFs.

Spark's CAST(double AS STRING) is Java's Double.toString ("-1.0", "1.0E20"); Postgres prints
the shortest round-trip digits in printf-like notation ("-1", "1e+20"), as `sql.literal
.format_float` does. Casts of float4/float8 to text call these by name. Spark has no parser
of Postgres' interval syntax: a computed text cast to interval calls mz_interval_in
(sql.interval.parse_interval), which returns "months days micros" or an ERR-tagged error
(compute.render.jsonb.checked); an interval cast to text calls mz_interval_out
(sql.interval_text, IntervalStyle postgres), an interval[] mz_interval_array_out; unistr(text)
calls mz_unistr (sql.unicode_escapes), to_timestamp(text, text) mz_to_timestamp (sql.to_timestamp).
"""

from __future__ import annotations

import datetime as dt

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from compute.render.jsonb import ERR
from sql.errors import SqlError
from sql.interval import parse_interval
from sql.interval_text import format_interval
from sql.literal import format_float
from sql.to_timestamp import to_timestamp
from sql.types import FLOAT4, Interval
from sql.unicode_escapes import decode

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _float8_text(v: float | None) -> str | None:
    return None if v is None else format_float(v)


def _float4_text(v: float | None) -> str | None:
    return None if v is None else format_float(v, FLOAT4)


def _interval_in(v: str | None, typmod: int | None) -> str | None:
    if v is None:
        return None
    try:
        iv = parse_interval(v, -1 if typmod is None else int(typmod))
    except SqlError as e:
        return f"{ERR}[{e.sqlstate}] {e.message}"
    return f"{iv.months} {iv.days} {iv.micros}"


def _interval_out(months: int | None, days: int | None, micros: int | None) -> str | None:
    if months is None or days is None or micros is None:
        return None
    return format_interval(Interval(int(months), int(days), int(micros)), "postgres")


def _array_element(t: str) -> str:
    """An element of an array's text form (array_out): quoted when empty, NULL-like or
    holding a brace, comma, quote, backslash or white space; quotes and backslashes escaped."""
    if t == "" or t.upper() == "NULL" or any(c in '{},"\\' or c.isspace() for c in t):
        return '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return t


def _interval_array_out(arr: list | None) -> str | None:
    """An interval[] as text (IntervalStyle postgres): a UDF of its own, since a Python UDF
    cannot run inside Spark's transform() lambda."""
    if arr is None:
        return None
    parts = []
    for v in arr:
        if v is None:
            parts.append("NULL")
            continue
        months, days, micros = (v["months"], v["days"], v["micros"])
        parts.append(_array_element(format_interval(Interval(int(months), int(days), int(micros)), "postgres")))
    return "{" + ",".join(parts) + "}"


def _to_timestamp(v: str | None, fmt: str | None) -> str | None:
    """to_timestamp(text, format) (sql.to_timestamp) as microseconds since the epoch, or an
    ERR-tagged error."""
    if v is None or fmt is None:
        return None
    try:
        ts = to_timestamp(v, fmt)
    except SqlError as e:
        return f"{ERR}[{e.sqlstate}] {e.message}"
    delta = ts - _EPOCH
    return str((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)


def _unistr(v: str | None) -> str | None:
    """unistr(text) (sql.unicode_escapes), or an ERR-tagged error."""
    if v is None:
        return None
    try:
        return decode(v, unistr=True)
    except SqlError as e:
        return f"{ERR}[{e.sqlstate}] {e.message}"


UDFS = {"mz_float8_text": _float8_text, "mz_float4_text": _float4_text, "mz_interval_in": _interval_in,
        "mz_interval_out": _interval_out, "mz_interval_array_out": _interval_array_out, "mz_unistr": _unistr,
        "mz_to_timestamp": _to_timestamp}


def register(spark: SparkSession) -> None:
    for name, fn in UDFS.items():
        spark.udf.register(name, F.udf(fn, T.StringType(), useArrow=True))
