"""asyncpg: always the extended protocol with named statements and binary formats."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from decimal import Decimal

import asyncpg
import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.integration


async def connect(server: MzServer) -> asyncpg.Connection:
    return await asyncpg.connect(
        host=server.host, port=server.port, user="materialize", database="materialize", timeout=60
    )


def test_fetch_params_prepared(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")

    async def run() -> None:
        conn = await connect(mz_server)
        try:
            assert await conn.fetchval("SELECT 1") == 1
            await conn.execute(f"CREATE TABLE {t} (a int, b text)")
            status = await conn.execute(f"INSERT INTO {t} VALUES (1, 'one'), (2, 'two'), (3, NULL)")
            assert status == "INSERT 0 3"
            rows = await conn.fetch(f"SELECT a, b FROM {t} ORDER BY a")
            assert [tuple(r) for r in rows] == [(1, "one"), (2, "two"), (3, None)]
            assert rows[0]["b"] == "one"
            assert await conn.fetchval(f"SELECT count(*) FROM {t} WHERE a > $1", 1) == 2
            assert (
                await conn.fetchval(f"SELECT b FROM {t} WHERE a = $1 AND b = $2", 2, "two") == "two"
            )
            # One prepared statement, reused.
            stmt = await conn.prepare(f"SELECT b FROM {t} WHERE a = $1")
            assert [a.name for a in stmt.get_attributes()] == ["b"]
            for a, b in [(1, "one"), (2, "two"), (3, None), (1, "one"), (4, None)]:
                assert await stmt.fetchval(a) == b
            await conn.executemany(f"INSERT INTO {t} VALUES ($1, $2)", [(10, "x"), (11, "y")])
            assert await conn.fetchval(f"SELECT sum(a) FROM {t}") == 27
        finally:
            await conn.close()

    asyncio.run(run())


def test_binary_types(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    rows = [
        (
            1,
            2**40,
            True,
            1.5,
            dt.date(2024, 2, 29),
            Decimal("12345.6789"),
            "héllo",
            dt.datetime(2024, 5, 1, 12, 30, 45, 123456),
        ),
        (
            2,
            -(2**40),
            False,
            -2.25e-10,
            dt.date(1970, 1, 1),
            Decimal("-0.0001"),
            "",
            dt.datetime(1999, 12, 31, 23, 59, 59),
        ),
        (3, None, None, None, None, None, None, None),
    ]

    async def run() -> None:
        conn = await connect(mz_server)
        try:
            await conn.execute(
                f"CREATE TABLE {t} (i int, l bigint, b boolean, f double precision, d date, "
                "n numeric(20, 4), s text, ts timestamp)"
            )
            await conn.executemany(f"INSERT INTO {t} VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", rows)
            got = await conn.fetch(f"SELECT i, l, b, f, d, n, s, ts FROM {t} ORDER BY i")
            assert [tuple(r) for r in got] == rows
            # Typed parameters compared server-side.
            row = await conn.fetchrow(
                f"SELECT i FROM {t} WHERE l = $1 AND d = $2 AND n = $3 AND ts = $4",
                2**40,
                dt.date(2024, 2, 29),
                Decimal("12345.6789"),
                dt.datetime(2024, 5, 1, 12, 30, 45, 123456),
            )
            assert row is not None and row["i"] == 1
        finally:
            await conn.close()

    asyncio.run(run())


def test_error_then_reuse(mz_server: MzServer) -> None:
    async def run() -> None:
        conn = await connect(mz_server)
        try:
            with pytest.raises(asyncpg.exceptions.UndefinedTableError):
                await conn.fetch("SELECT * FROM no_such_asyncpg_table")
            with pytest.raises(asyncpg.exceptions.DivisionByZeroError):
                await conn.fetchval("SELECT 1 / $1::int", 0)
            assert await conn.fetchval("SELECT $1::int + 1", 1) == 2
        finally:
            await conn.close()

    asyncio.run(run())
