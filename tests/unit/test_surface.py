"""Materialize's SQL surface through the real coordinator, in-process and without Spark:
EXPLAIN fidelity, SHOW, definitions Materialize refuses, errors that must not be wrong answers.
Expected texts are Materialize's documented output (docs: EXPLAIN PLAN, SHOW ..., mz_now())."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from server.api import RowsResult
from server.coordinator import Coordinator
from sql.errors import SqlError
from sql.types import SqlType


@pytest.fixture(scope="module")
def coord(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Coordinator]:
    c = Coordinator(str(tmp_path_factory.mktemp("surface") / "data"))
    s = c.new_session("materialize", "materialize", {})
    for sql in ("CREATE TABLE t (a int, b int)", "CREATE TABLE u (x int, ts timestamptz)",
                "CREATE VIEW v AS SELECT a FROM t", "CREATE MATERIALIZED VIEW mv AS SELECT a, count(*) AS n FROM t GROUP BY a",
                "CREATE INDEX t_a_idx ON t (a)"):
        c.execute(s, c.prepare(s, sql, []), [])
    c.end_session(s)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def session(coord: Coordinator) -> Iterator[Any]:
    s = coord.new_session("materialize", "materialize", {})
    yield s
    coord.end_session(s)


def run(coord: Coordinator, session: Any, sql: str, params: list[Any] | None = None,
        types: list[SqlType | None] | None = None) -> list[tuple[Any, ...]]:
    p = coord.prepare(session, sql, types or [None] * len(params or []))
    r = coord.execute(session, p, params or [])
    return [row for batch in r.batches for row in batch] if isinstance(r, RowsResult) else []


def explain(coord: Coordinator, session: Any, sql: str) -> str:
    (row,) = run(coord, session, sql)
    return str(row[0])


def error(coord: Coordinator, session: Any, sql: str, types: list[SqlType | None] | None = None) -> SqlError:
    with pytest.raises(SqlError) as e:
        run(coord, session, sql, types=types)
    return e.value


# ---- wrong answers ---------------------------------------------------------------------------


def test_aggregate_with_filter_is_named_by_the_aggregate(coord: Coordinator, session: Any) -> None:
    """PostgreSQL names `count(*) FILTER (WHERE ..)` `count` (FigureColname looks through
    FILTER), not `?column?`."""
    p = coord.prepare(session, "SELECT count(*) FILTER (WHERE a > 1), sum(a) FILTER (WHERE b > 1), "
                               "max(a) FILTER (WHERE a > 1) AS m, array_agg(a ORDER BY a) FILTER (WHERE a > 0) FROM t", [])
    assert [c.name for c in p.columns or ()] == ["count", "sum", "m", "array_agg"]


@pytest.mark.parametrize("stage", ["RAW", "DECORRELATED", "OPTIMIZED"])
def test_explain_shows_the_finishing(coord: Coordinator, session: Any, stage: str) -> None:
    text = explain(coord, session, f"EXPLAIN {stage} PLAN FOR SELECT * FROM t ORDER BY a LIMIT 3")
    lines = text.rstrip("\n").split("\n")
    assert lines[0] == "Finish order_by=[#0 asc nulls_last] limit=3 output=[#0, #1]"
    assert all(line.startswith("  ") for line in lines[1:]) and "ReadStorage materialize.public.t" in text
    # OFFSET and a projection of the ORDER BY column away
    text = explain(coord, session, "EXPLAIN OPTIMIZED PLAN FOR SELECT b FROM t ORDER BY a DESC OFFSET 2")
    assert text.split("\n")[0] == "Finish order_by=[#1 desc nulls_first] offset=2 output=[#0]"
    # no Finish when there is nothing to finish
    assert not explain(coord, session, "EXPLAIN OPTIMIZED PLAN FOR SELECT * FROM t").startswith("Finish")


def test_explain_prints_literals_as_sql_text(coord: Coordinator, session: Any) -> None:
    text = explain(coord, session, "EXPLAIN OPTIMIZED PLAN FOR SELECT ts + INTERVAL '30 days' FROM u")
    assert '"30 days"' in text and "Interval(" not in text
    text = explain(coord, session, "EXPLAIN OPTIMIZED PLAN FOR SELECT * FROM u WHERE ts > '2024-01-02 03:04:05+00'")
    assert "2024-01-02 03:04:05+00" in text and "datetime" not in text


def test_explain_redacted_hides_every_literal(coord: Coordinator, session: Any) -> None:
    plain = explain(coord, session, "EXPLAIN OPTIMIZED PLAN FOR SELECT a + 41 FROM t WHERE b = 7 AND a::text = 'secret'")
    assert "41" in plain and "secret" in plain
    for stage in ("RAW", "OPTIMIZED", "PHYSICAL"):
        text = explain(coord, session, f"EXPLAIN {stage} PLAN WITH (redacted) FOR "
                                       "SELECT a + 41 FROM t WHERE b = 7 AND a::text = 'secret'")
        assert "█" in text and "41" not in text and "secret" not in text and "7)" not in text, text


def test_explain_annotations(coord: Coordinator, session: Any) -> None:
    text = explain(coord, session, "EXPLAIN OPTIMIZED PLAN WITH (arity, types, keys) FOR SELECT a, count(*) FROM t GROUP BY a")
    first = text.split("\n")[0]
    assert first.startswith("Reduce group_by=[#0] aggregates=[count(*)]")
    assert first.endswith('// { arity: 2, types: "(integer?, bigint?)", keys: "([0])" }')
    assert '// { arity: 2, types: "(integer?, integer?)", keys: "()" }' in text  # ReadStorage t


def test_explain_unimplemented_modifier_is_an_error(coord: Coordinator, session: Any) -> None:
    assert error(coord, session, "EXPLAIN OPTIMIZED PLAN WITH (subtree size) FOR SELECT * FROM t").sqlstate == "0A000"
    assert error(coord, session, "EXPLAIN PLAN WITH (nonsense) FOR SELECT * FROM t").sqlstate == "42601"


def test_syntax_error_with_parameters_is_42601(coord: Coordinator, session: Any) -> None:
    """`selec $1` is a syntax error at its first word (sqlglot read it as an alias: 0A000)."""
    e = error(coord, session, "selec $1", types=[SqlType("int4")])
    assert (e.sqlstate, e.message, e.position) == ("42601", 'syntax error at or near "selec"', 1)
    assert error(coord, session, "foo").sqlstate == "42601"


def test_multidimensional_array_in_a_catalog_query_is_refused(coord: Coordinator, session: Any) -> None:
    """psycopg2 interpolates a nested list as ARRAY[ARRAY[..]]: the catalog path returned
    text elements `'[1, 2]'` (a wrong answer); the planner refuses it, so must this path."""
    e = error(coord, session, "SELECT ARRAY[ARRAY[1,2],ARRAY[3,4]] FROM mz_tables")
    assert e.sqlstate == "0A000"


# ---- definitions Materialize refuses ----------------------------------------------------------

_TEMPORAL_OK = [
    "SELECT x FROM u WHERE mz_now() <= ts + INTERVAL '1 day'",
    "SELECT x FROM u WHERE mz_now() >= ts AND mz_now() < ts + INTERVAL '1 hour' AND x > 0",
    "SELECT x, count(*) FROM u GROUP BY x, ts HAVING mz_now() < ts + INTERVAL '5 minutes'",
    "SELECT x FROM u WHERE ts::mz_timestamp > mz_now()",
]
_TEMPORAL_REFUSED = [
    "SELECT x, mz_now() FROM u",  # select list
    "SELECT x FROM u WHERE mz_now() <= ts OR x > 0",  # under OR
    "SELECT x FROM u WHERE mz_now()::timestamptz <> ts",  # <>
    "SELECT x FROM u WHERE NOT (mz_now() > ts)",
    "SELECT count(*) FILTER (WHERE mz_now() > ts) FROM u",  # aggregate FILTER
    "SELECT x FROM u WHERE CASE WHEN x > 0 THEN mz_now() > ts ELSE false END",
    "SELECT x FROM u WHERE mz_now() > mz_now()",
]
_NOW_REFUSED = [
    "SELECT x, now() FROM u",
    "SELECT x FROM u WHERE ts > current_timestamp - INTERVAL '1 day'",
    "SELECT x FROM u WHERE ts::date = current_date",
]


@pytest.mark.parametrize("query", _TEMPORAL_OK)
def test_temporal_filters_are_accepted_in_maintained_objects(coord: Coordinator, session: Any, query: str) -> None:
    run(coord, session, f"CREATE MATERIALIZED VIEW ok_mv AS {query}")
    run(coord, session, f"CREATE VIEW ok_v AS {query}")
    run(coord, session, "CREATE DEFAULT INDEX ON ok_v")
    run(coord, session, "DROP VIEW ok_v CASCADE")
    run(coord, session, "DROP MATERIALIZED VIEW ok_mv")


@pytest.mark.parametrize("query", _TEMPORAL_REFUSED + _NOW_REFUSED)
def test_time_outside_temporal_filters_is_refused_in_maintained_objects(coord: Coordinator, session: Any, query: str) -> None:
    e = error(coord, session, f"CREATE MATERIALIZED VIEW bad_mv AS {query}")
    assert e.sqlstate == "0A000"
    expected = "cannot materialize call to current_timestamp" if query in _NOW_REFUSED else "Unsupported temporal"
    assert e.message.startswith(expected), e.message
    # a view may say it; an index on it (maintaining it) may not
    run(coord, session, f"CREATE VIEW bad_v AS {query}")
    try:
        assert error(coord, session, "CREATE DEFAULT INDEX ON bad_v").sqlstate == "0A000"
        assert error(coord, session, "CREATE MATERIALIZED VIEW bad_mv AS SELECT * FROM bad_v").sqlstate == "0A000"
    finally:
        run(coord, session, "DROP VIEW bad_v CASCADE")
    # a one-shot SELECT keeps accepting it (planned only: no Spark here)
    coord.prepare(session, query, [])


def test_unknown_cluster_is_an_error_at_use(coord: Coordinator, session: Any) -> None:
    """Materialize accepts `SET cluster = 'nope'` and fails the statements that need it."""
    run(coord, session, "SET cluster = 'no_such_cluster'")
    assert run(coord, session, "SHOW cluster") == [("no_such_cluster",)]
    for sql in ("SELECT * FROM t", "SELECT a FROM v", "CREATE MATERIALIZED VIEW c_mv AS SELECT 1",
                "CREATE INDEX c_idx ON t (b)"):
        e = error(coord, session, sql)
        assert (e.sqlstate, e.message) == ("42704", "unknown cluster 'no_such_cluster'"), sql
    run(coord, session, "CREATE VIEW c_v AS SELECT 1 AS one")  # a view runs nowhere
    run(coord, session, "DROP VIEW c_v")
    run(coord, session, "SET cluster = quickstart")
    run(coord, session, "CREATE INDEX c_idx ON t (b)")
    run(coord, session, "DROP INDEX c_idx")


def test_redacted_create_sql_hides_literals(coord: Coordinator, session: Any) -> None:
    run(coord, session, "CREATE VIEW secret_v AS SELECT a::numeric(10,2) AS n, 'hunter2' AS pw FROM t WHERE b = 42 LIMIT 7")
    try:
        ((create, redacted),) = run(coord, session, "SELECT create_sql, redacted_create_sql FROM mz_views WHERE name = 'secret_v'")
        assert "hunter2" in create and "42" in create
        assert redacted == ("CREATE VIEW secret_v AS SELECT a::numeric(10,2) AS n, '<REDACTED>' AS pw FROM t "
                            "WHERE b = '<REDACTED>' LIMIT '<REDACTED>'")
    finally:
        run(coord, session, "DROP VIEW secret_v")


# ---- SHOW ---------------------------------------------------------------------------------------


def columns(coord: Coordinator, session: Any, sql: str) -> list[str]:
    return [c.name for c in coord.prepare(session, sql, []).columns or ()]


def test_show_listings_have_materializes_columns(coord: Coordinator, session: Any) -> None:
    """Column names per Materialize's docs (SHOW OBJECTS / INDEXES / CLUSTERS / ...)."""
    expected = {
        "SHOW OBJECTS": ["name", "type", "comment"],
        "SHOW TABLES": ["name", "comment"],
        "SHOW VIEWS": ["name", "comment"],
        "SHOW MATERIALIZED VIEWS": ["name", "cluster", "comment"],
        "SHOW INDEXES": ["name", "on", "cluster", "key", "comment"],
        "SHOW SOURCES": ["name", "type", "cluster", "comment"],
        "SHOW SINKS": ["name", "type", "cluster", "comment"],
        "SHOW CLUSTERS": ["name", "replicas", "comment"],
        "SHOW CLUSTER REPLICAS": ["cluster", "replica", "size", "ready", "comment"],
        "SHOW SECRETS": ["name", "comment"],
        "SHOW CONNECTIONS": ["name", "type", "comment"],
        "SHOW ROLES": ["name", "comment"],
        "SHOW TYPES": ["name", "comment"],
        "SHOW SCHEMAS": ["name", "comment"],
        "SHOW DATABASES": ["name", "comment"],
        "SHOW COLUMNS FROM t": ["name", "nullable", "type", "comment"],
        "SHOW CREATE TABLE t": ["name", "create_sql"],
    }
    for sql, cols in expected.items():
        assert columns(coord, session, sql) == cols, sql


