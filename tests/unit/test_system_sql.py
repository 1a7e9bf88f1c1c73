"""SystemHandler and the catalog-query rewrite, driven through the coordinator in-process
(no Spark: catalog queries and utility statements never start it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from server.api import Prepared, RowsResult
from server.coordinator import Coordinator
from server.system import RegValue
from server.system_sql_ast import parse_pg
from server.system_sql_functions import _verify
from sql.errors import SqlError
from sql.types import SqlType


@pytest.fixture(scope="module")
def coord(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Coordinator]:
    c = Coordinator(str(tmp_path_factory.mktemp("sys") / "data"))
    s = c.new_session("materialize", "materialize", {})
    for sql in ("CREATE TABLE t (a int PRIMARY KEY, b text NOT NULL, c varchar(10))", "CREATE VIEW v AS SELECT a FROM t"):
        c.execute(s, c.prepare(s, sql, []), [])
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def session(coord: Coordinator) -> Any:
    s = coord.new_session("materialize", "materialize", {})
    yield s
    coord.end_session(s)


def system(coord: Coordinator, session: Any, sql: str, types: list[SqlType | None] | None = None) -> Prepared | None:
    return coord.system.prepare(session, sql, types or [])


def rows(coord: Coordinator, session: Any, sql: str, params: list[Any] | None = None,
         types: list[SqlType | None] | None = None) -> list[tuple[Any, ...]]:
    p = coord.prepare(session, sql, types or [None] * len(params or []))
    r = coord.execute(session, p, params or [])
    assert isinstance(r, RowsResult)
    return [row for batch in r.batches for row in batch]


def test_detection(coord: Coordinator, session: Any) -> None:
    assert system(coord, session, "SELECT 1") is None
    assert system(coord, session, "SELECT a FROM t") is None
    assert system(coord, session, "SELECT * FROM t, pg_class") is None  # mixed: the planner's
    assert system(coord, session, "INSERT INTO t VALUES (1, 'x', 'y')") is None
    for sql in ("SELECT version()", "SELECT * FROM pg_class", "SELECT * FROM pg_catalog.pg_type",
                "SELECT 'pg_class'::regclass", "select current_user", "WITH x AS (SELECT 1 FROM mz_tables) SELECT * FROM x",
                "SELECT * FROM information_schema.tables", "SELECT * FROM pg_get_keywords()"):
        assert system(coord, session, sql) is not None, sql


def test_column_and_parameter_types(coord: Coordinator, session: Any) -> None:
    p = system(coord, session, "SELECT c.oid, c.relname, c.relkind, c.oid::regclass, i.indkey, c.relacl, count(*) OVER () "
                               "FROM pg_class c LEFT JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = $1 "
                               "AND c.relnamespace = $2 LIMIT $3")
    assert p is not None and p.columns is not None
    assert [(c.name, c.type.name) for c in p.columns] == [
        ("oid", "oid"), ("relname", "name"), ("relkind", "char"), ("oid", "regclass"), ("indkey", "int2vector"),
        ("relacl", "_aclitem"), ("count", "int8")]
    assert [t.name for t in p.param_types] == ["name", "oid", "int8"]
    declared = system(coord, session, "SELECT relname FROM pg_class WHERE oid = $1", [SqlType("int4")])
    assert declared is not None and declared.param_types == (SqlType("int4"),)
    star = system(coord, session, "SELECT * FROM pg_namespace")
    assert star is not None and [c.name for c in star.columns or ()] == ["oid", "nspname", "nspowner", "nspacl"]
    assert system(coord, session, "SELECT $1::regclass, ARRAY(SELECT oid FROM pg_type LIMIT 2), 'a' || relname "
                                  "FROM pg_class").param_types == (SqlType("regclass"),)


def test_values(coord: Coordinator, session: Any) -> None:
    t_oid = coord.catalog.get_item("public", "t").oid
    assert rows(coord, session, "SELECT relname, relkind, relnatts FROM pg_class WHERE relname = $1", ["t"]) == [("t", "r", 3)]
    (reg,), = rows(coord, session, "SELECT 't'::regclass")
    assert isinstance(reg, RegValue) and int(reg) == t_oid and str(reg) == "t"
    (reg2,), = rows(coord, session, "SELECT $1::regclass::oid", ["public.t"])
    assert reg2 == t_oid
    assert rows(coord, session, "SELECT indkey, indkey::text, indkey[0] FROM pg_index WHERE indrelid = 't'::regclass") == [([1], "1", 1)]
    assert rows(coord, session, "SELECT conkey, conkey::text, conkey[1] FROM pg_constraint WHERE conrelid = 't'::regclass") == [([1], "{1}", 1)]
    assert rows(coord, session, "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
                                "WHERE attrelid = 't'::regclass AND attnum > 0 ORDER BY attnum") == [
        ("a", "integer"), ("b", "text"), ("c", "character varying(10)")]
    assert rows(coord, session, "SELECT current_user, current_schema(), current_database(), pg_backend_pid()") == [
        ("materialize", "public", "materialize", session.pid)]
    assert rows(coord, session, "SELECT current_schemas(true), current_schemas(false)") == [
        (["mz_catalog", "pg_catalog", "public"], ["public"])]
    assert rows(coord, session, "SELECT n FROM generate_series(1, 3) n, pg_namespace WHERE nspname = 'public'") == [(1,), (2,), (3,)]
    assert rows(coord, session, "SELECT relname FROM pg_class WHERE relname OPERATOR(pg_catalog.~) '^(v)$' "
                                "COLLATE pg_catalog.default AND pg_table_is_visible(oid)") == [("v",)]
    assert rows(coord, session, "SELECT format('%I.%I', 'public', 'My Table'), quote_ident('select') FROM pg_database") == [
        ('public."My Table"', '"select"')]
    assert rows(coord, session, "SELECT xmin, tableoid::regclass::text FROM pg_namespace WHERE nspname = 'public'") == [(0, "pg_namespace")]


def test_session_settings(coord: Coordinator, session: Any) -> None:
    assert rows(coord, session, "SELECT current_setting('application_name')") == [("",)]
    session.set("application_name", "tool")
    assert rows(coord, session, "SELECT current_setting('application_name')") == [("tool",)]  # not a stale cache
    assert rows(coord, session, "SELECT setting FROM pg_settings WHERE name = 'application_name'") == [("tool",)]
    assert rows(coord, session, "SELECT current_setting('max_identifier_length'), current_setting('nope', true)") == [("63", None)]
    with pytest.raises(SqlError) as info:
        rows(coord, session, "SELECT current_setting('enable_external_access')")
    assert info.value.sqlstate == "42704"
    rows(coord, session, "SELECT set_config('application_name', 'set-by-function', false)")
    assert session.get("application_name") == "set-by-function"


def test_catalog_changes_invalidate_caches(coord: Coordinator, session: Any) -> None:
    sql = "SELECT count(*) FROM pg_class WHERE relname = 'later'"
    assert rows(coord, session, sql) == [(0,)]
    coord.execute(session, coord.prepare(session, "CREATE TABLE later (x int)", []), [])
    assert rows(coord, session, sql) == [(1,)]
    reg = "SELECT 'later'::regclass::oid"
    first = rows(coord, session, reg)
    coord.execute(session, coord.prepare(session, "DROP TABLE later", []), [])
    coord.execute(session, coord.prepare(session, "CREATE TABLE later (x int, y int)", []), [])
    assert rows(coord, session, reg) != first  # the rewrite resolved the name again
    assert rows(coord, session, "SELECT relnatts FROM pg_class WHERE relname = 'later'") == [(2,)]
    sysdb = coord.catalog.system_db()
    q = "SELECT count(*) FROM mz_internal.mz_compute_operator_hydration_statuses"
    assert rows(coord, session, q) == [(0,)]
    sysdb.set_operator_hydration("u99", "u1", [(0, 0, True)])
    assert rows(coord, session, q) == [(1,)]
    sysdb.drop_introspection("u99")
    assert rows(coord, session, q) == [(0,)]


def test_errors(coord: Coordinator, session: Any) -> None:
    cases = {
        "SELECT nosuchfunction(1) FROM pg_class": "42883",
        "SELECT * FROM pg_catalog.pg_nosuch": "42P01",
        "SELECT nosuchcolumn FROM pg_class": "42703",
        "SELECT x.relname FROM pg_class c": "42P01",
        "SELECT 'nosuch'::regclass": "42P01",
        "SELECT 'nosuch'::regtype": "42704",
        "SELECT 1::nosuchtype FROM pg_class": "42704",
        "SELECT * FROM pg_class, read_csv('/etc/passwd')": "42883",
        "SELECT getenv('HOME') FROM pg_class": "42883",
        "SELECT * FROM pg_class FOR UPDATE": "0A000",
    }
    for sql, state in cases.items():
        with pytest.raises(SqlError) as info:
            rows(coord, session, sql)
        assert info.value.sqlstate == state, (sql, info.value)


def test_whitelist_of_the_rewritten_tree() -> None:
    ok = sqlglot.parse_one("SELECT mzsys.fn.format_type(a, b), list_contains(x, 1) FROM mzsys.pg.pg_class", read="duckdb")
    _verify(ok)
    for bad in ("SELECT read_csv('/etc/passwd')", "SELECT * FROM read_csv('/etc/passwd')", "SELECT getenv('x')",
                "SELECT * FROM other.db.tbl", "SELECT current_setting('threads')"):
        with pytest.raises(SqlError):
            _verify(sqlglot.parse_one(bad, read="duckdb"))


def test_parse_array_casts() -> None:
    ast = parse_pg("SELECT 1 WHERE oid = any($1::oid[]) AND x = ANY('{a}'::pg_catalog.text[])")
    casts = [c.to for c in ast.find_all(exp.Cast)]
    assert len(casts) == 2


def test_cursors_over_catalog_queries(coord: Coordinator, session: Any) -> None:
    coord.execute(session, coord.prepare(session, "BEGIN", []), [])
    coord.execute(session, coord.prepare(session, "DECLARE c CURSOR FOR SELECT nspname FROM pg_namespace ORDER BY nspname", []), [])
    fetch = coord.prepare(session, "FETCH 2 FROM c", [])
    assert fetch.columns is not None and fetch.columns[0].name == "nspname"
    assert rows(coord, session, "FETCH 2 FROM c") == [("information_schema",), ("mz_catalog",)]
    assert rows(coord, session, "FETCH ALL FROM c") == [("mz_internal",), ("mz_introspection",), ("pg_catalog",), ("public",)]
    coord.execute(session, coord.prepare(session, "COMMIT", []), [])
    with pytest.raises(SqlError) as info:
        rows(coord, session, "FETCH 1 FROM c")
    assert info.value.sqlstate == "34000"


def test_no_spark(coord: Coordinator) -> None:
    assert coord.compute.current is None, "catalog queries and utility statements must not start Spark"


def test_relation_rows_for_the_planner(coord: Coordinator, session: Any) -> None:
    columns, data = coord.system.relation_rows(session, ("pg_namespace",))
    assert [c for c, _ in columns] == ["oid", "nspname", "nspowner", "nspacl"]
    assert ("public" in {r[1] for r in data}) and all(len(r) == 4 for r in data)
    columns, data = coord.system.relation_rows(session, ("mz_catalog", "mz_tables"))
    assert ("t" in {r[3] for r in data}) and columns[1] == ("oid", SqlType("oid"))
    assert coord.system.relation_rows(session, ("t",)) is None  # a user table
    assert coord.system.relation_rows(session, ("pg_catalog", "nope")) is None
    columns, data = coord.system.relation_rows(session, ("pg_settings",))
    assert any(r[0] == "application_name" for r in data)


QUANTIFIED = [
    "SELECT count(*) FROM pg_catalog.pg_type WHERE typname <> ALL ('{int4,text}')",
    "SELECT typname FROM pg_catalog.pg_type WHERE typname = ANY ('{int4,text}') ORDER BY 1",
    "SELECT count(*) FROM pg_catalog.pg_type WHERE oid = ANY ('{23,25}')",
    "SELECT count(*) FROM pg_catalog.pg_type WHERE typname <> ALL (SELECT 'int4')",
    "SELECT count(*) FROM pg_catalog.pg_type WHERE typname = ANY (SELECT 'int4')",
    "SELECT 'x' <> ALL (ARRAY['a', NULL]), 'a' <> ALL (ARRAY['a', NULL]), 'x' < ANY ('{}'), 'x' < ALL ('{}'),"
    " 'b' > ANY ('{a,NULL}'), 'a' > ANY (NULL::text[]), 'b' <> ALL ('{a,c}') FROM pg_catalog.pg_type WHERE typname = 'int4'",
]


def test_quantified_comparisons_with_arrays_like_postgres(coord: Coordinator, session: Any) -> None:
    """`x op ALL | ANY (array)` in catalog queries (tools send `<> ALL ('{…}')` with an
    unknown-typed array literal): PostgreSQL's three-valued answers, compared with PostgreSQL
    15 over the types both catalogs have (was: 42883 `function all(unknown)`, and a DuckDB
    conversion error for `= ANY ('{…}')`)."""
    import psycopg

    from tests.pgref import reference_postgres

    with reference_postgres("quantified-") as dsn, psycopg.connect(dsn, autocommit=True) as pg:
        names = [r[0] for r in pg.execute("SELECT typname FROM pg_type").fetchall()]
        ours = {r[0] for r in rows(coord, session, "SELECT typname FROM pg_catalog.pg_type")}
        common = sorted(set(names) & ours)
        for q in QUANTIFIED:
            # the counts over the types both catalogs list
            restricted = q.replace("FROM pg_catalog.pg_type WHERE", "FROM pg_catalog.pg_type WHERE typname IN ("
                                   + ", ".join(f"'{n}'" for n in common) + ") AND")
            assert rows(coord, session, restricted) == [tuple(r) for r in pg.execute(restricted).fetchall()], q
        # `= ANY ((SELECT …))` (extra parentheses) is still the subquery form; `((SELECT
        # ARRAY[…]))` compares with the array as a value: PostgreSQL's answer or SQLSTATE
        # (was: DuckDB's binder message, 42883)
        for q in ("SELECT 1 = ANY ((SELECT 1))", "SELECT 'x' = ANY ((SELECT 'x'))", "SELECT 1 <> ALL ((SELECT 1))",
                  "SELECT 1 = ANY ((SELECT ARRAY[1]))", "SELECT 1 < ANY ((SELECT ARRAY[2]))"):
            q += " FROM pg_catalog.pg_type WHERE typname = 'int4'"
            try:
                theirs: Any = [tuple(r) for r in pg.execute(q).fetchall()]
            except psycopg.Error as e:
                theirs = e.sqlstate
            try:
                ours_: Any = rows(coord, session, q)
            except SqlError as e:
                ours_ = e.sqlstate
            assert ours_ == theirs, q


PARSE_IDENT = [' first . "  second  " ."   third   ". "  ' + "x" * 66 + '"', "a.b", '  "Some""S" . someTable ', "a.b x", "a.", ".a", '""', '"abc', "ÄbC.d$1", "x.y.z", "", "  ", "1abc", "a . b"]


def test_parse_ident_like_postgres(coord: Coordinator, session: Any) -> None:
    """parse_ident(text [, strict]) in catalog queries (tools send it): PostgreSQL 15's parts
    or its SQLSTATE, strict and not (was: 42883)."""
    import psycopg

    from tests.pgref import reference_postgres

    def ours(sql: str, arg: str) -> Any:
        try:
            return rows(coord, session, sql, [arg], [SqlType("text")])
        except SqlError as e:
            return e.sqlstate

    def theirs(pg: Any, sql: str, arg: str) -> Any:
        try:
            return [tuple(r) for r in pg.execute(sql.replace("$1", "%s"), [arg]).fetchall()]
        except psycopg.Error as e:
            return e.sqlstate

    with reference_postgres("ident-") as dsn, psycopg.connect(dsn, autocommit=True) as pg:
        for text in PARSE_IDENT:
            for sql in ("SELECT parse_ident($1) FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog'",
                        # a name keeps at most 63 bytes
                        "SELECT parse_ident($1)::name[] FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog'",
                        "SELECT parse_ident($1, false) FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog'",
                        # a parameter already typed text, cast to name, is cut to 63 bytes too
                        "SELECT $1::name FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog'"):
                assert ours(sql, text) == theirs(pg, sql, text), (sql, text)
