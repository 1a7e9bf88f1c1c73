"""SUBSCRIBE end to end (server/subscribe.py, compute/subscribe.py) on the real server.

Bounds: a subscription AS OF T1 UP TO T2 + 1 prints T1's snapshot, then every update in
(T1, T2] at its write's timestamp and ends; the accumulated result at T2 equals PostgreSQL
15's table after the same writes. SNAPSHOT = false prints only the updates. PROGRESS rows
arrive with no writes. Cancel ends the subscription with 57014 and the session stays usable;
a disconnect tears the dataflow down (its Spark storage is given back). A cursor's buffer
is bounded: overflow ends it with 53200. Bad input: unknown objects (42P01), FETCH on a
closed cursor (34000), AS OF before the inputs' since (22000), DECLARE outside a transaction.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from decimal import Decimal

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import reference_postgres

PSQL = shutil.which("psql") or "psql"


@pytest.fixture(scope="module")
def pg() -> Iterator[psycopg.Connection]:
    with reference_postgres("subscribe-") as conninfo, psycopg.connect(conninfo, autocommit=True) as conn:
        yield conn


def _now(mz: psycopg.Connection) -> int:
    """The session's read timestamp (mz_now() of a one-shot query: every acknowledged
    write is at or below it)."""
    return int(mz.execute("SELECT mz_now()::text").fetchone()[0])


def _accumulate(rows: list[tuple], upto: int | None = None) -> Counter:
    """Sum the diffs of (mz_timestamp, mz_diff, cols...) rows with mz_timestamp <= upto."""
    acc: Counter = Counter()
    for ts, diff, *cols in rows:
        if upto is None or int(ts) <= upto:
            acc[tuple(cols)] += int(diff)
    return +acc


def _copy_rows(mz: psycopg.Connection, sql: str) -> list[tuple]:
    with mz.cursor() as cur, cur.copy(sql) as cp:
        cp.set_types(["numeric", "int8", "int4", "text"])
        return [tuple(r) for r in cp.rows()]


def test_as_of_up_to_bounds_and_snapshot(mz_server: MzServer, pg: psycopg.Connection, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    mz = mz_server.connect()
    for conn in (mz, pg):
        conn.execute(f"CREATE TABLE {t} (a int, b text)")
        conn.execute(f"INSERT INTO {t} VALUES (1, 'one'), (2, 'two'), (2, 'two')")
    t1 = _now(mz)
    for conn in (mz, pg):  # one write (a retraction and an insertion): one timestamp
        conn.execute(f"UPDATE {t} SET a = 3, b = 'three' WHERE a = 1")
    t2 = _now(mz)
    mz.execute(f"INSERT INTO {t} VALUES (4, 'four')")
    t3 = _now(mz)

    rows = _copy_rows(mz, f"COPY (SUBSCRIBE {t} AS OF {t1} UP TO {t2 + 1}) TO STDOUT")
    stamps = [int(r[0]) for r in rows]
    assert stamps == sorted(stamps), rows  # in timestamp order
    snapshot = [r[1:] for r in rows if int(r[0]) == t1]
    assert sorted(snapshot) == [(1, 1, "one"), (2, 2, "two")], rows  # consolidated: diff 2
    later = [r for r in rows if int(r[0]) != t1]
    assert len({r[0] for r in later}) == 1 and t1 < int(later[0][0]) <= t2, rows  # one write, one timestamp
    assert sorted(r[1:] for r in later) == [(-1, 1, "one"), (1, 3, "three")], rows
    pg_now = Counter(tuple(r) for r in pg.execute(f"SELECT a, b FROM {t}").fetchall())
    pg_now[(4, "four")] -= 1  # PostgreSQL already has the third write; the subscription ends before it
    assert _accumulate(rows) == +pg_now

    # SNAPSHOT = false: only the updates after AS OF, up to UP TO
    rows = _copy_rows(mz, f"COPY (SUBSCRIBE {t} WITH (SNAPSHOT = false) AS OF {t1} UP TO {t3 + 1}) TO STDOUT")
    assert all(int(r[0]) > t1 for r in rows), rows
    assert sorted(r[1:] for r in rows) == [(-1, 1, "one"), (1, 3, "three"), (1, 4, "four")], rows
    assert _accumulate([(r[0], r[1], r[2], r[3]) for r in rows], t2) == Counter({(3, "three"): 1})

    # UP TO at AS OF: nothing, and done
    assert _copy_rows(mz, f"COPY (SUBSCRIBE {t} AS OF {t2} UP TO {t2}) TO STDOUT") == []
    # psql consumes COPY (SUBSCRIBE ...) TO STDOUT and ends at UP TO
    out = subprocess.run([PSQL, "-X", "-h", mz_server.host, "-p", str(mz_server.port), "-U", "materialize", "materialize",
                          "-v", "ON_ERROR_STOP=1", "-c", f"COPY (SUBSCRIBE (SELECT a FROM {t} WHERE a > 1) AS OF {t3} UP TO {t3 + 1}) TO STDOUT"],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    assert sorted(out.stdout.split("\n")) == ["", f"{t3}\t1\t3", f"{t3}\t1\t4", f"{t3}\t2\t2"], out.stdout


def test_progress_rows_and_cancel(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    mz = mz_server.connect()
    mz.execute(f"CREATE TABLE {t} (a int)")
    mz.execute(f"INSERT INTO {t} VALUES (7)")
    seen: list[tuple] = []
    canceller = threading.Timer(60, mz.cancel)  # a safety net: the loop below cancels first
    canceller.start()
    with pytest.raises(psycopg.errors.QueryCanceled):
        with mz.cursor() as cur, cur.copy(f"COPY (SUBSCRIBE {t} WITH (PROGRESS)) TO STDOUT") as cp:
            for row in cp.rows():
                seen.append(tuple(row))
                if sum(1 for r in seen if r[1] == "t") >= 3:
                    mz.cancel()
    canceller.cancel()
    data = [r for r in seen if r[1] == "f"]
    progress = [int(r[0]) for r in seen if r[1] == "t"]
    assert data == [(data[0][0], "f", "1", "7")], seen
    assert len(progress) >= 3 and progress == sorted(set(progress)), seen  # advancing with no writes
    assert progress[0] > int(data[0][0]) and all(r[2:] == (None, None) for r in seen if r[1] == "t"), seen
    assert mz.execute("SELECT 1").fetchone() == (1,)  # the session is usable
    mz.execute("SET statement_timeout = '4s'")
    with pytest.raises(psycopg.errors.QueryCanceled, match="statement timeout"):
        with mz.cursor() as cur, cur.copy(f"COPY (SUBSCRIBE {t}) TO STDOUT") as cp:
            list(cp.rows())
    mz.execute("RESET statement_timeout")
    assert mz.execute("SELECT 1").fetchone() == (1,)


def _storage(mz: psycopg.Connection) -> int:
    return int(mz.execute("SELECT memory_bytes FROM mz_internal.mzspark_spark_storage").fetchone()[0])


def test_disconnect_tears_down_the_dataflow(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    admin = mz_server.connect()
    admin.execute(f"CREATE TABLE {t} (k int, v text)")
    admin.execute(f"INSERT INTO {t} SELECT g, repeat('x', 40) || g FROM generate_series(1, 20000) AS g")
    before = _storage(admin)
    sub = mz_server.connect()
    cur = sub.cursor()
    stream = cur.stream(f"SUBSCRIBE (SELECT k % 1000 AS m, count(*), max(v) FROM {t} GROUP BY k % 1000)")
    got = [next(stream) for _ in range(1000)]  # the snapshot: one row per group
    assert {r[1] for r in got} == {1} and {r[3] for r in got} == {20}
    held = _storage(admin)
    assert held > before, (before, held)  # the dataflow's state lives in Spark
    sub.pgconn.finish()  # the client goes away mid-stream
    deadline = time.monotonic() + 120
    while _storage(admin) > before and time.monotonic() < deadline:
        time.sleep(1)
    assert _storage(admin) <= before, (before, held, _storage(admin))


def test_cursor_fetch_timeout_overflow_and_bad_input(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    w = mz_server.connect()
    w.execute(f"CREATE TABLE {t} (a int)")
    mz = mz_server.connect(autocommit=False)
    mz.execute(f"DECLARE c CURSOR FOR SUBSCRIBE {t}")
    assert mz.execute("FETCH ALL c WITH (timeout = '0.5s')").fetchall() == []  # empty snapshot, nothing yet
    w.execute(f"INSERT INTO {t} VALUES (1), (2)")
    rows = mz.execute("FETCH 1 c").fetchall()  # waits for the write
    rows += mz.execute("FETCH ALL c WITH (timeout = '1s')").fetchall()
    assert sorted((r[1], r[2]) for r in rows) == [(1, 1), (1, 2)] and len({r[0] for r in rows}) == 1, rows
    assert [d.name for d in mz.execute("FETCH 1 c WITH (timeout = '0s')").description] == ["mz_timestamp", "mz_diff", "a"]
    mz.commit()  # the cursor (and its dataflow) ends with the transaction
    with pytest.raises(psycopg.errors.InvalidCursorName):
        mz.execute("FETCH 1 c")
    mz.rollback()

    # a reader that does not keep up: the subscription ends with 53200 after the rows before it
    mz.execute("SET subscribe_buffer_rows = 3")
    mz.execute(f"DECLARE slow CURSOR FOR SUBSCRIBE {t} WITH (SNAPSHOT = false)")
    w.execute(f"INSERT INTO {t} VALUES (3)")
    w.execute(f"INSERT INTO {t} SELECT g FROM generate_series(10, 20) AS g")
    assert [r[2] for r in mz.execute("FETCH ALL slow").fetchall()] == [3]
    with pytest.raises(psycopg.errors.OutOfMemory, match="subscribe buffer exceeded"):
        mz.execute("FETCH ALL slow WITH (timeout = '60s')")
    mz.rollback()
    mz.autocommit = True

    for sql, err in [
        ("SUBSCRIBE nope_not_there", psycopg.errors.UndefinedTable),
        ("COPY (SUBSCRIBE (SELECT * FROM nope_not_there)) TO STDOUT", psycopg.errors.UndefinedTable),
        ("FETCH 1 nope", psycopg.errors.InvalidCursorName),
        (f"DECLARE c CURSOR FOR SUBSCRIBE {t}", psycopg.errors.NoActiveSqlTransaction),
        (f"SUBSCRIBE {t} WITH (FOO)", psycopg.errors.FeatureNotSupported),
        (f"SUBSCRIBE {t} AS OF 10 UP TO 5", psycopg.errors.DataException),
    ]:
        with pytest.raises(err):
            mz.execute(sql)
        assert mz.execute("SELECT 1").fetchone() == (1,)

    # AS OF before the since: compaction (after 32 batches) advances the table's since
    for i in range(34):
        w.execute(f"INSERT INTO {t} VALUES ({100 + i})")
    deadline = time.monotonic() + 60
    while True:
        try:
            with mz.cursor() as cur, cur.copy(f"COPY (SUBSCRIBE {t} AS OF 1 UP TO 2) TO STDOUT") as cp:
                list(cp.rows())
        except psycopg.errors.DataException as e:
            assert "is not valid for all inputs" in str(e)
            break
        assert time.monotonic() < deadline, "the since never advanced"
        time.sleep(1)
    assert mz.execute("SELECT count(*) FROM " + t).fetchone() == (48,)


@pytest.mark.slow
def test_concurrent_subscribers_and_one_that_never_reads(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    """20 subscribers on one table, one of which never reads its socket: writes are
    acknowledged, the 19 readers each see every write, other sessions keep answering."""
    from tests.integration.rawpg import RawConn, query

    t = uniq("t")
    w = mz_server.connect()
    w.execute(f"CREATE TABLE {t} (a int, pad text)")
    stuck = RawConn.startup(mz_server.host, mz_server.port)
    stuck.send(query(f"COPY (SUBSCRIBE {t}) TO STDOUT"))  # and never reads again
    readers = 19
    got: dict[int, list[tuple]] = {i: [] for i in range(readers)}
    conns = [mz_server.connect() for _ in range(readers)]
    errors: list[BaseException] = []

    def read(i: int) -> None:
        try:
            with conns[i].cursor() as cur, cur.copy(f"COPY (SUBSCRIBE {t}) TO STDOUT") as cp:
                for row in cp.rows():
                    got[i].append(tuple(row))
        except psycopg.errors.QueryCanceled:
            pass
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=read, args=(i,), daemon=True) for i in range(readers)]
    for th in threads:
        th.start()
    pad = "p" * 500
    for batch in range(3):
        started = time.monotonic()
        values = ", ".join(f"({g}, '{pad}')" for g in range(batch * 1000, batch * 1000 + 1000))
        w.execute(f"INSERT INTO {t} VALUES {values}")  # constant rows: a durable write, no Spark job
        assert time.monotonic() - started < 30  # a write never waits for subscribers
        assert w.execute("SELECT 1").fetchone() == (1,)
    deadline = time.monotonic() + 600
    while any(len(g) < 3000 for g in got.values()) and time.monotonic() < deadline and not errors:
        time.sleep(1)
    for c in conns:
        c.cancel()
    for th in threads:
        th.join(60)
    assert not errors, errors
    for i, rows in got.items():
        assert sorted(int(r[2]) for r in rows) == list(range(3000)), (i, len(rows))
        assert all(r[1] == "1" for r in rows)
    stuck.sock.close()
    assert w.execute(f"SELECT count(*) FROM {t}").fetchone() == (3000,)


def test_subscribe_types(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    """RowDescription: mz_timestamp numeric, mz_progressed boolean, mz_diff bigint, columns."""
    t = uniq("t")
    mz = mz_server.connect()
    mz.execute(f"CREATE TABLE {t} (a int, b text)")
    mz.execute(f"INSERT INTO {t} VALUES (5, 'e')")
    ts = _now(mz)
    cur = mz.cursor()
    rows = list(cur.stream(f"SUBSCRIBE TO {t} WITH (PROGRESS = true) AS OF {ts} UP TO {ts + 1}"))
    assert [(d.name, d.type_code) for d in cur.description] == [
        ("mz_timestamp", 1700), ("mz_progressed", 16), ("mz_diff", 20), ("a", 23), ("b", 25)]
    assert rows[0] == (Decimal(ts), False, 1, 5, "e"), rows
    assert all(r[1] for r in rows[1:]), rows


def test_subscribe_to_a_temporal_filter_sees_the_retraction_with_no_write(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    """SUBSCRIBE over `mz_now()` < a row's time + 4 s: the row's +1 at its insert, then its
    −1 once its time + 4 s has passed, with nothing written in between."""
    t = uniq("tw")
    mz = mz_server.connect(autocommit=True)
    mz.execute(f"CREATE TABLE {t} (id int, at bigint)")
    start = _now(mz)
    mz.execute(f"INSERT INTO {t} VALUES (1, {start})")
    sql = (f"COPY (SUBSCRIBE (SELECT id FROM {t} WHERE mz_now() < at + 4000) AS OF {start} UP TO {start + 12000}) TO STDOUT")
    with mz.cursor() as cur, cur.copy(sql) as cp:
        cp.set_types(["numeric", "int8", "int4"])
        rows = [tuple(r) for r in cp.rows()]
    assert [(int(d), i) for _, d, i in rows] == [(1, 1), (-1, 1)], rows
    # never before it is due; stamped with the time of the step that releases it (steps run
    # about once a second plus their own duration: the time is coarsened, as for views)
    assert start + 4000 <= int(rows[1][0]) < start + 12000, rows


def test_a_subscription_reports_its_hydration(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    """A subscription is an installed dataflow like an index (issue 12): its LIR nodes are in
    mz_lir_mapping under its transient id; its per-worker statuses are all true once its
    snapshot arrived, with a hydration time; they vanish when it ends."""
    t, d = uniq("t"), uniq("d")
    admin = mz_server.connect(autocommit=True)
    admin.execute(f"CREATE TABLE {t} (k int, v int)")
    admin.execute(f"CREATE TABLE {d} (k int, name text)")
    admin.execute(f"INSERT INTO {t} SELECT g, g % 7 FROM generate_series(1, 5000) AS g")
    admin.execute(f"INSERT INTO {d} SELECT g, 'n' || g FROM generate_series(0, 99) AS g")

    def transient() -> set[str]:
        return {r[0] for r in admin.execute(
            "SELECT object_id FROM mz_internal.mz_compute_operator_hydration_statuses_per_worker "
            "WHERE object_id LIKE 't%'").fetchall()}

    before = transient()
    sub = mz_server.connect(autocommit=False)
    sub.execute(f"DECLARE c CURSOR FOR SUBSCRIBE (SELECT d.name, count(*) AS n, sum(t.v) AS s "
                f"FROM {t} AS t JOIN {d} AS d ON t.k % 100 = d.k GROUP BY d.name)")
    snapshot = sub.execute("FETCH 100 c").fetchall()  # returns once hydrated
    assert len(snapshot) == 100 and {r[1] for r in snapshot} == {1}
    new = transient() - before
    assert len(new) == 1, new
    (oid,) = new
    nodes = {int(i): op for i, op in admin.execute(
        "SELECT lir_id, operator FROM mz_introspection.mz_lir_mapping WHERE global_id = %s", (oid,)).fetchall()}
    assert any("Join" in op for op in nodes.values()) and any("Reduce" in op for op in nodes.values()), nodes
    rows = admin.execute(
        "SELECT plan_node_id, worker_id, hydrated FROM mz_internal.mz_compute_operator_hydration_statuses_per_worker "
        "WHERE object_id = %s AND replica_id = 'u1'", (oid,)).fetchall()
    workers = {int(w) for _n, w, _h in rows}
    assert workers == set(range(len(workers))) and workers, rows
    assert {(int(n), int(w)) for n, w, _h in rows} == {(n, w) for n in nodes for w in workers}
    assert all(h for _n, _w, h in rows), rows
    (hydrated, hydration_time), = admin.execute(
        "SELECT hydrated, hydration_time FROM mz_internal.mz_compute_hydration_statuses WHERE object_id = %s",
        (oid,)).fetchall()
    assert hydrated is True and hydration_time is not None
    assert admin.execute("SELECT hydrated FROM mz_internal.mz_hydration_statuses WHERE object_id = %s",
                         (oid,)).fetchall() == [(True,)]
    sub.commit()  # the cursor, and with it the subscription, ends
    deadline = time.monotonic() + 60
    while oid in transient() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert oid not in transient()
    for rel, col in (("mz_introspection.mz_lir_mapping", "global_id"),
                     ("mz_internal.mz_compute_hydration_statuses", "object_id")):
        assert admin.execute(f"SELECT count(*) FROM {rel} WHERE {col} = %s", (oid,)).fetchone()[0] == 0, rel
    sub.close()
    admin.close()
