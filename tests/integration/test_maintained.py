"""Maintained materialized views and indexes (compute/controller.py) against PostgreSQL 15.

After every write each materialized view and each indexed read must equal PostgreSQL's
answer for the same definition (as a plain view there); frontiers advance; DROP gives the
Spark storage memory back; a step error puts only its view in an error state (SQLSTATE kept)
and a later successful step clears it; after a clean restart and after kill -9 every view's
shard again equals a recompute and no acknowledged write is lost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import reference_postgres

TABLES = ["CREATE TABLE a (k int, v int)", "CREATE TABLE b (k int, w text)"]
# name -> definition (a materialized view here, a plain view in PostgreSQL)
VIEWS = {
    "agg": "SELECT a.k, count(*) AS n, sum(a.v) AS s, max(b.w) AS mw FROM a JOIN b ON a.k = b.k GROUP BY a.k",
    "filt": "SELECT k, v, v * 2 AS v2 FROM a WHERE v > 2",
    "top": "SELECT k, v FROM (SELECT k, v, row_number() OVER (PARTITION BY k ORDER BY v DESC) AS r FROM a) t WHERE r = 1",
    "onmv": "SELECT count(*) AS c, min(n) AS mn FROM agg WHERE n > 1",
}
# a plain view with an index (in both systems a view; in mzspark read from its index)
INDEXED_VIEW = "CREATE VIEW vj AS SELECT a.k, a.v, b.w FROM a JOIN b ON a.k = b.k"
INDEXED_READS = [
    "SELECT * FROM vj WHERE k = 2",
    "SELECT count(*), sum(v) FROM vj",
    "SELECT * FROM a WHERE k = 1",
    "SELECT k, v FROM a WHERE v > 2",
    "SELECT * FROM agg WHERE k = 2",
]
WRITES = [
    ["INSERT INTO a VALUES (1, 1), (1, 5), (2, 3), (NULL, 4)", "INSERT INTO b VALUES (1, 'x'), (2, 'y'), (2, 'z')"],
    ["INSERT INTO a VALUES (2, 3), (3, 9)"],  # a duplicate row
    ["UPDATE a SET v = v + 10 WHERE k = 2"],
    ["BEGIN", "INSERT INTO b VALUES (3, NULL)", "INSERT INTO a VALUES (3, 1), (4, 4)", "COMMIT"],
    ["DELETE FROM b WHERE w = 'z'", "DELETE FROM a WHERE k = 1"],
    ["DELETE FROM a", "DELETE FROM b"],
]


def _rows(conn: psycopg.Connection, sql: str) -> list[tuple]:
    return sorted((tuple(r) for r in conn.execute(sql).fetchall()), key=repr)


def _frontiers(mz: psycopg.Connection) -> dict[str, int]:
    return {o: int(t) for o, r, t in mz.execute("SELECT object_id, replica_id, time FROM mz_internal.mz_compute_frontiers").fetchall()}


def _ids(mz: psycopg.Connection, names: list[str]) -> dict[str, str]:
    got = dict(mz.execute("SELECT name, id FROM mz_catalog.mz_objects WHERE name = ANY(%s)", [names]).fetchall())
    return {n: got[n] for n in names}


def _storage_bytes(mz: psycopg.Connection) -> int:
    return int(mz.execute("SELECT memory_bytes FROM mz_internal.mzspark_spark_storage").fetchone()[0])


@pytest.fixture(scope="module")
def pg() -> Iterator[psycopg.Connection]:
    with reference_postgres("maintained-") as conninfo, psycopg.connect(conninfo, autocommit=True) as conn:
        yield conn


def test_views_and_indexes_follow_writes(mz_server: MzServer, pg: psycopg.Connection) -> None:
    mz = mz_server.connect(autocommit=True)
    mz.execute("CREATE SCHEMA mnt")
    mz.execute("SET search_path = mnt")
    pg.execute("CREATE SCHEMA mnt")
    pg.execute("SET search_path = mnt")
    for sql in TABLES:
        mz.execute(sql)
        pg.execute(sql)
    for name, definition in VIEWS.items():
        mz.execute(f"CREATE MATERIALIZED VIEW {name} AS {definition}")
        pg.execute(f"CREATE VIEW {name} AS {definition}")
    mz.execute(INDEXED_VIEW)
    pg.execute(INDEXED_VIEW)
    mz.execute("CREATE INDEX a_k ON a (k)")
    mz.execute("CREATE INDEX agg_k ON agg (k)")
    mz.execute("CREATE INDEX vj_k ON vj (k)")
    plan = "\n".join(r[0] for r in mz.execute("EXPLAIN SELECT * FROM vj WHERE k = 2"))
    assert "Explained Query (fast path):" in plan and "Used Indexes:\n  - materialize.mnt.vj_k" in plan, plan
    ids = _ids(mz, [*VIEWS, "a_k", "agg_k", "vj_k"])
    seen = _frontiers(mz)
    assert set(ids.values()) <= set(seen)
    for batch in WRITES:
        for sql in batch:
            mz.execute(sql)
            pg.execute(sql)
        for name in VIEWS:
            assert _rows(mz, f"SELECT * FROM {name}") == _rows(pg, f"SELECT * FROM {name}"), (batch, name)
        for sql in INDEXED_READS:
            assert _rows(mz, sql) == _rows(pg, sql), (batch, sql)
        now = _frontiers(mz)
        for name in VIEWS:  # a read of a view waited for its frontier to pass the write
            assert now[ids[name]] > seen[ids[name]], (batch, name)
        seen = now
    mz.execute("DROP SCHEMA mnt CASCADE")
    assert not set(ids.values()) & set(_frontiers(mz))


def test_drop_gives_storage_memory_back(mz_server: MzServer) -> None:
    mz = mz_server.connect(autocommit=True)
    mz.execute("CREATE TABLE mem (k int, v text)")
    mz.execute("INSERT INTO mem SELECT g, repeat('x', 50) || g FROM generate_series(1, 20000) AS g")
    mz.execute("SELECT count(*) FROM mem").fetchall()
    before = _storage_bytes(mz)
    mz.execute("CREATE MATERIALIZED VIEW mem_mv AS SELECT k % 10 AS m, count(*) AS n, max(v) AS x FROM mem GROUP BY k % 10")
    mz.execute("CREATE INDEX mem_idx ON mem (k)")
    assert _rows(mz, "SELECT * FROM mem WHERE k = 7") == [(7, "x" * 50 + "7")]
    hydrated = _storage_bytes(mz)
    assert hydrated > before + 500_000  # the index holds the table's 20k rows
    mz.execute("DROP INDEX mem_idx")
    mz.execute("DROP MATERIALIZED VIEW mem_mv")
    after = _storage_bytes(mz)
    assert after <= before + 64 * 1024, (before, hydrated, after)
    mz.execute("DROP TABLE mem")


def test_error_state_is_per_object_and_clears(mz_server: MzServer) -> None:
    mz = mz_server.connect(autocommit=True)
    other = mz_server.connect(autocommit=True)
    mz.execute("CREATE TABLE ex (x int)")
    mz.execute("INSERT INTO ex VALUES (1), (2)")
    mz.execute("CREATE MATERIALIZED VIEW ex_div AS SELECT 10 / x AS q FROM ex")
    mz.execute("CREATE MATERIALIZED VIEW ex_ok AS SELECT x + 1 AS y FROM ex")
    assert _rows(mz, "SELECT * FROM ex_div") == sorted([(5,), (10,)], key=repr)
    mz.execute("INSERT INTO ex VALUES (0)")
    with pytest.raises(psycopg.errors.DivisionByZero):
        mz.execute("SELECT * FROM ex_div")
    # the other view, the table and other sessions keep working
    assert _rows(other, "SELECT * FROM ex_ok") == [(1,), (2,), (3,)]
    assert _rows(other, "SELECT * FROM ex") == [(0,), (1,), (2,)]
    with pytest.raises(psycopg.errors.DivisionByZero):
        other.execute("SELECT * FROM ex_div")
    mz.execute("DELETE FROM ex WHERE x = 0")
    assert _rows(mz, "SELECT * FROM ex_div") == sorted([(5,), (10,)], key=repr)
    assert _rows(other, "SELECT * FROM ex_ok") == [(2,), (3,)]
    # an unsupported construct is refused at CREATE (0A000), and nothing is left behind
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        mz.execute("CREATE MATERIALIZED VIEW ex_tf AS SELECT x FROM ex WHERE mz_now() > 5 OR x > 1")
    assert mz.execute("SELECT count(*) FROM mz_catalog.mz_objects WHERE name = 'ex_tf'").fetchone() == (0,)
    mz.execute("DROP TABLE ex CASCADE")


def _recompute(mz: psycopg.Connection, name: str) -> list[tuple]:
    return _rows(mz, VIEWS[name])


def test_restart_and_kill_resume_from_the_shard(mz_server_factory: Callable[[], MzServer]) -> None:
    server = mz_server_factory()
    mz = server.connect(autocommit=True)
    for sql in TABLES:
        mz.execute(sql)
    for name in ("agg", "filt", "onmv"):
        mz.execute(f"CREATE MATERIALIZED VIEW {name} AS {VIEWS[name]}")
    mz.execute("CREATE INDEX a_k ON a (k)")
    for sql in WRITES[0] + WRITES[1]:
        mz.execute(sql)
    expected = {n: _rows(mz, f"SELECT * FROM {n}") for n in ("agg", "filt", "onmv")}
    for n, rows in expected.items():
        assert rows == _recompute(mz, n)
    mz.close()
    server.restart()
    mz = server.connect(autocommit=True)
    for n, rows in expected.items():
        assert _rows(mz, f"SELECT * FROM {n}") == rows == _recompute(mz, n)
    # acknowledged writes, then a crash while the views may still be stepping
    acked = []
    for i in range(5):
        mz.execute(f"INSERT INTO a VALUES ({i}, {i * 3})")
        acked.append((i, i * 3))
    mz.execute("INSERT INTO b VALUES (4, 'w')")
    server.kill()
    server.start()
    mz = server.connect(autocommit=True)
    table = _rows(mz, "SELECT * FROM a")
    assert all(r in table for r in acked)
    for n in ("agg", "filt", "onmv"):
        assert _rows(mz, f"SELECT * FROM {n}") == _recompute(mz, n), n
    assert _rows(mz, "SELECT * FROM a WHERE k = 1") == _rows(mz, "SELECT * FROM a WHERE k + 0 = 1")
    # and they keep being maintained
    mz.execute("DELETE FROM a WHERE k = 2")
    for n in ("agg", "filt", "onmv"):
        assert _rows(mz, f"SELECT * FROM {n}") == _recompute(mz, n), n


def test_timeout_and_cancel_while_a_read_waits_for_a_view(mz_server: MzServer) -> None:
    """A read of a materialized view waits until the view has caught up with the read's
    timestamp; statement_timeout and a cancel request end that wait with 57014, and the
    session (and the view) keep working."""
    import threading
    import time

    mz = mz_server.connect(autocommit=True)
    mz.execute("CREATE TABLE slow_in (n bigint)")
    mz.execute("INSERT INTO slow_in VALUES (3)")
    mz.execute("CREATE MATERIALIZED VIEW slow AS SELECT count(*) AS c FROM slow_in, generate_series(1, slow_in.n)")
    assert _rows(mz, "SELECT c FROM slow") == [(3,)]
    # a step that generates 30M rows: seconds of Spark work, during which reads wait
    mz.execute("INSERT INTO slow_in VALUES (30000000)")
    timed, cancelled = mz_server.connect(autocommit=True), mz_server.connect(autocommit=True)
    timed.execute("SET statement_timeout = '300ms'")
    errors: dict[str, BaseException] = {}

    def read(name: str, conn: psycopg.Connection) -> None:
        try:
            conn.execute("SELECT c FROM slow").fetchall()
        except BaseException as e:  # noqa: BLE001
            errors[name] = e

    started = time.monotonic()
    threads = [threading.Thread(target=read, args=(n, c)) for n, c in (("timed", timed), ("cancelled", cancelled))]
    for t in threads:
        t.start()
    time.sleep(0.3)
    cancelled.cancel()
    for t in threads:
        t.join(60)
    assert isinstance(errors.get("timed"), psycopg.errors.QueryCanceled), errors
    assert "statement timeout" in str(errors["timed"])
    assert isinstance(errors.get("cancelled"), psycopg.errors.QueryCanceled), errors
    assert time.monotonic() - started < 30
    # the sessions still work, and the view catches up
    timed.execute("SET statement_timeout = 0")
    assert _rows(timed, "SELECT c FROM slow") == [(30_000_003,)]
    assert _rows(cancelled, "SELECT 1") == [(1,)]
    mz.execute("DROP TABLE slow_in CASCADE")
