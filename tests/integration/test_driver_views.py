"""compute.render.driver_calls.register_view / drop_view: the global temporary views a query
and a maintained step make, stored in the session catalog directly (mzspark.driver.Views).
They must read as Spark's own `createOrReplaceGlobalTempView` views do (same rows, same
schema, a persisted plan read from the cache) and cost no analyzer / optimizer work."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.errors import AnalysisException


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from compute.render.spark import spark_session

    yield spark_session()


def _rule_runs(spark: Any) -> int:
    return int(spark._jvm.org.apache.spark.sql.catalyst.rules.RuleExecutor.getCurrentMetrics().numRuns())


def _name() -> str:
    return f"mzt_{uuid.uuid4().hex}"


def test_a_registered_view_reads_as_sparks_own(spark: Any) -> None:
    from compute.render.driver_calls import drop_view, register_view

    df = spark.createDataFrame([(1, "a", 2.5), (2, None, -0.0), (None, "c", None)], "c0 int, c1 string, diff double")
    ours, theirs = _name(), _name()
    register_view(spark, df, ours)
    df.createOrReplaceGlobalTempView(theirs)
    try:
        a, b = spark.sql(f"SELECT * FROM global_temp.{ours}"), spark.sql(f"SELECT * FROM global_temp.{theirs}")
        assert a.schema == b.schema == df.schema
        assert sorted(map(tuple, a.collect()), key=repr) == sorted(map(tuple, b.collect()), key=repr)
        assert len(a.collect()) == 3
    finally:
        drop_view(spark, ours)
        spark.catalog.dropGlobalTempView(theirs)
    with pytest.raises(AnalysisException):
        spark.sql(f"SELECT * FROM global_temp.{ours}").collect()


def test_a_view_of_a_persisted_frame_reads_the_cache(spark: Any) -> None:
    from compute.render.driver_calls import drop_view, register_view

    df = spark.sql("SELECT id AS c0, id % 7 AS c1 FROM range(100)").persist()
    name = _name()
    try:
        df.count()
        register_view(spark, df, name)
        q = spark.sql(f"SELECT c1, count(*) AS n FROM global_temp.{name} GROUP BY c1")
        assert "InMemoryRelation" in q._jdf.queryExecution().withCachedData().toString()
        assert sorted(map(tuple, q.collect())) == [(k, 15 if k < 2 else 14) for k in range(7)]
    finally:
        drop_view(spark, name)
        df.unpersist()


def test_registering_and_dropping_runs_no_planning(spark: Any) -> None:
    """Spark's registration runs its command as a query (hundreds of analyzer / optimizer rule
    runs); ours stores the same catalog entry without one."""
    from compute.render.driver_calls import drop_view, register_view

    df = spark.createDataFrame([(1, 2)], "c0 int, diff bigint")
    ours, theirs = _name(), _name()
    before = _rule_runs(spark)
    register_view(spark, df, ours)
    drop_view(spark, ours)
    ours_runs = _rule_runs(spark) - before
    before = _rule_runs(spark)
    df.createOrReplaceGlobalTempView(theirs)
    spark.catalog.dropGlobalTempView(theirs)
    theirs_runs = _rule_runs(spark) - before
    assert ours_runs == 0
    assert theirs_runs > 100
