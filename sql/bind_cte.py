"""WITH: common table expressions and WITH MUTUALLY RECURSIVE (bound for a sql.bind.Binder)."""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from sql import func
from sql.bind_aggregates import _has_agg
from sql.bind_names import sql_type_of
from sql.bind_scalar import assignment_castable
from sql.errors import DATATYPE_MISMATCH, SqlError, unsupported
from sql.hir import (
    Exists,
    HConstant,
    HDistinct,
    HGet,
    HirRel,
    HJoin,
    HLetRec,
    HMap,
    HNegate,
    HProject,
    HThreshold,
    HUnion,
    OuterColumn,
    Select,
)
from sql.mir import RecursionLimit
from sql.scalar import TRUE, Column, Literal
from sql.scope import BoundQuery, aliased_names
from sql.types import BOOL, TEXT, SqlType
from sql.wmr_syntax import WMR_META, WmrBinding

if TYPE_CHECKING:
    from sql.bind import Binder


def bind_with(binder: Binder, q: exp.Expression) -> None:
    """WITH c1 AS (q1), ..: each ci is in scope in the later cj and in the query's body. The
    caller (Binder.bind_query) restores the enclosing names afterwards, so an inner WITH
    shadows an outer one only inside its own query."""
    w = q.args.get("with_") or q.args.get("with")
    if not w:
        return
    recursive = bool(w.args.get("recursive"))
    if w.args.get("search") or w.args.get("cycle"):
        raise unsupported("WITH RECURSIVE ... SEARCH / CYCLE")
    seen: set[str] = set()
    for cte in w.expressions:
        name = cte.alias_or_name
        if cte.args.get("search") or cte.args.get("cycle"):
            _search_cycle(cte, name, recursive)
        if name in seen:
            raise SqlError("42712", f'WITH query name "{name}" specified more than once')
        seen.add(name)
    for cte in (_dependency_order(w.expressions) if recursive else w.expressions):
        name = cte.alias_or_name
        if recursive and _reads(cte.this, name):
            binder.ctes[name] = recursive_cte(binder, cte, name)
            continue
        b = binder.bind_query(cte.this, top=False)
        rel, _ = binder.derived_rel(b)
        names = list(b.names)
        alias = cte.args.get("alias")
        cols = alias.columns if alias is not None else []
        names = aliased_names(names, [c.name for c in cols], f'WITH query "{cte.alias_or_name}"')
        binder.ctes[name] = (rel, names, len(binder.outer))


def _search_cycle(cte: exp.CTE, name: str, recursive: bool) -> None:
    """SEARCH / CYCLE clauses of a CTE: only on a recursive query (else PostgreSQL's 42601);
    their sequence and path columns are records and arrays of records, which we do not have."""
    if not recursive or not _reads(cte.this, name):
        raise SqlError("42601", "WITH query is not recursive")
    raise unsupported("WITH RECURSIVE ... SEARCH / CYCLE")


def _dependency_order(ctes: list[exp.CTE]) -> list[exp.CTE]:
    """WITH RECURSIVE's items in an order that binds each after the others it reads (all are
    in scope in each: forward references are allowed); a cycle through two or more items is
    mutual recursion, which PostgreSQL does not implement (0A000)."""
    names = {c.alias_or_name for c in ctes}
    deps = {c.alias_or_name: {n for n in names - {c.alias_or_name} if _reads(c.this, n)} for c in ctes}
    done: set[str] = set()
    out: list[exp.CTE] = []
    while len(out) < len(ctes):
        ready = next((c for c in ctes if c.alias_or_name not in done and deps[c.alias_or_name] <= done), None)
        if ready is None:
            raise SqlError("0A000", "mutual recursion between WITH items is not implemented")
        done.add(ready.alias_or_name)
        out.append(ready)
    return out


def _reads(q: exp.Expression, name: str) -> bool:
    return bool(_refs(q, name))


