"""Every scalar function of the function table (tests/function_calls.py), called as a user
writes it, and with a NULL of the argument's type in each position in turn, compared with a
real PostgreSQL 15: values, output column names and SQLSTATEs. A strict function of a NULL
argument is NULL; the non-strict ones (concat, array_to_string's null string, ...) do what
Postgres does with the NULL.

Double precision values compare to 1e-15 relative: Spark's exp and cbrt (Java StrictMath)
and glibc's differ in the last bit.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from decimal import Decimal

import psycopg
import pytest

from tests.function_calls import CALLS, call_sql, null_variants
from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres, text_loaded

pytestmark = pytest.mark.integration

SETUP = ["CREATE TABLE {s}.one (x int)", "INSERT INTO {s}.one VALUES (1)"]


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or math.isclose(a, b, rel_tol=1e-15) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return a == b or (a.is_nan() and b.is_nan())
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b and type(a) is type(b)


def _run(conn: psycopg.Connection, sql: str) -> tuple[list[str], list[tuple]] | str:
    try:
        cur = conn.execute(sql)
        assert cur.description is not None
        return [d.name for d in cur.description], cur.fetchall()
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "fcalls-", "fcalls", SETUP, text_loaded("interval")) as pair:
        yield pair


@pytest.mark.parametrize(("name", "args"), CALLS, ids=[call_sql(n, a) for n, a in CALLS])
def test_call_and_null_arguments_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection],
                                             name: str, args: list[str]) -> None:
    mz, pg = both
    calls = [call_sql(name, args), *null_variants(name, args)]
    for where in ("", " FROM one"):
        sql = f"SELECT {', '.join(calls)}{where}"
        expected = _run(pg, sql)
        assert not isinstance(expected, str), f"the reference rejects {sql}: {expected}"
        got = _run(mz, sql)
        assert not isinstance(got, str), f"{sql}: {got}"
        assert got[0] == expected[0], sql
        assert _same(got[1], expected[1]), f"{sql}\n  mzspark:  {got[1]}\n  postgres: {expected[1]}"
