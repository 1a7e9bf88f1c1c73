"""Constant folding of operators whose input is a Constant.

- Map(ss)(Constant(rows)) = Constant(row ++ eval(ss, row) for row in rows), when every
  scalar is built from literals, columns, casts (evaluated with the types' own input/output
  rules in sql.literal), numeric arithmetic and functions (+ - * / ^ exp ln log sqrt,
  evaluated exactly as Postgres does by sql.numeric_ops), smallint/integer/bigint + - * / %
  and unary minus, comparisons of two integers, numerics or booleans, AND / OR / NOT /
  IS NULL (three-valued) and CASE; anything else, and any evaluation that would fail
  (overflow, division by zero), is left to the renderer, whose errors are the reference
- Project(o)(Constant(rows)) = Constant(row[o] for row in rows)
- Filter(ps)(Constant(rows)) = Constant(rows where every p is true), for scalars as above
- s(l1, .., ln) = eval(s) for a scalar s of Map, Filter or FlatMap whose arguments are all
  literals, over any input (the same evaluations as above, plus date / timestamp ± interval
  and date ± integer by sql.datetime_arith); CASE WHEN true THEN a ELSE b END = a and
  CASE WHEN false/null THEN a ELSE b END = b; AND / OR absorb their literals (see _absorb);
  an evaluation that would fail stays, so that the error is raised only when a row reaches it;
  a date compared with a timestamp literal compares as a date (see _unwrap_date_cast)
- Filter(true..)(x) = x;  Filter(.., false/null, ..)(x) = Constant[]
- Negate(Constant(rows)) = Constant((row, -diff) for rows)
- empty inputs: Union(.., Constant[], ..) = Union(..) (the input itself when one is left);
  Join(.., Constant[], ..) = Constant[]; a unary operator (Map, Filter, Project, FlatMap,
  Reduce, TopK, Negate, Threshold) of Constant[] is Constant[] (a Reduce without group key
  too: MIR's global aggregates have no row for an empty input; lowering adds the default)
"""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal, localcontext
from typing import Any

from sql import mir, numeric_ops
from sql.datetime_arith import negate_interval, timestamp_plus_interval
from sql.literal import cast_value
from sql.scalar import (
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    If,
    Literal,
    ParamLiteral,
    Scalar,
    children,
)
from sql.transforms.visit import map_children
from sql.types import Interval


class NotFoldable(Exception):
    """An evaluation the folder leaves to the renderer (unsupported, or it would fail)."""


# numeric operators and functions: name -> exact evaluation (sql.numeric_ops)
def _exact(op: Callable[[Decimal, Decimal], Decimal], scale: Callable[[Decimal, Decimal], int]) -> Callable[[Decimal, Decimal], Decimal]:
    """op computed in numeric_ops' wide context (was: the thread's 28-digit default context,
    which rounded a 29-digit sum half-even before `checked`), then rounded to `scale`."""

    def f(a: Decimal, b: Decimal) -> Decimal:
        with localcontext(numeric_ops.context()):
            v = op(a, b)
        return numeric_ops.checked(v, scale(a, b))

    return f


def _max_dscale(a: Decimal, b: Decimal) -> int:
    return max(numeric_ops.dscale(a), numeric_ops.dscale(b))


_NUMERIC_BINARY = {
    "add": _exact(operator.add, _max_dscale),
    "sub": _exact(operator.sub, _max_dscale),
    "mul": _exact(operator.mul, lambda a, b: numeric_ops.dscale(a) + numeric_ops.dscale(b)),
    "div": numeric_ops.div,
    "pow": numeric_ops.power,
    "power": numeric_ops.power,
    "log": numeric_ops.log,
}
_NUMERIC_UNARY = {"exp": numeric_ops.exp, "ln": numeric_ops.ln, "log10": numeric_ops.log10, "sqrt": numeric_ops.sqrt}


