"""psycopg 3: server-side parameter binding, prepared statements, client-side binding,
binary results, transactions, COPY in both directions."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal

import psycopg
import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.integration

ROWS = [
    (1, "one", None, dt.date(2024, 1, 31), True, 1.5, Decimal("10.25")),
    (2, 'two\'s "quoted"', "x", dt.date(1999, 12, 31), False, -0.125, Decimal("-3.50")),
    (3, "ünïcødé ✓", None, dt.date(2000, 2, 29), None, 1e100, Decimal("0.01")),
]


def create(conn: psycopg.Connection, t: str) -> None:
    conn.execute(
        f"CREATE TABLE {t} (i int, s text, n text, d date, b boolean, f double precision, "
        "m numeric(10, 2))"
    )


def insert_rows(cur: psycopg.Cursor, t: str, *, prepare: bool | None = None) -> None:
    for row in ROWS:
        cur.execute(f"INSERT INTO {t} VALUES (%s, %s, %s, %s, %s, %s, %s)", row, prepare=prepare)
        assert cur.statusmessage == "INSERT 0 1"


def check_rows(conn: psycopg.Connection, t: str, **cursor_kw: bool) -> None:
    cur = conn.cursor(**cursor_kw)
    cur.execute(f"SELECT i, s, n, d, b, f, m FROM {t} ORDER BY i")
    assert [d.name for d in cur.description] == ["i", "s", "n", "d", "b", "f", "m"]
    got = cur.fetchall()
    assert got == ROWS
    for row in got:
        assert type(row[0]) is int
        assert isinstance(row[3], dt.date)
        assert isinstance(row[6], Decimal)


@pytest.mark.parametrize("prepare", [None, True], ids=["extended", "prepared"])
def test_server_side_params(
    mz_server: MzServer, uniq: Callable[[str], str], prepare: bool | None
) -> None:
    t = uniq("t")
    with mz_server.connect() as conn:
        create(conn, t)
        insert_rows(conn.cursor(), t, prepare=prepare)
        check_rows(conn, t)
        cur = conn.cursor()
        # Parameters in WHERE, of every type, several executions of one statement.
        for row in ROWS:
            cur.execute(
                f"SELECT i FROM {t} WHERE s = %s AND d = %s AND f = %s AND m = %s",
                (row[1], row[3], row[5], row[6]),
                prepare=prepare,
            )
            assert cur.fetchall() == [(row[0],)]
        cur.execute(f"SELECT i FROM {t} WHERE b = %s ORDER BY i", (False,), prepare=prepare)
        assert cur.fetchall() == [(2,)]
        cur.execute(f"SELECT i FROM {t} WHERE n IS NULL ORDER BY i", prepare=prepare)
        assert cur.fetchall() == [(1,), (3,)]
        # Parameters in the select list, typed by casts.
        cur.execute(
            "SELECT %s::int + 1, %s::text || '!', %s::date, %s::bool, %s::float8 * 2",
            (41, "hi", dt.date(2020, 5, 17), True, 0.25),
            prepare=prepare,
        )
        assert cur.fetchone() == (42, "hi!", dt.date(2020, 5, 17), True, 0.5)
        cur.execute("SELECT %s::text IS NULL", (None,), prepare=prepare)
        assert cur.fetchone() == (True,)


def test_client_side_binding(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    with mz_server.connect() as conn:
        create(conn, t)
        insert_rows(psycopg.ClientCursor(conn), t)
        check_rows(conn, t)
        cur = psycopg.ClientCursor(conn)
        cur.execute(f"SELECT s FROM {t} WHERE i = %s OR s = %s ORDER BY i", (1, ROWS[1][1]))
        assert cur.fetchall() == [(ROWS[0][1],), (ROWS[1][1],)]


def test_binary_results(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    with mz_server.connect() as conn:
        create(conn, t)
        insert_rows(conn.cursor(), t)
        check_rows(conn, t, binary=True)
        cur = conn.cursor(binary=True)
        cur.execute(f"SELECT count(*), sum(i), max(d), min(m) FROM {t} WHERE i > %s", (0,))
        assert cur.fetchone() == (3, 6, dt.date(2024, 1, 31), Decimal("-3.50"))
        # Binary parameters too.
        cur.execute(f"SELECT s FROM {t} WHERE i = %b AND d = %b", (2, dt.date(1999, 12, 31)))
        assert cur.fetchall() == [(ROWS[1][1],)]


def test_many_rows_and_fetchmany(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (a int, b text)")
        cur = conn.cursor()
        cur.executemany(f"INSERT INTO {t} VALUES (%s, %s)", [(i, f"r{i}") for i in range(200)])
        cur.execute(f"SELECT a, b FROM {t} ORDER BY a")
        first = cur.fetchmany(10)
        assert first == [(i, f"r{i}") for i in range(10)]
        rest = cur.fetchall()
        assert len(rest) == 190 and rest[-1] == (199, "r199")


def count(mz_server: MzServer, t: str) -> int:
    with mz_server.connect() as other:
        row = other.execute(f"SELECT count(*) FROM {t}").fetchone()
        assert row is not None
        return int(row[0])


def test_transaction_commit_is_atomic(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (a int)")
        conn.execute("BEGIN")
        conn.execute(f"INSERT INTO {t} VALUES (1)")
        conn.execute(f"INSERT INTO {t} VALUES (2), (3)")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        # Not visible to another session before COMMIT.
        assert count(mz_server, t) == 0
        conn.execute("COMMIT")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert count(mz_server, t) == 3


def test_transaction_rollback_discards(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (a int)")
        conn.execute(f"INSERT INTO {t} VALUES (0)")
        conn.execute("BEGIN")
        conn.execute(f"INSERT INTO {t} VALUES (1)")
        conn.execute(f"INSERT INTO {t} VALUES (2)")
        conn.execute("ROLLBACK")
        assert count(mz_server, t) == 1
        rows = conn.execute(f"SELECT a FROM {t}").fetchall()
        assert rows == [(0,)]


def test_non_autocommit_connection(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (a int, b text)")
    with mz_server.connect(autocommit=False) as conn:
        with conn.cursor() as cur:
            cur.execute(f"INSERT INTO {t} VALUES (%s, %s)", (1, "a"))
            cur.execute(f"INSERT INTO {t} VALUES (%s, %s)", (2, "b"))
        conn.commit()
        assert count(mz_server, t) == 2
        with conn.cursor() as cur:
            cur.execute(f"INSERT INTO {t} VALUES (%s, %s)", (3, "c"))
        conn.rollback()
        assert count(mz_server, t) == 2
        # `with conn.transaction()` commits on success.
        with conn.transaction():
            conn.execute(f"INSERT INTO {t} VALUES (%s, %s)", (4, "d"))
        conn.commit()
    assert count(mz_server, t) == 3


def test_failed_statement_in_transaction(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (a int)")
        conn.execute("BEGIN")
        conn.execute(f"INSERT INTO {t} VALUES (1)")
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute("INSERT INTO no_such_table_in_txn VALUES (1)")
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INERROR
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute(f"INSERT INTO {t} VALUES (2)")
        conn.execute("ROLLBACK")
        assert count(mz_server, t) == 0
        # The session is usable again.
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_copy_in_and_out(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    rows = [
        (1, "plain", dt.date(2024, 1, 1)),
        (2, None, None),
        (3, "tab\tnewline\nbackslash\\", dt.date(1970, 1, 1)),
        (4, "ünïcødé", dt.date(2099, 12, 31)),
        (5, "", dt.date(2000, 1, 1)),
    ]
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (a int, b text, c date)")
        cur = conn.cursor()
        with cur.copy(f"COPY {t} FROM STDIN") as copy:
            for row in rows[:3]:
                copy.write_row(row)
        assert cur.rowcount == 3
        with cur.copy(f"COPY {t} (a, b, c) FROM STDIN") as copy:
            copy.write("4\tünïcødé\t2099-12-31\n5\t\t2000-01-01\n")
        assert cur.rowcount == 2

        got = conn.execute(f"SELECT a, b, c FROM {t} ORDER BY a").fetchall()
        assert got == rows

        with cur.copy(f"COPY (SELECT a, b, c FROM {t} ORDER BY a) TO STDOUT") as copy:
            copy.set_types(["int4", "text", "date"])
            out = list(copy.rows())
        assert out == rows

        with cur.copy(f"COPY (SELECT a, b FROM {t} WHERE a <= 2 ORDER BY a) TO STDOUT") as copy:
            raw = b"".join(bytes(chunk) for chunk in copy)
        assert raw == b"1\tplain\n2\t\\N\n"


def test_copy_in_bad_data_is_an_error(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (a int, b text)")
        cur = conn.cursor()
        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            with cur.copy(f"COPY {t} FROM STDIN") as copy:
                copy.write("1\tok\nnot_a_number\tbad\n")
        # All-or-nothing: the good row of the failed COPY is not there either.
        assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)


def test_server_side_cursor(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    """psycopg's named cursors: DECLARE, Describe Portal on the cursor's name, FETCH."""
    t = uniq("t")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (i int)")
        conn.execute(f"INSERT INTO {t} SELECT * FROM generate_series(1, 25)")
    with psycopg.connect(host=mz_server.host, port=mz_server.port, user="materialize", dbname="materialize") as conn:
        with conn.cursor(name="named_cur") as cur:
            cur.itersize = 10
            cur.execute(f"SELECT i FROM {t} ORDER BY i")
            assert [d.name for d in cur.description] == ["i"]
            assert [r[0] for r in cur] == list(range(1, 26))


def test_prepared_statement_replanned_after_ddl(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    """A server-side prepared statement survives DROP + CREATE of the table it reads (the
    plan is rebound, as Postgres does); a change of its result shape is 0A000."""
    t = uniq("t")
    with mz_server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (a int)")
        conn.execute(f"INSERT INTO {t} VALUES (1)")
        q = f"SELECT a FROM {t} WHERE a > %s"
        assert conn.execute(q, (0,), prepare=True).fetchall() == [(1,)]
        conn.execute(f"DROP TABLE {t}")
        conn.execute(f"CREATE TABLE {t} (a int)")
        conn.execute(f"INSERT INTO {t} VALUES (2)")
        assert conn.execute(q, (0,), prepare=True).fetchall() == [(2,)]
        conn.execute(f"DROP TABLE {t}")
        conn.execute(f"CREATE TABLE {t} (a text)")
        with pytest.raises(psycopg.Error) as e:
            conn.execute(q, (0,), prepare=True)
        # the rebound query compares text with integer (42883) or changes shape (0A000)
        assert e.value.sqlstate in ("42883", "0A000")
