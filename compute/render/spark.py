"""The one SparkSession of the server process (classic PySpark; the server is the driver)."""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

from compute.render import jsonb, text_udfs

_lock = threading.Lock()
_spark: SparkSession | None = None


def spark_session(master: str = "local[2]", workers: int | None = None, conf: dict[str, str] | None = None) -> SparkSession:
    """Create (once) and return the process-wide SparkSession."""
    global _spark
    with _lock:
        if _spark is not None:
            return _spark
        os.environ.setdefault("PYSPARK_PIN_THREAD", "true")
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        # Python UDF workers (compute.render.jsonb) run this interpreter (pyarrow) and
        # import this project's packages
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        root = str(Path(__file__).resolve().parents[2])
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])
        w = workers or _default_workers(master)
        b = (
            SparkSession.builder.master(master)
            .appName("mzspark")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.ansi.enabled", "true")
            .config("spark.sql.shuffle.partitions", str(w))
            .config("spark.default.parallelism", str(w))
            .config("spark.sql.adaptive.enabled", "false")  # its re-planning costs more than it saves here
            .config("spark.sql.adaptive.coalescePartitions.enabled", "false")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .config("spark.sql.parquet.inferTimestampNTZ.enabled", "true")
            .config("spark.driver.memory", os.environ.get("MZSPARK_DRIVER_MEMORY", "4g"))
            .config("spark.sql.optimizer.inSetConversionThreshold", "1000")
            # Folding would evaluate (and raise) errors of rows that never exist at run time,
            # e.g. 45 / -count(*) on a global aggregate's empty-input default row.
            .config("spark.sql.optimizer.excludedRules", "org.apache.spark.sql.catalyst.optimizer.ConstantFolding")
            .config("spark.driver.extraJavaOptions", "-Dlog4j2.level=error")
            # Every hash aggregate and sort of a running task holds at least one page, and a
            # one-partition query (tiny inputs) runs all its operators in one task: at the
            # default size (64 MB here) a 20-operator query over 10 rows reserves over 1 GB.
            # Records larger than a page still get a page of their own.
            .config("spark.buffer.pageSize", "2m")
            # Spark's ANTLR parser caches DFA states of every statement it parses, without a
            # bound; our generated SQL texts grew it by ~150 MB per 1,000 queries until the
            # heap was full (GC thrashing after ~20k slt queries). Flush it at 10% of the heap.
            .config("spark.sql.parser.manageParserCaches", "true")
            .config("spark.sql.parser.parserDfaCacheFlushRatio", "10")
            # the (disabled) UI's status store: keep little of finished jobs and queries
            .config("spark.ui.retainedJobs", "100")
            .config("spark.ui.retainedStages", "100")
            .config("spark.ui.retainedTasks", "1000")
            .config("spark.sql.ui.retainedExecutions", "50")
        )
        for k, v in (conf or {}).items():
            b = b.config(k, v)
        _spark = b.getOrCreate()
        jsonb.register(_spark)
        text_udfs.register(_spark)
        _spark.sparkContext.setLogLevel("ERROR")
        # PySpark logs every failed query as JSON on stderr; failures reach clients instead
        logging.getLogger("DataFrameQueryContextLogger").setLevel(logging.CRITICAL)
        return _spark


_sessions: dict[str, SparkSession] = {}
SMALL_INPUT_ROWS = 200_000
TINY_INPUT_ROWS = 20_000

# Sibling sessions (same context, cache and global views) for small inputs:
# - small: no whole-stage code generation (compiling generated code costs more than it saves:
#   1k-row group-by 297 -> 151 ms; at 3M rows 378 -> 513 ms the other way);
# - tiny: also one shuffle partition and no broadcast joins (a broadcast is a job of its own;
#   a join of two 10-row inputs 106 -> 67 ms, a decorrelated subquery 2.3 -> 1.9 s).
_SIBLINGS = {
    "small": {"spark.sql.codegen.wholeStage": "false"},
    "tiny": {"spark.sql.codegen.wholeStage": "false", "spark.sql.shuffle.partitions": "1",
             "spark.sql.autoBroadcastJoinThreshold": "-1"},
}


def session_for(rows: int) -> SparkSession:
    """The session to plan a query reading `rows` input rows in."""
    assert _spark is not None
    if rows >= SMALL_INPUT_ROWS:
        return _spark
    kind = "tiny" if rows < TINY_INPUT_ROWS else "small"
    with _lock:
        s = _sessions.get(kind)
        if s is None:
            s = _spark.newSession()
            for k, v in _SIBLINGS[kind].items():
                s.conf.set(k, v)
            jsonb.register(s)
            text_udfs.register(s)
            _sessions[kind] = s
        return s


def _default_workers(master: str) -> int:
    if master.startswith("local["):
        inner = master[6:-1]
        if inner.isdigit():
            return int(inner)
        return os.cpu_count() or 2
    return 2


def collect_arrow(df: DataFrame, small: bool) -> pa.Table:
    """`df.toArrow()`. For a `small` result, the Arrow batches come back as the return value
    of one py4j call instead of through PySpark's authenticated side socket, whose set-up
    costs ~20 ms a query (a 10-row group-by 43 -> 19 ms)."""
    if not small:
        return df.toArrow()
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(df.schema, error_on_duplicated_field_names_in_struct=True, timezone="UTC")
    blobs = list(df._jdf.toArrowBatchRdd().collect())  # type: ignore[operator]
    batches = [pa.ipc.read_record_batch(pa.py_buffer(b), schema) for b in blobs]
    return pa.Table.from_batches(batches, schema=schema)
