"""Semi- and anti-joins: a rendering choice for joins with a set that the join fully keys.

Decorrelated EXISTS / IN / NOT EXISTS (sql.lowering) join their input X with D = Distinct(keys)
and, for NOT, subtract that join from X (Materialize's plan; EXPLAIN shows it as such). D is a
*set* (every row has diff 1: Reduce::Distinct, through filters and Let bindings), and when
every column of D is a plain column of an equivalence class with a member over X's columns,
each row of X matches at most one row of D, the one holding X's values. Then, with `<=>` for
the equivalences (join equivalences are null-safe):

    X ⋈ D                      = Map(D's columns := their X-side members)(X LEFT SEMI JOIN D)
    X − Project_X(X ⋈ D)       = X LEFT ANTI JOIN D
    Union(ma(X), Negate(mm(X ⋈ D)))  = ma(X LEFT ANTI JOIN D)   when mm = ma composed with
                                         the projection of the join onto X's columns

(X's diffs are kept; D's are 1.) Spark then probes D for existence instead of joining and
carrying its columns, and the anti-join needs no Negate, Union and consolidation.

A filter NOT (x IN S) is lowered as Threshold(X − mm(Filter(p)(X × D))) with D = S's values
and p = (x = s) IS NULL OR x = s (sql.lowering): a row of X that meets rows of D goes, one
that meets none stays. With D non-negative (every row rendered has a positive diff, so a row
that is there is one that exists) and X non-negative, that is

    Threshold(Union(ma(X), Negate(mm(Filter(p)(X × D))))) = ma(X LEFT ANTI JOIN D ON p)

which Spark runs, for p over one column, as a null-aware broadcast hash anti-join (a NULL in
D removes every row, a NULL x every row when D has any; `null_aware_anti`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from compute.plan import lir
from compute.plan.non_negative import non_negative
from compute.plan.refinements.rewrite import map_plan
from compute.render.rel import Rel, RenderContext, cname
from compute.render.scalar import render_scalar
from sql.scalar import CallBinary, CallUnary, CallVariadic, Column, Scalar, columns_used


def is_set(p: lir.Plan, set_lets: Mapping[str, bool]) -> bool:
    """Is p's output a set (no row twice, every diff 1)? Reduce::Distinct, and filters of it."""
    n = p.node
    match n:
        case lir.Reduce(plan=lir.ReduceDistinct()):
            return True
        case lir.ArrangeBy(input=i):
            return is_set(i, set_lets)
        case lir.MfpNode(input=i, mfp=m):
            return _keeps_rows(m) and is_set(i, set_lets)
        case lir.Get(id=i, mfp=m, local=True):
            return _keeps_rows(m) and set_lets.get(i, False)
        case _:
            return False


def _keeps_rows(m: lir.Mfp) -> bool:
    """An Mfp that only filters (rows of a set stay distinct)."""
    return not m.expressions and m.output == tuple(range(m.input_arity))


def keyed_by(eq: tuple[tuple[Scalar, ...], ...], offsets: list[int], k: int, others: set[int]) -> dict[int, Scalar] | None:
    """For each column of input k (join column numbering), a member of its equivalence class
    over the columns `others` alone; None unless every column of k has one."""
    cols = range(offsets[k], offsets[k + 1])
    out: dict[int, Scalar] = {}
    for cls in eq:
        mine = [x for x in cls if isinstance(x, Column) and x.index in cols]
        theirs = next((x for x in cls if columns_used(x) and columns_used(x) <= others), None)
        if theirs is not None:
            for c in mine:
                if c.typ == theirs.typ:  # the column takes the member's value, and type
                    out.setdefault(c.index, theirs)
    return out if all(c in out for c in cols) else None


def semi_inputs(eq, arities: tuple[int, ...], sets: list[bool], order: list[int]) -> dict[int, dict[int, Scalar]]:
    """The set inputs rendered as semi-joins, each with its key members: the sets fully keyed
    by the inputs that are joined (those that are not sets; the first of `order` when all
    are), so that every key is decided once those are joined."""
    offsets = [0]
    for a in arities:
        offsets.append(offsets[-1] + a)
    regular = [k for k in order if not sets[k]] or order[:1]
    others = {c for i in regular for c in range(offsets[i], offsets[i + 1])}
    chosen: dict[int, dict[int, Scalar]] = {}
    for k in order:
        if k in regular or arities[k] == 0:
            continue
        key = keyed_by(eq, offsets, k, others)
        if key is not None:
            chosen[k] = key
    return chosen


@dataclass(frozen=True, slots=True)
class Anti:
    """Union input `keep` = ma(X) and input `negated` = Negate(mm(X ⋈ D)): together ma(X ▷ D)."""

    keep: int
    negated: int
    x: lir.Plan  # X as the join reads it
    d: lir.Plan
    x_first: bool  # X is the join's first input
    eq: tuple[tuple[Scalar, ...], ...]
    arities: tuple[int, int]  # the join's inputs' (not X's and D's)
    projection: tuple[int, ...]  # ma's output over X's columns
    broadcast: bool  # the join's stage looking D up was a broadcast stage