def test_show_listings_rows(coord: Coordinator, session: Any) -> None:
    objects = run(coord, session, "SHOW OBJECTS")
    assert ("t", "table", "") in objects and ("v", "view", "") in objects
    assert ("mv", "materialized-view", "") in objects and ("t_a_idx", "index", "") in objects
    assert run(coord, session, "SHOW TABLES") == [("t", ""), ("u", "")]
    assert run(coord, session, "SHOW VIEWS") == [("v", "")]
    assert run(coord, session, "SHOW MATERIALIZED VIEWS") == [("mv", "quickstart", "")]
    assert run(coord, session, "SHOW INDEXES ON t") == [("t_a_idx", "t", "quickstart", ["a"], "")]
    assert run(coord, session, "SHOW INDEXES IN CLUSTER quickstart") == run(coord, session, "SHOW INDEXES")
    assert run(coord, session, "SHOW CLUSTERS") == [("quickstart", "r1 (spark)", "")]
    assert run(coord, session, "SHOW COLUMNS FROM t") == [("a", True, "integer", ""), ("b", True, "integer", "")]
    assert run(coord, session, "SHOW DATABASES") == [("materialize", "")]
    assert ("public", "") in run(coord, session, "SHOW SCHEMAS")
    assert run(coord, session, "SHOW SOURCES") == [] and run(coord, session, "SHOW SECRETS") == []


