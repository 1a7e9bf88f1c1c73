"""Window functions: `f(..) OVER (..)`, the WINDOW clause and frames, bound into a SELECT's HWindow."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sql import func
from sql.bind_aggregates import _AGG_CLASSES, aggregate_arg
from sql.errors import (
    DATATYPE_MISMATCH,
    FEATURE_NOT_SUPPORTED,
    UNDEFINED_FUNCTION,
    UNDEFINED_OBJECT,
    WRONG_OBJECT_TYPE,
    SqlError,
    unsupported,
)
from sql.hir import (
    HirScalar,
    Param,
    WindowExpr,
)
from sql.literal import cast_value
from sql.scalar import (
    CURRENT_ROW,
    DEFAULT_FRAME,
    UNBOUNDED_FOLLOWING,
    UNBOUNDED_PRECEDING,
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    ColumnOrder,
    If,
    Literal,
    WindowFrame,
)
from sql.scope import BoundQuery, CatalogReader, ItemRef, Scope, ScopeColumn  # noqa: F401 (re-exported)
from sql.srf import is_srf_call
from sql.types import (
    FLOAT8,
    INT4,
    INT8,
    INTERVAL,
    NUMERIC,
    TEXT,
    UNKNOWN,
    SqlType,
)

if TYPE_CHECKING:
    from sql.bind import Binder


@dataclass
class _WinCtx:
    """The window functions of one SELECT's select list / ORDER BY / DISTINCT ON, bound to
    placeholder columns `_WBASE + i` until the width of the HWindow's input is known."""

    windows: list[WindowExpr] = field(default_factory=list)
    # the WINDOW clause: name -> definition, in the order written
    named: dict[str, exp.Window] = field(default_factory=dict)


_WBASE = 1 << 24
WINDOWING_ERROR = "42P20"
_NO_WINDOWS = (WINDOWING_ERROR, "window functions are not allowed in this context")
_WINDOW_CLAUSE = {"JOIN/ON": "JOIN conditions"}


def bind_window(binder: Binder, e: exp.Window, scope: Scope) -> HirScalar:
    """`f(args) OVER (...)`: collected into the SELECT's window context; the call becomes
    a placeholder column (see _place_windows). Arguments, PARTITION BY and ORDER BY bind
    like select-list expressions (over the GROUP BY output when the query groups)."""
    ctx = binder._win
    if ctx is None:
        raise SqlError(*binder._win_forbidden)
    partition_by, order_clause, spec = _resolve_window(binder, e, ctx.named)
    call = e.this
    filter_where = None
    if isinstance(call, exp.Filter):
        call, filter_where = call.this, call.expression.this
    if isinstance(call, (exp.IgnoreNulls, exp.RespectNulls)):
        raise unsupported("IGNORE NULLS / RESPECT NULLS in window functions")
    with binder._windows(None, (WINDOWING_ERROR, "window function calls cannot be nested")):
        name, args, typ = _window_call(binder, call, scope, filter_where)
    with binder._windows(None, (WINDOWING_ERROR, "window functions are not allowed in window definitions")):
        partition = tuple(_window_key(binder, p, scope) for p in partition_by)
        order_by: list[HirScalar] = []
        order: list[ColumnOrder] = []
        ordered_exprs = order_clause.expressions if order_clause is not None else []
        for ordered in ordered_exprs:
            desc = bool(ordered.args.get("desc"))
            nulls_first = ordered.args.get("nulls_first")
            nulls_last = not nulls_first if nulls_first is not None else not desc
            order.append(ColumnOrder(len(order_by), desc, nulls_last))
            order_by.append(_window_key(binder, ordered.this, scope))
        frame, bounds = _frame(binder, spec, [o.this for o in ordered_exprs], order_by, order, scope)
    if name in _FRAMELESS:
        frame, bounds = DEFAULT_FRAME, (None, None)  # Postgres ignores the frame of these functions
    w = WindowExpr(name, args, partition, tuple(order_by), tuple(order), frame, typ, bounds)
    if w not in ctx.windows:
        ctx.windows.append(w)
    return Column(_WBASE + ctx.windows.index(w), typ)


