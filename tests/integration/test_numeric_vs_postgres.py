"""Numeric results compared value for value with a real PostgreSQL 15 (issue 16): division and
avg at Postgres' select_div_scale, exp / ln / log / sqrt / power at Postgres' result scales,
literals and products keeping every digit -- over constants (folded at plan time) and over
table columns (computed in Spark). Values compare with trailing zeros removed (Materialize's
output rule); a result mzspark cannot hold must be an error, never other digits.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres, sorted_outcome

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.nv (id int, a numeric, b numeric, t numeric(12,4), i int)",
    "INSERT INTO {s}.nv VALUES (1, 0.01, 7.125, 7.1250, 98), (2, 1, 3, 3.0000, 3), (3, 0.0001, 0.0001, 0.0001, -7),"
    " (4, -2.5, 0.7, 12345678.1234, 0), (5, 123456.789, 1.1, 0.5000, 1), (6, NULL, 2, NULL, NULL)",
    # avg groups whose quotients end in ties, carries, repeating digits, signs, large values
    "CREATE TABLE {s}.av (g int, q numeric(15,2), u numeric)",
    "INSERT INTO {s}.av VALUES (1, 0.01, 0.01), (1, 0.02, 0.02), (2, 1.00, 1), (2, 2.00, 2), (2, 2.00, 2.0000000001),"
    " (3, -0.05, -0.05), (3, 0.02, 0.02), (3, 0.02, 0.0200000001), (4, 99999999999.99, 9999999999999.99),"
    " (4, 99999999999.99, 9999999999999.99), (4, 99999999999.98, 9999999999999.98), (5, 23.00, 23), (5, 26.00, 26),"
    " (5, 25.00, 25), (5, 27.00, 27), (5, 24.00, 24), (5, 26.00, 26), (5, 25.00, 25), (6, 0.00, 0), (6, 0.00, 0),"
    " (7, -1.00, -1), (7, -2.00, -2), (8, 6666.67, 6666.67), (8, 3333.33, 3333.33), (8, 0.01, 0.01), (9, NULL, NULL)",
]

CONSTANTS = [
    "SELECT 0.01 / 7.125, 98 / 3.0, 1 / 3.0, 2 / 3.0, 12345678901234567890 / 123",
    "SELECT 3.789 ^ 21, 0.12 ^ (-20), 1.000000000123 ^ (-2147483648), 32.1 ^ 9.8, 32.1 ^ (-9.8), 12.3 ^ (-45.6)",
    "SELECT 0.0 ^ 0.0, (-12.34) ^ 0.0, 12.34 ^ 0.0, 2.0 ^ 10, (-2.0) ^ 3",
    "SELECT exp(1.0), exp(32.999), exp(-32.999), exp(-123.456), exp(0.0)",
    "SELECT ln(2.0), ln(1.000001), ln(10.0), log(2.0, 64.0), log10(1000.0), log(10.0, 0.001)",
    "SELECT sqrt(2.0), sqrt(0.0000000001), sqrt(1e20), sqrt(0.0)",
    "SELECT 0.000000000001, 0.000000000001 + 1, 0.0001 * 0.0001, 1.5 * 2.25 - 0.375",
]

COLUMNS = [
    "SELECT id, a / b, b / a, t / b, a / 7, i / 3.0, (a * 1000000000 + 1) / 7 FROM nv",
    "SELECT id, a * b, a * a, a + 0.000000000001, a * 0.0000000001, t * t FROM nv",
    "SELECT id, exp(b), ln(b), log10(b), sqrt(b), log(2.0, b), b ^ 2.5, b ^ 3 FROM nv",
    "SELECT id, round(a / b, 12), round(a / b, i + 12), trunc(b / 3, i + 5) FROM nv WHERE i IS NOT NULL",
    "SELECT avg(i), avg(a), avg(b), avg(t), sum(a) / count(*) FROM nv",
    "SELECT id, avg(i) FROM nv GROUP BY id",
    # avg of a numeric: sum / count computed in the JVM (compute.render.numeric_avg)
    "SELECT g, avg(q), avg(u), 0.2 * avg(q), avg(DISTINCT q) FROM av GROUP BY g",
    "SELECT avg(q), avg(u), avg(q + u) FROM av",
    "SELECT g, q FROM av a WHERE q < (SELECT 1.1 * avg(q) FROM av b WHERE b.g = a.g)",
    # products of quotients and averages (decimal(38, 24) each: Spark's own * overflowed)
    "SELECT id, (b / 2) * (t / 4), (a / 4) * (b / 8), -(a / 2) * (i / 2.0) FROM nv",
    "SELECT avg(i) * avg(t), avg(b) * 2.5 * avg(a), coalesce(-avg(i), 45) * avg(i) FROM nv",
    # floor / ceil / round / trunc / sign of a numeric(p, s) are plain numerics: as text, no
    # trailing zeros of the column's scale (was '12345678.0000')
    "SELECT id, CAST(floor(t) AS text), CAST(round(t) AS text), CAST(ceil(t) AS text), CAST(sign(t) AS text),"
    " CAST(trunc(t) AS text), floor(t) || '' FROM nv",
]

ERRORS = [
    ("SELECT exp(1234.5678)", "22003"),
    ("SELECT 1.2 ^ 345", "22003"),
    ("SELECT a / 0 FROM nv", "22012"),
    ("SELECT ln(a) FROM nv WHERE id = 4", "2201E"),
    ("SELECT 0.0 ^ (-1.0)", "2201F"),
    ("SELECT sqrt(a) FROM nv WHERE id = 4", "2201F"),
]


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "numeric-", "nm", SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", CONSTANTS + COLUMNS)
def test_same_value_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = sorted_outcome(pg, sql)
    assert not isinstance(expected, str), f"the reference rejects the query: {expected}"
    assert sorted_outcome(mz, sql) == expected


@pytest.mark.parametrize(("sql", "state"), ERRORS)
def test_same_error_as_postgres_or_beyond_39_digits(both: tuple[psycopg.Connection, psycopg.Connection], sql: str, state: str) -> None:
    """Postgres' own errors; results of more than 39 significant digits (Materialize's
    precision) are 22003 where Postgres has a value."""
    mz, pg = both
    got = sorted_outcome(pg, sql)
    assert got == f"error {state}" or (state == "22003" and not isinstance(got, str))
    assert sorted_outcome(mz, sql) == f"error {state}"


def test_digits_mzspark_cannot_store_are_refused(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """An unconstrained numeric column keeps 10 fractional digits: a value with more is refused
    (0A000), not stored rounded; a typed column rounds as Postgres does."""
    mz, pg = both
    with pytest.raises(psycopg.Error) as e:
        mz.execute("INSERT INTO nv (id, a) VALUES (7, 0.000000000001)")
    assert e.value.sqlstate == "0A000"
    for conn in both:
        conn.execute("CREATE TABLE nv_typed (x numeric(10,3))")
        conn.execute("INSERT INTO nv_typed VALUES (1.23456), (2.0005)")
    assert sorted_outcome(mz, "SELECT x FROM nv_typed") == sorted_outcome(pg, "SELECT x FROM nv_typed")


def test_results_beyond_the_computation_scale_are_refused(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """A quotient of column values needing more fractional digits than its decimal(38, S)
    holds is 0A000 (Postgres: 0.0000000000000000000000012345679012345679)."""
    mz, _ = both
    with pytest.raises(psycopg.Error) as e:
        mz.execute("SELECT a / 810000000000000000000 FROM nv WHERE id = 3").fetchall()
    assert e.value.sqlstate in ("0A000", "22003")


def test_products_past_24_fractional_digits_are_rounded(both: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """A product of two quotients or averages is exact to 24 fractional digits and rounded
    half away from zero there (decimal(38, 24)), as Materialize rounds at 39 digits; PostgreSQL
    keeps every digit (2.77777777777777788888888888888889)."""
    from decimal import ROUND_HALF_UP, Decimal

    mz, pg = both
    sql = "SELECT avg(x) * avg(x), (1 / 3.0) * (min(b) / 7) FROM (VALUES (1), (2), (2)) v(x), nv WHERE id = 5"
    (p1, p2), = pg.execute(sql).fetchall()
    (m1, m2), = mz.execute(sql).fetchall()
    q = Decimal(1).scaleb(-24)
    assert (m1, m2) == (p1.quantize(q, ROUND_HALF_UP), p2.quantize(q, ROUND_HALF_UP))
    assert m1 != p1  # PostgreSQL's digits past the 24th were there to round


# numeric NaN / Infinity (Postgres 15 has both; Materialize NaN only): Spark's decimal holds
# neither and every decimal(38, s) value is a real number, so no value can stand for NaN. Each
# way in is an error with a SQLSTATE: literals, text and float values (constant or computed,
# also in arrays and INSERT ... SELECT), never NULL or another number (was: a float8 NaN or
# Infinity cast to numeric at run time became NULL, and INSERT stored it)
NAN_PATHS = [
    "SELECT 'NaN'::numeric", "SELECT 'nan'::numeric + 1", "SELECT numeric 'NaN' < 1", "SELECT '{1,NaN}'::numeric[]",
    "SELECT 'Infinity'::numeric", "SELECT '-inf'::numeric",
    "SELECT CAST('NaN'::float8 AS numeric)", "SELECT x::numeric FROM (VALUES ('NaN'::float8), (1.5)) t(x)",
    "SELECT id, f::numeric FROM nanf", "SELECT id, f::numeric FROM nanf WHERE id = 1",
    "SELECT id, f::numeric FROM nanf WHERE id = 2", "SELECT id, t::numeric FROM nanf WHERE id = 1",
    "SELECT id, t::numeric(10, 2) FROM nanf WHERE id = 2", "SELECT ARRAY[f]::numeric[] FROM nanf WHERE id = 1",
    "SELECT sum(f::numeric) OVER (ORDER BY id) FROM nanf", "SELECT max(f::numeric) FROM nanf",
    "SELECT id FROM nanf ORDER BY f::numeric", "SELECT f::numeric = f::numeric FROM nanf WHERE id = 1",
    "SELECT x, sum(x) OVER () FROM (VALUES ('NaN'::float8::numeric)) t(x)",
]


@pytest.fixture(scope="module")
def nanf(both: tuple[psycopg.Connection, psycopg.Connection]) -> tuple[psycopg.Connection, psycopg.Connection]:
    for conn in both:
        conn.execute("CREATE TABLE nanf (id int, t text, f float8)")
        conn.execute("INSERT INTO nanf VALUES (1, 'NaN', 'NaN'::float8), (2, ' nan ', 'Infinity'::float8), (3, '3.5', 3.5),"
                     " (4, '-inf', '-Infinity'::float8)")
        conn.execute("CREATE TABLE nanv (a numeric)")
    return both


@pytest.mark.parametrize("sql", NAN_PATHS)
def test_nan_and_infinity_are_refused_never_other_values(nanf: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = nanf
    assert not isinstance(sorted_outcome(pg, sql), str)
    assert sorted_outcome(mz, sql) in ("error 0A000", "error 22003")


@pytest.mark.parametrize("sql", ["INSERT INTO nanv SELECT f FROM nanf WHERE id = 1", "INSERT INTO nanv SELECT f FROM nanf WHERE id = 2",
                                 "INSERT INTO nanv SELECT t::numeric FROM nanf WHERE id = 1", "INSERT INTO nanv VALUES ('NaN')",
                                 "INSERT INTO nanv SELECT 'NaN'::float8"])
def test_nan_is_never_stored(nanf: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, _ = nanf
    with pytest.raises(psycopg.Error) as e:
        mz.execute(sql)
    assert e.value.sqlstate in ("0A000", "22003")
    assert mz.execute("SELECT count(*) FROM nanv").fetchone() == (0,)