def test_show_filters(coord: Coordinator, session: Any) -> None:
    assert run(coord, session, "SHOW TABLES LIKE 'u%'") == [("u", "")]
    assert run(coord, session, "SHOW OBJECTS WHERE type = 'view'") == [("v", "view", "")]
    assert run(coord, session, "SHOW OBJECTS FROM mz_catalog LIKE 'mz_tab%'") == [("mz_tables", "table", "")]
    assert run(coord, session, "SHOW TABLES FROM public WHERE name <> 't'") == [("u", "")]


def test_show_errors(coord: Coordinator, session: Any) -> None:
    assert error(coord, session, "SHOW TABLES FROM nope").sqlstate == "3F000"
    assert error(coord, session, "SHOW INDEXES IN CLUSTER nope").sqlstate == "42704"
    assert error(coord, session, "SHOW INDEXES ON nope").sqlstate == "42P01"
    assert error(coord, session, "SHOW CREATE VIEW t").sqlstate == "42809"
    assert error(coord, session, "SHOW TABLES bogus").sqlstate == "42601"


def test_show_create(coord: Coordinator, session: Any) -> None:
    assert run(coord, session, "SHOW CREATE TABLE t") == [("materialize.public.t", "CREATE TABLE t (a int, b int)")]
    assert run(coord, session, "SHOW CREATE VIEW v") == [("materialize.public.v", "CREATE VIEW v AS SELECT a FROM t")]
    assert run(coord, session, "SHOW CREATE INDEX t_a_idx") == [("materialize.public.t_a_idx", "CREATE INDEX t_a_idx ON t (a)")]
    (row,) = run(coord, session, "SHOW CREATE MATERIALIZED VIEW mv")
    assert row[0] == "materialize.public.mv" and row[1].startswith("CREATE MATERIALIZED VIEW mv")


