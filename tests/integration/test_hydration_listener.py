"""The hydration listener (compute.render.listener, mzspark.driver.HydrationListener in the
JVM): only a tagged job's successful result tasks and its completed result stage reach the
Python sink; every other event — untagged jobs (a maintained step's), jobs tagged by someone
else, cache blocks, SQL executions — is dropped in the JVM, with no py4j callback."""

from __future__ import annotations

import threading
from typing import Any

import pytest

pytestmark = pytest.mark.spark

PREFIX = "mzh-test-"


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.lock = threading.Lock()

    def task_succeeded(self, tag: str, partition: int, partitions: int, finish_ms: int, run_ms: int = 0) -> None:
        with self.lock:
            self.events.append(("task", tag, partition, partitions))

    def stage_completed(self, tag: str, partitions: int) -> None:
        with self.lock:
            self.events.append(("stage", tag, partitions))


def test_only_tagged_jobs_reach_the_python_sink() -> None:
    from pyspark import SparkContext
    from pyspark.java_gateway import ensure_callback_server_started

    from compute.render.listener import _Sink, tracked_count
    from compute.render.spark import spark_session

    spark = spark_session()
    gw = SparkContext._gateway
    assert gw is not None
    ensure_callback_server_started(gw)
    sc = spark.sparkContext._jsc.sc()  # type: ignore[union-attr]
    rec = Recorder()
    listener = gw.jvm.mzspark.driver.HydrationListener(_Sink(rec), PREFIX)
    sc.addSparkListener(listener)
    try:
        # untagged work: SQL with a shuffle, a cached piece (block updates), a collect
        df = spark.sql("SELECT id % 7 AS k, count(*) AS n FROM range(0, 1000, 1, 3) GROUP BY id % 7").persist()
        assert df.count() == 7
        assert len(spark.sql("SELECT * FROM range(10)").collect()) == 10
        # a job tagged with another prefix
        spark.sparkContext.addJobTag("someone-else")
        try:
            assert spark.range(0, 10, 1, 2).count() == 10
        finally:
            spark.sparkContext.removeJobTag("someone-else")
        sc.listenerBus().waitUntilEmpty()
        assert rec.events == [] and listener.forwarded() == 0
        # a tagged count over 3 partitions: one successful result task each, then the stage
        piece = spark.range(0, 30, 1, 3).persist()
        assert tracked_count(spark, piece, PREFIX + "a") == 30
        sc.listenerBus().waitUntilEmpty()
        tasks = [e for e in rec.events if e[0] == "task"]
        assert sorted(tasks) == [("task", PREFIX + "a", p, 3) for p in range(3)]
        assert rec.events[-1] == ("stage", PREFIX + "a", 3)
        assert listener.forwarded() == 4
        # an untagged job again: nothing more
        assert piece.count() == 30
        sc.listenerBus().waitUntilEmpty()
        assert len(rec.events) == 4
        piece.unpersist()
        df.unpersist()
    finally:
        sc.removeSparkListener(listener)
