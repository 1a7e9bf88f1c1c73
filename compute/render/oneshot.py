"""Rendering of single-time (one-shot) LIR dataflows on Spark (DESIGN §5.1, left column).

A collection is a relation with data columns c0..cN and `diff` (bigint). Consolidation = group
by all data columns, sum diff, drop zeros. Each LIR variant has its own strategy.

A dataflow renders to ONE Spark SQL query (nested subqueries), analysed once in the JVM:
building it with DataFrame/Column calls cost a py4j round trip per operation (about 1,800 for
a small join + group-by, ~250 ms before Spark did any work). Sources, persisted Let values and
large constants are global temporary views (`global_temp.<name>`), visible to every session
of the Spark context.

`WITH MUTUALLY RECURSIVE` (LIR LetRec) is the one place that runs Spark jobs while rendering:
its bindings are iterated to a fixpoint (compute/render/letrec.py), each iteration's values stored as local
checkpoints, and the body is rendered over the final values.
"""

from __future__ import annotations

from typing import assert_never

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from compute.plan import lir
from compute.plan.non_negative import non_negative
from compute.render import float_stats, outer_join, semijoin
from compute.render.aggregates import (
    EXPANDED_AGGREGATES,
    LIST_AGGREGATES,
    accumulated_sum,
    basic_aggregate,
    finish_aggregate,
    finish_cast,
    interval_sum,
    is_folded,
    jsonb_equality_key,
    minmax,
    nonnull_diff,
)
from compute.render.jsonb import checked
from compute.render.local_read import LOCAL_READ_ROWS, read_local
from compute.render.regex import render_matches
from compute.render.rel import (
    DIFF,
    Rel,
    RenderContext,
    check_non_negative,
    cname,
    cnames,
    consolidate,
    expand,
    mfp_columns,
    positive_check,
    select_rel,
    wrap,
)
from compute.render.scalar import render_scalar
from compute.render.spark_sql import lit, quote, raise_error, sql_type
from compute.render.types import spark_type
from sql.errors import (
    INTERNAL_ERROR,
    SqlError,
)
from sql.scalar import AggregateExpr, ColumnOrder
from sql.types import SqlType

INLINE_CONSTANT_ROWS = 2000


def _local_uses(p: lir.Plan, lid: str, ctx: RenderContext | None = None) -> int:
    """How many times rendering p reads binding `lid` (with ctx: as this module renders it)."""
    n = p.node
    if isinstance(n, lir.Get) and n.local and n.id == lid:
        return 1
    if ctx is not None and isinstance(n, lir.Let) and n.id not in ctx.let_plans:
        # the body as it renders once the binding is known; the value is read only if used
        _bind(ctx, n.id, n.value)
        try:
            body, inner = _local_uses(n.body, lid, ctx), _local_uses(n.body, n.id, ctx)
        finally:
            _unbind(ctx, n.id)
        return body + (_local_uses(n.value, lid, ctx) if inner else 0)
    return sum(_local_uses(c, lid, ctx) for c in _rendered_children(n, ctx))


def _rendered_children(n: lir.Node, ctx: RenderContext | None) -> list[lir.Plan]:
    """The inputs that rendering n renders: an anti-join renders its X once, not the Union
    input that keeps X's rows (compute.render.semijoin; the bindings in scope are those of
    ctx, so an anti-join recognised only once inner bindings are known counts both)."""
    from compute.plan.pipeline import lir_children

    if ctx is None:
        return list(lir_children(n))
    match n:
        case lir.Threshold(input=i) if (na := semijoin.null_aware_anti(i, ctx.nonneg_lets)) is not None:
            return [na.x, na.d]
        case lir.Union(inputs=ins):
            outers = {o.matched: o for o in _left_outer_joins(ins, ctx)}
            ins = tuple(x for k, x in enumerate(ins) if k not in outers and k not in {o.padded for o in outers.values()})
            pairs = {a.keep: a for a in semijoin.anti_joins(ins, ctx.set_lets)}
            skip = {a.negated for a in pairs.values()}
            return [*(c for o in outers.values() for c in (o.base, o.right)),
                    *(c for k, x in enumerate(ins) if k not in skip for c in ([pairs[k].x, pairs[k].d] if k in pairs else [x]))]
    return list(lir_children(n))


def _left_outer_joins(ins: tuple[lir.Plan, ...], ctx: RenderContext) -> list[outer_join.LeftOuter]:
    """The pairs of a Union's inputs rendered as one LEFT OUTER JOIN (compute.render.outer_join):
    those whose right side the planner broadcasts (known small). Spark cannot broadcast the
    preserved (left) side of an outer join, so over a large right side the outer join shuffles
    both inputs, where Materialize's plan can broadcast a small left side into its inner join
    (TPC-H q13 at SF 1 measured 2.0-2.2x spark.sql as one outer join, 1.3-1.8x as the plan)."""
    return [o for o in outer_join.left_outer_joins(ins, _scope(ctx)) if o.broadcast]


