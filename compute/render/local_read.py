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
    return spark.createDataFrame(table, schema)
