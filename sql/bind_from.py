"""FROM: tables, subqueries, VALUES and join trees (bound for a sql.bind.Binder)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from sqlglot import exp

from sql.errors import SYNTAX_ERROR, UNDEFINED_TABLE, SqlError, unsupported
from sql.hir import HConstant, HGet, HirRel, HJoin, hir_types
from sql.scalar import TRUE, CallVariadic, Column
from sql.scope import Scope, ScopeColumn
from sql.types import BOOL

if TYPE_CHECKING:
    from sql.bind import Binder


def bind_from(binder: Binder, s: exp.Select) -> tuple[HirRel, Scope]:
    frm = cast(exp.From, s.args.get("from_") or s.args.get("from"))
    sources = [frm.this] + list(frm.expressions or [])
    if _is_table_function(sources[0]):
        rel, scope = binder._table_function(sources[0], HConstant(((),), ()), Scope())
    else:
        rel, scope = bind_table_expr(binder, sources[0])
    for src in sources[1:]:
        if _is_table_function(src):
            rel, scope = binder._table_function(src, rel, scope)
            continue
        if isinstance(src, exp.Lateral):
            binder.outer.append(scope)
            try:
                r2, s2 = bind_table_expr(binder, src.this, alias=src.args.get("alias"))
            finally:
                binder.outer.pop()
            rel, scope = HJoin(rel, r2, TRUE, "inner", True), Scope(scope.columns + s2.columns)
            continue
        r2, s2 = bind_table_expr(binder, src)
        rel, scope = HJoin(rel, r2, TRUE, "inner"), Scope(scope.columns + s2.columns)
    for j in s.args.get("joins") or []:
        rel, scope = bind_join(binder, rel, scope, j)
    return rel, scope


def bind_join(binder: Binder, rel: HirRel, scope: Scope, j: exp.Join) -> tuple[HirRel, Scope]:
    side = (j.args.get("side") or "").lower()
    if _is_table_function(j.this) and not side and j.args.get("on") is None:
        return binder._table_function(j.this, rel, scope)
    if isinstance(j.this, exp.Lateral) and _is_table_function(j.this.this) and not side and j.args.get("on") is None:
        t = j.this.this.copy()
        if j.this.args.get("alias") is not None:
            t.set("alias", j.this.args["alias"])
        return binder._table_function(t, rel, scope)
    kind = (j.args.get("kind") or "").lower()
    if j.args.get("method") or kind == "natural":
        raise unsupported("NATURAL JOIN")
    if kind in ("semi", "anti"):
        raise unsupported(f"{kind.upper()} JOIN")
    join_kind = side if side in ("left", "right", "full") else "inner"
    lateral = isinstance(j.this, exp.Lateral)
    if lateral:
        binder.outer.append(scope)
        try:
            r2, s2 = bind_table_expr(binder, j.this.this, alias=j.this.args.get("alias"))
        finally:
            binder.outer.pop()
    else:
        r2, s2 = bind_table_expr(binder, j.this)
    joined = Scope(scope.columns + s2.columns)
    on = j.args.get("on")
    using = j.args.get("using")
    if on is not None:
        pred = binder._predicate(on, joined, "JOIN/ON")
    elif using:
        preds = []
        for ident in using:
            name = ident.name
            li = scope.lookup(name, None)
            ri = s2.lookup(name, None) + len(scope.columns)
            preds.append(binder._binary("eq", Column(li, joined.columns[li].typ), Column(ri, joined.columns[ri].typ)))
        pred = preds[0] if len(preds) == 1 else CallVariadic("and", tuple(preds), BOOL)
    else:
        if join_kind != "inner" and kind != "cross":
            raise SqlError(SYNTAX_ERROR, f"{join_kind.upper()} JOIN requires an ON or USING clause")
        pred = TRUE
    return HJoin(rel, r2, pred, join_kind, lateral), joined


def bind_table_expr(binder: Binder, t: exp.Expression, alias: exp.Expression | None = None) -> tuple[HirRel, Scope]:
    if alias is not None and isinstance(t, exp.Subquery) and t.args.get("alias") is None:
        t = t.copy()
        t.set("alias", alias)
    if isinstance(t, exp.Subquery) and isinstance(t.this, exp.Table) and t.this.args.get("joins"):
        # a parenthesized join tree: ( a JOIN b ON ... ) [AS alias]
        inner = t.this.copy()
        joins = inner.args.pop("joins")
        rel, scope = bind_table_expr(binder, inner)
        for j in joins:
            rel, scope = bind_join(binder, rel, scope, j)
        if t.alias_or_name:
            scope = Scope([ScopeColumn(t.alias_or_name, c.name, c.typ, c.table_oid, c.attnum) for c in scope.columns])
        return rel, scope
    if isinstance(t, exp.Table):
        if isinstance(t.this, exp.Func):
            raise unsupported("table functions in FROM")
        parts = [p.name for p in t.parts]
        qualifier = t.alias_or_name
        col_alias = [c.name for c in t.args["alias"].columns] if t.args.get("alias") and t.args["alias"].columns else []
        if len(parts) == 1 and parts[0] in binder.ctes:
            rel, names = binder.ctes[parts[0]]
            types = hir_types(rel)
            names = list(names)
            for i, c in enumerate(col_alias):
                names[i] = c
            return rel, Scope([ScopeColumn(qualifier, n, ty) for n, ty in zip(names, types, strict=True)])
        item = binder.catalog.resolve(parts)
        if item is None:
            raise SqlError(UNDEFINED_TABLE, f'relation "{".".join(parts)}" does not exist')
        names = list(item.column_names)
        for i, c in enumerate(col_alias):
            names[i] = c
        cols = [ScopeColumn(qualifier, n, ty, item.oid, i + 1) for i, (n, ty) in enumerate(zip(names, item.column_types, strict=True))]
        if item.id not in binder.dependencies:
            binder.dependencies.append(item.id)
        if item.hir is not None:
            return item.hir, Scope(cols)
        return HGet(item.id, item.qualified, item.column_types), Scope(cols)
    if isinstance(t, exp.Subquery):
        saved = binder._agg
        binder._agg = None
        try:
            b = binder.bind_query(t, top=False)
        finally:
            binder._agg = saved
        rel = binder._finish_nested(b)
        sub_qualifier = t.alias_or_name or None
        names = list(b.names)
        a = t.args.get("alias")
        if a is not None and a.columns:
            for i, c in enumerate(a.columns):
                names[i] = c.name
        return rel, Scope([ScopeColumn(sub_qualifier, n, ty) for n, ty in zip(names, b.types, strict=True)])
    if isinstance(t, exp.Values):
        rel, value_names, types = binder._bind_values(t)
        values_qualifier = t.alias_or_name or None
        a = t.args.get("alias")
        names_l = list(value_names)
        if a is not None and a.columns:
            for i, c in enumerate(a.columns):
                names_l[i] = c.name
        return rel, Scope([ScopeColumn(values_qualifier, n, ty) for n, ty in zip(names_l, types, strict=True)])
    raise unsupported(f"FROM item {t.key}")



def _is_table_function(t: exp.Expression) -> bool:
    return isinstance(t, exp.Unnest) or isinstance(t, exp.Table) and isinstance(t.this, exp.Func)
