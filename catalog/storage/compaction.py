"""Consolidation of update batches.

consolidate(U) = { (row, t, sum(d for (row, t, d) in U)) } minus the entries whose sum is 0:
group by every data column and `time`, sum `diff`, drop zeros. NULLs group together (as in
`GROUP BY`), and struct columns (intervals) are grouped by their validity and fields, list
columns (arrays) by the text of their Python values (one of the group's rows gives the
value), since Arrow cannot hash struct or list keys directly. Equal means equal as stored: a
retraction is written as the stored row it retracts.

advance(U, since) = { (row, max(t, since), d) }: compaction advances every time at or
below `since` to `since`, after which consolidation merges updates that only differed in
time. Reads at any `as_of >= since` see the same collection before and after.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from catalog.storage.arrow_types import DIFF_COLUMN, TIME_COLUMN

_VALID = "__valid"
_SUM = "diff_sum"
_TEXT = "__text"
_ROW = "__row"


def advance_times(table: pa.Table, since: int) -> pa.Table:
    """Times below `since` become `since`."""
    i = table.schema.get_field_index(TIME_COLUMN)
    times = pc.max_element_wise(table.column(i), pa.scalar(since, pa.int64()))
    return table.set_column(i, table.schema.field(i), times.cast(pa.int64()))


def consolidate(table: pa.Table) -> pa.Table:
    """Sum the diffs of equal (data, time) rows and drop those summing to zero.

    The result has the input's schema; row order is unspecified."""
    schema = table.schema
    keys: list[str] = []
    flat: dict[str, pa.ChunkedArray] = {}
    structs: dict[str, list[str]] = {}
    lists: list[str] = []
    for field in schema:
        name = field.name
        if name == DIFF_COLUMN:
            continue
        col = table.column(name)
        if pa.types.is_list(field.type) or pa.types.is_large_list(field.type):
            flat[f"{name}{_TEXT}"] = pa.array([None if v is None else repr(v) for v in col.to_pylist()], pa.string())
            keys.append(f"{name}{_TEXT}")
            lists.append(name)
        elif pa.types.is_struct(field.type):
            valid = pc.is_valid(col)
            vname = f"{name}{_VALID}"
            flat[vname] = valid
            keys.append(vname)
            subs: list[str] = []
            for j in range(field.type.num_fields):
                sub = field.type.field(j)
                sname = f"{name}__{j}"
                child = pc.struct_field(col, [j])
                flat[sname] = pc.if_else(valid, child, pa.scalar(None, sub.type))
                keys.append(sname)
                subs.append(sname)
            structs[name] = subs
        else:
            flat[name] = col
            keys.append(name)
    flat[DIFF_COLUMN] = table.column(DIFF_COLUMN)
    aggs = [(DIFF_COLUMN, "sum")]
    if lists:
        flat[_ROW] = pa.array(range(table.num_rows), pa.int64())
        aggs.append((_ROW, "min"))
    work = pa.table(flat)
    grouped = work.group_by(keys, use_threads=False).aggregate(aggs)
    grouped = grouped.filter(pc.not_equal(grouped.column(_SUM), 0))
    arrays: list[pa.Array | pa.ChunkedArray] = []
    for field in schema:
        name = field.name
        if name == DIFF_COLUMN:
            arrays.append(grouped.column(_SUM).cast(pa.int64()))
        elif name in lists:
            arrays.append(table.column(name).take(grouped.column(f"{_ROW}_min")))
        elif name in structs:
            valid = grouped.column(f"{name}{_VALID}").combine_chunks()
            children = [grouped.column(s).combine_chunks() for s in structs[name]]
            mask = pc.invert(valid)
            arr = pa.StructArray.from_arrays(children, fields=list(field.type), mask=mask)
            arrays.append(arr)
        else:
            arrays.append(grouped.column(name).cast(field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def compact_table(table: pa.Table, since: int) -> pa.Table:
    """consolidate(advance(table, since))."""
    return consolidate(advance_times(table, since))
