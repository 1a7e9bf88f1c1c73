"""EXPLAIN ANALYZE {MEMORY | CPU} [, …] [WITH SKEW] FOR {INDEX | MATERIALIZED VIEW} name
(Materialize's statement; DESIGN §5.4): the installed dataflow's LIR nodes, one row each (one
per node and worker WITH SKEW), in EXPLAIN order, with

- MEMORY: the records and bytes of the Spark state the node holds (its arrangements'
  cached pieces; compute.render.analyze);
- CPU: the run time of the Spark tasks observed for the node during hydration (the tasks of
  the job that materialized its output; compute.hydration) — fused nodes show 0, their time
  is in the node that observes them.

`operator` is the node's EXPLAIN line indented by its nesting; `lir_id` its node id (an
addition to Materialize's columns). `AS SQL` is not supported (0A000).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from server.api import ColumnDesc
from sql import statements as st
from sql.errors import UNDEFINED_TABLE, WRONG_OBJECT_TYPE, SqlError, unsupported
from sql.types import FLOAT8, INT8, TEXT, UINT8, SqlType

INTERVAL = SqlType("interval")


def columns(e: st.ExplainAnalyzeObject) -> tuple[ColumnDesc, ...]:
    cols = [ColumnDesc("operator", TEXT), ColumnDesc("lir_id", UINT8)]
    if e.skew:
        cols.append(ColumnDesc("worker_id", UINT8))
    if "memory" in e.properties:
        if e.skew:
            cols += [ColumnDesc("memory_ratio", FLOAT8), ColumnDesc("worker_memory", INT8), ColumnDesc("avg_memory", FLOAT8)]
        cols.append(ColumnDesc("total_memory", INT8))
        if e.skew:
            cols += [ColumnDesc("records_ratio", FLOAT8), ColumnDesc("worker_records", INT8), ColumnDesc("avg_records", FLOAT8)]
        cols.append(ColumnDesc("total_records", INT8))
    if "cpu" in e.properties:
        if e.skew:
            cols += [ColumnDesc("elapsed_ratio", FLOAT8), ColumnDesc("worker_elapsed", INTERVAL), ColumnDesc("avg_elapsed", INTERVAL)]
        cols.append(ColumnDesc("total_elapsed", INTERVAL))
    return tuple(cols)


def _ratio(part: float, avg: float) -> float | None:
    return None if avg == 0 else part / avg


def rows(coord: Any, session: Any, e: st.ExplainAnalyzeObject) -> list[tuple[Any, ...]]:
    from compute.plan.lir_mapping import lir_mapping
    from server.resolver import Resolver

    if e.as_sql:
        raise unsupported("EXPLAIN ANALYZE … AS SQL")
    item = Resolver(coord.catalog, session, coord.system).item(e.name)
    if item is None:
        raise SqlError(UNDEFINED_TABLE, f"unknown catalog item '{'.'.join(e.name)}'")
    kind = {"index": "index", "materialized view": "materialized-view"}[e.kind]
    if item.kind not in ("index", "materialized-view"):
        raise unsupported(f"EXPLAIN ANALYZE of {item.qualified_name}: only indexes and materialized views are maintained")
    if item.kind != kind:
        raise SqlError(WRONG_OBJECT_TYPE, f"{item.qualified_name} is not a {e.kind}")
    ctl = coord.controller
    m = ctl.installed(item.id) if ctl is not None else None
    if m is None:
        raise unsupported(f"EXPLAIN ANALYZE of {item.qualified_name}: it has no installed dataflow")
    workers = ctl._workers()
    states: dict[int, Any] = {}
    if "memory" in e.properties and m.renderer is not None:
        from compute.render.analyze import node_states

        with ctl._work:  # the renderer's state does not change meanwhile
            if m.renderer is not None:
                states = node_states(ctl.compute.spark(), m.renderer, workers, e.skew)
    cpu = ctl.hydration().cpu_ms(item.id) if "cpu" in e.properties else {}
    out: list[tuple[Any, ...]] = []
    for r in lir_mapping(m.dataflow):
        op = "  " * r.nesting + r.operator
        s = states.get(r.lir_id)
        records, nbytes = (s.records, s.bytes) if s is not None else (0, 0)
        node_cpu = {w: ms for (n, w), ms in cpu.items() if n == r.lir_id}
        total_ms = sum(node_cpu.values())
        if not e.skew:
            row: list[Any] = [op, r.lir_id]
            if "memory" in e.properties:
                row += [nbytes, records]
            if "cpu" in e.properties:
                row.append(dt.timedelta(milliseconds=total_ms))
            out.append(tuple(row))
            continue
        for w in range(workers):
            row = [op, r.lir_id, w]
            if "memory" in e.properties:
                wrec = s.worker_records.get(w, 0) if s is not None else 0
                avg_rec = records / workers
                # bytes per worker: in proportion to its records (Spark reports per RDD)
                wmem = round(nbytes * wrec / records) if records else 0
                avg_mem = nbytes / workers
                row += [_ratio(wmem, avg_mem), wmem, avg_mem, nbytes, _ratio(wrec, avg_rec), wrec, avg_rec, records]
            if "cpu" in e.properties:
                wms = node_cpu.get(w, 0)
                avg = total_ms / workers
                row += [_ratio(wms, avg), dt.timedelta(milliseconds=wms), dt.timedelta(milliseconds=avg),
                        dt.timedelta(milliseconds=total_ms)]
            out.append(tuple(row))
    return out
