"""Rendering of single-time (one-shot) LIR dataflows on Spark (DESIGN §5.1, left column).

A collection is a DataFrame with data columns c0..cN and `diff` (bigint). Consolidation =
group by all data columns, sum diff, drop zeros. Each LIR variant has its own strategy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import assert_never

from pyspark.sql import Column as SCol
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from compute.plan import lir
from compute.render.scalar import render_scalar
from compute.render.types import spark_type
from sql.errors import INTERNAL_ERROR, SqlError
from sql.scalar import AggregateExpr, ColumnOrder
from sql.types import SqlType

DIFF = "diff"


def cname(i: int) -> str:
    return f"c{i}"


def data_cols(df: DataFrame) -> list[str]:
    return [c for c in df.columns if c != DIFF]


def consolidate(df: DataFrame) -> DataFrame:
    """Sum diffs of equal rows and drop zeros."""
    cols = data_cols(df)
    if not cols:
        return df.agg(F.sum(DIFF).alias(DIFF)).where(F.col(DIFF) != 0)
    return df.groupBy(*cols).agg(F.sum(DIFF).alias(DIFF)).where(F.col(DIFF) != 0)


def check_non_negative(df: DataFrame, what: str) -> DataFrame:
    """Fail the query if a negative multiplicity reaches an operator that cannot take it."""
    msg = f"Non-positive multiplicity in {what}"
    return df.withColumn(DIFF, F.when(F.col(DIFF) > 0, F.col(DIFF)).otherwise(F.raise_error(F.lit(msg)).cast("long")))


@dataclass
class RenderContext:
    spark: SparkSession
    read_source: Callable[[str, tuple[SqlType, ...]], DataFrame]
    lets: dict[str, DataFrame] = field(default_factory=dict)
    # EXPLAIN ANALYZE: every node's output, persisted, by node id
    observed: dict[int, DataFrame] | None = None
    # Let values read more than once, persisted for this query; freed by release()
    persisted: list[DataFrame] = field(default_factory=list)

    def release(self) -> None:
        for df in self.persisted:
            df.unpersist()
        self.persisted.clear()


def _local_uses(p: lir.Plan, lid: str) -> int:
    from compute.plan.pipeline import lir_children

    n = p.node
    if isinstance(n, lir.Get) and n.local and n.id == lid:
        return 1
    return sum(_local_uses(c, lid) for c in lir_children(n))


def record_counts(ctx: RenderContext) -> dict[int, int]:
    """Records (data, diff rows) each observed node produced; frees the persisted outputs."""
    assert ctx.observed is not None
    counts = {nid: df.count() for nid, df in sorted(ctx.observed.items())}
    for df in ctx.observed.values():
        df.unpersist()
    return counts


def empty(spark: SparkSession, types: tuple[SqlType, ...]) -> DataFrame:
    return constant(spark, (), types)


def constant(spark: SparkSession, rows, types: tuple[SqlType, ...]) -> DataFrame:
    """A local relation built through Arrow (no Python worker processes are involved)."""
    from catalog.storage.arrow_types import rows_to_arrow

    table = rows_to_arrow(types, [r for r, _ in rows], 0, [d for _, d in rows]).drop_columns(["time"])
    schema = T.StructType([T.StructField(cname(i), spark_type(t)) for i, t in enumerate(types)] + [T.StructField(DIFF, T.LongType())])
    return spark.createDataFrame(table, schema=schema)


def apply_mfp(df: DataFrame, m: lir.Mfp) -> DataFrame:
    if m.is_identity():
        return df
    cols: list[SCol] = [F.col(cname(i)) for i in range(m.input_arity)]
    # Expressions are rendered inline (Catalyst eliminates common subexpressions).
    for e in m.expressions:
        cols.append(render_scalar(e, cols))
    out = df
    for p in m.predicates:
        out = out.where(render_scalar(p, cols))
    return out.select(*[cols[c].alias(cname(k)) for k, c in enumerate(m.output)], F.col(DIFF))


def render(p: lir.Plan, ctx: RenderContext) -> DataFrame:
    df = _render(p, ctx)
    if ctx.observed is not None:
        df = df.persist()
        ctx.observed[p.node_id] = df
    return df


def _render(p: lir.Plan, ctx: RenderContext) -> DataFrame:
    n = p.node
    match n:
        case lir.Constant(rows=rows, types=ts):
            return constant(ctx.spark, rows, ts)
        case lir.Get(id=i, types=ts, mfp=m, local=loc):
            df = ctx.lets[i] if loc else ctx.read_source(i, ts)
            return apply_mfp(df, m)
        case lir.MfpNode(input=i, mfp=m):
            return apply_mfp(render(i, ctx), m)
        case lir.FlatMap(input=i, func=f, exprs=xs, types=ts):
            return _flat_map(render(i, ctx), f, xs, ts)
        case lir.Let(id=i, value=v, body=b):
            value = render(v, ctx)
            if _local_uses(b, i) > 1 and (ctx.observed is None or p.node_id not in ctx.observed):
                # computed once, read several times: without this Spark recomputes it at
                # every reference, exponentially in the nesting of such bindings
                value = value.persist()
                ctx.persisted.append(value)
            ctx.lets[i] = value
            try:
                return render(b, ctx)
            finally:
                del ctx.lets[i]
        case lir.Join(inputs=ins, equivalences=eq, arities=ar):
            return _join([render(x, ctx) for x in ins], eq, ar)
        case lir.Reduce(input=i, group_key=k, aggregates=aggs, plan=rp):
            return _reduce(render(i, ctx), k, aggs, rp)
        case lir.TopK(input=i, group_key=g, order_key=o, limit=lim, offset=off, plan=tp):
            return _topk(render(i, ctx), g, o, lim, off, tp)
        case lir.Negate(input=i):
            df = render(i, ctx)
            return df.withColumn(DIFF, -F.col(DIFF))
        case lir.Threshold(input=i):
            return consolidate(render(i, ctx)).where(F.col(DIFF) > 0)
        case lir.Union(inputs=ins, consolidate_output=c):
            dfs = [render(x, ctx) for x in ins]
            out = dfs[0]
            for d in dfs[1:]:
                out = out.unionAll(d)
            return consolidate(out) if c else out
        case lir.ArrangeBy(input=i):
            return render(i, ctx)
        case _:
            assert_never(n)


def _flat_map(df: DataFrame, func: str, exprs, types: tuple[SqlType, ...]) -> DataFrame:
    """Table functions: each input row ++ each output row, with the input row's diff."""
    cols = data_cols(df)
    args = [render_scalar(e, [F.col(c) for c in cols]) for e in exprs]
    if func != "generate_series":
        raise SqlError(INTERNAL_ERROR, f"no rendering for table function {func}")
    start, stop, step = (a.cast("long") for a in args)
    zero_step = F.raise_error(F.lit("[22023] step size cannot equal zero"))
    # Postgres yields nothing when the bounds run against the step (Spark would count down)
    series = (
        F.when(step == 0, zero_step.cast("array<bigint>"))
        .when(((step > 0) & (start <= stop)) | ((step < 0) & (start >= stop)), F.sequence(start, stop, step))
        .otherwise(F.array().cast("array<bigint>"))
    )
    out = df.select(*[F.col(c) for c in cols], F.explode(series).alias("__v"), F.col(DIFF))
    return out.select(*[F.col(c) for c in cols], F.col("__v").cast(spark_type(types[0])).alias(cname(len(cols))), F.col(DIFF))


