"""Postgres' 1 GB value limit, checked before Spark allocates a value.

Postgres refuses any value over MaxAllocSize (2^30 - 1 bytes) with SQLSTATE 54000. Spark
would try: a `repeat('a', 2147483647)` asks the JVM for a 2 GB array, and its
OutOfMemoryError ends the driver. Each guard compares the result's size, computed from the
arguments' sizes, with the limit, and fails the query with Postgres' error where the value
would be too large. The guard is a CASE evaluated per row, so it holds for constant and
run-time arguments alike, and only on rows that reach the function.
"""

from __future__ import annotations

MAX_ALLOC = 0x3FFFFFFF  # Postgres' MaxAllocSize
VARHDRSZ = 4  # a text value's length header
MAX_CHAR_BYTES = 4  # the longest UTF-8 character: lpad/rpad reserve this much a character
MAX_TEXT_BYTES = MAX_ALLOC - VARHDRSZ


def _fail(msg: str) -> str:
    """A string expression failing the query with `[54000] msg` (compute.render.errors)."""
    return f"CAST(raise_error('[54000] {msg}') AS STRING)"


TOO_LARGE = _fail("requested length too large")


def repeat(s: str, n: str) -> str:
    """repeat(s, n) = s n times (n < 0: '', n NULL: NULL), unless len(s) * n exceeds the limit."""
    n = f"(CASE WHEN {n} < 0 THEN 0 ELSE {n} END)"  # greatest() would turn NULL into 0
    return (f"(CASE WHEN octet_length({s}) * CAST({n} AS BIGINT) > {MAX_TEXT_BYTES} THEN {TOO_LARGE}"
            f" ELSE repeat({s}, {n}) END)")


def pad(f: str, s: str, n: str, fill: str) -> str:
    """lpad/rpad(s, n, fill), unless n characters may exceed the limit. Postgres reserves 4
    bytes a character and checks before padding; an empty fill only truncates."""
    return (f"(CASE WHEN {n} > {MAX_TEXT_BYTES // MAX_CHAR_BYTES} AND octet_length({fill}) > 0 THEN {TOO_LARGE}"
            f" ELSE {f}({s}, {n}, {fill}) END)")


def joined_text(total_bytes: str, value: str) -> str:
    """The text of an aggregate (string_agg) joining `total_bytes` bytes: Postgres' string
    buffer fails when it would reach the limit."""
    return f"(CASE WHEN {total_bytes} >= {MAX_ALLOC} THEN {_fail('out of memory')} ELSE {value} END)"