def _scope(ctx: RenderContext) -> outer_join.Scope:
    return outer_join.Scope(ctx.set_lets, ctx.let_plans, ctx.positive_lets)


def _bind(ctx: RenderContext, i: str, v: lir.Plan) -> None:
    """What the renderer knows of binding i = v while rendering its body."""
    ctx.set_lets[i] = semijoin.is_set(v, ctx.set_lets)
    ctx.nonneg_lets[i] = non_negative(v, dict(ctx.nonneg_lets))
    ctx.positive_lets[i] = outer_join.positive(v, _scope(ctx))
    ctx.let_plans[i] = v


def _unbind(ctx: RenderContext, i: str) -> None:
    for d in (ctx.set_lets, ctx.nonneg_lets, ctx.positive_lets, ctx.let_plans):
        del d[i]


def record_counts(ctx: RenderContext) -> dict[int, int]:
    """Records (data, diff rows) each observed node produced."""
    assert ctx.observed is not None
    return dict(sorted({**ctx.counted, **{nid: df.count() for nid, df in ctx.observed.items()}}.items()))


def constant_df(spark: SparkSession, rows, types: tuple[SqlType, ...]) -> DataFrame:
    """A local relation built through Arrow (no Python worker processes are involved)."""
    from catalog.storage.arrow_types import rows_to_arrow

    table = rows_to_arrow(types, [r for r, _ in rows], 0, [d for _, d in rows]).drop_columns(["time"])
    schema = T.StructType([T.StructField(cname(i), spark_type(t)) for i, t in enumerate(types)] + [T.StructField(DIFF, T.LongType())])
    return spark.createDataFrame(table, schema=schema)


def _constant(rows, types: tuple[SqlType, ...], ctx: RenderContext) -> Rel:
    n = len(types)
    if not rows:
        exprs = [f"{lit(None, t)} AS {cname(i)}" for i, t in enumerate(types)] + ["CAST(NULL AS BIGINT) AS diff"]
        return Rel(f"SELECT {', '.join(exprs)} FROM (SELECT 1) AS {ctx.alias()} WHERE FALSE", n)
    if len(rows) > INLINE_CONSTANT_ROWS:
        return Rel(ctx.view(constant_df(ctx.spark, rows, types), persist=False), n)
    values = ", ".join("(" + ", ".join([*(lit(v, t) for v, t in zip(row, types, strict=True)), f"CAST({int(d)} AS BIGINT)"]) + ")" for row, d in rows)
    return Rel(ctx.single(f"SELECT * FROM VALUES {values} AS {ctx.alias()}({', '.join([*cnames(n), DIFF])})"), n)


# a binding read several times over tiny inputs is repeated in the text up to this size
INLINE_LET_CHARS = 60_000


def apply_mfp(r: Rel, m: lir.Mfp, ctx: RenderContext) -> Rel:
    if m.is_identity():
        return r
    if ctx.time is not None:
        from compute.render import temporal

        t = temporal.split_temporal(m)
        if t is not None:  # a temporal filter of a dataflow rendered at one time
            return temporal.valid_at(temporal.bounded(r, t, ctx), ctx.time, ctx)
    r, cols = mfp_columns(r, m, ctx)
    preds = [render_scalar(p, cols) for p in m.predicates]
    exprs = [f"{cols[c]} AS {cname(k)}" for k, c in enumerate(m.output)]
    return select_rel(ctx, r, [*exprs, DIFF], preds)


def render(p: lir.Plan, ctx: RenderContext) -> Rel:
    r = _render(p, ctx)
    if ctx.observed is not None:
        r = ctx.materialize(r)
        ctx.observed[p.node_id] = ctx.persisted[-1][0]
    return r