def _resolve_window(binder: Binder, e: exp.Window, named: dict[str, exp.Window]) -> tuple[list[exp.Expression], exp.Order | None, exp.Expression | None]:
    """(PARTITION BY, ORDER BY, frame) of a window, completing `OVER (w ...)` from the
    WINDOW clause's definition of w (which may only name windows defined before it)."""
    partition = list(e.args.get("partition_by") or [])
    order = e.args.get("order")
    spec = e.args.get("spec")
    ref = e.args.get("alias")
    if ref is None:
        return partition, order, spec
    name = ref.name
    names = list(named)
    own = e.name if isinstance(e.this, exp.Identifier) and e.name in named and named[e.name] is e else None
    visible = names[: names.index(own)] if own is not None else names
    if name not in visible:
        raise SqlError(UNDEFINED_OBJECT, f'window "{name}" does not exist')
    b_partition, b_order, b_spec = _resolve_window(binder, named[name], named)
    if partition:
        raise SqlError(WINDOWING_ERROR, f'cannot override PARTITION BY clause of window "{name}"')
    if order is not None and b_order is not None:
        raise SqlError(WINDOWING_ERROR, f'cannot override ORDER BY clause of window "{name}"')
    if b_spec is not None and (order is not None or spec is not None):
        raise SqlError(WINDOWING_ERROR, f'cannot copy window "{name}" because it has a frame clause')
    return b_partition, order if order is not None else b_order, spec if spec is not None else b_spec


def _window_key(binder: Binder, e: exp.Expression, scope: Scope) -> HirScalar:
    h = binder.scalar(e, scope)
    return binder.coerce(h, TEXT) if h.typ.name == "unknown" else h


def _window_call(binder: Binder, call: exp.Expression, scope: Scope,
                 filter_where: exp.Expression | None) -> tuple[str, tuple[HirScalar, ...], SqlType]:
    """(function name, bound arguments, result type) of a window function call."""
    name = _WINDOW_FUNCS.get(type(call))
    if isinstance(call, exp.Anonymous) and call.name.lower() in _NAMED_WINDOW_FUNCS:
        name = call.name.lower()
    if name is None and type(call) in _AGG_CLASSES:
        name = _AGG_CLASSES[type(call)]
        if name not in _WINDOW_AGGREGATES:
            raise unsupported(f"{name} as a window function")
        arg = call.this
        if isinstance(arg, exp.Distinct):
            raise SqlError("0A000", "DISTINCT is not implemented for window functions")
        if name == "array_agg" and filter_where is not None:
            # a FILTER folds into the argument as NULL, which array_agg would keep
            raise unsupported("FILTER on array_agg as a window function")
        h = aggregate_arg(binder, name, arg, scope, filter_where, grouping=False)
        return name, (h,), func.aggregate_type(name, h.typ)
    if name is None:
        fname = call.name.lower() if isinstance(call, exp.Anonymous) else call.key.lower()
        if isinstance(call, exp.Anonymous):
            _not_a_window_function(binder, call, fname, scope)
        raise unsupported(f"window function {_UNSUPPORTED_WINDOW_NAMES.get(fname, fname)}")
    if filter_where is not None:
        raise SqlError("0A000", "FILTER is not implemented for non-aggregate window functions")
    raw = list(call.expressions) if isinstance(call, exp.Anonymous) else \
        [v for k in ("this", "offset", "default", "expressions") for v in _as_list(call.args.get(k))]
    args = [binder.scalar(a, scope) for a in raw]

    def no_such() -> SqlError:
        return SqlError(UNDEFINED_FUNCTION, f"function {name}({', '.join(a.typ.pg_format() for a in args)}) does not exist",
                        hint="No function matches the given name and argument types. You might need to add explicit type casts.")

    if name in ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist"):
        if args:
            raise no_such()
        return name, (), FLOAT8 if name in ("percent_rank", "cume_dist") else INT8
    if name in ("first_value", "last_value"):
        if len(args) != 1:
            raise no_such()
        x = binder.coerce(args[0], _polymorphic_type(args))
        return name, (x,), x.typ
    if name == "ntile":
        if len(args) != 1 or args[0].typ.name not in ("int2", "int4", "unknown"):
            raise no_such()
        return name, (_positive_arg(binder.coerce(args[0], INT4), name, "22014"),), INT4
    if name == "nth_value":
        if len(args) != 2 or args[1].typ.name not in ("int2", "int4", "unknown"):
            raise no_such()
        x = binder.coerce(args[0], _polymorphic_type(args[:1]))
        return name, (x, _positive_arg(binder.coerce(args[1], INT4), name, "22016")), x.typ
    # lag / lead (value [, offset integer [, default]]): value and default unify
    if not 1 <= len(args) <= 3:
        raise no_such()
    value = args[0]
    offset = args[1] if len(args) > 1 else Literal(1, INT4)
    if offset.typ.name not in ("int2", "int4", "unknown"):
        raise no_such()
    default = args[2] if len(args) > 2 else Literal(None, UNKNOWN)
    # lag(anyelement [, integer]) but lag(anycompatible, integer, anycompatible)
    t = _polymorphic_type([value]) if len(args) < 3 else value.typ
    try:
        t = func.unify([t, default.typ], name)
    except SqlError:
        raise no_such() from None
    return name, (binder.coerce(value, t), binder.coerce(offset, INT4), binder.coerce(default, t)), t