def anti_sql(rx: Rel, rd: Rel, a: Anti, ctx: RenderContext) -> Rel:
    """ma(X LEFT ANTI JOIN D ON every equivalence, null-safe), with X's diffs."""
    xo, do = (0, a.arities[0]) if a.x_first else (a.arities[0], 0)
    nx, nd = (a.arities[0], a.arities[1]) if a.x_first else (a.arities[1], a.arities[0])
    allcols = [f"j{i}" for i in range(a.arities[0] + a.arities[1])]
    conds = [f"({render_scalar(cls[0], allcols)} <=> {render_scalar(x, allcols)})" for cls in a.eq for x in cls[1:]]
    xs, ds = ctx.alias(), ctx.alias()
    xsel = ", ".join([*(f"c{i} AS j{xo + i}" for i in range(nx)), "diff AS dx"])
    dsel = ", ".join(f"c{i} AS j{do + i}" for i in range(nd)) or "1 AS _unit"
    hint = f"/*+ BROADCAST({ds}) */ " if a.broadcast else ""
    sel = [f"j{xo + c} AS {cname(k)}" for k, c in enumerate(a.projection)] + ["dx AS diff"]
    q = (f"SELECT {hint}{', '.join(sel)} FROM (SELECT {xsel} FROM {ctx.sub(rx)}) AS {xs} "
         f"LEFT ANTI JOIN (SELECT {dsel} FROM {ctx.sub(rd)}) AS {ds} ON {' AND '.join(conds) or 'TRUE'}")
    return Rel(q, len(a.projection))


def _split(p: lir.Plan, arity: int) -> tuple[lir.Plan, lir.Mfp]:
    """p = mfp(base): a Get's own mfp, an Mfp node's, or the identity (p has `arity` columns)."""
    n = p.node
    match n:
        case lir.Get(mfp=m):
            return _strip(lir.Plan(p.node_id, lir.Get(n.id, n.name, n.types, "PassArrangements", lir.Mfp(len(n.types)), n.local))), m
        case lir.MfpNode(input=i, mfp=m):
            return _strip(i), m
        case _:
            return _strip(p), lir.Mfp(arity)


def _strip(p: lir.Plan) -> lir.Plan:
    """p with every node id 0 (plans compared by what they compute)."""
    return map_plan(p, lambda q: lir.Plan(0, q.node))


def anti_joins(inputs: tuple[lir.Plan, ...], set_lets: Mapping[str, bool]) -> list[Anti]:
    """The pairs of a Union's inputs that are one anti-join (see the module docstring)."""
    found: list[Anti] = []
    used: set[int] = set()
    for j, neg in enumerate(inputs):
        if not isinstance(neg.node, lir.Negate):
            continue
        top = neg.node.input
        if isinstance(top.node, lir.Join):  # X ⋈ D with D of no columns: X's columns already
            mm, jn = lir.Mfp(sum(top.node.arities)), top.node
        elif isinstance(top.node, lir.MfpNode) and isinstance(top.node.input.node, lir.Join):
            mm, jn = top.node.mfp, top.node.input.node
        else:
            continue
        if len(jn.inputs) != 2 or mm.expressions or mm.predicates:
            continue
        ins = jn.inputs
        for xi in (0, 1):
            di = 1 - xi
            if not is_set(ins[di], set_lets):
                continue
            ax = jn.arities[xi]
            offsets = [0, jn.arities[0], jn.arities[0] + jn.arities[1]]
            xcols = set(range(offsets[xi], offsets[xi + 1]))
            if keyed_by(jn.equivalences, offsets, di, xcols) is None:
                continue
            proj = mm.output
            if not all(c in xcols for c in proj):
                continue
            local = tuple(c - offsets[xi] for c in proj)
            xb, mx = _split(ins[xi], ax)
            composed = lir.Mfp(mx.input_arity, mx.expressions, mx.predicates, tuple(mx.output[c] for c in local))
            for i, keep in enumerate(inputs):
                if i == j or i in used or isinstance(keep.node, lir.Negate):
                    continue
                kb, mk = _split(keep, len(local))
                if kb == xb and _same_mfp(mk, composed):
                    bc = any(st.broadcast and st.lookup_relation == di for path in jn.paths[:1] for st in path.stages)
                    found.append(Anti(i, j, ins[xi], ins[di], xi == 0, jn.equivalences, (jn.arities[0], jn.arities[1]), local, bc))
                    used.update((i, j))
                    break
            if j in used:
                break
    return found


