"""A step's small input read in the driver (compute.render.local_read) is the same relation
as the one Spark reads from the batch files: same schema, same rows (every column type, NULLs
included), the same time window, and collecting it runs no Spark job."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pyarrow.parquet as pq
import pytest

from catalog.storage.arrow_types import rows_to_arrow
from sql.types import (
    BOOL,
    BYTEA,
    DATE,
    FLOAT4,
    FLOAT8,
    INT2,
    INT4,
    INT8,
    INTERVAL,
    JSONB,
    NUMERIC,
    TEXT,
    TIME,
    TIMESTAMP,
    TIMESTAMPTZ,
    UUID,
    SqlType,
    numeric_typmod,
)

pytestmark = pytest.mark.spark

TYPES = (BOOL, INT2, INT4, INT8, FLOAT4, FLOAT8, NUMERIC, SqlType("numeric", numeric_typmod(10, 2)), TEXT, DATE, TIMESTAMP,
         TIMESTAMPTZ, TIME, INTERVAL, BYTEA, JSONB, UUID, SqlType("_int4"), SqlType("_text"))
ROW = (True, 7, -3, 2**40, 1.5, -0.0, Decimal("12345678901234567890.0123456789"), Decimal("3.25"), "héllo", dt.date(1999, 12, 31),
       dt.datetime(2001, 2, 3, 4, 5, 6, 789000), dt.datetime(2001, 2, 3, 4, 5, 6, tzinfo=dt.timezone(dt.timedelta(hours=5))),
       dt.time(23, 59, 58, 123456), dt.timedelta(days=3, seconds=4), b"\x00\xff", '{"a": [1, 2]}',
       uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), [1, None, 3], ["x", None])


def _zero(row) -> str:
    return repr(row).replace("=-0.0,", "=0.0,")


def _write(tmp_path, name: str, rows, time: int, diffs) -> str:
    path = str(tmp_path / f"{name}.parquet")
    pq.write_table(rows_to_arrow(TYPES, rows, time, diffs), path)
    return path


def test_local_read_equals_the_spark_read(tmp_path):
    from compute.render import oneshot
    from compute.render.spark import spark_session

    spark = spark_session()
    nulls = tuple(None for _ in TYPES)
    paths = [_write(tmp_path, "a", [ROW, nulls], 5, [1, 2]), _write(tmp_path, "b", [ROW, nulls], 6, [-1, -2]),
             _write(tmp_path, "c", [nulls], 9, [1])]
    for after, upto in ((None, 6), (5, 6), (5, 9), (6, 8), (9, 20)):
        by_spark = oneshot.read_shard_range(spark, paths, TYPES, after, upto, has_retractions=False)
        local = oneshot.read_shard_range(spark, paths, TYPES, after, upto, has_retractions=False, rows=5)
        assert local.schema == by_spark.schema
        assert local._jdf.queryExecution().analyzed().getClass().getSimpleName() == "LocalRelation"
        assert sorted(map(repr, local.collect())) == sorted(map(repr, by_spark.collect())), (after, upto)
        # with retractions: consolidated (the row inserted at 5 and retracted at 6 is gone)
        consolidated = oneshot.read_shard_range(spark, paths, TYPES, after, upto, has_retractions=True, rows=5)
        expect = oneshot.read_shard_range(spark, paths, TYPES, after, upto, has_retractions=True)
        # (Spark's GROUP BY writes -0.0 as 0.0; the storage layer keeps the stored value)
        assert sorted(map(_zero, consolidated.collect())) == sorted(map(_zero, expect.collect())), (after, upto)


def test_a_projection_of_a_local_read_collects_without_a_job(tmp_path):
    from compute.render import oneshot
    from compute.render.spark import spark_session

    spark = spark_session()
    paths = [_write(tmp_path, "a", [ROW] * 3, 5, 1)]
    local = oneshot.read_shard_range(spark, paths, TYPES, None, 5, has_retractions=False, rows=3)
    local.createOrReplaceTempView("local_read_t")
    scheduler = spark.sparkContext._jsc.sc().dagScheduler()
    before = scheduler.nextJobId()
    rows = spark.sql("SELECT c2 + 1 AS x, xxhash64(42, c8) AS h FROM local_read_t WHERE c0").collect()
    assert scheduler.nextJobId() == before
    assert [r.x for r in rows] == [-2, -2, -2]
