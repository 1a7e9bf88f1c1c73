"""LEFT / RIGHT JOIN: Materialize's plan rendered as one Spark LEFT OUTER JOIN (one-shot only).

sql.lowering plans `X LEFT JOIN B ON on` as Materialize does: J = Filter(on)(X ⋈ B) bound
once, and the union of J with the unmatched rows of X padded with NULLs,

    Union(m1(J), mP(X − π_X(X ⋈ Distinct(π_G(J)))))     (the second part: X LEFT ANTI JOIN D)

where the anti-join pairs X's columns G with J's copies of them (null-safe), mP maps the
right side's columns to NULL and m1, mP order the columns (RIGHT JOIN: the same, mirrored).
After the MIR transforms X and J's left input A are filters of one plan (the base) and J's
Mfp, Join equivalences and filters carry the ON condition. In the pair space
(the base's columns, then B's), with pX, pA the filters making X and A of the base, pJ J's
own filters and equivalences, pM m1's filters:

    Union(m1(J), mP(X ▷ Distinct(π_G J)))  =  out(σ_pX(base) ⟕ B ON θ),  θ = pA ∧ pJ

when (1) pX ⊆ pA ∪ pJ ∪ pM (a row of J is a row of X); (2) every conjunct of pA ∪ pJ is in
pX or reads no left column outside G (a left row x and a row of J equal to it on G then meet
the same rows of B: "x has a match in J on G" = "x meets some b under θ"); (3) pM ⊆ pX
(m1's filters hold for every row of X, and the anti-join does not see them); (4) m1 and mP
put the same base column, or B's column and a NULL, at every output position; (5) every row
the renderer makes of X and of B has a positive diff (`positive`: a row there is a row that
exists, so Distinct(π_G J) holds a key iff some row of X meets a row of B, and no row of B
that LEFT OUTER JOIN meets is cancelled by another). Then a row
of X meets exactly its J rows (each with diff dx·db) or none (kept with dx and NULLs), as
LEFT OUTER JOIN gives. A NULL key of X fails θ (its `IS NOT NULL` filter or the null-safe
equality with B's non-NULL key) exactly where it finds no row of J.

Spark runs one outer hash join instead of the inner join, the Distinct of its keys, the
anti-join and the union. EXPLAIN keeps Materialize's plan; maintained (delta) rendering
keeps the differential form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from compute.plan import lir
from compute.plan.non_negative import non_negative
from compute.render.rel import Rel, RenderContext, cname
from compute.render.scalar import render_scalar
from compute.render.semijoin import Anti, _strip, anti_joins, is_set
from sql.scalar import Column, Literal, Scalar, columns_used, permute


@dataclass(frozen=True, slots=True)
class LeftOuter:
    """Union inputs `matched` = m1(J) and `padded` = mP(X ▷ D): together σ_pX(base) ⟕ right."""

    matched: int
    padded: int
    base: lir.Plan  # X's and J's left input's common input
    preds: tuple[Scalar, ...]  # pX, over the base's columns
    base_arity: int
    right: lir.Plan
    on: tuple[Scalar, ...]  # θ's conjuncts over the pair space (base ++ right columns)
    eq: tuple[tuple[Scalar, Scalar], ...]  # θ's null-safe equalities, over the pair space
    outputs: tuple[int, ...]  # each output column: a pair-space column
    broadcast: bool  # J's stage looking the right side up was a broadcast stage


@dataclass(frozen=True, slots=True)
class Scope:
    """The Let bindings in scope as the renderer knows them: whether each is a set
    (semijoin.is_set), its plan, and whether all its rendered rows are positive (`positive`)."""

    sets: Mapping[str, bool]
    plans: Mapping[str, lir.Plan]
    positive: Mapping[str, bool]

    def bind(self, i: str, v: lir.Plan) -> Scope:
        return Scope({**self.sets, i: is_set(v, self.sets)}, {**self.plans, i: v}, {**self.positive, i: positive(v, self)})


def left_outer_joins(inputs: tuple[lir.Plan, ...], scope: Scope) -> list[LeftOuter]:
    """The pairs of a Union's inputs that are one LEFT OUTER JOIN (see the module docstring)."""
    found: list[LeftOuter] = []
    used: set[int] = set()
    for i, pad in enumerate(inputs):
        if i in used:
            continue
        for j, matched in enumerate(inputs):
            if j == i or j in used:
                continue
            lo = _match(pad, matched, scope)
            if lo is not None:
                found.append(LeftOuter(j, i, *lo))
                used.update((i, j))
                break
    return found


