"""COPY FROM STDIN assigns values exactly as INSERT does, compared with PostgreSQL 15:
`char(n)` blank padding (through INSERT, COPY text and CSV, UPDATE and casts), length
checks (22001), numeric scale rounding, NULL forms, booleans, dates, and errors."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.chk (k int, c char(5), v varchar(4), n numeric(6,2), d date, b bool, f float8, t text)",
    "INSERT INTO {s}.chk VALUES (1, 'ab', 'ab', 1.005, '1998-12-01', 'yes', 1.5, 'x'), "
    "(2, 'abcde  ', 'abcd  ', '2.675', '2000-02-29', 'off', -0.25, NULL)",
]

# The same stream through COPY text and COPY CSV (keys 10.. and 20..).
TEXT_ROWS = (
    b"10\tcd\tcd\t3.14159\t1992-01-02\tt\t2.5\tplain\n"
    b"11\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\n"
    b"12\t \t\t-0.004\t2024-02-29\tFALSE\t1e3\ta\\tb\\\\c\n"
    b"13\tabc  \tabcd\t 42 \t 1999-01-08 \t on \t 7 \tx\n"
)
CSV_ROWS = (
    b'20,cd,cd,3.14159,1992-01-02,t,2.5,plain\n'
    b'21,,,,,,,\n'
    b'22," ","",-0.004,2024-02-29,FALSE,1e3,"a,b ""q"""\n'
    b'23,abc  ,abcd, 42 , 1999-01-08 , on , 7 ,x\n'
)

QUERIES = [
    "SELECT k, c, v, n, d, b, f, t FROM chk",
    "SELECT k, c = 'cd', c = 'cd   ', octet_length(c), length(c), c || '|', c::text || '|', v || '|' FROM chk",
    "SELECT k, c::varchar(10) || '|', CAST(c AS char(7)) || '|', 'ab'::char(5) = c FROM chk",
    "SELECT c, count(*) FROM chk GROUP BY c",
    "SELECT a.k, b.k FROM chk a JOIN chk b ON a.c = b.c WHERE a.k < b.k",
    # char(n) = / <> a literal (compute.render.scalar.bpchar_equals_text): trailing blanks on
    # either side, a prefix of a value, empty, longer than n, a quote, NULL rows
    "SELECT k, c = 'ab', c <> 'ab', 'ab  ' = c, c = '', c <> '', c = 'abcdef', c = 'abc', c <> 'abc', c = 'a''b' FROM chk",
    "SELECT k FROM chk WHERE c IN ('cd', 'abc ', 'zz')",
    "SELECT k FROM chk WHERE c NOT IN ('cd', 'abc')",
    "SELECT k FROM chk WHERE NOT (c = 'abcde') AND c <> ' '",
    # equalities of one expression with literals as one IN list (compute.render.scalar._or):
    # NULL values and NULL rows, other disjuncts kept, in a filter and in a projection
    "SELECT k FROM chk WHERE substr(t, 1, 1) IN ('p', 'a', 'x')",
    "SELECT k, substr(t, 1, 1) IN ('p', 'a', NULL), n IN (3.14, 42, NULL), f IN (2.5, 7, 1000), d IN ('1992-01-02', '2024-02-29') FROM chk",
    "SELECT k FROM chk WHERE k = 10 OR f = 7 OR k = 12 OR upper(v) = 'CD' OR k = 1 OR upper(v) = 'AB'",
    "SELECT k, (k = 10 OR t IS NULL OR k = 11 OR k = 99) FROM chk",
    # a strict operator with a NULL operand is NULL, the other operand unevaluated, as
    # PostgreSQL folds it (sql/transforms/fold_constants._null_operand; a small table is read
    # as a local relation, whose filter Spark evaluates before its own NULL propagation);
    # a constant operand is evaluated first, and IN with a NULL value evaluates the rest
    "SELECT k FROM chk WHERE k / 0 = NULL",
    "SELECT k, k / 0 = NULL, k % 0 + NULL, NULL < k / 0, NULL * (k / 0) FROM chk",
    "SELECT k FROM chk WHERE 1 / 0 = NULL",
    "SELECT k FROM chk WHERE k / 0 IN (NULL, 1)",
]

