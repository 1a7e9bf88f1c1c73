"""Aggregates: finding aggregate calls in the AST and binding them into their query level's Reduce."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from sqlglot import exp

from sql import func
from sql.bind_jsonb import jsonb_key, to_jsonb
from sql.bind_ordered_set import check_level, within_group
from sql.errors import (
    GROUPING_ERROR,
    UNDEFINED_COLUMN,
    UNDEFINED_FUNCTION,
    UNDEFINED_TABLE,
    WRONG_OBJECT_TYPE,
    SqlError,
    unsupported,
)
from sql.func_names import pg_function_name
from sql.grouping_sets import GroupingSet, absent_mask, grouping_value
from sql.hir import (
    HirScalar,
    OuterColumn,
)
from sql.scalar import (
    TRUE,
    AggregateExpr,
    CallUnary,
    CallVariadic,
    Column,
    ColumnOrder,
    If,
    Literal,
    Scalar,
    columns_used,
    substitute,
)
from sql.scope import BoundQuery, CatalogReader, ItemRef, Scope, ScopeColumn  # noqa: F401 (re-exported)
from sql.types import (
    BOOL,
    BYTEA,
    FLOAT8,
    INT4,
    INT8,
    JSONB,
    NUMERIC,
    TEXT,
    record_type,
)

if TYPE_CHECKING:
    from sql.bind import Binder


@dataclass
class _AggCtx:
    """A query level that aggregates. Its output columns are its keys, then (with grouping
    sets) the grouping-set id column, then its aggregates."""

    input_scope: Scope
    keys: list[HirScalar]
    aggregates: list[AggregateExpr] = field(default_factory=list)
    # binding an aggregate's arguments: an aggregate of this level met inside them (in a
    # subquery) is nested in it
    in_arguments: bool = False
    sets: list[GroupingSet] | None = None  # None: a plain GROUP BY

    @property
    def base(self) -> int:
        """The output column of the first aggregate."""
        return len(self.keys) + (0 if self.sets is None else 1)


def star_in_agg(binder: Binder, i: int, scope: Scope) -> HirScalar:
    c = scope.columns[i]
    return key_or_error(binder, Column(i, c.typ), c)


def key_or_error(binder: Binder, h: HirScalar, c: ScopeColumn) -> HirScalar:
    assert binder._agg is not None
    if h in binder._agg.keys:
        return Column(binder._agg.keys.index(h), h.typ)
    ref = f"{c.table}.{c.name}" if c.table else c.name
    raise SqlError(GROUPING_ERROR, f'column "{ref}" must appear in the GROUP BY clause or be used in an aggregate function')


def grouped_definition(binder: Binder, d: Scalar) -> HirScalar:
    """A merged USING column defined as `d` (sql.scope.ScopeColumn.defined_as) read in a
    grouped query: `d` itself when it is a key, else `d` over the keys among its columns —
    PostgreSQL checks grouping after replacing a join's merged column by its definition, so
    GROUP BY t1.c allows c = t1.c::bigint (and not the reverse)."""
    agg = binder._agg
    assert agg is not None
    if d in agg.keys:
        return Column(agg.keys.index(d), d.typ)
    cols = agg.input_scope.columns
    used = columns_used(d)
    exprs: list[HirScalar] = [Column(j, cols[j].typ) for j in range(max(used) + 1)]
    for j in used:
        inner, sc = Column(j, cols[j].typ), cols[j]
        exprs[j] = (Column(agg.keys.index(inner), inner.typ) if inner in agg.keys
                    else grouped_definition(binder, sc.defined_as) if sc.defined_as is not None
                    else key_or_error(binder, inner, sc))
    return cast(HirScalar, substitute(d, cast(list[Scalar], exprs)))


def agg_level(binder: Binder, e: exp.Expression, scope: Scope) -> int:
    """How many query levels out the aggregate call `e` belongs (Postgres: the innermost
    level of the columns its arguments and FILTER read; its own level when it reads none,
    reads a subquery, or a name does not resolve)."""
    if next(e.find_all(exp.Subquery, exp.Select, exp.Exists), None) is not None:
        return 0
    within = e.this if isinstance(e, exp.Filter) else e
    if isinstance(within, exp.WithinGroup):
        # the level of the aggregated arguments (and FILTER), not of the direct ones
        parts = [within.expression] + ([e.expression] if isinstance(e, exp.Filter) else [])
        level = min((_column_level(binder, col, scope) for p in parts for col in p.find_all(exp.Column)
                     if not isinstance(col.this, exp.Star)), default=0)
        check_level(binder, within, level, lambda c: _column_level(binder, c, scope))
        return level
    levels = [_column_level(binder, col, scope) for col in e.find_all(exp.Column) if not isinstance(col.this, exp.Star)]
    return min(levels, default=0)


def _column_level(binder: Binder, col: exp.Column, scope: Scope) -> int:
    table = col.table or None
    scopes = [scope] + [binder._outer_agg[i].input_scope if i in binder._outer_agg else s
                        for i, s in reversed(list(enumerate(binder.outer)))]
    for level, sc in enumerate(scopes):
        try:
            sc.lookup(col.name, table)
            return level
        except SqlError as err:
            if err.sqlstate not in (UNDEFINED_COLUMN, UNDEFINED_TABLE):
                return 0
    return 0


def outer_aggregate(binder: Binder, e: exp.Expression, level: int) -> HirScalar:
    """An aggregate of the query `level` scopes out: computed by that query's Reduce (over
    its input, with the scopes it sees) and read here as its output column. When that
    query does not aggregate yet, it is bound again, aggregating."""
    idx = len(binder.outer) - level
    outer_agg = binder._outer_agg.get(idx)
    if isinstance(e, exp.WithinGroup) or isinstance(e, exp.Filter) and isinstance(e.this, exp.WithinGroup):
        raise unsupported("ordered-set aggregates of an outer query level")
    if outer_agg is None:
        raise _OuterAggregate(idx)
    if outer_agg.in_arguments:
        raise SqlError(GROUPING_ERROR, "aggregate function calls cannot be nested")
    saved = (binder.outer, binder._outer_agg, binder._agg)
    binder.outer = binder.outer[:idx]
    binder._outer_agg = {i: a for i, a in binder._outer_agg.items() if i < idx}
    try:
        if isinstance(e, exp.Grouping):
            return grouping_call(binder, e, outer_agg, lambda i: OuterColumn(level, i, INT8))
        if isinstance(e, exp.Filter):
            col = aggregate(binder, e.this, outer_agg, e.expression.this)
        else:
            col = aggregate(binder, e, outer_agg)
    finally:
        binder.outer, binder._outer_agg, binder._agg = saved
    assert isinstance(col, Column)
    return OuterColumn(level, col.index, col.typ)


def aggregate(binder: Binder, e: exp.Expression, agg: _AggCtx, filter_where: exp.Expression | None = None,
              out_scope: Scope | None = None) -> HirScalar:
    """An aggregate of this query level; `agg(x) FILTER (WHERE p)` = agg(case when p then x end).

    Order-sensitive / multi-argument aggregates aggregate a record `row(args.., keys..)`
    (see sql.scalar.AggregateExpr); their FILTER nulls the whole record. Ordered-set
    aggregates (WITHIN GROUP) are sql.bind_ordered_set's: their direct arguments are bound
    in `out_scope`, after aggregation."""
    if isinstance(e, exp.WithinGroup):
        return within_group(binder, e, agg, out_scope, filter_where)
    if pg_function_name(e) in ("percentile_cont", "percentile_disc", "mode"):
        # Postgres has no plain aggregate of the name
        raise SqlError(UNDEFINED_FUNCTION, f"function {pg_function_name(e)} without WITHIN GROUP does not exist")
    name, raw_args, ordered, distinct = _agg_call(e)
    binder._agg = None
    agg.in_arguments = True
    try:
        with binder._windows(None, (GROUPING_ERROR, "aggregate function calls cannot contain window function calls")):
            if name in ORDERED_AGGREGATES:
                a = _ordered_aggregate(binder, name, raw_args, ordered, distinct, filter_where, agg.input_scope)
            elif name in func.REGRESSION_AGGREGATES:
                a = _regression_aggregate(binder, name, raw_args, distinct, filter_where, agg.input_scope)
            else:
                if len(raw_args) > 1:
                    args = [binder.scalar(x, agg.input_scope) for x in raw_args]
                    raise SqlError(UNDEFINED_FUNCTION, f"function {name}({', '.join(x.typ.pg_format() for x in args)}) does not exist",
                                   hint="No function matches the given name and argument types. You might need to add explicit type casts.")
                h = aggregate_arg(binder, name, raw_args[0] if raw_args else None, agg.input_scope, filter_where)
                # an ORDER BY does not change this aggregate, but is bound (and checked) all the same
                for o in ordered:
                    if _has_agg(o.this):
                        raise SqlError(GROUPING_ERROR, "aggregate function calls cannot be nested")
                    binder.scalar(o.this, agg.input_scope)
                a = AggregateExpr(name, h, distinct, func.aggregate_type(name, h.typ))
    finally:
        binder._agg = agg
        agg.in_arguments = False
    if _outer_level_only(a.expr):
        raise unsupported("aggregates whose arguments read only outer queries through a subquery")
    if a not in agg.aggregates:
        agg.aggregates.append(a)
    return Column(agg.base + agg.aggregates.index(a), a.typ)


def _ordered_aggregate(binder: Binder, name: str, raw_args: list[exp.Expression], ordered: list[exp.Ordered], distinct: bool,
                       filter_where: exp.Expression | None, scope: Scope) -> AggregateExpr:
    """string_agg(x, sep) / array_agg(x) [DISTINCT] [ORDER BY ...] over row(args.., keys..)."""
    if any(_has_agg(a) for a in raw_args) or any(_has_agg(o) for o in ordered):
        raise SqlError(GROUPING_ERROR, "aggregate function calls cannot be nested")
    args = [binder.scalar(x, scope) for x in raw_args]
    written = list(args)  # before the arguments are coerced to the aggregate's types
    cond = None
    if filter_where is not None:
        if _has_agg(filter_where):
            raise SqlError(GROUPING_ERROR, "aggregate functions are not allowed in FILTER")
        cond = binder._predicate(filter_where, scope, "FILTER")
    want = 2 if name in ("string_agg", "jsonb_object_agg") else 1
    if len(args) != want:
        raise SqlError(UNDEFINED_FUNCTION, f"function {name}({', '.join(x.typ.pg_format() for x in args)}) does not exist",
                       hint="No function matches the given name and argument types. You might need to add explicit type casts.")
    if name == "string_agg":
        # string_agg(text, text) or string_agg(bytea, bytea)
        typ = BYTEA if any(x.typ.name == "bytea" for x in args) else TEXT
        for x in args:
            if not (x.typ.name == "unknown" or (x.typ.name == "bytea" if typ == BYTEA else x.typ.is_string)):
                raise SqlError(UNDEFINED_FUNCTION, f"function string_agg({', '.join(y.typ.pg_format() for y in args)}) does not exist",
                               hint="No function matches the given name and argument types. You might need to add explicit type casts.")
        args = [binder.coerce(x, typ) for x in args]
    elif name == "array_agg":
        if args[0].typ.name == "unknown":
            args = [binder.coerce(args[0], TEXT)]
        typ = func.array_of(args[0].typ)
    elif name in ("jsonb_agg", "jsonb_object_agg"):
        if distinct:
            raise unsupported(f"{name}(DISTINCT ...)")
        if name == "jsonb_object_agg":
            args = [jsonb_key(binder, args[0]), to_jsonb(binder, args[1])]
        else:
            args = [to_jsonb(binder, args[0])]
        typ = JSONB
    else:
        typ = func.aggregate_type(name, args[0].typ)
    keys = [binder.scalar(o.this, scope) for o in ordered]
    keys = [binder.coerce(k, TEXT) if k.typ.name == "unknown" else k for k in keys]
    if distinct:
        # Postgres: with DISTINCT, the ORDER BY expressions must be arguments; the
        # duplicates removed are of the whole argument list, sorted by the first. An ORDER BY
        # expression matches an argument as written (`string_agg(DISTINCT v, ',' ORDER BY v)`
        # with v varchar: the argument is coerced to text, the sort key is still v)
        raw_keys = keys if written == args else [binder.scalar(o.this, scope) for o in ordered]
        if any(k not in written for k in raw_keys):
            raise SqlError("42P10", "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list")
        order = tuple(ColumnOrder(written.index(k), bool(o.args.get("desc")), _nulls_last(o)) for k, o in zip(raw_keys, ordered, strict=True))
        fields = list(args)
        if not order:
            order = (ColumnOrder(0),)
    else:
        fields = [*args, *keys]
        order = tuple(ColumnOrder(len(args) + i, bool(o.args.get("desc")), _nulls_last(o)) for i, o in enumerate(ordered))
    rt = record_type(tuple(f.typ for f in fields))
    rec: HirScalar = CallVariadic("row", tuple(fields), rt)
    if cond is not None:
        rec = If(cond, rec, Literal(None, rt), rt)
    return AggregateExpr(name, rec, distinct, typ, order_by=order)


def _outer_level_only(h: HirScalar) -> bool:
    """Does the argument hold a subquery, and read only enclosing queries' columns (directly or
    from inside its subqueries)? Postgres then makes it an aggregate of the innermost query
    it reads (`SELECT (SELECT max((SELECT .. WHERE i.a = o.a))) FROM t o` aggregates over o),
    which is not bound here (agg_level sees no names inside subqueries)."""
    from sql.hir import Exists, OuterColumn, Select
    from sql.hir_analysis import free_columns
    from sql.scalar import CallBinary, children

    levels: set[int] = set()
    subqueries = False

    def walk(e: HirScalar) -> None:
        nonlocal subqueries
        match e:
            case Column():
                levels.add(0)
            case OuterColumn(level=lv):
                levels.add(lv)
            case Exists(rel=r) | Select(rel=r):
                subqueries = True
                levels.update(lv - 1 for lv, _ in free_columns(r, 0))
            case CallUnary() | CallBinary() | CallVariadic() | If():
                for c in children(e):  # type: ignore[arg-type]
                    walk(c)
            case _:
                pass

    walk(h)
    return subqueries and bool(levels) and min(levels) > 0


def _regression_aggregate(binder: Binder, name: str, raw_args: list[exp.Expression], distinct: bool,
                          filter_where: exp.Expression | None, scope: Scope) -> AggregateExpr:
    """regr_*(y, x), covar_*(y, x), corr(y, x) over float8 (other numeric types cast): the
    aggregate of `row(y, x)` for the rows where both are non-NULL (and FILTER holds), else
    NULL (skipped); regr_count(y, x) = count(*) over those rows."""
    args = [binder.scalar(x, scope) for x in raw_args]
    if len(args) != 2 or any(_has_agg(x) for x in raw_args):
        if any(_has_agg(x) for x in raw_args):
            raise SqlError(GROUPING_ERROR, "aggregate function calls cannot be nested")
        raise SqlError(UNDEFINED_FUNCTION, f"function {name}({', '.join(x.typ.pg_format() for x in args)}) does not exist",
                       hint="No function matches the given name and argument types. You might need to add explicit type casts.")
    if not all(x.typ.is_numeric or x.typ.name == "unknown" for x in args):
        raise SqlError(UNDEFINED_FUNCTION, f"function {name}({', '.join(x.typ.pg_format() for x in args)}) does not exist",
                       hint="No function matches the given name and argument types. You might need to add explicit type casts.")
    y, x = (binder.coerce(a, FLOAT8) for a in args)
    cond: HirScalar = CallVariadic("and", (CallUnary("not", CallUnary("is_null", y, BOOL), BOOL),
                                          CallUnary("not", CallUnary("is_null", x, BOOL), BOOL)), BOOL)
    if filter_where is not None:
        if _has_agg(filter_where):
            raise SqlError(GROUPING_ERROR, "aggregate functions are not allowed in FILTER")
        cond = CallVariadic("and", (cond, binder._predicate(filter_where, scope, "FILTER")), BOOL)
    if name == "regr_count":
        return AggregateExpr("count", If(cond, TRUE, Literal(None, BOOL), BOOL), distinct, INT8)
    rt = record_type((FLOAT8, FLOAT8))
    return AggregateExpr(name, If(cond, CallVariadic("row", (y, x), rt), Literal(None, rt), rt), distinct, FLOAT8)


def aggregate_arg(binder: Binder, name: str, arg: exp.Expression | None, scope: Scope, filter_where: exp.Expression | None,
                   grouping: bool = True) -> HirScalar:
    """The argument of an aggregate over `scope` (FILTER folded in). A grouping
    aggregate's argument cannot hold aggregates; a window aggregate's may (they group)."""
    if name == "count" and arg is None:
        raise SqlError(WRONG_OBJECT_TYPE, "count(*) must be used to call a parameterless aggregate function")
    if name == "count" and isinstance(arg, exp.Star):
        h: HirScalar = TRUE
    else:
        if grouping and _has_agg(arg):
            raise SqlError(GROUPING_ERROR, "aggregate function calls cannot be nested")
        h = binder.scalar(cast(exp.Expression, arg), scope)
        if h.typ.name == "unknown":
            h = binder.coerce(h, TEXT if name in ("min", "max", "count") else NUMERIC)
    if filter_where is not None:
        if grouping and _has_agg(filter_where):
            raise SqlError(GROUPING_ERROR, "aggregate functions are not allowed in FILTER")
        cond = binder._predicate(filter_where, scope, "FILTER")
        h = If(cond, h, Literal(None, h.typ), h.typ)
    if name in ("sum", "avg") and not (h.typ.is_numeric or h.typ.name == "interval"):
        raise SqlError(UNDEFINED_FUNCTION, f"function {name}({h.typ.pg_format()}) does not exist",
                       hint="No function matches the given name and argument types. You might need to add explicit type casts.")
    return h


_AGG_CLASSES: dict[type, str] = {
    exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max",
    exp.LogicalOr: "bool_or", exp.LogicalAnd: "bool_and", exp.GroupConcat: "string_agg", exp.ArrayAgg: "array_agg",
    exp.Stddev: "stddev_samp", exp.StddevSamp: "stddev_samp", exp.StddevPop: "stddev_pop", exp.Variance: "var_samp",
    exp.VariancePop: "var_pop", exp.JSONBObjectAgg: "jsonb_object_agg",
}


def _is_agg(e: exp.Expression) -> bool:
    if isinstance(e, exp.WithinGroup):
        return True
    if isinstance(e, exp.Anonymous):
        return e.name.lower() in _ANON_AGGS or e.name.lower() in _KNOWN_UNSUPPORTED_AGGS
    return type(e) in _AGG_CLASSES or isinstance(e, exp.AggFunc)


_KNOWN_UNSUPPORTED_AGGS = {"jsonb_agg", "jsonb_object_agg", "percentile_cont", "percentile_disc", "mode"}


_UNSUPPORTED_AGG_NAMES = {"groupconcat": "string_agg", "arrayagg": "array_agg", "stddev": "stddev", "variance": "variance",
                          "stddevsamp": "stddev_samp", "stddevpop": "stddev_pop", "variancepop": "var_pop", "jsonbagg": "jsonb_agg"}


def _agg_name(e: exp.Expression) -> str:
    name = _AGG_CLASSES.get(type(e))
    if name is None:
        raise unsupported(f"aggregate {_UNSUPPORTED_AGG_NAMES.get(e.key, e.key)}")
    return name


ORDERED_AGGREGATES = frozenset({"string_agg", "array_agg", "jsonb_agg", "jsonb_object_agg"})
_ANON_AGGS = {"every": "bool_and", "stddev": "stddev_samp", "variance": "var_samp", "var_samp": "var_samp",
              "var_pop": "var_pop", "stddev_samp": "stddev_samp", "stddev_pop": "stddev_pop", "string_agg": "string_agg",
              "array_agg": "array_agg", "bool_and": "bool_and", "bool_or": "bool_or", "jsonb_agg": "jsonb_agg",
              "jsonb_object_agg": "jsonb_object_agg",
              # json is read as jsonb (sql.types.TYPE_ALIASES), so are its aggregates
              "json_agg": "jsonb_agg", "json_object_agg": "jsonb_object_agg", **{n: n for n in func.REGRESSION_AGGREGATES}}


def _agg_call(e: exp.Expression) -> tuple[str, list[exp.Expression], list[exp.Ordered], bool]:
    """(aggregate name, argument expressions, ORDER BY items, DISTINCT) of an aggregate call."""
    if isinstance(e, exp.Anonymous):
        name = _ANON_AGGS.get(e.name.lower())
        if name is None:
            raise unsupported(f"aggregate {e.name.lower()}")
        raw = list(e.expressions)
    elif isinstance(e, exp.GroupConcat):
        name = "string_agg"
        raw = [e.this] + ([e.args["separator"]] if e.args.get("separator") is not None else [])
    else:
        name = _agg_name(e)
        raw = [e.this] + ([e.expression] if e.args.get("expression") is not None else [])
    raw = [x for x in raw if x is not None]
    ordered: list[exp.Ordered] = []
    distinct = False
    if raw and isinstance(raw[0], exp.Order):
        ordered = list(raw[0].expressions)
        raw[0] = raw[0].this
    if raw and isinstance(raw[0], exp.Distinct):
        distinct = True
        if len(raw[0].expressions) != 1:
            raise unsupported("multi-argument DISTINCT aggregate")
        raw[0] = raw[0].expressions[0]
    # `string_agg(x, sep ORDER BY k)`: sqlglot may attach the ORDER BY to the last argument
    if len(raw) > 1 and isinstance(raw[-1], exp.Order):
        ordered = list(raw[-1].expressions)
        raw[-1] = raw[-1].this
    return name, raw, ordered, distinct


def _nulls_last(o: exp.Ordered) -> bool:
    """Postgres' default: NULLS LAST for ASC, NULLS FIRST for DESC."""
    nf = o.args.get("nulls_first")
    if nf is None:
        return not o.args.get("desc")
    return not nf


