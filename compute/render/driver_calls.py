"""Fewer py4j round trips on the hot paths (a maintained step, a small read).

Every py4j call is a round trip to the driver JVM, and PySpark's conveniences make several
per operation: `spark.sql(q)` looks up `PythonUtils` (one call per package step) and builds
an empty argument array before parsing; iterating a Java array makes a call per element.
Here each is one call; what Spark computes is unchanged:

    sql_frame(spark, q)              = spark.sql(q)          (1 call, was 5)
    framed_blobs(spark, arr)         = list(arr)             (1 call, was one per element)
    register_view(spark, df, name)   = df.createOrReplaceGlobalTempView(name)   (a new name)
    drop_view(spark, name)           = spark.catalog.dropGlobalTempView(name)   (an uncached view)
    store_rows(spark, df, n, h, name) = createDataFrame(df.collectAsList(), df.schema) registered
                                        as the view `name`, if df has at most n rows (+ its rows'
                                        `h` values)
    without_last(spark, name)        = the local view `name` without its last column
    local_arrow(spark, df, tz)       = (df.schema's JSON, df.toArrow()'s batches), when df's plan
                                       is a local relation (1 call, was ~9)

The helpers that take a Java collection are in the project's jar
(compute/jvm/src/mzspark/driver/LocalRows.java); the views' are in Views.java: they store
the same catalog entry without running a command as a query (~350 analyzer / optimizer rule
runs a registration, ~125 a drop: most of a small step's planning). The local pieces' are in
LocalPieces.java: the rows stay Spark's internal rows in the JVM, with no SQL execution
wrapper around their collection and no Dataset analyzed for them.
"""

from __future__ import annotations

import struct
from typing import Any

from pyspark.sql import DataFrame, SparkSession

# (jvm, LocalRows.framed, Views.register, Views.drop, LocalPieces.store,
# .withoutLast, .arrow) of the current driver
_members: list[tuple[Any, ...]] = []


def _helpers(spark: SparkSession) -> tuple[Any, ...]:
    """The static methods of mzspark.driver.LocalRows, Views and LocalPieces, looked up once
    per driver (each attribute of a JavaClass is a reflection call)."""
    jvm = spark._jvm
    assert jvm is not None
    if not _members or _members[0][0] is not jvm:
        d = jvm.mzspark.driver
        rows, views, pieces = d.LocalRows, d.Views, d.LocalPieces
        _members[:] = [(jvm, rows.framed, views.register, views.drop, pieces.store, pieces.withoutLast, pieces.arrow)]
    return _members[0][1:]


def sql_frame(spark: SparkSession, q: str) -> DataFrame:
    """`spark.sql(q)` (no parameters) in one py4j call."""
    return DataFrame(spark._jsparkSession.sql(q), spark)


def framed_blobs(spark: SparkSession, blobs: Any) -> list[bytes]:
    """The byte arrays of a Java byte[][] (e.g. `toArrowBatchRdd().collect()`)."""
    return unframe(_helpers(spark)[0](blobs))


def unframe(data: bytes, at: int = 0) -> list[bytes]:
    """The blobs of `data[at:]`, each preceded by its length (4 bytes, big-endian)."""
    out = []
    while at < len(data):
        (n,) = struct.unpack_from(">i", data, at)
        out.append(bytes(data[at + 4:at + 4 + n]))
        at += 4 + n
    return out


def local_arrow(spark: SparkSession, df: DataFrame, time_zone: str) -> tuple[str, list[bytes]] | None:
    """(the schema's JSON, the Arrow record batches (IPC messages)) of `df` when its analyzed
    or optimized plan is a local relation (no physical planning, no job), else None."""
    data = _helpers(spark)[5](df._jdf, time_zone)
    if data is None:
        return None
    (n,) = struct.unpack_from(">i", data, 0)
    return bytes(data[4:4 + n]).decode(), unframe(data, 4 + n)


def register_view(spark: SparkSession, df: DataFrame, name: str) -> None:
    """`df.createOrReplaceGlobalTempView(name)` for a name no view has, in one py4j call and
    without a command query (the view holds `df`'s analyzed plan, as Spark's does)."""
    _helpers(spark)[1](spark._jsparkSession, df._jdf, name)


def drop_view(spark: SparkSession, name: str) -> None:
    """`spark.catalog.dropGlobalTempView(name)` of a view whose plan is not itself cached (the
    caller unpersists what it persisted), in one py4j call."""
    _helpers(spark)[2](spark._jsparkSession, name)


def store_rows(spark: SparkSession, jdf: Any, limit: int, hash_field: str | None, name: str) -> tuple[int, tuple[int, ...] | None] | None:
    """Compute the Java Dataset `jdf`; if it has at most `limit` rows, register them as the
    global temporary view `name` (a new name: a local relation of `jdf`'s schema) and return
    (their count, their values of the bigint column `hash_field` — None when not asked or
    not all non-null longs); None (nothing registered) when it has more. One py4j call."""
    got = _helpers(spark)[3](spark._jsparkSession, jdf, limit, hash_field, name)
    if got is None:
        return None
    n, sep, hs = got.partition(";")
    return int(n), (tuple(int(x) for x in hs.split(",")) if hs else ()) if sep else None


def without_last(spark: SparkSession, name: str) -> DataFrame | None:
    """A DataFrame of the local view `name`'s rows without its last column (a local relation),
    or None when `name` is not a local view's (store_rows) own relation."""
    jdf = _helpers(spark)[4](spark._jsparkSession, name)
    return None if jdf is None else DataFrame(jdf, spark)
