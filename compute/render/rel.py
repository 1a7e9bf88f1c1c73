"""Rendered relations (Rel), the render context, and the SQL steps every operator shares."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from py4j.protocol import Py4JJavaError
from pyspark.sql import DataFrame, SparkSession

from compute.plan import lir
from compute.render import plan_log
from compute.render.driver_calls import drop_view, register_view
from compute.render.scalar import render_scalar
from compute.render.spark_sql import raise_error
from sql.recursion import MAX_ITERATIONS
from sql.types import SqlType

DIFF = "diff"
# an expression longer than this is computed once as a column (mfp_columns)
MAX_INLINE_EXPR = 10_000


def cname(i: int) -> str:
    return f"c{i}"


def cnames(n: int) -> list[str]:
    return [cname(i) for i in range(n)]


@dataclass(frozen=True, slots=True)
class Rel:
    """A query producing columns c0..c{arity-1} and diff."""

    sql: str
    arity: int


@dataclass
class RenderContext:
    spark: SparkSession
    read_source: Callable[[str, tuple[SqlType, ...]], Rel]
    # the session to plan intermediate results in (by input size so far); default `spark`
    planner: Callable[[], SparkSession] | None = None
    lets: dict[str, Rel] = field(default_factory=dict)
    # whether each Let binding in scope is a set (compute.render.semijoin.is_set)
    set_lets: dict[str, bool] = field(default_factory=dict)
    # whether each Let binding in scope is non-negative (compute.plan.non_negative)
    nonneg_lets: dict[str, bool] = field(default_factory=dict)
    # the plan of each Let binding in scope (compute.render.outer_join reads a join's inputs)
    let_plans: dict[str, lir.Plan] = field(default_factory=dict)
    # whether every rendered row of each Let binding in scope is positive (outer_join.positive)
    positive_lets: dict[str, bool] = field(default_factory=dict)
    # the dataflow's source MFPs (lir.Dataflow.source_mfps), by source id
    source_mfps: dict[str, lir.Mfp] = field(default_factory=dict)
    # EXPLAIN ANALYZE: every node's output, persisted, by node id
    observed: dict[int, DataFrame] | None = None
    # records of nodes inside recursive bindings (their last evaluation), by node id
    counted: dict[int, int] = field(default_factory=dict)
    # persisted (or checkpointed) DataFrames and their global views, freed by release()
    persisted: list[tuple[DataFrame, str]] = field(default_factory=list)
    # the views of `persisted` over a caller's DataFrame (view(borrowed=True)): release()
    # drops only the view
    borrowed: set[str] = field(default_factory=set)
    # raises the statement's cancellation error if it was cancelled (between Spark jobs)
    check_interrupt: Callable[[], None] = lambda: None
    max_iterations: int = MAX_ITERATIONS
    # whether the inputs read so far are small enough to compute in one partition
    # (sources are then cached as one partition: compute.render.sources)
    tiny: Callable[[], bool] = lambda: False
    # the rows the query needs of the LetRec at its root (a LIMIT without ORDER BY): its
    # iteration may stop once it has them (compute/render/letrec.py)
    row_goal: int | None = None
    # the time a maintained dataflow is rendered at: its temporal filters' mz_now()
    # (compute.render.temporal); None: one-shot plans, where mz_now() is a literal already
    time: int | None = None
    # the DataFrames materialize / checkpoint computed, kept only for compute.render.plan_log
    inner_frames: list[DataFrame] = field(default_factory=list)
    _aliases: int = 0

    def session(self) -> SparkSession:
        return self.planner() if self.planner is not None else self.spark

    def alias(self) -> str:
        self._aliases += 1
        return f"_t{self._aliases}"

    def sub(self, r: Rel) -> str:
        """`(query) AS _tN`: a relation usable in FROM."""
        return f"({r.sql}) AS {self.alias()}"

    def view(self, df: DataFrame, persist: bool, borrowed: bool = False) -> str:
        """Register `df` as a global temporary view owned by this query; its SELECT text.
        `borrowed`: `df` stays its caller's (neither persisted nor checkpointed here): only
        the view is dropped at release."""
        name = f"mzq_{uuid.uuid4().hex}"
        if persist:
            df = df.persist()
        register_view(self.spark, df, name)
        self.persisted.append((df, name))
        if borrowed and not persist:
            self.borrowed.add(name)
        return f"SELECT * FROM global_temp.{name}"

    def single(self, q: str) -> str:
        """`q` in one partition when the inputs are tiny: Spark then knows it is a single
        partition (as the one-partition sources are), so the operators above it need no
        shuffle and the whole query runs as one stage (UNION ALL and VALUES do not keep it)."""
        if not self.tiny():
            return q
        return f"SELECT /*+ COALESCE(1) */ * FROM ({q}) AS {self.alias()}"

    def materialize(self, r: Rel) -> Rel:
        """Compute `r` once for several readers: a lazy local checkpoint, computed (and kept)
        by the query's own job the first time it is read.

        The view's plan is a leaf: a persisted view would be inlined with its whole plan
        wherever it is read (the cache is matched only after analysis), so nested Lets —
        the LEFT JOIN stack reads every level twice — would grow plans exponentially."""
        try:
            src = self.session().sql(r.sql)
            if plan_log.enabled():
                self.inner_frames.append(src)
            df = src.localCheckpoint(eager=False)
        except Py4JJavaError as e:
            if not _spark_unresolved_bug(e):
                raise
            # Spark's cache lookup canonicalizes a plan it has not finished resolving
            # (UnresolvedException "Invalid call to qualifier on unresolved object", seen
            # with several Lets over one source): the readers recompute the Let instead
            return r
        return Rel(self.view(df, persist=False), r.arity)

    def checkpoint(self, df: DataFrame, arity: int) -> Rel:
        """Compute `df` now and keep its rows: a local checkpoint, whose plan is a scan of the
        stored rows, so queries built on it do not grow with the plans that produced it."""
        if plan_log.enabled():
            self.inner_frames.append(df)
        df = df.localCheckpoint(eager=True)
        name = f"mzq_{uuid.uuid4().hex}"
        register_view(self.spark, df, name)
        self.persisted.append((df, name))
        return Rel(f"SELECT * FROM global_temp.{name}", arity)

    def free(self, r: Rel) -> None:
        """Release the view (and stored rows) behind `r`, made by view/materialize/checkpoint."""
        for k, (_, name) in enumerate(self.persisted):
            if r.sql == f"SELECT * FROM global_temp.{name}":
                self._drop(*self.persisted.pop(k))
                return
        raise AssertionError(f"not a view of this query: {r.sql}")

    def release(self, since: int = 0) -> None:
        """Free everything persisted after the first `since` entries."""
        while len(self.persisted) > since:
            self._drop(*self.persisted.pop())

    def _drop(self, df: DataFrame, name: str) -> None:
        if name in self.borrowed:
            self.borrowed.discard(name)
            drop_view(self.spark, name)
            return
        df.unpersist()
        plan = df._jdf.queryExecution().logical()
        if plan.getClass().getSimpleName() == "LogicalRDD" and plan.rdd().getStorageLevel().useMemory():
            plan.rdd().unpersist(False)  # a local checkpoint's blocks
        drop_view(self.spark, name)  # (df unpersisted above: nothing of the view is cached)


def select_rel(ctx: RenderContext, r: Rel, exprs: list[str], where: list[str] | None = None,
            group: list[str] | None = None, arity: int | None = None) -> Rel:
    """SELECT exprs FROM r [WHERE ...] [GROUP BY ...]; exprs end with the diff column."""
    q = f"SELECT {', '.join(exprs)} FROM {ctx.sub(r)}"
    if where:
        q += " WHERE " + " AND ".join(where)
    if group:
        q += " GROUP BY " + ", ".join(group)
    return Rel(q, arity if arity is not None else len(exprs) - 1)


def wrap(ctx: RenderContext, q: str, arity: int, where: list[str]) -> Rel:
    """Keep c0..c{arity-1}, diff of `q`'s rows satisfying `where`."""
    return select_rel(ctx, Rel(q, arity), [*cnames(arity), DIFF], where)


