"""Fewer py4j round trips on the hot paths (a maintained step, a small read).

Every py4j call is a round trip to the driver JVM, and PySpark's conveniences make several
per operation: `spark.sql(q)` looks up `PythonUtils` (one call per package step) and builds
an empty argument array before parsing; iterating a Java array makes a call per element.
Here each is one call; what Spark computes is unchanged:

    sql_frame(spark, q)              = spark.sql(q)          (1 call, was 5)
    long_column(spark, rows, f)      = [r[f] for r in rows]  (1 call; a long column)
    framed_blobs(spark, arr)         = list(arr)             (1 call, was one per element)
    local_arrow(spark, df)           = spark.collect_local's rows when df's plan is a local relation
                                       (1 call, was ~9: its plan, rows, schema and Arrow batches)
    register_view(spark, df, name)   = df.createOrReplaceGlobalTempView(name)   (a new name)
    drop_view(spark, name)           = spark.catalog.dropGlobalTempView(name)   (an uncached view)

The helpers that take a Java collection are in the project's jar
(compute/jvm/src/mzspark/driver/LocalRows.java); the views' are in Views.java: they store
the same catalog entry without running a command as a query (~350 analyzer / optimizer rule
runs a registration, ~125 a drop: most of a small step's planning).
"""

from __future__ import annotations

import struct
from typing import Any

from pyspark.sql import DataFrame, SparkSession

# (jvm, LocalRows.longs, LocalRows.framed, Views.register, Views.drop, LocalRows.localArrow) of the current driver
_members: list[tuple[Any, Any, Any, Any, Any, Any]] = []


def _helpers(spark: SparkSession) -> tuple[Any, Any, Any, Any, Any]:
    """The static methods of mzspark.driver.LocalRows and Views, looked up once per driver
    (each attribute of a JavaClass is a reflection call)."""
    jvm = spark._jvm
    assert jvm is not None
    if not _members or _members[0][0] is not jvm:
        rows, views = jvm.mzspark.driver.LocalRows, jvm.mzspark.driver.Views
        _members[:] = [(jvm, rows.longs, rows.framed, views.register, views.drop, rows.localArrow)]
    return _members[0][1:]


def sql_frame(spark: SparkSession, q: str) -> DataFrame:
    """`spark.sql(q)` (no parameters) in one py4j call."""
    return DataFrame(spark._jsparkSession.sql(q), spark)


def long_column(spark: SparkSession, rows: Any, field: str) -> tuple[int, ...] | None:
    """The values of the column `field` of a java.util.List of collected Rows; None unless
    every one is a (non-null) long."""
    text = _helpers(spark)[0](rows, field)
    if text is None:
        return None
    return tuple(int(x) for x in text.split(",")) if text else ()


def framed_blobs(spark: SparkSession, blobs: Any) -> list[bytes]:
    """The byte arrays of a Java byte[][] (e.g. `toArrowBatchRdd().collect()`)."""
    return unframe(_helpers(spark)[1](blobs))


def unframe(data: bytes, at: int = 0) -> list[bytes]:
    """The byte arrays of `data[at:]`, each preceded by its length (4 bytes, big-endian)."""
    out = []
    while at < len(data):
        (n,) = struct.unpack_from(">i", data, at)
        out.append(bytes(data[at + 4:at + 4 + n]))
        at += 4 + n
    return out


def local_arrow(spark: SparkSession, df: DataFrame) -> tuple[str, list[bytes]] | None:
    """(the schema's JSON, its Arrow record batches) of `df` when Spark folded its plan into a
    local relation (no Spark job), else None."""
    data = _helpers(spark)[4](df._jdf)
    if data is None:
        return None
    (n,) = struct.unpack_from(">i", data, 0)
    return bytes(data[4:4 + n]).decode(), unframe(data, 4 + n)


def register_view(spark: SparkSession, df: DataFrame, name: str) -> None:
    """`df.createOrReplaceGlobalTempView(name)` for a name no view has, in one py4j call and
    without a command query (the view holds `df`'s analyzed plan, as Spark's does)."""
    _helpers(spark)[2](spark._jsparkSession, df._jdf, name)


def drop_view(spark: SparkSession, name: str) -> None:
    """`spark.catalog.dropGlobalTempView(name)` of a view whose plan is not itself cached (the
    caller unpersists what it persisted), in one py4j call."""
    _helpers(spark)[3](spark._jsparkSession, name)
