"""The one SparkSession of the server process (classic PySpark; the server is the driver)."""

from __future__ import annotations

import logging
import os
import sys
import threading
from functools import lru_cache
from pathlib import Path

import pyarrow as pa
from py4j.protocol import Py4JError, Py4JJavaError
from pyspark import SparkContext
from pyspark.sql import DataFrame, SparkSession

from compute.render import jsonb, jvm, numeric_stats, numeric_udfs, numfmt_udfs, regex, text_udfs
from compute.render.cluster import cluster_conf

log = logging.getLogger("mzspark.spark")

_lock = threading.RLock()
_spark: SparkSession | None = None
# the arguments of the first spark_session call, to start an identical session after a loss
_args: tuple[str, int | None, dict[str, str] | None] | None = None
# Spark's own bound on what one job may return to the driver (task results, serialized):
# a collect past it aborts the job instead of filling the driver's heap
DEFAULT_MAX_RESULT_SIZE = "1g"
# jobs of concurrent sessions share the cores (FAIR inside the default pool), not FIFO
FAIR_POOLS = Path(__file__).with_name("fairscheduler.xml")


def spark_session(master: str = "local[2]", workers: int | None = None, conf: dict[str, str] | None = None) -> SparkSession:
    """Create (once) and return the process-wide SparkSession."""
    global _spark, _args
    with _lock:
        if _spark is not None:
            return _spark
        _args = (master, workers, conf)
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
            # decimal + - * keep the exact result's scale (capped at 38) and fail on overflow;
            # with precision loss allowed, decimal(38,10) * decimal(38,10) rounded to 6 digits
            .config("spark.sql.decimalOperations.allowPrecisionLoss", "false")
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
            # OptimizeCsvJsonExprs fails ("head of empty list") on records of no fields, e.g.
            # the row record of a window function over a select without FROM; it only prunes
            # JSON / CSV parsing, which mzspark does not render.
            .config("spark.sql.optimizer.excludedRules", "org.apache.spark.sql.catalyst.optimizer.ConstantFolding,"
                    "org.apache.spark.sql.catalyst.optimizer.OptimizeCsvJsonExprs")
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
            .config("spark.driver.maxResultSize", DEFAULT_MAX_RESULT_SIZE)
            .config("spark.scheduler.mode", "FAIR")
            .config("spark.scheduler.allocation.file", str(FAIR_POOLS))
        )
        extra = {**cluster_conf(master, root), **(conf or {})}
        # the project's Java UDFs (numeric_udfs): on the driver's classpath and fetched by
        # every executor (built first when missing or stale; no javac: a clear error)
        b = b.config("spark.jars", ",".join([str(jvm.jar()), *filter(None, [extra.pop("spark.jars", "")])]))
        for k, v in extra.items():
            b = b.config(k, v)
        _spark = b.getOrCreate()
        register_functions(_spark)
        _spark.sparkContext.setLogLevel("ERROR")
        # PySpark logs every failed query as JSON on stderr; failures reach clients instead
        logging.getLogger("DataFrameQueryContextLogger").setLevel(logging.CRITICAL)
        return _spark


_sessions: dict[str, SparkSession] = {}


def register_functions(s: SparkSession) -> None:
    """Register every function rendered SQL may call (UDFs are per session: each sibling
    session needs them too)."""
    jsonb.register(s)
    text_udfs.register(s)
    numeric_stats.register(s)
    numeric_udfs.register(s)
    numfmt_udfs.register(s)
    regex.register(s)
SMALL_INPUT_ROWS = 200_000
TINY_INPUT_ROWS = 20_000

# Sibling sessions (same context, cache and global views) for small inputs:
# - small: no whole-stage code generation (compiling generated code costs more than it saves:
#   1k-row group-by 297 -> 151 ms; at 3M rows 378 -> 513 ms the other way);
# - tiny: also one shuffle partition and no broadcast joins chosen by Spark's statistics (a
#   broadcast is a job of its own; a join of two 10-row inputs 106 -> 67 ms, a decorrelated
#   subquery 2.3 -> 1.9 s). Join stages the planner marks `broadcast` (lookups known to be
#   small, refine_broadcast_lookups) carry a BROADCAST hint, which applies in every session:
#   a chain of n such stages needs no shuffle, where sort-merge joins shuffled once per stage.
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
            register_functions(s)
            _sessions[kind] = s
        return s


def driver_alive() -> bool:
    """Whether the Spark driver JVM this process launched is running with a live context."""
    gw = SparkContext._gateway
    proc = getattr(gw, "proc", None)
    if _spark is None or gw is None or (proc is not None and proc.poll() is not None):
        return False
    try:
        return not _spark.sparkContext._jsc.sc().isStopped()  # type: ignore[union-attr]
    except Exception:  # noqa: BLE001 - no answer from the JVM
        return False


def driver_exit_code() -> int | None:
    """The exit status of the Spark driver JVM this process launched (None: running or
    unknown; negative: the signal that killed it)."""
    proc = getattr(SparkContext._gateway, "proc", None)
    return proc.poll() if proc is not None else None


def driver_process_running() -> bool:
    """Whether the driver JVM process is still running (a cheap check: no py4j call)."""
    proc = getattr(SparkContext._gateway, "proc", None)
    return _spark is not None and (proc is None or proc.poll() is None)


