"""U&'..' string constants and U&".." identifiers with UESCAPE (sql/unicode_escapes.py,
rewritten before parsing by sql.lex.rewrite_unicode_literals), compared with PostgreSQL 15:
values, output column names, and for malformed escapes the SQLSTATE and error position.
Constant queries only: no Spark runs here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sql.errors import SqlError
from tests.golden_runner import GoldenSession

STATEMENTS = [
    # strings.sql
    "SELECT U&'d\\0061t\\+000061' AS U&\"d\\0061t\\+000061\"",
    "SELECT U&'d!0061t\\+000061' UESCAPE '!' AS U&\"d*0061t\\+000061\" UESCAPE '*'",
    "SELECT U&'a\\\\b' AS \"a\\b\"",
    "SELECT U&' \\' UESCAPE '!' AS \"tricky\"",
    "SELECT 'tricky' AS U&\"\\\" UESCAPE '!'",
    "SELECT U&'wrong: \\061'",
    "SELECT U&'wrong: \\+0061'",
    "SELECT U&'wrong: +0061' UESCAPE '+'",
    "SELECT U&'wrong: \\db99'",
    "SELECT U&'wrong: \\db99xy'",
    "SELECT U&'wrong: \\db99\\\\'",
    "SELECT U&'wrong: \\db99\\0061'",
    "SELECT U&'wrong: \\+00db99\\+000061'",
    "SELECT U&'wrong: \\+2FFFFF'",
    # more: case of the prefix and of UESCAPE, quotes inside, surrogate pairs, identifiers
    "SELECT u&'!0041''s' uescape '!', U&'\\D83D\\DE00', U&'' AS x, U&'\\00e9t\\00E9' AS \"U&\"",
    "SELECT U&\"a\\0042\" FROM (SELECT 1) AS s(\"aB\")",
    "SELECT U&\"a\\0042\" FROM (SELECT 1) AS s(ab)",
    "SELECT U&'\\0041' UESCAPE '+'",
    "SELECT U&'x' UESCAPE 'ab'",
    "SELECT U&'\\0000'",
    "SELECT 1 AS U&\"\"",
    "SELECT 'U&''x''', U&'a' AS \"U&'b'\"",
]


@pytest.fixture(scope="module")
def engines() -> Iterator[tuple[GoldenSession, Any]]:
    import psycopg

    from tests.pgref import reference_postgres

    g = GoldenSession()
    try:
        with reference_postgres("uesc-") as dsn, psycopg.connect(dsn, autocommit=True) as conn:
            yield g, conn
    finally:
        g.close()


@pytest.mark.parametrize("sql", STATEMENTS)
def test_like_postgres(engines: tuple[GoldenSession, Any], sql: str) -> None:
    import psycopg

    g, pg = engines
    try:
        cur = pg.execute(sql)
        want: Any = (cur.fetchall(), [d.name for d in cur.description or []])
    except psycopg.Error as e:
        # (the position of a malformed escape; other errors' positions are not compared)
        want = ("error", e.sqlstate, e.diag.statement_position if e.sqlstate == "42601" else None)
    try:
        p = g.coord.prepare(g.session, sql, [])
        rows = [tuple(r) for b in g.coord.execute(g.session, p, []).batches for r in b]
        got: Any = (rows, [c.name for c in p.columns or ()])
    except SqlError as e:
        got = ("error", e.sqlstate, str(e.position) if e.position and e.sqlstate == "42601" else None)
    assert got == want