def _refs(q: exp.Expression, name: str) -> list[exp.Table]:
    """The references in q to the WITH query `name` of q's scope: a one-part table name
    that no WITH inside q (or attached to q) rebinds where the reference stands."""
    return [t for t in q.find_all(exp.Table) if len(t.parts) == 1 and t.name == name and not _shadowed(t, q, name)]


def _shadowed(t: exp.Table, root: exp.Expression, name: str) -> bool:
    """Does a WITH between t and root (root's own included) define `name` visibly at t? Its
    items are visible in its query's body, in the later items, and (WITH RECURSIVE) in all
    of its items."""
    path: list[Any] = [t]
    node: Any = t
    while node is not root and node.parent is not None:
        node = node.parent
        path.append(node)
    for k, p in enumerate(path):
        w = p.args.get("with_") or p.args.get("with") if isinstance(p, exp.Expression) and k > 0 else None
        if not isinstance(w, exp.With):
            continue
        items = list(w.expressions)
        at = next((i for i, c in enumerate(items) if c.alias_or_name == name), None)
        if at is None:
            continue
        if k < 2 or path[k - 1] is not w:
            return True  # read in the body of p
        inside = path[k - 2]  # the item of w that holds the reference
        pos = next(i for i, c in enumerate(items) if c is inside)
        if w.args.get("recursive") or pos > at:
            return True
    return False


def recursive_cte(binder: Binder, cte: exp.CTE, name: str) -> tuple[HirRel, list[str], int]:
    """PostgreSQL's `WITH RECURSIVE t AS (base UNION [ALL] step)`, by its working-table
    iteration: w0 = base, w(k+1) = step(w(k)), t = w0 + w1 + .. until a w(k) is empty (with
    UNION: w0 = distinct(base), w(k+1) = distinct(step(w(k))) - t, t a set). As a LetRec
    over w (the working table), t and a flag `started` (empty only in the first round):
        w       = base WHERE NOT EXISTS started  UNION ALL  step(w) WHERE EXISTS started
        t       = w UNION ALL t                  (UNION: distinct, and w less t)
        started = VALUES (true)
    whose fixpoint is reached when w is empty: step(empty) is empty when the step reads its
    working table once in its FROM list, outside outer joins' nullable sides and aggregates.
    A step that reads it elsewhere (in a FROM subquery, a set operation, its own WITH) may
    yield rows from an empty working table; PostgreSQL runs the step once even then (on an
    empty base) and stops at the first round that yields nothing, so it is guarded instead:
        step(w) WHERE EXISTS nonempty OR (EXISTS started AND NOT EXISTS stepped)
        nonempty = SELECT DISTINCT true FROM w,  stepped = started
    (bound after w and before started, they read w's value of this round and started's of
    the round before; w then reads nonempty's value of the round before: w's previous one)."""
    saved = dict(binder.ctes)
    try:
        return _recursive_cte(binder, cte, name)
    finally:
        binder.ctes = saved


