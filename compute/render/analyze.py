"""The state a maintained dataflow holds in Spark, per LIR node (EXPLAIN ANALYZE MEMORY).

Records = rows of the node's cached arrangement pieces (`state_rows` of the renderer); bytes =
the Spark storage memory of those pieces' cached RDDs (`SparkContext.getRDDStorageInfo`);
per worker (WITH SKEW): the pieces' rows per cached partition p, worker = p mod W.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession


@dataclass
class NodeState:
    records: int = 0
    bytes: int = 0
    worker_records: dict[int, int] = field(default_factory=dict)


def _rdd_id(df: Any) -> int | None:
    """The id of the cached RDD behind a stored piece (an InMemoryRelation leaf) or a local
    checkpoint (a LogicalRDD), if any."""
    try:
        plan = df._jdf.queryExecution().logical()
        kind = plan.getClass().getSimpleName()
        if kind == "InMemoryRelation":
            return int(plan.cacheBuilder().cachedColumnBuffers().id())
        if kind == "LogicalRDD":
            return int(plan.rdd().id())
    except Exception:  # noqa: BLE001 - no storage to attribute
        return None
    return None


def node_states(spark: SparkSession, renderer: Any, workers: int, skew: bool) -> dict[int, NodeState]:
    """Per node id: the records and bytes of its state (and per worker, with `skew`)."""
    mem = {int(i.id()): int(i.memSize()) + int(i.diskSize())
           for i in spark.sparkContext._jsc.sc().getRDDStorageInfo()}  # type: ignore[union-attr]
    out: dict[int, NodeState] = {}
    pieces = renderer.state_pieces() if hasattr(renderer, "state_pieces") else None
    if pieces is None:  # the recompute reference: everything is the root's
        rows = renderer.state_rows()
        root = next(iter(rows), None)
        if root is not None:
            st = out.setdefault(root, NodeState())
            st.records = sum(rows.values())
            held = [*renderer._inputs.values(), renderer.output]
            st.bytes = sum(mem.get(r, 0) for r in (_rdd_id(d) for d in held if d is not None) if r is not None)
            if skew:
                for d in held:
                    if d is not None:
                        _add_partitions(st, d, workers)
        return out
    for nid, ps in pieces.items():
        st = out.setdefault(nid, NodeState())
        for p in ps:
            st.records += p.rows
            rid = _rdd_id(p.df)
            st.bytes += mem.get(rid, 0) if rid is not None else 0
            if skew and p.rows:
                _add_partitions(st, p.df, workers)
    return out


def _add_partitions(st: NodeState, df: Any, workers: int) -> None:
    from pyspark.sql import functions as F

    for r in df.groupBy(F.spark_partition_id().alias("p")).count().collect():
        w = int(r["p"]) % workers
        st.worker_records[w] = st.worker_records.get(w, 0) + int(r["count"])