def _not_a_window_function(binder: Binder, call: exp.Anonymous, fname: str, scope: Scope) -> None:
    """`f(..) OVER (..)` of a function that is neither a window function nor an aggregate:
    42809 as Postgres, once the call resolves (its own error, e.g. 42883, otherwise)."""
    if not is_srf_call(call):
        try:
            binder.scalar(call, scope)
        except SqlError:
            return  # not a known scalar function either: reported as before
    raise SqlError(WRONG_OBJECT_TYPE, f"OVER specified, but {fname} is not a window function nor an aggregate function")


def _positive_arg(h: HirScalar, name: str, state: str) -> HirScalar:
    """A constant ntile / nth_value argument must be positive (Postgres checks it when the
    function runs; NULL gives NULL); a computed one is checked per row by the renderer."""
    if isinstance(h, Literal) and h.value is not None and int(h.value) <= 0:
        raise SqlError(state, f"argument of {name} must be greater than zero")
    return h


Bounds = tuple[HirScalar | None, HirScalar | None]


def _frame(binder: Binder, spec: exp.Expression | None, order_exprs: list[exp.Expression],
           order_by: list[HirScalar], order: list[ColumnOrder], scope: Scope) -> tuple[WindowFrame, Bounds]:
    """A window frame clause, with Postgres' checks (42P20); ROWS / GROUPS offsets are
    counts, RANGE offsets become each row's boundary values (see _range_bound)."""
    if spec is None:
        return DEFAULT_FRAME, (None, None)
    units = str(spec.args.get("kind") or "").lower()
    if units not in ("rows", "range", "groups"):
        raise unsupported(f"{units.upper()} window frames")
    if units == "groups" and not order_by:
        raise SqlError(WINDOWING_ERROR, "GROUPS mode requires an ORDER BY clause")
    exclude = _EXCLUDE[str(spec.args.get("exclude") or "no others").lower()]
    offsets = [(b, side) for b, side in ((spec.args.get("start"), spec.args.get("start_side")),
                                         (spec.args.get("end"), spec.args.get("end_side")))
               if b is not None and not isinstance(b, str)]
    if units == "range" and offsets and len(order_by) != 1:
        raise SqlError(WINDOWING_ERROR, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column")
    start, start_n = _frame_bound(binder, spec.args.get("start"), spec.args.get("start_side"), units, "starting")
    end, end_n = _frame_bound(binder, spec.args.get("end"), spec.args.get("end_side"), units, "ending") \
        if spec.args.get("end") is not None else (CURRENT_ROW, None)
    if start[0] == "following" and spec.args.get("end") is None:
        raise SqlError(WINDOWING_ERROR, "frame starting from following row cannot end with current row")
    if start == UNBOUNDED_FOLLOWING:
        raise SqlError(WINDOWING_ERROR, "frame start cannot be UNBOUNDED FOLLOWING")
    if end == UNBOUNDED_PRECEDING:
        raise SqlError(WINDOWING_ERROR, "frame end cannot be UNBOUNDED PRECEDING")
    if start == CURRENT_ROW and end[0] == "preceding":
        raise SqlError(WINDOWING_ERROR, "frame starting from current row cannot have preceding rows")
    if start[0] == "following" and (end[0] == "preceding" or end == CURRENT_ROW):
        raise SqlError(WINDOWING_ERROR, "frame starting from following row cannot have preceding rows")
    bounds: Bounds = (start_n, end_n)  # ROWS / GROUPS offsets computed per query (see _frame_bound)
    if units == "range":
        bounds = (_range_bound(binder, spec.args.get("start"), start, True, order_exprs, order_by, order, scope),
                  _range_bound(binder, spec.args.get("end"), end, False, order_exprs, order_by, order, scope))
    return WindowFrame(units, start, end, exclude), bounds


_EXCLUDE = {"no others": "no_others", "current row": "current_row", "group": "group", "ties": "ties"}
# the type an offset is cast to for the ORDER BY value's type, and the (wider) type the
# boundary value `value -/+ offset` is computed in (Postgres' in_range functions)
_RANGE_TYPES = {
    "int2": (("int2", "int4", "int8"), "numeric"), "int4": (("int2", "int4", "int8"), "numeric"),
    "int8": (("int2", "int4", "int8"), "numeric"), "numeric": (("int2", "int4", "int8", "numeric"), "numeric"),
    "float4": (("int2", "int4", "int8", "numeric", "float4", "float8"), "float8"),
    "float8": (("int2", "int4", "int8", "numeric", "float4", "float8"), "float8"),
    "date": (("interval",), "timestamp"), "timestamp": (("interval",), "timestamp"),
    "timestamptz": (("interval",), "timestamptz"),
}


def _range_bound(binder: Binder, raw: Any, bound: tuple[str, int | None], is_start: bool, order_exprs: list[exp.Expression],
                 order_by: list[HirScalar], order: list[ColumnOrder], scope: Scope) -> HirScalar | None:
    """RANGE `offset PRECEDING / FOLLOWING` over the ORDER BY value v: the current row's
    boundary value v - offset or v + offset (preceding = towards the start of the sort
    order, so + for DESC), computed in a type where it cannot overflow."""
    if bound[0] not in ("preceding", "following"):
        return None
    typ = order_by[0].typ
    with binder._windows(None, (WINDOWING_ERROR, "window functions are not allowed in window definitions")):
        off = binder.scalar(raw, Scope())
    allowed, wide = _RANGE_TYPES.get(typ.name, ((), ""))
    off_t = off.typ.name if off.typ.name != "unknown" else ("interval" if allowed == ("interval",) else "int4")
    if off_t not in allowed:
        raise SqlError(FEATURE_NOT_SUPPORTED, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type "
                       f"{typ.pg_format()} and offset type {SqlType(off_t).pg_format()}",
                       hint="Cast the offset value to an appropriate type.")
    if not isinstance(off, Literal):
        raise unsupported("non-constant window frame offsets")
    if off.value is None:
        which = "starting" if is_start else "ending"
        raise SqlError("22004", f"frame {which} offset must not be null")
    if off_t == "interval":
        iv = cast_value(off.value, off.typ, INTERVAL) if off.typ.name == "unknown" else off.value
        negative = (iv.months * 30 + iv.days) * 86_400_000_000 + iv.micros < 0
    else:
        negative = cast_value(off.value, off.typ, NUMERIC) < 0
    if negative:
        raise SqlError("22013", "invalid preceding or following size in window function")
    plus = (bound[0] == "following") != order[0].desc
    value = exp.Cast(this=order_exprs[0].copy(), to=exp.DataType.build(wide, dialect="postgres"))
    offset = exp.Cast(this=raw.copy(), to=exp.DataType.build(off_t if off_t == "interval" else wide, dialect="postgres"))
    e = exp.Add(this=value, expression=offset) if plus else exp.Sub(this=value, expression=offset)
    with binder._windows(None, (WINDOWING_ERROR, "window functions are not allowed in window definitions")):
        return binder.scalar(exp.Paren(this=e), scope)


def _frame_bound(binder: Binder, bound: Any, side: Any, units: str, which: str) -> tuple[tuple[str, int | None], HirScalar | None]:
    """(kind, count) of a frame bound; a ROWS / GROUPS offset that is an expression (it
    cannot read the row's columns, so it has one value per query, as Postgres evaluates it
    once) is (kind, None) and the offset as a bigint scalar, checked when the query runs."""
    side = str(side or "").lower()
    if isinstance(bound, str):
        if bound.upper() == "CURRENT ROW":
            return CURRENT_ROW, None
        return (UNBOUNDED_PRECEDING if side == "preceding" else UNBOUNDED_FOLLOWING), None
    if units == "range":
        return (side, None), None  # the boundary values: _range_bound
    with binder._windows(None, (WINDOWING_ERROR, "window functions are not allowed in window definitions")):
        h = binder.scalar(bound, Scope())
    if not isinstance(h, Literal):
        if h.typ.name not in ("int2", "int4", "int8"):
            raise SqlError(DATATYPE_MISMATCH, f"argument of {units.upper()} must be type bigint, not type {h.typ.pg_format()}")
        return (side, None), binder.coerce(h, INT8)
    if h.value is None:
        raise SqlError("22004", f"frame {which} offset must not be null")
    try:
        n = int(cast_value(h.value, h.typ, INT8))
    except SqlError:
        raise SqlError(DATATYPE_MISMATCH, f"argument of {units.upper()} must be type bigint, not type {h.typ.pg_format()}") from None
    if n < 0:
        raise SqlError("22013", f"frame {which} offset must not be negative")
    return (side, n), None


def _has_window(e: exp.Expression | None) -> bool:
    """Does e contain a window function of *this* query level?"""
    if e is None:
        return False
    if isinstance(e, exp.Window):
        return True
    if isinstance(e, (exp.Subquery, exp.Exists, exp.Select)):
        return False
    return any(_has_window(c) for c in e.iter_expressions())


def _polymorphic_type(args: list[HirScalar]) -> SqlType:
    """The type of a polymorphic argument: its own, text for a parameter ($n) of no known
    type (Postgres refuses it), and 42804 for a literal of unknown type, as Postgres."""
    known = [a.typ for a in args if a.typ.name != "unknown"]
    if known:
        return known[0]
    if any(isinstance(a, Param) for a in args):
        return TEXT
    raise SqlError(DATATYPE_MISMATCH, "could not determine polymorphic type because input has type unknown")


def _as_list(v: Any) -> list[exp.Expression]:
    if v is None:
        return []
    return list(v) if isinstance(v, list) else [v]


def _place_windows(h: HirScalar, base: int) -> HirScalar:
    """Window placeholders -> the HWindow's result columns: #(_WBASE + i) = #(base + i)."""
    match h:
        case Column(index=i, typ=t) if i >= _WBASE:
            return Column(base + i - _WBASE, t)
        case CallUnary(func=f, expr=x, typ=t):
            return CallUnary(f, _place_windows(x, base), t)
        case CallBinary(func=f, expr1=a, expr2=b, typ=t):
            return CallBinary(f, _place_windows(a, base), _place_windows(b, base), t)
        case CallVariadic(func=f, exprs=xs, typ=t):
            return CallVariadic(f, tuple(_place_windows(x, base) for x in xs), t)
        case If(cond=c, then=a, els=b, typ=t):
            return If(_place_windows(c, base), _place_windows(a, base), _place_windows(b, base), t)
        case _:
            return h


_WINDOW_FUNCS: dict[type, str] = {
    exp.RowNumber: "row_number", exp.Rank: "rank", exp.DenseRank: "dense_rank", exp.Lag: "lag", exp.Lead: "lead",
    exp.FirstValue: "first_value", exp.LastValue: "last_value", exp.NthValue: "nth_value",
    exp.PercentRank: "percent_rank", exp.CumeDist: "cume_dist", exp.Ntile: "ntile",
}
# functions whose value does not depend on the frame (Postgres ignores it)
# window functions the parser leaves as plain calls (sql.parse.TYPED_FUNCTION_NAMES)
_NAMED_WINDOW_FUNCS = ("ntile", "nth_value", "percent_rank", "cume_dist")
_FRAMELESS = ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead")
_WINDOW_AGGREGATES = {"sum", "count", "min", "max", "avg", "bool_and", "bool_or", "array_agg",
                      "var_pop", "var_samp", "stddev_pop", "stddev_samp"}
_UNSUPPORTED_WINDOW_NAMES = {"percentrank": "percent_rank", "cumedist": "cume_dist", "nthvalue": "nth_value"}
