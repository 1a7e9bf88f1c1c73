"""The reference maintained renderer: recompute the whole dataflow at every step.

`RecomputeDataflow` implements `compute.render.maintained.MaintainedDataflow` for every plan
the one-shot renderer handles: it keeps each input's accumulated collection and the last
output (local checkpoints, consolidated, so plans never grow with the number of steps), and

    hydrate(S)  = render(plan, S)
    step(Δ)     = render(plan, S + Δ) − render(plan, S)      (then S := S + Δ)

rendered at the step's time (temporal filters keep the rows valid at it).

O(state) per step: the fallback for plans the delta renderer does not support and the
oracle it is tested against.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from compute.plan import lir
from compute.render import oneshot
from compute.render.rel import DIFF, RenderContext, cnames
from sql.types import SqlType


def consolidated(df: DataFrame) -> DataFrame:
    """Sum the diffs of equal rows, drop zeros."""
    cols = [c for c in df.columns if c != DIFF]
    if not cols:
        return df.agg(F.sum(DIFF).alias(DIFF)).where(F.col(DIFF).isNotNull() & (F.col(DIFF) != 0))
    return df.groupBy(*cols).agg(F.sum(DIFF).alias(DIFF)).where(F.col(DIFF) != 0)


def negated(df: DataFrame) -> DataFrame:
    return df.select(*[F.col(c) for c in df.columns if c != DIFF], (-F.col(DIFF)).alias(DIFF))


def checkpointed(df: DataFrame) -> DataFrame:
    """`df` computed now and kept (a local checkpoint: its plan is a scan of stored rows)."""
    return df.localCheckpoint(eager=True)


def free(df: DataFrame | None) -> None:
    """Release the stored rows of a DataFrame made by `checkpointed` (or `persist`)."""
    if df is None:
        return
    df.unpersist()
    plan = df._jdf.queryExecution().logical()
    if plan.getClass().getSimpleName() == "LogicalRDD" and plan.rdd().getStorageLevel().useMemory():
        plan.rdd().unpersist(False)


def empty_like(spark: SparkSession, types: tuple[SqlType, ...]) -> DataFrame:
    return oneshot.constant_df(spark, (), types)


class RecomputeDataflow:
    """A maintained dataflow re-rendered over its accumulated inputs at every step."""

    def __init__(self, spark: SparkSession, dataflow: lir.Dataflow, input_types: Mapping[str, tuple[SqlType, ...]]) -> None:
        self.spark = spark
        self.dataflow = dataflow
        self.input_types = dict(input_types)
        self._inputs: dict[str, DataFrame] = {}
        self._output: DataFrame | None = None
        # the previous output, freed at the next step (the last step's result reads it)
        self._retired: list[DataFrame] = []
        # hydration reporting (compute.hydration.Observer): the output's job observes the
        # root; every other node inherits its status (DESIGN §5.4)
        self.observer: Any = None

    # -- MaintainedDataflow ------------------------------------------------------------------------

    def hydrate(self, snapshots: Mapping[str, DataFrame], *, time: int | None = None, until: int | None = None) -> DataFrame:
        """`until` is not needed: no future update is ever stored here."""
        inputs = {i: checkpointed(consolidated(snapshots[i]) if i in snapshots else empty_like(self.spark, t))
                  for i, t in self.input_types.items()}
        try:
            tag = self.observer.tag(self.dataflow.plan.node_id) if self.observer is not None else None
            out = self._render(inputs, time, tag)
        except BaseException:
            for df in inputs.values():
                free(df)
            raise
        self._inputs, self._output = inputs, out
        return out

    def step(self, deltas: Mapping[str, DataFrame], *, time: int | None = None) -> DataFrame:
        """The returned updates stay readable until the next step (or close)."""
        assert self._output is not None, "step before hydrate"
        self._free_retired()
        changed = {i: d for i, d in deltas.items() if i in self.input_types}
        made: list[DataFrame] = []
        try:
            inputs = dict(self._inputs)
            for i, d in changed.items():
                inputs[i] = checkpointed(consolidated(inputs[i].unionByName(d)))
                made.append(inputs[i])
            out = self._render(inputs, time)
            made.append(out)
            # computed by its reader; it reads the old output, which is kept until the next step
            delta = consolidated(out.unionByName(negated(self._output)))
        except BaseException:
            for df in made:
                free(df)
            raise
        for i in changed:
            self._retired.append(self._inputs[i])
        self._retired.append(self._output)
        self._inputs, self._output = inputs, out
        return delta

    def state_rows(self) -> Mapping[int, int]:
        rows = sum(df.count() for df in self._inputs.values())
        if self._output is not None:
            rows += self._output.count()
        return {self.dataflow.plan.node_id: rows}

    def close(self) -> None:
        self._free_retired()
        for df in [*self._inputs.values(), self._output]:
            try:
                free(df)
            except Exception:  # noqa: BLE001 - a lost driver holds nothing any more
                pass
        self._inputs, self._output = {}, None

    # -- the current output (an index's state) ----------------------------------------------------

    @property
    def output(self) -> DataFrame | None:
        return self._output

    # -- rendering ---------------------------------------------------------------------------------

    def _free_retired(self) -> None:
        retired, self._retired = self._retired, []
        for df in retired:
            free(df)

    def _render(self, inputs: Mapping[str, DataFrame], time: int | None, tag: str | None = None) -> DataFrame:
        """The one-shot rendering of the plan over `inputs` at `time` (its temporal filters'
        mz_now()), consolidated and stored; `tag`: the job computing it carries it (hydration
        reporting)."""
        views: list[str] = []

        def read_source(item_id: str, types: tuple[SqlType, ...]) -> oneshot.Rel:
            name = f"mzm_{uuid.uuid4().hex}"
            inputs[item_id].createOrReplaceGlobalTempView(name)
            views.append(name)
            return oneshot.Rel(f"SELECT * FROM global_temp.{name}", len(types))

        ctx = RenderContext(self.spark, read_source, source_mfps=dict(self.dataflow.source_mfps), time=time)
        try:
            out = oneshot.consolidate(oneshot.render(self.dataflow.plan, ctx), ctx)
            df = self.spark.sql(out.sql)
            cols = cnames(len(self.dataflow.types))
            df = df.select(*cols, DIFF)
            if tag is None:
                return checkpointed(df)
            df._jdf.queryExecution().toRdd()  # its preparatory jobs (broadcasts), untagged
            sc = self.spark.sparkContext
            sc.addJobTag(tag)
            try:
                return checkpointed(df)
            finally:
                sc.removeJobTag(tag)
        finally:
            ctx.release()
            for v in views:
                self.spark.catalog.dropGlobalTempView(v)