# ---- EXPLAIN shorthands -------------------------------------------------------------------------


def test_explain_object_shorthands(coord: Coordinator, session: Any) -> None:
    """`EXPLAIN VIEW v` = `EXPLAIN OPTIMIZED PLAN FOR VIEW v`; `EXPLAIN MATERIALIZED VIEW m` /
    `EXPLAIN INDEX i` = their PHYSICAL PLAN (EXPLAIN's default stage)."""
    for short, full in (("EXPLAIN VIEW v", "EXPLAIN OPTIMIZED PLAN FOR VIEW v"),
                        ("EXPLAIN MATERIALIZED VIEW mv", "EXPLAIN PHYSICAL PLAN FOR MATERIALIZED VIEW mv"),
                        ("EXPLAIN INDEX t_a_idx", "EXPLAIN PHYSICAL PLAN FOR INDEX t_a_idx")):
        assert explain(coord, session, short) == explain(coord, session, full), short
    assert "materialize.public.mv" in explain(coord, session, "EXPLAIN MATERIALIZED VIEW mv")
    assert error(coord, session, "EXPLAIN VIEW t").sqlstate == "42809"
    assert error(coord, session, "EXPLAIN INDEX nope").sqlstate == "42P01"


# ---- ALTER SYSTEM, statements that are 0A000 -----------------------------------------------------