def _recursive_cte(binder: Binder, cte: exp.CTE, name: str) -> tuple[HirRel, list[str], int]:
    q = cte.this
    while isinstance(q, exp.Subquery) and not q.args.get("order") and not q.args.get("limit"):
        q = q.this
    inner_with = q.args.get("with_") or q.args.get("with")
    if inner_with is not None and any(_reads(c.this, name) for c in inner_with.expressions):
        raise SqlError("42P19", f'recursive reference to query "{name}" must not appear within a subquery')
    if not isinstance(q, exp.Union) or _reads(q.this, name):
        raise SqlError("42P19", f'recursive query "{name}" does not have the form non-recursive-term UNION [ALL] recursive-term')
    for bad in ("order", "limit", "offset"):
        if q.args.get(bad):
            raise unsupported(f"{bad.upper().rstrip('_')} on a recursive query")
    bind_with(binder, q)  # the recursive query's own WITH: in scope in both terms
    step_q = q.expression
    while isinstance(step_q, exp.Subquery) and not step_q.args.get("order") and not step_q.args.get("limit"):
        step_q = step_q.this
    refs = _refs(step_q, name)
    if len(refs) > 1:
        raise SqlError("42P19", f'recursive reference to query "{name}" must not appear more than once')
    if any(_in_sublink(r, step_q) for r in refs):
        raise SqlError("42P19", f'recursive reference to query "{name}" must not appear within a subquery')
    for r in refs:
        if (op := _refused_set_operation(r, step_q)) is not None:
            raise SqlError("42P19", f'recursive reference to query "{name}" must not appear within {op}')
    distinct = q.args.get("distinct", True) is not False
    base = binder.bind_query(q.this, top=False)
    types = tuple(TEXT if t.name == "unknown" else t for t in base.types)
    names = list(base.names)
    alias = cte.args.get("alias")
    cols = alias.columns if alias is not None else []
    names = aliased_names(names, [c.name for c in cols], f'WITH query "{name}"')
    ids = [f"r{binder._next_rec + k}" for k in range(3)]
    binder._next_rec += 3
    w, acc, started = (HGet(ids[0], f"{name} (working table)", types, local=True), HGet(ids[1], name, types, local=True),
                       HGet(ids[2], f"{name} (started)", (BOOL,), local=True))
    binder.ctes[name] = (w, names, len(binder.outer))
    step = binder.bind_query(step_q, top=False)
    for j in step_q.find_all(exp.Join):
        _check_outer_join(j, refs, name)
    if _aggregates(step_q):
        raise SqlError("42P19", f'aggregate functions are not allowed in a recursive query\'s recursive term of "{name}"')
    _check_step_types(name, types, step.types)
    base_rel = wmr_cast(binder, name, binder._finish_nested(base), base.types, types)
    step_rel = wmr_cast(binder, name, binder._finish_nested(step), step.types, types)
    if distinct:
        base_rel = HDistinct(base_rel)
        step_rel = HThreshold(HUnion((HDistinct(step_rel), HNegate(acc))))
    # the flags as one-column relations crossed with each part (no zero-width relations)
    first_round = HThreshold(HUnion((HConstant(((True,),), (BOOL,)), HNegate(started))))
    n = len(types)
    simple = isinstance(step_q, exp.Select) and all(_in_from_list(r, step_q) for r in refs)
    true_rel = HConstant(((True,),), (BOOL,))
    guard: HirRel = started
    if not simple:
        nonempty = HGet(f"r{binder._next_rec}", f"{name} (nonempty)", (BOOL,), local=True)
        stepped = HGet(f"r{binder._next_rec + 1}", f"{name} (stepped)", (BOOL,), local=True)
        binder._next_rec += 2
        first_step = HThreshold(HUnion((started, HNegate(stepped))))
        guard = HDistinct(HUnion((nonempty, first_step)))
    w_value = HUnion((HProject(HJoin(base_rel, first_round, TRUE, "inner"), tuple(range(n))),
                      HProject(HJoin(step_rel, guard, TRUE, "inner"), tuple(range(n)))))
    acc_value: HirRel = HUnion((w, acc))  # (the renderer needs the self-reference last)
    if simple:
        rel = HLetRec(tuple(ids), (f"{name}_working", name, f"{name}_started"), (types, types, (BOOL,)),
                      (w_value, acc_value, true_rel), None, acc)
    else:
        rel = HLetRec((ids[0], ids[1], nonempty.id, stepped.id, ids[2]),
                      (f"{name}_working", name, f"{name}_nonempty", f"{name}_stepped", f"{name}_started"),
                      (types, types, (BOOL,), (BOOL,), (BOOL,)),
                      (w_value, acc_value, HDistinct(HProject(HMap(w, (TRUE,)), (n,))), started, true_rel), None, acc)
    return rel, names, len(binder.outer)


