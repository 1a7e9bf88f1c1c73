"""Spark failures as a client sees them: Postgres' SQLSTATE and message, never Spark's,
py4j's or Python's text (compute/render/errors.py; no Spark started)."""

from __future__ import annotations

import pytest

from compute.render.errors import translate_spark_error


@pytest.mark.parametrize("text", [
    "[INVALID_INLINE_TABLE.FAILED_SQL_EXPRESSION_EVALUATION] Failed to evaluate the SQL expression: CAST(NaN AS DECIMAL(38,10))",
    "[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES] Cannot resolve \"(c0 + c1)\" due to data type mismatch",
    "'Column' object has no attribute 'dot'",
    "An error occurred while calling o123.collectToPython.\n: java.lang.IllegalStateException: boom",
])
def test_unknown_failures_are_a_generic_internal_error(text: str) -> None:
    err = translate_spark_error(RuntimeError(text))
    assert err.sqlstate == "XX000" and err.message.startswith("internal error [")
    assert text.split()[0] not in err.message


@pytest.mark.parametrize(("text", "state", "message"), [
    ("[CAST_INVALID_INPUT] The value 'abc' of the type \"STRING\" cannot be cast to \"INT\" because it is malformed.",
     "22P02", 'invalid input syntax for type integer: "abc"'),
    ("[CAST_INVALID_INPUT] The value 'x' of the type \"STRING\" cannot be cast to \"DECIMAL(38,10)\" because",
     "22P02", 'invalid input syntax for type numeric: "x"'),
    ("[DIVIDE_BY_ZERO] Division by zero. Use `try_divide` to tolerate divisor being 0", "22012", "division by zero"),
    ("[ARITHMETIC_OVERFLOW] integer overflow. Use 'try_add' to tolerate overflow. INT", "22003", "integer out of range"),
    ("[NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION] 1E+40 cannot be represented as Decimal(38, 10)", "22003",
     "numeric field overflow"),
    ("[INVALID_ARRAY_INDEX] The index 5 is out of bounds. The array has 2 elements.", "2202E",
     "array subscript out of range"),
])
def test_known_failures_carry_postgres_text(text: str, state: str, message: str) -> None:
    err = translate_spark_error(RuntimeError(text))
    assert (err.sqlstate, err.message) == (state, message)
