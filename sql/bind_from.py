"""FROM: tables, subqueries, VALUES, table functions and join trees (bound for a sql.bind.Binder)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, cast

from sqlglot import exp

from sql import func, regex
from sql.bind_cte import cte_at_depth
from sql.errors import (
    AMBIGUOUS_COLUMN,
    SYNTAX_ERROR,
    UNDEFINED_COLUMN,
    UNDEFINED_FUNCTION,
    UNDEFINED_TABLE,
    SqlError,
    unsupported,
)
from sql.hir import HConstant, HFlatMap, HGet, HirRel, HirScalar, HJoin, HMap, HProject, hir_types
from sql.hir_analysis import free_columns, shift_levels
from sql.scalar import TRUE, CallVariadic, Column, Literal, Scalar
from sql.scope import Scope, ScopeColumn, aliased_names, concat, shifted
from sql.srf import SET_RETURNING
from sql.types import BOOL, INT4, INT8, JSONB, TEXT, SqlType

if TYPE_CHECKING:
    from sql.bind import Binder


def bind_from(binder: Binder, s: exp.Select) -> tuple[HirRel, Scope]:
    """FROM i1, i2, ..: the cross product of its items, where an item is a table expression
    and the explicit JOINs that follow it (a comma binds looser than JOIN: `a, b RIGHT JOIN c`
    is `a, (b RIGHT JOIN c)`). A join's ON sees only its own join tree; a LATERAL item or a
    table function that starts an item sees the items to its left."""
    frm = cast(exp.From, s.args.get("from_") or s.args.get("from"))
    items: list[tuple[exp.Expression, list[exp.Join]]] = [(frm.this, [])]
    items += [(src, []) for src in frm.expressions or []]
    for j in s.args.get("joins") or []:
        if _is_comma(j):
            items.append((j.this, []))
        else:
            items[-1][1].append(j)
    rel: HirRel = HConstant(((),), ())
    scope = Scope()
    for k, (first, joins) in enumerate(items):
        lateral_first = _is_table_function(first) or isinstance(first, exp.Lateral)
        if k > 0 and (lateral_first or any(isinstance(j.this, exp.Lateral) for j in joins)) and _isolated_tree(joins):
            rel, scope = _lateral_tree(binder, rel, scope, first, joins)
            continue
        if lateral_first:
            # sees the items to its left: a FlatMap / lateral join over them, and so do the
            # joins of its tree (inner and LEFT joins only: see _isolated_tree)
            left = scope
            rel, scope = _lateral_item(binder, rel, scope, first)
            try:  # the tree's ON clauses see the tree only (as below)
                for j in joins:
                    rel, scope = bind_join(binder, rel, scope, j, hide=len(left.columns))
            except SqlError as e:
                raise _sibling_reference(e, left) from None
            continue
        try:  # a (non-LATERAL) item cannot read the items to its left
            r2, s2 = bind_table_expr(binder, first)
        except SqlError as e:
            raise _sibling_reference(e, scope) from None
        if k > 0 and any(isinstance(j.this, exp.Lateral) for j in joins):
            # a LATERAL item inside the tree sees the earlier FROM items too: the tree is
            # joined onto them (`a, b JOIN LATERAL f(a, b) ON p` = `(a × b) JOIN LATERAL
            # f(a, b) ON p`, which holds for inner and LEFT joins only: see _isolated_tree)
            left = scope
            rel, scope = HJoin(rel, r2, TRUE, "inner"), concat(scope, s2)
            try:
                for j in joins:
                    rel, scope = bind_join(binder, rel, scope, j, hide=len(left.columns))
            except SqlError as e:
                raise _sibling_reference(e, left) from None
            continue
        try:
            for j in joins:
                r2, s2 = bind_join(binder, r2, s2, j)
        except SqlError as e:
            raise _sibling_reference(e, scope) from None
        rel, scope = (r2, s2) if k == 0 else (HJoin(rel, r2, TRUE, "inner"), concat(scope, s2))
    return rel, scope


def _isolated_tree(joins: list[exp.Join]) -> bool:
    """Whether a join tree that reads the FROM items to its left (a LATERAL item in it) must
    be bound in a scope of its own (_lateral_tree) rather than joined onto those items: a
    RIGHT or FULL join would null-extend them too, NATURAL / USING match their columns too."""
    return any((j.args.get("side") or "").lower() in ("right", "full") or (j.args.get("method") or "").lower() == "natural"
               or (j.args.get("kind") or "").lower() == "natural" or j.args.get("using") for j in joins)


def _lateral_tree(binder: Binder, rel: HirRel, scope: Scope, first: exp.Expression,
                  joins: list[exp.Join]) -> tuple[HirRel, Scope]:
    """`L, T` where the join tree T reads L's items (from a LATERAL item) = L ⋈lateral T: T
    bound in a scope of its own, for each row of L, L's columns its outer references."""
    empty: tuple[HirRel, Scope] = (HConstant(((),), ()), Scope())
    binder.outer.append(scope)
    try:
        if _is_table_function(first) or isinstance(first, exp.Lateral):
            r2, s2 = _lateral_item(binder, *empty, first)
        else:
            r2, s2 = bind_table_expr(binder, first)
        for j in joins:
            r2, s2 = bind_join(binder, r2, s2, j, hide_outer=True)
    except SqlError as e:
        raise _sibling_reference(e, scope) from None
    finally:
        binder.outer.pop()
    return HJoin(rel, r2, TRUE, "inner", True), concat(scope, s2)


