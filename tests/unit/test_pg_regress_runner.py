"""The pg_regress runner's pure parts: psql-style splitting, n/a rules, result comparison
and classification (no servers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pg_regress.classify import (
    Cls,
    Outcome,
    classify,
    compare_rows,
    created_name,
    key_columns,
    order_by_keys,
    static_na,
)
from tests.pg_regress.runner import _setting_name, written_tables
from tests.pg_regress.setup_adapt import SetupAdapter
from tests.pg_regress.splitter import Meta, Statement, split_script

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "pg_regress" / "sql"


def _split(text: str, variables: dict[str, str] | None = None) -> list[Statement | Meta]:
    v = variables if variables is not None else {}
    out = []
    for it in split_script(text, v):
        if isinstance(it, Meta) and it.command == "\\set":
            v[it.args[0]] = "".join(it.args[1:])
        out.append(it)
    return out


def test_split_respects_quotes_comments_and_dollar_quotes() -> None:
    text = (
        "SELECT 'a;b' AS x; -- c;d\n"
        "SELECT E'\\';' , \"q;\"; /* x; /* nested; */ y; */ SELECT 3;\n"
        "CREATE FUNCTION f() RETURNS int AS $body$ select 1; $body$ LANGUAGE sql;\n"
        "SELECT $$a;b$$, 1::int;\n"
    )
    sts = [s.sql for s in _split(text) if isinstance(s, Statement)]
    assert sts == [
        "SELECT 'a;b' AS x",
        "SELECT E'\\';' , \"q;\"",
        "SELECT 3",
        "CREATE FUNCTION f() RETURNS int AS $body$ select 1; $body$ LANGUAGE sql",
        "SELECT $$a;b$$, 1::int",
    ]


def test_split_line_numbers_and_meta_commands() -> None:
    text = "-- header\n\nSELECT 1;\n\\d+ foo\nSELECT\n  2;\n"
    items = _split(text)
    assert [(type(i).__name__, i.line) for i in items] == [("Statement", 3), ("Meta", 4), ("Statement", 5)]
    assert isinstance(items[1], Meta) and items[1].command == "\\d+" and items[1].args == ["foo"]


def test_split_backslash_in_literal_is_not_meta() -> None:
    sts = _split("SELECT '\\x' || 'a';\nSELECT 2;\n")
    assert [s.sql for s in sts if isinstance(s, Statement)] == ["SELECT '\\x' || 'a'", "SELECT 2"]


def test_split_psql_variables() -> None:
    text = ("\\set filename :abs_srcdir '/data/onek.data'\nCOPY onek FROM :'filename';\n"
            "\\set q 'select 1; select 2'\n:q;\nSELECT a::int, x[1:2] FROM t;\n")
    sts = [s for s in _split(text, {"abs_srcdir": "/src"}) if isinstance(s, Statement)]
    assert [s.sql for s in sts] == ["COPY onek FROM '/src/data/onek.data'", "select 1", "select 2",
                                    "SELECT a::int, x[1:2] FROM t"]
    assert sts[1].line == 4


def test_split_copy_from_stdin_takes_inline_data() -> None:
    text = "COPY t FROM stdin;\n1\tx\n2\t\\N\n\\.\nSELECT 1;\n"
    sts = _split(text)
    assert isinstance(sts[0], Statement) and sts[0].copy_data == "1\tx\n2\t\\N\n"
    assert isinstance(sts[1], Statement) and sts[1].sql == "SELECT 1" and sts[1].line == 5


def test_split_whole_corpus_counts() -> None:
    """Every script splits; each COPY FROM STDIN found its data (10 in the corpus). The corpus
    is ../shared/pg_regress beside the checkout, as CI has it: missing is a failure."""
    assert CORPUS.is_dir(), f"{CORPUS} is missing"
    total = copies = 0
    for f in sorted(CORPUS.glob("*.sql")):
        items = _split(f.read_text(), {"abs_srcdir": "/x", "libdir": "/l", "dlsuffix": ".so"})
        sts = [i for i in items if isinstance(i, Statement)]
        total += len(sts)
        copies += sum(s.copy_data is not None for s in sts)
    assert copies == 10
    assert 9000 < total < 10000


@pytest.mark.parametrize("sql,reason", [
    ("EXPLAIN (costs off) SELECT 1", "EXPLAIN"),
    ("CREATE FUNCTION f() RETURNS int AS $$ select 1 $$ LANGUAGE sql", "DDL outside"),
    ("create or replace function f() returns int", "DDL outside"),
    ("CREATE TYPE stoplight AS ENUM ('red')", "DDL outside"),
    ("CREATE DOMAIN d AS int", "DDL outside"),
    ("CREATE TABLE c (x int) INHERITS (p)", "inheritance"),
    ("CREATE TABLE c (x int PRIMARY KEY)", "constraints"),
    ("CREATE TABLE t2 AS SELECT 1", "CREATE TABLE AS"),
    ("SELECT * INTO t2 FROM t", "SELECT INTO"),
    ("ALTER TABLE t ADD COLUMN y int", "ALTER TABLE"),
    ("VACUUM ANALYZE onek", "maintenance"),
    ("SET enable_hashjoin TO off", "PostgreSQL-only SET"),
    ("SAVEPOINT a", "savepoints"),
    ("INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING", "ON CONFLICT"),
    ("CREATE UNIQUE INDEX i ON t (a)", "index kinds"),
    ("with recursive t as (select 1 as x union all select x + 1 from t) search depth first by x set y select * from t",
     "SEARCH / CYCLE"),
    ("with recursive t(f, t) as (select 1, 2 union all select 1, 2 from t) cycle f, t set c to 'Y' default 'N' "
     "using p select * from t", "SEARCH / CYCLE"),
    ("create temp view v as with recursive t(f) as (select 1) cycle f set c using p select f from t", "CYCLE"),
    ("WITH t AS (INSERT INTO y VALUES (1) RETURNING *) SELECT * FROM t", "data-modifying"),
    ("WITH t AS MATERIALIZED ( DELETE FROM y RETURNING *) SELECT 1", "data-modifying"),
    ("SELECT float8_regr_combine('{3,60,200}'::float8[], '{0,0,0}'::float8[])", "aggregate support"),
    ("SELECT booland_statefunc(NULL, NULL) IS NULL AS t", "aggregate support"),
])
def test_static_na(sql: str, reason: str) -> None:
    got = static_na(sql)
    assert got is not None and reason.lower() in got.lower()


@pytest.mark.parametrize("sql", [
    "SELECT 1", "CREATE TABLE t (a int, b text)", "CREATE TEMP TABLE t (a int)", "SET TimeZone TO 'UTC'",
    "SET search_path = x", "ALTER TABLE t RENAME TO u", "CREATE INDEX i ON t (a)", "CREATE VIEW v AS SELECT 1",
    "INSERT INTO t SELECT * FROM u", "BEGIN", "ROLLBACK", "SELECT 'for update'", "DELETE FROM t WHERE a = 1",
    "SELECT * FROM t FOR UPDATE", "update t set a = 1",
    "WITH t AS (SELECT a FROM y) INSERT INTO y SELECT a + 20 FROM t", "WITH search AS (SELECT 1) SELECT * FROM search",
    "WITH RECURSIVE t(cycle) AS (SELECT 1 UNION ALL SELECT cycle + 1 FROM t WHERE cycle < 3) SELECT * FROM t",
    "SELECT my_accum FROM float8_accum_tbl", "SELECT bool_and(b), bool_or(b) FROM t",
])
def test_static_in_surface(sql: str) -> None:
    expected_na = "for update" in sql.lower() and not sql.startswith("SELECT 'for")
    assert (static_na(sql) is not None) == expected_na


def test_order_by_keys_top_level_only() -> None:
    assert order_by_keys("SELECT a FROM t") is None
    assert order_by_keys("SELECT string_agg(a ORDER BY a) FROM t") is None
    assert order_by_keys("SELECT * FROM (SELECT a FROM t ORDER BY a) s") is None
    assert order_by_keys("SELECT a, b FROM t ORDER BY a DESC, 2 NULLS FIRST LIMIT 3") == ["a", "2"]
    assert order_by_keys("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1") == ["1"]
    assert order_by_keys("SELECT a FROM t ORDER BY t.a using >") == ["t.a"]
    assert order_by_keys("SELECT 'order by x' FROM t") is None


def test_key_columns() -> None:
    assert key_columns(["a", "2"], ("a", "b")) == [0, 1]
    assert key_columns(["t.B"], ("a", "b")) == [1]
    assert key_columns(["a + 1"], ("a", "b")) is None


def _rows(*rows: tuple) -> Outcome:
    return Outcome(True, ("k", "v"), tuple(rows), len(rows), has_rows=True)


def test_compare_rows_order_and_ties() -> None:
    a = _rows(("1", "x"), ("1", "y"), ("2", "z"))
    b = _rows(("1", "y"), ("1", "x"), ("2", "z"))
    assert compare_rows("SELECT k, v FROM t", a, b) is None  # no ORDER BY: multisets
    assert compare_rows("SELECT k, v FROM t ORDER BY k", a, b) is None  # ties on k may permute
    assert compare_rows("SELECT k, v FROM t ORDER BY k, v", a, b) == "order"
    c = _rows(("2", "z"), ("1", "x"), ("1", "y"))
    assert compare_rows("SELECT k, v FROM t ORDER BY k", a, c) == "order"
    assert compare_rows("SELECT k, v FROM t", a, _rows(("1", "x"))) == "row count 3 vs 1"
    assert compare_rows("SELECT k, v FROM t", a, _rows(("1", "x"), ("1", "y"), ("2", None))) == "rows differ"
    one = Outcome(True, ("k",), (("1",),), 1, has_rows=True)
    assert compare_rows("SELECT 1", one, a) == "column count 1 vs 2"


def _err(state: str, msg: str = "boom", kind: str = "") -> Outcome:
    return Outcome(False, sqlstate=state, message=msg, kind=kind)


def test_classify() -> None:
    ok = _rows(("1", "x"))
    assert classify("SELECT 1", ok, ok).cls is Cls.SAME
    assert classify("SELECT 1", ok, _rows(("2", "x"))).cls is Cls.DIFFERENT
    assert classify("SELECT 1/0", _err("22012"), _err("22003")).cls is Cls.SAME
    assert classify("SELECT 1", _err("22012"), _err("42883")).cls is Cls.OTHER_ERROR
    assert classify("SELECT 1", ok, _err("0A000")).cls is Cls.UNSUPPORTED
    assert classify("SELECT 1", ok, _err("XX000")).cls is Cls.INTERNAL
    assert classify("SELECT 1", ok, _err("42601", "'Identifier' object has no attribute 'parts'")).cls is Cls.INTERNAL
    assert classify("SELECT 1", ok, _err("57014", "canceled", kind="timeout")).cls is Cls.INTERNAL
    assert classify("SELECT 1", _err("22P02"), ok).cls is Cls.MZ_OK_PG_ERROR
    assert classify("SELECT * FROM foo", ok, _err("42P01"), {"foo"}).cls is Cls.BLOCKED
    assert classify("SELECT 1", _err("25P02"), ok).cls is Cls.BLOCKED
    # an object named like a SQL word does not block every statement using the word
    assert classify("SELECT sum(x) OVER (ROWS 1 PRECEDING)", ok, _err("42P01"), {"rows"}).cls is Cls.OTHER_ERROR
    assert classify("SELECT random()", ok, _rows(("9", "x"))).cls is Cls.NA
    assert classify("SELECT * FROM a_star", _err("42P01", 'relation "a_star" does not exist'), _err("42P01")).cls is Cls.NA
    # PostgreSQL messages are not mistaken for leaks
    assert classify("SELECT 1", ok, _err("22012", "division by zero")).cls is Cls.OTHER_ERROR


def test_created_and_written_names() -> None:
    assert created_name("CREATE TEMP TABLE Foo (a int)") == "foo"
    assert created_name("create or replace view public.v as select 1") == "v"
    assert created_name("CREATE INDEX ON t (a)") is None
    assert created_name("create operator class c_ops for type int4 using hash as operator 1 =") == "c_ops"
    assert written_tables("INSERT INTO CHAR_TBL (f1) VALUES ('a')") == {"char_tbl"}
    assert written_tables("DROP TABLE IF EXISTS a, b CASCADE") == {"a", "b"}
    assert written_tables("SELECT 1") == set()
    assert written_tables("WITH t AS (INSERT INTO y VALUES (11) RETURNING *) SELECT * FROM t") == {"y"}
    assert written_tables("WITH t1 AS (DELETE FROM bug6051 RETURNING *) INSERT INTO bug_2 SELECT * FROM t1") == {
        "bug6051", "bug_2"}
    assert written_tables("WITH t AS (SELECT 1) SELECT * FROM t") == set()
    assert _setting_name("SET TIME ZONE 'UTC'") == ("timezone", False)
    assert _setting_name("SET LOCAL datestyle = ISO") == ("datestyle", True)
    assert _setting_name("SET TRANSACTION READ ONLY") is None


def test_setup_adaptations() -> None:
    a = SetupAdapter()
    assert a.adapt("CREATE TABLE person (\n\tname\t\ttext,\n\tage\tint4,\n\tlocation\tpoint\n)") == [
        "CREATE TABLE person (name text, age int4, location text)"]
    assert a.adapt("CREATE TABLE emp (salary int4, manager name) INHERITS (person)") == [
        "CREATE TABLE emp (name text, age int4, location text, salary int4, manager text)"]
    assert a.adapt("CREATE TABLE POINT_TBL(f1 point)") == ["CREATE TABLE POINT_TBL(f1 point)"]
    assert a.adapt("CREATE TABLE e2 AS SELECT * FROM emp") == [
        "CREATE TABLE e2 (name text, age int4, location text, salary int4, manager text)",
        "INSERT INTO e2 SELECT * FROM emp"]
    assert a.adapt("INSERT INTO x SELECT * FROM ONLY road") == ["INSERT INTO x SELECT * FROM road"]


class _FakeSession:
    """Answers statements from a map (default: OK); records what it ran."""

    def __init__(self, answers: dict[str, Outcome]) -> None:
        self.answers = answers
        self.ran: list[str] = []
        self.broken = False

    def run(self, sql: str, copy_data: str | None = None) -> Outcome:
        self.ran.append(sql)
        return self.answers.get(sql, Outcome(True, rowcount=0))


def _run_all(stmts: list[str], pg: dict[str, Outcome], mz: dict[str, Outcome]) -> list[Cls]:
    from types import SimpleNamespace

    from tests.pg_regress.runner import run_statement
    from tests.pg_regress.splitter import Statement as St

    pair = SimpleNamespace(pg=_FakeSession(pg), mz=_FakeSession(mz))
    ctx = SimpleNamespace(setup_tables={"int4_tbl": []})
    diverged: set[str] = set()
    dirty: set[str] = set()
    data: set[str] = set()
    out = []
    for i, sql in enumerate(stmts):
        r = run_statement(pair, ctx, "f", St(sql, i + 1), sql, None, diverged, dirty, data)  # type: ignore[arg-type]
        out.append(r.verdict.cls)
    return out


def test_divergence_tracking() -> None:
    ok1 = Outcome(True, ("a",), (("1",),), 1, has_rows=True)
    e42 = Outcome(False, sqlstate="42P01", message='relation "t" does not exist')
    e0a = Outcome(False, sqlstate="0A000", message="CREATE TEMP not yet supported")
    e22 = Outcome(False, sqlstate="22003", message="out of range")
    # a table mzspark could not create blocks the statements using it, not others
    assert _run_all(["CREATE TEMP TABLE t (a int)", "SELECT * FROM t", "SELECT 1 AS a"],
                    {"SELECT * FROM t": ok1, "SELECT 1 AS a": ok1},
                    {"CREATE TEMP TABLE t (a int)": e0a, "SELECT * FROM t": e42, "SELECT 1 AS a": ok1}) == [
        Cls.UNSUPPORTED, Cls.BLOCKED, Cls.SAME]
    # an insert accepted on one side only: later reads are blocked, later INSERT … VALUES are not
    assert _run_all(["INSERT INTO u VALUES (1e400)", "INSERT INTO u VALUES (1e401)", "SELECT * FROM u"],
                    {"INSERT INTO u VALUES (1e400)": e22, "INSERT INTO u VALUES (1e401)": e22, "SELECT * FROM u": ok1},
                    {"SELECT * FROM u": Outcome(True, ("a",), (("1",), ("2",)), 2, has_rows=True)}) == [
        Cls.MZ_OK_PG_ERROR, Cls.MZ_OK_PG_ERROR, Cls.BLOCKED]
    # a table made by a statement outside the comparison blocks differing uses even if both made it
    assert _run_all(["CREATE TABLE p (a int) PARTITION BY RANGE (a)", "INSERT INTO p VALUES (1)"],
                    {"INSERT INTO p VALUES (1)": Outcome(False, sqlstate="23514", message="no partition")}, {}) == [
        Cls.NA, Cls.BLOCKED]
    # a child table outside the comparison (INHERITS) diverges its parent's contents: reads of
    # the parent are blocked (PostgreSQL reads the child's rows through it), inserts are not
    assert _run_all(["create temp table c () inherits (par)", "insert into par values (1)", "select * from par"],
                    {"select * from par": ok1}, {"select * from par": Outcome(True, ("a",), (), 0, has_rows=True)}) == [
        Cls.NA, Cls.SAME, Cls.BLOCKED]


def test_indirectly_written_tables() -> None:
    from tests.pg_regress.classify import indirectly_written

    assert indirectly_written("create temp table t2a () inherits (t2)") == {"t2"}
    assert indirectly_written("CREATE TABLE c (x int) INHERITS (a, public.B)") == {"a", "b"}
    assert indirectly_written("create table p1 partition of p for values in (1)") == {"p"}
    assert indirectly_written("create table t (a int)") == set()
    assert indirectly_written("select 1 from inherits (x)") == set()
    assert indirectly_written("create function f(v compos) returns void as $$\ninsert into compos values (v.*);\n$$ "
                             "language sql") == {"compos"}
    assert indirectly_written("create function g() returns int as $$ select 1 $$ language sql") == set()


def test_setup_table_writes_are_dirty() -> None:
    from types import SimpleNamespace

    from tests.pg_regress.runner import run_statement
    from tests.pg_regress.splitter import Statement as St

    pair = SimpleNamespace(pg=_FakeSession({}), mz=_FakeSession({}))
    ctx = SimpleNamespace(setup_tables={"int4_tbl": []})
    dirty: set[str] = set()
    run_statement(pair, ctx, "f", St("x", 1), "INSERT INTO INT4_TBL VALUES (1)", None, set(), dirty)  # type: ignore[arg-type]
    run_statement(pair, ctx, "f", St("x", 2), "INSERT INTO other VALUES (1)", None, set(), dirty)  # type: ignore[arg-type]
    assert dirty == {"int4_tbl"}


def test_numeric_trailing_zeros_are_a_documented_difference() -> None:
    """Materialize trims numeric trailing zeros; only numeric columns (PostgreSQL's types) are
    compared that way, and a different digit is still a different result."""
    pg = Outcome(True, ("avg", "t"), (("1.5000000000000000", "1.50"),), 1, True, (1700, 25))
    assert classify("SELECT 1", pg, Outcome(True, ("avg", "t"), (("1.5", "1.50"),), 1, True)).cls is Cls.DOCUMENTED
    # a text column keeps its zeros: '1.5' is not '1.50'
    assert classify("SELECT 1", pg, Outcome(True, ("avg", "t"), (("1.5", "1.5"),), 1, True)).cls is Cls.DIFFERENT
    assert classify("SELECT 1", pg, Outcome(True, ("avg", "t"), (("1.6", "1.50"),), 1, True)).cls is Cls.DIFFERENT
    whole = Outcome(True, ("n",), (("2.000",), ("10",)), 2, True, (1700,))
    assert classify("SELECT 1", whole, Outcome(True, ("n",), (("2",), ("10",)), 2, True)).cls is Cls.DOCUMENTED
    assert classify("SELECT 1", whole, Outcome(True, ("n",), (("2",), ("1",)), 2, True)).cls is Cls.DIFFERENT


def test_numeric_trailing_zeros_inside_records_and_arrays() -> None:
    """The same rule inside a record or numeric array (PostgreSQL's type names the column), and
    only for whole decimal elements: a different digit, or zeros inside a text column, differ."""
    rec = Outcome(True, ("q",), (("(4,5,6.0)",), ('("(1,2.50)",-3.00)',)), 2, True, (2249,))
    mz = Outcome(True, ("q",), (("(4,5,6)",), ('("(1,2.5)",-3)',)), 2, True)
    assert classify("SELECT 1", rec, mz).cls is Cls.DOCUMENTED
    assert classify("SELECT 1", rec, Outcome(True, ("q",), (("(4,5,7)",), ('("(1,2.5)",-3)',)), 2, True)).cls \
        is Cls.DIFFERENT
    arr = Outcome(True, ("a",), (("{1.50,2.00,NULL,10,1.05}",),), 1, True, (1231,))
    assert classify("SELECT 1", arr, Outcome(True, ("a",), (("{1.5,2,NULL,10,1.05}",),), 1, True)).cls \
        is Cls.DOCUMENTED
    assert classify("SELECT 1", arr, Outcome(True, ("a",), (("{1.5,2,NULL,1,1.05}",),), 1, True)).cls \
        is Cls.DIFFERENT
    # text[] keeps its elements as written
    txt = Outcome(True, ("a",), (("{1.50}",),), 1, True, (1009,))
    assert classify("SELECT 1", txt, Outcome(True, ("a",), (("{1.5}",),), 1, True)).cls is Cls.DIFFERENT


def test_unordered_array_agg_is_a_documented_difference() -> None:
    """array_agg without an ORDER BY of its own: the element order is unspecified (Materialize
    ignores a subquery's ORDER BY), so arrays equal up to element order are `documented`;
    with an in-aggregate ORDER BY the order must match."""
    from tests.pg_regress.classify import has_unordered_array_agg

    sql = "select array_agg(ten) from (select ten from tenk1 order by unique1) ss"
    pg = Outcome(True, ("array_agg",), (("{0,1,2,NULL}",),), 1, has_rows=True)
    mz = Outcome(True, ("array_agg",), (("{2,NULL,0,1}",),), 1, has_rows=True)
    other = Outcome(True, ("array_agg",), (("{2,2,0,1}",),), 1, has_rows=True)
    assert classify(sql, pg, mz).cls == Cls.DOCUMENTED
    assert classify(sql, pg, other).cls == Cls.DIFFERENT
    ordered = "select array_agg(ten order by unique1) from tenk1"
    assert classify(ordered, pg, mz).cls == Cls.DIFFERENT
    assert has_unordered_array_agg("select array_agg(nullif(ten, 4)) from t")
    assert not has_unordered_array_agg("select array_agg(x order by y), count(*) from t")


def test_json_text_differences_are_documented_only_against_canonical_jsonb() -> None:
    """json is jsonb (Materialize has no text-preserving json type): PostgreSQL's json text
    against mzspark's canonical jsonb text of the same document is documented; a different
    document, or mzspark printing non-canonical jsonb, is not."""
    pg = Outcome(True, ("json",), (('{"b":1,"a":[1,2]}',), ("1e2",)), 2, True, (114,))
    mz = Outcome(True, ("json",), (('{"a": [1, 2], "b": 1}',), ("100",)), 2, True, (3802,))
    assert classify("SELECT j FROM test_json", pg, mz).cls is Cls.DOCUMENTED
    wrong = Outcome(True, ("json",), (('{"a": [1, 2], "b": 2}',), ("100",)), 2, True, (3802,))
    assert classify("SELECT j FROM t", pg, wrong).cls is Cls.DIFFERENT
    pg_jsonb = Outcome(True, ("jsonb",), (('{"a": 1}',),), 1, True, (3802,))
    not_canonical = Outcome(True, ("jsonb",), (('{"a":1}',),), 1, True, (3802,))
    assert classify("SELECT '{\"a\":1}'::jsonb", pg_jsonb, not_canonical).cls is Cls.DIFFERENT