def test_alter_system_set_and_reset(tmp_path: Any) -> None:
    c = Coordinator(str(tmp_path / "data"))
    try:
        live, chose = c.new_session("materialize", "materialize", {}), c.new_session("materialize", "materialize", {})
        run(c, chose, "SET statement_timeout = '7s'")
        run(c, live, "ALTER SYSTEM SET statement_timeout = '5s'")
        assert run(c, live, "SHOW statement_timeout") == [("5s",)]  # not set by the session: follows
        assert run(c, chose, "SHOW statement_timeout") == [("7s",)]  # set by the session: kept
        fresh = c.new_session("materialize", "materialize", {})
        assert run(c, fresh, "SHOW statement_timeout") == [("5s",)]
        run(c, fresh, "RESET statement_timeout")
        assert run(c, fresh, "SHOW statement_timeout") == [("5s",)]  # RESET goes back to the system default
        assert error(c, live, "ALTER SYSTEM SET no_such_var = 1").sqlstate == "42704"
        assert error(c, live, "ALTER SYSTEM SET server_version = '1'").sqlstate == "55P02"
        assert error(c, live, "ALTER SYSTEM SET bytea_output = 'nope'").sqlstate == "22023"
        other = c.new_session("someone", "materialize", {})
        assert error(c, other, "ALTER SYSTEM SET statement_timeout = '1s'").sqlstate == "42501"
    finally:
        c.close()
    c = Coordinator(str(tmp_path / "data"))  # persisted in the catalog
    try:
        s = c.new_session("materialize", "materialize", {})
        assert run(c, s, "SHOW statement_timeout") == [("5s",)]
        run(c, s, "ALTER SYSTEM RESET statement_timeout")
        assert run(c, s, "SHOW statement_timeout") == [("0",)]
        assert run(c, c.new_session("materialize", "materialize", {}), "SHOW statement_timeout") == [("0",)]
    finally:
        c.close()


