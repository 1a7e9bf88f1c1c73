"""Name resolution and typing: sqlglot AST -> HIR (sql.hir).

A `Binder` binds one statement against a `CatalogReader`. Parameters ($n) get their types
from the client or are inferred from context (unknown-typed literal rules).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, cast

from sqlglot import exp

from sql import func, srf
from sql.bind_aggregates import (
    _AggCtx,
    _has_agg,
    _is_agg,
    _local_aggs,
    _OuterAggregate,
    agg_level,
    aggregate,
    grouped_definition,
    grouping_call,
    key_or_error,
    outer_aggregate,
    star_in_agg,
)
from sql.bind_cte import bind_with, bind_wmr
from sql.bind_from import bind_from
from sql.bind_grouping import bind_group_by
from sql.bind_jsonb import jsonb_binary
from sql.bind_limit import row_count, with_ties
from sql.bind_names import _output_name, sql_type_of  # noqa: F401 (sql_type_of re-exported)
from sql.bind_rows import is_record, record_comparison
from sql.bind_scalar import _flatten, assignment_castable, scalar_expr
from sql.bind_windows import (
    _NO_WINDOWS,
    _WINDOW_CLAUSE,
    WINDOWING_ERROR,
    _has_window,
    _place_windows,
    _WinCtx,
    bind_window,
)
from sql.datetime_special import special_now
from sql.errors import (
    AMBIGUOUS_COLUMN,
    DATATYPE_MISMATCH,
    GROUPING_ERROR,
    SYNTAX_ERROR,
    UNDEFINED_COLUMN,
    UNDEFINED_TABLE,
    SqlError,
    unsupported,
)
from sql.grouping_sets import grouping_sets_rel
from sql.hir import (
    Exists,
    Finishing,
    HConstant,
    HDistinct,
    HFilter,
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
    hir_types,
)
from sql.literal import cast_value
from sql.scalar import (
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    ColumnOrder,
    Literal,
)
from sql.scope import BoundQuery, CatalogReader, ItemRef, Scope, ScopeColumn  # noqa: F401 (re-exported)
from sql.types import (
    BOOL,
    INT8,
    JSONB,
    TEXT,
    SqlType,
)
from sql.wmr_syntax import WMR_META


def _has_empty_record(t: SqlType) -> bool:
    """A record type with no fields, at any depth (Spark cannot ship one to the client; a
    record whose fields are unknown has none either, hence Binder.empty_row)."""
    if t.name == "record":
        return not t.fields or any(_has_empty_record(f) for f in t.fields)
    return t.element is not None and _has_empty_record(t.element)


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
        # INSERT ... VALUES: the target columns' (type, name), which every row's values are
        # assignment-cast to one by one (PostgreSQL's transformInsertRow), not unified
        self.values_hint: list[tuple[SqlType, str]] | None = None
        # ids of the catalog items the statement reads (directly; views count once)
        self.dependencies: list[str] = []
        # the statement wrote ROW() (a record of no fields; see _has_empty_record)
        self.empty_row = False
        # enclosing scopes of the query being bound, innermost last (for correlation)
        self.outer: list[Scope] = []
        # self.outer[i] of a query that aggregates: its aggregate context (see bind_aggregates.outer_aggregate)
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
            b = self._bind_query(q, top)
        finally:
            self.ctes = saved
        if top and self.empty_row and any(_has_empty_record(t) for t in b.types):
            raise unsupported("a record with no fields (ROW()) in a query result")
        return b

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
            agg_level(self, a, scope) == 0 for _, e, _ in items if e is not None for a in _local_aggs(e)
        )
        select_scope = scope
        if has_agg:
            with self._windows(None, (WINDOWING_ERROR, "window functions are not allowed in GROUP BY")):
                gb = bind_group_by(self, group, scope, items)
            keys = gb.keys
            self._agg = _AggCtx(scope, keys, sets=gb.sets)
            try:
                with self._windows(win):
                    exprs = [Column(gb.ties[j], keys[gb.ties[j]].typ) if j in gb.ties
                             else star_in_agg(self, cast(int, i), scope) if e is None else self.scalar(e, scope)
                             for j, (_, e, i) in enumerate(items)]
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
            if gb.sets is None:
                rel = HReduce(rel, tuple(positions), tuple(agg.aggregates))
            else:
                rel = grouping_sets_rel(rel, tuple(positions), tuple(k.typ for k in keys), gb.sets, tuple(agg.aggregates))
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
        rel, fin = self._finish_rows(rel, tuple(orders), s, tuple(range(n)))
        bq = BoundQuery(rel, fin, names, types, origins)
        return bq if top else bq

    def _apply_modifiers(self, b: BoundQuery, q: exp.Expression, top: bool) -> BoundQuery:
        """ORDER BY/LIMIT/OFFSET attached to a parenthesized query."""
        order = q.args.get("order")
        if not order and q.args.get("limit") is None and q.args.get("offset") is None:
            return b
        rel = self._finish_nested(b)
        orders = []
        if order:
            for o in order.expressions:
                idx = self._output_ref(o.this, b.names)
                orders.append(ColumnOrder(idx, bool(o.args.get("desc")), not o.args.get("nulls_first")))
        rel, fin = self._finish_rows(rel, tuple(orders), q, tuple(range(len(b.types))))
        return BoundQuery(rel, fin, b.names, b.types, b.origins)

    def _finish_rows(self, rel: HirRel, orders: tuple[ColumnOrder, ...], q: exp.Expression,
                     project: tuple[int, ...]) -> tuple[HirRel, Finishing]:
        """The Finishing of q's ORDER BY (`orders`, over rel's columns) and row count
        clauses; FETCH FIRST .. WITH TIES filters rel instead (see with_ties)."""
        rc = row_count(self, q)
        if rc.with_ties and rc.limit is not None:
            return with_ties(rel, orders, rc.limit, rc.offset), Finishing(orders, None, 0, project)
        return rel, Finishing(orders, rc.limit, rc.offset, project)

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

    def const_int(self, e: exp.Expression, what: str) -> int | None:
        """The value of a LIMIT / OFFSET / FETCH count: a constant bigint (None: NULL)."""
        with self._windows(None, (WINDOWING_ERROR, f"window functions are not allowed in {what}")):
            h = self.scalar(e, Scope())
        if not _is_constant(h):
            raise unsupported(f"non-constant {what}")
        try:
            v = _constant_value(h)
            if v is None:
                return None
            v = int(cast_value(v, h.typ, INT8))
        except SqlError:
            raise SqlError(DATATYPE_MISMATCH, f"argument of {what} must be type bigint, not type {h.typ.pg_format()}") from None
        if v < 0:
            raise SqlError("2201W" if what == "LIMIT" else "2201X", f"{what} must not be negative")
        return v

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
        orders = []
        if order:
            for o in order.expressions:
                idx = self._output_ref(o.this, names)
                desc = bool(o.args.get("desc"))
                nf = o.args.get("nulls_first")
                orders.append(ColumnOrder(idx, desc, not nf if nf is not None else not desc))
        rel, fin = self._finish_rows(rel, tuple(orders), q, base.finishing.project)
        return BoundQuery(rel, fin, names, types)

    def derived_rel(self, b: BoundQuery) -> tuple[HirRel, tuple[SqlType, ...]]:
        """A FROM subquery's or WITH query's rows: its unknown-typed (literal) output columns
        resolve as text, as in Postgres, so the outer query sees text."""
        types = tuple(TEXT if t.name == "unknown" else t for t in b.types)
        rel = self._finish_nested(b)
        if types == b.types:
            return rel, types
        match rel:
            case HProject(input=HMap(input=inp, scalars=ss), outputs=outs):
                # a literal column becomes a text literal (not a cast of the unknown one)
                base = len(hir_types(inp))
                lits = {o - base for o in outs if o >= base and isinstance(ss[o - base], Literal) and ss[o - base].typ.name == "unknown"}
                rel = HProject(HMap(inp, tuple(self.coerce(x, TEXT) if i in lits else x for i, x in enumerate(ss))), outs)
        return self._cast_rel(rel, hir_types(rel), types), types

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
        targets = hint or []
        types = tuple(targets[i][0] if i < len(targets) else func.unify([r[i].typ for r in bound], "VALUES")
                      for i in range(width))
        coerced = [[self.assignment_cast(e, *targets[i]) if i < len(targets) else self.coerce(e, types[i])
                    for i, e in enumerate(r)] for r in bound]
        names = tuple(f"column{i + 1}" for i in range(width))
        if all(isinstance(e, Literal) for r in coerced for e in r):
            return HConstant(tuple(tuple(cast(Literal, e).value for e in r) for r in coerced), types), names, types
        unit = HConstant(((),), ())
        parts = tuple(HMap(unit, tuple(r)) for r in coerced)
        return (parts[0] if len(parts) == 1 else HUnion(parts)), names, types

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
        """An expression: window functions and aggregates go to their query level's context
        (sql.bind_windows, sql.bind_aggregates), the other forms to sql.bind_scalar."""
        if isinstance(e, exp.Window):
            return bind_window(self, e, scope)
        if (_is_agg(e) or isinstance(e, exp.Filter) and _is_agg(e.this)) and (level := agg_level(self, e, scope)) > 0:
            return outer_aggregate(self, e, level)
        agg = self._agg
        if agg is not None:
            if isinstance(e, exp.Grouping):
                return grouping_call(self, e, agg, lambda i: Column(i, INT8))
            if _is_agg(e):
                return aggregate(self, e, agg, out_scope=scope)
            if isinstance(e, exp.Filter) and _is_agg(e.this):
                return aggregate(self, e.this, agg, e.expression.this, out_scope=scope)
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
                    return scalar_expr(self, e, scope)
                if h in agg.keys:
                    return Column(agg.keys.index(h), h.typ)
                if not _refs_columns(h):
                    # constants and outer references are the same for every row of a group
                    return h
                if isinstance(e, exp.Column):
                    c = agg.input_scope.columns[h.index] if isinstance(h, Column) else ScopeColumn(e.table or None, e.name, h.typ)
                    if c.defined_as is not None:
                        return grouped_definition(self, c.defined_as)
                    return key_or_error(self, h, c)
        return scalar_expr(self, e, scope)

    def _same(self, a: HirScalar, b: HirScalar) -> HirScalar:
        both_null = CallVariadic("and", (CallUnary("is_null", a, BOOL), CallUnary("is_null", b, BOOL)), BOOL)
        return CallVariadic("coalesce", (self._binary("eq", a, b), both_null), BOOL)

    def _binary(self, op: str, a: HirScalar, b: HirScalar) -> HirScalar:
        if op in ("eq", "ne", "lt", "le", "gt", "ge") and is_record(a) and is_record(b):
            return record_comparison(self, op, a, b)
        if (j := jsonb_binary(self, op, a, b)) is not None:
            return j
        ta, tb, tr = func.binary_op(op, a.typ, b.typ)
        if ta.name == "jsonb" and op in ("array_contains", "array_contained"):
            # jsonb @> jsonb / jsonb <@ jsonb
            big, small = (a, b) if op == "array_contains" else (b, a)
            return CallBinary("jsonb_contains", self.coerce(big, JSONB), self.coerce(small, JSONB), BOOL)
        return CallBinary(op, self.coerce(a, ta), self.coerce(b, tb), tr)

    def coerce_bool(self, h: HirScalar, what: str) -> HirScalar:
        if h.typ.name == "bool":
            return h
        if h.typ.name == "unknown":
            return self.coerce(h, BOOL)
        raise SqlError(DATATYPE_MISMATCH, f"argument of {what} must be type boolean, not type {h.typ.pg_format()}")

    def _session_setting(self, name: str) -> str | None:
        """A session variable the plan depends on, when the catalog reader has a session."""
        value = getattr(self.catalog, "session_value", None)
        try:
            return value(name) if value is not None else None
        except KeyError:
            return None

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
        element = h.typ.element.name if func.is_array(h.typ) else None  # type: ignore[union-attr]
        if t.is_string and "interval" in (h.typ.name, element) and (style := self._session_setting("intervalstyle")) not in (None, "postgres"):
            # rendered in IntervalStyle postgres (as Materialize, which has no other style)
            raise unsupported(f"casting interval values to text with IntervalStyle {style}")
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


_STRICT_ARITHMETIC = frozenset({"add", "sub", "mul", "div", "mod", "neg"})


def _is_constant(h: HirScalar) -> bool:
    """Literals, their casts, and arithmetic that has a NULL operand (hence is NULL)."""
    match h:
        case Literal():
            return True
        case CallUnary(func="cast", expr=x):
            return _is_constant(x)
        case CallUnary(func=f, expr=x) | CallBinary(func=f, expr1=x) if f in _STRICT_ARITHMETIC and _constant_null(h):
            return True
        case _:
            return False


def _constant_null(h: HirScalar) -> bool:
    """h is NULL whatever the row: a NULL literal, its cast, or strict arithmetic over one."""
    match h:
        case Literal(value=None):
            return True
        case CallUnary(func=f, expr=x) if f == "cast" or f in _STRICT_ARITHMETIC:
            return _constant_null(x)
        case CallBinary(func=f, expr1=x, expr2=y) if f in _STRICT_ARITHMETIC:
            return _constant_null(x) or _constant_null(y)
        case _:
            return False


def _constant_value(h: HirScalar) -> Any:
    """The value of an _is_constant scalar (None for NULL)."""
    if _constant_null(h):
        return None
    match h:
        case Literal(value=v):
            return v
        case CallUnary(func="cast", expr=x, typ=t):
            return cast_value(_constant_value(x), x.typ, t)
    raise unsupported("a non-constant row count")


def _refs_columns(h: HirScalar) -> bool:
    from sql.scalar import children

    if isinstance(h, Column):
        return True
    if isinstance(h, (Param, OuterColumn)):
        return False
    if isinstance(h, (Exists, Select)):
        from sql.hir_analysis import free_levels

        return 1 in free_levels(h.rel)
    return any(_refs_columns(c) for c in children(h))  # type: ignore[arg-type]


def _origin(e: exp.Expression | None, h: HirScalar, scope: Scope) -> tuple[int, int]:
    if isinstance(e, exp.Column) and isinstance(h, Column) and h.index < len(scope.columns):
        c = scope.columns[h.index]
        return (c.table_oid, c.attnum)
    return (0, 0)


def param_literal(value: Any, t: SqlType) -> Literal:
    return Literal(value, t)

