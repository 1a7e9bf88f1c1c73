"""pg8000 (pure Python, extended protocol with typed parameters): native and DB-API."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal

import pg8000.dbapi
import pg8000.native
import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.integration


def native(server: MzServer) -> pg8000.native.Connection:
    return pg8000.native.Connection(
        "materialize", host=server.host, port=server.port, database="materialize", timeout=60
    )


def test_native(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    con = native(mz_server)
    try:
        assert con.run("SELECT 1") == [[1]]
        con.run(f"CREATE TABLE {t} (a int, b text, c date, d numeric(6, 2), e double precision)")
        rows = [
            [1, "one", dt.date(2023, 3, 1), Decimal("1.25"), 0.5],
            [2, "two", None, Decimal("-7.00"), -1.0],
            [3, None, dt.date(2000, 1, 1), None, None],
        ]
        for a, b, c, d, e in rows:
            con.run(f"INSERT INTO {t} VALUES (:a, :b, :c, :d, :e)", a=a, b=b, c=c, d=d, e=e)
            assert con.row_count == 1
        got = con.run(f"SELECT a, b, c, d, e FROM {t} ORDER BY a")
        assert got == rows
        assert [c["name"] for c in con.columns] == ["a", "b", "c", "d", "e"]
        assert con.run(f"SELECT b FROM {t} WHERE a >= :lo AND a < :hi ORDER BY a", lo=1, hi=3) == [
            ["one"],
            ["two"],
        ]
        assert con.run("SELECT CAST(:x AS int) * 2", x=21) == [[42]]
        # A named prepared statement, executed several times.
        ps = con.prepare(f"SELECT count(*) FROM {t} WHERE a > :a")
        try:
            assert [ps.run(a=i) for i in range(4)] == [[[3]], [[2]], [[1]], [[0]]]
        finally:
            ps.close()
        with pytest.raises(pg8000.native.DatabaseError) as e:
            con.run("SELECT * FROM no_such_pg8000_table")
        assert e.value.args[0]["C"] == "42P01"
        assert con.run("SELECT 'still alive'") == [["still alive"]]
    finally:
        con.close()


def test_dbapi(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    conn = pg8000.dbapi.connect(
        user="materialize", host=mz_server.host, port=mz_server.port, database="materialize"
    )
    try:
        conn.autocommit = True
        cur = conn.cursor()
        cur.execute(f"CREATE TABLE {t} (a int, b text)")
        conn.autocommit = False
        # DB-API: implicit BEGIN, explicit commit / rollback.
        cur.executemany(f"INSERT INTO {t} VALUES (%s, %s)", [(1, "a"), (2, "b"), (3, "c")])
        conn.commit()
        cur.execute(f"INSERT INTO {t} VALUES (%s, %s)", (4, "d"))
        conn.rollback()
        conn.autocommit = True
        cur.execute(f"SELECT a, b FROM {t} WHERE a <> %s ORDER BY a", (2,))
        assert [list(r) for r in cur.fetchall()] == [[1, "a"], [3, "c"]]
        assert [d[0] for d in cur.description] == ["a", "b"]
    finally:
        conn.close()
