"""psycopg2 (libpq, client-side parameter interpolation, implicit transactions)."""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Callable
from decimal import Decimal

import psycopg2
import psycopg2.errors
import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.integration


def connect(server: MzServer, autocommit: bool = True) -> psycopg2.extensions.connection:
    conn = psycopg2.connect(
        host=server.host,
        port=server.port,
        user="materialize",
        dbname="materialize",
        connect_timeout=30,
    )
    conn.autocommit = autocommit
    return conn


def test_round_trip(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    conn = connect(mz_server)
    try:
        cur = conn.cursor()
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
        cur.execute(f"CREATE TABLE {t} (a int, b text, c date, d numeric(8, 3), e boolean)")
        rows = [
            (1, "x", dt.date(2024, 2, 29), Decimal("1.500"), True),
            (2, "it's", None, Decimal("-0.001"), False),
            (3, None, dt.date(1900, 1, 1), None, None),
        ]
        cur.executemany(f"INSERT INTO {t} VALUES (%s, %s, %s, %s, %s)", rows)
        cur.execute(f"SELECT a, b, c, d, e FROM {t} ORDER BY a")
        assert cur.fetchall() == rows
        assert [d.name for d in cur.description] == ["a", "b", "c", "d", "e"]
        cur.execute(
            f"SELECT b FROM {t} WHERE a = %(a)s OR b = %(b)s ORDER BY a", {"a": 1, "b": "it's"}
        )
        assert cur.fetchall() == [("x",), ("it's",)]
        assert cur.rowcount == 2
    finally:
        conn.close()


def test_transactions(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    setup = connect(mz_server)
    conn = connect(mz_server, autocommit=False)
    try:
        setup.cursor().execute(f"CREATE TABLE {t} (a int)")
        cur = conn.cursor()
        cur.execute(f"INSERT INTO {t} VALUES (1)")
        cur.execute(f"INSERT INTO {t} VALUES (2)")
        conn.commit()
        cur.execute(f"INSERT INTO {t} VALUES (3)")
        conn.rollback()
        check = setup.cursor()
        check.execute(f"SELECT a FROM {t} ORDER BY a")
        assert check.fetchall() == [(1,), (2,)]
    finally:
        conn.close()
        setup.close()


def test_errors(mz_server: MzServer) -> None:
    conn = connect(mz_server)
    try:
        cur = conn.cursor()
        with pytest.raises(psycopg2.errors.UndefinedTable) as e:
            cur.execute("SELECT * FROM no_such_psycopg2_table")
        assert e.value.pgcode == "42P01"
        with pytest.raises(psycopg2.errors.DivisionByZero):
            cur.execute("SELECT 1/0")
        cur.execute("SELECT 2")
        assert cur.fetchone() == (2,)
    finally:
        conn.close()


def test_copy_expert(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    conn = connect(mz_server)
    try:
        cur = conn.cursor()
        cur.execute(f"CREATE TABLE {t} (a int, b text)")
        cur.copy_expert(f"COPY {t} FROM STDIN", io.StringIO("1\ta\n2\t\\N\n3\tc d\n"))
        assert cur.rowcount == 3
        out = io.StringIO()
        cur.copy_expert(f"COPY (SELECT a, b FROM {t} ORDER BY a DESC) TO STDOUT", out)
        assert out.getvalue() == "3\tc d\n2\t\\N\n1\ta\n"
    finally:
        conn.close()
