"""Filter pushdown to a source read, judged against a part's column statistics (EXPLAIN
FILTER PUSHDOWN).

`source_filters(m)`: for each storage collection an optimized MIR plan reads, the
predicates of each of its reads: the Filter directly over the read (through Maps, whose
new columns the pushed predicates do not use); a read with no Filter has none.

`may_match(p, stats)`: False only when the statistics of a part (each column's min, max
and null count) prove that no row of the part makes `p` TRUE; anything this module cannot
reason about is True (the part is read). Only comparisons of a column (or a lossless
integer widening of one) with a literal, IS [NOT] NULL, AND, OR and boolean literals are
reasoned about, over types whose Parquet statistics order is SQL's order (integers, date,
timestamp, timestamptz, text by code point); floats (NaN sorts greatest in SQL, Parquet
statistics ignore it) and everything else keep every part.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sql import mir
from sql.mir import Mir
from sql.scalar import CallBinary, CallUnary, CallVariadic, Column, Literal, Scalar

# SQL types whose Python values compare like SQL (and like their Parquet statistics)
_ORDERED = {"int2": "int", "int4": "int", "int8": "int", "date": "date", "timestamp": "timestamp",
            "timestamptz": "timestamptz", "text": "text"}
_FLIP = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """One column of one part: `min` / `max` None when the statistics have none (or every
    value is NULL); `nulls` None when the null count is unknown."""

    min: Any
    max: Any
    nulls: int | None


@dataclass(frozen=True, slots=True)
class PartStats:
    rows: int
    columns: Mapping[int, ColumnStats]  # by column index; a column without usable stats is absent


def source_filters(m: Mir) -> dict[str, list[tuple[Scalar, ...]]]:
    """Storage id -> the predicates of each read of it (one tuple per read; () = no filter)."""
    out: dict[str, list[tuple[Scalar, ...]]] = {}

    def walk(x: Mir) -> None:
        match x:
            case mir.Get(local=False):
                out.setdefault(x.id, []).append(())
                return
            case mir.Filter(input=inner):
                get, arity = _read_under(inner)
                if get is not None:
                    preds = tuple(p for p in x.predicates if max(_columns(p), default=-1) < arity)
                    out.setdefault(get.id, []).append(preds)
                    return
        for c in mir.mir_children(x):
            walk(c)

    walk(m)
    return out


def _read_under(x: Mir) -> tuple[mir.Get | None, int]:
    """The storage read under Maps (Map keeps its input's columns first), and its arity."""
    while isinstance(x, mir.Map):
        x = x.input
    if isinstance(x, mir.Get) and not x.local:
        return x, len(x.types)
    return None, 0


def _columns(e: Scalar) -> set[int]:
    match e:
        case Column(index=i):
            return {i}
        case Literal():
            return set()
        case CallUnary(expr=a):
            return _columns(a)
        case CallBinary(expr1=a, expr2=b):
            return _columns(a) | _columns(b)
        case CallVariadic(exprs=xs):
            return set().union(*(_columns(x) for x in xs))
        case _:  # If
            return _columns(e.cond) | _columns(e.then) | _columns(e.els)


def part_selected(reads: Sequence[tuple[Scalar, ...]], part: PartStats) -> bool:
    """A part is read when some read of the source may find a row in it (a read's
    predicates are AND-ed; a read without predicates reads every part)."""
    return any(all(may_match(p, part) for p in preds) for preds in reads)


def may_match(p: Scalar, part: PartStats) -> bool:
    """False only when `part`'s statistics prove no row makes `p` TRUE."""
    match p:
        case Literal(value=v):
            return v is True
        case CallVariadic(func="and", exprs=xs):
            return all(may_match(x, part) for x in xs)
        case CallVariadic(func="or", exprs=xs):
            return any(may_match(x, part) for x in xs)
        case CallUnary(func="is_null", expr=x):
            s = _stats(x, part)
            return s is None or s.nulls is None or s.nulls > 0
        case CallUnary(func="not", expr=CallUnary(func="is_null", expr=x)):
            s = _stats(x, part)
            return s is None or s.nulls is None or s.nulls < part.rows
        case CallBinary(func=op, expr1=a, expr2=b) if op in _FLIP:
            if isinstance(a, Literal) and not isinstance(b, Literal):
                a, b, op = b, a, _FLIP[op]
            if not isinstance(b, Literal) or _kind(b.typ.name) is None:
                return True
            s = _stats(a, part)
            if s is None or _kind(_column(a).typ.name) != _kind(b.typ.name):  # type: ignore[union-attr]
                return True
            return _compare_may_hold(op, s, b.value, part.rows)
        case _:
            return True


def _kind(type_name: str) -> str | None:
    return _ORDERED.get(type_name)


def _column(e: Scalar) -> Column | None:
    """The column `e` is, looking through lossless integer widenings (int2 -> int4 -> int8)."""
    match e:
        case Column():
            return e if _kind(e.typ.name) is not None else None
        case CallUnary(func="cast", expr=inner, typ=t) if _kind(t.name) == "int":
            c = _column(inner)
            return c if c is not None and _kind(c.typ.name) == "int" else None
        case _:
            return None


def _stats(e: Scalar, part: PartStats) -> ColumnStats | None:
    c = _column(e)
    return None if c is None else part.columns.get(c.index)


def _compare_may_hold(op: str, s: ColumnStats, v: Any, rows: int) -> bool:
    """May `column op v` be TRUE for some row, given the column's statistics?"""
    if v is None:
        return False  # a comparison with NULL is never TRUE
    if s.nulls is not None and s.nulls >= rows:
        return False  # every value is NULL
    if s.min is None or s.max is None:
        return True
    try:
        match op:
            case "eq":
                return bool(s.min <= v <= s.max)
            case "ne":
                return not (s.min == v == s.max)
            case "lt":
                return bool(s.min < v)
            case "le":
                return bool(s.min <= v)
            case "gt":
                return bool(s.max > v)
            case _:  # ge
                return bool(s.max >= v)
    except TypeError:  # values that do not compare (e.g. naive vs aware): keep the part
        return True
