"""sql.text_input.parse_text (the one text-input parser of the wire codec, literal casts and
COPY) against PostgreSQL 15's input functions: the same value (compared through the text
output) or the same error (SQLSTATE and message). The inputs are the ones where the two
parsers it replaced disagreed, and their neighbours."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from server.pgwire import codec
from sql.errors import SqlError
from sql.text_input import parse_text
from sql.types import SqlType, numeric_typmod

NUMERIC_5_2 = SqlType("numeric", numeric_typmod(5, 2))

CASES: list[tuple[str, SqlType, str]] = [
    *[("int2", SqlType("int2"), s) for s in ("32768", " 12 ", "1e3", "-32768", "")],
    *[("int4", SqlType("int4"), s) for s in ("2147483648", "+7", "12a", "0x10")],
    *[("int8", SqlType("int8"), s) for s in ("9223372036854775808", "-9223372036854775808")],
    *[("oid", SqlType("oid"), s) for s in ("-1", "4294967296", "4294967295", "-2147483648")],
    *[("float8", SqlType("float8"), s) for s in ("1e400", "1e-400", "  -0.5 ", "inf", "-Infinity", "1.5e", "0e-999")],
    *[("float4", SqlType("float4"), s) for s in ("3.5e38", "1e-50", "0.1", "3.4028234e38", "NaN")],
    *[("numeric", SqlType("numeric"), s) for s in ("1e5", " 12.500 ", "abc", ".5", "1e")],
    *[("numeric(5,2)", NUMERIC_5_2, s) for s in ("123.456", "1234.5", "-0.005")],
    *[("bool", SqlType("bool"), s) for s in ("t", "ye", "of", "o", "maybe", " TRUE ", "1")],
    *[("uuid", SqlType("uuid"), s) for s in (
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "{a0eebc999c0b4ef8bb6d6bb9bd380a11}",
        "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11", "urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "a0eebc99-9c0b4ef8-bb6d6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",
        " a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
        "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-", "-a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")],
    *[('"char"', SqlType("char"), s) for s in ("abc", "", "x")],
    *[("json", SqlType("json"), s) for s in ('{"a": 1,"a":2}', "{", "NaN", "[1, 2.50]")],
    *[("jsonb", SqlType("jsonb"), s) for s in ('{"b": 1, "a": [1,2]}', "{", '{"a":1,"a":2}', "1.50")],
    ("name", SqlType("name"), "x" * 70),
    *[("bytea", SqlType("bytea"), s) for s in ("\\x4142", "ab\\\\c", "\\x4", "\\q", "\\101")],
    *[("date", SqlType("date"), s) for s in ("2020-02-30", "2020-02-29")],
    ("timestamp(2)", SqlType("timestamp", 2), "2020-01-01 12:00:00.125001"),
    *[("int4[]", SqlType("_int4"), s) for s in ("{1,2,NULL}", "{1,x}", '{"1"}', "{}", "1,2")],
    ("text[]", SqlType("_text"), '{a,"b,c",NULL,"NULL"}'),
]


@pytest.fixture(scope="module")
def pg() -> Iterator[Any]:
    import psycopg

    from tests.pgref import reference_postgres

    with reference_postgres("text-input-") as dsn:
        conn = psycopg.connect(dsn, autocommit=True)
        conn.execute("SET TimeZone = 'UTC'")
        yield conn
        conn.close()


def _postgres(conn: Any, typ: str, text: str) -> tuple[str, str | bytes]:
    """('ok', text output) or ('error', 'SQLSTATE: message') of `'text'::typ` in Postgres."""
    from psycopg.pq import DiagnosticField, ExecStatus

    literal = "'" + text.replace("'", "''") + "'"
    r = conn.pgconn.exec_(f"SELECT {literal}::{typ}".encode())
    if r.status == ExecStatus.TUPLES_OK:
        return "ok", r.get_value(0, 0)
    state = r.error_field(DiagnosticField.SQLSTATE).decode()
    return "error", f"{state}: {r.error_field(DiagnosticField.MESSAGE_PRIMARY).decode()}"


def _ours(t: SqlType, text: str) -> tuple[str, str | bytes]:
    try:
        value = parse_text(text, t)
    except SqlError as e:
        return "error", f"{e.sqlstate}: {e.message}"
    return "ok", codec.encode_text(value, t)


@pytest.mark.parametrize(("typ", "t", "text"), CASES, ids=[f"{c[0]}:{c[2][:20]}" for c in CASES])
def test_text_input_like_postgres(pg: Any, typ: str, t: SqlType, text: str) -> None:
    assert _ours(t, text) == _postgres(pg, typ, text)