def _render(p: lir.Plan, ctx: RenderContext) -> Rel:
    n = p.node
    match n:
        case lir.Constant(rows=rows, types=ts):
            return _constant(rows, ts, ctx)
        case lir.Get(id=i, types=ts, mfp=m, local=loc):
            if loc:
                r = ctx.lets[i]
            else:
                r = ctx.read_source(i, ts)
                if i in ctx.source_mfps:  # refine_source_mfps: pushed into the scan by Spark
                    r = apply_mfp(r, ctx.source_mfps[i], ctx)
            return apply_mfp(r, m, ctx)
        case lir.MfpNode(input=i, mfp=m):
            return apply_mfp(render(i, ctx), m, ctx)
        case lir.FlatMap(input=i, func=f, exprs=xs, types=ts):
            return _flat_map(render(i, ctx), f, xs, ts, ctx)
        case lir.Let(id=i, value=v, body=b):
            value = render(v, ctx)
            _bind(ctx, i, v)
            uses = _local_uses(b, i, ctx)
            if uses > 1 and ctx.observed is None and not (ctx.tiny() and uses * len(value.sql) <= INLINE_LET_CHARS):
                # computed once, read several times: without this Spark recomputes it at
                # every reference, exponentially in the nesting of such bindings. Over tiny
                # inputs recomputing is cheaper than a checkpoint (~30 ms of calls), as
                # long as the text stays small.
                value = ctx.materialize(value)
            ctx.lets[i] = value
            try:
                return render(b, ctx)
            finally:
                del ctx.lets[i]
                _unbind(ctx, i)
        case lir.Join(inputs=ins, equivalences=eq, arities=ar, paths=paths):
            sets = [semijoin.is_set(x, ctx.set_lets) for x in ins]
            return _join([render(x, ctx) for x in ins], eq, ar, paths, ctx, sets)
        case lir.Reduce(input=i, group_key=k, aggregates=aggs, plan=rp):
            return _reduce(render(i, ctx), k, aggs, rp, ctx)
        case lir.TopK(input=i, group_key=g, order_key=o, limit=lim, offset=off, plan=tp):
            return _topk(render(i, ctx), g, o, lim, off, tp, ctx)
        case lir.Negate(input=i):
            return negate(render(i, ctx), ctx)
        case lir.Threshold(input=i):
            if (na := semijoin.null_aware_anti(i, ctx.nonneg_lets)) is not None:
                out = semijoin.null_aware_anti_sql(render(na.x, ctx), render(na.d, ctx), na, ctx)
                return threshold(out, ctx) if na.threshold else out
            return threshold(render(i, ctx), ctx)
        case lir.Union(inputs=ins, consolidate_output=c):
            outers = _left_outer_joins(ins, ctx)
            joined = [outer_join.left_outer_sql(apply_mfp(render(o.base, ctx), lir.Mfp(o.base_arity, (), o.preds), ctx), render(o.right, ctx), o, ctx)
                      for o in outers]
            done = {k for o in outers for k in (o.matched, o.padded)}
            ins = tuple(x for k, x in enumerate(ins) if k not in done)
            if not ins:
                return joined[0] if len(joined) == 1 else union(joined, c, ctx)
            antis = semijoin.anti_joins(ins, ctx.set_lets)
            pairs = {a.keep: a for a in antis}
            skip = {a.negated for a in antis}
            parts = joined + [semijoin.anti_sql(render(pairs[k].x, ctx), render(pairs[k].d, ctx), pairs[k], ctx) if k in pairs else render(x, ctx)
                              for k, x in enumerate(ins) if k not in skip]
            return parts[0] if len(parts) == 1 else union(parts, c, ctx)
        case lir.ArrangeBy(input=i):
            return render(i, ctx)
        case lir.LetRec():
            from compute.render.letrec import render_letrec  # (it renders through this module)

            return render_letrec(n, ctx)
        case _:
            assert_never(n)


def negate(r: Rel, ctx: RenderContext) -> Rel:
    """-r: every diff negated."""
    return select_rel(ctx, r, [*cnames(r.arity), "(- diff) AS diff"])


def threshold(r: Rel, ctx: RenderContext) -> Rel:
    """The rows of positive multiplicity (consolidated)."""
    return select_rel(ctx, consolidate(r, ctx), [*cnames(r.arity), DIFF], ["diff > 0"])


def union(rs: list[Rel], consolidate_output: bool, ctx: RenderContext) -> Rel:
    """r1 + r2 + ... (consolidated if asked)."""
    out = Rel(ctx.single(" UNION ALL ".join(f"SELECT * FROM {ctx.sub(r)}" for r in rs)), rs[0].arity)
    return consolidate(out, ctx) if consolidate_output else out