def driver_lost(e: BaseException, spark: SparkSession) -> bool:
    """Whether the failure `e` of a Spark call made on `spark` means its driver is gone.

    A session of an earlier driver is gone whatever the failure; else a broken py4j
    connection (the JVM exited: killed, or Spark's handler of a fatal error such as
    OutOfMemoryError called System.exit) or a stopped SparkContext. A Java exception of a
    running context (a failed query) is not a loss."""
    if spark is not _spark:
        return True
    text = str(e)
    if isinstance(e, Py4JJavaError) and "SparkContext was shut down" not in text and "stopped SparkContext" not in text:
        return False
    proc = getattr(SparkContext._gateway, "proc", None)
    if proc is not None and isinstance(e, (Py4JError, OSError, EOFError)):
        # the JVM closes its sockets while exiting: give the exit a moment to be seen
        try:
            proc.wait(2)
        except Exception:  # noqa: BLE001 - still running
            pass
    return not driver_alive()


def restart_session() -> SparkSession:
    """Tear down the lost driver (its JVM is killed if still running) and start a new one:
    a new JVM, SparkContext and SparkSession with the same configuration and every UDF
    registered again. Sibling sessions are rebuilt on demand (`session_for`). Everything
    else the old JVM held (cached sources, temporary views, persisted query state) is gone;
    the caller drops its references to it."""
    global _spark
    with _lock:
        old, _spark = _spark, None
        _sessions.clear()
        gw = SparkContext._gateway
        proc = getattr(gw, "proc", None)
        if proc is not None and proc.poll() is None:
            proc.kill()
            try:
                proc.wait(30)
            except Exception:  # noqa: BLE001
                log.warning("the old Spark driver (pid %s) did not exit", proc.pid)
        if old is not None:
            try:
                old.sparkContext.stop()  # closes the accumulator server; the JVM call fails
            except Exception:  # noqa: BLE001 - expected: the JVM is gone
                pass
        if gw is not None:
            try:
                gw.shutdown()
            except Exception:  # noqa: BLE001
                pass
        SparkContext._gateway = None
        SparkContext._jvm = None
        SparkContext._active_spark_context = None
        SparkSession._instantiatedSession = None
        SparkSession._activeSession = None
        from pyspark.sql.context import SQLContext

        SQLContext._instantiatedContext = None
        assert _args is not None, "restart before the first start"
        return spark_session(*_args)


def _default_workers(master: str) -> int:
    if master.startswith("local["):
        inner = master[6:-1]
        if inner.isdigit():
            return int(inner)
        return os.cpu_count() or 2
    return 2


def collect_arrow(df: DataFrame, small: bool) -> pa.Table:
    """`df.toArrow()`. A plan Spark folded into a local relation (a small table's read, a
    maintained step's output: compute.render.arrangement.store_local) is converted in the
    driver, with no Spark job (collect_local). For a `small` result, the Arrow batches come
    back as the return value of one py4j call instead of through PySpark's authenticated side
    socket, whose set-up costs ~20 ms a query (a 10-row group-by 43 -> 19 ms)."""
    local = collect_local(df)
    if local is not None:
        return local
    if not small:
        return df.toArrow()
    from pyspark.sql.pandas.types import to_arrow_schema

    from compute.render.driver_calls import framed_blobs

    schema = to_arrow_schema(df.schema, error_on_duplicated_field_names_in_struct=True, timezone="UTC")
    blobs = framed_blobs(df.sparkSession, df._jdf.toArrowBatchRdd().collect())  # (one call, not one per batch)
    batches = [pa.ipc.read_record_batch(pa.py_buffer(b), schema) for b in blobs]
    return pa.Table.from_batches(batches, schema=schema)


def collect_local(df: DataFrame) -> pa.Table | None:
    """`df.toArrow()` without a Spark job when `df` is a local relation, or Spark's optimizer
    folded it into one (filters, projections and limits over a local relation:
    ConvertToLocalRelation), else None. The rows are converted to Arrow in the driver JVM, as
    Spark Connect does for a LocalTableScanExec, in one py4j call with the schema
    (driver_calls.local_arrow); `toArrowBatchRdd` would run a job (~50-100 ms here) to do the
    same."""
    from compute.render.driver_calls import local_arrow

    # the session time zone is UTC (spark_session)
    got = local_arrow(df.sparkSession, df, "UTC")
    if got is None:
        return None
    json, blobs = got
    schema = _arrow_schema(json)
    return pa.Table.from_batches([pa.ipc.read_record_batch(pa.py_buffer(b), schema) for b in blobs], schema=schema)


@lru_cache(maxsize=1024)
def _arrow_schema(json: str) -> pa.Schema:
    """The Arrow schema of a Spark schema (its JSON) as collect_arrow converts it: the session
    time zone is UTC (spark_session); no large variable-width types."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType, _parse_datatype_json_string

    struct = _parse_datatype_json_string(json)
    assert isinstance(struct, StructType)
    return to_arrow_schema(struct, error_on_duplicated_field_names_in_struct=True, timezone="UTC")


def storage_memory(spark: SparkSession) -> tuple[int, int]:
    """(cached RDDs, bytes of Spark storage memory they hold): what DROP of a maintained
    object must give back."""
    infos = spark.sparkContext._jsc.sc().getRDDStorageInfo()  # type: ignore[union-attr]
    return len(infos), sum(int(i.memSize()) for i in infos)
