"""Type input over whole columns: text fields -> the Arrow storage representation.

`text_column_to_arrow(arr, t)` has exactly the semantics of applying the type's input
function with its typmod, `sql.text_input.parse_value(s, t)`, to every non-NULL field and
storing the results with `values_to_arrow` — the path an INSERT of a string literal into a
column of type `t` takes (the binder's assignment cast of an `unknown` literal folds to
`parse_value`). COPY FROM uses it, so COPY and INSERT share one assignment path.

It is vectorized where that is provably the same: a column whose every field matches a
strict pattern for which Arrow's cast gives the value `parse_value` gives (plain integers,
plain decimals within the column's precision and scale, ISO dates, ...) is cast by Arrow;
any other column goes through `parse_value` field by field. `rows_first_error` re-checks
fields row by row so that an error is the one Postgres reports: the first bad field in
row order.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from catalog.storage.arrow_types import arrow_type, values_to_arrow
from sql.errors import SqlError
from sql.text_input import parse_value
from sql.types import SqlType

_INT_BOUNDS = {"int2": (-(2**15), 2**15 - 1), "int4": (-(2**31), 2**31 - 1), "int8": (-(2**63), 2**63 - 1)}
_INT_RE = r"^-?[0-9]{1,18}$"  # Arrow rejects a leading "+"; such fields take the slow path
_FLOAT_RE = r"^[+-]?([0-9]{1,300}\.?[0-9]{0,300}|\.[0-9]{1,300})([eE][+-]?[0-9]{1,3})?$"
_DATE_RE = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"
_TIMESTAMP_RE = (r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01]) "
                 r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,6})?$")
_TRUE = ("t", "true", "y", "yes", "on", "1")
_FALSE = ("f", "false", "n", "no", "off", "0")


def _all(mask: pa.Array) -> bool:
    """Every non-NULL entry of a boolean mask is true."""
    return bool(pc.all(mask, skip_nulls=True).as_py() is not False)


def _any(mask: pa.Array) -> bool:
    return bool(pc.any(mask, skip_nulls=True).as_py())


def _matches(arr: pa.Array, pattern: str) -> bool:
    return _all(pc.match_substring_regex(arr, pattern))


def _numeric_pattern(t: SqlType) -> str | None:
    """Plain decimals that fit numeric(p, s) exactly (no rounding, no overflow)."""
    ps = t.numeric_precision_scale()
    p, s = ps if ps is not None else (38, 10)
    if ps is not None and not (1 <= p <= 38 and 0 <= s <= p):
        return None
    whole = p - s
    if whole < 1:
        return None
    frac = rf"(\.[0-9]{{1,{s}}})?" if s > 0 else ""
    return rf"^[+-]?[0-9]{{1,{whole}}}{frac}$"


def _fast(arr: pa.Array | pa.ChunkedArray, t: SqlType) -> pa.Array | pa.ChunkedArray | None:
    """The column converted by Arrow when that equals `parse_value` field by field, else None."""
    n = t.name
    if arr.null_count == len(arr):
        return pa.nulls(len(arr), arrow_type(t))
    if n in ("text", "name", "varchar", "bpchar") and _any(pc.match_substring(arr, "\x00")):
        return None  # the other types' patterns admit no NUL
    if n in ("text", "name"):
        return arr
    if n in ("varchar", "bpchar"):
        width = t.char_length()
        if width is None:
            return arr
        if _any(pc.greater(pc.utf8_length(arr), width)):
            return None
        return pc.utf8_rpad(arr, width=width, padding=" ") if n == "bpchar" else arr
    if n in _INT_BOUNDS:
        if not _matches(arr, _INT_RE):
            return None
        ints = pc.cast(arr, pa.int64())
        lo, hi = _INT_BOUNDS[n]
        mm = pc.min_max(ints).as_py()
        if mm["min"] < lo or mm["max"] > hi:
            return None
        return pc.cast(ints, arrow_type(t))
    if n == "numeric":
        pattern = _numeric_pattern(t)
        if pattern is None or not _matches(arr, pattern):
            return None
        return pc.cast(arr, arrow_type(t))
    if n in ("float4", "float8"):
        if not _matches(arr, _FLOAT_RE):
            return None
        f = pc.cast(arr, pa.float64())
        limit = 3.4028235e38 if n == "float4" else 1.7976931348623157e308
        if _any(pc.greater(pc.abs(f), limit)) or _any(pc.is_inf(f)):
            return None
        return pc.cast(f, arrow_type(t))
    if n == "bool":
        low = pc.utf8_lower(arr)
        yes = pc.is_in(low, pa.array(_TRUE))
        if not _all(pc.or_(yes, pc.is_in(low, pa.array(_FALSE)))):
            return None
        return pc.if_else(pc.is_null(arr), pa.scalar(None, pa.bool_()), yes)
    if n == "date":
        if not _matches(arr, _DATE_RE) or _any(pc.starts_with(arr, "0000")):
            return None
        try:
            return pc.cast(arr, pa.date32())
        except pa.ArrowInvalid:
            return None
    if n == "timestamp":
        if not _matches(arr, _TIMESTAMP_RE) or _any(pc.starts_with(arr, "0000")):
            return None
        try:
            return pc.cast(arr, pa.timestamp("us"))
        except pa.ArrowInvalid:
            return None
    return None


def _slow(arr: pa.Array | pa.ChunkedArray, t: SqlType) -> pa.Array:
    """The reference path: the input function field by field, stored as INSERT stores."""
    return values_to_arrow(t, [None if v is None else parse_value(v, t) for v in arr.to_pylist()])


def text_column_to_arrow(arr: pa.Array | pa.ChunkedArray, t: SqlType) -> pa.Array | pa.ChunkedArray:
    """Fields of one column (strings, NULL = SQL NULL) as values of `t` (see module doc)."""
    try:
        fast = _fast(arr, t)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        fast = None  # a field Arrow's cast rejects although the pattern admits it
    return fast if fast is not None else _slow(arr, t)


def rows_first_error(columns: Sequence[pa.Array], types: Sequence[SqlType]) -> SqlError | None:
    """The error of the first bad field in row order (None if every field converts)."""
    values = [c.to_pylist() for c in columns]
    for r in range(len(values[0]) if values else 0):
        for col, t in zip(values, types, strict=True):
            if col[r] is not None:
                try:
                    values_to_arrow(t, [parse_value(col[r], t)])
                except SqlError as e:
                    return e
    return None


def text_columns_to_arrow(columns: Sequence[pa.Array], types: Sequence[SqlType]) -> list[pa.Array]:
    """Every column converted; on a bad field, the error Postgres reports (first in row order)."""
    try:
        return [text_column_to_arrow(c, t) for c, t in zip(columns, types, strict=True)]
    except SqlError as e:
        raise rows_first_error(columns, types) or e from None
