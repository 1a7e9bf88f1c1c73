"""A debugging aid: the executed Spark plan of a query, with its SQL metrics, and the Spark
jobs / stages / tasks it ran, appended to the file named by `MZSPARK_PLAN_LOG` (nothing when
unset). Load-independent counts to compare mzspark's plan of a query with spark.sql's.
"""

from __future__ import annotations

import os
from typing import Any

from pyspark.sql import DataFrame

PLAN_LOG = "MZSPARK_PLAN_LOG"


def enabled() -> bool:
    return bool(os.environ.get(PLAN_LOG))


def _seq(spark: Any, scala_seq: Any) -> list[Any]:
    conv = spark._jvm.scala.jdk.javaapi.CollectionConverters
    return list(conv.asJava(scala_seq))


def _metrics(spark: Any, node: Any) -> dict[str, int]:
    conv = spark._jvm.scala.jdk.javaapi.CollectionConverters
    m = conv.asJava(node.metrics())
    return {str(k): int(m.get(k).value()) for k in m.keySet()}


def plan_lines(df: DataFrame) -> list[str]:
    """The executed plan of `df` (after it ran), one operator a line with its non-zero metrics."""
    spark = df.sparkSession
    out: list[str] = []

    def walk(node: Any, depth: int) -> None:
        text = str(node.simpleString(25))
        metrics = {k: v for k, v in _metrics(spark, node).items() if v}
        out.append("  " * depth + text[:400] + (f"  {metrics}" if metrics else ""))
        for c in _seq(spark, node.children()):
            walk(c, depth + 1)
        for c in _seq(spark, node.subqueries()):
            walk(c, depth + 1)

    walk(df._jdf.queryExecution().executedPlan(), 0)
    return out


def job_counts(spark: Any, group: str) -> tuple[int, int, int, int]:
    """(jobs, stages, tasks, executor CPU ms) Spark ran (so far) for job group `group`
    (stages skipped count too, with no CPU)."""
    sc = spark.sparkContext._jsc.sc()
    tracker, store = sc.statusTracker(), sc.statusStore()
    jobs = list(tracker.getJobIdsForGroup(group))
    stages = tasks = cpu_ns = 0
    for j in jobs:
        info = tracker.getJobInfo(j)
        if info.isEmpty():
            continue
        for s in info.get().stageIds():
            stages += 1
            si = tracker.getStageInfo(s)
            if not si.isEmpty():
                tasks += int(si.get().numTasks())
            try:
                cpu_ns += int(store.lastStageAttempt(s).executorCpuTime())
            except Exception:  # noqa: BLE001 - a stage the status store no longer keeps
                pass
    return len(jobs), stages, tasks, cpu_ns // 1_000_000


def log_plan(df: DataFrame, label: str, group: str | None = None) -> None:
    """Append `df`'s executed plan (and its job group's counts) to $MZSPARK_PLAN_LOG."""
    path = os.environ.get(PLAN_LOG)
    if not path:
        return
    lines = [f"==== {label}"]
    if group is not None:
        jobs, stages, tasks, cpu = job_counts(df.sparkSession, group)
        lines.append(f"jobs={jobs} stages={stages} tasks={tasks} executor_cpu_ms={cpu}")
    lines += plan_lines(df)
    with open(path, "a") as f:
        f.write("\n".join(lines) + "\n")