@pytest.mark.parametrize("sql", [
    "CREATE CLUSTER c SIZE = 'xsmall'", "DROP CLUSTER c", "DROP CLUSTER REPLICA quickstart.r1",
    "CREATE CLUSTER REPLICA quickstart.r2 SIZE = 'xsmall'", "ALTER CLUSTER quickstart SET (REPLICATION FACTOR 2)",
    "CREATE SOURCE s FROM LOAD GENERATOR TPCH FOR ALL TABLES", "DROP SECRET s", "DROP CONNECTION c", "DROP SINK s",
    "CREATE SECRET s AS 'x'",
    "SHOW PRIVILEGES", "SHOW SUBSOURCES", "SHOW CREATE CLUSTER quickstart", "VALIDATE CONNECTION c",
    "SUBSCRIBE TO t ENVELOPE UPSERT (KEY (a))", "GRANT SELECT ON t TO r",
])
def test_valid_materialize_sql_is_0a000_never_a_syntax_error(coord: Coordinator, session: Any, sql: str) -> None:
    assert error(coord, session, sql).sqlstate == "0A000"


def test_alter_refusals_name_what_is_refused(coord: Coordinator, session: Any) -> None:
    for sql, what in (("ALTER CLUSTER quickstart SET (REPLICATION FACTOR 2)", "ALTER CLUSTER"),
                      ("ALTER CLUSTER REPLICA quickstart.r1 OWNER TO x", "ALTER CLUSTER REPLICA"),
                      ("ALTER MATERIALIZED VIEW mv SET (RETAIN HISTORY FOR '1h')", "ALTER MATERIALIZED VIEW"),
                      ("ALTER TABLE t ADD COLUMN c int", "ALTER TABLE")):
        e = error(coord, session, sql)
        assert (e.sqlstate, e.message) == ("0A000", f"{what} not yet supported"), sql


def test_explain_timestamp(coord: Coordinator, session: Any) -> None:
    """EXPLAIN TIMESTAMP: the read's timestamp and each input's frontiers (Materialize's layout)."""
    text = explain(coord, session, "EXPLAIN TIMESTAMP FOR SELECT * FROM u, v")
    lines = text.splitlines()
    ts = int(lines[0].split(":", 1)[1].split()[0])
    assert lines[0].startswith("                query timestamp: ") and "can respond immediately: true" in text, text
    # the tables read (the view is inlined), each with a write frontier above the query timestamp
    assert "source materialize.public.t (u1, storage):" in text and "source materialize.public.u (u2, storage):" in text, text
    writes = [int(x.split("[", 1)[1].split()[0]) for x in lines if "write frontier:" in x]
    assert len(writes) == 2 and all(w > ts for w in writes), text
    doc = json.loads(explain(coord, session, "EXPLAIN TIMESTAMP AS JSON FOR SELECT a FROM t"))
    assert doc["determination"]["timestamp"] <= doc["determination"]["largest_not_in_advance_of_upper"]
    assert [s["name"] for s in doc["sources"]] == ["materialize.public.t (u1, storage)"]
    assert error(coord, session, "EXPLAIN TIMESTAMP FOR INSERT INTO t VALUES (1)").sqlstate == "0A000"


def test_explain_humanized_expressions(coord: Coordinator, session: Any) -> None:
    """Columns whose names are known print as `#1{b}` (Materialize's humanized expressions)."""
    text = explain(coord, session, "EXPLAIN OPTIMIZED PLAN WITH (humanized expressions) FOR "
                                   "SELECT a, count(*) FROM t WHERE b = 7 GROUP BY a")
    assert "Filter (#1{b} = 7)" in text and "group_by=[#0{a}]" in text, text
    plain = explain(coord, session, "EXPLAIN OPTIMIZED PLAN FOR SELECT a, count(*) FROM t WHERE b = 7 GROUP BY a")
    assert "{" not in plain
    join = explain(coord, session, "EXPLAIN OPTIMIZED PLAN WITH (humanized expressions) FOR "
                                   "SELECT t.a, u.ts FROM t JOIN u ON t.b = u.x")
    assert "#1{b}" in join and "#2{x}" in join, join
    view = explain(coord, session, "EXPLAIN OPTIMIZED PLAN WITH (humanized expressions) FOR VIEW v")
    assert "#0{a}" in view, view


# ---- datediff (Materialize's function reference: boundaries crossed) ------------------------------