def _join(dfs: list[DataFrame], eq, arities: tuple[int, ...]) -> DataFrame:
    """Inner equi-join of all inputs; the output diff is the product of the input diffs."""
    offsets = [0]
    for a in arities:
        offsets.append(offsets[-1] + a)
    renamed = []
    for k, df in enumerate(dfs):
        sel = [F.col(cname(i)).alias(f"j{offsets[k] + i}") for i in range(arities[k])] + [F.col(DIFF).alias(f"d{k}")]
        renamed.append(df.select(*sel))
    total = offsets[-1]
    allcols = [F.col(f"j{i}") for i in range(total)]
    out = renamed[0]
    joined_upto = arities[0]
    pending = list(eq)
    for k in range(1, len(renamed)):
        joined_upto += arities[k]
        conds: list[SCol] = []
        rest = []
        for cls in pending:
            from sql.scalar import columns_used

            if all(max(columns_used(x), default=-1) < joined_upto for x in cls):
                rendered = [render_scalar(x, allcols) for x in cls]
                conds.extend(rendered[0].eqNullSafe(r) for r in rendered[1:])
            else:
                rest.append(cls)
        pending = rest
        if conds:
            cond = conds[0]
            for c in conds[1:]:
                cond = cond & c
            out = out.join(renamed[k], on=cond, how="inner")
        else:
            out = out.crossJoin(renamed[k])
    diff = F.col("d0")
    for k in range(1, len(renamed)):
        diff = diff * F.col(f"d{k}")
    return out.select(*[F.col(f"j{i}").alias(cname(i)) for i in range(total)], diff.alias(DIFF))


