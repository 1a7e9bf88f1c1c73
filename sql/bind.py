"""Name resolution and typing: sqlglot AST -> HIR (sql.hir).

A `Binder` binds one statement against a `CatalogReader`. Parameters ($n) get their types
from the client or are inferred from context (unknown-typed literal rules).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, cast

from sqlglot import exp

from sql import datetime_typmods, func, func_names, jsonb, srf
from sql.bind_cte import bind_with, bind_wmr
from sql.bind_from import bind_from
from sql.bind_rows import is_row, row_comparison, row_not_distinct
from sql.datetime_special import special_now
from sql.errors import (
    AMBIGUOUS_COLUMN,
    DATATYPE_MISMATCH,
    GROUPING_ERROR,
    SYNTAX_ERROR,
    UNDEFINED_COLUMN,
    UNDEFINED_FUNCTION,
    UNDEFINED_OBJECT,
    UNDEFINED_TABLE,
    SqlError,
    unsupported,
)
from sql.func_names import pg_function_name
from sql.func_similar import similar_to_regex
from sql.hir import (
    Exists,
    Finishing,
    HConstant,
    HDistinct,
    HFilter,
    HFlatMap,
    HirRel,
    HirScalar,
    HMap,
    HNegate,
    HProject,
    HReduce,
    HThreshold,
    HTopK,
    HUnion,
    HWindow,
    OuterColumn,
    Param,
    Select,
    WindowExpr,
    hir_types,
)
from sql.literal import cast_value
from sql.scalar import (
    CURRENT_ROW,
    DEFAULT_FRAME,
    TRUE,
    UNBOUNDED_FOLLOWING,
    UNBOUNDED_PRECEDING,
    AggregateExpr,
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
from sql.statements import WMR_META
from sql.types import (
    BOOL,
    INT4,
    INT8,
    JSONB,
    NUMERIC,
    TEXT,
    UNKNOWN,
    SqlType,
    numeric_typmod,
    record_type,
)


@dataclass
class _AggCtx:
    input_scope: Scope
    keys: list[HirScalar]
    aggregates: list[AggregateExpr] = field(default_factory=list)


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


_BINARY: dict[type[exp.Expression], str] = {
    exp.Add: "add", exp.Sub: "sub", exp.Mul: "mul", exp.Div: "div", exp.Mod: "mod",
    exp.EQ: "eq", exp.NEQ: "ne", exp.LT: "lt", exp.LTE: "le", exp.GT: "gt", exp.GTE: "ge",
    exp.DPipe: "concat", exp.Like: "like", exp.ILike: "ilike", exp.Pow: "pow",
    exp.ArrayContainsAll: "array_contains", exp.ArrayContainedBy: "array_contained", exp.ArrayOverlaps: "array_overlap",
}
# functions that stay variadic calls at any arity: a binary call named concat is the operator
# || (NULL-strict, while concat(a, b) skips NULLs)
_VARIADIC_ONLY = frozenset({"concat"})

_CMP_FLIP = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}

_DTYPES: dict[str, str] = {
    "INT": "int4", "BIGINT": "int8", "SMALLINT": "int2", "FLOAT": "float4", "DOUBLE": "float8",
    "DECIMAL": "numeric", "TEXT": "text", "NAME": "name", "VARCHAR": "varchar", "CHAR": "bpchar", "NCHAR": "bpchar",
    "DATE": "date", "TIME": "time", "TIMESTAMP": "timestamp", "TIMESTAMPTZ": "timestamptz",
    "INTERVAL": "interval", "BOOLEAN": "bool", "VARBINARY": "bytea", "BINARY": "bytea",
    "JSONB": "jsonb", "JSON": "jsonb", "UUID": "uuid", "UINT": "uint8",
}


def sql_type_of(dt: exp.DataType) -> SqlType:
    """sqlglot DataType -> SqlType (with typmods)."""
    if dt.this == exp.DataType.Type.ARRAY:
        if len(dt.expressions) != 1 or not isinstance(dt.expressions[0], exp.DataType):
            raise unsupported(f"type {dt.sql(dialect='postgres')}")
        return func.array_of(sql_type_of(dt.expressions[0]))
    if isinstance(dt.this, exp.Interval):  # INTERVAL DAY TO SECOND ...
        return SqlType("interval", datetime_typmods.qualifier_typmod(dt.this.args.get("unit")))
    if isinstance(dt, exp.ObjectIdentifier):  # sqlglot parses regclass, regtype, ... this way
        from sql.types import TYPE_ALIASES

        oid_name = TYPE_ALIASES.get(str(dt.this).lower())
        if oid_name:
            return SqlType(oid_name)
        raise SqlError("42704", f'type "{str(dt.this).lower()}" does not exist')
    if dt.this == exp.DataType.Type.USERDEFINED:
        raw = dt.args.get("kind") or dt.sql(dialect="postgres")
        from sql.types import TYPE_ALIASES

        name = TYPE_ALIASES.get(str(raw).lower())
        if name:
            return SqlType(name)
        raise SqlError("42704", f'type "{raw}" does not exist')
    name = _DTYPES.get(dt.this.name)
    if name is None:
        raise unsupported(f"type {dt.sql(dialect='postgres')}")
    params = [int(p.this.this) if isinstance(p, exp.DataTypeParam) and isinstance(p.this, exp.Literal) else None for p in dt.expressions]
    if name == "numeric" and params:
        p = params[0] or 38
        s = params[1] if len(params) > 1 and params[1] is not None else 0
        if not 1 <= p <= 39:
            raise SqlError("22023", f"NUMERIC precision {p} must be between 1 and 39")
        return SqlType("numeric", numeric_typmod(p, s))
    if name in ("varchar", "bpchar"):
        if params and params[0] is not None:
            return SqlType(name, params[0] + 4)
        return SqlType(name, 5 if name == "bpchar" else -1)
    if name in ("timestamp", "timestamptz", "time", "interval") and params and params[0] is not None:
        return SqlType(name, datetime_typmods.precision_typmod(name, params[0]))
    return SqlType(name)


class Binder:
    def __init__(self, catalog: CatalogReader, param_types: list[SqlType | None] | None = None) -> None:
        self.catalog = catalog
        self.params: dict[int, SqlType] = {}
        for i, t in enumerate(param_types or []):
            if t is not None and t.name != "unknown":
                self.params[i + 1] = t
        self._agg: _AggCtx | None = None
        # WITH names in scope: (relation, column names, depth of self.outer where bound)
        self.ctes: dict[str, tuple[HirRel, list[str], int]] = {}
        # INSERT ... VALUES: target column types for VALUES columns of unknown type only
        self.values_hint: list[SqlType] | None = None
        # ids of the catalog items the statement reads (directly; views count once)
        self.dependencies: list[str] = []
        # enclosing scopes of the query being bound, innermost last (for correlation)
        self.outer: list[Scope] = []
        # self.outer[i] of a query that aggregates: its aggregate context (see _outer_aggregate)
        self._outer_agg: dict[int, _AggCtx] = {}
        # source offsets of column names under a unary `+` (see statements.unary_plus_operands)
        self.unary_plus: frozenset[int] = frozenset()
        self._semijoin_ok = False
        self._next_rec = 0  # HIR ids of WITH MUTUALLY RECURSIVE bindings: r0, r1, ...
        # where window functions go (None: not allowed here, with that error)
        self._win: _WinCtx | None = None
        self._win_forbidden: tuple[str, str] = _NO_WINDOWS

    @contextlib.contextmanager
    def _windows(self, ctx: _WinCtx | None, forbidden: tuple[str, str] | None = None) -> Iterator[None]:
        """Bind with window functions collected into ctx (or refused with `forbidden`)."""
        saved = (self._win, self._win_forbidden)
        self._win = ctx
        if forbidden is not None:
            self._win_forbidden = forbidden
        try:
            yield
        finally:
            self._win, self._win_forbidden = saved

    # ---- parameters -------------------------------------------------------------------
    def param_types(self) -> tuple[SqlType, ...]:
        n = max(self.params, default=0)
        return tuple(self.params.get(i, TEXT) for i in range(1, n + 1))

    # ---- queries ----------------------------------------------------------------------
    def bind_query(self, q: exp.Expression, top: bool = True) -> BoundQuery:
        """A query; the WITH names it binds are in scope only inside it."""
        saved = dict(self.ctes)
        try:
            return self._bind_query(q, top)
        finally:
            self.ctes = saved

    def _bind_query(self, q: exp.Expression, top: bool) -> BoundQuery:
        w = q.args.get("with_") or q.args.get("with")
        if w is not None and w.args.get("recursive") and w.expressions and all(WMR_META in c.meta for c in w.expressions):
            return bind_wmr(self, q, w, top)
        if isinstance(q, exp.Subquery):
            inner = self.bind_query(q.this, top=False)
            return self._apply_modifiers(inner, q, top)
        if isinstance(q, exp.Select):
            return self._bind_select(q, top)
        if isinstance(q, (exp.Union, exp.Except, exp.Intersect)):
            return self._bind_setop(q, top)
        if isinstance(q, exp.Values):
            rel, names, types = self._bind_values(q)
            return BoundQuery(rel, Finishing((), None, 0, tuple(range(len(types)))), names, types)
        raise unsupported(f"query form {q.key.upper()}")

    def _bind_select(self, s: exp.Select, top: bool) -> BoundQuery:
        """A SELECT; it aggregates when it has GROUP BY, HAVING or an aggregate of its level,
        which may sit in one of its subqueries (see _outer_aggregate): then it is bound again,
        aggregating."""
        depth = len(self.outer)
        try:
            with self._windows(None, _NO_WINDOWS):
                return self._bind_select_body(s, top, False)
        except _OuterAggregate as e:
            if e.depth != depth:
                raise
        try:
            with self._windows(None, _NO_WINDOWS):
                return self._bind_select_body(s, top, True)
        except _OuterAggregate as e:
            if e.depth != depth:
                raise
            raise SqlError(GROUPING_ERROR, "aggregate functions are not allowed in this context") from None

    def _bind_select_body(self, s: exp.Select, top: bool, aggregating: bool) -> BoundQuery:
        s = srf.lift_select_list_srfs(s, _output_name, _has_agg)
        bind_with(self, s)
        for bad in ("locks", "into", "qualify", "prewhere", "connect", "pivots", "sample"):
            if s.args.get(bad):
                raise unsupported(f"SELECT ... {bad.upper()}")
        win = _WinCtx()
        for wdef in s.args.get("windows") or []:
            if wdef.name in win.named:
                raise SqlError(WINDOWING_ERROR, f'window "{wdef.name}" is already defined')
            win.named[wdef.name] = wdef
        if s.args.get("from_") or s.args.get("from"):
            rel, scope = bind_from(self, s)
        else:
            rel, scope = HConstant(((),), ()), Scope()
        if (w := s.args.get("where")) is not None:
            preds = []
            for conj in _flatten(w.this, exp.And):
                self._semijoin_ok = isinstance(conj, exp.In)
                try:
                    preds.append(self._predicate(conj, scope, "WHERE"))
                finally:
                    self._semijoin_ok = False
            rel = HFilter(rel, tuple(preds))
        # select list
        items: list[tuple[str, exp.Expression | None, int | None]] = []  # (name, expr, star column)
        for e in s.expressions:
            if isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)):
                tbl = e.table if isinstance(e, exp.Column) else None
                found = False
                for i in scope.star_positions() if tbl is None else [i for i, c in enumerate(scope.columns) if c.table == tbl]:
                    items.append((scope.columns[i].name, None, i))
                    found = True
                if tbl and not found:
                    raise SqlError(UNDEFINED_TABLE, f'missing FROM-clause entry for table "{tbl}"')
                continue
            items.append((_output_name(e), cast(exp.Expression, e.unalias()) if isinstance(e, exp.Alias) else e, None))
        group = s.args.get("group")
        having = s.args.get("having")
        order = s.args.get("order")
        distinct = s.args.get("distinct")
        on_list: list[exp.Expression] = []
        if distinct is not None and distinct.args.get("on") is not None:
            on = distinct.args["on"]
            on_list = list(on.expressions) if isinstance(on, exp.Tuple) else [on]
            distinct = None  # DISTINCT ON is a TopK, not a Distinct
        has_agg = aggregating or bool(group) or having is not None or any(
            self._agg_level(a, scope) == 0 for _, e, _ in items if e is not None for a in _local_aggs(e)
        )
        select_scope = scope
        if has_agg:
            keys: list[HirScalar] = []
            with self._windows(None, (WINDOWING_ERROR, "window functions are not allowed in GROUP BY")):
                for g in (group.expressions if group else []):
                    keys.append(self._group_key(g, scope, items))
            self._agg = _AggCtx(scope, keys)
            try:
                with self._windows(win):
                    exprs = [self._star_in_agg(cast(int, i), scope) if e is None else self.scalar(e, scope) for _, e, i in items]
                having_pred = self._predicate(having.this, scope, "HAVING") if having is not None else None
                with self._windows(win):
                    order_exprs = self._order_exprs(order, scope, items, exprs, bool(distinct)) if order else []
                    on_exprs = [self._on_expr(e, scope, items, exprs) for e in on_list]
                agg = self._agg
            finally:
                self._agg = None
            input_arity = len(scope.columns)
            # plain-column keys group by that column; other keys are mapped first
            mapped = tuple(k for k in keys if not isinstance(k, Column))
            positions = []
            for k in keys:
                if isinstance(k, Column):
                    positions.append(k.index)
                else:
                    positions.append(input_arity + mapped.index(k))
            rel = HMap(rel, mapped) if mapped else rel
            rel = HReduce(rel, tuple(positions), tuple(agg.aggregates))
            if having_pred is not None:
                rel = HFilter(rel, (having_pred,))
            select_scope = Scope()
        else:
            with self._windows(win):
                exprs = [Column(cast(int, i), scope.columns[cast(int, i)].typ) if e is None else self.scalar(e, scope) for _, e, i in items]
                order_exprs = self._order_exprs(order, scope, items, exprs, bool(distinct)) if order else []
                on_exprs = [self._on_expr(e, scope, items, exprs) for e in on_list]
        del select_scope
        if win.windows:
            # window functions see the rows after WHERE / GROUP BY / HAVING: their results
            # are columns appended to that relation, replacing the placeholders
            base = len(hir_types(rel))
            rel = HWindow(rel, tuple(win.windows))
            exprs = [_place_windows(h, base) for h in exprs]
            order_exprs = [(t if isinstance(t, int) else _place_windows(t, base), d, nl) for t, d, nl in order_exprs]
            on_exprs = [h if isinstance(h, int) else _place_windows(h, base) for h in on_exprs]
        names = tuple(n for n, _, _ in items)
        origins = tuple(
            (scope.columns[i].table_oid, scope.columns[i].attnum) if i is not None else _origin(e, exprs[k], scope)
            for k, (_, e, i) in enumerate(items)
        )
        n = len(exprs)
        # order-by entries are either references to select items or extra expressions
        extra: list[HirScalar] = []
        orders: list[ColumnOrder] = []
        for target, desc, nulls_last in order_exprs:
            if isinstance(target, int):
                orders.append(ColumnOrder(target, desc, nulls_last))
            else:
                if target in exprs:
                    orders.append(ColumnOrder(exprs.index(target), desc, nulls_last))
                    continue
                if distinct:
                    raise SqlError("42P10", "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
                if target not in extra:
                    extra.append(target)
                orders.append(ColumnOrder(n + extra.index(target), desc, nulls_last))
        on_positions: list[int] = []
        for h in on_exprs:
            if isinstance(h, int):
                on_positions.append(h)
                continue
            if h in exprs:
                on_positions.append(exprs.index(h))
                continue
            if h not in extra:
                extra.append(h)
            on_positions.append(n + extra.index(h))
        if on_list and orders:
            lead = [o.column for o in orders[: len(on_positions)]]
            if sorted(lead) != sorted(on_positions) and len(orders) >= 1:
                raise SqlError("42P10", "SELECT DISTINCT ON expressions must match initial ORDER BY expressions")
        arity = len(hir_types(rel))
        all_exprs = exprs + extra
        rel = HMap(rel, tuple(all_exprs))
        rel = HProject(rel, tuple(range(arity, arity + len(all_exprs))))
        if distinct:
            rel = HDistinct(rel)
        if on_list:
            # DISTINCT ON (k) = TopK(group_key=k, order_key=ORDER BY, limit=1)
            rel = HTopK(rel, tuple(dict.fromkeys(on_positions)), tuple(orders), 1, 0)
        types = tuple(e.typ for e in exprs)
        limit, offset = self._limit_offset(s)
        fin = Finishing(tuple(orders), limit, offset, tuple(range(n)))
        bq = BoundQuery(rel, fin, names, types, origins)
        return bq if top else bq

    def _apply_modifiers(self, b: BoundQuery, q: exp.Expression, top: bool) -> BoundQuery:
        """ORDER BY/LIMIT/OFFSET attached to a parenthesized query."""
        order = q.args.get("order")
        limit, offset = self._limit_offset(q)
        if not order and limit is None and not offset:
            return b
        rel = self._finish_nested(b)
        orders = []
        if order:
            for o in order.expressions:
                idx = self._output_ref(o.this, b.names)
                orders.append(ColumnOrder(idx, bool(o.args.get("desc")), not o.args.get("nulls_first")))
        n = len(b.types)
        return BoundQuery(rel, Finishing(tuple(orders), limit, offset, tuple(range(n))), b.names, b.types, b.origins)

    def _output_ref(self, e: exp.Expression, names: tuple[str, ...]) -> int:
        if isinstance(e, exp.Literal) and not e.is_string:
            k = int(e.this)
            if not 1 <= k <= len(names):
                raise SqlError("42P10", f"ORDER BY position {k} is not in select list")
            return k - 1
        if isinstance(e, exp.Column) and not e.table:
            if e.name not in names:
                raise SqlError(UNDEFINED_COLUMN, f'column "{e.name}" does not exist')
            if names.count(e.name) > 1:
                raise SqlError(AMBIGUOUS_COLUMN, f'ORDER BY "{e.name}" is ambiguous')
            return names.index(e.name)
        if isinstance(e, exp.Column) and not isinstance(e.this, exp.Star):
            raise SqlError(UNDEFINED_TABLE, f'missing FROM-clause entry for table "{e.table}"')
        # Postgres: only result column names or positions order a UNION / INTERSECT / EXCEPT
        raise SqlError("0A000", "invalid UNION/INTERSECT/EXCEPT ORDER BY clause",
                       detail="Only result column names can be used, not expressions or functions.")

    def _finish_nested(self, b: BoundQuery) -> HirRel:
        """A nested query's ORDER BY + LIMIT/OFFSET becomes a TopK; ORDER BY alone is dropped."""
        f = b.finishing
        rel = b.rel
        if f.limit is not None or f.offset:
            rel = HTopK(rel, (), f.order_by, f.limit, f.offset)
        if f.project != tuple(range(len(hir_types(rel)))):
            rel = HProject(rel, f.project)
        return rel

    def _limit_offset(self, q: exp.Expression) -> tuple[int | None, int]:
        limit = None
        offset = 0
        if (lim := q.args.get("limit")) is not None:
            with self._windows(None, (WINDOWING_ERROR, "window functions are not allowed in LIMIT")):
                v = self._const_int(lim.expression, "LIMIT")
            limit = v
        if (off := q.args.get("offset")) is not None:
            with self._windows(None, (WINDOWING_ERROR, "window functions are not allowed in OFFSET")):
                offset = self._const_int(off.expression, "OFFSET") or 0
        return limit, offset

    def _const_int(self, e: exp.Expression, what: str) -> int | None:
        h = self.scalar(e, Scope())
        if isinstance(h, Literal):
            if h.value is None:
                return None
            try:
                v = int(cast_value(h.value, h.typ, INT8))
            except SqlError:
                raise SqlError(DATATYPE_MISMATCH, f"argument of {what} must be type bigint, not type {h.typ.pg_format()}") from None
            if v < 0:
                raise SqlError("2201W" if what == "LIMIT" else "2201X", f"{what} must not be negative")
            return v
        raise unsupported(f"non-constant {what}")

    def _order_exprs(self, order: exp.Order, scope: Scope, items, exprs, distinct: bool):
        out: list[tuple[HirScalar | int, bool, bool]] = []
        names = [n for n, _, _ in items]
        for o in order.expressions:
            e = o.this
            desc = bool(o.args.get("desc"))
            nulls_first = o.args.get("nulls_first")
            nulls_last = not nulls_first if nulls_first is not None else not desc
            if isinstance(e, exp.Literal) and not e.is_string:
                k = int(e.this)
                if not 1 <= k <= len(exprs):
                    raise SqlError("42P10", f"ORDER BY position {k} is not in select list")
                out.append((k - 1, desc, nulls_last))
                continue
            if isinstance(e, exp.Column) and not e.table and names.count(e.name) >= 1:
                # output-column name takes precedence (Postgres rule for bare names)
                k = names.index(e.name)
                if names.count(e.name) > 1 and len({id(items[i][1]) for i, n in enumerate(names) if n == e.name}) > 1:
                    raise SqlError(AMBIGUOUS_COLUMN, f'ORDER BY "{e.name}" is ambiguous')
                out.append((k, desc, nulls_last))
                continue
            out.append((self.scalar(e, scope), desc, nulls_last))
        return out

    def _on_expr(self, e: exp.Expression, scope: Scope, items, exprs) -> HirScalar | int:
        """A DISTINCT ON expression: an output ordinal, an output name, or an expression."""
        if isinstance(e, exp.Literal) and not e.is_string:
            k = int(e.this)
            if not 1 <= k <= len(exprs):
                raise SqlError("42P10", f"SELECT DISTINCT ON position {k} is not in select list")
            return k - 1
        names = [n for n, _, _ in items]
        if isinstance(e, exp.Column) and not e.table and e.name in names:
            return names.index(e.name)
        return self.scalar(e, scope)

    def _group_key(self, g: exp.Expression, scope: Scope, items) -> HirScalar:
        if isinstance(g, exp.Literal) and not g.is_string:
            k = int(g.this)
            if not 1 <= k <= len(items):
                raise SqlError("42P10", f"GROUP BY position {k} is not in select list")
            _, e, star = items[k - 1]
            return Column(star, scope.columns[star].typ) if e is None else self.scalar(e, scope)
        if isinstance(g, exp.Column) and not g.table:
            try:
                scope.lookup(g.name, None)
            except SqlError:
                for n, e, _ in items:
                    if n == g.name and e is not None:
                        return self.scalar(e, scope)
                raise
        if _has_agg(g):
            raise SqlError(GROUPING_ERROR, "aggregate functions are not allowed in GROUP BY")
        return self.scalar(g, scope)

    def _star_in_agg(self, i: int, scope: Scope) -> HirScalar:
        c = scope.columns[i]
        return self._key_or_error(Column(i, c.typ), c)

    def _key_or_error(self, h: HirScalar, c: ScopeColumn) -> HirScalar:
        assert self._agg is not None
        if h in self._agg.keys:
            return Column(self._agg.keys.index(h), h.typ)
        ref = f"{c.table}.{c.name}" if c.table else c.name
        raise SqlError(GROUPING_ERROR, f'column "{ref}" must appear in the GROUP BY clause or be used in an aggregate function')

    def _bind_setop(self, q: exp.Expression, top: bool) -> BoundQuery:
        bind_with(self, q)
        left = self.bind_query(q.this, top=False)
        right = self.bind_query(q.expression, top=False)
        lrel, rrel = self._finish_nested(left), self._finish_nested(right)
        if len(left.types) != len(right.types):
            kind = q.key.upper()
            raise SqlError(SYNTAX_ERROR, f"each {kind} query must have the same number of columns")
        kind = {"union": "UNION", "except": "EXCEPT", "intersect": "INTERSECT"}[q.key]
        types = tuple(func.unify([a, b], kind) for a, b in zip(left.types, right.types, strict=True))
        lrel = self._cast_rel(lrel, left.types, types)
        rrel = self._cast_rel(rrel, right.types, types)
        distinct = q.args.get("distinct", True) is not False
        if kind == "UNION":
            rel: HirRel = HUnion((lrel, rrel))
            if distinct:
                rel = HDistinct(rel)
        elif kind == "EXCEPT":
            if distinct:
                lrel, rrel = HDistinct(lrel), HDistinct(rrel)
            rel = HThreshold(HUnion((lrel, HNegate(rrel))))
        else:
            if distinct:
                lrel, rrel = HDistinct(lrel), HDistinct(rrel)
            # l ∩ r = l - (l - r) with multiplicities: Threshold(l - Threshold(l - r))
            rel = HThreshold(HUnion((lrel, HNegate(HThreshold(HUnion((lrel, HNegate(rrel))))))))
        names = left.names
        base = BoundQuery(rel, Finishing((), None, 0, tuple(range(len(types)))), names, types)
        order = q.args.get("order")
        limit, offset = self._limit_offset(q)
        orders = []
        if order:
            for o in order.expressions:
                idx = self._output_ref(o.this, names)
                desc = bool(o.args.get("desc"))
                nf = o.args.get("nulls_first")
                orders.append(ColumnOrder(idx, desc, not nf if nf is not None else not desc))
        return BoundQuery(rel, Finishing(tuple(orders), limit, offset, base.finishing.project), names, types)

    def _cast_rel(self, rel: HirRel, have: tuple[SqlType, ...], want: tuple[SqlType, ...]) -> HirRel:
        if have == want:
            return rel
        if isinstance(rel, HConstant):
            rows = tuple(tuple(cast_value(v, h, w) for v, h, w in zip(r, have, want, strict=True)) for r in rel.rows)
            return HConstant(rows, want)
        n = len(have)
        casts = tuple(self.coerce(Column(i, have[i]), want[i]) for i in range(n))
        return HProject(HMap(rel, casts), tuple(range(n, 2 * n)))

    def _bind_values(self, v: exp.Values) -> tuple[HirRel, tuple[str, ...], tuple[SqlType, ...]]:
        rows = [list(t.expressions) if isinstance(t, exp.Tuple) else [t] for t in v.expressions]
        width = len(rows[0])
        if any(len(r) != width for r in rows):
            raise SqlError(SYNTAX_ERROR, "VALUES lists must all be the same length")
        hint, self.values_hint = self.values_hint, None
        with self._windows(None, (WINDOWING_ERROR, "window functions are not allowed in VALUES")):
            bound = [[self.scalar(e, Scope()) for e in r] for r in rows]
        types = tuple(
            hint[i] if hint is not None and i < len(hint) and all(r[i].typ.name == "unknown" for r in bound)
            else func.unify([r[i].typ for r in bound], "VALUES")
            for i in range(width)
        )
        coerced = [[self.coerce(e, types[i]) for i, e in enumerate(r)] for r in bound]
        names = tuple(f"column{i + 1}" for i in range(width))
        if all(isinstance(e, Literal) for r in coerced for e in r):
            return HConstant(tuple(tuple(cast(Literal, e).value for e in r) for r in coerced), types), names, types
        unit = HConstant(((),), ())
        parts = tuple(HMap(unit, tuple(r)) for r in coerced)
        return (parts[0] if len(parts) == 1 else HUnion(parts)), names, types

    # ---- FROM -------------------------------------------------------------------------
    def _table_function(self, t: exp.Expression, rel: HirRel, scope: Scope) -> tuple[HirRel, Scope]:
        """A table function in FROM: a FlatMap over what precedes it (its arguments may read
        earlier FROM items, as in Postgres)."""
        fn = t if isinstance(t, exp.Unnest) else t.this
        ordinality = False
        if isinstance(fn, exp.Unnest) or (isinstance(fn, exp.Anonymous) and fn.name.lower() == "unnest"):
            raw = list(fn.expressions)
            if len(raw) != 1:
                raise unsupported("unnest of several arrays")
            arr = self.scalar(raw[0], scope)
            if arr.typ.name == "unknown":
                raise SqlError(UNDEFINED_FUNCTION, "function unnest(unknown) is not unique",
                               hint="Could not choose a best candidate function. You might need to add explicit type casts.")
            if not func.is_array(arr.typ):
                raise SqlError(UNDEFINED_FUNCTION, f"function unnest({arr.typ.pg_format()}) does not exist")
            ordinality = isinstance(fn, exp.Unnest) and bool(fn.args.get("offset"))
            args = [arr]
            typ = arr.typ.element
            assert typ is not None
            name = "unnest"
            func_name = "unnest_array_with_ordinality" if ordinality else "unnest_array"
        elif isinstance(fn, exp.ExplodingGenerateSeries) or (isinstance(fn, exp.Anonymous) and fn.name.lower() == "generate_series"):
            raw = [fn.args.get("start"), fn.args.get("end"), fn.args.get("step")] if not isinstance(fn, exp.Anonymous) else list(fn.expressions)
            raw = [x for x in raw if x is not None]
            args = [self.scalar(x, scope) for x in raw]
            if len(args) not in (2, 3):
                raise SqlError(UNDEFINED_FUNCTION, "function generate_series needs 2 or 3 arguments")
            typ = func.unify([a.typ for a in args], "generate_series")
            if typ.name not in ("int4", "int8"):
                if typ.name == "unknown" or typ.name == "text":
                    typ = INT4
                else:
                    raise unsupported(f"generate_series over {typ.pg_format()}")
            args = [self.coerce(a, typ) for a in args]
            if len(args) == 2:
                args.append(self.coerce(Literal(1, INT4), typ))
            name = func_name = "generate_series"
        elif isinstance(fn, exp.Anonymous) and fn.name.lower() in JSONB_TABLE_FUNCTIONS:
            return self._jsonb_table_function(t, fn, rel, scope)
        else:
            raise unsupported(f"table function {fn.sql(dialect='postgres')}")
        alias = t.args.get("alias")
        table_alias = t.alias_or_name if alias is not None and alias.this is not None else name
        cols = [c.name for c in alias.columns] if alias is not None and alias.columns else []
        if isinstance(fn, exp.Unnest) and isinstance(fn.args.get("offset"), exp.Identifier):
            cols.append(fn.args["offset"].name)  # sqlglot moves the ordinality column name here
        col = cols[0] if cols else table_alias
        types = (typ, INT8) if ordinality else (typ,)
        out = HFlatMap(rel, func_name, tuple(args), types)
        new_cols = [ScopeColumn(table_alias, col, typ)]
        if ordinality:
            new_cols.append(ScopeColumn(table_alias, cols[1] if len(cols) > 1 else "ordinality", INT8))
        return out, scope.extended(new_cols)

    def _jsonb_table_function(self, t: exp.Expression, fn: exp.Anonymous, rel: HirRel, scope: Scope) -> tuple[HirRel, Scope]:
        """jsonb_array_elements[_text](j) (value), jsonb_each[_text](j) (key, value) and
        jsonb_object_keys(j): a FlatMap of the rows the function returns for each input row."""
        name = fn.name.lower()
        if len(fn.expressions) != 1:
            raise SqlError(UNDEFINED_FUNCTION, f"function {name} takes one jsonb argument")
        j = self.scalar(fn.expressions[0], scope)
        if j.typ.name not in ("jsonb", "unknown"):
            raise SqlError(UNDEFINED_FUNCTION, f"function {name}({j.typ.pg_format()}) does not exist",
                           hint="No function matches the given name and argument types. You might need to add explicit type casts.")
        j = self.coerce(j, JSONB)
        names, types = JSONB_TABLE_FUNCTIONS[name]
        alias = t.args.get("alias")
        table_alias = t.alias_or_name if alias is not None and alias.this is not None else name
        cols = [c.name for c in alias.columns] if alias is not None and alias.columns else []
        if len(cols) > len(names):
            raise SqlError("42601", f'table "{table_alias}" has {len(names)} columns available but {len(cols)} columns specified')
        if name == "jsonb_object_keys" and not cols and alias is not None and alias.this is not None:
            cols = [table_alias]  # a function returning a base type: the alias names its column
        out_names = [*cols, *names[len(cols):]]
        out = HFlatMap(rel, name, (j,), types)
        return out, scope.extended([ScopeColumn(table_alias, c, ty) for c, ty in zip(out_names, types, strict=True)])

    # ---- scalars ----------------------------------------------------------------------
    def _predicate(self, e: exp.Expression, scope: Scope, what: str) -> HirScalar:
        clause = _WINDOW_CLAUSE.get(what, what)
        with self._windows(None, (WINDOWING_ERROR, f"window functions are not allowed in {clause}")):
            h = self.scalar(e, scope)
        if h.typ.name == "unknown" or isinstance(h, Param) and h.typ.name == "unknown":
            return self.coerce(h, BOOL)
        if h.typ.name != "bool":
            raise SqlError(DATATYPE_MISMATCH, f"argument of {what} must be type boolean, not type {h.typ.pg_format()}")
        return h

    def scalar(self, e: exp.Expression, scope: Scope) -> HirScalar:
        if isinstance(e, exp.Window):
            return self._window(e, scope)
        if (_is_agg(e) or isinstance(e, exp.Filter) and _is_agg(e.this)) and (level := self._agg_level(e, scope)) > 0:
            return self._outer_aggregate(e, level)
        agg = self._agg
        if agg is not None:
            if _is_agg(e):
                return self._aggregate(e, agg)
            if isinstance(e, exp.Filter) and _is_agg(e.this):
                return self._aggregate(e.this, agg, e.expression.this)
            if not _has_agg(e) and not _has_window(e):
                self._agg = None
                try:
                    h = self.scalar(e, agg.input_scope)
                except _OuterAggregate:
                    # a subquery holding an aggregate of this query: bound as a whole below
                    h = None
                finally:
                    self._agg = agg
                if h is None:
                    return self._scalar(e, scope)
                if h in agg.keys:
                    return Column(agg.keys.index(h), h.typ)
                if isinstance(e, exp.Column):
                    c = agg.input_scope.columns[h.index] if isinstance(h, Column) else ScopeColumn(e.table or None, e.name, h.typ)
                    return self._key_or_error(h, c)
                if not _refs_columns(h):
                    return h
        return self._scalar(e, scope)

    def _column(self, e: exp.Column, scope: Scope) -> HirScalar:
        """A column of the current scope, else of the nearest enclosing scope that has it."""
        h = self._column_ref(e, scope)
        start = e.this.meta.get("start") if isinstance(e.this, exp.Identifier) else None
        if start is not None and start in self.unary_plus and not (h.typ.is_numeric or h.typ.name in ("interval", "unknown")):
            raise func.op_error("+", h.typ)
        return h

    def _column_ref(self, e: exp.Column, scope: Scope) -> HirScalar:
        table = e.table or None
        try:
            i = scope.lookup(e.name, table)
            return Column(i, scope.columns[i].typ)
        except SqlError as err:
            if err.sqlstate not in (UNDEFINED_COLUMN, UNDEFINED_TABLE):
                raise
            for level, outer in enumerate(reversed(self.outer), start=1):
                try:
                    i = outer.lookup(e.name, table)
                except SqlError as err2:
                    if err2.sqlstate in (UNDEFINED_COLUMN, UNDEFINED_TABLE):
                        continue
                    raise
                return OuterColumn(level, i, outer.columns[i].typ)
            raise

    def _agg_level(self, e: exp.Expression, scope: Scope) -> int:
        """How many query levels out the aggregate call `e` belongs (Postgres: the innermost
        level of the columns its arguments and FILTER read; its own level when it reads none,
        reads a subquery, or a name does not resolve)."""
        if next(e.find_all(exp.Subquery, exp.Select, exp.Exists), None) is not None:
            return 0
        levels = [self._column_level(col, scope) for col in e.find_all(exp.Column) if not isinstance(col.this, exp.Star)]
        return min(levels, default=0)

    def _column_level(self, col: exp.Column, scope: Scope) -> int:
        table = col.table or None
        scopes = [scope] + [self._outer_agg[i].input_scope if i in self._outer_agg else s
                            for i, s in reversed(list(enumerate(self.outer)))]
        for level, sc in enumerate(scopes):
            try:
                sc.lookup(col.name, table)
                return level
            except SqlError as err:
                if err.sqlstate not in (UNDEFINED_COLUMN, UNDEFINED_TABLE):
                    return 0
        return 0

    def _outer_aggregate(self, e: exp.Expression, level: int) -> HirScalar:
        """An aggregate of the query `level` scopes out: computed by that query's Reduce (over
        its input, with the scopes it sees) and read here as its output column. When that
        query does not aggregate yet, it is bound again, aggregating."""
        idx = len(self.outer) - level
        outer_agg = self._outer_agg.get(idx)
        if outer_agg is None:
            raise _OuterAggregate(idx)
        saved = (self.outer, self._outer_agg, self._agg)
        self.outer = self.outer[:idx]
        self._outer_agg = {i: a for i, a in self._outer_agg.items() if i < idx}
        try:
            if isinstance(e, exp.Filter):
                col = self._aggregate(e.this, outer_agg, e.expression.this)
            else:
                col = self._aggregate(e, outer_agg)
        finally:
            self.outer, self._outer_agg, self._agg = saved
        assert isinstance(col, Column)
        return OuterColumn(level, col.index, col.typ)

    def _subquery(self, q: exp.Expression, scope: Scope) -> BoundQuery:
        """Bind a subquery expression's query with `scope` as its enclosing scope."""
        saved_agg, saved_ctes = self._agg, dict(self.ctes)
        if saved_agg is not None:
            self._outer_agg[len(self.outer)] = saved_agg
            # After GROUP BY the enclosing query's columns are its group keys (then its
            # aggregates, which a subquery cannot name): outer references resolve to keys.
            scope = Scope([
                saved_agg.input_scope.columns[k.index] if isinstance(k, Column) else ScopeColumn(None, "?column?", k.typ)
                for k in saved_agg.keys
            ])
        self._agg = None
        self.outer.append(scope)
        try:
            bq = self.bind_query(q.this if isinstance(q, exp.Subquery) else q, top=False)
        finally:
            self.outer.pop()
            self._outer_agg.pop(len(self.outer), None)
            self._agg = saved_agg
            self.ctes = saved_ctes
        return bq

    def _scalar_subquery(self, q: exp.Expression, scope: Scope) -> HirScalar:
        bq = self._subquery(q, scope)
        if len(bq.types) != 1:
            raise SqlError(SYNTAX_ERROR, "subquery must return only one column")
        return Select(self._finish_nested(bq), bq.types[0])

    def _quantified(self, op: str, lhs: HirScalar, q: exp.Expression, scope: Scope, quantifier: str) -> HirScalar:
        """x op ANY(S) = case when bool_or(x op s) then true when bool_or((x op s) is null)
        then null else false end, over S (false for empty S); x op ALL(S) likewise with
        bool_or(not (x op s)) deciding false and true for empty S."""
        bq = self._subquery(q, scope)
        if len(bq.types) != 1:
            raise SqlError(SYNTAX_ERROR, "subquery has too many columns")
        sub = self._finish_nested(bq)
        inner_x = shift_outer(lhs)
        ta, tb, _ = func.binary_op(op, lhs.typ, bq.types[0])
        cmp = CallBinary(op, self.coerce(inner_x, ta), self.coerce(Column(0, bq.types[0]), tb), BOOL)
        decisive = cmp if quantifier == "any" else CallUnary("not", cmp, BOOL)
        unknown = CallUnary("is_null", cmp, BOOL)
        rel = HReduce(
            HMap(sub, (decisive, unknown)),
            (),
            (AggregateExpr("bool_or", Column(1, BOOL), False, BOOL), AggregateExpr("bool_or", Column(2, BOOL), False, BOOL)),
        )
        hit = Literal(quantifier == "any", BOOL)
        verdict: HirScalar = If(CallUnary("is_true", Column(0, BOOL), BOOL), hit,
                                 If(CallUnary("is_true", Column(1, BOOL), BOOL), Literal(None, BOOL), Literal(quantifier != "any", BOOL), BOOL), BOOL)
        return Select(HProject(HMap(rel, (verdict,)), (2,)), BOOL)

    def _semijoin(self, lhs: HirScalar, q: exp.Expression, scope: Scope) -> HirScalar:
        """In a WHERE conjunct, x IN (S) may be EXISTS(SELECT 1 FROM S WHERE x = s): null and
        false both reject the row, and the EXISTS decorrelates into an equi-join."""
        bq = self._subquery(q, scope)
        if len(bq.types) != 1:
            raise SqlError(SYNTAX_ERROR, "subquery has too many columns")
        sub = self._finish_nested(bq)
        ta, tb, _ = func.binary_op("eq", lhs.typ, bq.types[0])
        cmp = CallBinary("eq", self.coerce(shift_outer(lhs), ta), self.coerce(Column(0, bq.types[0]), tb), BOOL)
        return Exists(HFilter(sub, (cmp,)), BOOL)

    def _aggregate(self, e: exp.Expression, agg: _AggCtx, filter_where: exp.Expression | None = None) -> HirScalar:
        """An aggregate of this query level; `agg(x) FILTER (WHERE p)` = agg(case when p then x end).

        Order-sensitive / multi-argument aggregates aggregate a record `row(args.., keys..)`
        (see sql.scalar.AggregateExpr); their FILTER nulls the whole record."""
        name, raw_args, ordered, distinct = _agg_call(e)
        self._agg = None
        try:
            with self._windows(None, (GROUPING_ERROR, "aggregate function calls cannot contain window function calls")):
                if name in ORDERED_AGGREGATES:
                    a = self._ordered_aggregate(name, raw_args, ordered, distinct, filter_where, agg.input_scope)
                else:
                    if len(raw_args) > 1:
                        args = [self.scalar(x, agg.input_scope) for x in raw_args]
                        raise SqlError(UNDEFINED_FUNCTION, f"function {name}({', '.join(x.typ.pg_format() for x in args)}) does not exist",
                                       hint="No function matches the given name and argument types. You might need to add explicit type casts.")
                    h = self._aggregate_arg(name, raw_args[0] if raw_args else None, agg.input_scope, filter_where)
                    a = AggregateExpr(name, h, distinct, func.aggregate_type(name, h.typ))
        finally:
            self._agg = agg
        if a not in agg.aggregates:
            agg.aggregates.append(a)
        return Column(len(agg.keys) + agg.aggregates.index(a), a.typ)

    def _ordered_aggregate(self, name: str, raw_args: list[exp.Expression], ordered: list[exp.Ordered], distinct: bool,
                           filter_where: exp.Expression | None, scope: Scope) -> AggregateExpr:
        """string_agg(x, sep) / array_agg(x) [DISTINCT] [ORDER BY ...] over row(args.., keys..)."""
        if any(_has_agg(a) for a in raw_args) or any(_has_agg(o) for o in ordered):
            raise SqlError(GROUPING_ERROR, "aggregate function calls cannot be nested")
        args = [self.scalar(x, scope) for x in raw_args]
        cond = None
        if filter_where is not None:
            if _has_agg(filter_where):
                raise SqlError(GROUPING_ERROR, "aggregate functions are not allowed in FILTER")
            cond = self._predicate(filter_where, scope, "FILTER")
        want = 2 if name in ("string_agg", "jsonb_object_agg") else 1
        if len(args) != want:
            raise SqlError(UNDEFINED_FUNCTION, f"function {name}({', '.join(x.typ.pg_format() for x in args)}) does not exist",
                           hint="No function matches the given name and argument types. You might need to add explicit type casts.")
        if name == "string_agg":
            for x in args:
                if not (x.typ.is_string or x.typ.name == "unknown"):
                    if x.typ.name == "bytea":
                        raise unsupported("string_agg(bytea, bytea)")
                    raise SqlError(UNDEFINED_FUNCTION, f"function string_agg({', '.join(y.typ.pg_format() for y in args)}) does not exist",
                                   hint="No function matches the given name and argument types. You might need to add explicit type casts.")
            args = [self.coerce(x, TEXT) for x in args]
            typ = TEXT
        elif name == "array_agg":
            if args[0].typ.name == "unknown":
                args = [self.coerce(args[0], TEXT)]
            typ = func.array_of(args[0].typ)
        elif name in ("jsonb_agg", "jsonb_object_agg"):
            if distinct:
                raise unsupported(f"{name}(DISTINCT ...)")
            if name == "jsonb_object_agg":
                args = [self._jsonb_key(args[0]), self._to_jsonb(args[1])]
            else:
                args = [self._to_jsonb(args[0])]
            typ = JSONB
        else:
            typ = func.aggregate_type(name, args[0].typ)
        keys = [self.scalar(o.this, scope) for o in ordered]
        keys = [self.coerce(k, TEXT) if k.typ.name == "unknown" else k for k in keys]
        if distinct:
            # Postgres: with DISTINCT, the ORDER BY expressions must be arguments; the
            # duplicates removed are of the whole argument list, sorted by the first
            if any(k not in args for k in keys):
                raise SqlError("42P10", "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list")
            order = tuple(ColumnOrder(args.index(k), bool(o.args.get("desc")), _nulls_last(o)) for k, o in zip(keys, ordered, strict=True))
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

    def _aggregate_arg(self, name: str, arg: exp.Expression | None, scope: Scope, filter_where: exp.Expression | None,
                       grouping: bool = True) -> HirScalar:
        """The argument of an aggregate over `scope` (FILTER folded in). A grouping
        aggregate's argument cannot hold aggregates; a window aggregate's may (they group)."""
        if name == "count" and (arg is None or isinstance(arg, exp.Star)):
            h: HirScalar = TRUE
        else:
            if grouping and _has_agg(arg):
                raise SqlError(GROUPING_ERROR, "aggregate function calls cannot be nested")
            h = self.scalar(cast(exp.Expression, arg), scope)
            if h.typ.name == "unknown":
                h = self.coerce(h, TEXT if name in ("min", "max", "count") else NUMERIC)
        if filter_where is not None:
            if grouping and _has_agg(filter_where):
                raise SqlError(GROUPING_ERROR, "aggregate functions are not allowed in FILTER")
            cond = self._predicate(filter_where, scope, "FILTER")
            h = If(cond, h, Literal(None, h.typ), h.typ)
        if name in ("sum", "avg") and not (h.typ.is_numeric or h.typ.name == "interval"):
            raise SqlError(UNDEFINED_FUNCTION, f"function {name}({h.typ.pg_format()}) does not exist",
                           hint="No function matches the given name and argument types. You might need to add explicit type casts.")
        return h

    # ---- window functions -------------------------------------------------------------
    def _window(self, e: exp.Window, scope: Scope) -> HirScalar:
        """`f(args) OVER (...)`: collected into the SELECT's window context; the call becomes
        a placeholder column (see _place_windows). Arguments, PARTITION BY and ORDER BY bind
        like select-list expressions (over the GROUP BY output when the query groups)."""
        ctx = self._win
        if ctx is None:
            raise SqlError(*self._win_forbidden)
        partition_by, order_clause, spec = self._resolve_window(e, ctx.named)
        call = e.this
        filter_where = None
        if isinstance(call, exp.Filter):
            call, filter_where = call.this, call.expression.this
        if isinstance(call, (exp.IgnoreNulls, exp.RespectNulls)):
            raise unsupported("IGNORE NULLS / RESPECT NULLS in window functions")
        with self._windows(None, (WINDOWING_ERROR, "window function calls cannot be nested")):
            name, args, typ = self._window_call(call, scope, filter_where)
        with self._windows(None, (WINDOWING_ERROR, "window functions are not allowed in window definitions")):
            partition = tuple(self._window_key(p, scope) for p in partition_by)
            order_by: list[HirScalar] = []
            order: list[ColumnOrder] = []
            for ordered in order_clause.expressions if order_clause is not None else []:
                desc = bool(ordered.args.get("desc"))
                nulls_first = ordered.args.get("nulls_first")
                nulls_last = not nulls_first if nulls_first is not None else not desc
                order.append(ColumnOrder(len(order_by), desc, nulls_last))
                order_by.append(self._window_key(ordered.this, scope))
            frame = self._frame(spec)
        if name in ("row_number", "rank", "dense_rank", "lag", "lead"):
            frame = DEFAULT_FRAME  # Postgres ignores the frame of these functions
        w = WindowExpr(name, args, partition, tuple(order_by), tuple(order), frame, typ)
        if w not in ctx.windows:
            ctx.windows.append(w)
        return Column(_WBASE + ctx.windows.index(w), typ)

    def _resolve_window(self, e: exp.Window, named: dict[str, exp.Window]) -> tuple[list[exp.Expression], exp.Order | None, exp.Expression | None]:
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
        b_partition, b_order, b_spec = self._resolve_window(named[name], named)
        if partition:
            raise SqlError(WINDOWING_ERROR, f'cannot override PARTITION BY clause of window "{name}"')
        if order is not None and b_order is not None:
            raise SqlError(WINDOWING_ERROR, f'cannot override ORDER BY clause of window "{name}"')
        if b_spec is not None and (order is not None or spec is not None):
            raise SqlError(WINDOWING_ERROR, f'cannot copy window "{name}" because it has a frame clause')
        return b_partition, order if order is not None else b_order, spec if spec is not None else b_spec

    def _window_key(self, e: exp.Expression, scope: Scope) -> HirScalar:
        h = self.scalar(e, scope)
        return self.coerce(h, TEXT) if h.typ.name == "unknown" else h

    def _window_call(self, call: exp.Expression, scope: Scope,
                     filter_where: exp.Expression | None) -> tuple[str, tuple[HirScalar, ...], SqlType]:
        """(function name, bound arguments, result type) of a window function call."""
        name = _WINDOW_FUNCS.get(type(call))
        if name is None and type(call) in _AGG_CLASSES:
            name = _AGG_CLASSES[type(call)]
            if name not in _WINDOW_AGGREGATES:
                raise unsupported(f"{name} as a window function")
            arg = call.this
            if isinstance(arg, exp.Distinct):
                raise SqlError("0A000", "DISTINCT is not implemented for window functions")
            h = self._aggregate_arg(name, arg, scope, filter_where, grouping=False)
            return name, (h,), func.aggregate_type(name, h.typ)
        if name is None:
            fname = call.name.lower() if isinstance(call, exp.Anonymous) else call.key.lower()
            raise unsupported(f"window function {_UNSUPPORTED_WINDOW_NAMES.get(fname, fname)}")
        if filter_where is not None:
            raise SqlError("0A000", "FILTER is not implemented for non-aggregate window functions")
        raw = [v for k in ("this", "offset", "default", "expressions") for v in _as_list(call.args.get(k))]
        args = [self.scalar(a, scope) for a in raw]

        def no_such() -> SqlError:
            return SqlError(UNDEFINED_FUNCTION, f"function {name}({', '.join(a.typ.pg_format() for a in args)}) does not exist",
                            hint="No function matches the given name and argument types. You might need to add explicit type casts.")

        if name in ("row_number", "rank", "dense_rank"):
            if args:
                raise no_such()
            return name, (), INT8
        if name in ("first_value", "last_value"):
            if len(args) != 1:
                raise no_such()
            x = self.coerce(args[0], _polymorphic_type(args))
            return name, (x,), x.typ
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
        return name, (self.coerce(value, t), self.coerce(offset, INT4), self.coerce(default, t)), t

    def _frame(self, spec: exp.Expression | None) -> WindowFrame:
        """A window frame clause, with Postgres' checks (42P20); offsets are row counts."""
        if spec is None:
            return DEFAULT_FRAME
        units = str(spec.args.get("kind") or "").lower()
        if units not in ("rows", "range"):
            raise unsupported(f"{units.upper()} window frames")
        if spec.args.get("exclude") is not None:
            raise unsupported("EXCLUDE in window frames")
        start = self._frame_bound(spec.args.get("start"), spec.args.get("start_side"), units, "starting")
        end = self._frame_bound(spec.args.get("end"), spec.args.get("end_side"), units, "ending") \
            if spec.args.get("end") is not None else CURRENT_ROW
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
        return WindowFrame(units, start, end)

    def _frame_bound(self, bound: Any, side: Any, units: str, which: str) -> tuple[str, int | None]:
        side = str(side or "").lower()
        if isinstance(bound, str):
            if bound.upper() == "CURRENT ROW":
                return CURRENT_ROW
            return UNBOUNDED_PRECEDING if side == "preceding" else UNBOUNDED_FOLLOWING
        if units == "range":
            raise unsupported("RANGE window frames with an offset")
        with self._windows(None, (WINDOWING_ERROR, "window functions are not allowed in window definitions")):
            h = self.scalar(bound, Scope())
        if not isinstance(h, Literal):
            raise unsupported("non-constant window frame offsets")
        if h.value is None:
            raise SqlError("22004", f"frame {which} offset must not be null")
        try:
            n = int(cast_value(h.value, h.typ, INT8))
        except SqlError:
            raise SqlError(DATATYPE_MISMATCH, f"argument of ROWS must be type bigint, not type {h.typ.pg_format()}") from None
        if n < 0:
            raise SqlError("22013", f"frame {which} offset must not be negative")
        return (side, n)

    def _scalar(self, e: exp.Expression, scope: Scope) -> HirScalar:
        if isinstance(e, exp.Paren):
            return self.scalar(e.this, scope)
        if isinstance(e, exp.Column):
            if isinstance(e.this, exp.Star):
                raise unsupported("* in this position")
            return self._column(e, scope)
        if isinstance(e, exp.Literal):
            return _literal(e)
        if isinstance(e, exp.Null):
            return Literal(None, UNKNOWN)
        if isinstance(e, exp.Boolean):
            return Literal(bool(e.this), BOOL)
        if isinstance(e, exp.Parameter) or isinstance(e, exp.Placeholder):
            n = int(e.this.this if isinstance(e.this, exp.Literal) else e.name)
            return Param(n, self.params.get(n, UNKNOWN))
        if type(e) in _BINARY and isinstance(e.expression, exp.Anonymous) and e.expression.name.upper() == "ALL" \
                and len(e.expression.expressions) == 1:
            return self._array_quantified(_BINARY[type(e)], self.scalar(e.this, scope), e.expression.expressions[0], scope, "all")
        if type(e) in _BINARY and isinstance(e.expression, (exp.Any, exp.All)):
            op = _BINARY[type(e)]
            q = e.expression.this
            quant = "any" if isinstance(e.expression, exp.Any) else "all"
            if isinstance(q, exp.Paren) and isinstance(q.this, (exp.Subquery, exp.Select)):
                q = q.this
            if not isinstance(q, (exp.Subquery, exp.Select)):
                return self._array_quantified(op, self.scalar(e.this, scope), q, scope, quant)
            return self._quantified(op, self.scalar(e.this, scope), q, scope, quant)
        if type(e) in _BINARY and (is_row(e.this) or is_row(e.expression)):
            return row_comparison(self, _BINARY[type(e)], e.this, e.expression, scope)
        if type(e) in _BINARY:
            op = _BINARY[type(e)]
            a = self.scalar(e.this, scope)
            b = self.scalar(e.expression, scope)
            if op in ("like", "ilike") and e.args.get("negate"):
                return CallUnary("not", self._binary(op, a, b), BOOL)
            return self._binary(op, a, b)
        if isinstance(e, exp.And) or isinstance(e, exp.Or):
            f = "and" if isinstance(e, exp.And) else "or"
            args = tuple(self.coerce_bool(self.scalar(x, scope), f.upper()) for x in _flatten(e, type(e)))
            return CallVariadic(f, args, BOOL)
        if isinstance(e, exp.Not):
            x = self.scalar(e.this, scope)
            x = self.coerce_bool(x, "NOT")
            return CallUnary("not", x, BOOL)
        if isinstance(e, exp.Neg):
            x = self.scalar(e.this, scope)
            if isinstance(x, Literal) and x.value is not None and x.typ.is_numeric:
                return _negate_literal(x)
            if x.typ.name == "unknown":
                x = self.coerce(x, NUMERIC)
            return CallUnary("neg", x, func.unary_op("neg", x.typ))
        if isinstance(e, exp.Is):
            x = self.scalar(e.this, scope)
            rhs = e.expression
            if isinstance(rhs, exp.Null):
                r: HirScalar = CallUnary("is_null", x, BOOL)
            elif isinstance(rhs, exp.Boolean):
                x = self.coerce_bool(x, "IS")
                r = CallUnary("is_true" if rhs.this else "is_false", x, BOOL)
            else:
                raise unsupported(f"IS {rhs.sql()}")
            return CallUnary("not", r, BOOL) if e.args.get("negate") else r
        if isinstance(e, (exp.NullSafeEQ, exp.NullSafeNEQ)):
            return self._not_distinct(e, scope)
        if isinstance(e, exp.Between):
            x = self.scalar(e.this, scope)
            lo = self.scalar(e.args["low"], scope)
            hi = self.scalar(e.args["high"], scope)
            res: HirScalar = CallVariadic("and", (self._binary("ge", x, lo), self._binary("le", x, hi)), BOOL)
            return CallUnary("not", res, BOOL) if e.args.get("negate") else res
        if isinstance(e, exp.In):
            if not e.expressions and e.args.get("query") is None and e.args.get("unnest") is None:
                raise SqlError(SYNTAX_ERROR, 'syntax error at or near ")"')
            if e.args.get("unnest") is not None:
                raise unsupported("IN (UNNEST ...)")
            if e.args.get("query") is not None:
                x = self.scalar(e.this, scope)
                if self._semijoin_ok and not e.args.get("negate"):
                    return self._semijoin(x, e.args["query"], scope)
                res = self._quantified("eq", x, e.args["query"], scope, "any")
                return CallUnary("not", res, BOOL) if e.args.get("negate") else res
            x = self.scalar(e.this, scope)
            elems = [self.scalar(v, scope) for v in e.expressions]
            t = func.unify([x.typ] + [v.typ for v in elems], "IN")
            xc = self.coerce(x, t)
            ors = tuple(self._binary("eq", xc, self.coerce(v, t)) for v in elems)
            res = ors[0] if len(ors) == 1 else CallVariadic("or", ors, BOOL)
            return CallUnary("not", res, BOOL) if e.args.get("negate") else res
        if isinstance(e, exp.SimilarTo) or isinstance(e, exp.Escape) and isinstance(e.this, exp.SimilarTo):
            return self._similar_to(e, scope)
        if isinstance(e, exp.Case):
            return self._case(e, scope)
        if isinstance(e, exp.If):
            c = self.coerce_bool(self.scalar(e.this, scope), "CASE")
            a = self.scalar(e.args["true"], scope)
            b = self.scalar(e.args["false"], scope) if e.args.get("false") is not None else Literal(None, UNKNOWN)
            t = func.unify([a.typ, b.typ], "CASE")
            return If(c, self.coerce(a, t), self.coerce(b, t), t)
        if isinstance(e, exp.Coalesce):
            operands = [self.scalar(x, scope) for x in [e.this, *e.expressions]]
            t = func.unify([a.typ for a in operands], "COALESCE")
            return CallVariadic("coalesce", tuple(self.coerce(a, t) for a in operands), t)
        if isinstance(e, exp.Nullif):
            a = self.scalar(e.this, scope)
            b = self.scalar(e.expression, scope)
            t = func.unify([a.typ, b.typ], "NULLIF")
            ac = self.coerce(a, t)
            return If(self._binary("eq", ac, self.coerce(b, t)), Literal(None, t), ac, t)
        if isinstance(e, (exp.Cast, exp.TryCast)):
            t = sql_type_of(e.args["to"])
            if isinstance(e.this, exp.Array) and not e.this.expressions:
                if not func.is_array(t):
                    raise SqlError("42846", f"cannot cast type {UNKNOWN.pg_format()}[] to {t.pg_format()}")
                return Literal([], t)
            x = self.scalar(e.this, scope)
            return self.coerce(x, t, explicit=True)
        if isinstance(e, exp.Array):
            return self._array(e, scope)
        if isinstance(e, exp.Bracket):
            return self._subscript(e, scope)
        if isinstance(e, exp.Interval):
            text = e.this.this if isinstance(e.this, exp.Literal) else None
            if text is None:
                raise unsupported("non-literal INTERVAL")
            typ = SqlType("interval", datetime_typmods.qualifier_typmod(e.args.get("unit")))
            return self.coerce(Literal(text, UNKNOWN), typ, explicit=True)
        if isinstance(e, exp.Exists):
            bq = self._subquery(e.this, scope)
            return Exists(self._finish_nested(bq), BOOL)
        if isinstance(e, exp.Subquery) or isinstance(e, exp.Select):
            return self._scalar_subquery(e, scope)
        if type(e) in _JSONB_NODES:
            return self._jsonb_operator(e, scope)
        if _is_agg(e):
            where = "WHERE" if self._agg is None else "this context"
            raise SqlError(GROUPING_ERROR, f"aggregate functions are not allowed in {where}")
        if isinstance(e, exp.Func):
            return self._function(e, scope)
        if isinstance(e, exp.IntDiv):
            a, b = self.scalar(e.this, scope), self.scalar(e.expression, scope)
            arg_types, rtype = func.function_type("intdiv", [a.typ, b.typ])
            return CallBinary("intdiv", self.coerce(a, arg_types[0]), self.coerce(b, arg_types[1]), rtype)
        if isinstance(e, (exp.Unnest, exp.Explode)):
            raise unsupported("set-returning functions in the select list (use unnest in FROM)")
        if isinstance(e, exp.HexString):
            return Literal(bytes.fromhex(e.this), SqlType("bytea"))
        if isinstance(e, exp.WithinGroup):
            raise unsupported(f"ordered-set aggregate {pg_function_name(e.this)}(...) WITHIN GROUP")
        raise unsupported(f"expression {e.key.upper()}")

    def _array(self, e: exp.Array, scope: Scope) -> HirScalar:
        """ARRAY[x, ...]: the elements' common type; all-literal arrays fold to a literal."""
        elems = [self.scalar(x, scope) for x in e.expressions]
        if not elems:
            raise SqlError("42P18", "cannot determine type of empty array",
                           hint="Explicitly cast to the desired type, for example ARRAY[]::integer[].")
        et = func.unify([x.typ for x in elems], "ARRAY")
        t = func.array_of(et)
        coerced = tuple(self.coerce(x, et) for x in elems)
        if all(isinstance(x, Literal) for x in coerced):
            return Literal([cast(Literal, x).value for x in coerced], t)
        return CallVariadic("array_create", coerced, t)

    def _subscript(self, e: exp.Bracket, scope: Scope) -> HirScalar:
        """a[i] (1-based; NULL out of range). sqlglot stores literal subscripts 0-based."""
        arr = self.scalar(e.this, scope)
        if not func.is_array(arr.typ):
            raise SqlError(DATATYPE_MISMATCH, f"cannot subscript type {arr.typ.pg_format()} because it does not support subscripting")
        if len(e.expressions) != 1 or isinstance(e.expressions[0], exp.Slice):
            raise unsupported("array slices and multi-dimensional subscripts")
        ix = e.expressions[0]
        if isinstance(ix, exp.Literal) and not ix.is_string:
            i: HirScalar = Literal(int(ix.this) + 1, INT4)
        else:
            i = self.scalar(ix, scope)
        if not (i.typ.name in ("int2", "int4", "int8", "unknown") or i.typ.is_string):
            raise SqlError(DATATYPE_MISMATCH, f"array subscript must have type integer, not {i.typ.pg_format()}")
        elem = arr.typ.element
        assert elem is not None
        return CallBinary("array_index", arr, self.coerce(i, INT4, explicit=True), elem)

    def _array_quantified(self, op: str, lhs: HirScalar, arr_e: exp.Expression, scope: Scope, quantifier: str) -> HirScalar:
        """x op ANY(array) / x op ALL(array), with SQL's three-valued logic over the elements."""
        arr = self.scalar(arr_e, scope)
        if arr.typ.name == "unknown":
            base = lhs.typ if lhs.typ.name != "unknown" else TEXT
            arr = self.coerce(arr, func.array_of(base))
        if not func.is_array(arr.typ):
            raise SqlError(DATATYPE_MISMATCH, f"op {quantifier.upper()}/ALL (array) requires array on right side")
        elem = arr.typ.element
        assert elem is not None
        ta, tb, _ = func.binary_op(op, lhs.typ, elem)
        return CallBinary(f"{op}_{quantifier}", self.coerce(lhs, ta), self.coerce(arr, func.array_of(tb)), BOOL)

    def _case(self, e: exp.Case, scope: Scope) -> HirScalar:
        operand = self.scalar(e.this, scope) if e.this is not None else None
        conds: list[HirScalar] = []
        results: list[HirScalar] = []
        for w in e.args.get("ifs") or []:
            if operand is not None:
                conds.append(self._binary("eq", operand, self.scalar(w.this, scope)))
            else:
                conds.append(self.coerce_bool(self.scalar(w.this, scope), "CASE"))
            results.append(self.scalar(w.args["true"], scope))
        default = self.scalar(e.args["default"], scope) if e.args.get("default") is not None else Literal(None, UNKNOWN)
        t = func.unify([r.typ for r in results] + [default.typ], "CASE")
        out = self.coerce(default, t)
        for c, r in reversed(list(zip(conds, results, strict=True))):
            out = If(c, self.coerce(r, t), out, t)
        return out

    def _function(self, e: exp.Func, scope: Scope) -> HirScalar:
        written = pg_function_name(e)
        name = func_names.canonical(written)
        if isinstance(e, exp.Anonymous):
            raw_args = list(e.expressions)
        elif isinstance(e, exp.ArrayPrepend):
            raw_args = [e.expression, e.this]  # sqlglot keeps the array first
        elif isinstance(e, exp.Extract):
            raw_args = [_unit_literal(e.this), e.expression]
        elif isinstance(e, exp.TimestampTrunc):
            unit = e.args.get("unit")
            if e.args.get("zone") is not None or unit is None:
                raise unsupported("date_trunc with a time zone")
            raw_args = [_unit_literal(unit), e.this]
        elif isinstance(e, exp.Trim):
            if e.args.get("position") or e.args.get("collation"):
                pos = (e.args.get("position") or "BOTH").upper()
                name = {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(pos, "btrim")
            raw_args = [e.this] + ([e.expression] if e.expression is not None else [])
        elif isinstance(e, exp.Pad):  # sqlglot parses lpad/rpad as one Pad node
            name = "lpad" if e.args.get("is_left") else "rpad"
            raw_args = [e.this, e.expression] + ([e.args["fill_pattern"]] if e.args.get("fill_pattern") is not None else [])
        else:
            raw_args = []
            for k in type(e).arg_types:
                v = e.args.get(k)
                if v is None or isinstance(v, bool):
                    continue
                if isinstance(v, list):
                    raw_args.extend(v)
                elif isinstance(v, exp.Expression):
                    raw_args.append(v)
        if name in ("currenttimestamp", "current_timestamp", "now", "transaction_timestamp", "statement_timestamp"):
            return CallVariadic("now", (), SqlType("timestamptz"))
        if name in ("currentdate", "current_date"):
            return CallUnary("cast", CallVariadic("now", (), SqlType("timestamptz")), SqlType("date"))
        if name in ("current_time", "currenttime", "localtimestamp", "localtime", "clock_timestamp"):
            raise unsupported(f"{name}()")
        if isinstance(e, exp.Anonymous) and srf.is_srf_call(e):
            raise srf.not_allowed(written)
        if name in _KNOWN_UNSUPPORTED_FUNCTIONS:
            raise unsupported(f"function {name}")
        args = [self.scalar(a, scope) for a in raw_args]
        if name in ("jsonb_build_object", "jsonb_build_array"):
            return self._jsonb_build(name, args)
        if name == "to_jsonb" and len(args) == 1:
            return self._to_jsonb(args[0])
        if name == "row" and isinstance(e, exp.Anonymous):
            # ROW(a, b, ...): an anonymous record (unknown literals are text, as in Postgres)
            fields = tuple(self.coerce(a, TEXT) if a.typ.name == "unknown" else a for a in args)
            return CallVariadic("row", fields, record_type(tuple(f.typ for f in fields)))
        if written == "log" and len(args) == 2:
            name = "log"  # log(b, x)
        if name == "age" and len(args) == 1:
            # age(x) = age(today's midnight, x)
            today: HirScalar = CallUnary("cast", CallVariadic("now", (), SqlType("timestamptz")), SqlType("date"))
            args.insert(0, CallUnary("cast", today, SqlType("timestamptz" if args[0].typ.name == "timestamptz" else "timestamp")))
        arg_types, rtype = func_names.as_written(written, func.function_type, name, [a.typ for a in args])
        cargs = tuple(self.coerce(a, t) for a, t in zip(args, arg_types, strict=True))
        if name in func_names.LITERAL_ARGUMENT_FUNCTIONS and any(isinstance(a, Literal) and a.value is None for a in cargs):
            return Literal(None, rtype)  # strict: a NULL unit / pattern / format makes the call NULL
        if name in ("regexp_replace", "regexp_match"):
            lits = cargs[1:]
            if not all(isinstance(x, Literal) and x.value is not None for x in lits):
                raise unsupported(f"{name} with a pattern, replacement or flags that is not a literal")
            func.regex_call(name, *[x.value for x in lits])  # type: ignore[union-attr]
        if name in ("extract", "date_part", "date_trunc"):
            if not isinstance(cargs[0], Literal) or cargs[0].value is None:
                raise unsupported(f"{name} with a unit that is not a literal")
            cargs = (Literal(func.datetime_unit(name, cargs[0].value, cargs[1].typ), TEXT), cargs[1])
        if name == "to_char":
            if not isinstance(cargs[1], Literal) or cargs[1].value is None:
                raise unsupported("to_char with a pattern that is not a literal")
            func.to_char_pattern(cargs[1].value)
        if name in _VARIADIC_ONLY:
            return CallVariadic(name, cargs, rtype)
        if len(cargs) == 1:
            return CallUnary(name, cargs[0], rtype)
        if len(cargs) == 2:
            return CallBinary(name, cargs[0], cargs[1], rtype)
        return CallVariadic(name, cargs, rtype)

    def _similar_to(self, e: exp.Expression, scope: Scope) -> HirScalar:
        """x SIMILAR TO p [ESCAPE c]: a full match of p's regex (p and c literals)."""
        st, esc_e = (e.this, e.expression) if isinstance(e, exp.Escape) else (e, None)
        x = self.coerce(self.scalar(st.this, scope), TEXT)
        pat = self.coerce(self.scalar(st.expression, scope), TEXT)
        esc = self.coerce(self.scalar(esc_e, scope), TEXT) if esc_e is not None else Literal("\\", TEXT)
        if not (x.typ.is_string and isinstance(pat, Literal) and isinstance(esc, Literal)):
            raise unsupported("SIMILAR TO with a pattern or escape that is not a literal")
        if pat.value is None or (esc_e is not None and esc.value is None):
            return Literal(None, BOOL)
        regex = similar_to_regex(pat.value, esc.value or None)
        return CallBinary("regex_full_match", x, Literal(regex, TEXT), BOOL)

    def _not_distinct(self, e: exp.NullSafeEQ | exp.NullSafeNEQ, scope: Scope) -> HirScalar:
        """a IS NOT DISTINCT FROM b = coalesce(a = b, a IS NULL AND b IS NULL) (never NULL:
        a = b is NULL exactly when an operand is); IS DISTINCT FROM is its negation."""
        if is_row(e.this) or is_row(e.expression):
            return row_not_distinct(self, e.this, e.expression, scope, isinstance(e, exp.NullSafeNEQ))
        same = self._same(self.scalar(e.this, scope), self.scalar(e.expression, scope))
        return CallUnary("not", same, BOOL) if isinstance(e, exp.NullSafeNEQ) else same

    def _same(self, a: HirScalar, b: HirScalar) -> HirScalar:
        both_null = CallVariadic("and", (CallUnary("is_null", a, BOOL), CallUnary("is_null", b, BOOL)), BOOL)
        return CallVariadic("coalesce", (self._binary("eq", a, b), both_null), BOOL)

    def _binary(self, op: str, a: HirScalar, b: HirScalar) -> HirScalar:
        ta, tb, tr = func.binary_op(op, a.typ, b.typ)
        if ta.name == "jsonb" and op in ("array_contains", "array_contained"):
            # jsonb @> jsonb / jsonb <@ jsonb
            big, small = (a, b) if op == "array_contains" else (b, a)
            return CallBinary("jsonb_contains", self.coerce(big, JSONB), self.coerce(small, JSONB), BOOL)
        return CallBinary(op, self.coerce(a, ta), self.coerce(b, tb), tr)

    def _jsonb_operator(self, e: exp.Expression, scope: Scope) -> HirScalar:
        """->, ->>, #>, #>>, ?, ?|, ?& (the left operand is jsonb; typing in sql.func)."""
        a = self.scalar(e.this, scope)
        b = self.scalar(e.expression, scope)
        op = _JSONB_NODES[type(e)]
        ta, tb, tr, name = func.jsonb_operator(op, a.typ, b.typ)
        return CallBinary(name, self.coerce(a, ta), self.coerce(b, tb), tr)

    def _to_jsonb(self, h: HirScalar) -> HirScalar:
        """to_jsonb(h) for the scalar types whose jsonb form we render exactly; literals fold."""
        if h.typ.name == "unknown":
            h = self.coerce(h, TEXT)
        if isinstance(h, Literal):
            return Literal(jsonb.literal_to_jsonb(h.value, h.typ), JSONB)
        func.to_jsonb_check(h.typ)
        if h.typ.name == "jsonb":
            return h
        return CallUnary("to_jsonb", h, JSONB)

    def _jsonb_key(self, h: HirScalar) -> HirScalar:
        """An object key: text (other types through their text form)."""
        if h.typ.name in ("int2", "int4", "int8") or h.typ.is_string or h.typ.name == "unknown":
            return self.coerce(h, TEXT, explicit=True)
        raise unsupported(f"jsonb object keys of type {h.typ.pg_format()}")

    def _jsonb_build(self, name: str, args: list[HirScalar]) -> HirScalar:
        """jsonb_build_object(k, v, ...) / jsonb_build_array(v, ...)."""
        if name == "jsonb_build_array":
            return CallVariadic("jsonb_build_array", tuple(self._to_jsonb(a) for a in args), JSONB)
        if len(args) % 2:
            raise SqlError("22023", "argument list must have even number of elements",
                           hint="The arguments of jsonb_build_object() must consist of alternating keys and values.")
        out: list[HirScalar] = []
        for i in range(0, len(args), 2):
            k = self._jsonb_key(args[i])
            if isinstance(k, Literal) and k.value is None:
                raise SqlError("22023", f"argument {i + 1}: key must not be null")
            out += [k, self._to_jsonb(args[i + 1])]
        return CallVariadic("jsonb_build_object", tuple(out), JSONB)

    def coerce_bool(self, h: HirScalar, what: str) -> HirScalar:
        if h.typ.name == "bool":
            return h
        if h.typ.name == "unknown":
            return self.coerce(h, BOOL)
        raise SqlError(DATATYPE_MISMATCH, f"argument of {what} must be type boolean, not type {h.typ.pg_format()}")

    def coerce(self, h: HirScalar, t: SqlType, explicit: bool = False) -> HirScalar:
        """Cast h to t: literals fold at plan time, parameters adopt the type."""
        if h.typ == t:
            return h
        if isinstance(h, Param) and h.typ.name == "unknown":
            self.params[h.n] = t
            return Param(h.n, t)
        if isinstance(h, Literal):
            if h.value is None:
                return Literal(None, t)
            if h.typ.is_string or h.typ.name == "unknown":
                if (now := special_now(str(h.value), t)) is not None:
                    return now
            return Literal(cast_value(h.value, h.typ, t, explicit), t)
        if h.typ.name == t.name and t.typmod == -1:
            return h
        if t.is_string and (h.typ.name in ("interval", "time") or func.is_array(h.typ) and h.typ.element.name in ("interval", "time")):  # type: ignore[union-attr]
            raise unsupported(f"casting {h.typ.pg_format()} values to text")
        if func.is_array(t) and not func.is_array(h.typ):
            if h.typ.is_string:
                raise unsupported(f"casting {h.typ.pg_format()} values to {t.pg_format()}")
            raise SqlError("42846", f"cannot cast type {h.typ.pg_format()} to {t.pg_format()}")
        func.check_cast(h.typ, t)
        return CallUnary("cast", h, t)

    def assignment_cast(self, h: HirScalar, t: SqlType, column: str) -> HirScalar:
        """INSERT/UPDATE: implicit assignment casts only (numeric <-> numeric, to text...)."""
        src = h.typ
        if src.name in ("unknown",) or src == t or isinstance(h, Param) and src.name == "unknown":
            return self.coerce(h, t)
        if not assignment_castable(src, t):
            raise SqlError(DATATYPE_MISMATCH, f'column "{column}" is of type {t.pg_format()} but expression is of type {src.pg_format()}',
                           hint="You will need to rewrite or cast the expression.")
        return self.coerce(h, t, explicit=True)


def assignment_castable(src: SqlType, t: SqlType) -> bool:
    """Is there an implicit assignment cast src -> t (numeric <-> numeric, to text, ...)?"""
    return (src == t or (src.is_numeric and t.is_numeric) or (src.is_string and t.is_string) or t.is_string
            or (src.name in ("date", "timestamp", "timestamptz") and t.name in ("date", "timestamp", "timestamptz"))
            or src.name == t.name)


def _unit_literal(unit: exp.Expression) -> exp.Expression:
    """The datetime unit of EXTRACT / date_trunc as a string literal (a keyword or a string);
    0A000 for a computed unit."""
    if isinstance(unit, exp.Var):
        return exp.Literal.string(unit.name)
    if isinstance(unit, exp.Literal) and unit.is_string:
        return unit
    raise unsupported("a datetime unit that is not a literal")


# jsonb table functions: name -> (column names, column types)
JSONB_TABLE_FUNCTIONS: dict[str, tuple[tuple[str, ...], tuple[SqlType, ...]]] = {
    "jsonb_array_elements": (("value",), (JSONB,)), "jsonb_array_elements_text": (("value",), (TEXT,)),
    "jsonb_each": (("key", "value"), (TEXT, JSONB)), "jsonb_each_text": (("key", "value"), (TEXT, TEXT)),
    "jsonb_object_keys": (("jsonb_object_keys",), (TEXT,)),
}

_JSONB_NODES: dict[type, str] = {
    exp.JSONExtract: "->", exp.JSONExtractScalar: "->>", exp.JSONBExtract: "#>", exp.JSONBExtractScalar: "#>>",
    exp.JSONBContainsTopKey: "?", exp.JSONBContainsAnyTopKeys: "?|", exp.JSONBContainsAllTopKeys: "?&",
}


def _flatten(e: exp.Expression, cls: type[exp.Expression]) -> list[exp.Expression]:
    out: list[exp.Expression] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, cls):
            stack.append(x.expression)
            stack.append(x.this)
        elif isinstance(x, exp.Paren) and isinstance(x.this, cls):
            stack.append(x.this)
        else:
            out.append(x)
    return out