def _check_step_types(name: str, types: tuple[SqlType, ...], step: tuple[SqlType, ...]) -> None:
    """The non-recursive term fixes the column types: the UNION of both terms must have them,
    modifiers included (PostgreSQL's 42804)."""
    if len(step) != len(types):
        raise SqlError("42601", "each UNION query must have the same number of columns")
    for i, (t, s) in enumerate(zip(types, step, strict=True)):
        u = func.unify([t, s], "UNION")
        if u != t:
            raise SqlError(DATATYPE_MISMATCH, f'recursive query "{name}" column {i + 1} has type {t.pg_format()} in '
                           f"non-recursive term but type {u.pg_format()} overall")


def _in_sublink(node: exp.Expression, root: exp.Expression) -> bool:
    """Is node inside a subquery used as an expression (scalar, EXISTS, IN, ARRAY(..)) of root?"""
    p: Any = node
    while p is not root and p.parent is not None:
        if isinstance(p, (exp.Select, exp.Subquery, exp.SetOperation)) and not isinstance(
                p.parent, (exp.Subquery, exp.SetOperation, exp.From, exp.Join, exp.CTE, exp.With)):
            return True
        p = p.parent
    return False


def _refused_set_operation(node: exp.Expression, root: exp.Expression) -> str | None:
    """PostgreSQL's rule for the working table inside a set operation of the step: not in
    INTERSECT ALL, not in EXCEPT's right side nor in EXCEPT ALL (the step is re-evaluated
    as a whole each round, so the others mean what they say)."""
    child: Any = node
    p: Any = node.parent
    while p is not None and child is not root:
        all_ = p.args.get("distinct") is False
        if isinstance(p, exp.Intersect) and all_:
            return "INTERSECT"
        if isinstance(p, exp.Except) and (all_ or child is p.expression):
            return "EXCEPT"
        child, p = p, p.parent
    return None


def _in_from_list(node: exp.Expression, select: exp.Select) -> bool:
    """Is node a table of select's own FROM / JOIN list (not deeper)?"""
    p: Any = node.parent
    while isinstance(p, (exp.From, exp.Join)):
        p = p.parent
    return p is select


def _check_outer_join(j: exp.Join, refs: list[exp.Table], name: str) -> None:
    """PostgreSQL refuses the recursive reference on the nullable side of an outer join
    (42P19). On the preserved side the step still yields nothing from an empty working
    table, which is all the iteration needs."""
    side = (j.args.get("side") or "").upper()
    if not side:
        return
    sel = j.parent
    if not isinstance(sel, exp.Select) or j not in (sel.args.get("joins") or []):
        raise unsupported("outer joins in the recursive term of WITH RECURSIVE")
    joins = sel.args["joins"]
    before = [sel.args.get("from_") or sel.args.get("from"), *joins[: joins.index(j)]]

    def inside(nodes: list) -> bool:  # type: ignore[type-arg]
        return any(n is not None and any(r is n or any(a is n for a in _ancestors(r)) for r in refs) for n in nodes)

    nullable = {"LEFT": inside([j]), "RIGHT": inside(before), "FULL": inside([j, *before])}.get(side)
    if nullable is None:
        raise unsupported("outer joins in the recursive term of WITH RECURSIVE")
    if nullable:
        raise SqlError("42P19", f'recursive reference to query "{name}" must not appear within an outer join')


def _ancestors(node: exp.Expression) -> list[Any]:
    out: list[Any] = []
    p: Any = node.parent
    while p is not None:
        out.append(p)
        p = p.parent
    return out


def _aggregates(q: exp.Expression) -> bool:
    return isinstance(q, exp.Select) and (bool(q.args.get("group")) or any(_has_agg(e) for e in q.expressions))


def cte_at_depth(rel: HirRel, bound_at: int, depth: int) -> HirRel:
    """A CTE bound `bound_at` scopes deep, read `depth` scopes deep: its references to
    enclosing queries reach `depth - bound_at` more scopes out."""
    return rel if depth == bound_at else _shift(rel, depth - bound_at, 0)