class _OuterAggregate(Exception):  # noqa: N818 (a signal, caught by Binder._bind_select)
    """An aggregate of the query bound at `depth` was met before that query aggregates."""

    def __init__(self, depth: int) -> None:
        super().__init__(depth)
        self.depth = depth


def _local_aggs(e: exp.Expression) -> Iterator[exp.Expression]:
    """The aggregate calls in e outside its subqueries (with their FILTER, if any)."""
    if isinstance(e, exp.Filter) and _is_agg(e.this):
        yield e
        return
    if _is_agg(e):
        yield e
        return
    if isinstance(e, (exp.Subquery, exp.Exists, exp.Select)):
        return
    for c in (_window_parts(e) if isinstance(e, exp.Window) else e.iter_expressions()):
        yield from _local_aggs(c)


def _has_agg(e: exp.Expression | None) -> bool:
    """Does e contain an aggregate of *this* query level (not inside a subquery)? A window
    function is not one, though its arguments, PARTITION BY and ORDER BY may hold some."""
    if e is None:
        return False
    if isinstance(e, exp.Window):
        return any(_has_agg(c) for c in _window_parts(e))
    if _is_agg(e):
        return True
    if isinstance(e, (exp.Subquery, exp.Exists, exp.Select)):
        return False
    return any(_has_agg(c) for c in e.iter_expressions())