def _padding(pad: lir.Plan, set_lets: Mapping[str, bool]) -> tuple[Anti, tuple[int | None, ...]] | None:
    """pad = mP(X ▷ D): the anti-join and, per output column, X's column or None (a NULL)."""
    if not isinstance(pad.node, lir.MfpNode) or not isinstance(pad.node.input.node, lir.Union):
        return None
    mp, u = pad.node.mfp, pad.node.input.node
    if mp.predicates or len(u.inputs) != 2 or not all(isinstance(e, Literal) and e.value is None for e in mp.expressions):
        return None
    antis = anti_joins(u.inputs, set_lets)
    if len(antis) != 1:
        return None
    a = antis[0]
    n = len(a.projection)
    return a, tuple(a.projection[c] if c < n else None for c in mp.output)


def _unmfp(p: lir.Plan) -> tuple[lir.Plan, lir.Mfp] | None:
    """p = mfp(base), base keeping its node id: a Get's own mfp, an Mfp node's, or the
    identity (for the nodes whose arity is known here); None for the others."""
    n = p.node
    match n:
        case lir.Get(mfp=m):
            return lir.Plan(p.node_id, replace(n, strategy="PassArrangements", mfp=lir.Mfp(len(n.types)))), m
        case lir.MfpNode(input=i, mfp=m):
            return i, m
        case lir.ArrangeBy(input=i):
            return _unmfp(i)
        case lir.Join(arities=ar):
            return p, lir.Mfp(sum(ar))
        case lir.Reduce(group_key=k, aggregates=aggs):
            return p, lir.Mfp(len(k) + len(aggs))
        case _:
            return None


def _same(a: lir.Plan, b: lir.Plan) -> bool:
    """Do a and b compute the same (compared without node ids)?"""
    return _strip(a) == _strip(b)


def _distinct_key(d: lir.Plan) -> tuple[lir.Plan, tuple[int, ...]] | None:
    """d = Distinct(π_cols(J)) (no filter, no map): J and, per column of d, J's column."""
    while isinstance(d.node, lir.ArrangeBy):
        d = d.node.input
    n = d.node
    if not isinstance(n, lir.Reduce) or not isinstance(n.plan, lir.ReduceDistinct) or n.aggregates:
        return None
    split = _unmfp(n.input)
    if split is None or split[1].expressions or split[1].predicates:
        return None
    jb, md = split
    keys: list[int] = []
    for k in n.group_key:
        if not isinstance(k, Column):
            return None
        keys.append(md.output[k.index])
    return jb, tuple(keys)


def _match(pad: lir.Plan, matched: lir.Plan, scope: Scope) -> tuple | None:
    padding = _padding(pad, scope.sets)
    dk = _distinct_key(padding[0].d) if padding is not None else None
    m = _unmfp(matched)
    if padding is None or dk is None or m is None:
        return None
    a, pads = padding
    (jb_d, dcols), (jb, m1) = dk, m
    if m1.expressions or len(m1.output) != len(pads) or not _same(jb, jb_d):
        return None
    jplan = scope.plans.get(jb.node.id) if isinstance(jb.node, lir.Get) and jb.node.local else jb
    split = _unmfp(jplan) if jplan is not None else None
    xs = _unmfp(a.x)
    if split is None or xs is None:
        return None
    jn_plan, mj = split
    jn = jn_plan.node
    if not isinstance(jn, lir.Join) or len(jn.inputs) != 2 or mj.expressions:
        return None
    xb, mx = xs
    if mx.expressions:
        return None
    for side in (0, 1):
        lo = _sides(side, jn, mj, m1, a, pads, dcols, xb, mx)
        if lo is not None and positive(a.x, scope) and positive(lo[3], scope):  # (5)
            return lo
    return None


def _sides(side: int, jn: lir.Join, mj: lir.Mfp, m1: lir.Mfp, a: Anti, pads: tuple[int | None, ...],
           dcols: tuple[int, ...], xb: lir.Plan, mx: lir.Mfp) -> tuple | None:
    """The LEFT OUTER JOIN when J's input `side` is X's base filtered (A) and the other B."""
    sa = _unmfp(jn.inputs[side])
    if sa is None or not _same(sa[0], xb):
        return None
    ma = sa[1]
    if ma.expressions or ma.input_arity != mx.input_arity:
        return None
    nb, offs = mx.input_arity, (0, jn.arities[0])
    bi = 1 - side
    # the Join's columns in the pair space
    jmap = [ma.output[c - offs[side]] if offs[side] <= c < offs[side] + jn.arities[side] else nb + c - offs[bi]
            for c in range(sum(jn.arities))]
    jcols = [jmap[c] for c in mj.output]  # J's columns
    # (4) the output columns
    outputs: list[int] = []
    for k, c in enumerate(m1.output):
        col = jcols[c]
        want = None if pads[k] is None else mx.output[pads[k]]  # type: ignore[index]
        if (want is None and col < nb) or (want is not None and col != want):
            return None
        outputs.append(col)
    # G: the left columns the anti-join matches on (each class: one column of X, one of D)
    g = _anti_key(a, dcols, jcols, mx)
    if g is None:
        return None
    px = set(mx.predicates)
    pa = list(ma.predicates)
    pj = [permute(p, jmap) for p in mj.predicates]
    pm = [permute(p, jcols) for p in m1.predicates]
    eqs = [tuple(permute(x, jmap) for x in cls) for cls in jn.equivalences]

    def left_cols(x: Scalar) -> set[int]:
        return {c for c in columns_used(x) if c < nb}

    if not px <= set(pa) | set(pj) | set(pm) or not set(pm) <= px:  # (1), (3)
        return None
    if not all(p in px or left_cols(p) <= g for p in [*pa, *pj]):  # (2)
        return None
    if not all(left_cols(x) <= g for cls in eqs for x in cls):
        return None
    on = tuple(p for p in dict.fromkeys([*pa, *pj]) if p not in px)
    eq = tuple((cls[0], x) for cls in eqs for x in cls[1:])
    bc = any(st.broadcast and st.lookup_relation == bi for path in jn.paths[:1] for st in path.stages)
    return xb, tuple(mx.predicates), nb, jn.inputs[bi], on, eq, tuple(outputs), bc


