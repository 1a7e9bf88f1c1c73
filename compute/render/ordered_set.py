"""Final functions of the ordered-set aggregates (sql.bind_ordered_set) over the sorted array
of a group's non-NULL values (NULL for a group without any)."""

from __future__ import annotations

from compute.render.types import spark_type
from sql.types import SqlType


def _t(t: SqlType) -> str:
    return spark_type(t).simpleString()


def _out_of_range(p: str, t: str) -> str:
    msg = f"concat('[22003] percentile value ', CAST({p} AS STRING), ' is not between 0 and 1')"
    return f"CAST(raise_error({msg}) AS {t})"


def _at(arr: str, i: str) -> str:
    """arr[i] with a 0-based (double) position."""
    return f"element_at({arr}, CAST({i} AS INT) + 1)"


def _cont(arr: str, p: str) -> str:
    """v[lo] + (v[hi] - v[lo]) * (r - lo), r = p * (n - 1), lo = floor r, hi = ceil r (v[lo] when lo = hi)."""
    r = f"({p} * (size({arr}) - 1))"
    lo, hi = _at(arr, f"floor({r})"), _at(arr, f"ceil({r})")
    return (f"(CASE WHEN {p} IS NULL THEN CAST(NULL AS DOUBLE) WHEN {p} < 0 OR {p} > 1 OR isnan({p}) THEN {_out_of_range(p, 'double')}"
            f" WHEN floor({r}) = ceil({r}) THEN {lo} ELSE {lo} + ({hi} - {lo}) * ({r} - floor({r})) END)")


def _disc(arr: str, p: str, t: str) -> str:
    """v[max(ceil(p * n), 1) - 1]."""
    return (f"(CASE WHEN {p} IS NULL THEN CAST(NULL AS {t}) WHEN {p} < 0 OR {p} > 1 OR isnan({p}) THEN {_out_of_range(p, t)}"
            f" ELSE element_at({arr}, greatest(CAST(ceil({p} * size({arr})) AS INT), 1)) END)")


def percentile(f: str, arr: str, p: str, t: SqlType) -> str:
    """percentile_cont / percentile_disc (`_multi`: of every element of the array p)."""
    multi = f.endswith("_multi")
    elem = t.element if multi and t.element is not None else t
    one = (lambda q: _cont(arr, q)) if f.startswith("percentile_cont") else (lambda q: _disc(arr, q, _t(elem)))
    if multi:
        return f"(CASE WHEN {arr} IS NOT NULL AND {p} IS NOT NULL THEN transform({p}, __p -> {one('__p')}) END)"
    return f"(CASE WHEN {arr} IS NOT NULL THEN {one(p)} END)"


def mode(arr: str, t: SqlType) -> str:
    """The value of the longest run of equal values in the sorted array (the first one on ties)."""
    st = _t(t)
    start = f"named_struct('best', CAST(NULL AS {st}), 'bc', 0, 'cur', CAST(NULL AS {st}), 'cc', 0)"
    step = ("(s, v) -> named_struct('best', IF(IF(s.cc > 0 AND s.cur = v, s.cc + 1, 1) > s.bc, v, s.best),"
            " 'bc', greatest(IF(s.cc > 0 AND s.cur = v, s.cc + 1, 1), s.bc), 'cur', v, 'cc', IF(s.cc > 0 AND s.cur = v, s.cc + 1, 1))")
    return f"(CASE WHEN {arr} IS NOT NULL THEN aggregate({arr}, {start}, {step}, s -> s.best) END)"