def _window_parts(e: exp.Window) -> list[exp.Expression]:
    """The expressions of a window function call other than the function itself."""
    call = e.this
    parts: list[exp.Expression] = []
    if isinstance(call, exp.Filter):
        parts.append(call.expression)
        call = call.this
    while isinstance(call, (exp.IgnoreNulls, exp.RespectNulls)):
        call = call.this
    parts.extend(call.iter_expressions())
    parts.extend(c for c in e.iter_expressions() if c is not e.this)
    return parts


def grouping_call(binder: Binder, e: exp.Grouping, agg: _AggCtx, ref: Callable[[int], HirScalar]) -> HirScalar:
    """GROUPING(a1, ..., an): an integer whose bit n-1-j is 1 when aj is not grouped in the
    row's grouping set; the set is read from the set-id column (`ref(index)`), so the value
    is CASE id WHEN m THEN grouping_value(m) ... END; 0 under a plain GROUP BY."""
    args = list(e.expressions)
    if len(args) > 31:
        raise SqlError("54023", "GROUPING must have fewer than 32 arguments")
    not_key = SqlError(GROUPING_ERROR, "arguments to GROUPING must be grouping expressions of the associated query level")
    idx: list[int] = []
    for a in args:
        if _has_agg(a):
            raise not_key
        saved = binder._agg
        binder._agg = None
        try:
            with binder._windows(None):
                h = binder.scalar(a, agg.input_scope)
        finally:
            binder._agg = saved
        if h not in agg.keys:
            raise not_key
        idx.append(agg.keys.index(h))
    if agg.sets is None:
        return Literal(0, INT4)
    n = len(agg.keys)
    values = {m: grouping_value(tuple(idx), m) for m in dict.fromkeys(absent_mask(s, n) for s in agg.sets)}
    gid = ref(n)
    masks = list(values)
    out: HirScalar = Literal(values[masks[-1]], INT4)
    if len(set(values.values())) > 1:
        for m in reversed(masks[:-1]):
            out = If(binder._binary("eq", gid, Literal(m, INT8)), Literal(values[m], INT4), out, INT4)
    return out