def _shift(x: Any, by: int, depth: int) -> Any:
    """outer(l, i) -> outer(l + by, i) for the levels l that leave `x` (l > depth; a
    subquery or the right side of a lateral join is one level deeper)."""
    match x:
        case OuterColumn(level=lv, index=i, typ=t):
            return OuterColumn(lv + by, i, t) if lv > depth else x
        case Exists(rel=r, typ=t):
            return Exists(_shift(r, by, depth + 1), t)
        case Select(rel=r, typ=t):
            return Select(_shift(r, by, depth + 1), t)
        case HJoin(lateral=True):
            return replace(x, left=_shift(x.left, by, depth), right=_shift(x.right, by, depth + 1), on=_shift(x.on, by, depth))
        case tuple():
            return tuple(_shift(v, by, depth) for v in x)
        case SqlType() | Literal():
            return x
        case _ if is_dataclass(x) and not isinstance(x, type):
            return replace(x, **{f.name: _shift(getattr(x, f.name), by, depth) for f in fields(x)})
        case _:
            return x


def bind_wmr(binder: Binder, q: exp.Expression, w: exp.With, top: bool) -> BoundQuery:
    """WITH MUTUALLY RECURSIVE b1 (..) AS (q1), .. body = HLetRec: the bindings are in
    scope in every qi and in the body (only there); each qi is assignment-cast to its
    declared types."""
    decls: list[WmrBinding] = [c.meta[WMR_META] for c in w.expressions]
    saved = dict(binder.ctes)
    block = dict(binder.ctes)
    ids: list[str] = []
    types: list[tuple[SqlType, ...]] = []
    for d in decls:
        if d.name in (x.name for x in decls[: len(ids)]):
            raise SqlError("42712", f'WITH query name "{d.name}" specified more than once')
        rid = f"r{binder._next_rec}"
        binder._next_rec += 1
        ts = tuple(sql_type_of(t) for t in d.types)
        ids.append(rid)
        types.append(ts)
        block[d.name] = (HGet(rid, d.name, ts, local=True), list(d.columns), len(binder.outer))
    values: list[HirRel] = []
    try:
        for cte, d, ts in zip(w.expressions, decls, types, strict=True):
            binder.ctes = dict(block)
            b = binder.bind_query(cte.this, top=False)
            values.append(wmr_cast(binder, d.name, binder._finish_nested(b), b.types, ts))
        binder.ctes = dict(block)
        body_q = q.copy()
        body_q.set("with_" if "with_" in q.args else "with", None)
        bq = binder.bind_query(body_q, top)
    finally:
        binder.ctes = saved
    limit = RecursionLimit(*decls[0].limit) if decls[0].limit is not None else None
    rel = HLetRec(tuple(ids), tuple(d.name for d in decls), tuple(types), tuple(values), limit, bq.rel)
    return BoundQuery(rel, bq.finishing, bq.names, bq.types, bq.origins)


def wmr_cast(binder: Binder, name: str, rel: HirRel, have: tuple[SqlType, ...], want: tuple[SqlType, ...]) -> HirRel:
    """A binding's query, assignment-cast to its declared types (an unknown-typed column,
    e.g. a bare string literal or NULL, counts as text)."""
    seen = tuple(TEXT if t.name == "unknown" else t for t in have)
    if len(seen) != len(want) or not all(assignment_castable(a, b) for a, b in zip(seen, want, strict=True)):
        raise SqlError(DATATYPE_MISMATCH, f'WITH MUTUALLY RECURSIVE query "{name}" declared types ({", ".join(t.pg_format() for t in want)}), '
                       f'but query returns types ({", ".join(t.pg_format() for t in seen)})')
    if have == want:
        return rel
    if isinstance(rel, HConstant):
        return binder._cast_rel(rel, have, want)
    n = len(have)
    casts = tuple(binder.coerce(Column(i, have[i]), want[i], explicit=True) for i in range(n))
    return HProject(HMap(rel, casts), tuple(range(n, 2 * n)))

