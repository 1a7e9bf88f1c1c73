"""Every regex function runs in a guarded Java UDF (mzspark.udf.RegexUdfs: the Spark built-in
of the same name that fails only its statement when java.util.regex overflows the stack),
compared with a real PostgreSQL 15: regexp_replace (first match, flag g, flag i, start and N),
regexp_match / regexp_matches, regexp_split_to_table / _array, regexp_count, regexp_substr,
regexp_instr, regexp_like, substring(x FROM pattern), SUBSTRING(.. SIMILAR ..), `~` / `~*`,
over a table of inputs (NULLs, the empty string, newlines, case), invalid patterns (2201B);
and a subject whose matching overflows Java's stack in each function that can meet one: 54001
for that statement alone, the same session and a new one answer after it."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres, sorted_outcome

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.t (id int, s text)",
    "INSERT INTO {s}.t VALUES (1, 'foobarbequebaz'), (2, 'abc,def,,ghi'), (3, ''), (4, NULL), (5, E'a1\\nb22\\nc333'),"
    " (6, 'xAxaX'), (7, 'the quick brown fox'), (8, 'aaa bbb aaa')",
]

QUERIES = [
    "SELECT id, regexp_replace(s, 'a', 'X') FROM t",
    "SELECT id, regexp_replace(s, 'a', 'X', 'g') FROM t",
    "SELECT id, regexp_replace(s, 'a', 'X', 'gi') FROM t",
    "SELECT id, regexp_replace(s, '([a-z])([0-9]+)', '\\2\\1', 'g') FROM t",
    "SELECT id, regexp_replace(s, 'b+', '<\\&>') FROM t",
    "SELECT id, regexp_replace(s, 'a', '$', 'g') FROM t",
    "SELECT id, regexp_replace(s, 'a', 'Y', 2, 2) FROM t",
    "SELECT id, regexp_replace(s, 'a', 'Y', 1, 0) FROM t",
    "SELECT id, regexp_replace(s, 'a', 'Y', 3) FROM t",
    "SELECT id, regexp_match(s, '([a-z])([0-9]+)') FROM t",
    "SELECT id, regexp_match(s, 'X', 'i') FROM t",
    "SELECT id, regexp_matches(s, '[0-9]+', 'g') FROM t",
    "SELECT id, regexp_matches(s, '(a)(b*)', 'g') FROM t",
    "SELECT id, regexp_split_to_array(s, ',') FROM t",
    "SELECT id, regexp_split_to_array(s, 'x', 'i') FROM t",
    "SELECT id, regexp_split_to_table(s, '\\s+') FROM t",
    "SELECT id, regexp_count(s, 'a') FROM t",
    "SELECT id, regexp_count(s, 'a', 3, 'i') FROM t",
    "SELECT id, regexp_substr(s, '[a-z]+', 1, 2) FROM t",
    "SELECT id, regexp_substr(s, '([a-z])([0-9])', 1, 1, '', 2) FROM t",
    "SELECT id, regexp_instr(s, 'a', 1, 2) FROM t",
    "SELECT id, regexp_instr(s, 'a', 2, 1, 1, 'i') FROM t",
    "SELECT id, regexp_like(s, '^a'), regexp_like(s, 'X', 'i') FROM t",
    "SELECT id, substring(s FROM '[0-9]+'), substring(s FROM 'b(.)') FROM t",
    "SELECT id, substring(s SIMILAR 'a#\"%#\"a' ESCAPE '#') FROM t",
    "SELECT id, s ~ 'a.c', s ~* 'XA', s !~ 'o', s SIMILAR TO '%(b|c)%' FROM t",
    "SELECT regexp_replace(NULL, 'a', 'b'), regexp_replace('a', NULL, 'b'), regexp_replace('a', 'a', NULL)",
    "SELECT regexp_match(NULL, 'a'), regexp_count(NULL, 'a'), regexp_substr(NULL, 'a'), regexp_instr(NULL, 'a')",
    # invalid patterns: 2201B
    "SELECT regexp_replace('abc', 'b(', 'x')",
    "SELECT regexp_match('abc', '[b')",
    "SELECT regexp_count('abc', 'b{2,1}')",
    "SELECT regexp_split_to_array('abc', 'b(')",
    "SELECT 'abc' ~ 'b('",
    # long subjects Java's matcher walks without recursing
    "SELECT regexp_count(repeat('ab', 100000), 'b'), length(regexp_replace(repeat('ab', 100000), 'b', '', 'g'))",
    "SELECT count(*) FROM regexp_matches(repeat('ab', 100000), 'a(b)', 'g')",
    "SELECT length(substring('x' || repeat('ab', 100000) FROM 'x([ab]*)'))",
]

# The N-th-match regexes of sql.regex (^(.{start-1}(?>.*?(?>B)){N-1}.*?)(B)) make Java's
# matcher recurse once per earlier match; (a|b)* once per repetition: PostgreSQL answers.
OVERFLOWING = [
    "SELECT regexp_substr(repeat('ab', 100000), 'b', 1, 90000)",
    "SELECT regexp_substr(repeat('ab', 100000), '(a)(b)', 1, 90000, 'i', 2)",
    "SELECT regexp_instr(repeat('ab', 100000), 'b', 1, 90000, 1)",
    "SELECT regexp_replace(repeat('ab', 100000), 'b', 'X', 3, 90000)",
    "SELECT id FROM t WHERE regexp_replace(s || repeat('ab', 100000), 'b', 'X', 1, 90000) = ''",
    "SELECT regexp_like(repeat('ab', 100000), '(a|b)*c')",
    "SELECT 'x' || repeat('ab', 100000) ~* '(A|b)*c'",
]


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "regex-fn-", "rfn", SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    assert sorted_outcome(mz, sql) == sorted_outcome(pg, sql)


@pytest.mark.parametrize("sql", OVERFLOWING)
def test_stack_overflow_fails_only_the_statement(mz_server: MzServer, both: tuple[psycopg.Connection, psycopg.Connection],
                                                 sql: str) -> None:
    mz, pg = both
    assert not isinstance(sorted_outcome(pg, sql), str)  # PostgreSQL answers
    with pytest.raises(psycopg.Error) as err:
        mz.execute(sql).fetchall()
    assert err.value.sqlstate == "54001"
    assert "stack depth limit exceeded" in str(err.value)
    check = "SELECT id, regexp_substr(s, 'a', 1, 2), regexp_replace(s, 'a', 'X', 'g') FROM t"
    assert sorted_outcome(mz, check) == sorted_outcome(pg, check)  # the same session answers
    with mz_server.connect() as other:  # a new session: the server and its Spark JVM live on
        other.execute("SET search_path = rfn")
        assert sorted_outcome(other, check) == sorted_outcome(pg, check)