def _flat_map(r: Rel, func: str, exprs, types: tuple[SqlType, ...], ctx: RenderContext) -> Rel:
    """Table functions: each input row ++ each output row, with the input row's diff."""
    cols = cnames(r.arity)
    if func == "unnest_list":
        (lst,) = exprs
        exploded = select_rel(ctx, r, [*cols, f"explode({render_scalar(lst, cols)}) AS __v", DIFF], arity=r.arity)
        return select_rel(ctx, exploded, [*cols, f"__v AS {cname(r.arity)}", DIFF])
    if func in ("unnest_array", "unnest_array_with_ordinality"):
        # NULL and empty arrays yield no rows, like Postgres
        arr = render_scalar(exprs[0], cols)
        if func == "unnest_array":
            return select_rel(ctx, r, [*cols, f"explode({arr}) AS {cname(r.arity)}", DIFF])
        exploded = select_rel(ctx, r, [*cols, f"posexplode({arr}) AS (__p, __v)", DIFF], arity=r.arity)
        return select_rel(ctx, exploded, [*cols, f"__v AS {cname(r.arity)}", f"CAST(__p + 1 AS BIGINT) AS {cname(r.arity + 1)}", DIFF])
    if func.startswith("jsonb_"):
        return _jsonb_flat_map(r, func, render_scalar(exprs[0], cols), ctx)
    if func == "regexp_matches":
        src, pattern, flags = exprs
        rows = render_matches(render_scalar(src, cols), pattern.value, flags.value)
        return select_rel(ctx, r, [*cols, f"explode({rows}) AS {cname(r.arity)}", DIFF])
    if func != "generate_series":
        raise SqlError(INTERNAL_ERROR, f"no rendering for table function {func}")
    start, stop, step = (f"CAST({render_scalar(e, cols)} AS BIGINT)" for e in exprs)
    # Postgres yields nothing when the bounds run against the step (Spark would count down)
    series = (
        f"(CASE WHEN {step} = 0 THEN {raise_error('[22023] step size cannot equal zero', 'array<bigint>')}"
        f" WHEN ({step} > 0 AND {start} <= {stop}) OR ({step} < 0 AND {start} >= {stop}) THEN sequence({start}, {stop}, {step})"
        " ELSE CAST(array() AS array<bigint>) END)"
    )
    exploded = select_rel(ctx, r, [*cols, f"explode({series}) AS __v", DIFF], arity=r.arity)
    return select_rel(ctx, exploded, [*cols, f"CAST(__v AS {sql_type(types[0])}) AS {cname(r.arity)}", DIFF])


def _jsonb_flat_map(r: Rel, func: str, j: str, ctx: RenderContext) -> Rel:
    """jsonb table functions: the UDF gives each row's output rows as [key, value] pairs (an
    error as one pair of tagged messages, raised where the row is produced)."""
    cols = cnames(r.arity)
    kind = {"jsonb_array_elements": "elements", "jsonb_array_elements_text": "elements_text",
            "jsonb_each": "each", "jsonb_each_text": "each_text", "jsonb_object_keys": "keys"}[func]
    exploded = select_rel(ctx, r, [*cols, f"explode(mz_jsonb_rows('{kind}', {j})) AS __v", DIFF], arity=r.arity)
    key, val = checked("__v[0]"), checked("__v[1]")
    outs = [f"{key} AS {cname(r.arity)}", f"{val} AS {cname(r.arity + 1)}"] if kind.startswith("each") else \
        [f"{val if kind != 'keys' else key} AS {cname(r.arity)}"]
    return select_rel(ctx, exploded, [*cols, *outs, DIFF])