_AGG_CLASSES: dict[type, str] = {
    exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max",
    exp.LogicalOr: "bool_or", exp.LogicalAnd: "bool_and", exp.GroupConcat: "string_agg", exp.ArrayAgg: "array_agg",
    exp.Stddev: "stddev_samp", exp.StddevSamp: "stddev_samp", exp.StddevPop: "stddev_pop", exp.Variance: "var_samp",
    exp.VariancePop: "var_pop", exp.JSONBObjectAgg: "jsonb_object_agg",
}


def _is_agg(e: exp.Expression) -> bool:
    if isinstance(e, exp.Anonymous):
        return e.name.lower() in _ANON_AGGS or e.name.lower() in _KNOWN_UNSUPPORTED_AGGS
    return type(e) in _AGG_CLASSES or isinstance(e, exp.AggFunc)


_KNOWN_UNSUPPORTED_AGGS = {"json_agg", "json_object_agg", "jsonb_agg", "jsonb_object_agg", "percentile_cont", "percentile_disc", "mode"}


_KNOWN_UNSUPPORTED_FUNCTIONS = {
    "jsonb_agg", "json_agg", "jsonb_object_agg", "json_build_object", "json_build_array", "to_json",
    "string_to_array", "unnest", "list_agg",
    "to_timestamp", "make_interval",
    "percentile_cont", "percentile_disc", "mode", "string_agg", "array_agg",
}

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
              "jsonb_object_agg": "jsonb_object_agg"}


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
    exp.FirstValue: "first_value", exp.LastValue: "last_value",
}
_WINDOW_AGGREGATES = {"sum", "count", "min", "max", "avg"}
_UNSUPPORTED_WINDOW_NAMES = {"percentrank": "percent_rank", "cumedist": "cume_dist", "nthvalue": "nth_value"}


