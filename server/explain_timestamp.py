"""EXPLAIN TIMESTAMP FOR <select>: the timestamp a read would take and the frontiers of
what it reads (Materialize's text layout). Each input is a storage collection (a table's or
materialized view's shard: read frontier = the shard's since, write frontier = its upper)
or, when an index serves it, the index's dataflow (compute: the window of times its state
answers). The query can respond immediately when its timestamp is below every write
frontier: a read waits otherwise (strict serializable)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from compute.plan import pipeline
from sql.bind import BoundQuery


def _shown(t: int) -> str:
    """`t (YYYY-MM-DD HH:MM:SS.mmm)`: a timestamp and the UTC wall-clock time it is."""
    at = dt.datetime.fromtimestamp(t / 1000, tz=dt.UTC)
    return f"{t} ({at.strftime('%Y-%m-%d %H:%M:%S')}.{at.microsecond // 1000:03d})"


def explain_timestamp(coord: Any, session: Any, bound: BoundQuery, params: Any, param_types: Any, fmt: str,
                      as_of: int | None = None) -> str:
    """`as_of`: the timestamp of the query's AS OF [AT LEAST] (not waited for: a future one
    cannot respond immediately)."""
    fresh = coord._read_ts(session)  # (ticks the oracle as a read does)
    ts = fresh if as_of is None else as_of
    m = pipeline.optimized_mir(bound, params, param_types, now=ts, sizes=lambda m: coord._sizes(m, ts))
    controller = coord.controller
    indexed = controller.indexed() if controller is not None else {}
    oracle_ts = coord.oracle.read_ts()
    sources: list[tuple[str, int | None, int | None]] = []
    for i in sorted(pipeline.storage_ids(m), key=lambda x: (len(x), x)):
        item = coord.catalog.get_item_by_id(i)
        if item is None:
            continue
        window = controller.read_window(i) if controller is not None and i in indexed else None
        if window is not None:
            index_id, since, upper = window
            index = coord.catalog.get_item_by_id(index_id)
            name = f"{index.qualified_name if index is not None else indexed[i]} ({index_id}, compute)"
            sources.append((name, since, upper))
            continue
        since = coord.catalog.shard_since(item.shard_id) if item.shard_id is not None else None
        if item.kind == "materialized-view" and controller is not None:
            upper = next((f for oid, _, f in controller.frontiers() if oid == i), None)
        else:
            upper = oracle_ts + 1  # a table is complete through the last committed write
        sources.append((f"{item.qualified_name} ({item.id}, storage)", since, upper))
    uppers = [u for _, _, u in sources if u is not None]
    sinces = [s for _, s, _ in sources if s is not None]
    upper = min(uppers) if uppers else None
    since = max(sinces) if sinces else None
    largest = (upper - 1) if upper is not None else ts
    immediately = upper is None or ts < upper
    wall = coord.oracle.now_ms()
    if fmt == "json":
        return json.dumps({
            "determination": {"timestamp": ts, "oracle_read_ts": oracle_ts, "largest_not_in_advance_of_upper": largest,
                              "upper": [upper] if upper is not None else [], "since": [since] if since is not None else [],
                              "respond_immediately": immediately, "timeline": "EpochMilliseconds", "session_wall_time": wall},
            "sources": [{"name": n, "read_frontier": [s] if s is not None else [], "write_frontier": [u] if u is not None else []}
                        for n, s, u in sources],
        }, indent=2)

    def chain(t: int | None) -> str:
        return f"[{_shown(t)}]" if t is not None else "[]"

    lines = [
        f"                query timestamp: {_shown(ts)}",
        f"          oracle read timestamp: {_shown(oracle_ts)}",
        f"largest not in advance of upper: {_shown(largest)}",
        f"                          upper:{chain(upper)}",
        f"                          since:{chain(since)}",
        f"        can respond immediately: {str(immediately).lower()}",
        "                       timeline: Some(EpochMilliseconds)",
        f"              session wall time: {_shown(wall)}",
    ]
    for name, s, u in sources:
        lines += ["", f"source {name}:", f"                  read frontier:{chain(s)}", f"                 write frontier:{chain(u)}"]
    return "\n".join(lines) + "\n"