def _sibling_reference(e: SqlError, left: Scope) -> SqlError:
    """A join tree's ON, or a FROM item that is not LATERAL, naming an earlier FROM item
    (Postgres' wording; a later item is a missing entry, as in Postgres)."""
    prefix = 'missing FROM-clause entry for table "'
    if e.sqlstate == UNDEFINED_TABLE and e.message.startswith(prefix) and any(c.table == e.message[len(prefix):-1] for c in left.columns):
        return SqlError(UNDEFINED_TABLE, "invalid reference to FROM-clause entry for table " + e.message[len(prefix) - 1:])
    return e


def _is_comma(j: exp.Join) -> bool:
    """`FROM a, b`: sqlglot reads `, b` as a join without kind, side, method or condition."""
    return not any(j.args.get(k) for k in ("kind", "side", "method", "on", "using"))


def _lateral_item(binder: Binder, rel: HirRel, scope: Scope, t: exp.Expression) -> tuple[HirRel, Scope]:
    if isinstance(t, exp.Lateral):
        t = _as_from_item(t)
    if _is_table_function(t):
        return table_function(binder, t, rel, scope)
    if isinstance(t.this, exp.Expression) and _is_table_function(t.this):
        f = t.this.copy()
        if t.args.get("alias") is not None:
            f.set("alias", t.args["alias"])
        return table_function(binder, f, rel, scope)
    binder.outer.append(scope)
    try:
        r2, s2 = bind_table_expr(binder, t.this, alias=t.args.get("alias"))
    finally:
        binder.outer.pop()
    return HJoin(rel, r2, TRUE, "inner", True), concat(scope, s2)


