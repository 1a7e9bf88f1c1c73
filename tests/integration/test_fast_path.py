"""Fast-path peeks that are point lookups by an index's key (compute/plan/lookup.py,
compute/render/index_state.py) against PostgreSQL 15: `key = literal`, `key IN (..)`,
multi-column keys, `IS NULL`, literals coerced to the key's type, keys that match nothing, an
MFP on top, an indexed view; after every write (the index's spine then has batches) every
lookup still equals PostgreSQL. EXPLAIN shows Materialize's lookup form."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import reference_postgres

SETUP = [
    "CREATE TABLE fp (k int, k2 bigint, s text, v numeric)",
    "CREATE VIEW fpv AS SELECT k, count(*) AS n, sum(v) AS sv FROM fp GROUP BY k",
]
INDEXES = ["CREATE INDEX fp_k ON fp (k)", "CREATE INDEX fp_k2s ON fp (k2, s)", "CREATE INDEX fpv_k ON fpv (k)"]
LOOKUPS = [
    "SELECT * FROM fp WHERE k = 3",
    "SELECT * FROM fp WHERE k IN (1, 3, 99)",
    "SELECT * FROM fp WHERE k IN (" + ", ".join(str(i) for i in range(0, 40)) + ")",
    "SELECT * FROM fp WHERE k IS NULL",
    "SELECT * FROM fp WHERE k = 1 OR k IS NULL",
    "SELECT * FROM fp WHERE k = '3'",  # coerced to int
    "SELECT * FROM fp WHERE k = 3.0",  # compared as numeric: no lookup, same answer
    "SELECT * FROM fp WHERE k = 99",
    "SELECT * FROM fp WHERE k = NULL",
    "SELECT s, v * 2 FROM fp WHERE k = 3 AND v > 1",
    "SELECT * FROM fp WHERE k2 = 2 AND s = 'x'",
    "SELECT * FROM fp WHERE k2 = 2::smallint AND s = 'x'",
    "SELECT * FROM fp WHERE (k2, s) IN ((2, 'x'), (3, 'y'), (NULL, 'z'))",
    "SELECT * FROM fp WHERE k2 IN (2, 3) AND s = 'y' AND k > 0",
    "SELECT * FROM fp WHERE k2 IS NULL AND s = 'z'",
    "SELECT k, v FROM fp WHERE k = 2 ORDER BY v DESC LIMIT 1",
    "SELECT * FROM fpv WHERE k = 2",
    "SELECT n FROM fpv WHERE k IN (3, 4) OR k IS NULL",
]
WRITES = [
    "INSERT INTO fp VALUES (1, 1, 'x', 1.5), (2, 2, 'x', 2), (3, 3, 'y', 3), (3, 3, 'y', 3), (NULL, NULL, 'z', 4), (4, NULL, 'z', NULL)",
    "INSERT INTO fp SELECT g % 50, g % 7, 'r' || (g % 3), g FROM generate_series(1, 400) AS g",
    "UPDATE fp SET v = v + 1 WHERE k = 3",
    "DELETE FROM fp WHERE k = 2 AND s = 'x'",
    "INSERT INTO fp VALUES (2, 2, 'x', 7), (NULL, 3, 'y', NULL)",
    "DELETE FROM fp WHERE k IS NULL",
]


def _rows(conn: psycopg.Connection, sql: str) -> list[tuple]:
    return sorted((tuple(r) for r in conn.execute(sql).fetchall()), key=repr)


def _explain(mz: psycopg.Connection, sql: str) -> str:
    return "\n".join(r[0] for r in mz.execute(f"EXPLAIN {sql}"))


@pytest.fixture(scope="module")
def pg() -> Iterator[psycopg.Connection]:
    with reference_postgres("fastpath-") as conninfo, psycopg.connect(conninfo, autocommit=True) as conn:
        yield conn


def test_point_lookups_equal_postgres(mz_server: MzServer, pg: psycopg.Connection) -> None:
    mz = mz_server.connect(autocommit=True)
    mz.execute("CREATE SCHEMA fpl")
    mz.execute("SET search_path = fpl")
    pg.execute("CREATE SCHEMA fpl")
    pg.execute("SET search_path = fpl")
    for sql in SETUP:
        mz.execute(sql)
        pg.execute(sql)
    for sql in INDEXES:
        mz.execute(sql)
    plan = _explain(mz, "SELECT * FROM fp WHERE k = 3")
    assert "Explained Query (fast path):" in plan, plan
    assert "ReadIndex on=materialize.fpl.fp fp_k=[lookup value=(3)]" in plan, plan
    assert "  - materialize.fpl.fp_k (lookup)" in plan, plan
    plan = _explain(mz, "SELECT * FROM fp WHERE (k2, s) IN ((2, 'x'), (3, 'y'))")
    assert 'fp_k2s=[lookup values=[(2, "x"); (3, "y")]]' in plan and "fp_k2s (lookup)" in plan, plan
    plan = _explain(mz, "SELECT * FROM fp WHERE k > 3")
    assert "(*** full scan ***)" in plan and "lookup" not in plan, plan
    for batch in WRITES:
        mz.execute(batch)
        pg.execute(batch)
        for sql in LOOKUPS:
            assert _rows(mz, sql) == _rows(pg, sql), (batch, sql)
    mz.execute("DROP SCHEMA fpl CASCADE")