DATEDIFF_CASES = [
    ("datediff('millennia', '2000-12-31', '2001-01-01')", 1),  # the documented examples
    ("datediff('day', '2004-02-28', '2004-03-01')", 2),
    ("datediff('day', '2005-02-28', '2005-03-01')", 1),
    ("datediff('century', DATE '2000-12-31', DATE '2001-01-01')", 1),
    ("datediff('decade', DATE '2009-12-31', DATE '2010-01-01')", 1),
    ("datediff('yrs', DATE '2020-12-31', DATE '2019-01-01')", -1),
    ("datediff('month', DATE '2020-01-31', DATE '2021-03-01')", 14),
    ("datediff('quarter', TIMESTAMP '2020-03-31 23:00', TIMESTAMP '2020-04-01')", 1),
    ("datediff('week', DATE '2020-01-01', DATE '2020-01-14')", 1),
    ("datediff('hour', TIMESTAMPTZ '2020-01-01 00:00+00', TIMESTAMPTZ '2020-01-01 05:59:59+00')", 5),
    ("datediff('hour', TIMESTAMP '2020-01-01 05:59:59', TIMESTAMP '2020-01-01 00:00')", -5),  # toward zero
    ("datediff('us', TIMESTAMP '2020-01-01', TIMESTAMP '2020-01-01 00:00:00.000123')", 123),
    ("datediff('day', DATE '2020-01-01', TIMESTAMP '2020-01-02 12:00')", 1),
    ("datediff('year', NULL::date, DATE '2020-01-01')", None),
]  # values: tests/integration/test_surface_server.py (computed on Spark)


@pytest.mark.parametrize(("sql", "expected"), DATEDIFF_CASES)
def test_datediff_binds_to_bigint(coord: Coordinator, session: Any, sql: str, expected: int | None) -> None:
    p = coord.prepare(session, f"SELECT {sql}", [])
    assert [(c.name, c.type.name) for c in p.columns or ()] == [("datediff", "int8")]


def test_datediff_errors(coord: Coordinator, session: Any) -> None:
    assert error(coord, session, "SELECT datediff('bogus', DATE '2020-01-01', DATE '2020-01-02')").sqlstate == "22023"
    assert error(coord, session, "SELECT datediff('day', 1, 2)").sqlstate == "42883"
    assert error(coord, session, "SELECT datediff('day', TIME '10:00', DATE '2020-01-01')").sqlstate == "42883"
    assert error(coord, session, "SELECT datediff(lower('DAY'), DATE '2020-01-01', DATE '2020-01-02')").sqlstate == "0A000"


def test_now_and_mz_now_follow_the_wall_clock(tmp_path: Any) -> None:
    """On a new catalog the last write timestamp is 0 and nothing advanced it: `SELECT now()`
    said 1970-01-01 (and an INSERT's now() stored it); later, one-shot reads kept the last
    write's time however long ago it was. Reads now see the wall clock's second."""
    import datetime as dt
    import time

    c = Coordinator(str(tmp_path / "data"))
    try:
        s = c.new_session("materialize", "materialize", {})
        for _ in range(2):
            ((now,),) = run(c, s, "SELECT now()")  # constant: folded in the planner, no Spark
            assert abs((now - dt.datetime.now(dt.UTC)).total_seconds()) < 2.5, now
            ((mz_now,),) = run(c, s, "SELECT mz_now()")
            assert abs(int(mz_now) / 1000 - time.time()) < 2.5, mz_now
            time.sleep(1.5)
        assert c.compute.current is None
    finally:
        c.close()


def test_show_of_read_only_postgres_settings(coord: Coordinator, session: Any) -> None:
    """What BI tools ask with SHOW (the values current_setting() already answers)."""
    assert run(coord, session, "SHOW max_identifier_length") == [("63",)]
    assert run(coord, session, "SHOW lc_collate") == [("C",)]
    assert error(coord, session, "SHOW no_such_setting").sqlstate == "42704"


def test_set_schema_is_search_path(coord: Coordinator, session: Any) -> None:
    run(coord, session, "CREATE SCHEMA other")
    try:
        run(coord, session, "SET schema = 'other'")
        assert run(coord, session, "SHOW search_path") == [("other",)]
        run(coord, session, "CREATE TABLE in_other (x int)")
        assert run(coord, session, "SHOW TABLES") == [("in_other", "")]
        run(coord, session, "SET SCHEMA 'public'")
        assert ("t", "") in run(coord, session, "SHOW TABLES")
    finally:
        run(coord, session, "DROP SCHEMA other CASCADE")


