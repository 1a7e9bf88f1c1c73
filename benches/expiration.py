"""Dataflow expiration: updates held with a 1-year temporal window, expiration off vs on, side
by side in one run (DESIGN §7; Materialize's `compute_replica_expiration_offset`).

    PYTHONPATH=. python benches/expiration.py [--rows 1000000] [--steps 5] [--offset-days 1]

View (indexed): SELECT id, event_ts FROM events WHERE mz_now() <= event_ts + INTERVAL '1 year',
`--rows` events spread over the past year (all visible now). Each dataflow is the delta
renderer's (compute.render.delta) plus its output kept as an index's state
(compute.render.index_state), hydrated at t0; then `--steps` steps one second apart, each
inserting 1000 new events. Reported per dataflow:
- pending: the future updates its temporal filter holds (retractions a year ahead; with an
  expiration only those before t0 + offset);
- held: every update its Spark state holds (pending + the index's rows);
- Spark bytes: the storage memory its cached state takes (Spark's own accounting);
- hydrate / step ms: wall clock (the step includes merging into the index state).
The two visible outputs are compared after every step.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

VIEW = "SELECT id, event_ts FROM events WHERE mz_now() <= event_ts + INTERVAL '1 year'"
YEAR_MS = 365 * 86_400_000
DAY_MS = 86_400_000


def _ms(t: float) -> float:
    return (time.perf_counter() - t) * 1000


def _bytes(spark) -> int:
    from compute.render.spark import storage_memory

    return storage_memory(spark)[1]


def run(spark, df, sid: str, rows: int, steps: int, t0: int, until: int | None) -> dict:
    from compute.render.delta import DeltaDataflow
    from compute.render.index_state import IndexState

    # the hydrated events evenly over the past year (inserted ones: at their step's time)
    spread = max(YEAR_MS // rows, 1)
    events = (f"SELECT CAST(id AS INT) AS c0, timestamp_millis({t0} - (id * {spread}) % {YEAR_MS}) AS c1, "
              "CAST(1 AS BIGINT) AS diff FROM range({lo}, {hi})")
    before = _bytes(spark)
    flow = DeltaDataflow(spark, df)
    t = time.perf_counter()
    out = flow.hydrate({sid: spark.sql(events.format(lo=0, hi=rows))}, time=t0, until=until)
    state = IndexState(out)
    hydrate = _ms(t)
    times = []
    for s in range(1, steps + 1):
        lo = rows + (s - 1) * 1000
        delta = spark.sql(events.format(lo=lo, hi=lo + 1000).replace(f"timestamp_millis({t0} - (id * {spread}) % {YEAR_MS})",
                                                                     f"timestamp_millis({t0 + s * 1000})"))
        t = time.perf_counter()
        got = flow.step({sid: delta}, time=t0 + s * 1000)
        nxt = state.merged(got)
        if nxt is not None:
            state.swap(nxt)
        times.append(_ms(t))
    pending = flow.pending_updates()
    visible = state.rows()
    result = {"until": until, "pending": pending, "held": pending + visible, "visible": visible,
              "spark_bytes": _bytes(spark) - before, "hydrate_ms": hydrate, "step_ms": statistics.median(times),
              "steps": [round(x) for x in times]}
    snapshot = sorted(tuple(r) for r in state._df.select("c0", "diff").collect()) if rows <= 200_000 else None
    state.close()
    flow.close()
    return result | {"snapshot": snapshot}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--offset-days", type=float, default=1.0)
    args = ap.parse_args()

    from compute.render.spark import spark_session
    from tests.golden_runner import GoldenSession
    from tests.integration.test_delta_render import maintained_plan

    gs = GoldenSession()
    gs.run("CREATE TABLE events (id int, event_ts timestamptz)")
    spark = spark_session()
    df = maintained_plan(gs, VIEW)
    sid = df.sources[0][0]
    t0 = int(time.time() * 1000)
    off = run(spark, df, sid, args.rows, args.steps, t0, None)
    on = run(spark, df, sid, args.rows, args.steps, t0, t0 + int(args.offset_days * DAY_MS))
    assert off["visible"] == on["visible"], (off["visible"], on["visible"])
    if off["snapshot"] is not None:
        assert off["snapshot"] == on["snapshot"], "expiration changed the visible results"
    print(f"{args.rows} events, 1-year window, {args.steps} steps of 1000 inserts; expiration off vs {args.offset_days:g} day(s)")
    print(f"{'':>18} {'pending':>10} {'held':>10} {'Spark bytes':>12} {'hydrate ms':>11} {'step ms':>8}")
    for label, r in (("off", off), (f"{args.offset_days:g} day", on)):
        print(f"{label:>18} {r['pending']:>10} {r['held']:>10} {r['spark_bytes']:>12} {r['hydrate_ms']:>11.0f} {r['step_ms']:>8.0f}  steps {r['steps']}")
    print(f"ratio (on / off): pending {on['pending'] / max(off['pending'], 1):.3f}, held {on['held'] / max(off['held'], 1):.3f}, "
          f"Spark bytes {on['spark_bytes'] / max(off['spark_bytes'], 1):.3f}, step {on['step_ms'] / max(off['step_ms'], 1e-9):.2f}")
    gs.coord.close()
    gs.tmp.cleanup()


if __name__ == "__main__":
    main()
