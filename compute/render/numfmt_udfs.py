"""to_char(int4 | int8 | numeric, text) and to_number(text, text) as Arrow Python UDFs over
sql.numfmt (Postgres' formatting.c). Values reach the UDF as text (exact for every scale); an
error comes back ERR-tagged (compute.render.jsonb.checked). to_number's result is a
decimal(38, 10): a value with more fractional digits is 0A000, never rounded
(compute.render.numeric_udfs.fit)."""

from __future__ import annotations

from decimal import Decimal

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from compute.render.jsonb import ERR, checked
from compute.render.numeric_udfs import fit
from sql import numfmt
from sql.errors import SqlError
from sql.types import SqlType

_SCALE = 10


def _to_char(v: str | None, fmt: str | None, integer: bool) -> str | None:
    if v is None or fmt is None:
        return None
    try:
        return numfmt.to_char(int(v) if integer else Decimal(v), fmt, integer)
    except SqlError as e:
        return f"{ERR}[{e.sqlstate}] {e.message}"


def _to_number(v: str | None, fmt: str | None) -> str | None:
    if v is None or fmt is None:
        return None
    try:
        d = numfmt.to_number(v, fmt)
    except SqlError as e:
        return f"{ERR}[{e.sqlstate}] {e.message}"
    return None if d is None else fit(d, _SCALE)


def call(f: str, value: str, fmt: str, t: SqlType) -> str:
    """The Spark SQL of to_char(value, fmt) (value of type t) / to_number(value, fmt)."""
    if f == "to_number":
        return checked(f"mz_to_number({value}, {fmt})", f"DECIMAL(38,{_SCALE})")
    integer = "TRUE" if t.name != "numeric" else "FALSE"
    return checked(f"mz_num_to_char(CAST({value} AS STRING), {fmt}, {integer})")


def register(spark: SparkSession) -> None:
    spark.udf.register("mz_num_to_char", F.udf(_to_char, T.StringType(), useArrow=True))
    spark.udf.register("mz_to_number", F.udf(_to_number, T.StringType(), useArrow=True))