def _refs_columns(h: HirScalar) -> bool:
    from sql.scalar import children

    if isinstance(h, Column):
        return True
    if isinstance(h, (Param, OuterColumn)):
        return False
    if isinstance(h, (Exists, Select)):
        from sql.lowering import free_levels

        return 1 in free_levels(h.rel)
    return any(_refs_columns(c) for c in children(h))  # type: ignore[arg-type]


def _literal(e: exp.Literal) -> Literal:
    if e.is_string:
        return Literal(e.this, UNKNOWN)
    text = e.this
    if all(c.isdigit() for c in text):
        v = int(text)
        if v <= 2**31 - 1:
            return Literal(v, INT4)
        if v <= 2**63 - 1:
            return Literal(v, INT8)
        return Literal(Decimal(text), NUMERIC)
    return Literal(Decimal(text), NUMERIC)


def _negate_literal(x: Literal) -> Literal:
    v = -x.value
    if x.typ == INT4 and v == -(2**31):
        return Literal(v, INT4)
    if x.typ == INT8 and v < -(2**31) and v >= -(2**31) and False:
        return Literal(v, INT4)
    if x.typ == INT8 and v == -(2**31):
        return Literal(v, INT4)
    if x.typ == NUMERIC and x.value == 2**63:
        return Literal(-(2**63), INT8)
    return Literal(v, x.typ)


