"""Pure unit tests of the lexer, statement classification and literal casts."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from sql import statements as st
from sql.errors import SqlError
from sql.interval import parse_interval
from sql.lex import split_statements
from sql.literal import cast_value, to_text
from sql.text_input import parse_text
from sql.types import (
    BOOL,
    DATE,
    FLOAT8,
    INT2,
    INT4,
    NUMERIC,
    TEXT,
    TIMESTAMPTZ,
    Interval,
    SqlType,
    numeric_typmod,
)


@pytest.mark.parametrize(
    "sql, parts",
    [
        ("select 1; select 2", ["select 1", "select 2"]),
        ("select ';'; select 'a''b;'", ["select ';'", "select 'a''b;'"]),
        ("select $$a;b$$; select $t$;$t$", ["select $$a;b$$", "select $t$;$t$"]),
        ("select E'\\';'", ["select E'\\';'"]),
        ("-- only a comment;\n", []),
        ("select /* ; /* nested ; */ */ 1", ["select /* ; /* nested ; */ */ 1"]),
        ('select "a;b" from t', ['select "a;b" from t']),
        (" ; ;", []),
    ],
)
def test_split_statements(sql: str, parts: list[str]) -> None:
    assert split_statements(sql) == parts


def test_unterminated_string_is_a_syntax_error() -> None:
    with pytest.raises(SqlError) as e:
        split_statements("select 'abc")
    assert e.value.sqlstate == "42601"


@pytest.mark.parametrize(
    "sql, kind",
    [
        ("SELECT 1", st.Query),
        ("VALUES (1)", st.Query),
        ("INSERT INTO t VALUES (1)", st.Insert),
        ("SET search_path TO public", st.SetVar),
        ("SHOW TABLES", st.ShowListing),
        ("BEGIN READ ONLY", st.TxnControl),
        ("COPY t (a) FROM STDIN WITH (FORMAT csv)", st.CopyFrom),
        ("COPY (SELECT 1) TO STDOUT", st.CopyTo),
        ("CREATE MATERIALIZED VIEW mv AS SELECT 1", st.CreateView),
        ("CREATE DEFAULT INDEX ON v", st.CreateIndex),
        ("EXPLAIN PHYSICAL PLAN WITH (node_ids) FOR SELECT 1", st.Explain),
        ("EXPLAIN ANALYZE SELECT 1", st.Explain),
    ],
)
def test_classify(sql: str, kind: type) -> None:
    assert isinstance(st.classify(sql), kind)


def test_explain_options_are_validated() -> None:
    e = st.classify("EXPLAIN PHYSICAL PLAN WITH (node identifiers, redacted) FOR SELECT 1")
    assert isinstance(e, st.Explain) and e.options == ("node_ids", "redacted")
    e = st.classify("EXPLAIN OPTIMIZED PLAN WITH (arity, join implementations, keys, types, redacted) FOR SELECT 1")
    assert isinstance(e, st.Explain) and e.options == ("arity", "join_impls", "keys", "types", "redacted")
    with pytest.raises(SqlError) as err:
        st.classify("EXPLAIN PLAN WITH (bogus) FOR SELECT 1")
    assert err.value.sqlstate == "42601"
    # known modifiers an output does not implement are refused, never silently ignored
    for sql in ("EXPLAIN PHYSICAL PLAN WITH (arity) FOR SELECT 1",
                "EXPLAIN PHYSICAL PLAN WITH (humanized expressions) FOR SELECT 1",
                "EXPLAIN OPTIMIZED PLAN WITH (subtree size) FOR SELECT 1",
                "EXPLAIN OPTIMIZED PLAN WITH (filter pushdown) FOR SELECT 1",
                "EXPLAIN OPTIMIZED PLAN WITH (arity) AS JSON FOR SELECT 1"):
        with pytest.raises(SqlError) as err:
            st.classify(sql)
        assert err.value.sqlstate == "0A000", sql


def test_copy_to_a_file_is_refused() -> None:
    with pytest.raises(SqlError) as e:
        st.classify("COPY t FROM '/etc/passwd'")
    assert e.value.sqlstate == "42501"


@pytest.mark.parametrize("sql, temporary", [
    ("CREATE TEMP VIEW v AS SELECT 1", True),
    ("CREATE OR REPLACE TEMPORARY VIEW v (x) AS SELECT 1", True),
    ("CREATE VIEW v AS SELECT 1", False),
])
def test_temp_views_parse(sql: str, temporary: bool) -> None:
    v = st.classify(sql)
    assert isinstance(v, st.CreateView) and v.temporary == temporary and v.name == ("v",)


@pytest.mark.parametrize("sql", [
    "CREATE TEMP TABLE t (a int) ON COMMIT DROP",
    "CREATE TEMPORARY TABLE t (a int) ON COMMIT DELETE ROWS",
    "CREATE TEMP MATERIALIZED VIEW m AS SELECT 1",
    "CREATE TEMP SEQUENCE s",
])
def test_unsupported_temp_forms_are_0a000(sql: str) -> None:
    with pytest.raises(SqlError) as e:
        st.classify(sql)
    assert e.value.sqlstate == "0A000"


def test_temp_tables_parse() -> None:
    assert isinstance(st.classify("CREATE TEMP TABLE t (a int) ON COMMIT PRESERVE ROWS"), st.CreateTable)
    assert isinstance(st.classify("CREATE TEMPORARY TABLE t AS SELECT 1"), st.CreateTable)


@pytest.mark.parametrize(
    "text, typ, value",
    [
        (" 12 ", INT4, 12),
        ("-32768", INT2, -32768),
        ("1.50", NUMERIC, Decimal("1.50")),
        ("NaN", FLOAT8, float("nan")),
        ("yes", BOOL, True),
        ("2024-02-29", DATE, dt.date(2024, 2, 29)),
        ("2024-01-01 10:00:00+02", TIMESTAMPTZ, dt.datetime(2024, 1, 1, 8, tzinfo=dt.UTC)),
        ("1 day 02:00:00", SqlType("interval"), Interval(0, 1, 7_200_000_000)),
    ],
)
def test_parse_text(text: str, typ: SqlType, value: object) -> None:
    got = parse_text(text, typ)
    if isinstance(value, float) and value != value:
        assert got != got
    else:
        assert got == value


@pytest.mark.parametrize(
    "text, typ, state",
    [("abc", INT4, "22P02"), ("32768", INT2, "22003"), ("2024-02-30", DATE, "22008"), ("a\x00b", TEXT, "22021")],
)
def test_parse_text_errors(text: str, typ: SqlType, state: str) -> None:
    with pytest.raises(SqlError) as e:
        parse_text(text, typ)
    assert e.value.sqlstate == state


def test_casts_follow_postgres_rounding() -> None:
    assert cast_value(2.5, FLOAT8, INT4) == 2  # rint: half to even
    assert cast_value(Decimal("2.5"), NUMERIC, INT4) == 3  # numeric: half away from zero
    assert cast_value(Decimal("1.005"), NUMERIC, SqlType("numeric", numeric_typmod(5, 2))) == Decimal("1.01")
    with pytest.raises(SqlError) as e:
        cast_value(Decimal("1000"), NUMERIC, SqlType("numeric", numeric_typmod(4, 2)))
    assert e.value.sqlstate == "22003"


def test_interval_text_round_trip() -> None:
    iv = parse_interval("1 year 2 months 3 days 04:05:06.5")
    assert to_text(iv, SqlType("interval")) == "1 year 2 mons 3 days 04:05:06.5"
