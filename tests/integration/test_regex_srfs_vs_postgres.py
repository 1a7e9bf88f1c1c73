"""regexp_matches and regexp_split_to_table / regexp_split_to_array compared with a real
PostgreSQL 15: in the select list (a FlatMap over the query's FROM, as generate_series), in
FROM (with an alias, LATERAL over a table, WITH ORDINALITY), a text[] per match (with flag g
every match, else at most one), NULL arguments (no rows), and 0A000 where Java's regex would
not answer as Postgres' does (alternation, quantified groups, non-greedy quantifiers: see
sql.regex.leftmost_first_is_longest), for these and the other position-sensitive regex
functions."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres, sorted_outcome

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.r (id int, s text)",
    "INSERT INTO {s}.r VALUES (1, 'foobarbequebaz'), (2, 'abc,def,,ghi'), (3, ''), (4, NULL), (5, E'a1\\nb22\\nc333'),"
    " (6, 'xAxaX')",
]

QUERIES = [
    # regexp_matches in the select list
    "SELECT regexp_matches('foobarbequebaz', '(bar)(beque)')",
    "SELECT regexp_matches('foobarbequebazilbarfbonk', '(b[^b]+)(b[^b]+)', 'g')",
    "SELECT regexp_matches('foobarbequebaz', 'barbeque')",
    "SELECT regexp_matches('foobarbequebaz', 'x(y)')",
    "SELECT id, regexp_matches(s, '[a-z]([0-9]+)', 'g') FROM r",
    "SELECT id, regexp_matches(s, '[a-z]+') FROM r",
    "SELECT id, regexp_matches(s, 'a', 'gi') FROM r WHERE id = 6",
    "SELECT id, regexp_matches(s, 'ax', 'i') FROM r",
    "SELECT id, regexp_matches(s, '(a)(x)', 'gi') FROM r",
    "SELECT id, regexp_matches(s, '^', 'g') FROM r WHERE id IN (1, 3)",
    "SELECT id, regexp_matches(s, 'b*', 'g') FROM r WHERE id IN (1, 3)",
    "SELECT id, regexp_matches(s, ',*', 'g') FROM r WHERE id = 2",
    "SELECT id, (regexp_matches(s, '(.)(.)'))[2] AS second FROM r",
    "SELECT id, regexp_matches(s, NULL) FROM r",
    "SELECT regexp_matches(NULL, 'a')",
    "SELECT count(*) FROM (SELECT regexp_matches(s, '[0-9]', 'g') FROM r) t",
    "SELECT regexp_matches('abc', 'b', 'gz')",
    "SELECT regexp_matches(1, 'b')",
    # in FROM
    "SELECT * FROM regexp_matches('foobarbequebaz', '(bar)(beque)') AS m",
    "SELECT m FROM regexp_matches('abab', 'a(b)', 'g') m",
    "SELECT r.id, x.x FROM r, LATERAL regexp_matches(r.s, '[0-9]+', 'g') AS x(x)",
    # regexp_split_to_table / _array
    "SELECT regexp_split_to_table('the quick brown fox', '\\s+')",
    "SELECT id, regexp_split_to_table(s, ',') FROM r",
    "SELECT id, regexp_split_to_array(s, ','), regexp_split_to_array(s, 'A', 'i') FROM r",
    "SELECT id, regexp_split_to_table(s, E'\\n') FROM r WHERE id = 5",
    "SELECT * FROM regexp_split_to_table('a1b22c', '[0-9]+') WITH ORDINALITY AS t(part, n)",
    "SELECT r.id, p FROM r, regexp_split_to_table(r.s, 'b') AS p",
    "SELECT r.id, p FROM r, LATERAL regexp_split_to_table(r.s, ',') AS p",
    "SELECT r.id, e.value FROM r, LATERAL jsonb_array_elements('[1, 2]') AS e WHERE r.id < 3",
    "SELECT regexp_split_to_table('abc', 'b', 'g')",
    "SELECT regexp_split_to_table('abc', NULL)",
    "SELECT regexp_split_to_table(NULL, 'b')",
    # alternation Java matches as Postgres does: distinct literals none a prefix of another, anchors
    "SELECT regexp_replace('AAA', '^|$', 'Z', 'g'), regexp_matches('a PostgreSQL function', '(a|e|i|o|u)(.)', 'gi')",
]

# 0A000 where PostgreSQL answers: what Java's regex could answer otherwise
UNSUPPORTED = [
    "SELECT regexp_matches(s, s) FROM r",
    "SELECT regexp_matches('abc', '(a)(x*)?', 'g')",
    "SELECT regexp_matches('abab', '(a|ab)', 'g')",
    "SELECT regexp_matches('abcd', '(ab)?(abcd)?')",
    "SELECT regexp_match('ab', 'a|ab')",
    "SELECT regexp_substr('abcd', '(ab)?(abcd)?')",
    "SELECT regexp_replace('ab', 'a|ab', 'X')",
    "SELECT regexp_match('ab', '(a+?)(b*)')",
    "SELECT regexp_split_to_array('abc', 'b|bc')",
    "SELECT substring('abc' FROM 'a|ab')",
    "SELECT regexp_matches('abc', 'a\\mb')",
    "SELECT regexp_split_to_table('abc', 'x*')",
    "SELECT * FROM regexp_matches('abc', 'b') WITH ORDINALITY",
    # WITH ORDINALITY of the other table functions (was: its column silently dropped)
    "SELECT * FROM generate_series(1, 3) WITH ORDINALITY AS t(a, n)",
    "SELECT * FROM jsonb_array_elements('[1, 2]') WITH ORDINALITY",
]


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "regex-srf-", "rsrf", SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    assert sorted_outcome(mz, sql) == sorted_outcome(pg, sql)


@pytest.mark.parametrize("sql", UNSUPPORTED)
def test_unsupported_is_0a000(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    assert not isinstance(sorted_outcome(pg, sql), str)
    assert sorted_outcome(mz, sql) == "error 0A000"
