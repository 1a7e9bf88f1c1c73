"""Temporal filters and dataflow expiration through the real server (DESIGN §7).

The seed example with a 5-second window: an index on a view with
`mz_now() <= event_ts + INTERVAL '5 seconds'` shows an inserted row, and ~5 s later, with no
further write, no longer does; at every read its results equal a one-shot SELECT of the
definition at the same timestamp and PostgreSQL with mz_now() replaced by it (its event_ts
is 10 s or more ahead of the insert, so reads of seconds under load still see it in its window). A
materialized view (30-second window) shows the row, then drops it, and its shard holds the
+1 and the −1. With `compute_replica_expiration_offset` a 30-day
window's retractions are never stored (fewer updates held, the same results), and a short
offset restarts the replica before any frontier passes its expiration.

The materialized view is compared with the others as of its own steps only (it must show the
row, then drop it, and never show anything else): a step stamps all its updates with the
step's time, so a read at a timestamp inside the span of a step in progress can see the
view as of the step before (a property of the controller's steps, not of temporal filters;
the index falls back to a one-shot read there and is compared exactly).
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pyarrow.parquet as pq
import pytest

from tests.integration.harness import MzServer
from tests.pgref import reference_postgres

WINDOW = "mz_now() <= event_ts + INTERVAL '5 seconds'"
LEAD_S = 10
MV_WINDOW_MS = 30_000
MV_WINDOW = "mz_now() <= event_ts + INTERVAL '30 seconds'"


@pytest.fixture(scope="module")
def pg() -> Iterator[psycopg.Connection]:
    with reference_postgres("temporal-") as conninfo, psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SET TIME ZONE 'UTC'")
        conn.execute("CREATE TABLE events (content text, event_ts timestamptz)")
        yield conn


def pg_window(pg: psycopg.Connection, events: list[tuple], now_ms: int, predicate: str) -> list[tuple]:
    """The definition in PostgreSQL at `now_ms` (mz_now() replaced by that timestamp)."""
    pg.execute("DELETE FROM events")
    with pg.cursor() as cur:
        cur.executemany("INSERT INTO events VALUES (%s, %s)", events)
    now = dt.datetime.fromtimestamp(now_ms / 1000, tz=dt.UTC).isoformat()
    # mz_now() <= e compares milliseconds: e is truncated to them (Materialize's cast)
    sql = predicate.replace("mz_now()", f"'{now}'::timestamptz").replace("event_ts +", "date_trunc('milliseconds', event_ts) +")
    return sorted(pg.execute(f"SELECT content FROM events WHERE {sql}").fetchall())


def snapshot(mz: psycopg.Connection, reads: list[str]) -> tuple[int, list[list[tuple]]]:
    """mz_now() and the results of `reads`, all at one timestamp (one read transaction)."""
    mz.execute("BEGIN")
    try:
        (now,) = mz.execute("SELECT mz_now()").fetchone()
        out = [sorted(mz.execute(q).fetchall()) for q in reads]
    finally:
        mz.execute("COMMIT")
    return int(now), out


def shard_updates(data_dir: Path, marker: str, columns: int) -> list[list[tuple[int, int]]]:
    """(time, diff) of the rows whose first column is `marker`, per shard of `columns` data
    columns that has any."""
    out: dict[str, list[tuple[int, int]]] = {}
    for f in sorted((data_dir / "shards").glob("*/*.parquet")):
        t = pq.read_table(f).to_pydict()
        if len(t) != columns + 2 or not t["c0"] or not isinstance(t["c0"][0], str):
            continue
        for c0, ts, d in zip(t["c0"], t["time"], t["diff"], strict=True):
            if c0 == marker:
                out.setdefault(f.parent.name, []).append((ts, d))
    return [sorted(v) for v in out.values()]


def test_five_second_window_appears_then_disappears(mz_server: MzServer, pg: psycopg.Connection) -> None:
    mz = mz_server.connect(autocommit=True)
    schema = f"tmp_{uuid.uuid4().hex[:8]}"
    mz.execute(f"CREATE SCHEMA {schema}")
    mz.execute(f"SET search_path = {schema}")
    mz.execute("CREATE TABLE events (content text, event_ts timestamptz)")
    mz.execute(f"CREATE VIEW last_5s AS SELECT content, event_ts FROM events WHERE {WINDOW}")
    mz.execute("CREATE INDEX last_5s_idx ON last_5s (content)")
    # the view's window is longer than a step takes even on a loaded machine (a step at a
    # time past a row's window never shows it: correct, but nothing to look at)
    mz.execute(f"CREATE MATERIALIZED VIEW last_mv AS SELECT content FROM events WHERE {MV_WINDOW}")
    marker = f"hello-{uuid.uuid4().hex[:6]}"
    started = time.monotonic()
    mz.execute("INSERT INTO events VALUES ('old', now() - INTERVAL '1 minute')")
    # event_ts a little ahead, so that even on a loaded machine (inserts and one-shot reads of
    # seconds) the row is read while in its window: visible from the insert to event_ts + 5 s
    lead = max(LEAD_S, round(6 * (time.monotonic() - started)))
    mz.execute(f"INSERT INTO events VALUES ('{marker}', now() + INTERVAL '{lead} seconds')")
    inserted = time.monotonic()
    ((event_ts,),) = mz.execute(f"SELECT event_ts FROM events WHERE content = '{marker}'").fetchall()
    event_ms = round(event_ts.timestamp() * 1000)
    reads = ["SELECT content FROM last_5s", f"SELECT content FROM events WHERE {WINDOW}"]
    (mv_id,) = mz.execute("SELECT id FROM mz_catalog.mz_objects WHERE name = 'last_mv'").fetchone()
    seen, gone_after, mv_steps = False, None, set()
    while time.monotonic() - inserted < 240:  # steps take seconds (tens under load)
        now, (idx, oneshot) = snapshot(mz, reads)
        events = mz.execute("SELECT content, event_ts FROM events").fetchall()
        assert idx == oneshot == pg_window(pg, events, now, WINDOW), now
        (front,) = mz.execute("SELECT time FROM mz_internal.mz_compute_frontiers WHERE object_id = %s", [mv_id]).fetchone()
        mv_steps.add(int(front) - 1)
        if idx == [(marker,)]:
            seen = True
        elif seen and idx == [] and gone_after is None:
            gone_after = time.monotonic() - inserted
        if gone_after is not None and max(mv_steps) >= event_ms + MV_WINDOW_MS:
            break
        time.sleep(0.4)
    assert seen, "the inserted row never showed"
    assert gone_after is not None, "the row did not disappear without writes"
    # no earlier than the window allows (5 s after event_ts); later by the steps' and reads'
    # duration (about a second on an idle machine, tens of seconds on a loaded one)
    assert lead + 4.0 <= gone_after <= lead + 60, (lead, gone_after)
    assert sorted(mz.execute("SELECT content FROM last_mv").fetchall()) == []
    # The view's shard: if one of its steps fell inside the row's window (after the insert),
    # the insertion while the row was valid and then the retraction, never before its time.
    # (A step spanning the whole window rightly shows nothing: only under heavy load.)
    ((written, _),) = shard_updates(mz_server.data_dir, marker, 2)[0]
    in_window = [t for t in mv_steps if written <= t < event_ms + MV_WINDOW_MS]
    mv_updates = shard_updates(mz_server.data_dir, marker, 1)
    if in_window or mv_updates:
        assert len(mv_updates) == 1, (in_window, mv_updates)
        ((t1, d1), (t2, d2)) = mv_updates[0]
        assert (d1, d2) == (1, -1), mv_updates
        assert written <= t1 < event_ms + MV_WINDOW_MS <= t2, (written, event_ms, mv_updates)
    else:
        assert mv_updates == [], mv_updates
    mz.execute(f"DROP SCHEMA {schema} CASCADE")


def expiration_rows(mz: psycopg.Connection) -> dict[str, tuple]:
    rows = mz.execute("SELECT o.name, e.expiration, e.pending_updates, e.held_updates, e.replica_started "
                      "FROM mz_internal.mzspark_dataflow_expiration e JOIN mz_catalog.mz_objects o ON o.id = e.object_id").fetchall()
    return {r[0]: tuple(int(x) if x is not None else None for x in r[1:]) for r in rows}


@pytest.fixture
def private_server(tmp_path: Path) -> Iterator[MzServer]:
    server = MzServer(tmp_path / "mzdata", tmp_path / "server.log")
    server.start(timeout=300)  # a loaded machine starts Spark slowly
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.slow
def test_expiration_holds_half_the_updates_with_the_same_results(private_server: MzServer) -> None:
    mz = private_server.connect(autocommit=True)
    assert mz.execute("SHOW compute_replica_expiration_offset").fetchone() == ("0",)
    with pytest.raises(psycopg.errors.CantChangeRuntimeParam):
        mz.execute("SET compute_replica_expiration_offset = '1 day'")
    mz.execute("CREATE TABLE events (content text, event_ts timestamptz)")
    for v in ("plain", "expiring"):
        mz.execute(f"CREATE VIEW {v} AS SELECT content, event_ts FROM events WHERE mz_now() <= event_ts + INTERVAL '30 days'")
    mz.execute("CREATE INDEX plain_idx ON plain (content)")
    mz.execute("ALTER SYSTEM SET compute_replica_expiration_offset = '1 day'")
    assert mz.execute("SHOW compute_replica_expiration_offset").fetchone() == ("1day",)
    mz.execute("CREATE INDEX expiring_idx ON expiring (content)")
    mz.execute("INSERT INTO events SELECT 'e' || g, now() - g * INTERVAL '1 hour' FROM generate_series(1, 200) AS g")
    mz.execute("INSERT INTO events VALUES ('too old', now() - INTERVAL '31 days'), ('next', now())")
    plain = sorted(mz.execute("SELECT content FROM plain").fetchall())
    assert plain == sorted(mz.execute("SELECT content FROM expiring").fetchall())
    assert len(plain) == 201
    rows = expiration_rows(mz)
    exp_plain, pending_plain, held_plain, started = rows["plain_idx"]
    exp, pending, held, started2 = rows["expiring_idx"]
    assert exp_plain is None and started == started2
    assert exp == started + 86_400_000
    assert pending_plain == 201 and pending == 0  # every retraction is 30 days ahead: past the expiration
    assert held <= 0.55 * held_plain, (held, held_plain)
    mz.execute("ALTER SYSTEM RESET compute_replica_expiration_offset")
    assert mz.execute("SHOW compute_replica_expiration_offset").fetchone() == ("0",)


@pytest.mark.slow
def test_short_offset_restarts_the_replica_before_expiration(tmp_path: Path) -> None:
    server = MzServer(tmp_path / "mzdata", tmp_path / "server.log", extra_args=("--compute-replica-expiration-offset", "60s"))
    server.start(timeout=300)
    try:
        mz = server.connect(autocommit=True)
        assert mz.execute("SHOW compute_replica_expiration_offset").fetchone() == ("1m",)
        mz.execute("SET statement_timeout = '240s'")  # a read waiting on a restart fails, never hangs
        mz.execute("CREATE TABLE events (content text, event_ts timestamptz)")
        mz.execute(f"CREATE VIEW w AS SELECT content FROM events WHERE {WINDOW}")
        mz.execute("CREATE INDEX w_idx ON w (content)")
        mz.execute(f"CREATE MATERIALIZED VIEW w_mv AS SELECT content FROM events WHERE {WINDOW}")
        starts = set()
        deadline = time.monotonic() + 150  # an offset must exceed hydration, even under load
        k = 0
        while time.monotonic() < deadline:
            k += 1
            mz.execute(f"INSERT INTO events VALUES ('r{k}', now())")
            frontiers = {n: int(t) for n, t in mz.execute(
                "SELECT o.name, f.time FROM mz_internal.mz_compute_frontiers f JOIN mz_catalog.mz_objects o ON o.id = f.object_id").fetchall()}
            for name, (exp, _pending, _held, started) in expiration_rows(mz).items():
                starts.add(started)
                if name in frontiers and exp is not None:
                    assert frontiers[name] <= exp, (name, frontiers[name], exp)
            _, (idx, oneshot) = snapshot(mz, ["SELECT content FROM w", f"SELECT content FROM events WHERE {WINDOW}"])
            assert idx == oneshot
            time.sleep(1.0)
        assert len(starts) >= 2, starts  # it restarted ...
        log = server.log_tail(400)
        assert "replica expired: restarting" in log
        # ... and the results after the restarts are right: the index's, and the view's once
        # it stepped past a last insert
        mz.execute("INSERT INTO events VALUES ('last', now())")
        for _ in range(120):
            _, (idx, oneshot) = snapshot(mz, ["SELECT content FROM w", f"SELECT content FROM events WHERE {WINDOW}"])
            mv = sorted(mz.execute("SELECT content FROM w_mv").fetchall())
            assert idx == oneshot
            if ("last",) in mv:
                break
            time.sleep(1.0)
        assert ("last",) in mv and set(mv) <= {(f"r{i}",) for i in range(k + 1)} | {("last",)}, mv
    finally:
        server.stop()


@pytest.mark.slow
def test_a_subscribe_expires_and_goes_on_after_the_replica_restarts(tmp_path: Path) -> None:
    """A SUBSCRIBE over a 30-day temporal window, with a 15-second replica expiration offset
    and no index or view: the subscription expires (its 30-day retractions are never held),
    its expiration alone restarts the replica, and it is rebuilt at its frontier. Every row
    inserted meanwhile arrives exactly once with diff +1 (nothing twice, nothing retracted),
    in time order, up to UP TO."""
    import threading

    server = MzServer(tmp_path / "mzdata", tmp_path / "server.log", extra_args=("--compute-replica-expiration-offset", "15s"))
    server.start(timeout=300)
    try:
        mz = server.connect(autocommit=True)
        mz.execute("CREATE TABLE ev (id int, at timestamptz)")
        start = int(mz.execute("SELECT mz_now()::text").fetchone()[0])
        span_ms = 50_000
        got: list[tuple] = []
        failed: list[BaseException] = []

        def subscribe() -> None:
            try:
                with server.connect(autocommit=True) as c, c.cursor() as cur, cur.copy(
                        f"COPY (SUBSCRIBE (SELECT id FROM ev WHERE mz_now() <= at + INTERVAL '30 days') "
                        f"AS OF {start} UP TO {start + span_ms}) TO STDOUT") as cp:
                    cp.set_types(["numeric", "int8", "int4"])
                    got.extend(tuple(r) for r in cp.rows())
            except BaseException as e:  # noqa: BLE001 - reported below
                failed.append(e)

        reader = threading.Thread(target=subscribe)
        reader.start()
        inserted = []
        listed = []  # the subscription's rows in mzspark_dataflow_expiration, while it runs
        k = 0
        while int(mz.execute("SELECT mz_now()::text").fetchone()[0]) < start + span_ms - 5_000:
            k += 1
            mz.execute(f"INSERT INTO ev VALUES ({k}, now())")
            inserted.append(k)
            listed += mz.execute("SELECT object_id, expiration::text, replica_started::text "
                                 "FROM mz_internal.mzspark_dataflow_expiration WHERE object_id LIKE 't%'").fetchall()
            time.sleep(1.5)
        reader.join(300)
        # listed under its transient id, expiring no sooner than 15 s after its replica started
        assert listed and all(int(e) >= int(r) + 15_000 for _i, e, r in listed if e is not None), listed
        assert any(e is not None for _i, e, _r in listed), listed
        assert not reader.is_alive() and not failed, failed
        times = [int(t) for t, _, _ in got]
        assert times == sorted(times) and all(start <= t < start + span_ms for t in times), got
        assert sorted((int(d), i) for _, d, i in got) == [(1, i) for i in inserted], got
        log = server.log_tail(2000)
        assert "replica expired: restarting" in log and "rebuilt at" in log, log[-2000:]
    finally:
        server.stop()