def _join(rs: list[Rel], eq, arities: tuple[int, ...], paths: tuple[lir.JoinPath, ...], ctx: RenderContext,
          sets: list[bool] | None = None, in_place: bool = False) -> Rel:
    """Inner equi-join of all inputs; the output diff is the product of the input diffs.

    The inputs are joined in the order of the planner's first path (a delta join, in one
    shot, is its linear equivalent): the source, then one keyed join per stage, each ON the
    equivalences that the stage makes checkable (null-safe `<=>`, which Spark executes as
    join keys). Spark keeps this order (without cost-based reordering it only moves inputs
    that share no condition with their predecessors, and every stage shares one). A stage
    the planner marked `broadcast` (its lookup is small for certain) gets Spark's BROADCAST
    hint: the lookup is collected and sent to the stream's tasks, so the stream is neither
    shuffled nor sorted, and a chain of such stages runs in the stream's one pass.

    `sets`: which inputs are sets (compute.render.semijoin); a set fully keyed by the other
    inputs is a LEFT SEMI JOIN, as soon as the inputs joined so far decide its key, and its
    columns are the values of their key members (see that module's identities).

    `in_place`: every input is one partition (a maintained step's few keys): Spark's MERGE
    hint joins them where they are, in the one task that reads them, with no broadcast (a
    broadcast is a Spark job of its own) and no shuffle."""
    from sql.scalar import columns_used

    offsets = [0]
    for a in arities:
        offsets.append(offsets[-1] + a)
    order = [paths[0].source, *(st.lookup_relation for st in paths[0].stages)] if paths else list(range(len(rs)))
    semis = semijoin.semi_inputs(eq, arities, sets, order) if sets is not None else {}
    renamed, aliases = [], []
    for k, r in enumerate(rs):
        sel = [f"c{i} AS j{offsets[k] + i}" for i in range(arities[k])] + ([] if k in semis else [f"diff AS d{k}"])
        aliases.append(ctx.alias())
        renamed.append(f"(SELECT {', '.join(sel) or '1 AS _unit'} FROM {ctx.sub(r)}) AS {aliases[-1]}")
    broadcast = [aliases[st.lookup_relation] for st in paths[0].stages if st.broadcast] if paths else []
    total = offsets[-1]
    allcols = [f"j{i}" for i in range(total)]
    have: set[int] = set()

    def checkable(cols: set[int]) -> list[str]:
        """Conditions over the columns `cols` that the columns `have` did not decide yet."""
        conds = []
        for cls in eq:
            before = [x for x in cls if columns_used(x) <= have]
            new = [x for x in cls if columns_used(x) <= cols and x not in before]
            ref = before[0] if before else (new[0] if new else None)
            conds.extend(f"({render_scalar(ref, allcols)} <=> {render_scalar(x, allcols)})" for x in new if x is not ref)
        return conds

    def cols_of(k: int) -> set[int]:
        return set(range(offsets[k], offsets[k + 1]))

    joined = [k for k in order if k not in semis]
    pending = [k for k in order if k in semis]
    first = joined[0]
    cols = cols_of(first)
    source = renamed[first]
    where = checkable(cols)
    have = cols

    def semi_stages() -> str:
        """LEFT SEMI JOIN each pending set whose key the columns `have` now decide."""
        nonlocal have
        out = ""
        for k in [k for k in pending if all(columns_used(x) <= have for x in semis[k].values())]:
            pending.remove(k)
            conds = checkable(have | cols_of(k))
            out += f" LEFT SEMI JOIN {renamed[k]} ON {' AND '.join(conds) or 'TRUE'}"
            for c, x in semis[k].items():
                allcols[c] = f"({render_scalar(x, allcols)})"
            have = have | cols_of(k)
        return out

    source += semi_stages()
    for k in joined[1:]:
        cols = have | cols_of(k)
        conds = checkable(cols)
        source += f" JOIN {renamed[k]} ON {' AND '.join(conds)}" if conds else f" CROSS JOIN {renamed[k]}"
        have = cols
        source += semi_stages()
    assert not pending, "a semi-joined set's key is decided by the other inputs"
    diff = " * ".join(f"d{k}" for k in range(len(rs)) if k not in semis)
    sel = [f"{allcols[i]} AS {cname(i)}" for i in range(total)] + [f"({diff}) AS diff"]
    hint = f"/*+ MERGE({', '.join(aliases)}) */ " if in_place else f"/*+ BROADCAST({', '.join(broadcast)}) */ " if broadcast else ""
    q = f"SELECT {hint}{', '.join(sel)} FROM {source}"
    return Rel(q + (f" WHERE {' AND '.join(where)}" if where else ""), total)


def _keyed(r: Rel, key, ctx: RenderContext) -> tuple[Rel, list[str]]:
    """Evaluate the group key into columns k0..; keep the input columns. A jsonb key groups by
    its equality key (GROUP BY j puts 1.0 and 1 in one group, as jsonb `=` does), and its
    value r_i is one of the group's values (see _key_reps)."""
    cols = cnames(r.arity)
    kc = [f"k{i}" for i in range(len(key))]
    exprs = [*cols, DIFF]
    for i, k in enumerate(key):
        x = render_scalar(k, cols)
        if k.typ.name == "jsonb":
            exprs += [f"{jsonb_equality_key(x)} AS {kc[i]}", f"{x} AS r{i}"]
        else:
            exprs.append(f"{x} AS {kc[i]}")
    return Rel(f"SELECT {', '.join(exprs)} FROM {ctx.sub(r)}", r.arity), kc


def _key_reps(key) -> dict[str, str]:
    """The key columns grouped by an equality key -> the column holding their value."""
    return {f"k{i}": f"r{i}" for i, k in enumerate(key) if k.typ.name == "jsonb"}


def _grouped(ctx: RenderContext, keyed: Rel, kc: list[str], aggs: list[str], where: list[str], outputs: list[str],
             reps: dict[str, str] | None = None) -> Rel:
    """SELECT outputs, 1 AS diff FROM (SELECT kc, aggs FROM keyed GROUP BY kc) WHERE ...; a
    key in `reps` outputs the least of its group's values (any one of them is right)."""
    reps = reps or {}
    q = f"SELECT {', '.join([*kc, *aggs, *[f'MIN({v}) AS {v}' for v in reps.values()]])} FROM {ctx.sub(keyed)}"
    if kc:
        q += " GROUP BY " + ", ".join(kc)
    return grouped_outputs(ctx, Rel(q, 0), where, outputs, reps)


def grouped_outputs(ctx: RenderContext, grouped: Rel, where: list[str], outputs: list[str], reps: dict[str, str] | None = None) -> Rel:
    """The groups' output rows (diff 1) from the grouped aggregates (see _grouped)."""
    reps = reps or {}
    sel = [f"{reps.get(o, o)} AS {cname(i)}" for i, o in enumerate(outputs)] + ["CAST(1 AS BIGINT) AS diff"]
    return select_rel(ctx, grouped, sel, where)


