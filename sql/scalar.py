"""MIR scalar expressions: positional columns, literals, function calls, If.

Function names are strings from `sql.func`; every call carries its result type so typing a
scalar is O(1). Aggregates and column orders used by Reduce/TopK also live here.

Composite values (window functions, see AggregateExpr): CallVariadic "row" builds a record
(`row(#0, #1)`), CallVariadic "list_create" a list (`list[..]`), and CallUnary
"record_get[i]" reads field i of a record (`record_get[1](#2)`); FlatMap "unnest_list"
emits one row per list element.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, assert_never

from sql.types import BOOL, SqlType

# The operand type of a call / If / aggregate: `Scalar` in MIR; HIR (sql.hir) reuses these
# nodes over its own scalars (`HirScalar`, with parameters and subqueries).
S = TypeVar("S", covariant=True)


@dataclass(frozen=True, slots=True)
class Column:
    index: int
    typ: SqlType


@dataclass(frozen=True, slots=True)
class Literal:
    value: Any  # Python value per sql/types.py; None = NULL
    typ: SqlType

    def __hash__(self) -> int:
        # array (list) and record values are unhashable as they are: hash a frozen copy
        return hash((_hashable(self.value), self.typ))


@dataclass(frozen=True, slots=True, eq=False)
class ParamLiteral(Literal):
    """A bound parameter's value ($n): a Literal in every respect (equal to one of the same
    value and type), marked so that the rendered Spark SQL shows where it is
    (compute.render.templates: Spark's analysed plan reused across parameter values)."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Literal):
            return NotImplemented
        return (self.value, self.typ) == (other.value, other.typ)  # (as Literal's: a NaN equals itself)

    __hash__ = Literal.__hash__


def _hashable(v: Any) -> Any:
    """v with lists as tuples and dicts as sorted item tuples (equal values hash equally)."""
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    return v


@dataclass(frozen=True, slots=True)
class CallUnary(Generic[S]):
    func: str
    expr: S
    typ: SqlType


@dataclass(frozen=True, slots=True)
class CallBinary(Generic[S]):
    func: str
    expr1: S
    expr2: S
    typ: SqlType


@dataclass(frozen=True, slots=True)
class CallVariadic(Generic[S]):
    func: str
    exprs: tuple[S, ...]
    typ: SqlType


@dataclass(frozen=True, slots=True)
class If(Generic[S]):
    cond: S
    then: S
    els: S
    typ: SqlType


Scalar = Column | Literal | CallUnary["Scalar"] | CallBinary["Scalar"] | CallVariadic["Scalar"] | If["Scalar"]


@dataclass(frozen=True, slots=True)
class ColumnOrder:
    column: int
    desc: bool = False
    nulls_last: bool = True


# Window frame bounds: (kind, offset); offset is a non-negative row (ROWS) or peer group
# (GROUPS) count for the "preceding"/"following" kinds, and None for the others and for
# RANGE offsets (whose boundary values the window computes per row: WindowSpec.bounds).
UNBOUNDED_PRECEDING = ("unbounded_preceding", None)
CURRENT_ROW = ("current_row", None)
UNBOUNDED_FOLLOWING = ("unbounded_following", None)


@dataclass(frozen=True, slots=True)
class WindowFrame:
    """`{ROWS | RANGE | GROUPS} BETWEEN start AND end [EXCLUDE ...]`, Postgres semantics.

    ROWS counts physical rows of the ordered partition (each copy of a duplicate row counts).
    RANGE extends CURRENT ROW to the current row's *peers*: the rows equal to it on every
    ORDER BY key (all rows are peers when the window has no ORDER BY); `n PRECEDING` /
    `n FOLLOWING` (one ORDER BY value v) reach the rows whose v lies within n of the current
    row's (a NULL v: its NULL peers). GROUPS counts peer groups. A frame whose start lies
    after its end is empty. `exclude` (no_others | current_row | group | ties) then removes
    the current row, its peer group, or its peers but not itself. The default frame is
    RANGE UNBOUNDED PRECEDING .. CURRENT ROW.
    """

    units: str = "range"  # rows | range | groups
    start: tuple[str, int | None] = UNBOUNDED_PRECEDING
    end: tuple[str, int | None] = CURRENT_ROW
    exclude: str = "no_others"

    def is_default(self) -> bool:
        return self == DEFAULT_FRAME


DEFAULT_FRAME = WindowFrame()
# window functions of a row's position among its peers, whose input is `row(list[<row>], ..)`
RANK_LIKE = ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist")


@dataclass(frozen=True, slots=True)
class WindowSpec:
    """What makes an AggregateExpr a *window aggregate* (see `AggregateExpr`).

    `order_by[i].column` = j orders by the j-th ORDER BY value of the aggregate's input
    record (its field j + 1). `agg` names the aggregate of a `window_agg` (sum, count, min,
    max, avg); None for the other window functions. `frame` matters for window_agg,
    first_value and last_value only (it is DEFAULT_FRAME for the others).
    """

    order_by: tuple[ColumnOrder, ...]
    frame: WindowFrame = DEFAULT_FRAME
    agg: str | None = None
    # RANGE offset frames: the input record's fields (1-based, after the ORDER BY values)
    # holding the current row's start / end boundary value (None: not an offset bound)
    bounds: tuple[int | None, int | None] = (None, None)


@dataclass(frozen=True, slots=True)
class AggregateExpr(Generic[S]):
    """An aggregate of a Reduce: `func(expr)` over the rows of a group (with multiplicity).

    *Window aggregates* (`window` set; DESIGN §4.1, Materialize's shape) evaluate a window
    function over the whole group, which is one window *partition* (group key = outer
    columns ++ PARTITION BY values; an empty input has no group, hence no output).

    Input (`expr`), with <row> = `row(#0, .., #n-1)` (the whole input row) and o1..ok the
    ORDER BY values:
      - row_number, rank, dense_rank: `row(list[<row>], o1, .., ok)` (a one-element list);
      - lag, lead: `row(row(<row>, row(value, offset, default)), o1, .., ok)`;
      - first_value, last_value, window_agg: `row(row(<row>, arg), o1, .., ok)`
        (count(*) has arg `true`; a FILTER is folded into arg as a CASE).
    Output (`typ` = `list[record(result, <row> type)]`): one element `row(result, <row>)`
    per input row *copy* (a row with multiplicity m counts as m rows and yields m elements,
    each with its own result), in no particular order. `FlatMap unnest_list` turns the list
    back into rows; `record_get[0](e)` is the result, `record_get[i](record_get[1](e))`
    column i of the row. Record and list types are structured (SqlType.fields).

    Semantics (Postgres'): the partition is sorted by `window.order_by` (ColumnOrder.column
    j = o(j+1); asc/desc, nulls first/last as written). Rows equal on every ORDER BY value
    are *peers* (all rows are peers without ORDER BY); peers are in an arbitrary order, but
    one order per partition shared by row_number, lag/lead and ROWS frames.
      - row_number: position 1, 2, .. in that order (bigint);
      - rank: 1 + the number of rows before the row's peer group (gaps after ties; bigint);
      - dense_rank: 1 + the number of peer groups before the row's (no gaps; bigint);
      - lag / lead: `value` of the row `offset` positions before / after the current row;
        `default` (evaluated on the current row) when that position is outside the
        partition; NULL when offset is NULL; a negative offset looks the other way;
      - first_value / last_value: `arg` of the first / last row of the current row's frame
        (a NULL arg is returned as is); NULL for an empty frame;
      - window_agg[f], f in sum, count, min, max, avg: f over the args of the frame's rows,
        skipping NULLs: count = number of non-NULL args (0 for an empty frame), the others
        NULL when there is none; result types as for GROUP BY (sum(int4) bigint, avg(int4)
        numeric = sum / count with Postgres' numeric division, as `div_avg`).
    Frames (`window.frame`, WindowFrame) apply to first_value, last_value and window_agg
    only: ROWS counts positions (n PRECEDING / n FOLLOWING relative to the current row),
    RANGE extends CURRENT ROW to all its peers; the default RANGE UNBOUNDED PRECEDING ..
    CURRENT ROW is the partition up to the last peer of the current row (the whole partition
    without ORDER BY).
    """

    # count | sum | min | max | any_value | ...; window aggregates: row_number | rank |
    # dense_rank | lag | lead | first_value | last_value | window_agg (f in window.agg)
    func: str
    expr: S
    distinct: bool
    typ: SqlType
    window: WindowSpec | None = None
    # string_agg / array_agg / jsonb_agg / jsonb_object_agg: `expr` is `row(args.., o1, .., ok)`
    # (a NULL record, i.e. a FILTER that rejected the row, contributes nothing) and order_by
    # refers to fields of that record
    order_by: tuple[ColumnOrder, ...] = ()


TRUE = Literal(True, BOOL)
FALSE = Literal(False, BOOL)


def children(e: Scalar) -> tuple[Scalar, ...]:
    match e:
        case Column() | Literal():
            return ()
        case CallUnary(expr=x):
            return (x,)
        case CallBinary(expr1=a, expr2=b):
            return (a, b)
        case CallVariadic(exprs=xs):
            return xs
        case If(cond=c, then=t, els=f):
            return (c, t, f)
        case _:
            assert_never(e)


_T = TypeVar("_T")


def conjuncts(ps: tuple[_T, ...] | list[_T]) -> list[_T]:
    """The conjuncts of a list of predicates: and(a, and(b, c)), d -> a, b, c, d."""
    out: list[_T] = []
    for p in ps:
        if isinstance(p, CallVariadic) and p.func == "and":
            out.extend(conjuncts(p.exprs))
        else:
            out.append(p)
    return out


def columns_used(e: Scalar, acc: set[int] | None = None) -> set[int]:
    acc = set() if acc is None else acc
    if isinstance(e, Column):
        acc.add(e.index)
    for c in children(e):
        columns_used(c, acc)
    return acc


def permute(e: Scalar, mapping: dict[int, int] | list[int] | tuple[int, ...]) -> Scalar:
    """Rename column references: #i -> #mapping[i]."""
    match e:
        case Column(index=i, typ=t):
            return Column(mapping[i], t)
        case Literal():
            return e
        case CallUnary(func=f, expr=x, typ=t):
            return CallUnary(f, permute(x, mapping), t)
        case CallBinary(func=f, expr1=a, expr2=b, typ=t):
            return CallBinary(f, permute(a, mapping), permute(b, mapping), t)
        case CallVariadic(func=f, exprs=xs, typ=t):
            return CallVariadic(f, tuple(permute(x, mapping) for x in xs), t)
        case If(cond=c, then=a, els=b, typ=t):
            return If(permute(c, mapping), permute(a, mapping), permute(b, mapping), t)
        case _:
            assert_never(e)


def substitute(e: Scalar, exprs: tuple[Scalar, ...] | list[Scalar] | dict[int, Scalar]) -> Scalar:
    """Replace #i by exprs[i] (inlining a Map); with a dict, only the columns it names."""
    match e:
        case Column(index=i):
            return exprs.get(i, e) if isinstance(exprs, dict) else exprs[i]
        case Literal():
            return e
        case CallUnary(func=f, expr=x, typ=t):
            return CallUnary(f, substitute(x, exprs), t)
        case CallBinary(func=f, expr1=a, expr2=b, typ=t):
            return CallBinary(f, substitute(a, exprs), substitute(b, exprs), t)
        case CallVariadic(func=f, exprs=xs, typ=t):
            return CallVariadic(f, tuple(substitute(x, exprs) for x in xs), t)
        case If(cond=c, then=a, els=b, typ=t):
            return If(substitute(c, exprs), substitute(a, exprs), substitute(b, exprs), t)
        case _:
            assert_never(e)


_INFIX = {
    "add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%",
    "eq": "=", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
    "concat": "||", "like": "like", "ilike": "ilike", "not_like": "not like",
    "not_ilike": "not ilike",
}


# EXPLAIN ... WITH (redacted): literals print as `█` (set by `redacted_literals()`)
_REDACT: ContextVar[bool] = ContextVar("redact_literals", default=False)


@contextmanager
def redacted_literals(on: bool = True) -> Iterator[None]:
    """Within the block, EXPLAIN text shows every literal as `█` (Materialize's redaction)."""
    token = _REDACT.set(on)
    try:
        yield
    finally:
        _REDACT.reset(token)


def literal_text(v: Any, t: SqlType) -> str:
    if _REDACT.get():
        return "█"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)) or t.is_numeric:
        return str(v)
    if not isinstance(v, str):  # the type's text output (an interval as `30 days`, not a repr)
        from sql.literal import to_text

        v = to_text(v, t)
    s = str(v).replace('"', '\\"')
    return f'"{s}"'