@dataclass(frozen=True, slots=True)
class NullAwareAnti:
    """Threshold(Union(ma(X), Negate(mm(Filter(p)(X × D))))) = ma(X LEFT ANTI JOIN D ON p)."""

    x: lir.Plan
    d: lir.Plan
    x_first: bool
    arities: tuple[int, int]  # the join's inputs'
    cmp: Scalar  # x = s over the join's columns (p = cmp IS NULL OR cmp)
    projection: tuple[int, ...]  # ma's output over X's columns
    threshold: bool  # X may hold negative rows: Threshold the result


def null_aware_anti(inp: lir.Plan, nonneg_lets: dict[str, bool]) -> NullAwareAnti | None:
    """The null-aware anti-join that Threshold(inp) is (see the module docstring), or None."""
    if not isinstance(inp.node, lir.Union) or len(inp.node.inputs) != 2:
        return None
    for j in (0, 1):
        keep, neg = inp.node.inputs[1 - j], inp.node.inputs[j]
        if not isinstance(neg.node, lir.Negate) or isinstance(keep.node, lir.Negate):
            continue
        top = neg.node.input
        if not isinstance(top.node, lir.MfpNode) or not isinstance(top.node.input.node, lir.Join):
            continue
        mm, jn = top.node.mfp, top.node.input.node
        if len(jn.inputs) != 2 or jn.equivalences or mm.expressions or len(mm.predicates) != 1:
            continue
        for xi in (0, 1):
            di = 1 - xi
            offsets = [0, jn.arities[0], jn.arities[0] + jn.arities[1]]
            xcols = set(range(offsets[xi], offsets[xi + 1]))
            dcols = set(range(offsets[di], offsets[di + 1]))
            cmp = _null_aware(mm.predicates[0], xcols, dcols)
            if cmp is None or not non_negative(jn.inputs[di], dict(nonneg_lets)) or not all(c in xcols for c in mm.output):
                continue
            local = tuple(c - offsets[xi] for c in mm.output)
            xb, mx = _split(jn.inputs[xi], jn.arities[xi])
            composed = lir.Mfp(mx.input_arity, mx.expressions, mx.predicates, tuple(mx.output[c] for c in local))
            kb, mk = _split(keep, len(local))
            if kb == xb and _same_mfp(mk, composed):
                nonneg = non_negative(jn.inputs[xi], dict(nonneg_lets))
                return NullAwareAnti(jn.inputs[xi], jn.inputs[di], xi == 0, (jn.arities[0], jn.arities[1]), cmp, local, not nonneg)
    return None


def _null_aware(p: Scalar, xcols: set[int], dcols: set[int]) -> Scalar | None:
    """cmp when p = (cmp IS NULL OR cmp) (either order), cmp = (a = b) with a over X's
    columns and b over D's (or the other way round); else None."""
    if not (isinstance(p, CallVariadic) and p.func == "or" and len(p.exprs) == 2):
        return None
    for u, c in (p.exprs, p.exprs[::-1]):
        if isinstance(u, CallUnary) and u.func == "is_null" and u.expr == c and isinstance(c, CallBinary) and c.func == "eq":
            a, b = columns_used(c.expr1), columns_used(c.expr2)
            if a and b and ((a <= xcols and b <= dcols) or (a <= dcols and b <= xcols)):
                return c
    return None


def null_aware_anti_sql(rx: Rel, rd: Rel, a: NullAwareAnti, ctx: RenderContext) -> Rel:
    """ma(X LEFT ANTI JOIN D ON (x = s) OR isnull(x = s)), with X's diffs: Spark's form of
    NOT IN, which it plans as a null-aware broadcast hash anti-join for one column."""
    xo, do = (0, a.arities[0]) if a.x_first else (a.arities[0], 0)
    nx, nd = (a.arities[0], a.arities[1]) if a.x_first else (a.arities[1], a.arities[0])
    allcols = [f"j{i}" for i in range(a.arities[0] + a.arities[1])]
    eq = render_scalar(a.cmp, allcols)
    xs, ds = ctx.alias(), ctx.alias()
    xsel = ", ".join([*(f"c{i} AS j{xo + i}" for i in range(nx)), "diff AS dx"])
    dsel = ", ".join(f"c{i} AS j{do + i}" for i in range(nd))
    sel = [f"j{xo + c} AS {cname(k)}" for k, c in enumerate(a.projection)] + ["dx AS diff"]
    q = (f"SELECT {', '.join(sel)} FROM (SELECT {xsel} FROM {ctx.sub(rx)}) AS {xs} "
         f"LEFT ANTI JOIN (SELECT {dsel} FROM {ctx.sub(rd)}) AS {ds} ON {eq} OR isnull({eq})")
    return Rel(q, len(a.projection))


def _same_mfp(a: lir.Mfp, b: lir.Mfp) -> bool:
    return (a.input_arity, a.expressions, a.predicates, a.output) == (b.input_arity, b.expressions, b.predicates, b.output)
