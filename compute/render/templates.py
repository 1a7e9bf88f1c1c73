"""Spark plan templates: a one-shot query run again with other bound parameter values reuses
the plan Spark analysed the first time (compute/jvm/src/mzspark/driver/PlanTemplates.java).

A bound parameter ($n, sql.scalar.ParamLiteral) renders as its literal between two markers
(bracketed comments, skipped by Spark's parser):

    marked(lit(v, t)) = OPEN + lit(v, t) + CLOSE

and a text holding markers is run by `frame`, which is `spark.sql(text)`:

    frame(spark, text) = sql_frame(spark, text)

but for a text equal outside its marked spans to one analysed before (same Spark session,
same span expressions and literal types), whose analysed plan is taken with the new span
literals substituted: no parsing of the text, no analyzer rules. Optimization, planning and
execution run as for any query. The generated text names every view it reads, and a view's
name is never reused (a new name per batch set or state), so equal texts read equal data.
The markers carry a per-process nonce: no value a client sends can forge one.
"""

from __future__ import annotations

import secrets
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from compute.render.driver_calls import sql_frame

_NONCE = secrets.token_hex(8)
OPEN = f"/*mzp{_NONCE}<*/"
CLOSE = f"/*mzp{_NONCE}>*/"

_frame: list[tuple[Any, Any]] = []  # (jvm, PlanTemplates.frame) of the current driver


def marked(text: str) -> str:
    """A bound parameter's rendered literal, marked for `frame`."""
    return OPEN + text + CLOSE


def frame(spark: SparkSession, text: str) -> DataFrame:
    """`spark.sql(text)` (one py4j call), from a kept analysed plan when one fits."""
    if OPEN not in text:
        return sql_frame(spark, text)
    jvm = spark._jvm
    assert jvm is not None
    if not _frame or _frame[0][0] is not jvm:
        _frame[:] = [(jvm, jvm.mzspark.driver.PlanTemplates.frame)]
    return DataFrame(_frame[0][1](spark._jsparkSession, text, OPEN, CLOSE), spark)


def counts(spark: SparkSession) -> tuple[int, int]:
    """(templates used, marked texts analysed in full) since the driver started."""
    jvm = spark._jvm
    assert jvm is not None
    t = jvm.mzspark.driver.PlanTemplates
    return int(t.hits()), int(t.misses())


def rule_runs(spark: SparkSession) -> int:
    """Analyzer and optimizer rule runs of the driver so far (RuleExecutor's metrics, every
    thread)."""
    jvm = spark._jvm
    assert jvm is not None
    return int(jvm.org.apache.spark.sql.catalyst.rules.RuleExecutor.getCurrentMetrics().numRuns())