def bind_join(binder: Binder, rel: HirRel, scope: Scope, j: exp.Join, hide: int = 0,
              hide_outer: bool = False) -> tuple[HirRel, Scope]:
    """`rel` JOIN j. `hide`: the first `hide` columns of `scope` are earlier FROM items a
    LATERAL item of this tree may read, but its ON clauses may not (PostgreSQL: 42P01);
    `hide_outer`: the same for the innermost outer scope (a tree bound in a scope of its own
    over the FROM items to its left, _lateral_tree)."""
    side = (j.args.get("side") or "").lower()
    if isinstance(j.this, exp.Lateral):
        j = j.copy()
        j.set("this", _as_from_item(j.this))
    fn = _joined_function(j.this)
    if fn is not None and not side and j.args.get("on") is None and not j.args.get("using"):
        return table_function(binder, fn, rel, scope)  # a FlatMap over what precedes it
    kind = (j.args.get("kind") or "").lower()
    natural = (j.args.get("method") or "").lower() == "natural" or kind == "natural"
    if j.args.get("method") and not natural:
        raise unsupported(f"{j.args['method']} JOIN")
    if kind in ("semi", "anti"):
        raise unsupported(f"{kind.upper()} JOIN")
    join_kind = side if side in ("left", "right", "full") else "inner"
    lateral = isinstance(j.this, exp.Lateral) or fn is not None
    if fn is not None:  # `l [LEFT] JOIN [LATERAL] f(l..) ON p`: f's rows of each row of l, as a lateral join
        binder.outer.append(scope)
        try:
            r2, s2 = table_function(binder, fn, HConstant(((),), ()), Scope())
        finally:
            binder.outer.pop()
    elif lateral:
        binder.outer.append(scope)
        try:
            r2, s2 = bind_table_expr(binder, j.this.this, alias=j.this.args.get("alias"))
        finally:
            binder.outer.pop()
    else:
        r2, s2 = bind_table_expr(binder, j.this)
    if lateral and join_kind in ("right", "full"):
        r2 = _unlateral(r2, scope, join_kind)
        lateral = False
    if join_kind in ("left", "full"):
        s2 = _outer_nullable(s2)
    if join_kind in ("right", "full"):
        scope = _outer_nullable(scope)
    joined = concat(scope, s2)
    on = j.args.get("on")
    using = [ident.name for ident in j.args.get("using") or []]
    if natural:
        if on is not None or using:
            raise SqlError(SYNTAX_ERROR, "a NATURAL JOIN cannot have an ON or USING clause")
        right_names = {s2.columns[i].name for i in s2.star_positions()}
        using = [n for n in dict.fromkeys(scope.columns[i].name for i in scope.star_positions()) if n in right_names]
    if on is not None:
        on_scope = joined if not hide else Scope(
            [replace(c, name="", table="", hidden=True) if i < hide else c for i, c in enumerate(joined.columns)], joined.star)
        saved = binder.outer[-1] if hide_outer else None
        if saved is not None:
            binder.outer[-1] = Scope([replace(c, name="", table="", hidden=True) for c in saved.columns], saved.star)
        try:
            pred = binder._predicate(on, on_scope, "JOIN/ON")
        finally:
            if saved is not None:
                binder.outer[-1] = saved
    elif using:
        return _using_join(binder, rel, scope, r2, s2, using, join_kind, lateral)
    else:
        if join_kind != "inner" and kind not in ("cross", "natural") and not natural:
            raise SqlError(SYNTAX_ERROR, f"{join_kind.upper()} JOIN requires an ON or USING clause")
        pred = TRUE
    return HJoin(rel, r2, pred, join_kind, lateral), joined


def _unlateral(r2: HirRel, left: Scope, join_kind: str) -> HirRel:
    """The right side of a RIGHT / FULL JOIN LATERAL as a plain join side: it may read the
    query's enclosing scopes (outer(l, i) -> outer(l - 1, i)) but not the join's left side,
    whose rows such a join NULL-extends (PostgreSQL's 42P10)."""
    read = sorted(i for lv, i in free_columns(r2) if lv == 1)
    if read:
        raise SqlError("42P10", f'invalid reference to FROM-clause entry for table "{left.columns[read[0]].table}"',
                       detail="The combining JOIN type must be INNER or LEFT for a LATERAL reference.")
    return shift_levels(r2, 2, -1)


def _joined_function(t: exp.Expression) -> exp.Expression | None:
    """The table function a join's right side is (LATERAL or not: a function in FROM may
    read the items to its left), with the item's alias; None for other items."""
    if _is_table_function(t):
        return t
    if isinstance(t, exp.Lateral) and _is_table_function(t.this):
        f = t.this.copy()
        if t.args.get("alias") is not None:
            f.set("alias", t.args["alias"])
        return f
    return None


def _outer_nullable(scope: Scope) -> Scope:
    """The scope of a join side whose rows the join may NULL-extend."""
    return Scope([replace(c, outer_nullable=True) for c in scope.columns], scope.star)


def _using_side(scope: Scope, name: str, which: str) -> int:
    hits = [i for i, c in enumerate(scope.columns) if c.name == name and not c.hidden]
    if len(hits) > 1:
        raise SqlError(AMBIGUOUS_COLUMN, f'common column name "{name}" appears more than once in {which} table')
    if not hits:
        raise SqlError(UNDEFINED_COLUMN, f'column "{name}" specified in USING clause does not exist in {which} table')
    return hits[0]