def _keyed(df: DataFrame, key) -> tuple[DataFrame, list[str]]:
    """Evaluate the group key into columns k0..; keep the input columns."""
    cols = [F.col(c) for c in data_cols(df)]
    keyed = df.select(*cols, F.col(DIFF), *[render_scalar(k, cols).alias(f"k{i}") for i, k in enumerate(key)])
    return keyed, [f"k{i}" for i in range(len(key))]


def _reduce(df: DataFrame, key, aggs: tuple[AggregateExpr, ...], rp: lir.ReducePlan) -> DataFrame:
    match rp:
        case lir.ReduceDistinct():
            keyed, kc = _keyed(df, key)
            out = keyed.groupBy(*kc).agg(F.sum(DIFF).alias("__n"))
            out = out.where(F.col("__n") != 0)
            out = check_non_negative(out.withColumnRenamed("__n", DIFF), "Distinct")
            return out.select(*[F.col(k).alias(cname(i)) for i, k in enumerate(kc)], F.lit(1).cast("long").alias(DIFF))
        case lir.ReduceAccumulable():
            return _accumulable(df, key, aggs)
        case lir.ReduceHierarchical(monotonic=True, must_consolidate=mc):
            return _hierarchical_monotonic(df, key, aggs, mc)
        case lir.ReduceHierarchical(monotonic=False, buckets=b):
            return _hierarchical_bucketed(df, key, aggs, b)
        case lir.ReduceBasic():
            return _basic_reduce(df, key, aggs)
        case _:
            assert_never(rp)


def _agg_input(df_cols: list[SCol], a: AggregateExpr) -> SCol:
    return render_scalar(a.expr, df_cols)


def _accumulable(df: DataFrame, key, aggs) -> DataFrame:
    cols = [F.col(c) for c in data_cols(df)]
    keyed, kc = _keyed(df, key)
    exprs = [F.sum(DIFF).alias("__n")]
    d = F.col(DIFF)
    for j, a in enumerate(aggs):
        x = _agg_input(cols, a)
        if a.func == "count":
            exprs.append(F.sum(F.when(x.isNotNull(), d).otherwise(F.lit(0))).alias(f"a{j}"))
        else:  # sum
            st = spark_type(a.typ)
            xv = x.cast(st)
            exprs.append(F.sum(xv * d.cast(st) if a.typ.name not in ("interval",) else xv).alias(f"a{j}"))
            exprs.append(F.sum(F.when(x.isNotNull(), d).otherwise(F.lit(0))).alias(f"nn{j}"))
    out = keyed.groupBy(*kc).agg(*exprs).where(F.col("__n") != 0)
    sel = [F.col(k).alias(cname(i)) for i, k in enumerate(kc)]
    for j, a in enumerate(aggs):
        c = F.col(f"a{j}")
        if a.func == "sum":
            c = F.when(F.col(f"nn{j}") != 0, c).cast(spark_type(a.typ))
        sel.append(c.alias(cname(len(kc) + j)))
    out = check_non_negative(out.withColumnRenamed("__n", DIFF), "Reduce")
    return out.select(*sel, F.lit(1).cast("long").alias(DIFF))


def _minmax(x: SCol, func: str) -> SCol:
    return F.min(x) if func == "min" else F.max(x)


def _hierarchical_monotonic(df: DataFrame, key, aggs, must_consolidate: bool) -> DataFrame:
    """(consolidate if asked) + one min/max group-by with Spark's partial aggregation."""
    if must_consolidate:
        df = consolidate(df)
    cols = [F.col(c) for c in data_cols(df)]
    keyed, kc = _keyed(df, key)
    exprs = [_minmax(_agg_input(cols, a), a.func).alias(f"a{j}") for j, a in enumerate(aggs)]
    exprs.append(F.min(DIFF).alias("__mind"))
    out = keyed.groupBy(*kc).agg(*exprs)
    # no rows at all (global aggregate over empty input): Spark's all-null row is not a group
    out = out.where(F.col("__mind").isNotNull())
    msg = "tried to build a monotonic reduction on non-monotonic input"
    out = out.where(F.when(F.col("__mind") > 0, F.lit(True)).otherwise(F.raise_error(F.lit(msg)).cast("boolean")))
    return out.select(*[F.col(k).alias(cname(i)) for i, k in enumerate(kc)], *[F.col(f"a{j}").alias(cname(len(kc) + j)) for j in range(len(aggs))], F.lit(1).cast("long").alias(DIFF))


