"""Literal and operator syntax around functions (pure, no Spark): E'...' escape strings,
SIMILAR TO patterns, the `name` type's truncation, bytea function typing, SRF placement."""

from __future__ import annotations

import pytest

from sql import func
from sql.bind import Binder, ItemRef
from sql.errors import SqlError
from sql.func_similar import similar_to_regex
from sql.lex import rewrite_escape_strings
from sql.literal import cast_value
from sql.parse import parse_sql
from sql.text_input import parse_text
from sql.types import SqlType


class _NoTables:
    def resolve(self, parts: list[str]) -> ItemRef | None:
        return None


def _bind(sql: str):
    return Binder(_NoTables()).bind_query(parse_sql(sql))


@pytest.mark.parametrize(("sql", "want"), [
    (r"SELECT E'a\nb'", "SELECT 'a\nb'"),
    (r"SELECT E'it\'s', e'\101\x42\u00e9', E'x''y', E'\\'", "SELECT 'it''s', 'ABé', 'x''y', '\\'"),
    (r"SELECT 'plain\n', E'\q'", r"SELECT 'plain\n', 'q'"),
    ("SELECT fe'x'", "SELECT fe'x'"),  # an identifier ending in e, not an E string
])
def test_escape_strings(sql: str, want: str) -> None:
    assert rewrite_escape_strings(sql) == want


def test_escape_string_value_binds() -> None:
    bq = _bind(r"SELECT E'tab\there'")
    assert bq.rel.input.scalars[0].value == "tab\there"  # type: ignore[attr-defined]


@pytest.mark.parametrize(("pattern", "escape", "matches", "misses"), [
    ("a%", "\\", ["a", "abc"], ["ba"]),
    ("%(b|d)%", "\\", ["abc", "xd"], ["ac"]),
    ("a#%b", "#", ["a%b"], ["axb"]),
    ("[a-c]_x.y", "\\", ["bqx.y"], ["bqxzy", "dqx.y"]),
    ("a+b*", None, ["aab", "a"], ["b"]),
])
def test_similar_to_regex(pattern: str, escape: str | None, matches: list[str], misses: list[str]) -> None:
    import re

    rx = re.compile(similar_to_regex(pattern, escape).replace("(?s)", ""), re.S)
    assert all(rx.search(m) for m in matches)
    assert not any(rx.search(m) for m in misses)


def test_name_truncates_to_63_bytes() -> None:
    assert parse_text("x" * 70, SqlType("name")) == "x" * 63
    assert parse_text("é" * 40, SqlType("name")) == "é" * 31  # 62 bytes: no half character
    assert cast_value("y" * 64, SqlType("text"), SqlType("name")) == "y" * 63
    assert _bind("SELECT 'a'::name").types == (SqlType("name"),)


def test_bytea_functions_type_as_bytea() -> None:
    assert func.function_type("substr", [SqlType("bytea"), SqlType("int4")]) == ([SqlType("bytea"), SqlType("int4")], SqlType("bytea"))
    assert func.function_type("md5", [SqlType("bytea")])[1] == SqlType("text")
    with pytest.raises(SqlError) as e:
        func.function_type("lower", [SqlType("bytea")])
    assert e.value.sqlstate == "42883"


@pytest.mark.parametrize("sql", [
    "SELECT 1 WHERE generate_series(1, 2) > 1",
    "SELECT sum(generate_series(1, 2))",
    "SELECT generate_series(1, 2), generate_series(1, 3)",
    "SELECT CASE WHEN true THEN generate_series(1, 2) END",
])
def test_srf_positions_postgres_rejects_or_we_do_not_support(sql: str) -> None:
    with pytest.raises(SqlError) as e:
        _bind(sql)
    assert e.value.sqlstate == "0A000"


def test_srf_in_select_list_is_a_lateral_flatmap() -> None:
    bq = _bind("SELECT generate_series(1, 3) * 2 AS g FROM (VALUES (1)) t(x)")
    assert bq.names == ("g",)
    assert "HFlatMap" in repr(bq.rel)


def test_percentile_cont_of_intervals_is_refused() -> None:
    with pytest.raises(SqlError) as e:
        _bind("SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM (VALUES (interval '1 day')) t(x)")
    assert e.value.sqlstate == "0A000" and "percentile_cont" in e.value.message


@pytest.mark.parametrize(("sql", "value"), [("SELECT 1e9+1", 1_000_000_001), ("SELECT 2.5e2-1", 249), ("SELECT 1e-2+1", 1.01)])
def test_exponent_followed_by_a_sign_is_an_operator(sql: str, value: float) -> None:
    from decimal import Decimal

    from sql.lex import separate_exponent_signs

    assert separate_exponent_signs("SELECT 'x1e9+1', \"c1e2-3\"") == "SELECT 'x1e9+1', \"c1e2-3\""
    h = _bind(sql).rel.input.scalars[0]  # type: ignore[attr-defined]
    assert h.func == ("add" if "+1" in sql else "sub")
    assert Decimal(str(h.expr1.value)) + (1 if "+1" in sql else -1) == Decimal(str(value))


@pytest.mark.parametrize(("pattern", "escape", "expected"), [
    ("h#%", "#", "h\\%"), ("m%aca", "%", "maca"), ("b_e__r", "_", "be\\_r"), ("a\\bc", "", "a\\\\bc"),
    ("a\\%c", "\\", "a\\%c"), ("a\\bc", "\\", "abc"), ("a$$b", "$", "a$b"), ("x\\y", "#", "x\\\\y"),
])
def test_like_escape_rewrites_to_backslash_escapes(pattern: str, escape: str, expected: str) -> None:
    """x LIKE p ESCAPE e = x LIKE p' with backslash as the escape (escape + c = literal c)."""
    from sql.bind_operators import like_pattern

    assert like_pattern(pattern, escape) == expected


@pytest.mark.parametrize(("pattern", "escape"), [("ab#", "#"), ("ab", "##")])
def test_like_escape_errors(pattern: str, escape: str) -> None:
    from sql.bind_operators import like_pattern
    from sql.errors import SqlError

    with pytest.raises(SqlError) as e:
        like_pattern(pattern, escape)
    assert e.value.sqlstate == "22025"
