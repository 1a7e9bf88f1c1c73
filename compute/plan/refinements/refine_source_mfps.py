"""Reads of one source share their filters and columns: push them into the source import.

    Get(s, mfp_1), ..., Get(s, mfp_k)  =  Get(s', mfp_1'), ..., Get(s', mfp_k')

where s' = s filtered by the predicates *every* read applies (on source columns only) and
projected onto the columns some read still uses, and mfp_i' is mfp_i without those
predicates, renumbered onto s'. The source MFP is printed as the `Source <name>` block of
EXPLAIN and applied by the renderer while it reads the shard, so Spark pushes the filter
and the column pruning into the Parquet (or cached shard) scan. DESIGN §4.3 step 2.
"""

from __future__ import annotations

from dataclasses import replace

from compute.plan import lir
from compute.plan.refinements.rewrite import map_plan
from sql.scalar import Scalar, columns_used, permute


def refine_source_mfps(df: lir.Dataflow, flags) -> lir.Dataflow:
    reads: dict[str, list[lir.Mfp]] = {}
    arity: dict[str, int] = {}

    def collect(p: lir.Plan) -> lir.Plan:
        n = p.node
        if isinstance(n, lir.Get) and not n.local:
            reads.setdefault(n.id, []).append(n.mfp)
            arity[n.id] = len(n.types)
        return p

    map_plan(df.plan, collect)
    pushed: dict[str, tuple[lir.Mfp, tuple[int, ...]]] = {}
    for sid, mfps in reads.items():
        source = _source_mfp(mfps, arity[sid])
        if source is not None:
            pushed[sid] = source
    if not pushed:
        return df

    def rewrite(p: lir.Plan) -> lir.Plan:
        n = p.node
        if isinstance(n, lir.Get) and not n.local and n.id in pushed:
            source, kept = pushed[n.id]
            mfp = _reader_mfp(n.mfp, source.predicates, kept)
            strategy = "PassArrangements" if mfp.is_identity() else "Collection"
            return lir.Plan(p.node_id, replace(n, mfp=mfp, strategy=strategy))
        return p

    source_mfps = tuple((sid, m) for sid, (m, _) in pushed.items())
    return replace(df, plan=map_plan(df.plan, rewrite), source_mfps=source_mfps)


def _uses(m: lir.Mfp, skip: tuple[Scalar, ...], n: int) -> set[int]:
    """Source columns (< n) the read still needs once `skip` predicates are pushed."""
    used: set[int] = set()
    for e in m.expressions:
        columns_used(e, used)
    for p in m.predicates:
        if p not in skip:
            columns_used(p, used)
    used.update(m.output)
    return {c for c in used if c < n}


def _source_mfp(mfps: list[lir.Mfp], n: int) -> tuple[lir.Mfp, tuple[int, ...]] | None:
    first, rest = mfps[0], mfps[1:]
    common = tuple(p for p in dict.fromkeys(first.predicates)
                   if all(p in m.predicates for m in rest) and max(columns_used(p), default=-1) < n)
    kept = tuple(sorted(set().union(*(_uses(m, common, n) for m in mfps))))
    if not common and kept == tuple(range(n)):
        return None
    projection = None if kept == tuple(range(n)) else kept
    return lir.Mfp(n, (), common, projection), kept


def _reader_mfp(m: lir.Mfp, pushed: tuple[Scalar, ...], kept: tuple[int, ...]) -> lir.Mfp:
    n = m.input_arity
    mapping = {c: k for k, c in enumerate(kept)}
    mapping.update({n + j: len(kept) + j for j in range(len(m.expressions))})
    exprs = tuple(permute(e, mapping) for e in m.expressions)
    preds = tuple(permute(p, mapping) for p in m.predicates if p not in pushed)
    output = tuple(mapping[c] for c in m.output)
    projection = None if output == tuple(range(len(kept) + len(exprs))) else output
    return lir.Mfp(len(kept), exprs, preds, projection)
