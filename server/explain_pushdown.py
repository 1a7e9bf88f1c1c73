"""EXPLAIN FILTER PUSHDOWN FOR <select> | MATERIALIZED VIEW <mv>: for each storage
collection the plan reads, its total and selected bytes and parts (Materialize's columns).

A part is a Parquet row group of one of the shard's batch files (Materialize's parts are
persist blob parts; ours are the unit a Parquet reader can skip). Selected: some read of the
collection in the optimized plan (a SELECT's one-shot plan at its read timestamp, a
materialized view's maintained plan) may find a row in it, judged by the predicates the plan
filters that read with against the row group's min / max / null-count statistics
(compute.plan.pushdown: anything it cannot reason about keeps the part), and by the `time`
column's statistics against the read timestamp. Only the files' footers are read; no Spark
job runs. Bytes: the compressed size of a row group's column chunks."""

from __future__ import annotations

from typing import Any

from catalog.model import Item
from catalog.storage.arrow_types import TIME_COLUMN, column_name
from catalog.storage.parts import RowGroup, row_groups
from compute.plan import pipeline
from compute.plan.pushdown import ColumnStats, PartStats, part_selected, source_filters
from server.api import ColumnDesc
from sql.mir import Mir
from sql.types import TEXT, UINT8

COLUMNS = (ColumnDesc("Source", TEXT), ColumnDesc("Total Bytes", UINT8), ColumnDesc("Selected Bytes", UINT8),
           ColumnDesc("Total Parts", UINT8), ColumnDesc("Selected Parts", UINT8))


def part_stats(rg: RowGroup, item: Item) -> PartStats:
    """A row group's statistics by column index (columns of the item only)."""
    cols = {}
    for i, _ in enumerate(item.columns):
        c = rg.columns.get(column_name(i))
        if c is not None:
            cols[i] = ColumnStats(c.min, c.max, c.nulls)
    return PartStats(rg.rows, cols)


def _at_or_before(rg: RowGroup, ts: int | None) -> bool:
    """May the row group hold an update at a time <= ts (the read's `time <= as_of`)?"""
    t = rg.columns.get(TIME_COLUMN)
    return ts is None or t is None or t.min is None or t.min <= ts


def source_rows(coord: Any, m: Mir, ts: int | None, skip: frozenset[str] = frozenset()) -> list[tuple[Any, ...]]:
    """One row per storage collection `m` reads (by id order), except those in `skip`."""
    out = []
    for item, parts in selection(coord, m, ts, skip):
        total, selected = [rg.bytes for rg, _ in parts], [rg.bytes for rg, yes in parts if yes]
        out.append((item.qualified_name, sum(total), sum(selected), len(total), len(selected)))
    return out


def selection(coord: Any, m: Mir, ts: int | None,
              skip: frozenset[str] = frozenset()) -> list[tuple[Item, list[tuple[RowGroup, bool]]]]:
    """Each storage collection `m` reads (by id order, except `skip`): its parts, each with
    whether the plan's reads of it select it."""
    reads = source_filters(m)
    out = []
    for i in sorted(reads, key=lambda x: (len(x), x)):
        item = coord.catalog.get_item_by_id(i)
        if item is None or item.shard_id is None or i in skip:
            continue
        parts = [(rg, _at_or_before(rg, ts) and part_selected(reads[i], part_stats(rg, item)))
                 for b in coord.catalog.shard_batches(item.shard_id) for rg in row_groups(b.path)]
        out.append((item, parts))
    return out


def select_plan(coord: Any, session: Any, bound: Any, params: Any, param_types: Any) -> tuple[Mir, int, frozenset[str]]:
    """A SELECT's one-shot optimized plan at its read timestamp, that timestamp, and the
    collections an index serves (read from the index, not from storage: no row)."""
    ts = coord._read_ts(session)
    m = pipeline.optimized_mir(bound, params, param_types, now=ts, sizes=lambda m: coord._sizes(m, ts))
    controller = coord.controller
    indexed = frozenset(controller.indexed()) if controller is not None else frozenset()
    return m, ts, indexed


def for_select(coord: Any, session: Any, bound: Any, params: Any, param_types: Any) -> list[tuple[Any, ...]]:
    return source_rows(coord, *select_plan(coord, session, bound, params, param_types))


def for_materialized_view(coord: Any, m: Mir) -> list[tuple[Any, ...]]:
    """A materialized view's maintained plan: what rehydrating it reads (every time)."""
    return source_rows(coord, pipeline.optimize(m, monotonic_sources=coord._monotonic_sources()), None)
