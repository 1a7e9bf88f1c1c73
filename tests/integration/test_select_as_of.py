"""Materialize's SELECT ... AS OF [AT LEAST] <timestamp>: a read at a given timestamp of tables,
views (indexed or not) and materialized views; a timestamp below an input's since is 22000, one
in the future is waited for (statement_timeout applies), a transaction refuses it (0A000)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime

import psycopg
import pytest

from tests.integration.harness import MzServer


def _ts(conn: psycopg.Connection, rel: str) -> int:
    return int(json.loads(conn.execute(f"EXPLAIN TIMESTAMP AS JSON FOR SELECT * FROM {rel}").fetchone()[0])["determination"]["timestamp"])


def test_select_as_of_reads_the_past(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t, v, iv, mv = uniq("t"), uniq("v"), uniq("iv"), uniq("mv")
    with mz_server.connect() as c:
        c.execute(f"CREATE TABLE {t} (k int, n int)")
        c.execute(f"CREATE VIEW {v} AS SELECT k, sum(n) AS s FROM {t} GROUP BY k")
        c.execute(f"CREATE VIEW {iv} AS SELECT k, count(*) AS c FROM {t} GROUP BY k")
        c.execute(f"CREATE INDEX {iv}_k ON {iv} (k)")
        c.execute(f"CREATE MATERIALIZED VIEW {mv} AS SELECT count(*) AS c FROM {t}")
        c.execute(f"INSERT INTO {t} VALUES (1, 10), (2, 20)")
        ts1 = _ts(c, t)
        c.execute(f"INSERT INTO {t} VALUES (1, 5)")
        c.execute(f"DELETE FROM {t} WHERE k = 2")
        ts2 = _ts(c, t)
        assert ts2 > ts1
        assert c.execute(f"SELECT * FROM {t} ORDER BY k, n AS OF {ts1}").fetchall() == [(1, 10), (2, 20)]
        assert c.execute(f"SELECT * FROM {t} ORDER BY k, n AS OF {ts2}").fetchall() == [(1, 5), (1, 10)]
        assert c.execute(f"SELECT * FROM {v} ORDER BY k AS OF {ts1}").fetchall() == [(1, 10), (2, 20)]
        assert c.execute(f"SELECT * FROM {iv} ORDER BY k AS OF {ts1}").fetchall() == [(1, 1), (2, 1)]
        assert c.execute(f"SELECT c FROM {iv} WHERE k = 2 AS OF {ts1}").fetchall() == [(1,)]
        assert c.execute(f"SELECT * FROM {iv} ORDER BY k AS OF {ts2}").fetchall() == [(1, 2)]
        assert c.execute(f"SELECT * FROM {mv} AS OF {ts1}").fetchall() == [(2,)]
        assert c.execute(f"SELECT * FROM {mv} AS OF {ts2}").fetchall() == [(2,)]
        # before the first write: nothing; AT LEAST 0: the current contents
        assert c.execute(f"SELECT count(*) FROM {t} AS OF 0").fetchall() == [(0,)]
        assert c.execute(f"SELECT count(*) FROM {t} AS OF AT LEAST 0").fetchall() == [(2,)]
        # an expression: a timestamp value is its epoch milliseconds
        at = datetime.fromtimestamp(ts1 / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        assert c.execute(f"SELECT count(*) FROM {t} AS OF TIMESTAMPTZ '{at}+00'").fetchall() == [(2,)]


def test_select_as_of_the_future_and_bad_timestamps(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    with mz_server.connect() as c:
        c.execute(f"CREATE TABLE {t} (n int)")
        c.execute(f"INSERT INTO {t} VALUES (1)")
        now = _ts(c, t)
        started = time.monotonic()
        assert c.execute(f"SELECT count(*) FROM {t} AS OF {now + 1500}").fetchall() == [(1,)]
        assert time.monotonic() - started >= 1.0  # waited for the clock to pass it
        c.execute("SET statement_timeout = '300ms'")
        with pytest.raises(psycopg.errors.QueryCanceled):
            c.execute(f"SELECT count(*) FROM {t} AS OF {now + 3_600_000}")
        c.execute("SET statement_timeout = 0")
        with pytest.raises(psycopg.errors.DatatypeMismatch):
            c.execute(f"SELECT count(*) FROM {t} AS OF 'x'::text")
        with pytest.raises(psycopg.errors.SyntaxError):
            c.execute(f"SELECT count(*) FROM {t} AS OF AT LEAST")
        c.execute("BEGIN")
        with pytest.raises(psycopg.errors.FeatureNotSupported):
            c.execute(f"SELECT count(*) FROM {t} AS OF {now}")
        c.execute("ROLLBACK")
        assert c.execute("SELECT 1").fetchone() == (1,)