def _reduce(r: Rel, key, aggs: tuple[AggregateExpr, ...], rp: lir.ReducePlan, ctx: RenderContext) -> Rel:
    match rp:
        case lir.ReduceDistinct():
            keyed, kc = _keyed(r, key, ctx)
            return _grouped(ctx, keyed, kc, ["SUM(diff) AS __n"], ["__n <> 0", positive_check("__n", "Distinct")], kc, _key_reps(key))
        case lir.ReduceAccumulable():
            return _accumulable(r, key, aggs, ctx)
        case lir.ReduceHierarchical(monotonic=True, must_consolidate=mc):
            return _hierarchical_monotonic(r, key, aggs, mc, ctx)
        case lir.ReduceHierarchical(monotonic=False, buckets=b):
            return _hierarchical_bucketed(r, key, aggs, b, ctx)
        case lir.ReduceBasic():
            return _basic_reduce(r, key, aggs, ctx)
        case _:
            assert_never(rp)


def _accumulable(r: Rel, key, aggs, ctx: RenderContext) -> Rel:
    keyed, kc, exprs, where, outs, reps = accumulable_parts(r, key, aggs, ctx)
    return _grouped(ctx, keyed, kc, exprs, where, outs, reps)


def accumulable_parts(r: Rel, key, aggs, ctx: RenderContext) -> tuple[Rel, list[str], list[str], list[str], list[str], dict[str, str]]:
    """Reduce::Accumulable as (keyed input, key columns, aggregates, filters, outputs, key
    representatives) for _grouped. Every aggregate is a diff-weighted SUM (`... AS name`),
    so the aggregates of a union are the sums of the parts' (maintained accumulators)."""
    cols = cnames(r.arity)
    keyed, kc = _keyed(r, key, ctx)
    exprs = ["SUM(diff) AS __n"]
    outs = list(kc)
    for j, a in enumerate(aggs):
        x = render_scalar(a.expr, cols)
        if a.func == "count":
            exprs.append(f"{nonnull_diff(x)} AS a{j}")
            outs.append(f"a{j}")
        else:  # sum
            st = sql_type(a.typ)
            exprs.append(f"{accumulated_sum(x, a.typ, a.expr.typ) if a.typ.name != 'interval' else interval_sum(x)} AS a{j}")
            exprs.append(f"{nonnull_diff(x)} AS nn{j}")
            outs.append(f"CAST((CASE WHEN nn{j} <> 0 THEN a{j} END) AS {st})")
    return keyed, kc, exprs, ["__n <> 0", positive_check("__n", "Reduce")], outs, _key_reps(key)


def _hierarchical_monotonic(r: Rel, key, aggs, must_consolidate: bool, ctx: RenderContext) -> Rel:
    """(consolidate if asked) + one min/max group-by with Spark's partial aggregation."""
    if must_consolidate:
        r = consolidate(r, ctx)
    cols = cnames(r.arity)
    keyed, kc = _keyed(r, key, ctx)
    exprs = [f"{minmax(render_scalar(a.expr, cols), a.func, a.typ)} AS a{j}" for j, a in enumerate(aggs)]
    exprs.append("MIN(diff) AS __mind")
    # no rows at all (global aggregate over empty input): Spark's all-null row is not a group
    msg = "tried to build a monotonic reduction on non-monotonic input"
    check = f"(CASE WHEN __mind > 0 THEN TRUE ELSE {raise_error(msg, 'boolean')} END)"
    return _grouped(ctx, keyed, kc, exprs, ["__mind IS NOT NULL", check], [*kc, *[f"a{j}" for j in range(len(aggs))]],
                    _key_reps(key))


def _hierarchical_bucketed(r: Rel, key, aggs, buckets: tuple[int, ...], ctx: RenderContext) -> Rel:
    """Consolidate, then one min/max group-by per bucket level on (key, hash % b), then final."""
    c = check_non_negative(consolidate(r, ctx), "hierarchical Reduce", ctx)
    cols = cnames(c.arity)
    keyed, kc = _keyed(c, key, ctx)
    vs = [f"v{j}" for j in range(len(aggs))]
    hashed = "xxhash64(" + ", ".join(["0", *cols]) + ") AS __h"
    reps = _key_reps(key)
    first = [*kc, *reps.values(), *[f"{render_scalar(a.expr, cols)} AS v{j}" for j, a in enumerate(aggs)], hashed]
    vals = f"SELECT {', '.join(first)} FROM {ctx.sub(keyed)}"
    for b in buckets:
        level = [*kc, f"pmod(__h, {b}) AS __h", *[f"MIN({v}) AS {v}" for v in reps.values()],
                 *[f"{minmax(v, a.func, a.typ)} AS {v}" for v, a in zip(vs, aggs, strict=True)]]
        by = ", ".join([*kc, f"pmod(__h, {b})"])
        vals = f"SELECT {', '.join(level)} FROM ({vals}) AS {ctx.alias()} GROUP BY {by}"
    final = [f"{minmax(v, a.func, a.typ)} AS {v}" for v, a in zip(vs, aggs, strict=True)] + ["COUNT(1) AS __n"]
    # a global aggregate over empty input has no group
    return _grouped(ctx, Rel(vals, 0), kc, final, ["__n > 0"], [*kc, *vs], reps)


