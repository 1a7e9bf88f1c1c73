"""to_char's V (multiply by 10^n): the 9s after V are digits of the multiplier, not of the
number (NUMDesc_prepare); 'FM99V99' of 5 is '500'. Compared with PostgreSQL 15."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from sql.errors import SqlError
from sql.numfmt import to_char

FORMATS = ["FM99V99", "99V99", "FM9V9", "FM0V9", "FM99V9", "9V0", "9V09", "S99V999", "99V9PR", "FM9V9th", "0V0"]
VALUES = [0, 5, 12, -3, 987]


@pytest.fixture(scope="module")
def pg() -> Iterator[Any]:
    import psycopg

    from tests.pgref import reference_postgres

    with reference_postgres("numfmt-") as dsn, psycopg.connect(dsn, autocommit=True) as conn:
        yield conn


def _postgres(conn: Any, sql: str) -> str:
    import psycopg

    try:
        return str(conn.execute(sql).fetchone()[0])
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


def _ours(v: int, fmt: str, integer: bool) -> str:
    try:
        return to_char(v if integer else Decimal(v), fmt, integer)
    except SqlError as e:
        return f"error {e.sqlstate}"


@pytest.mark.parametrize("fmt", FORMATS)
def test_multiplier_like_postgres(pg: Any, fmt: str) -> None:
    for v in VALUES:
        for cast, integer in (("int", True), ("numeric", False)):
            assert _ours(v, fmt, integer) == _postgres(pg, f"SELECT to_char({v}::{cast}, '{fmt}')"), (v, cast)
