"""Observing Spark tasks from the driver (DESIGN §5.4): a Python SparkListener called back
through py4j, and the tagged action whose result tasks report a node's hydration.

`tracked_count(spark, df, tag)` computes `df`'s RDD (every preparatory job — range-partition
sampling, broadcasts — runs now, untagged) and then counts it in one job carrying `tag`; that
job's result stage has one task per partition of the node's output, so a successful result
task for partition p = partition p of the node's output is computed (and cached).

The listener (one per SparkContext; a JVM SparkListener, mzspark.driver.HydrationListener in
compute/jvm/src) forwards, for jobs carrying a tag of `compute.hydration.TAG_PREFIX`, each
successful result task (tag, partition, partitions, finish time, run time) and each
successfully completed result stage to a `compute.hydration.Tracker` through a py4j callback;
every other event (untagged jobs' tasks and stages, cache blocks, SQL executions, metrics) is
dropped in the JVM, with no callback. Listener events arrive on Spark's listener bus thread in
the order Spark posted them.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from pyspark import SparkContext
from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger("mzspark.listener")

_lock = threading.Lock()
_registered: dict[tuple[int, int], Any] = {}  # (py4j gateway, JVM SparkContext) -> listener


def tracked_count(spark: SparkSession, df: DataFrame, tag: str | None) -> int:
    """The rows of (cached) `df`, counted in one Spark job tagged `tag` (if given)."""
    rdd = df._jdf.queryExecution().toRdd()
    if tag is None:
        return int(rdd.count())
    sc = spark.sparkContext
    sc.addJobTag(tag)
    try:
        return int(rdd.count())
    finally:
        sc.removeJobTag(tag)


class _Sink:
    """mzspark.driver.HydrationSink, implemented in Python: what the JVM listener
    (compute/jvm/src/mzspark/driver/HydrationListener.java) forwards, passed on to `sink`."""

    def __init__(self, sink: Any) -> None:
        self.sink = sink

    def taskSucceeded(self, tag: str, partition: int, partitions: int, finish_ms: int, run_ms: int) -> None:  # noqa: N802 - Java's name
        try:
            self.sink.task_succeeded(str(tag), int(partition), int(partitions), int(finish_ms), int(run_ms))
        except Exception:  # noqa: BLE001 - a listener must never fail Spark's bus
            log.exception("hydration listener: task end")

    def stageCompleted(self, tag: str, partitions: int) -> None:  # noqa: N802
        try:
            self.sink.stage_completed(str(tag), int(partitions))
        except Exception:  # noqa: BLE001
            log.exception("hydration listener: stage completed")

    class Java:
        implements = ["mzspark.driver.HydrationSink"]


def ensure_listener(spark: SparkSession, sink: Any, prefix: str) -> None:
    """Register (once per SparkContext) the listener forwarding tagged tasks to `sink`."""
    from pyspark.java_gateway import ensure_callback_server_started

    jsc = spark.sparkContext._jsc.sc()  # type: ignore[union-attr]
    gw = SparkContext._gateway
    assert gw is not None
    key = (id(gw), int(jsc.hashCode()))
    with _lock:
        if key in _registered:
            return
        ensure_callback_server_started(gw)
        # the JVM listener drops every event but a tagged job's (no py4j callback for them)
        listener = gw.jvm.mzspark.driver.HydrationListener(_Sink(sink), prefix)
        jsc.addSparkListener(listener)
        _registered[key] = listener


def remove_listeners() -> None:
    """Unregister every listener (at shutdown: the callback server goes away first)."""
    with _lock:
        for listener in _registered.values():
            try:
                SparkContext._active_spark_context._jsc.sc().removeSparkListener(listener)  # type: ignore[union-attr]
            except Exception:  # noqa: BLE001 - the context may be gone already
                pass
        _registered.clear()
