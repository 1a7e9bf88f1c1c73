"""Functions PostgreSQL's regression scripts use, compared with a real PostgreSQL 15 on the
same data: the json constructors and aggregates and row_to_json (json is read as jsonb, so
documents compare as psycopg decodes them: by value, key order aside), number formatting
(to_char / to_number), make_timestamptz with a time zone, and numeric scale functions."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres, sorted_outcome

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.v (id int, i4 int, i8 bigint, n numeric, s text, b bool)",
    "INSERT INTO {s}.v VALUES (1, 0, 4567890123456789, 1.5, 'a', true), (2, -42, -4567890123456789, -0.005, 'b\"q', false),"
    " (3, 123456, 123, 99999.995, '', NULL), (4, NULL, NULL, NULL, NULL, NULL), (5, 7, 0, 0, 'e', true)",
    "CREATE TABLE {s}.w8 (q1 bigint, q2 bigint)",
    "INSERT INTO {s}.w8 VALUES (123, 456), (4567890123456789, -4567890123456789)",
]

QUERIES = [
    # json constructors and aggregates (the jsonb ones; json is read as jsonb)
    "SELECT id, json_build_object('a', i4, 'b', n::numeric(12,3), 'c', s, 'd', b, 'e', NULL) FROM v",
    "SELECT id, json_build_array(i4, n::numeric(12,3), s, b, NULL), to_json(s), to_json(n::numeric(12,3)), to_json(b) FROM v",
    "SELECT json_build_object(VARIADIC ARRAY['k', 'v', 'k2', NULL]), json_build_array(), json_build_object()",
    "SELECT json_agg(i4 ORDER BY id), json_object_agg(s, i8 ORDER BY id) FROM v WHERE s IS NOT NULL",
    # json's scalar functions as their jsonb ones (was: 42883)
    "SELECT json_typeof(j), json_typeof(a), json_array_length(a), json_strip_nulls(j), json_extract_path(j, 'f4', 'f6'),"
    " json_extract_path_text(j, 'f2', 'f3'), json_extract_path(a, '1', '0'), json_extract_path_text(j, 'f4', 'f5') IS NULL"
    " FROM (VALUES ('{\"f2\":{\"f3\":1},\"f4\":{\"f5\":null,\"f6\":\"stringy\"}}'::json, '[1,[2,3],null]'::json)) v(j, a)",
    "SELECT json_array_length('4')",
    # to_char of integers and numerics: digits, zeros, groups, signs (S / MI / PL / SG / PR),
    # fill mode, ordinals, V, literal text, overflow '#'s, rounding to the format's digits
    "SELECT id, to_char(i8, '9G999G999G999G999G999'), to_char(i4, '9,999,999.99'), to_char(n, 'FM999990.00PR'),"
    " to_char(i8, 'S9999999999999999'), to_char(i4, 'MI0999999'), to_char(n, '9999.9999SG') FROM v",
    "SELECT id, to_char(i4, 'FM999THPR'), to_char(i4, 'PL999th'), to_char((i4 % 1000)::smallint, 'FM99V99'),"
    " to_char(n, 'FM9.99'), to_char(n, '99999.9'), to_char(i8, 'L9 \"text\" 999'), to_char(n, '') FROM v",
    "SELECT id, to_char(n, 'B9990.999'), to_char(n, 'FM0.000'), to_char(-n, 'S0.0'), to_char(i4, 'D99') FROM v",
    "SELECT to_char(1, '9.9.9')",
    # to_number: groups, decimal point, signs before / after, brackets, literal characters
    "SELECT to_number(s, f) FROM (VALUES ('-34,338,492', '99G999G999'), ('<564646.654564>', '999999.999999PR'),"
    " ('5.01-', 'FM9.999999MI'), ('.01-', '99.99S'), ('$1,234.56', 'L99,999.99'), ('42nd', '99th'),"
    " ('123456', '999G999'), ('1234.5678', '9999.99'), (NULL, '99'), ('12', '')) AS t(s, f), (SELECT 1) o",
    "SELECT to_number('12345', '99')",
    "SELECT to_number('x', '99')",
    # make_timestamptz with a zone: signed numbers are ISO offsets (east of UTC), names IANA
    "SELECT make_timestamptz(1973, 07, 15, 08, 15, 55.33, '+2'), make_timestamptz(1973, 07, 15, 08, 15, 55.33, '-2'),"
    " make_timestamptz(2010, 2, 27, 3, 45, 0, '+10:00:01'), make_timestamptz(2010, 2, 27, 3, 45, 0, '+1000'),"
    " make_timestamptz(2010, 2, 27, 3, 45, 0, '+1:'), make_timestamptz(2014, 12, 10, 0, 0, 0, 'Europe/Prague'),"
    " make_timestamptz(1881, 12, 10, 0, 0, 0, 'Asia/Singapore'), make_timestamptz(2014, 12, 10, 10, 10, 10, NULL)",
    "SELECT make_timestamptz(1973, 07, 15, 08, 15, 55.33, '2')",
    "SELECT make_timestamptz(2014, 12, 10, 10, 10, 10, '+16')",
    "SELECT make_timestamptz(1910, 12, 24, 0, 0, 0, 'Nehwon/Lankhmar')",
    # the scale of a numeric's value
    "SELECT id, min_scale(n), trim_scale(n), min_scale(n::numeric(12,4)), trim_scale(n::numeric(12,4)), min_scale(i4),"
    " trim_scale(i8) FROM v",
    "SELECT min_scale(1.1000), trim_scale(1.1234500), trim_scale(-13.00000000000000000000), min_scale(0.00)",
    # records as json objects: a table's own column names (a column alias does not rename
    # them), a subquery's (aliased) output names, ROW(..)'s f1, f2, ..
    "SELECT id, row_to_json(q), to_jsonb(q), row_to_json(q, true) FROM (SELECT id, i8, s, b FROM v) q",
    "SELECT row_to_json(t) FROM (SELECT id, i4 FROM v) t(a)",
    "SELECT row_to_json(w), to_json(w) FROM w8 w(x, y)",
    "SELECT id, row_to_json(row(1, 'foo')), to_json(row(i4, s, NULL)) FROM v",
    "SELECT row_to_json(1)",
    "SELECT json_build_object('a', 1, 'b')",
    "SELECT json_build_object(NULL, 1)",
]

EXPECTED_ERRORS = {"SELECT json_build_object('a', 1, 'b')", "SELECT json_array_length('4')", "SELECT row_to_json(1)", "SELECT json_build_object(NULL, 1)", "SELECT to_char(1, '9.9.9')",
                   "SELECT to_number('12345', '99')", "SELECT to_number('x', '99')",
                   "SELECT make_timestamptz(1973, 07, 15, 08, 15, 55.33, '2')", "SELECT make_timestamptz(2014, 12, 10, 10, 10, 10, '+16')",
                   "SELECT make_timestamptz(1910, 12, 24, 0, 0, 0, 'Nehwon/Lankhmar')"}
# 0A000 where Postgres has an answer (not approximated)
UNSUPPORTED = ["SELECT to_char(1.5::float8, '9.9')", "SELECT to_char(12, 'RN')", "SELECT to_char(1.5, '9.9EEEE')"]


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "pgfuncs-", "pgf", SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = sorted_outcome(pg, sql)
    assert not isinstance(expected, str) or sql in EXPECTED_ERRORS, f"the reference rejects the query: {expected}"
    assert sorted_outcome(mz, sql) == expected


@pytest.mark.parametrize("sql", UNSUPPORTED)
def test_unsupported_is_0a000(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    assert not isinstance(sorted_outcome(pg, sql), str)
    assert sorted_outcome(mz, sql) == "error 0A000"