def _using_join(binder: Binder, rel: HirRel, scope: Scope, r2: HirRel, s2: Scope, using: list[str],
                join_kind: str, lateral: bool) -> tuple[HirRel, Scope]:
    """l JOIN r USING (c, ..) = l JOIN r ON l.c = r.c AND .., plus one merged column per c:
    l.c for LEFT joins, r.c for RIGHT, coalesce(l.c, r.c) for FULL (each in the two sides'
    common type); for inner joins l.c, or r.c when only l.c needs a cast (PostgreSQL's
    buildMergedJoinVar). The merged columns are what `c` names and come first in `*`
    (then l's other columns, then r's); l.c and r.c stay reachable qualified. A merged column
    that is one side's column as it is (no cast) is that column, not a copy: grouping by
    t1.c then also groups `c`."""
    if len(set(using)) != len(using):
        dup = next(n for n in using if using.count(n) > 1)
        raise SqlError("42701", f'column name "{dup}" appears more than once in USING clause')
    n = len(scope.columns)
    preds: list[HirScalar] = []
    merged: list[HirScalar] = []
    hide_left: set[int] = set()
    hide_right: set[int] = set()
    for name in using:
        li = _using_side(scope, name, "left")
        ri = _using_side(s2, name, "right")
        lc: HirScalar = Column(li, scope.columns[li].typ)
        rc: HirScalar = Column(n + ri, s2.columns[ri].typ)
        t = func.unify([lc.typ, rc.typ], "JOIN/USING")
        lc, rc = binder.coerce(lc, t), binder.coerce(rc, t)
        preds.append(binder._binary("eq", lc, rc))
        # an inner join's merged column is a side's column as it is when one needs no cast
        inner = rc if join_kind == "inner" and not isinstance(lc, Column) and isinstance(rc, Column) else lc
        merged.append({"right": rc, "full": CallVariadic("coalesce", (lc, rc), t)}.get(join_kind, inner))
        hide_left.add(li)
        hide_right.add(ri)
    pred = preds[0] if len(preds) == 1 else CallVariadic("and", tuple(preds), BOOL)
    width = n + len(s2.columns)
    # per merged column: the position of the side's column it is, else None (mapped)
    same = [m.index if isinstance(m, Column) and m.index not in (c.index for c in merged[:k] if isinstance(c, Column))
            else None for k, m in enumerate(merged)]
    mapped = [m for m, p in zip(merged, same, strict=True) if p is None]
    positions: list[int] = []
    for p in same:
        positions.append(p if p is not None else width + sum(q is None for q in same[: len(positions)]))
    out: HirRel = HJoin(rel, r2, pred, join_kind, lateral)
    if mapped:
        out = HMap(out, tuple(mapped))
    kept = {p for p in same if p is not None}
    cols = ([replace(c, hidden=True) if i in hide_left and i not in kept else c for i, c in enumerate(scope.columns)]
            + [replace(c, hidden=True) if i in hide_right and n + i not in kept else c
               for i, c in enumerate(shifted(c, n) for c in s2.columns)]
            + [ScopeColumn(None, name, m.typ, defined_as=cast(Scalar, m))
               for name, m, p in zip(using, merged, same, strict=True) if p is None])
    star = (positions + [i for i in scope.star_positions() if i not in hide_left]
            + [n + i for i in s2.star_positions() if i not in hide_right])
    return out, Scope(cols, star)


def bind_table_expr(binder: Binder, t: exp.Expression, alias: exp.Expression | None = None) -> tuple[HirRel, Scope]:
    if alias is not None and isinstance(t, exp.Subquery) and t.args.get("alias") is None:
        t = t.copy()
        t.set("alias", alias)
    if isinstance(t, exp.Subquery) and _is_join_tree(t.this):
        # a parenthesized join tree: ( a JOIN b ON ... ) [AS alias], where a is a table, a
        # derived table or a nested join tree
        inner = t.this.copy()
        joins = inner.args.pop("joins")
        rel, scope = bind_table_expr(binder, inner)
        for j in joins:
            rel, scope = bind_join(binder, rel, scope, j)
        if t.alias_or_name:
            # an aliased join tree hides its tables: only `*`'s columns, named by the alias
            star = scope.star_positions()
            if star != list(range(len(scope.columns))):
                rel = HProject(rel, tuple(star))
            names = [scope.columns[i].name for i in star]
            a = t.args.get("alias")
            names = aliased_names(names, [c.name for c in (a.columns if a is not None else [])], f'table "{t.alias_or_name}"')
            scope = Scope([ScopeColumn(t.alias_or_name, nm, scope.columns[i].typ, scope.columns[i].table_oid, scope.columns[i].attnum)
                           for nm, i in zip(names, star, strict=True)])
        return rel, scope
    if isinstance(t, exp.Table):
        if isinstance(t.this, exp.Func):
            raise unsupported("table functions in FROM")
        parts = [p.name for p in t.parts]
        qualifier = t.alias_or_name
        col_alias = [c.name for c in t.args["alias"].columns] if t.args.get("alias") and t.args["alias"].columns else []
        if len(parts) == 1 and parts[0] in binder.ctes:
            rel, names, bound_at = binder.ctes[parts[0]]
            rel = cte_at_depth(rel, bound_at, len(binder.outer))
            types = hir_types(rel)
            names = aliased_names(list(names), col_alias, f'table "{qualifier}"')
            return rel, Scope([ScopeColumn(qualifier, n, ty) for n, ty in zip(names, types, strict=True)])
        item = binder.catalog.resolve(parts)
        if item is None:
            raise SqlError(UNDEFINED_TABLE, f'relation "{".".join(parts)}" does not exist')
        names = aliased_names(list(item.column_names), col_alias, f'table "{qualifier}"')
        cols = [ScopeColumn(qualifier, n, ty, item.oid, i + 1, attname=a)
                for i, (n, ty, a) in enumerate(zip(names, item.column_types, item.column_names, strict=True))]
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
        rel, types = binder.derived_rel(b)
        sub_qualifier = t.alias_or_name or None
        names = list(b.names)
        a = t.args.get("alias")
        if a is not None and a.columns:
            names = aliased_names(names, [c.name for c in a.columns], f'table "{sub_qualifier}"')
        return rel, Scope([ScopeColumn(sub_qualifier, n, ty) for n, ty in zip(names, types, strict=True)])
    if isinstance(t, exp.Values):
        rel, value_names, types = binder._bind_values(t)
        values_qualifier = t.alias_or_name or None
        a = t.args.get("alias")
        names_l = list(value_names)
        if a is not None and a.columns:
            names_l = aliased_names(names_l, [c.name for c in a.columns], f'table "{values_qualifier}"')
        return rel, Scope([ScopeColumn(values_qualifier, n, ty) for n, ty in zip(names_l, types, strict=True)])
    raise unsupported(f"FROM item {t.key}")