def _numeric_call(s: Scalar) -> bool:
    """A numeric operator or function of numeric arguments that folding evaluates exactly."""
    match s:
        case CallBinary(func=f, expr1=a, expr2=b, typ=t) if f in _NUMERIC_BINARY:
            return t.name == a.typ.name == b.typ.name == "numeric"
        case CallUnary(func=f, expr=x, typ=t) if f in _NUMERIC_UNARY:
            return t.name == x.typ.name == "numeric"
    return False


_INT_RANGE = {"int2": 1 << 15, "int4": 1 << 31, "int8": 1 << 63}


def _int_div(a: int, b: int) -> int:
    """Integer division truncating toward zero (Postgres), not flooring (Python)."""
    if b == 0:
        raise NotFoldable
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _int_mod(a: int, b: int) -> int:
    """The remainder takes the dividend's sign (Postgres)."""
    if b == 0:
        raise NotFoldable
    return a - _int_div(a, b) * b


_INT_BINARY: dict[str, Callable[[int, int], int]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": _int_div, "mod": _int_mod}
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}
# types whose Python values compare as Postgres compares them (no collation, no NaN)
_ORDERED = frozenset({"int2", "int4", "int8", "numeric", "bool"})


def _int_call(s: Scalar) -> bool:
    match s:
        case CallBinary(func=f, expr1=a, expr2=b, typ=t) if f in _INT_BINARY:
            return t.name in _INT_RANGE and a.typ.name == b.typ.name == t.name
        case CallUnary(func="neg", expr=x, typ=t):
            return t.name in _INT_RANGE and x.typ.name == t.name
    return False


def _compare_call(s: Scalar) -> bool:
    match s:
        case CallBinary(func=f, expr1=a, expr2=b, typ=t) if f in _COMPARE:
            return t.name == "bool" and a.typ.name == b.typ.name and a.typ.name in _ORDERED
    return False


def _datetime_call(s: Scalar) -> bool:
    """date / timestamp ± interval (a timestamp) and date ± integer (a date); timestamptz
    arithmetic depends on the session's time zone and is left to the renderer."""
    match s:
        case CallBinary(func="add" | "sub", expr1=a, expr2=b, typ=t):
            return (a.typ.name in ("date", "timestamp") and b.typ.name == "interval" and t.name == "timestamp") \
                or (a.typ.name == "date" and b.typ.name == "int4" and t.name == "date")
    return False


def _datetime_eval(f: str, a: Any, b: Any) -> Any:
    match a, b:
        case dt.datetime(), Interval():
            return timestamp_plus_interval(a, b if f == "add" else negate_interval(b))
        case dt.date(), Interval():
            return timestamp_plus_interval(dt.datetime(a.year, a.month, a.day), b if f == "add" else negate_interval(b))
        case dt.date(), int():
            return a + dt.timedelta(days=b if f == "add" else -b)
    raise NotFoldable


def _in_range(v: int, typ: str) -> int:
    bound = _INT_RANGE[typ]
    if not -bound <= v < bound:
        raise NotFoldable  # the renderer raises Postgres' "... out of range"
    return v