def _spark_unresolved_bug(e: Py4JJavaError) -> bool:
    """Is `e` Spark's internal UnresolvedException (a plan canonicalized before resolution)?"""
    try:
        return "UnresolvedException" in e.java_exception.getClass().getName()
    except Exception:  # the JVM is gone: not this case
        return False


def consolidate(r: Rel, ctx: RenderContext) -> Rel:
    """Sum diffs of equal rows and drop zeros."""
    cols = cnames(r.arity)
    q = f"SELECT {', '.join([*cols, 'SUM(diff) AS diff'])} FROM {ctx.sub(r)}"
    if cols:
        q += " GROUP BY " + ", ".join(cols)
    return Rel(q + " HAVING SUM(diff) <> 0", r.arity)


def positive_check(col: str, what: str) -> str:
    """A predicate failing the query if a negative multiplicity reaches `what`."""
    return f"(CASE WHEN {col} > 0 THEN TRUE ELSE {raise_error(f'Non-positive multiplicity in {what}', 'boolean')} END)"


def check_non_negative(r: Rel, what: str, ctx: RenderContext) -> Rel:
    return select_rel(ctx, r, [*cnames(r.arity), DIFF], [positive_check(DIFF, what)])


def expand(r: Rel, ctx: RenderContext, cap: int | None = None) -> Rel:
    """One row per unit of (positive) multiplicity, at most `cap` copies of a row."""
    n = DIFF if cap is None else f"least(diff, CAST({cap} AS BIGINT))"
    reps = select_rel(ctx, r, [*cnames(r.arity), f"explode(sequence(CAST(1 AS BIGINT), {n})) AS __rep", DIFF], arity=r.arity)
    return select_rel(ctx, reps, [*cnames(r.arity), "CAST(1 AS BIGINT) AS diff"])


def mfp_columns(r: Rel, m: lir.Mfp, ctx: RenderContext) -> tuple[Rel, list[str]]:
    """The SQL of every column of `m`'s space (input ++ expressions) over the returned
    relation (`r`, with long expressions computed once as extra columns)."""
    cols = cnames(m.input_arity)
    for k, e in enumerate(m.expressions):
        text = render_scalar(e, cols)
        if len(text) > MAX_INLINE_EXPR:
            # later references use a column instead of repeating the text (Catalyst still
            # pushes the predicates below this projection)
            name = f"m{k}"
            r = Rel(f"SELECT *, {text} AS {name} FROM {ctx.sub(r)}", r.arity)
            text = name
        cols.append(text)
    return r, cols