def _basic_reduce(r: Rel, key, aggs, ctx: RenderContext) -> Rel:
    """Consolidate, then evaluate every aggregate with diff weights (distinct ones ignore them);
    aggregates that see each unit of multiplicity get the rows expanded to diff = 1."""
    if any(a.window is not None for a in aggs):
        from compute.render.windows import window_reduce

        return window_reduce(r, key, aggs, ctx)
    c = check_non_negative(consolidate(r, ctx), "Reduce", ctx)
    if any((a.func in EXPANDED_AGGREGATES or is_folded(a)) and not a.distinct for a in aggs):
        c = expand(c, ctx)
    cols = cnames(c.arity)
    keyed, kc = _keyed(c, key, ctx)
    exprs = ["SUM(diff) AS __n"]
    outs = list(kc)
    for j, a in enumerate(aggs):
        raw = basic_aggregate(a, render_scalar(a.expr, cols))
        if a.func in LIST_AGGREGATES or a.func in float_stats.FOLDED:
            exprs.append(f"{raw} AS a{j}")
            outs.append(finish_cast(a, finish_aggregate(a, f'a{j}')))
        else:
            exprs.append(f"CAST({raw} AS {sql_type(a.typ)}) AS a{j}")
            outs.append(f"a{j}")
    return _grouped(ctx, keyed, kc, exprs, ["__n <> 0"], outs, _key_reps(key))


def order_sql(order: tuple[ColumnOrder, ...]) -> str:
    return ", ".join(f"{cname(o.column)} {'DESC' if o.desc else 'ASC'} NULLS {'LAST' if o.nulls_last else 'FIRST'}" for o in order)


def _topk(r: Rel, group, order, limit, offset, tp: lir.TopKPlan, ctx: RenderContext) -> Rel:
    g = [cname(c) for c in group]
    match tp:
        case lir.TopKMonotonicTop1(must_consolidate=mc):
            if mc:
                r = consolidate(r, ctx)
            return _top1(check_non_negative(r, "monotonic top-k", ctx), g, order, ctx)
        case lir.TopKMonotonicTopK(must_consolidate=mc):
            if mc:
                r = consolidate(r, ctx)
            rows = expand(check_non_negative(r, "monotonic top-k", ctx), ctx, limit)
            return _window_topk(rows, g, order, 0, limit, ctx)
        case lir.TopKBasic(buckets=buckets):
            rows = expand(check_non_negative(consolidate(r, ctx), "top-k", ctx), ctx, None if limit is None else limit + offset)
            if limit is not None:
                cols = cnames(rows.arity)
                hargs = ", ".join([*cols, "monotonically_increasing_id()"])
                hashed = f"SELECT *, xxhash64({hargs}) AS __h FROM {ctx.sub(rows)}"
                keep = ", ".join([*cols, DIFF, "__h"])
                for b in buckets:
                    part = ", ".join([*g, f"pmod(__h, {b})"])
                    w = f"row_number() OVER (PARTITION BY {part} ORDER BY {_order_or_id(order)})"
                    inner = f"SELECT *, {w} AS __rn FROM ({hashed}) AS {ctx.alias()}"
                    hashed = f"SELECT {keep} FROM ({inner}) AS {ctx.alias()} WHERE __rn <= {limit + offset}"
                rows = wrap(ctx, hashed, rows.arity, [])
            return _window_topk(rows, g, order, offset, limit, ctx)
        case _:
            assert_never(tp)


def _order_or_id(order) -> str:
    return order_sql(order) if order else "monotonically_increasing_id()"


def _window_topk(rows: Rel, g: list[str], order, offset: int, limit: int | None, ctx: RenderContext) -> Rel:
    if not g and limit is not None:
        # no grouping: Spark's TakeOrderedAndProject does a per-partition top-k then a final one
        q = f"SELECT * FROM {ctx.sub(rows)}" + (f" ORDER BY {order_sql(order)}" if order else "") + f" LIMIT {offset + limit}"
        if not offset:
            return Rel(q, rows.arity)
        numbered = f"SELECT *, row_number() OVER (ORDER BY {_order_or_id(order)}) AS __rn FROM ({q}) AS {ctx.alias()}"
        return wrap(ctx, numbered, rows.arity, [f"__rn > {offset}"])
    part = f"PARTITION BY {', '.join(g)} " if g else ""
    numbered = f"SELECT *, row_number() OVER ({part}ORDER BY {_order_or_id(order)}) AS __rn FROM {ctx.sub(rows)}"
    cond = [f"__rn > {offset}"] + ([f"__rn <= {offset + limit}"] if limit is not None else [])
    return wrap(ctx, numbered, rows.arity, cond)