def test_current_role_is_a_keyword(coord: Coordinator, session: Any) -> None:
    """Postgres: `current_role` (unquoted) is the session's role, like current_user (it was
    read as a column: 42703)."""
    assert columns(coord, session, "SELECT current_role") == ["current_role"]
    assert run(coord, session, "SELECT current_role, current_role = current_user") == [("materialize", True)]


def test_comments_belong_to_their_kind_of_object(coord: Coordinator, session: Any) -> None:
    """ids are unique per kind only: table t, the cluster, its replica, the role and the
    database are all `u1`; a comment on the table shows on the table alone."""
    run(coord, session, "COMMENT ON TABLE t IS 'about t'")
    try:
        assert ("t", "about t") in run(coord, session, "SHOW TABLES")
        assert run(coord, session, "SHOW CLUSTERS") == [("quickstart", "r1 (spark)", "")]
        assert [r[-1] for r in run(coord, session, "SHOW CLUSTER REPLICAS")] == [""]
        assert run(coord, session, "SHOW DATABASES") == [("materialize", "")]
        assert ("materialize", "") in run(coord, session, "SHOW ROLES")
    finally:
        run(coord, session, "COMMENT ON TABLE t IS NULL")


def test_replica_readiness_is_the_driver_process(coord: Coordinator, session: Any) -> None:
    """SHOW CLUSTER REPLICAS' `ready` and mz_cluster_replica_statuses follow the Spark driver
    JVM as observed (online while its process runs), not a constant."""
    from compute.render.spark import driver_process_running

    coord.compute.spark()  # started (the first statement that needs Spark would start it)
    assert driver_process_running()
    assert [r[3] for r in run(coord, session, "SHOW CLUSTER REPLICAS")] == [True]
    (row,) = run(coord, session, "SELECT replica_id, process_id, status, reason FROM mz_internal.mz_cluster_replica_statuses")
    assert row == ("u1", 0, "online", None)


def test_explain_for_subscribe_is_its_maintained_dataflow(coord: Coordinator, session: Any) -> None:
    """EXPLAIN ... FOR SUBSCRIBE shows the dataflow SUBSCRIBE installs: maintained (Basic TopK,
    not the one-shot MonotonicTopK a SELECT gets), over a query, a view or a table."""
    q = "(SELECT a, b FROM t ORDER BY b LIMIT 2)"
    sub = explain(coord, session, f"EXPLAIN PHYSICAL PLAN FOR SUBSCRIBE {q}")
    one_shot = explain(coord, session, f"EXPLAIN PHYSICAL PLAN FOR SELECT * FROM {q} s")
    assert "TopK::Basic" in sub and "Monotonic" not in sub, sub
    assert "TopK::Monotonic" in one_shot, one_shot
    assert "ReadStorage materialize.public.t" in explain(coord, session, "EXPLAIN OPTIMIZED PLAN FOR SUBSCRIBE v")
    assert "materialize.public.t" in explain(coord, session, "EXPLAIN PLAN FOR SUBSCRIBE t")
    assert error(coord, session, "EXPLAIN OPTIMIZED PLAN FOR SUBSCRIBE (SELECT now() FROM t)").sqlstate == "0A000"


def test_a_keyword_is_a_column_label_after_as(coord: Coordinator, session: Any) -> None:
    """PostgreSQL takes any keyword as a label after AS (tools send `AS select`); a CAST's AS
    keeps its type."""
    for sql in ("SELECT 1 AS select, CAST(2 AS int) AS from, 3 AS \"Q\"",
                "SELECT relname AS select, 2 AS from, 3 AS \"Q\" FROM pg_catalog.pg_class WHERE relname = 'pg_type'"):
        p = coord.prepare(session, sql, [])
        assert [c.name for c in p.columns or ()] == ["select", "from", "Q"], sql
        assert len(run(coord, session, sql)) == 1