def positive(p: lir.Plan, scope: Scope) -> bool:
    """Does every row the one-shot renderer makes of p have a positive diff? As
    compute.plan.non_negative, except that a Union's anti-joins (X's rows) and LEFT OUTER
    JOINs (their inputs' rows) have no Negate left."""
    n = p.node
    match n:
        case lir.Get(id=i, local=True):
            return scope.positive.get(i, False)
        case lir.Union(inputs=ins):
            outers = left_outer_joins(ins, scope)  # their inputs: checked when found
            done = {k for o in outers for k in (o.matched, o.padded)}
            rest = tuple(x for k, x in enumerate(ins) if k not in done)
            antis = anti_joins(rest, scope.sets)
            negated = {a.negated for a in antis}
            return (all(positive(a.x, scope) for a in antis)
                    and all(positive(x, scope) for k, x in enumerate(rest) if k not in negated))
        case lir.Let(id=i, value=v, body=b):
            return positive(b, scope.bind(i, v))
        case lir.MfpNode(input=i) | lir.FlatMap(input=i) | lir.ArrangeBy(input=i):
            return positive(i, scope)
        case lir.Join(inputs=xs):
            return all(positive(x, scope) for x in xs)
        case lir.LetRec():
            return False
        case _:
            return non_negative(p)


def _anti_key(a: Anti, dcols: tuple[int, ...], jcols: list[int], mx: lir.Mfp) -> set[int] | None:
    """The base columns the anti-join X ▷ D matches on, when each of its equivalence classes
    is one column of X and the column of D that is J's copy of that same base column."""
    nx, nd = (a.arities[0], a.arities[1]) if a.x_first else (a.arities[1], a.arities[0])
    xo, do = (0, nx) if a.x_first else (nd, 0)
    g: set[int] = set()
    seen: set[int] = set()
    for cls in a.eq:
        if len(cls) != 2 or not all(isinstance(x, Column) for x in cls):
            return None
        idx = sorted(x.index for x in cls)  # type: ignore[union-attr]
        xs = [c - xo for c in idx if xo <= c < xo + nx]
        ds = [c - do for c in idx if do <= c < do + nd]
        if len(xs) != 1 or len(ds) != 1:
            return None
        base = mx.output[xs[0]]
        if jcols[dcols[ds[0]]] != base:
            return None
        g.add(base)
        seen.add(ds[0])
    return g if seen == set(range(nd)) else None


def left_outer_sql(rl: Rel, rr: Rel, lo: LeftOuter, ctx: RenderContext) -> Rel:
    """out(σ_pX(base) LEFT OUTER JOIN right ON θ): matched rows with dx·db, the others dx."""
    nb, nr = rl.arity, rr.arity
    allcols = [f"j{i}" for i in range(nb + nr)]
    conds = [render_scalar(p, allcols) for p in lo.on] + [f"({render_scalar(x, allcols)} <=> {render_scalar(y, allcols)})" for x, y in lo.eq]
    ls, rs = ctx.alias(), ctx.alias()
    lsel = ", ".join([*(f"c{i} AS j{i}" for i in range(nb)), "diff AS dx"])
    rsel = ", ".join([*(f"c{i} AS j{nb + i}" for i in range(nr)), "diff AS db"])
    hint = f"/*+ BROADCAST({rs}) */ " if lo.broadcast else ""
    sel = [f"j{c} AS {cname(k)}" for k, c in enumerate(lo.outputs)] + ["dx * coalesce(db, CAST(1 AS BIGINT)) AS diff"]
    q = (f"SELECT {hint}{', '.join(sel)} FROM (SELECT {lsel} FROM {ctx.sub(rl)}) AS {ls} "
         f"LEFT OUTER JOIN (SELECT {rsel} FROM {ctx.sub(rr)}) AS {rs} ON {' AND '.join(conds) or 'TRUE'}")
    return Rel(q, len(lo.outputs))
