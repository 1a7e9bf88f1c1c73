"""Observing Spark tasks from the driver (DESIGN §5.4): a Python SparkListener called back
through py4j, and the tagged action whose result tasks report a node's hydration.

`tracked_count(spark, df, tag)` computes `df`'s RDD (every preparatory job — range-partition
sampling, broadcasts — runs now, untagged) and then counts it in one job carrying `tag`; that
job's result stage has one task per partition of the node's output, so a successful result
task for partition p = partition p of the node's output is computed (and cached).

The listener (one per SparkContext) forwards, for jobs carrying a tag of
`compute.hydration.TAG_PREFIX`, each successful result task (tag, partition, partitions,
finish time) and each successfully completed result stage to a `compute.hydration.Tracker`.
Listener events arrive on Spark's listener bus thread in the order Spark posted them.
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


def _seq(s: Any) -> list[Any]:
    return [s.apply(i) for i in range(s.size())]


class _Listener:
    """org.apache.spark.scheduler.SparkListenerInterface, implemented in Python."""

    def __init__(self, sink: Any, prefix: str) -> None:
        self.sink = sink
        self.prefix = prefix
        self.stages: dict[int, tuple[str, int]] = {}  # result stage id -> (tag, partitions)
        self.jobs: dict[int, int] = {}  # job id -> its result stage id

    def onJobStart(self, e: Any) -> None:  # noqa: N802 - Java's name
        try:
            props = e.properties()
            tags = props.getProperty("spark.job.tags") if props is not None else None
            if not tags:
                return
            mine = [t for t in str(tags).split(",") if t.startswith(self.prefix)]
            if not mine:
                return
            infos = _seq(e.stageInfos())
            if not infos:  # a job over no partitions (an empty piece): done as it starts
                self.sink.stage_completed(mine[0], 0)
                return
            result = max(infos, key=lambda i: i.stageId())
            sid = int(result.stageId())
            self.stages[sid] = (mine[0], int(result.numTasks()))
            self.jobs[int(e.jobId())] = sid
        except Exception:  # noqa: BLE001 - a listener must never fail Spark's bus
            log.exception("hydration listener: job start")

    # (every event arrives on the bus thread, in order: with no tagged job running, no
    # task, stage or job end can be one of ours, and the event is not read at all)

    def onTaskEnd(self, e: Any) -> None:  # noqa: N802
        if not self.stages:
            return
        try:
            st = self.stages.get(int(e.stageId()))
            if st is None:
                return
            info = e.taskInfo()
            if not info.successful():
                return
            part = int(info.partitionId())
            if part < 0:
                part = int(info.index())
            metrics = e.taskMetrics()
            run_ms = int(metrics.executorRunTime()) if metrics is not None else 0
            self.sink.task_succeeded(st[0], part, st[1], int(info.finishTime()), run_ms)
        except Exception:  # noqa: BLE001
            log.exception("hydration listener: task end")

    def onStageCompleted(self, e: Any) -> None:  # noqa: N802
        if not self.stages:
            return
        try:
            si = e.stageInfo()
            st = self.stages.get(int(si.stageId()))
            if st is not None and si.failureReason().isEmpty():
                self.sink.stage_completed(st[0], st[1])
        except Exception:  # noqa: BLE001
            log.exception("hydration listener: stage completed")

    def onJobEnd(self, e: Any) -> None:  # noqa: N802
        if not self.jobs:
            return
        sid = self.jobs.pop(int(e.jobId()), None)
        if sid is not None:
            self.stages.pop(sid, None)

    def __getattr__(self, name: str) -> Any:
        # every other listener event: ignored (only `on…` names: py4j probes other attributes)
        if name.startswith("on"):
            return _ignore
        raise AttributeError(name)

    class Java:
        implements = ["org.apache.spark.scheduler.SparkListenerInterface"]


def _ignore(*_args: Any) -> None:
    return None


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
        listener = _Listener(sink, prefix)
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