def _output_name(e: exp.Expression) -> str:
    if isinstance(e, exp.Alias):
        return e.alias
    if isinstance(e, exp.Column):
        return e.name
    if isinstance(e, (exp.Subquery, exp.Select, exp.Union, exp.Except, exp.Intersect, exp.Values)):
        return _query_output_name(e)
    if isinstance(e, exp.Exists):
        return "exists"
    if isinstance(e, exp.Cast):
        inner = e.this
        if isinstance(inner, exp.Column):
            return inner.name
        dt = sql_type_of(e.args["to"])
        return {"int4": "int4", "int8": "int8", "text": "text", "numeric": "numeric", "float8": "float8", "bool": "bool",
                "date": "date", "varchar": "varchar", "bpchar": "bpchar"}.get(dt.name, dt.name) if not isinstance(inner, exp.Cast) else _output_name(inner)
    if isinstance(e, exp.Paren):
        return _output_name(e.this)
    if isinstance(e, exp.Window):
        call = e.this.this if isinstance(e.this, exp.Filter) else e.this
        return _output_name(call)
    if isinstance(e, exp.Filter):
        return _output_name(e.this)
    if isinstance(e, exp.Case):
        return "case"
    if isinstance(e, exp.Array):
        return "array"
    if isinstance(e, exp.Bracket):
        return _output_name(e.this)
    if isinstance(e, exp.Coalesce):
        return "coalesce"
    if isinstance(e, exp.Nullif):
        return "nullif"
    if isinstance(e, exp.Func):
        return _SQL_VALUE_FUNCTION_NAMES.get(type(e)) or pg_function_name(e)
    return "?column?"


