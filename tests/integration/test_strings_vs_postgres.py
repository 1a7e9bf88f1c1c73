"""String and bytea functions of PostgreSQL's strings.sql, compared with a real PostgreSQL 15
on the same data: the bytea functions (get_byte / set_byte / get_bit / set_bit, bit_count,
btrim / ltrim / rtrim, ||, overlay) with their range errors, trims of text ending in a line
break or by an empty set, and unistr's escapes and errors (sql.unicode_escapes)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.integration.harness import MzServer
from tests.pgref import paired_with_postgres, sorted_outcome

pytestmark = pytest.mark.integration

SETUP = [
    "CREATE TABLE {s}.b (id int, v bytea, s text)",
    "INSERT INTO {s}.b VALUES (1, '\\x1234567890abcdef00', 'abc'), (2, '\\x00546f6d00', E'abc\\n'),"
    " (3, '\\x', ''), (4, NULL, NULL), (5, '\\x5d5e2d5c0a0a', E'x\\ny]')",
]

QUERIES = [
    "SELECT id, get_byte(v, 0), get_bit(v, 3), set_byte(v, 0, 257), set_byte(v, 0, -1), set_bit(v, 7, 1),"
    " set_bit(v, 4, 0), bit_count(v) FROM b WHERE length(v) > 0",
    "SELECT id, bit_count(v), v || v, v || '\\x01', '\\x02' || v, v || NULL::bytea FROM b",
    "SELECT get_bit('\\x1234567890abcdef00'::bytea, 43), get_byte('\\x1234567890abcdef00'::bytea, 3),"
    " set_byte('\\x1234567890abcdef00'::bytea, 7, 11), set_bit('\\x1234567890abcdef00'::bytea, 43, 0),"
    " get_bit(v, NULL), set_byte(v, 1, NULL) FROM b WHERE id = 1",
    "SELECT id, get_byte(v, 9) FROM b WHERE id = 1",
    "SELECT id, get_byte(v, -1) FROM b WHERE id = 1",
    "SELECT id, set_byte(v, 99, 11) FROM b WHERE id = 1",
    "SELECT id, get_bit(v, 72) FROM b WHERE id = 1",
    "SELECT id, set_bit(v, 99, 0) FROM b WHERE id = 1",
    "SELECT id, set_bit(v, 1, 2) FROM b WHERE id = 1",
    "SELECT id, get_byte(v, 0) FROM b WHERE id = 3",
    "SELECT get_byte('\\x0102'::bytea, 1::int8)",
    # trims of bytea by a set of bytes (regex specials, line feeds, NUL), and of text
    "SELECT id, btrim(v, '\\x00'::bytea), ltrim(v, '\\x0012'::bytea), rtrim(v, '\\x000a'::bytea),"
    " btrim(v, '\\x5d5e2d5c'::bytea), btrim(v, ''::bytea), trim(leading '\\x00'::bytea from v),"
    " trim(trailing '\\x00'::bytea from v), trim('\\x00'::bytea from v) FROM b",
    "SELECT id, btrim(s, 'a'), rtrim(s, 'c'), rtrim(s, 'y]'), ltrim(s, ''), btrim(s, E'\\n'), rtrim(s, ']') FROM b",
    "SELECT encode(overlay(E'Th\\\\000omas'::bytea placing E'Th\\\\001omas'::bytea from 2), 'hex'),"
    " encode(overlay(E'Th\\\\000omas'::bytea placing E'\\\\002\\\\003'::bytea from 5 for 3), 'hex')",
    # unistr
    "SELECT unistr('\\0064at\\+0000610'), unistr('d\\u0061t\\U000000610'), unistr('a\\\\b'), unistr(NULL),"
    " unistr('\\D83D\\DE00')",
    "SELECT id, unistr(s) FROM b",
    "SELECT unistr('wrong: \\db99')",
    "SELECT unistr('wrong: \\db99\\0061')",
    "SELECT unistr('wrong: \\+00db99\\+000061')",
    "SELECT unistr('wrong: \\+2FFFFF')",
    "SELECT unistr('wrong: \\xyz')",
]


@pytest.fixture(scope="module")
def both(mz_server: MzServer) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with paired_with_postgres(mz_server.connect(), "strings-", "strs", SETUP) as pair:
        yield pair


@pytest.mark.parametrize("sql", QUERIES)
def test_same_result_as_postgres(both: tuple[psycopg.Connection, psycopg.Connection], sql: str) -> None:
    mz, pg = both
    assert sorted_outcome(mz, sql) == sorted_outcome(pg, sql)