def explain(e: Scalar, names: Sequence[str | None] | None = None) -> str:
    """Materialize-style scalar text: #0, (#0 + 1), coalesce(#1, 0)."""
    match e:
        case Column(index=i):
            if names is not None and i < len(names) and names[i]:
                return f"#{i}{{{names[i]}}}"  # EXPLAIN WITH (humanized expressions)
            return f"#{i}"
        case Literal(value=v, typ=t):
            return literal_text(v, t)
        case CallUnary(func="not", expr=CallUnary(func="is_null", expr=x)):
            return f"({explain(x, names)}) IS NOT NULL"
        case CallUnary(func="not", expr=x):
            return f"NOT({explain(x, names)})"
        case CallUnary(func="is_null", expr=x):
            return f"({explain(x, names)}) IS NULL"
        case CallUnary(func="neg", expr=x):
            return f"-({explain(x, names)})"
        case CallUnary(func="cast", expr=x, typ=t):
            return f"{t.name}({explain(x, names)})"
        case CallUnary(func=f, expr=x):
            return f"{f}({explain(x, names)})"
        case CallBinary(func="raise_error", expr2=b):
            return f"error({explain(b, names)})"
        case CallBinary(func=f, expr1=a, expr2=b) if f in _INFIX:
            return f"({explain(a, names)} {_INFIX[f]} {explain(b, names)})"
        case CallBinary(func=f, expr1=a, expr2=b):
            return f"{f}({explain(a, names)}, {explain(b, names)})"
        case CallVariadic(func="list_create", exprs=xs):
            return "list[" + ", ".join(explain(x, names) for x in xs) + "]"
        case CallVariadic(func=("and" | "or") as f, exprs=xs):
            return "(" + f" {f.upper()} ".join(explain(x, names) for x in xs) + ")"
        case CallVariadic(func=f, exprs=xs):
            return f"{f}(" + ", ".join(explain(x, names) for x in xs) + ")"
        case If(cond=c, then=a, els=b):
            return f"case when {explain(c, names)} then {explain(a, names)} else {explain(b, names)} end"
        case _:
            assert_never(e)