def _is_join_tree(t: exp.Expression) -> bool:
    """sqlglot hangs the JOINs of `( a JOIN b ON … )` on its first item a (a table, or a
    derived table / nested tree, i.e. a Subquery); a query's own JOINs are its FROM's."""
    return isinstance(t, (exp.Table, exp.Subquery)) and bool(t.args.get("joins"))


# table functions sqlglot reads after LATERAL as a bare call (not as a table)
_LATERAL_CALLS = SET_RETURNING


def _as_from_item(lat: exp.Lateral) -> exp.Lateral:
    """LATERAL f(..) with f(..) read as a FROM item (sqlglot leaves a bare call)."""
    if isinstance(lat.this, exp.Anonymous) and lat.this.name.lower() in _LATERAL_CALLS:
        lat = lat.copy()
        lat.set("this", exp.Table(this=lat.this.copy()))
    return lat


def _is_table_function(t: exp.Expression) -> bool:
    return isinstance(t, exp.Unnest) or isinstance(t, exp.Table) and isinstance(t.this, exp.Func)


def table_function(binder: Binder, t: exp.Expression, rel: HirRel, scope: Scope) -> tuple[HirRel, Scope]:
    """A table function in FROM: a FlatMap over what precedes it (its arguments may read
    earlier FROM items, as in Postgres)."""
    fn = t if isinstance(t, exp.Unnest) else t.this
    ordinality = False
    if isinstance(fn, exp.Unnest) or (isinstance(fn, exp.Anonymous) and fn.name.lower() == "unnest"):
        raw = list(fn.expressions)
        if len(raw) != 1:
            raise unsupported("unnest of several arrays")
        arr = binder.scalar(raw[0], scope)
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
        args = [binder.scalar(x, scope) for x in raw]
        if len(args) not in (2, 3):
            raise SqlError(UNDEFINED_FUNCTION, "function generate_series needs 2 or 3 arguments")
        typ = func.unify([a.typ for a in args], "generate_series")
        if typ.name not in ("int4", "int8"):
            if typ.name == "unknown" or typ.name == "text":
                typ = INT4
            else:
                raise unsupported(f"generate_series over {typ.pg_format()}")
        args = [binder.coerce(a, typ) for a in args]
        if len(args) == 2:
            args.append(binder.coerce(Literal(1, INT4), typ))
        name = func_name = "generate_series"
    elif isinstance(fn, exp.Anonymous) and fn.name.lower() in ("regexp_matches", "regexp_split_to_table"):
        name, func_name, args, typ = _regex_table_function(binder, fn, bool(t.args.get("ordinality")), scope)
        ordinality = func_name == "unnest_array_with_ordinality"
    elif isinstance(fn, exp.Anonymous) and fn.name.lower() in JSONB_TABLE_FUNCTIONS:
        return _jsonb_table_function(binder, t, fn, rel, scope)
    else:
        raise unsupported(f"table function {fn.sql(dialect='postgres')}")
    if t.args.get("ordinality") and not ordinality:
        raise unsupported(f"{name} WITH ORDINALITY")  # (was: the ordinality column silently dropped)
    alias = t.args.get("alias")
    table_alias = t.alias_or_name if alias is not None and alias.this is not None else name
    cols = [c.name for c in alias.columns] if alias is not None and alias.columns else []
    if isinstance(fn, exp.Unnest) and isinstance(fn.args.get("offset"), exp.Identifier):
        cols.append(fn.args["offset"].name)  # sqlglot moves the ordinality column name here
    col = cols[0] if cols else table_alias
    types = (typ, INT8) if ordinality else (typ,)
    out = HFlatMap(rel, func_name, tuple(args), types)
    new_cols = [ScopeColumn(table_alias, col, typ, scalar_item=not ordinality)]
    if ordinality:
        new_cols.append(ScopeColumn(table_alias, cols[1] if len(cols) > 1 else "ordinality", INT8))
    return out, scope.extended(new_cols)