# Each must fail the same way in both (no row of the COPY is stored).
BAD_STREAMS = [
    ("COPY chk (k, c) FROM STDIN", b"30\tabcdef\n"),  # 22001 too long for char(5)
    ("COPY chk (k, v) FROM STDIN (FORMAT csv)", b"31,abcde\n"),  # 22001 varchar(4)
    ("COPY chk (k, n) FROM STDIN", b"32\t12345.6\n"),  # 22003 numeric field overflow
    ("COPY chk (k, d) FROM STDIN", b"33\t1999-02-29\n"),  # 22008 date out of range
    ("COPY chk (k, b) FROM STDIN", b"34\tmaybe\n"),  # 22P02
    ("COPY chk (k, c) FROM STDIN", b"35\tok\n36\n"),  # 22P04 missing data
    ("COPY chk (k, c) FROM STDIN", b"37\tok\tx\n"),  # 22P04 extra data
    ("COPY chk (k, c) FROM STDIN", b"38\tok\nxx\tok\n"),  # 22P02, after a good row
]


def _rows(conn: psycopg.Connection, sql: str) -> list[tuple] | str:
    try:
        return sorted((tuple(r) for r in conn.execute(sql).fetchall()), key=repr)
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


def _copy(conn: psycopg.Connection, sql: str, data: bytes) -> str:
    try:
        with conn.cursor() as cur:
            with cur.copy(sql) as cp:
                cp.write(data)
            return cur.statusmessage or ""
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "copy-", "cpy", SETUP) as (mz, pg):
        for conn in (mz, pg):
            assert _copy(conn, "COPY chk FROM STDIN", TEXT_ROWS) == "COPY 4"
            assert _copy(conn, "COPY chk FROM STDIN WITH (FORMAT csv)", CSV_ROWS) == "COPY 4"
            conn.execute("UPDATE chk SET c = 'u' WHERE k = 2")
            conn.execute("UPDATE chk SET c = c || 'x' WHERE k = 13")  # 'abc' || 'x' -> 'abcx '
        yield mz, pg


@pytest.mark.parametrize("sql", QUERIES)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = _rows(pg, sql)
    assert _rows(mz, sql) == expected


@pytest.mark.parametrize("sql,data", BAD_STREAMS)
def test_same_error_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str, data: bytes) -> None:
    mz, pg = both
    expected = _copy(pg, sql, data)
    assert expected.startswith("error")
    assert _copy(mz, sql, data) == expected
    assert _rows(mz, "SELECT count(*) FROM chk") == _rows(pg, "SELECT count(*) FROM chk")


def test_issue_repro_char_padding(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """The issue's repro: a CSV-copied char(5) value compares equal to its literal."""
    for conn in both:
        conn.execute("CREATE TABLE chk2 (c char(5))")
        conn.execute("INSERT INTO chk2 VALUES ('ab')")
        assert _copy(conn, "COPY chk2 FROM STDIN (FORMAT csv)", b"cd\n") == "COPY 1"
    sql = "SELECT c, c = 'cd', octet_length(c) FROM chk2"
    assert _rows(both[0], sql) == _rows(both[1], sql) == [("ab   ", False, 5), ("cd   ", True, 5)]


def test_copy_inside_a_transaction(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """COPY in BEGIN … COMMIT: the rows are buffered with the transaction, typed the same way."""
    for conn in both:
        conn.execute("CREATE TABLE chk3 (c char(3), n numeric(4,1), d date)")
        with conn.transaction():
            assert _copy(conn, "COPY chk3 FROM STDIN", b"a\t1.25\t2001-02-03\nbc\t\\N\t\\N\n") == "COPY 2"
            conn.execute("INSERT INTO chk3 VALUES ('x', 2.35, '1999-12-31')")
    sql = "SELECT c, octet_length(c), n, d FROM chk3"
    assert _rows(both[0], sql) == _rows(both[1], sql)