def _hierarchical_bucketed(df: DataFrame, key, aggs, buckets: tuple[int, ...]) -> DataFrame:
    """Consolidate, then one min/max group-by per bucket level on (key, hash % b), then final."""
    cdf = consolidate(df)
    cdf = check_non_negative(cdf, "hierarchical Reduce")
    cols = [F.col(c) for c in data_cols(cdf)]
    keyed, kc = _keyed(cdf, key)
    vals = keyed.select(*kc, *[_agg_input(cols, a).alias(f"v{j}") for j, a in enumerate(aggs)], F.xxhash64(*[F.col(c) for c in data_cols(cdf)]).alias("__h"))
    for b in buckets:
        vals = vals.groupBy(*kc, F.pmod(F.col("__h"), F.lit(b)).alias("__h")).agg(
            *[_minmax(F.col(f"v{j}"), a.func).alias(f"v{j}") for j, a in enumerate(aggs)]
        )
    out = vals.groupBy(*kc).agg(*[_minmax(F.col(f"v{j}"), a.func).alias(f"v{j}") for j, a in enumerate(aggs)],
                                F.count(F.lit(1)).alias("__n"))
    out = out.where(F.col("__n") > 0)  # a global aggregate over empty input has no group
    return out.select(*[F.col(k).alias(cname(i)) for i, k in enumerate(kc)], *[F.col(f"v{j}").alias(cname(len(kc) + j)) for j in range(len(aggs))], F.lit(1).cast("long").alias(DIFF))


def _basic_reduce(df: DataFrame, key, aggs) -> DataFrame:
    """Consolidate, then evaluate every aggregate with diff weights (distinct ones ignore them)."""
    cdf = check_non_negative(consolidate(df), "Reduce")
    cols = [F.col(c) for c in data_cols(cdf)]
    keyed, kc = _keyed(cdf, key)
    d = F.col(DIFF)
    exprs = []
    for j, a in enumerate(aggs):
        x = _agg_input(cols, a)
        st = spark_type(a.typ)
        match a.func, a.distinct:
            case "count", False:
                e = F.sum(F.when(x.isNotNull(), d).otherwise(F.lit(0)))
            case "count", True:
                e = F.count_distinct(x)
            case "sum", False:
                e = F.sum(x.cast(st) * d.cast(st))
            case "sum", True:
                e = F.sum_distinct(x.cast(st))
            case ("min" | "max"), _:
                e = _minmax(x, a.func)
            case "bool_or", _:
                e = F.bool_or(x)
            case "bool_and", _:
                e = F.bool_and(x)
            case "any_value", _:
                e = F.any_value(x, ignoreNulls=False)
            case _:
                raise SqlError(INTERNAL_ERROR, f"aggregate {a.func} has no Basic rendering")
        exprs.append(e.cast(st).alias(f"a{j}"))
    out = keyed.groupBy(*kc).agg(F.sum(DIFF).alias("__n"), *exprs).where(F.col("__n") != 0)
    return out.select(*[F.col(k).alias(cname(i)) for i, k in enumerate(kc)], *[F.col(f"a{j}").alias(cname(len(kc) + j)) for j in range(len(aggs))], F.lit(1).cast("long").alias(DIFF))


def order_cols(order: tuple[ColumnOrder, ...]) -> list[SCol]:
    out = []
    for o in order:
        c = F.col(cname(o.column))
        if o.desc:
            out.append(c.desc_nulls_last() if o.nulls_last else c.desc_nulls_first())
        else:
            out.append(c.asc_nulls_last() if o.nulls_last else c.asc_nulls_first())
    return out


def expand(df: DataFrame, cap: int | None = None) -> DataFrame:
    """One row per unit of (positive) multiplicity, at most `cap` copies of a row."""
    n = F.col(DIFF) if cap is None else F.least(F.col(DIFF), F.lit(cap))
    return df.withColumn("__rep", F.explode(F.sequence(F.lit(1), n))).drop("__rep").withColumn(DIFF, F.lit(1).cast("long"))


