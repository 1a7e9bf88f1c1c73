"""WITH: common table expressions and WITH MUTUALLY RECURSIVE (bound for a sql.bind.Binder)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sql.errors import DATATYPE_MISMATCH, SqlError, unsupported
from sql.hir import HConstant, HGet, HirRel, HLetRec, HMap, HProject
from sql.mir import RecursionLimit
from sql.scalar import Column
from sql.scope import BoundQuery, aliased_names
from sql.statements import WMR_META, WmrBinding
from sql.types import TEXT, SqlType

if TYPE_CHECKING:
    from sql.bind import Binder


def bind_with(binder: Binder, q: exp.Expression) -> None:
    w = q.args.get("with_") or q.args.get("with")
    if not w:
        return
    if w.args.get("recursive"):
        raise unsupported("WITH RECURSIVE")
    for cte in w.expressions:
        b = binder.bind_query(cte.this, top=False)
        rel = binder._finish_nested(b)
        names = list(b.names)
        cols = cte.args.get("alias").columns if cte.args.get("alias") else []
        names = aliased_names(names, [c.name for c in cols], f'WITH query "{cte.alias_or_name}"')
        binder.ctes[cte.alias_or_name] = (rel, names)


def bind_wmr(binder: Binder, q: exp.Expression, w: exp.With, top: bool) -> BoundQuery:
    """WITH MUTUALLY RECURSIVE b1 (..) AS (q1), .. body = HLetRec: the bindings are in
    scope in every qi and in the body (only there); each qi is assignment-cast to its
    declared types."""
    from sql.bind import sql_type_of

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
        block[d.name] = (HGet(rid, d.name, ts, local=True), list(d.columns))
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
    from sql.bind import assignment_castable

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