def _top1(r: Rel, g: list[str], order, ctx: RenderContext) -> Rel:
    """One aggregate per group, no sort: min/max of a struct whose fields order as asked."""
    dirs = {o.desc for o in order}
    if len(dirs) > 1:
        return _window_topk(expand(r, ctx, 1), g, order, 0, 1, ctx)
    desc = dirs == {True}
    cols = cnames(r.arity)
    fields = []
    for k, o in enumerate(order):
        c = cname(o.column)
        # under min() (asc) a true flag sorts later; under max() (desc) it sorts earlier
        flag = f"({c} IS NULL)" if (o.nulls_last != desc) else f"({c} IS NOT NULL)"
        fields += [f"'n{k}', {flag}", f"'o{k}', {c}"]
    payload = "named_struct(" + ", ".join([*fields, *[f"{quote(c)}, {c}" for c in cols]]) + ")"
    q = f"SELECT {'MAX' if desc else 'MIN'}({payload}) AS __best FROM {ctx.sub(r)}"
    if g:
        q += " GROUP BY " + ", ".join(g)
    return select_rel(ctx, Rel(q, 0), [*[f"__best.{c} AS {c}" for c in cols], "CAST(1 AS BIGINT) AS diff"],
                   [] if g else ["__best IS NOT NULL"])


def finish(r: Rel, fin: lir.Finishing | None, ctx: RenderContext) -> str:
    """The query's ORDER BY / LIMIT (the rest of the finishing is applied to the rows)."""
    if fin is None or (not fin.order_by and fin.limit is None):
        return r.sql
    q = f"SELECT * FROM {ctx.sub(r)}"
    if fin.order_by:
        q += f" ORDER BY {order_sql(fin.order_by)}"
    if fin.limit is not None:
        q += f" LIMIT {fin.offset + fin.limit}"
    return q


def read_shard(spark: SparkSession, paths: list[str], types: tuple[SqlType, ...], as_of: int, has_retractions: bool) -> DataFrame:
    """A table's contents at `as_of`: its updates at times <= as_of (filters pushed down to the
    Parquet reader); consolidated only when the shard holds retractions."""
    return read_shard_range(spark, paths, types, None, as_of, has_retractions)


def read_shard_range(spark: SparkSession, paths: list[str], types: tuple[SqlType, ...], after: int | None, upto: int,
                     has_retractions: bool = True, rows: int | None = None) -> DataFrame:
    """A shard's updates with `after < time <= upto` (`after` None: no lower bound; a
    maintained dataflow's step input), untimed; consolidated only when the batches hold
    retractions (every rendering takes an insert-only input's duplicate rows as they are).
    `rows`: the batches' row count, when known (a step's input); a few rows are read in the
    driver as a local relation (compute.render.local_read)."""
    if not paths:
        return constant_df(spark, (), types)
    schema = T.StructType(
        [T.StructField(cname(i), spark_type(t)) for i, t in enumerate(types)]
        + [T.StructField("time", T.LongType()), T.StructField(DIFF, T.LongType())]
    )
    if rows is not None and rows <= LOCAL_READ_ROWS:
        return read_local(spark, paths, T.StructType([f for f in schema.fields if f.name != "time"]), after, upto, has_retractions)
    t = F.col("time")
    within = t <= F.lit(upto) if after is None else (t > F.lit(after)) & (t <= F.lit(upto))
    df = spark.read.schema(schema).parquet(*paths).where(within).drop("time")
    if not has_retractions:
        return df
    cols = [c for c in df.columns if c != DIFF]
    return df.groupBy(*cols).agg(F.sum(DIFF).alias(DIFF)).where(F.col(DIFF) != 0)


def arrow_rows(table, types: tuple[SqlType, ...]) -> list[tuple[tuple, int]]:
    """Collected Arrow table (c0..cN, diff) -> [(row, diff)] of Python values."""
    from compute.render.types import from_arrow_value

    cols = []
    for i, t in enumerate(types):
        vals = table.column(cname(i)).to_pylist()
        if t.name in ("interval", "time", "uuid", "timestamptz", "timestamp", "numeric", "record") or t.element is not None:
            vals = [from_arrow_value(v, t) for v in vals]
        cols.append(vals)
    diffs = table.column(DIFF).to_pylist()
    if not cols:
        return [((), d) for d in diffs]
    return list(zip(zip(*cols, strict=True), diffs, strict=True))
