"""The sqllogictest runner's parser, value formatting, hashing and record logic (no server)."""

from __future__ import annotations

import hashlib

import pytest

from tests.slt.parser import ParseError, parse_text
from tests.slt.runner import (
    DEFAULT_ENGINES,
    DbError,
    QueryResult,
    RunOptions,
    check_query,
    format_table,
    format_value,
    hash_values,
    run_records,
)

INT4, NUMERIC, FLOAT8, TEXT, BOOL = 23, 1700, 701, 25, 16


def test_parse_records_conditions_and_results() -> None:
    text = (
        "# comment\r\n"
        "hash-threshold 8\r\n"
        "\r\n"
        "statement ok\r\n"
        "CREATE TABLE t1(a INTEGER,\r\n"
        "  b INTEGER)\r\n"
        "\r\n"
        "skipif mssql  # not compatible\n"
        "onlyif sqlite\n"
        "statement error\n"
        "SELECT nope\n"
        "\n"
        "query IT rowsort label-7\n"
        "SELECT a, b\n"
        "FROM t1\n"
        "----\n"
        "1\n"
        "x\n"
        "\n"
        "query I valuesort\n"
        "SELECT a FROM t1\n"
        "----\n"
        "30 values hashing to 0123456789abcdef0123456789abcdef\n"
        "\n"
        "statement count 3\n"
        "DELETE FROM t1\n"
        "\n"
        "query T multiline\n"
        "SELECT E'a\\n\\nb'\n"
        "----\n"
        "a\n"
        "\n"
        "b\n"
        "EOF\n"
        "\n"
        "mode cockroach\n"
        "\n"
        "halt\n"
    )
    recs = parse_text(text)
    kinds = [r.kind for r in recs]
    assert kinds == ["hash-threshold", "statement", "statement", "query", "query", "statement", "query", "mode", "halt"]
    ht, create, err, q1, q2, cnt, ml, mode, _ = recs
    assert ht.arg == "8"
    assert create.sql == "CREATE TABLE t1(a INTEGER,\n  b INTEGER)" and create.line == 4 and create.sql_line == 5
    assert err.conditions == [("skipif", "mssql"), ("onlyif", "sqlite")] and err.expect == "error"
    assert err.line == 8 and err.skipped_for(DEFAULT_ENGINES)
    assert (q1.types, q1.sort, q1.label, q1.expected_lines) == ("IT", "rowsort", "label-7", ["1", "x"])
    assert q1.sql == "SELECT a, b\nFROM t1"
    assert (q2.sort, q2.hash_count, q2.hash_value) == ("valuesort", 30, "0123456789abcdef0123456789abcdef")
    assert (cnt.expect, cnt.count) == ("count", 3)
    # a multiline result runs up to EOF, blank lines included
    assert ml.multiline and ml.expected_lines == ["a", "", "b"]
    assert mode.arg == "cockroach"


def test_conditions_engine_names() -> None:
    (r,) = parse_text("skipif postgresql\nstatement ok\nSELECT 1\n")
    assert r.skipped_for(DEFAULT_ENGINES)
    (r,) = parse_text("onlyif postgresql\nstatement ok\nSELECT 1\n")
    assert not r.skipped_for(DEFAULT_ENGINES)
    (r,) = parse_text("onlyif materialize\nstatement ok\nSELECT 1\n")
    assert not r.skipped_for(DEFAULT_ENGINES)
    for other in ("sqlite", "mysql", "mssql", "oracle"):
        (r,) = parse_text(f"onlyif {other}\nstatement ok\nSELECT 1\n")
        assert r.skipped_for(DEFAULT_ENGINES)
        (r,) = parse_text(f"skipif {other}\nstatement ok\nSELECT 1\n")
        assert not r.skipped_for(DEFAULT_ENGINES)


def test_parse_errors() -> None:
    with pytest.raises(ParseError):
        parse_text("frobnicate\nSELECT 1\n")
    with pytest.raises(ParseError):
        parse_text("skipif mysql\n\nstatement ok\nSELECT 1\n")


@pytest.mark.parametrize(
    ("value", "t", "oid", "out"),
    [
        (None, "I", INT4, "NULL"),
        (None, "T", TEXT, "NULL"),
        ("42", "I", INT4, "42"),
        ("-7", "I", INT4, "-7"),
        ("2.7", "I", NUMERIC, "2"),  # truncation toward zero, like sqlite3_column_int64
        ("-2.7", "I", NUMERIC, "-2"),
        ("1e+20", "I", FLOAT8, "100000000000000000000"),
        ("t", "I", BOOL, "1"),
        ("f", "I", BOOL, "0"),
        ("12abc", "I", TEXT, "12"),
        ("abc", "I", TEXT, "0"),
        ("1", "R", INT4, "1.000"),
        ("2.34567", "R", NUMERIC, "2.346"),
        ("-0.5", "R", FLOAT8, "-0.500"),
        ("", "T", TEXT, "(empty)"),
        ("a b", "T", TEXT, "a b"),
        ("tab\there", "T", TEXT, "tab@here"),
        ("é", "T", TEXT, "@"),
        ("17", "T", INT4, "17"),
    ],
)
def test_format_value(value: str | None, t: str, oid: int, out: str) -> None:
    assert format_value(value, t, oid) == out


def test_hash_matches_reference_definition() -> None:
    values = ["1", "NULL", "(empty)"]
    assert hash_values(values) == hashlib.md5(b"1\nNULL\n(empty)\n").hexdigest()


