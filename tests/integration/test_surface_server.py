"""Materialize's SQL surface against the real server: the quickstart from psql (tables standing
in for the AUCTION load generator, `datediff` and SHOW steps included), datediff's values,
and the wire-level wrong answers of issue 13 (planner-level checks: tests/unit/test_surface.py)."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
from pathlib import Path

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.unit.test_surface import DATEDIFF_CASES

pytestmark = pytest.mark.integration

QUICKSTART = Path(__file__).with_name("quickstart.sql")


def test_quickstart_from_psql(mz_server: MzServer) -> None:
    """Every step succeeds (ON_ERROR_STOP) and the answers are the quickstart's: the winning
    bid of each auction that has ended, the fraud check, the funds movement."""
    psql = shutil.which("psql")
    assert psql is not None, "psql is installed by make test"
    env = dict(os.environ, PGCONNECT_TIMEOUT="30")
    res = subprocess.run([psql, "-X", "-v", "ON_ERROR_STOP=1", "-h", mz_server.host, "-p", str(mz_server.port),
                          "-U", "materialize", "materialize", "-A", "-F", "|", "-f", str(QUICKSTART)],
                         capture_output=True, text=True, timeout=900, env=env)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    # winning_bids: auction 1 (ended an hour ago) is won by bid 2 (70), auction 2 by bid 4 (45);
    # auction 3 has not ended (mz_now() < end_time)
    assert "2|30|1|70|" in out and "Best Pizza in Town|10" in out
    assert "\n4|30|2|45|" in out
    assert "City Bar Crawl" not in out.split("-- winning bids")[1].split("-- end winning bids")[0]
    # funds_movement: credits = debits = 70 + 45
    assert "\n115|115\n" in out
    # datediff step: bids older than 30 minutes
    assert "\n1|t\n2|t\n3|t\n4|t\n5|f\n" in out
    # SHOW steps
    assert "wins_by_item|winning_bids|quickstart|{item}|" in out
    assert "quickstart|r1 (spark)|" in out


def test_datediff_values(mz_server: MzServer) -> None:
    with mz_server.connect() as conn:
        for sql, expected in DATEDIFF_CASES:
            assert conn.execute(f"SELECT {sql}").fetchone() == (expected,), sql


def test_now_in_an_insert_is_the_wall_clock(mz_server: MzServer, uniq) -> None:
    t = uniq("clock")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (at timestamptz)")
        conn.execute(f"INSERT INTO {t} VALUES (now())")
        ((at,),) = conn.execute(f"SELECT at FROM {t}").fetchall()
        assert abs((at - dt.datetime.now(dt.UTC)).total_seconds()) < 30, at
        conn.execute(f"DROP TABLE {t}")


def test_error_while_streaming_fails_the_transaction(mz_server: MzServer, uniq) -> None:
    t = uniq("zero")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (a int)")
        conn.execute(f"INSERT INTO {t} VALUES (0), (1)")
    with mz_server.connect(autocommit=False) as conn:
        conn.execute("SELECT 1").fetchall()
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute(f"SELECT 1 / a FROM {t}").fetchall()
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1").fetchall()
        conn.rollback()
        assert conn.execute("SELECT 1").fetchall() == [(1,)]
    with mz_server.connect() as conn:
        conn.execute(f"DROP TABLE {t}")


def test_syntax_error_with_parameters_over_the_extended_protocol(mz_server: MzServer) -> None:
    with mz_server.connect() as conn, pytest.raises(psycopg.errors.SyntaxError):
        conn.execute("selec %s", [1])


def test_unknown_cluster_fails_at_use(mz_server: MzServer, uniq) -> None:
    t = uniq("cl")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (a int)")
        conn.execute("SET cluster = 'no_such_cluster'")
        with pytest.raises(psycopg.errors.UndefinedObject, match="unknown cluster 'no_such_cluster'"):
            conn.execute(f"SELECT * FROM {t}").fetchall()
        conn.execute("RESET cluster")
        assert conn.execute(f"SELECT * FROM {t}").fetchall() == []
        conn.execute(f"DROP TABLE {t}")


def test_explain_filter_pushdown(mz_server: MzServer, uniq) -> None:
    """A table written in three batches with disjoint ranges: a range predicate selects the
    one part that can match, no predicate or one the statistics cannot judge selects all,
    and EXPLAIN FILTER PUSHDOWN reads only Parquet footers (no Spark job)."""
    from tests.integration.tools.replay import spark_jobs

    t, mv = uniq("pd"), uniq("pdmv")
    with mz_server.connect(autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {t} (a int, at timestamptz)")
        for k in range(3):
            conn.execute(f"INSERT INTO {t} SELECT g, TIMESTAMPTZ '2024-01-01' + g * INTERVAL '1 day' "
                         f"FROM generate_series({k * 100}, {k * 100 + 99}) g")
        conn.execute(f"CREATE MATERIALIZED VIEW {mv} AS SELECT a FROM {t} WHERE at < TIMESTAMPTZ '2024-02-01'")
        jobs = spark_jobs(conn)

        def explain(sql: str) -> tuple:
            cur = conn.execute(f"EXPLAIN FILTER PUSHDOWN FOR {sql}")
            assert [d.name for d in cur.description] == ["Source", "Total Bytes", "Selected Bytes", "Total Parts", "Selected Parts"]
            ((source, *counts),) = cur.fetchall()  # uint8, which psycopg returns as text
            total_bytes, selected_bytes, total, selected = (int(x) for x in counts)
            assert source == f"materialize.public.{t}" and total_bytes > 0 and (selected_bytes < total_bytes) is (selected < total)
            return total, selected

        assert explain(f"SELECT * FROM {t} WHERE a >= 250") == (3, 1)
        assert explain(f"SELECT count(*) FROM {t} WHERE a BETWEEN 150 AND 250") == (3, 2)
        assert explain(f"SELECT * FROM {t} WHERE at > TIMESTAMPTZ '2024-09-01'") == (3, 1)
        assert explain(f"SELECT * FROM {t}") == (3, 3)
        assert explain(f"SELECT * FROM {t} WHERE a % 100 = 5") == (3, 3)  # not judged: every part
        assert explain(f"MATERIALIZED VIEW {mv}") == (3, 1)
        assert spark_jobs(conn) == jobs, "EXPLAIN FILTER PUSHDOWN must not start Spark jobs"
        # the answers the selected parts hold
        assert conn.execute(f"SELECT count(*) FROM {t} WHERE a >= 250").fetchone() == (50,)