def eval_scalar(s: Scalar, row: tuple[Any, ...], types) -> Any:
    """s over one row, with Postgres' semantics; raises NotFoldable where it cannot."""
    match s:
        case Literal(value=v):
            return v
        case Column(index=i):
            return row[i]
        case CallUnary(func="cast", expr=x, typ=t):
            return cast_value(eval_scalar(x, row, types), x.typ, t)
        case CallBinary(func=f, expr1=a, expr2=b) if _numeric_call(s):
            va, vb = eval_scalar(a, row, types), eval_scalar(b, row, types)
            return None if va is None or vb is None else _NUMERIC_BINARY[f](va, vb)
        case CallUnary(func=f, expr=x) if _numeric_call(s):
            v = eval_scalar(x, row, types)
            return None if v is None else _NUMERIC_UNARY[f](v)
        case CallBinary(func=f, expr1=a, expr2=b, typ=t) if _int_call(s):
            va, vb = eval_scalar(a, row, types), eval_scalar(b, row, types)
            return None if va is None or vb is None else _in_range(_INT_BINARY[f](va, vb), t.name)
        case CallUnary(func="neg", expr=x, typ=t) if _int_call(s):
            v = eval_scalar(x, row, types)
            return None if v is None else _in_range(-v, t.name)
        case CallBinary(func=f, expr1=a, expr2=b) if _datetime_call(s):
            va, vb = eval_scalar(a, row, types), eval_scalar(b, row, types)
            if va is None or vb is None:
                return None
            try:
                return _datetime_eval(f, va, vb)
            except OverflowError:
                raise NotFoldable from None  # out of Python's years: the renderer decides
        case CallBinary(func=f, expr1=a, expr2=b) if _compare_call(s):
            va, vb = eval_scalar(a, row, types), eval_scalar(b, row, types)
            if va is None or vb is None:
                return None
            if any(isinstance(v, Decimal) and v.is_nan() for v in (va, vb)):
                raise NotFoldable  # NaN orders above every number in Postgres
            return _COMPARE[f](va, vb)
        case CallUnary(func="not", expr=x):
            v = eval_scalar(x, row, types)
            return None if v is None else not v
        case CallUnary(func="is_null", expr=x):
            return eval_scalar(x, row, types) is None
        case CallVariadic(func="and", exprs=xs):
            vs = [eval_scalar(x, row, types) for x in xs]
            return False if any(v is False for v in vs) else (None if any(v is None for v in vs) else True)
        case CallVariadic(func="or", exprs=xs):
            vs = [eval_scalar(x, row, types) for x in xs]
            return True if any(v is True for v in vs) else (None if any(v is None for v in vs) else False)
        case If(cond=c, then=a, els=b):
            return eval_scalar(a, row, types) if eval_scalar(c, row, types) is True else eval_scalar(b, row, types)
        case _:
            raise NotFoldable


def foldable(s: Scalar) -> bool:
    """Is s built only from what eval_scalar evaluates?"""
    match s:
        case Literal() | Column():
            return True
        case CallUnary(func="cast", expr=x):
            return foldable(x)
        case CallBinary(expr1=a, expr2=b) if _numeric_call(s):
            return foldable(a) and foldable(b)
        case CallUnary(expr=x) if _numeric_call(s) or _int_call(s):
            return foldable(x)
        case CallBinary(expr1=a, expr2=b) if _int_call(s) or _compare_call(s) or _datetime_call(s):
            return foldable(a) and foldable(b)
        case CallUnary(func="not" | "is_null", expr=x, typ=t) if t.name == "bool":
            return foldable(x)
        case CallVariadic(func="and" | "or", exprs=xs, typ=t) if t.name == "bool":
            return all(foldable(x) for x in xs)
        case If(cond=c, then=a, els=b):
            return foldable(c) and foldable(a) and foldable(b)
        case _:
            return False


def _rebuild(s: Scalar, kids: tuple[Scalar, ...]) -> Scalar:
    match s:
        case CallUnary():
            return replace(s, expr=kids[0])
        case CallBinary():
            return replace(s, expr1=kids[0], expr2=kids[1])
        case CallVariadic():
            return replace(s, exprs=kids)
        case If():
            return replace(s, cond=kids[0], then=kids[1], els=kids[2])
    return s


# casts whose result does not depend on session settings (TimeZone, DateStyle, IntervalStyle,
# extra_float_digits); a literal of any other cast that survived binding stays for the renderer
_CONTEXT_FREE = frozenset({"int2", "int4", "int8", "numeric", "float4", "float8", "bool"})


def _context_free(s: Scalar) -> bool:
    match s:
        case CallUnary(func="cast", expr=x, typ=t):
            return (x.typ.name in _CONTEXT_FREE and t.name in _CONTEXT_FREE) or (x.typ.name, t.name) == ("date", "timestamp")
    return True