def explain_agg(a: AggregateExpr, names: Sequence[str | None] | None = None) -> str:
    if a.window is not None:
        return f"{a.func}[{explain_window(a.window)}]({explain(a.expr, names)})"
    inner = "*" if (a.func == "count" and a.expr == TRUE) else explain(a.expr, names)
    d = "distinct " if a.distinct else ""
    order = f"[order_by=[{', '.join(explain_order(o) for o in a.order_by)}]]" if a.order_by else ""
    return f"{a.func}{order}({d}{inner})"


def explain_window(w: WindowSpec) -> str:
    """`sum order_by=[#0 asc nulls_last] rows between 1 preceding and current row`: the
    frame is shown only when it is not the default one."""
    parts = [w.agg] if w.agg else []
    parts.append(f"order_by=[{', '.join(explain_order(o) for o in w.order_by)}]")
    if not w.frame.is_default():
        parts.append(explain_frame(w.frame, w.bounds))
    return " ".join(parts)


def explain_frame(f: WindowFrame, bounds: tuple[int | None, int | None] = (None, None)) -> str:
    """`rows between 1 preceding and current row`; a RANGE offset bound names the input
    record's field holding its boundary value (`range between f3 preceding and ..`)."""
    def bound(b: tuple[str, int | None], field: int | None) -> str:
        kind, n = b
        if field is not None:
            return f"f{field} {kind}"
        return f"{n} {kind}" if n is not None else kind.replace("_", " ")

    out = f"{f.units} between {bound(f.start, bounds[0])} and {bound(f.end, bounds[1])}"
    return out if f.exclude == "no_others" else f"{out} exclude {f.exclude.replace('_', ' ')}"


def record_get(x: _T, i: int, typ: SqlType) -> CallUnary[_T]:
    """Field i of the record x (Materialize's `record_get[i](x)`), for HIR and MIR scalars."""
    return CallUnary(f"record_get[{i}]", x, typ)


def record_get_index(func: str) -> int | None:
    """i for a `record_get[i]` function name, else None."""
    if func.startswith("record_get[") and func.endswith("]"):
        return int(func[len("record_get["):-1])
    return None


def explain_order(o: ColumnOrder) -> str:
    return f"#{o.column} {'desc' if o.desc else 'asc'} {'nulls_last' if o.nulls_last else 'nulls_first'}"