def _topk(df: DataFrame, group, order, limit, offset, tp: lir.TopKPlan) -> DataFrame:
    g = [F.col(cname(c)) for c in group]
    cols = data_cols(df)
    match tp:
        case lir.TopKMonotonicTop1(must_consolidate=mc):
            if mc:
                df = consolidate(df)
            df = check_non_negative(df, "monotonic top-k")
            return _top1(df, g, order, cols)
        case lir.TopKMonotonicTopK(must_consolidate=mc):
            if mc:
                df = consolidate(df)
            df = check_non_negative(df, "monotonic top-k")
            k = limit if limit is not None else None
            rows = expand(df, k)
            return _window_topk(rows, g, order, 0, k)
        case lir.TopKBasic(buckets=buckets):
            cdf = check_non_negative(consolidate(df), "top-k")
            rows = expand(cdf, None if limit is None else limit + offset)
            if limit is not None:
                rows = rows.withColumn("__h", F.xxhash64(*[F.col(c) for c in cols], F.monotonically_increasing_id()))
                for b in buckets:
                    part = g + [F.pmod(F.col("__h"), F.lit(b))]
                    w = Window.partitionBy(*part).orderBy(*order_cols(order))
                    rows = rows.withColumn("__rn", F.row_number().over(w)).where(F.col("__rn") <= limit + offset).drop("__rn")
                rows = rows.drop("__h")
            return _window_topk(rows, g, order, offset, limit)
        case _:
            assert_never(tp)


def _window_topk(rows: DataFrame, g: list[SCol], order, offset: int, limit: int | None) -> DataFrame:
    w = Window.partitionBy(*g).orderBy(*order_cols(order)) if g else Window.orderBy(*order_cols(order))
    if not g and limit is not None:
        # no grouping: Spark's TakeOrderedAndProject does a per-partition top-k then a final one
        ordered = rows.orderBy(*order_cols(order)) if order else rows
        out = ordered.limit(offset + limit)
        if offset:
            out = out.withColumn("__rn", F.row_number().over(Window.orderBy(*order_cols(order)) if order else Window.orderBy(F.monotonically_increasing_id()))).where(F.col("__rn") > offset).drop("__rn")
        return out
    out = rows.withColumn("__rn", F.row_number().over(w if order or g else Window.orderBy(F.monotonically_increasing_id())))
    cond = F.col("__rn") > offset
    if limit is not None:
        cond = cond & (F.col("__rn") <= offset + limit)
    return out.where(cond).drop("__rn")


def _top1(df: DataFrame, g: list[SCol], order, cols: list[str]) -> DataFrame:
    """One aggregate per group, no sort: min/max of a struct whose fields order as asked."""
    dirs = {o.desc for o in order}
    if len(dirs) > 1:
        return _window_topk(expand(df, 1), g, order, 0, 1)
    desc = dirs == {True}
    fields = []
    for k, o in enumerate(order):
        c = F.col(cname(o.column))
        # under min() (asc) a true flag sorts later; under max() (desc) it sorts earlier
        null_flag = c.isNull() if (o.nulls_last != desc) else c.isNotNull()
        fields += [null_flag.alias(f"n{k}"), c.alias(f"o{k}")]
    payload = F.struct(*fields, *[F.col(c).alias(c) for c in cols])
    agg = F.max(payload) if desc else F.min(payload)
    grouped = df.groupBy(*g).agg(agg.alias("__best")) if g else df.agg(agg.alias("__best")).where(F.col("__best").isNotNull())
    return grouped.select(*[F.col(f"__best.{c}").alias(c) for c in cols], F.lit(1).cast("long").alias(DIFF))


def read_shard(spark: SparkSession, paths: list[str], types: tuple[SqlType, ...], as_of: int, has_retractions: bool) -> DataFrame:
    """A table's contents at `as_of`: Parquet batches filtered to time <= as_of (pushed down
    to the Parquet reader); consolidated only when the shard holds retractions."""
    if not paths:
        return empty(spark, types)
    schema = T.StructType(
        [T.StructField(cname(i), spark_type(t)) for i, t in enumerate(types)]
        + [T.StructField("time", T.LongType()), T.StructField(DIFF, T.LongType())]
    )
    df = spark.read.schema(schema).parquet(*paths).where(F.col("time") <= F.lit(as_of)).drop("time")
    return consolidate(df) if has_retractions else df


def arrow_rows(table, types: tuple[SqlType, ...]) -> list[tuple[tuple, int]]:
    """Collected Arrow table (c0..cN, diff) -> [(row, diff)] of Python values."""
    from compute.render.types import from_arrow_value

    cols = []
    for i, t in enumerate(types):
        vals = table.column(cname(i)).to_pylist()
        if t.name in ("interval", "time", "uuid", "timestamptz", "timestamp", "numeric"):
            vals = [from_arrow_value(v, t) for v in vals]
        cols.append(vals)
    diffs = table.column(DIFF).to_pylist()
    if not cols:
        return [((), d) for d in diffs]
    return list(zip(zip(*cols, strict=True), diffs, strict=True))
