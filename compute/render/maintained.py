"""The contract between the compute controller and the renderers of maintained dataflows
(DESIGN §5.1 right column, §5.3).

A maintained dataflow is one LIR `Dataflow` (single_time=False) kept up to date in steps. Its
inputs are storage collections (table shards, materialized-view shards) named by the ids of
the plan's non-local `Get`s. The controller owns time: it reads each input's snapshot at the
dataflow's `as_of` and, per step, the updates of each input in (frontier, upper]; all of a
step's updates are stamped with one time by the controller, so the renderer sees untimed
collections.

Every collection crossing this boundary is a Spark DataFrame with data columns `c0..cN`
(Spark types of `compute.render.types.spark_type`) and `diff` (bigint); no `time` column.
Outputs are consolidated (no two rows with equal data, no zero diff).

Two implementations: `compute.render.recompute.RecomputeDataflow` (correct for every plan:
re-renders the one-shot plan over the accumulated inputs and returns new minus old; O(state)
per step, the reference) and `compute.render.delta.DeltaDataflow` (incremental: per-operator
delta rules against arrangements held in Spark; O(|Δ|) per step). The controller uses the
delta renderer for every plan it supports (`DeltaDataflow.supports`) and recompute otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from pyspark.sql import DataFrame


class MaintainedDataflow(Protocol):
    def hydrate(self, snapshots: Mapping[str, DataFrame]) -> DataFrame:
        """Build the dataflow's state from each input's snapshot at `as_of` (by source id);
        return the output's snapshot (consolidated)."""
        ...

    def step(self, deltas: Mapping[str, DataFrame]) -> DataFrame:
        """Apply one step's input updates (by source id; inputs with no update may be absent);
        return the output's updates for this step (consolidated, possibly empty). State is
        advanced only if the step succeeds: on an exception the dataflow is as before."""
        ...

    def state_rows(self) -> Mapping[int, int]:
        """Rows of state held per LIR node id (arrangements, accumulators, top-k thinning)."""
        ...

    def close(self) -> None:
        """Free every Spark resource the dataflow holds (unpersist, drop views)."""
        ...
