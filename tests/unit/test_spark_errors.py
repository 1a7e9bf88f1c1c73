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


# SQL failures Spark reports in its own words: Postgres' SQLSTATE and message, never Spark's text
SQL_CASES = [
    ("[NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION]  8015491789940783531003294973900306 cannot be represented as "
     "Decimal(38, 0). If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error, and return NULL "
     "instead. SQLSTATE: 22003", "22003", "numeric field overflow"),
    ("[NUMERIC_OUT_OF_SUPPORTED_RANGE] The value 4.5E+131071 cannot be interpreted as a numeric since it has more "
     "than 38 digits. SQLSTATE: 22003", "22003", "numeric field overflow"),
    ("[INVALID_INDEX_OF_ZERO] The index 0 is invalid. An index shall be either < 0 or > 0 (the first element has "
     "index 1). SQLSTATE: 22003", "22023", "field position must not be zero"),
    ("[DATETIME_FIELD_OUT_OF_BOUNDS] Invalid value for MonthOfYear (valid values 1 - 12): 13. If necessary set "
     "\"spark.sql.ansi.enabled\" to \"false\" to bypass this error. SQLSTATE: 22023", "22008",
     "date/time field value out of range"),
    ("[CAST_INVALID_INPUT] The value 'abc' of the type \"STRING\" cannot be cast to \"INT\" because it is malformed. "
     "Correct the value as per the syntax, or change its target type. SQLSTATE: 22018", "22P02",
     'invalid input syntax for type integer: "abc"'),
    # a Java regex UDF's failure (mzspark.udf.RegexUdfs), wrapped by Spark
    ("[FAILED_EXECUTE_UDF] User defined function (`mz_regex_find (RegexUdfs$Find)`: (string, string) => boolean) "
     "failed due to: mzspark.udf.RegexUdfs$InvalidRegularExpression: [INVALID_REGULAR_EXPRESSION] invalid regular "
     "expression: Unclosed group. SQLSTATE: 39000", "2201B", "invalid regular expression: Unclosed group"),
    ("[FAILED_EXECUTE_UDF] User defined function (`mz_regexp_replace (RegexUdfs$Replace)`) failed due to: "
     "mzspark.udf.RegexUdfs$StackDepthLimitExceeded: [STACK_DEPTH_LIMIT_EXCEEDED] stack depth limit exceeded while "
     "matching a regular expression SQLSTATE: 39000", "54001", "stack depth limit exceeded"),
]


@pytest.mark.parametrize(("text", "state", "message"), SQL_CASES)
def test_sql_failures(text: str, state: str, message: str) -> None:
    e = translate_spark_error(RuntimeError(text))
    assert (e.sqlstate, e.message) == (state, message)


def test_unmapped_failure_is_generic_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    """An unmapped failure is XX000 with a reference; Spark's text only goes to the server log."""
    text = "[SPECIFIED_WINDOW_FRAME_UNACCEPTED_TYPE] py4j.protocol.Py4JJavaError toArrowBatchRdd"
    e = translate_spark_error(RuntimeError(text))
    assert e.sqlstate == "XX000"
    assert "py4j" not in e.message and "SPECIFIED" not in e.message
    ref = e.message.removeprefix("internal error [").removesuffix("]")
    assert ref and ref != e.message
    assert any(ref in r.getMessage() and text in r.getMessage() for r in caplog.records)


class _Captured(RuntimeError):
    """A pyspark captured exception: the condition comes with its subclass."""

    def getCondition(self) -> str:  # noqa: N802 (pyspark's name)
        return "NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION"


def test_condition_with_subclass() -> None:
    e = translate_spark_error(_Captured("cannot be represented as Decimal(38, 10)"))
    assert (e.sqlstate, e.message) == ("22003", "numeric field overflow")


def test_array_literals_hash() -> None:
    """Plan rules hash scalars (sets, dict keys): an array literal must hash like its equal."""
    from sql.scalar import Literal
    from sql.types import SqlType

    a, b = Literal(["a", "b"], SqlType("_text")), Literal(["a", "b"], SqlType("_text"))
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