def _query_output_name(q: exp.Expression) -> str:
    """A scalar subquery is named by its query's first output column (Postgres)."""
    while isinstance(q, (exp.Subquery, exp.Paren)):
        q = q.this
    if isinstance(q, (exp.Union, exp.Except, exp.Intersect)):
        return _query_output_name(q.this)
    if isinstance(q, exp.Values):
        return "column1"
    if isinstance(q, exp.Select) and q.expressions and not isinstance(q.expressions[0], exp.Star) \
            and not (isinstance(q.expressions[0], exp.Column) and isinstance(q.expressions[0].this, exp.Star)):
        return _output_name(q.expressions[0])
    return "?column?"


# SQL value functions (no parentheses) are named by their keyword, as Postgres 10+ does
_SQL_VALUE_FUNCTION_NAMES: dict[type, str] = {
    exp.CurrentDate: "current_date", exp.CurrentTimestamp: "current_timestamp", exp.CurrentTime: "current_time",
    exp.Localtimestamp: "localtimestamp", exp.Localtime: "localtime",
}


def _origin(e: exp.Expression | None, h: HirScalar, scope: Scope) -> tuple[int, int]:
    if isinstance(e, exp.Column) and isinstance(h, Column) and h.index < len(scope.columns):
        c = scope.columns[h.index]
        return (c.table_oid, c.attnum)
    return (0, 0)


def param_literal(value: Any, t: SqlType) -> Literal:
    return Literal(value, t)


def shift_outer(h: HirScalar) -> HirScalar:
    """Move an expression one scope inwards: #i -> outer(1, i), outer(l, i) -> outer(l+1, i)."""
    match h:
        case Column(index=i, typ=t):
            return OuterColumn(1, i, t)
        case OuterColumn(level=lv, index=i, typ=t):
            return OuterColumn(lv + 1, i, t)
        case CallUnary(func=f, expr=x, typ=t):
            return CallUnary(f, shift_outer(x), t)
        case CallBinary(func=f, expr1=a, expr2=b, typ=t):
            return CallBinary(f, shift_outer(a), shift_outer(b), t)
        case CallVariadic(func=f, exprs=xs, typ=t):
            return CallVariadic(f, tuple(shift_outer(x) for x in xs), t)
        case If(cond=c, then=a, els=b, typ=t):
            return If(shift_outer(c), shift_outer(a), shift_outer(b), t)
        case Exists() | Select():
            raise unsupported("a subquery on the left of IN/ANY/ALL")
        case _:
            return h
