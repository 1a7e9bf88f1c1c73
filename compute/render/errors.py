"""Spark failures -> SqlError with the Postgres SQLSTATE a user expects."""

from __future__ import annotations

import re

from sql.errors import SqlError, internal_error

_CONDITIONS: dict[str, tuple[str, str | None]] = {
    "DIVIDE_BY_ZERO": ("22012", "division by zero"),
    "INTERVAL_DIVIDED_BY_ZERO": ("22012", "division by zero"),
    "REMAINDER_BY_ZERO": ("22012", "division by zero"),
    "ARITHMETIC_OVERFLOW": ("22003", None),
    "BINARY_ARITHMETIC_OVERFLOW": ("22003", None),
    "CAST_OVERFLOW": ("22003", None),
    # numbers beyond numeric's 39 digits (Materialize's wording; Spark's decimals stop at 38)
    "NUMERIC_VALUE_OUT_OF_RANGE": ("22003", "numeric field overflow"),
    "NUMERIC_OUT_OF_SUPPORTED_RANGE": ("22003", "numeric field overflow"),
    "DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION": ("22003", "numeric field overflow"),
    "CAST_INVALID_INPUT": ("22P02", None),
    "INVALID_ARRAY_INDEX": ("2202E", "array subscript out of range"),
    "INVALID_ARRAY_INDEX_IN_ELEMENT_AT": ("2202E", "array subscript out of range"),
    "DATETIME_OVERFLOW": ("22008", "timestamp out of range"),
    "DATETIME_FIELD_OUT_OF_BOUNDS": ("22008", "date/time field value out of range"),
    "INVALID_INDEX_OF_ZERO": ("22023", "field position must not be zero"),
    # a regular expression whose matching overflowed the JVM's stack (mzspark.udf.RegexUdfs)
    "STACK_DEPTH_LIMIT_EXCEEDED": ("54001", "stack depth limit exceeded"),
    # a computed pattern Java's regex does not compile (mzspark.udf.RegexUdfs)
    "INVALID_REGULAR_EXPRESSION": ("2201B", None),
}

# Spark's type names in CAST_INVALID_INPUT -> Postgres' names in "invalid input syntax for type"
_PG_TYPE_NAMES = {
    "INT": "integer", "BIGINT": "bigint", "SMALLINT": "smallint", "TINYINT": "smallint", "DOUBLE": "double precision",
    "FLOAT": "real", "BOOLEAN": "boolean", "DATE": "date", "TIMESTAMP": "timestamp with time zone",
    "TIMESTAMP_NTZ": "timestamp without time zone", "BINARY": "bytea",
}


def translate_spark_error(e: BaseException) -> SqlError:
    text = str(e)
    cond = None
    get = getattr(e, "getCondition", None) or getattr(e, "getErrorClass", None)
    if callable(get):
        try:
            cond = get()
        except Exception:  # noqa: BLE001
            cond = None
    if not cond:
        m = re.search(r"\[([A-Z_]+)(?:\.[A-Z_]+)?\]", text)
        cond = m.group(1) if m else None
    cond = cond.split(".")[0] if cond else None  # NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION -> its class
    if cond in ("INTERNAL_ERROR", "FAILED_EXECUTE_UDF"):
        # an error raised while the optimizer evaluates an expression over a local relation
        # (ConvertToLocalRelation), or while a Java UDF's argument is converted to its input
        # type, comes wrapped: the cause's condition answers
        for m in re.finditer(r"\[([A-Z_]+)(?:\.[A-Z_]+)?\]", text):
            if m.group(1) in _CONDITIONS or m.group(1) == "USER_RAISED_EXCEPTION":
                return translate_spark_error(Exception(text[m.start():]))
    if cond in _CONDITIONS:
        state, msg = _CONDITIONS[cond]
        if msg is None and cond == "INVALID_REGULAR_EXPRESSION":
            m = re.search(r"\[INVALID_REGULAR_EXPRESSION\]\s*(.*?)(?:\s*SQLSTATE|\n|$)", text)
            msg = m.group(1).strip().rstrip(".") if m else "invalid regular expression"  # Spark ends it with "."
        if msg is None:
            msg = _cast_input_message(text) if cond == "CAST_INVALID_INPUT" else "value out of range"
            if cond in ("ARITHMETIC_OVERFLOW", "CAST_OVERFLOW", "BINARY_ARITHMETIC_OVERFLOW"):
                msg = "numeric value out of range" if "DECIMAL" in text else _overflow_message(text)
        return SqlError(state, msg)
    if cond == "USER_RAISED_EXCEPTION":
        m = re.search(r"\[USER_RAISED_EXCEPTION\]\s*(.*?)(?:\s*SQLSTATE|\n|$)", text)
        msg = m.group(1).strip() if m else _first_line(text)
        tagged = re.match(r"\[([0-9A-Z]{5})\]\s*(.*)$", msg)
        if tagged:
            return SqlError(tagged.group(1), tagged.group(2))
        if "substring length" in msg:
            return SqlError("22011", msg)
        # untagged raise_error texts are mzspark's own messages (Materialize's XX000 wordings)
        return SqlError("XX000", msg)
    if "Python worker exited unexpectedly" in text or "ExecutorLostFailure" in text:
        # a process computing the query died (the driver survived): the query can be retried
        return SqlError("58000", "compute unavailable: a Spark worker process exited while running this statement",
                        hint="The statement had no effect; retry it.")
    if "spark.driver.maxResultSize" in text:
        # the job's results outgrew Spark's bound on what the driver collects
        m = re.search(r"bigger than spark\.driver\.maxResultSize \(([^)]+)\)", text)
        return SqlError("53200", f"result exceeds max size of {m.group(1) if m else 'spark.driver.maxResultSize'}")
    if "OutOfMemoryError" in text or "SparkOutOfMemoryError" in text:
        # a task's memory ran out and Spark failed only the query
        return SqlError("53200", "out of memory")
    if "cancelled" in text.lower() or "canceled" in text.lower():
        return SqlError("57014", "canceling statement due to user request")
    return internal_error(e)


def _cast_input_message(text: str) -> str:
    """Spark's `The value 'x' of the type "STRING" cannot be cast to "INT"` in Postgres' words."""
    m = re.search(r"The value '(.*?)' of the type \"[^\"]*\" cannot be cast to \"([A-Z_]+)(?:\(|\")", text, re.S)
    if not m:
        return "invalid input syntax"
    target = "numeric" if m.group(2) == "DECIMAL" else _PG_TYPE_NAMES.get(m.group(2), m.group(2).lower())
    return f'invalid input syntax for type {target}: "{m.group(1)}"'


def _overflow_message(text: str) -> str:
    if "INT" in text and "BIGINT" not in text:
        return "integer out of range"
    if "BIGINT" in text or "LONG" in text:
        return "bigint out of range"
    if "SMALLINT" in text:
        return "smallint out of range"
    return "value out of range"


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return re.sub(r"\s*SQLSTATE:\s*\w+\s*$", "", line)[:500]
    return "error"
