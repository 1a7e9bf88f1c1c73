"""A maintained step's small input delta as a local relation.

A step's input is the few rows written since the last step. Read through Spark, those rows
cost one Spark job in every step, in the first piece that reads them. Here the driver reads
the batch files with pyarrow and hands the rows to Spark as a `LocalRelation`. Filters and
projections over a local relation are folded by Spark's optimizer, and collecting it runs no
job. Spark evaluates every expression as before; only where the rows come from changes.

    read_local(paths, after, upto) = σ(after < time ≤ upto)(batches) − time

consolidated, when the batches hold retractions, by the storage layer's consolidation (the
one compaction uses: equal stored values, diffs summed, zeros dropped). A retraction is
written as the stored row it retracts, so equal rows are equal values here: an insert and
its delete in one step cancel before any expression sees the row (`10 / x` of a deleted
`x = 0` raises nothing), as with Spark's consolidation.

The rows keep the exact Spark types `read_shard_range` gives them: the batch files' Arrow
types are the Arrow forms of those Spark types (catalog.storage.arrow_types).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from catalog.storage.compaction import consolidate

# a step input of at most this many rows (all its batches) is read in the driver
LOCAL_READ_ROWS = 1000


def read_local(spark: SparkSession, paths: list[str], schema: T.StructType, after: int | None, upto: int,
               has_retractions: bool) -> DataFrame:
    """The rows of the batch files `paths` with `after < time <= upto`, without `time`, as a
    local relation of `schema` (columns c0..cN, diff); consolidated if `has_retractions`."""
    tables = [pq.read_table(p) for p in paths]
    table = pa.concat_tables(tables, promote_options="none") if len(tables) > 1 else tables[0]
    t = table.column("time")
    keep = pc.less_equal(t, upto) if after is None else pc.and_(pc.greater(t, after), pc.less_equal(t, upto))
    table = table.filter(keep).select([f.name for f in schema.fields])
    if has_retractions:
        table = consolidate(table)
    if table.num_rows == 0:  # (every column one empty chunk: PySpark's conversion needs one)
        table = pa.Table.from_arrays([pa.array([], type=f.type) for f in table.schema], schema=table.schema)
    # below spark.sql.execution.arrow.localRelationThreshold (48 MB), PySpark's Arrow path
    # builds a LocalRelation
    return local_relation(spark, table, schema)


# per driver: (jvm, PythonSQLUtils.readArrowStreamFromFile, .toDataFrame, session time zone,
# spark.sql.execution.arrow.useLargeVarTypes, .maxRecordsPerBatch)
_driver: list[tuple[Any, Any, Any, str, bool, int]] = []


def _helpers(spark: SparkSession) -> tuple[Any, Any, str, bool, int]:
    jvm = spark._jvm
    assert jvm is not None
    if not _driver or _driver[0][0] is not jvm:
        utils = jvm.org.apache.spark.sql.api.python.PythonSQLUtils
        large = str(spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes")).lower() == "true"
        batch = int(str(spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch")))
        _driver[:] = [(jvm, utils.readArrowStreamFromFile, utils.toDataFrame, str(spark.conf.get("spark.sql.session.timeZone")),
                       large, batch)]
    return _driver[0][1:]


def local_relation(spark: SparkSession, table: pa.Table, schema: T.StructType) -> DataFrame:
    """`spark.createDataFrame(table, schema)` by PySpark's own Arrow path (the table cast to
    the schema's Arrow types, written as an Arrow stream file, read by the JVM into a
    DataFrame: a LocalRelation when small), in two py4j calls instead of ~38: the JVM
    helpers are looked up and the Arrow settings read once per driver (the server's are
    fixed: spark_session), not at every call."""
    from pyspark.sql.pandas.serializers import ArrowStreamSerializer
    from pyspark.sql.pandas.types import _check_arrow_table_timestamps_localize, to_arrow_schema

    read, to_df, tz, large, batch = _helpers(spark)
    if schema.fields:  # (as PySpark: no cast of a 0-column table, it would lose its rows)
        table = _check_arrow_table_timestamps_localize(table, schema, True, tz).cast(
            to_arrow_schema(schema, error_on_duplicated_field_names_in_struct=True, timezone="UTC", prefers_large_types=large))
    sc = spark.sparkContext
    assert not sc._encryption_enabled, "local reads with spark.io.encryption.enabled"
    f = tempfile.NamedTemporaryFile(delete=False, dir=sc._temp_dir)
    try:
        try:
            ArrowStreamSerializer().dump_stream(table.to_batches(max_chunksize=batch), f)
        finally:
            f.close()
        jiter = read(f.name)
    finally:
        os.unlink(f.name)
    df = DataFrame(to_df(jiter, schema.json(), spark._jsparkSession), spark)
    df._schema = schema
    return df
