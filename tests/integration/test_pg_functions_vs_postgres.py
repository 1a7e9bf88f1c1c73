"""Functions PostgreSQL's regression scripts use, compared with a real PostgreSQL 15 on the
same data: the json constructors and aggregates (json is read as jsonb, so documents compare
as psycopg decodes them: by value, key order aside), number formatting (to_char / to_number)
and numeric scale functions."""

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
]

QUERIES = [
    # json constructors and aggregates (the jsonb ones; json is read as jsonb)
    "SELECT id, json_build_object('a', i4, 'b', n::numeric(12,3), 'c', s, 'd', b, 'e', NULL) FROM v",
    "SELECT id, json_build_array(i4, n::numeric(12,3), s, b, NULL), to_json(s), to_json(n::numeric(12,3)), to_json(b) FROM v",
    "SELECT json_build_object(VARIADIC ARRAY['k', 'v', 'k2', NULL]), json_build_array(), json_build_object()",
    "SELECT json_agg(i4 ORDER BY id), json_object_agg(s, i8 ORDER BY id) FROM v WHERE s IS NOT NULL",
    "SELECT json_build_object('a', 1, 'b')",
    "SELECT json_build_object(NULL, 1)",
]

EXPECTED_ERRORS = {"SELECT json_build_object('a', 1, 'b')", "SELECT json_build_object(NULL, 1)"}


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