def _q(text: str):
    (r,) = parse_text(text)
    return r


def test_check_query_sorting_and_hashing() -> None:
    res = QueryResult([INT4, INT4], [("2", "1"), ("1", "9"), ("10", None)], 3)
    assert check_query(_q("query II rowsort\nq\n----\n1\n9\n10\nNULL\n2\n1\n"), res, "standard") is None
    assert check_query(_q("query II valuesort\nq\n----\n1\n1\n10\n2\n9\nNULL\n"), res, "standard") is None
    # nosort keeps the server's order
    assert check_query(_q("query II nosort\nq\n----\n1\n9\n2\n1\n10\nNULL\n"), res, "standard") is not None
    h = hash_values(["1", "9", "10", "NULL", "2", "1"])
    assert check_query(_q(f"query II rowsort\nq\n----\n6 values hashing to {h}\n"), res, "standard") is None
    bad = check_query(_q(f"query II nosort\nq\n----\n6 values hashing to {h}\n"), res, "standard")
    assert bad is not None and bad.startswith("6 values hashing to ")
    # the number of columns must match the type string
    assert "wrong number of columns" in (check_query(_q("query I rowsort\nq\n----\n1\n"), res, "standard") or "")
    # cockroach mode: one row per line
    assert check_query(_q("query II rowsort\nq\n----\n1 9\n10 NULL\n2 1\n"), res, "cockroach") is None


class FakeConn:
    """Answers from a dict: sql -> QueryResult | DbError."""

    def __init__(self, answers: dict[str, QueryResult | DbError]) -> None:
        self.answers = answers
        self.executed: list[str] = []
        self.broken = False

    def execute(self, sql: str) -> QueryResult:
        self.executed.append(sql)
        a = self.answers.get(sql, QueryResult([], [], 0))
        if isinstance(a, DbError):
            raise a
        return a

    def close(self) -> None:
        pass


def test_run_records_counts_and_failures() -> None:
    text = (
        "statement ok\nCREATE TABLE t(a int)\n\n"
        "statement error\nBAD\n\n"
        "statement error\nGOOD\n\n"
        "onlyif mysql\nquery I nosort\nSELECT 1\n----\n1\n\n"
        "query I nosort label-1\nSELECT a FROM t\n----\n1\n\n"
        "query I nosort label-1\nSELECT 2\n----\n2\n\n"
        "query I nosort\nSELECT broken\n----\n1\n\n"
        "skipif sqlite\nhalt\n\n"
        "query I nosort\nNEVER RUN\n----\n1\n"
    )
    conn = FakeConn({
        "BAD": DbError("42601", "syntax error"),
        "SELECT a FROM t": QueryResult([INT4], [("1",)], 1),
        "SELECT 2": QueryResult([INT4], [("2",)], 1),
        "SELECT broken": DbError("42703", 'column "broken" does not exist'),
    })
    res = run_records(parse_text(text), lambda: conn, "x.test", RunOptions())  # type: ignore[arg-type,return-value]
    assert (res.passed, res.failed, res.skipped) == (3, 3, 1)
    assert res.failed_lines == {7: "no error", 21: "label mismatch", 26: "42703"}
    assert res.error_states == {4: "42601", 26: "42703"}
    assert res.skipped_lines == [10]
    assert "NEVER RUN" not in conn.executed
    # --limit counts statement/query records, skipped ones included
    res = run_records(parse_text(text), lambda: FakeConn({}), "x.test", RunOptions(limit=2))  # type: ignore[arg-type,return-value]
    assert res.passed + res.failed + res.skipped == 2
    table = format_table([res], compare_pg=False)
    assert "x.test" in table and "total" in table


def test_reconnect_resumes_the_schema_without_recreating_it() -> None:
    class Setup:
        def __init__(self) -> None:
            self.calls: list[str] = []

        def __call__(self, conn: FakeConn) -> None:
            self.calls.append("setup")

        def resume(self, conn: FakeConn) -> None:
            self.calls.append("resume")

        def teardown(self, conn: FakeConn) -> None:
            self.calls.append("teardown")

    conns: list[FakeConn] = []

    def factory() -> FakeConn:
        c = FakeConn({"SELECT crash": DbError("08006", "server closed the connection")})
        orig = c.execute

        def execute(sql: str) -> QueryResult:
            if sql == "SELECT crash":
                c.broken = True
            return orig(sql)

        c.execute = execute  # type: ignore[method-assign]
        conns.append(c)
        return c

    setup = Setup()
    text = "statement ok\nSELECT crash\n\nstatement ok\nSELECT 1\n"
    res = run_records(parse_text(text), factory, "x.test", RunOptions(), setup=setup)  # type: ignore[arg-type]
    assert (res.passed, res.failed) == (1, 1)
    assert len(conns) == 2 and conns[1].executed == ["SELECT 1"]
    assert setup.calls == ["setup", "resume", "teardown"]


def test_query_sampling_runs_every_statement() -> None:
    text = "".join(
        f"statement ok\nS{i}\n\nquery I nosort\nQ{i}\n----\n\n" for i in range(6)
    )
    conn = FakeConn({f"Q{i}": QueryResult([INT4], [], 0) for i in range(6)})
    res = run_records(parse_text(text), lambda: conn, "x.test", RunOptions(query_every=4))  # type: ignore[arg-type,return-value]
    assert conn.executed == ["S0", "Q0", "S1", "S2", "S3", "S4", "Q4", "S5"]
    assert (res.passed, res.failed, res.skipped) == (8, 0, 0)
