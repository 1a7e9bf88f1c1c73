"""The parts of a shard as EXPLAIN FILTER PUSHDOWN counts them: the Parquet row groups of
its batch files, with each column's statistics, read from the files' footers only (no
data page is read)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pyarrow.parquet as pq


@dataclass(frozen=True, slots=True)
class ColumnChunk:
    """min / max None when the row group has no min/max statistics for the column."""

    min: Any
    max: Any
    nulls: int | None


@dataclass(frozen=True, slots=True)
class RowGroup:
    path: str
    index: int
    rows: int
    bytes: int  # the compressed size of its column chunks (what a reader fetches)
    columns: dict[str, ColumnChunk]  # by Parquet column name (c0 .. cN, time, diff)


def row_groups(path: str) -> list[RowGroup]:
    """Every row group of one batch file, with its top-level columns' statistics."""
    meta = pq.ParquetFile(path).metadata
    out = []
    for i in range(meta.num_row_groups):
        rg = meta.row_group(i)
        cols: dict[str, ColumnChunk] = {}
        for j in range(rg.num_columns):
            c = rg.column(j)
            name = c.path_in_schema
            if "." in name:  # a nested column's leaf (interval, array): no statistics used
                continue
            s = c.statistics
            if s is None:
                cols[name] = ColumnChunk(None, None, None)
                continue
            nulls = s.null_count if s.has_null_count else None
            if s.has_min_max:
                cols[name] = ColumnChunk(s.min, s.max, nulls)
            else:
                cols[name] = ColumnChunk(None, None, nulls)
        size = sum(rg.column(j).total_compressed_size for j in range(rg.num_columns))
        out.append(RowGroup(path, i, rg.num_rows, size, cols))
    return out


@lru_cache(maxsize=8192)
def int_ranges(path: str) -> dict[int, tuple[int, int]]:
    """{column index: (min, max)} of the integer columns `c<i>` of one batch file, from its
    row groups' statistics (a batch file never changes, so the answer is cached by path);
    a column some row group has no min / max for is left out. Join ordering bounds a key's
    distinct values by max - min + 1."""
    out: dict[int, tuple[int, int]] = {}
    missing: set[int] = set()
    for rg in row_groups(path):
        for name, c in rg.columns.items():
            if not (name.startswith("c") and name[1:].isdigit()):
                continue
            i = int(name[1:])
            if rg.rows == 0 or i in missing:
                continue
            if not (type(c.min) is int and type(c.max) is int):
                missing.add(i)
                out.pop(i, None)
                continue
            lo, hi = out.get(i, (c.min, c.max))
            out[i] = (min(lo, c.min), max(hi, c.max))
    return out
