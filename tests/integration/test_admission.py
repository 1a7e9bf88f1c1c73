"""Admission control (issue 14): at most --max-concurrent-queries statements run Spark jobs at
once, at most --max-queued-queries wait (FIFO); past that a statement fails at once with 53300,
a queued one still obeys statement_timeout and cancel (57014), and statements that need no
Spark job (constants, parameters, SHOW) are never queued behind them."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psycopg
import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.slow


def _run(server: MzServer, sql: str, out: dict[str, object], key: str, setup: str | None = None) -> threading.Thread:
    def go() -> None:
        try:
            with server.connect(autocommit=True) as c:
                if setup:
                    c.execute(setup)
                out[key] = c.execute(sql).fetchall()
        except psycopg.Error as e:
            out[key] = e.sqlstate
    t = threading.Thread(target=go)
    t.start()
    return t


def test_queue_bound_timeouts_and_constants(tmp_path: Path) -> None:
    server = MzServer(tmp_path / "mzdata", tmp_path / "server.log",
                      extra_args=("--max-concurrent-queries", "1", "--max-queued-queries", "1"))
    server.start()
    try:
        with server.connect(autocommit=True) as c:
            c.execute("CREATE TABLE big (n int)")
            c.execute("INSERT INTO big SELECT g FROM generate_series(1, 100000) AS g")
            c.execute("CREATE TABLE small (n int)")
            c.execute("INSERT INTO small VALUES (1), (2), (3)")
            assert c.execute("SELECT sum(n) FROM small").fetchall() == [(6,)]
        out: dict[str, object] = {}
        with server.connect(autocommit=True) as holder:
            # 10^10 pairs: runs until cancelled, holding the only compute slot
            a = threading.Thread(target=lambda: out.__setitem__("a", _sqlstate(
                holder, "SELECT count(*) FROM big a, big b WHERE a.n + b.n > 0")))
            a.start()
            time.sleep(2.0)
            b = _run(server, "SELECT sum(n) FROM small", out, "b", setup="SET statement_timeout = '4s'")
            time.sleep(1.0)  # b is queued now: the queue (1) is full
            with server.connect(autocommit=True) as c:
                with pytest.raises(psycopg.Error) as full:
                    c.execute("SELECT sum(n) FROM small")
                assert full.value.sqlstate == "53300"
                assert "waiting for compute" in str(full.value)
                # constants and catalog reads need no slot
                t0 = time.monotonic()
                assert c.execute("SELECT 1").fetchall() == [(1,)]
                assert c.execute("SELECT %s::int", (7,)).fetchall() == [(7,)]
                assert c.execute("SHOW transaction_isolation").fetchall() == [("strict serializable",)]
                assert time.monotonic() - t0 < 2.0
            b.join(30)
            assert out["b"] == "57014"  # timed out while queued
            holder.cancel()  # a CancelRequest for the running statement
            a.join(60)
            assert out["a"] == "57014"
        # the slot and the queue are free again
        with server.connect(autocommit=True) as c:
            assert c.execute("SELECT sum(n) FROM small").fetchall() == [(6,)]
    finally:
        server.stop()


def _sqlstate(conn: psycopg.Connection, sql: str) -> object:
    try:
        return conn.execute(sql).fetchall()
    except psycopg.Error as e:
        return e.sqlstate
