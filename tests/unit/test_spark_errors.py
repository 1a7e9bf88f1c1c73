"""Spark failures that are about resources, not SQL, map to Postgres' resource SQLSTATEs
(never XX000, never Spark's text). The messages are Spark 4's, verbatim."""

from __future__ import annotations

import pytest

from compute.render.errors import translate_spark_error

CASES = [
    ("Job aborted due to stage failure: Total size of serialized results of 3 tasks (70.1 MiB) is bigger than "
     "spark.driver.maxResultSize (64.0 MiB)", "53200", "result exceeds max size of 64.0 MiB"),
    ("Job aborted due to stage failure: Task 0 in stage 3.0 failed 1 times, most recent failure: Lost task 0.0 "
     "in stage 3.0 (TID 3) (localhost executor driver): org.apache.spark.SparkException: Python worker exited "
     "unexpectedly (crashed)", "58000", "compute unavailable: a Spark worker process exited while running this statement"),
    ("Job aborted due to stage failure: Task 1 in stage 2.0 failed 4 times, most recent failure: Lost task 1.3 in "
     "stage 2.0: ExecutorLostFailure (executor 1 exited caused by one of the running tasks) Reason: Container killed",
     "58000", "compute unavailable: a Spark worker process exited while running this statement"),
    ("[USER_RAISED_EXCEPTION] [54000] requested length too large SQLSTATE: P0001", "54000", "requested length too large"),
]


@pytest.mark.parametrize(("text", "state", "message"), CASES)
def test_resource_failures(text: str, state: str, message: str) -> None:
    e = translate_spark_error(RuntimeError(text))
    assert (e.sqlstate, e.message) == (state, message)
