"""Fewer py4j round trips on the hot paths (a maintained step, a small read).

Every py4j call is a round trip to the driver JVM, and PySpark's conveniences make several
per operation: `spark.sql(q)` looks up `PythonUtils` (one call per package step) and builds
an empty argument array before parsing; iterating a Java array makes a call per element.
Here each is one call; what Spark computes is unchanged:

    sql_frame(spark, q)              = spark.sql(q)          (1 call, was 5)
    long_column(spark, rows, f)      = [r[f] for r in rows]  (1 call; a long column)
    framed_blobs(spark, arr)         = list(arr)             (1 call, was one per element)

The helpers that take a Java collection are in the project's jar
(compute/jvm/src/mzspark/driver/LocalRows.java).
"""

from __future__ import annotations

import struct
from typing import Any

from pyspark.sql import DataFrame, SparkSession

# (jvm, LocalRows.longs, LocalRows.framed) of the current driver
_members: list[tuple[Any, Any, Any]] = []


def _local_rows(spark: SparkSession) -> tuple[Any, Any]:
    """The static methods of mzspark.driver.LocalRows, looked up once per driver (each
    attribute of a JavaClass is a reflection call)."""
    jvm = spark._jvm
    assert jvm is not None
    if not _members or _members[0][0] is not jvm:
        cls = jvm.mzspark.driver.LocalRows
        _members[:] = [(jvm, cls.longs, cls.framed)]
    return _members[0][1], _members[0][2]


def sql_frame(spark: SparkSession, q: str) -> DataFrame:
    """`spark.sql(q)` (no parameters) in one py4j call."""
    return DataFrame(spark._jsparkSession.sql(q), spark)


def long_column(spark: SparkSession, rows: Any, field: str) -> tuple[int, ...] | None:
    """The values of the column `field` of a java.util.List of collected Rows; None unless
    every one is a (non-null) long."""
    text = _local_rows(spark)[0](rows, field)
    if text is None:
        return None
    return tuple(int(x) for x in text.split(",")) if text else ()


def framed_blobs(spark: SparkSession, blobs: Any) -> list[bytes]:
    """The byte arrays of a Java byte[][] (e.g. `toArrowBatchRdd().collect()`)."""
    data = _local_rows(spark)[1](blobs)
    out, at = [], 0
    while at < len(data):
        (n,) = struct.unpack_from(">i", data, at)
        out.append(bytes(data[at + 4:at + 4 + n]))
        at += 4 + n
    return out