def fold_scalar(s: Scalar) -> Scalar:
    """s with every subexpression whose arguments are all literals evaluated (bottom up),
    where eval_scalar evaluates it and the evaluation succeeds; s itself when nothing folds."""
    if isinstance(s, If):
        c = fold_scalar(s.cond)
        if isinstance(c, Literal):  # CASE picks its branch without evaluating the other
            return fold_scalar(s.then if c.value is True else s.els)
    kids = children(s)
    if not kids:
        return s
    folded = tuple(fold_scalar(k) for k in kids)
    s2 = s if all(a is b for a, b in zip(kids, folded, strict=True)) else _rebuild(s, folded)
    if isinstance(s2, CallVariadic) and s2.func in ("and", "or"):
        s2 = _absorb(s2)
        if not isinstance(s2, CallVariadic):
            return s2
        folded = s2.exprs
    if (unwrapped := _unwrap_date_cast(s2)) is not s2:
        s2, folded = unwrapped, children(unwrapped)
    if (null := _null_operand(s2, folded)) is not None:
        return null
    if all(isinstance(k, Literal) for k in folded) and _context_free(s2) and foldable(s2):
        try:
            # a value computed from a bound parameter's stays marked as one (compute.render.templates)
            kind = ParamLiteral if any(isinstance(k, ParamLiteral) for k in folded) else Literal
            return kind(eval_scalar(s2, (), ()), s2.typ)
        except Exception:  # noqa: BLE001 - NotFoldable, or an input/cast error: the renderer's to raise
            return s2
    return s2


# operators whose PostgreSQL functions are STRICT: a NULL operand makes the result NULL
_NULL_PROPAGATING = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "add", "sub", "mul", "div", "mod"})


def _null_operand(s: Scalar, operands: tuple[Scalar, ...]) -> Literal | None:
    """op(NULL, e) = op(e, NULL) = NULL for a strict operator, e unevaluated, as PostgreSQL's
    eval_const_expressions folds it (`c / 0 = NULL` is NULL for every row, no 22012; Spark
    would evaluate c / 0 where it folds a filter into a local relation before its own
    NullPropagation). Only where e reads a column: a constant e is evaluated first, as
    PostgreSQL does (`1 / 0 = NULL` fails)."""
    if not (isinstance(s, CallBinary) and s.func in _NULL_PROPAGATING):
        return None
    nulls = [k for k in operands if isinstance(k, Literal) and k.value is None]
    if not nulls or not all(_reads_column(k) for k in operands if not isinstance(k, Literal)):
        return None
    return (ParamLiteral if any(isinstance(k, ParamLiteral) for k in nulls) else Literal)(None, s.typ)


def _reads_column(s: Scalar) -> bool:
    return isinstance(s, Column) or any(_reads_column(k) for k in children(s))


_FLIPPED = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def _unwrap_date_cast(s: Scalar) -> Scalar:
    """A date column compared with a timestamp literal T compares as a date (no cast per row,
    and Parquet statistics of the date column apply):

        timestamp(d) op T        = d op date(T)                      (T at midnight)
        timestamp(d) < | <= T    = d <= date(T)                      (otherwise)
        timestamp(d) > | >= T    = d > date(T)                       (otherwise)

    and likewise with T on the left. TPC-H writes `l_shipdate < date '…' + interval '1' year`,
    a timestamp once folded."""
    match s:
        case CallBinary(func=f, expr1=a, expr2=b) if f in _FLIPPED:
            if isinstance(a, Literal) and not isinstance(b, Literal):
                a, b, f = b, a, _FLIPPED[f]
            if not (isinstance(a, CallUnary) and a.func == "cast" and a.expr.typ.name == "date" and a.typ.name == "timestamp"
                    and isinstance(b, Literal) and type(b.value) is dt.datetime):
                return s
            day = Literal(b.value.date(), a.expr.typ)
            if b.value.time() == dt.time(0):
                return CallBinary(f, a.expr, day, s.typ)
            if f in ("lt", "le"):
                return CallBinary("le", a.expr, day, s.typ)
            if f in ("gt", "ge"):
                return CallBinary("gt", a.expr, day, s.typ)
    return s


def _total(s: Scalar) -> bool:
    """s never raises an error (so skipping its evaluation changes nothing)."""
    match s:
        case Literal() | Column():
            return True
        case CallUnary(func="is_null" | "not", expr=x):
            return _total(x)
        case CallVariadic(func="and" | "or", exprs=xs):
            return all(_total(x) for x in xs)
    return False