def _regex_table_function(binder: Binder, fn: exp.Anonymous, ordinality: bool,
                          scope: Scope) -> tuple[str, str, list[HirScalar], SqlType]:
    """regexp_split_to_table(s, p [, flags]) = unnest(regexp_split_to_array(s, p [, flags]));
    regexp_matches(s, p [, flags]): a FlatMap of a text[] per match (sql.regex.bind_matches).
    Returns (name, FlatMap function, its arguments, column type)."""
    name = fn.name.lower()
    if name == "regexp_split_to_table":
        call = exp.Anonymous(this="regexp_split_to_array", expressions=[x.copy() for x in fn.expressions])
        arr = binder.scalar(call, scope)
        return name, "unnest_array_with_ordinality" if ordinality else "unnest_array", [arr], TEXT
    if ordinality:
        raise unsupported("regexp_matches WITH ORDINALITY")
    args = [binder.scalar(x, scope) for x in fn.expressions]
    if len(args) not in (2, 3) or not all(a.typ.is_string or a.typ.name == "unknown" for a in args):
        sig = ", ".join(a.typ.pg_format() for a in args)
        raise SqlError(UNDEFINED_FUNCTION, f"function regexp_matches({sig}) does not exist",
                       hint="No function matches the given name and argument types. You might need to add explicit type casts.")
    return name, name, list(regex.bind_matches([binder.coerce(a, TEXT) for a in args])), SqlType("_text")


def _jsonb_table_function(binder: Binder, t: exp.Expression, fn: exp.Anonymous, rel: HirRel, scope: Scope) -> tuple[HirRel, Scope]:
    """jsonb_array_elements[_text](j) (value), jsonb_each[_text](j) (key, value) and
    jsonb_object_keys(j): a FlatMap of the rows the function returns for each input row."""
    name = fn.name.lower()
    if t.args.get("ordinality"):
        raise unsupported(f"{name} WITH ORDINALITY")  # (was: the ordinality column silently dropped)
    if len(fn.expressions) != 1:
        raise SqlError(UNDEFINED_FUNCTION, f"function {name} takes one jsonb argument")
    j = binder.scalar(fn.expressions[0], scope)
    if j.typ.name not in ("jsonb", "unknown"):
        raise SqlError(UNDEFINED_FUNCTION, f"function {name}({j.typ.pg_format()}) does not exist",
                       hint="No function matches the given name and argument types. You might need to add explicit type casts.")
    j = binder.coerce(j, JSONB)
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
    # one column: the function returns a base type (jsonb_array_elements' OUT value is
    # its result), so a whole-row reference to the item is that column
    scalar = len(types) == 1
    return out, scope.extended([ScopeColumn(table_alias, c, ty, scalar_item=scalar) for c, ty in zip(out_names, types, strict=True)])


# jsonb table functions: name -> (column names, column types)
JSONB_TABLE_FUNCTIONS: dict[str, tuple[tuple[str, ...], tuple[SqlType, ...]]] = {
    "jsonb_array_elements": (("value",), (JSONB,)), "jsonb_array_elements_text": (("value",), (TEXT,)),
    "jsonb_each": (("key", "value"), (TEXT, JSONB)), "jsonb_each_text": (("key", "value"), (TEXT, TEXT)),
    "jsonb_object_keys": (("jsonb_object_keys",), (TEXT,)),
}
