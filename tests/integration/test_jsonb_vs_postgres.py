"""jsonb compared row for row with a real PostgreSQL 15: jsonb values compare as the exact
text each server sends (canonical key order, spacing and numeric forms included)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from psycopg.types.string import TextLoader

from tests.integration.harness import MzServer
from tests.integration.test_functions_vs_postgres import _rows
from tests.pgref import paired_with_postgres

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.js (id int, j jsonb, t text)",
    "INSERT INTO {s}.js VALUES"
    """ (1, '{"b": [1, 2.50, {"z": null}], "a": "x", "aa": true, "a": "dup"}', '{"k": 1e2, "kk": -0, "k": [true, false]}'),"""
    """ (2, '[1, "two", {"three": 3}, [4], null, 1.0]', '[]'),"""
    """ (3, '"a string with \\"quotes\\" and \\u00e9"', '  {  }  '),"""
    """ (4, '12.3400', '"x"'),"""
    """ (5, NULL, NULL),"""
    """ (6, '{"a": {"b": {"c": [10, 20, 30]}}, "n": null, "e": []}', '{"c": 1.5e-3, "b": 1E+2}'),"""
    """ (7, 'null', 'true')""",
    "CREATE TABLE {s}.kv (g int, k text, v int, w numeric(6,2), s text)",
    "INSERT INTO {s}.kv VALUES (1, 'x', 1, 1.50, 'p'), (1, 'y', 2, 2.25, NULL), (1, 'x', 3, -0.10, 'q'),"
    " (2, 'a', NULL, NULL, 'r'), (2, 'a', NULL, NULL, 'r'), (3, 'z', 7, 100, 's\"t')",
]

QUERIES = [
    # input: canonical key order, last duplicate key wins, numeric forms, spacing
    "SELECT id, j FROM js",
    "SELECT id, t::jsonb FROM js",
    """SELECT '{"b":1,"a":2,"ab":3,"aaa":{"y":[1,2,{"c":3,"b":4}]}}'::jsonb, '[1e3, -0.0, 0.10, 1E-2]'::jsonb""",
    """SELECT ' "\\u00e9\\n\\t\\"" '::jsonb, '{"é": 1, "z": 2, "aa": 3}'::jsonb FROM js WHERE id = 1""",
    "SELECT id, j::text, length(j::text) FROM js",
    # -> and ->> with text keys and integer indexes (negative from the end)
    "SELECT id, j -> 'a', j ->> 'a', j -> 'b', j ->> 'b', j -> 'missing' FROM js",
    "SELECT id, j -> 0, j -> 2, j ->> 1, j -> -1, j -> -6, j -> -7, j ->> 4 FROM js",
    "SELECT id, j -> 'b' -> 1, j -> 'b' ->> 2, j -> 'b' -> 2 ->> 'z', j -> 'a' -> 'b' -> 'c' -> -1 FROM js",
    "SELECT id, j -> '0', j ->> 'aa', (j ->> 'aa')::bool FROM js",
    "SELECT id FROM js WHERE j ->> 'a' = 'dup'",
    # #> / #>> paths
    "SELECT id, j #> '{a,b,c}', j #>> '{a,b,c,1}', j #> '{b,0}', j #>> '{b,1}', j #> '{}', j #>> '{}' FROM js",
    "SELECT id, j #> ARRAY['a', 'b'], j #>> ARRAY['2', 'three'], j #> '{x,y}', j #> '{b,-1,z}' FROM js",
    # containment and key existence
    """SELECT id, j @> '{"a": "dup"}', j @> '{"b": [2.5]}', j @> '[1]', j @> '1', j @> '[[4]]', j @> '{}' FROM js""",
    """SELECT id, '{"a": "dup"}' <@ j, j <@ '[1, "two", {"three": 3, "x": 1}, [4, 5], null, 1, 2]' FROM js""",
    """SELECT id, j @> '{"a": {"b": {"c": [30]}}}', j @> '{"n": null}', j @> '{"e": []}', j @> '{"a": {}}' FROM js""",
    "SELECT id, j ? 'a', j ? 'two', j ? 'three', j ? 'a string with \"quotes\" and é' FROM js",
    "SELECT id, j ?| ARRAY['zz', 'aa'], j ?& ARRAY['a', 'b'], j ?& ARRAY['a', 'q'], j ?| '{}', j ?& '{}' FROM js",
    # types and lengths
    "SELECT id, jsonb_typeof(j), jsonb_typeof(j -> 'b'), jsonb_typeof(j -> 4), jsonb_typeof(j -> 'aa') FROM js",
    "SELECT id, jsonb_array_length(j) FROM js WHERE jsonb_typeof(j) = 'array'",
    "SELECT id, jsonb_array_length(j -> 'b'), jsonb_array_length(j -> 'e') FROM js WHERE id IN (1, 6)",
    "SELECT id, CASE WHEN jsonb_typeof(j) = 'array' THEN jsonb_array_length(j) END FROM js",
    # equality (numbers by value) and grouping of equal texts
    "SELECT a.id, b.id FROM js a, js b WHERE a.j = b.j",
    """SELECT id, j = '12.34', j <> '12.34', j -> 5 = '1', j -> 5 = '1.00'::jsonb FROM js""",
    """SELECT '{"a": [1.0, 2]}'::jsonb = '{"a": [1, 2.00]}', '[1, 2]'::jsonb = '[2, 1]', '"1"'::jsonb = '1' FROM js WHERE id = 1""",
    # constructors and to_jsonb of scalars
    "SELECT jsonb_build_object('a', 1, 'b', 'text', 'c', NULL, 'd', true, 'a', 2.50, 'e', 1.5::float8) FROM js WHERE id = 1",
    "SELECT g, jsonb_build_object('k', k, 'v', v, 'w', w, 's', s, 'j', jsonb_build_array(v, s)) FROM kv",
    "SELECT jsonb_build_array(), jsonb_build_object(), jsonb_build_array(1, 'a', NULL, false, '{\"x\": 1}'::jsonb) FROM js WHERE id = 1",
    "SELECT g, to_jsonb(v), to_jsonb(w), to_jsonb(s), to_jsonb(k = 'x'), to_jsonb(v * 0.5::float8) FROM kv",
    "SELECT to_jsonb(1), to_jsonb(-1.50), to_jsonb('a\"b'::text), to_jsonb(true), to_jsonb(1e20::float8), to_jsonb(0.1::float8) FROM js WHERE id = 1",
    # aggregates (duplicate rows count twice)
    "SELECT g, jsonb_agg(v ORDER BY v), jsonb_agg(s ORDER BY s DESC), jsonb_agg(w ORDER BY w) FROM kv GROUP BY g",
    "SELECT jsonb_agg(j ORDER BY id) FROM js",
    "SELECT g, jsonb_agg(k ORDER BY k) FILTER (WHERE v > 1) FROM kv GROUP BY g",
    "SELECT g, jsonb_object_agg(k, v ORDER BY v), jsonb_object_agg(s, w ORDER BY w) FILTER (WHERE s IS NOT NULL) FROM kv GROUP BY g",
    "SELECT jsonb_object_agg(id, j ORDER BY id) FROM js WHERE j IS NOT NULL",
    "SELECT jsonb_agg(v ORDER BY v) FROM kv WHERE g > 100",
    # table functions
    "SELECT id, e.value FROM js, jsonb_array_elements(j) e WHERE jsonb_typeof(j) = 'array'",
    "SELECT id, x FROM js, jsonb_array_elements_text(j) AS e(x) WHERE id = 2",
    "SELECT id, e.key, e.value FROM js, jsonb_each(j) e WHERE jsonb_typeof(j) = 'object'",
    "SELECT id, key, value FROM js, jsonb_each_text(j) WHERE id IN (1, 6)",
    "SELECT id, k FROM js, jsonb_object_keys(j) k WHERE jsonb_typeof(j) = 'object'",
    "SELECT g, count(*), jsonb_agg(value ORDER BY value) FROM kv, jsonb_array_elements(jsonb_build_array(v, v + 1)) GROUP BY g",
    # jsonb through joins and subqueries
    "SELECT kv.k, js.j -> kv.k FROM kv JOIN js ON js.id = kv.g",
    "SELECT id FROM js WHERE j -> 'a' ->> 'b' IS NULL AND j ? 'a'",
    # || (objects merge, the right wins; anything else concatenates as arrays)
    """SELECT id, j || '{"a": 0, "z": [1]}', j || '[9]', '[0]' || j, j || j FROM js""",
    # - key / keys / index, #- path
    "SELECT id, j - 'a', j - ARRAY['a', 'b'], j - '{}'::text[] FROM js WHERE jsonb_typeof(j) IN ('object', 'array')",
    "SELECT id, j - 0, j - -1, j - 9, j - -9 FROM js WHERE jsonb_typeof(j) = 'array'",
    "SELECT id, j #- '{b,2,z}', j #- '{a,b,c,-1}', j #- '{b,9}', j #- '{}' FROM js WHERE id IN (1, 6)",
    "SELECT id, j #- '{2}', j #- '{-1}', j #- '{2,three}', j #- '{9}' FROM js WHERE id = 2",
    # jsonb_set / jsonb_insert, create_missing and insert_after
    """SELECT id, jsonb_set(j, '{b,0}', '"s"'), jsonb_set(j, '{new}', j), jsonb_set(j, '{new}', '1', false),"""
    """ jsonb_set(j, '{a,b,c,-9}', '0') FROM js WHERE id IN (1, 6)""",
    """SELECT id, jsonb_set(j, '{1}', '"s"'), jsonb_set(j, '{-1}', '"s"'), jsonb_set(j, '{9}', '[]'), jsonb_set(j, '{2,three}', 'null') FROM js WHERE id = 2""",
    """SELECT id, jsonb_insert(j, '{1}', '"i"'), jsonb_insert(j, '{1}', '"i"', true), jsonb_insert(j, '{-1}', '0', true) FROM js WHERE id = 2""",
    """SELECT id, jsonb_insert(j, '{b,1}', '"i"'), jsonb_insert(j, '{new}', '1') FROM js WHERE id = 1""",
    # jsonb_strip_nulls, jsonb_pretty, the named operator functions
    """SELECT id, jsonb_strip_nulls(j), jsonb_strip_nulls('[{"a": null, "b": [null, {"c": null}]}]') FROM js""",
    "SELECT id, jsonb_pretty(j) FROM js",
    """SELECT id, jsonb_extract_path(j, 'a', 'b'), jsonb_extract_path_text(j, 'b', '1'), jsonb_delete(j, 'a'),"""
    """ jsonb_contains(j, '{"a": "dup"}'), jsonb_contained('{"a": "dup"}', j), jsonb_exists(j, 'aa') FROM js WHERE id IN (1, 6)""",
    # jsonb_object from one array of alternating keys and values, or from keys and values
    """SELECT jsonb_object('{a,1,b,NULL,a,3,"d e f",""}'), jsonb_object('{}'), jsonb_object(ARRAY[t, 'x'], ARRAY['1', t]) FROM js WHERE id = 4""",
    "SELECT id, jsonb_build_object(id > 2, id, true, 0) FROM js",
    # f(VARIADIC arr): the array is the variadic parameter
    """SELECT jsonb_build_array(VARIADIC NULL::text[]), jsonb_build_array(VARIADIC '{a,NULL}'::text[]),"""
    """ jsonb_build_object(VARIADIC ARRAY[1, 2, 3, 4]), jsonb_build_object(VARIADIC ARRAY['a', NULL]) FROM js WHERE id = 1""",
    "SELECT id, jsonb_extract_path(j, VARIADIC ARRAY['b', '2']), jsonb_extract_path_text(j, VARIADIC '{a}') FROM js",
    # subscripts (read): a one-element path each
    "SELECT id, j['a'], j['b'][1], j[0], j[-1], j['a']['b']['c'][2], j['0'], j[NULL] FROM js",
]

# queries that fail in both (the same SQLSTATE is expected)
EXPECTED_ERRORS = {
    "SELECT id, jsonb_array_length(j) FROM js",
    "SELECT '{\"a\": }'::jsonb",
    "SELECT t::jsonb FROM (SELECT 'nope' AS t FROM js WHERE id = 1) s",
    "SELECT jsonb_build_object('a') FROM js",
    "SELECT jsonb_object_agg(s, v) FROM kv",
    "SELECT jsonb_build_object(s, v) FROM kv",
    "SELECT jsonb_build_object(NULL, 1) FROM js",
    "SELECT e.value FROM js, jsonb_array_elements(j) e",
    "SELECT k FROM js, jsonb_object_keys(j) k",
    "SELECT j - 'a' FROM js",
    "SELECT j - 0 FROM js WHERE id = 1",
    "SELECT j #- '{a}' FROM js WHERE id = 2",
    "SELECT jsonb_set(j, '{a}', '1') FROM js WHERE id = 4",
    "SELECT jsonb_set(j, '{b,NULL}', '1') FROM js WHERE id = 1",
    "SELECT jsonb_insert(j, '{a}', '1') FROM js WHERE id = 1",
    "SELECT j[1:2] FROM js",
    "SELECT jsonb_object('{a,b,c}') FROM js",
    "SELECT jsonb_build_object(j, 1) FROM js",
    "SELECT jsonb_object('{a,NULL}', '{1,2}') FROM js",
}


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    def configure(conn: psycopg.Connection) -> None:
        # jsonb compares as the exact text each server sends
        conn.adapters.register_loader("jsonb", TextLoader)

    with paired_with_postgres(mz_server.connect(), "jsonb-", "jb", SETUP, configure) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES + sorted(EXPECTED_ERRORS))
def test_jsonb_same_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    expected = _rows(pg, sql)
    assert not isinstance(expected, str) or sql in EXPECTED_ERRORS, f"the reference rejects the query: {expected}"
    assert isinstance(expected, str) or sql not in EXPECTED_ERRORS, f"the reference accepts the query: {expected}"
    assert _rows(mz, sql) == expected
