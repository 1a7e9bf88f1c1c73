"""Everyday SQL compared with a real PostgreSQL 15 (issue 16): VALUES typed per column across
its rows and INSERT ... VALUES assignment-cast row by row, jsonb set-returning functions in
FROM (a one-column function's item is its value), LIKE escapes (text and bytea). Rows, column
names and SQLSTATEs must be PostgreSQL's; values compare as the text each server sends.
Also what the pg_regress scripts found (interval * float8 overflow), and a regular expression
that overflows the JVM's stack failing only its statement."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from psycopg.types.string import TextLoader

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.tj (id int, j jsonb)",
    """INSERT INTO {s}.tj VALUES (1, '[1, "a", {"b": 2}]'), (2, '[]'), (3, '[null]'), (4, NULL)""",
]

QUERIES = [
    # 1. VALUES: one type per column, resolved over all its rows (select_common_type)
    "SELECT * FROM (VALUES (1, 'a'), (2.5, NULL), (NULL, 'c')) v(x, y)",
    "SELECT x, pg_typeof(x)::text FROM (VALUES (1), (2.5), (NULL)) v(x)",
    "SELECT x, pg_typeof(x)::text FROM (VALUES ('1'), ('x')) v(x)",
    "SELECT x, pg_typeof(x)::text FROM (VALUES (NULL), ('3'), (1)) v(x)",
    "SELECT x, pg_typeof(x)::text FROM (VALUES ('1'), (2), (3.5)) v(x)",
    "SELECT x, pg_typeof(x)::text FROM (VALUES (1::smallint), (100000), (NULL)) v(x)",
    "SELECT x, pg_typeof(x)::text FROM (VALUES ('2020-01-02'), ('2020-01-01'::date)) v(x)",
    "SELECT x FROM (VALUES (NULL), ('a'), (1)) v(x)",  # 'a' read as integer: 22P02
    "SELECT x FROM (VALUES (1), (true)) v(x)",  # no common type: 42804
    "VALUES (1, 'a'), (2.5, NULL), (NULL, 'c')",
    "WITH w(a) AS (VALUES (1), (2.5), (NULL)) SELECT a, pg_typeof(a)::text FROM w",
    # 2. jsonb set-returning functions in FROM: a one-column function's item is its value
    "SELECT id, e, pg_typeof(e)::text FROM tj, LATERAL jsonb_array_elements(tj.j) e",
    "SELECT id, e.value FROM tj, LATERAL jsonb_array_elements(tj.j) e",
    "SELECT id, e FROM tj, jsonb_array_elements(tj.j) e",
    "SELECT id, e FROM tj CROSS JOIN LATERAL jsonb_array_elements(tj.j) AS e",
    "SELECT id, e, pg_typeof(e)::text FROM tj, LATERAL jsonb_array_elements_text(tj.j) e",
    "SELECT e, e.value FROM jsonb_array_elements('[1, [2]]') e",
    "SELECT e FROM jsonb_array_elements('[1, 2]') e(x)",
    "SELECT id, e.key, e.value, pg_typeof(e.value)::text FROM tj, LATERAL jsonb_each(jsonb_build_object('id', tj.id, 'j', tj.j)) e",
    "SELECT id, e FROM tj, LATERAL jsonb_each_text(jsonb_build_object('id', tj.id)) e",
    "SELECT id, e, e.e FROM tj, LATERAL jsonb_object_keys(jsonb_build_object('id', tj.id)) e",
    "SELECT count(*) FROM tj, jsonb_array_elements(tj.j) e WHERE e = '1'",
    "SELECT id, (SELECT sum(e::text::int) FROM jsonb_array_elements(j) e WHERE jsonb_typeof(e) = 'number') FROM tj",
    "SELECT g, g.g FROM generate_series(1, 2) g",
    "SELECT u FROM unnest(ARRAY[1, 2]) u",
    # 3. LIKE escapes: a pattern ending in its escape is 22025; bytea LIKE bytea ESCAPE bytea
    "SELECT 'a\\' LIKE 'a\\'",
    "SELECT 'a\\' LIKE 'a\\\\', 'a' LIKE 'a\\' ESCAPE '', 'a\\' LIKE 'a\\' ESCAPE ''",
    "SELECT 'a%b'::bytea LIKE 'a#%b'::bytea ESCAPE '#', 'axb'::bytea LIKE 'a#%b'::bytea ESCAPE '#'",
    "SELECT 'a%b'::bytea NOT LIKE 'a#%%'::bytea ESCAPE '#', 'a_'::bytea LIKE '%#_'::bytea ESCAPE '#'",
    "SELECT 'a\\\\b'::bytea LIKE 'a\\\\\\\\b'::bytea ESCAPE '', 'ab'::bytea LIKE 'a%'::bytea ESCAPE NULL",
    "SELECT 'ab'::bytea LIKE 'a#'::bytea ESCAPE '#'",  # 22025
    "SELECT 'ab'::bytea LIKE 'a%'::bytea ESCAPE '##'",  # 22025
    "SELECT 'ab'::bytea LIKE 'a%' ESCAPE '#'",  # like_escape(text, text): bytea ~~ text, 42883
    # 5. found by the pg_regress scripts: interval * float8 overflowing an interval field is
    # 22008 (was: the microseconds clamped to 2^63 - 1 by Spark's cast)
    "SELECT '256 microseconds'::interval * (2^55)::float8",
    "SELECT extract(epoch from '256 microseconds'::interval * (2^55)::float8)",
    "SELECT i * f FROM (VALUES (interval '256 microseconds', (2^55)::float8), (interval '1 day', 1.5)) v(i, f)",
    "SELECT interval '1 month' * 3e9::float8",
    "SELECT interval '2 days' * 2e9::float8",
    "SELECT interval '1 month 2 days 03:04:05.5' * 2.5::float8, interval '1 month' / 3e9::float8",
]

# statements whose effect is read back by the query after them
SCRIPTS = [
    # INSERT ... VALUES: each row's values are assignment-cast to the target columns one by
    # one (PostgreSQL's transformInsertRow), not unified per column first
    ["CREATE TABLE ins (a int, b text, c numeric(5,2))",
     "INSERT INTO ins VALUES (1, 'a', 1), ('2', NULL, 2.555), (NULL, 3, '4.5'), (4.4, 5.5, NULL)",
     "INSERT INTO ins (b, a) VALUES (true, 6), ('x', '7')",
     "SELECT * FROM ins"],
    ["CREATE TABLE ins2 (a int, d date)",
     "INSERT INTO ins2 VALUES (1, '2020-01-01'), (2, '2020-01-02'::timestamp), (NULL, NULL)",
     "INSERT INTO ins2 VALUES (3, 1)",  # 42804: column "d" is of type date
     "INSERT INTO ins2 VALUES ('x', NULL)",  # 22P02
     "SELECT * FROM ins2"],
]


def _result(conn: psycopg.Connection, sql: str) -> tuple[list[str], list[tuple]] | str:
    try:
        cur = conn.execute(sql)
        names = [d.name for d in cur.description or ()]
        return names, sorted((tuple(r) for r in cur.fetchall()), key=repr)
    except psycopg.Error as e:
        return f"error {e.sqlstate}"


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    def configure(conn: psycopg.Connection) -> None:
        for name in ("jsonb", "numeric", "date", "bytea", "interval"):  # compared as the text each server sends
            conn.adapters.register_loader(name, TextLoader)

    with paired_with_postgres(mz_server.connect(), "everyday-", "ev", SETUP, configure) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = _result(pg, sql)
    assert _result(mz, sql) == expected


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s[0][:40])
def test_same_effect_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], script: list[str]) -> None:
    mz, pg = both
    for sql in script[:-1]:
        assert _result(mz, sql) == _result(pg, sql), sql
    expected = _result(pg, script[-1])
    assert _result(mz, script[-1]) == expected


# 4. A regular expression whose matching overflows the JVM's stack (java.util.regex recurses
# once per repetition of (a|b)*) fails only its statement, with PostgreSQL's 54001 where
# PostgreSQL's own engine answers; the server, its Spark JVM and other sessions carry on.
OVERFLOWING = [
    "SELECT 'x' || repeat('ab', 100000) ~ '(a|b)*c'",
    "SELECT count(*) FROM (SELECT repeat('ab', 100000) || g::text AS s FROM generate_series(1, 3) g) t WHERE s ~ '^(a|b)*$'",
    "SELECT regexp_like(repeat('ab', 100000), '(a|b)*c')",
    "SELECT repeat('ab', 100000) SIMILAR TO '(a|b)*c'",
]


@pytest.mark.parametrize("sql", OVERFLOWING)
def test_regex_stack_overflow_fails_only_the_statement(mz_server: MzServer,
                                                       both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    _, pg = both
    assert not isinstance(_result(pg, sql), str)  # PostgreSQL answers (its regex engine does not recurse so)
    with mz_server.connect() as mz:
        with pytest.raises(psycopg.Error) as err:
            mz.execute(sql).fetchall()
        assert err.value.sqlstate == "54001"
        assert "stack depth limit exceeded" in str(err.value)
        assert mz.execute("SELECT 'ab' ~ '(a|b)*', count(*) FROM generate_series(1, 10)").fetchall() == [(True, 10)]
    with mz_server.connect() as other:  # a new session: the server and its Spark JVM live on
        assert other.execute("SELECT 'x' || repeat('ab', 10) ~ '(a|b)*c'").fetchall() == [(False,)]