def _absorb(s: CallVariadic) -> Scalar:
    """a AND true = a, a OR false = a; x AND false AND .. = false and x OR true OR .. = true
    when every x before the literal never raises (PostgreSQL evaluates left to right and
    stops there, so an error before it is still raised)."""
    dominant, neutral = (False, True) if s.func == "and" else (True, False)
    rest = tuple(x for x in s.exprs if not (isinstance(x, Literal) and x.value is neutral))
    for x in rest:
        if isinstance(x, Literal) and x.value is dominant:
            return Literal(dominant, s.typ)
        if not _total(x):
            break
    if len(rest) == len(s.exprs):
        return s
    return Literal(neutral, s.typ) if not rest else rest[0] if len(rest) == 1 else replace(s, exprs=rest)


def _fold_all(ss: tuple[Scalar, ...]) -> tuple[Scalar, ...]:
    out = tuple(fold_scalar(s) for s in ss)
    return ss if all(a is b for a, b in zip(ss, out, strict=True)) else out


def _fold_scalars(r: mir.Mir) -> mir.Mir:
    """The literal-only subexpressions of a Map's, Filter's or FlatMap's scalars, evaluated."""
    match r:
        case mir.Map(scalars=ss):
            ss2 = _fold_all(ss)
            return r if ss2 is ss else replace(r, scalars=ss2)
        case mir.Filter(predicates=ps):
            ps2 = _fold_all(ps)
            return r if ps2 is ps else replace(r, predicates=ps2)
        case mir.FlatMap(exprs=xs):
            xs2 = _fold_all(xs)
            return r if xs2 is xs else replace(r, exprs=xs2)
    return r


def _is_empty(x: mir.Mir) -> bool:
    return isinstance(x, mir.Constant) and not x.rows


def fold_constants(r: mir.Mir) -> mir.Mir:
    r = _fold_scalars(map_children(r, fold_constants))
    match r:
        case mir.Union(inputs=xs) if any(_is_empty(x) for x in xs):
            rest = tuple(x for x in xs if not _is_empty(x))
            if not rest:
                return mir.Constant((), mir.mir_types(r))
            return rest[0] if len(rest) == 1 else mir.Union(rest)
        case mir.Join(inputs=xs) if any(_is_empty(x) for x in xs):
            return mir.Constant((), mir.mir_types(r))
        case mir.Map(input=x) | mir.Filter(input=x) | mir.FlatMap(input=x) | mir.Reduce(input=x) | mir.TopK(input=x) \
                | mir.Negate(input=x) | mir.Threshold(input=x) if _is_empty(x):
            return mir.Constant((), mir.mir_types(r))
        case mir.Map(input=mir.Constant(rows=rows, types=ts), scalars=ss) if all(foldable(s) for s in ss):
            out = []
            try:
                for row, d in rows:
                    full = row
                    for s in ss:
                        full = full + (eval_scalar(s, full, ts),)
                    out.append((full, d))
            except NotFoldable:
                return r
            return mir.Constant(tuple(out), ts + tuple(s.typ for s in ss))
        case mir.Project(input=mir.Constant(rows=rows, types=ts), outputs=o):
            return mir.Constant(tuple((tuple(row[i] for i in o), d) for row, d in rows), tuple(ts[i] for i in o))
        case mir.Negate(input=mir.Constant(rows=rows, types=ts)):
            return mir.Constant(tuple((row, -d) for row, d in rows), ts)
        case mir.Filter(input=mir.Constant(rows=rows, types=ts), predicates=ps) if ps and all(foldable(p) for p in ps):
            try:
                kept = tuple((row, d) for row, d in rows if all(eval_scalar(p, row, ts) is True for p in ps))
            except NotFoldable:
                return r
            return mir.Constant(kept, ts)
        case mir.Filter(input=x, predicates=ps):
            keep = tuple(p for p in ps if not (isinstance(p, Literal) and p.value is True))
            if any(isinstance(p, Literal) and p.value is not True for p in keep):
                return mir.Constant((), mir.mir_types(x))
            return mir.Filter(x, keep) if keep else x
        case _:
            return r
