"""ALTER ... RENAME TO: stored definitions rewritten at the renamed item's references only
(sql/rename.py), and the statements' parsing."""

from __future__ import annotations

import pytest

from sql import statements as st
from sql.errors import SqlError
from sql.rename import quoted, rewrite


def _deps(sql: str, old: str = "t", new: str = "t2") -> str:
    return rewrite(sql, old=old, new=new, schema="public", own=False, where="view w")


def test_references_renamed_columns_and_other_schemas_kept() -> None:
    assert _deps("create view w as select t.a, x.t from t join public.t as x on true join other.t on true") == (
        "create view w as select t2.a, x.t from t2 join public.t2 as x on true join other.t on true")
    # a subquery's reference, a quoted reference, an output alias spelled like the table
    assert _deps('create materialized view w in cluster quickstart as select a as t from "t" where a in (select t.b from t)') == (
        "create materialized view w in cluster quickstart as select a as t from t2 where a in (select t2.b from t2)")


def test_own_header_renamed() -> None:
    own = {"own": True, "schema": "public", "where": "x"}
    assert rewrite("create view w as select t.a from t", old="w", new="W x", **own) == 'create view "W x" as select t.a from t'
    assert rewrite('CREATE TABLE "public"."t" (t int)', old="t", new="u", **own) == 'CREATE TABLE "public".u (t int)'
    assert rewrite("create index i on t (a)", old="i", new="j", **own) == "create index j on t (a)"
    assert rewrite("create default index on t", old="t_primary_idx", new="j", **own) == "create default index on t"
    assert rewrite("create index i on t (a)", old="t", new="t2", own=False, schema="public", where="x") == "create index i on t2 (a)"


@pytest.mark.parametrize("sql", [
    "create view w as with t as (select 1 as a) select a from t",  # a CTE of the old name
    "create view w as select * from u as t",  # an alias of the old name
    "create view w as select * from t join t2 on true",  # the new name already names a relation
    "create view w as select * from t as t2",
])
def test_ambiguous_definitions_refused(sql: str) -> None:
    with pytest.raises(SqlError) as e:
        _deps(sql)
    assert e.value.sqlstate == "0A000"


def test_quoted() -> None:
    assert quoted("abc") == "abc" and quoted("Abc") == '"Abc"' and quoted("a b") == '"a b"' and quoted('a"b') == '"a""b"'
    assert quoted("select") == '"select"'


def test_statements_parse() -> None:
    assert st.classify("ALTER MATERIALIZED VIEW IF EXISTS s.m RENAME TO \"N\"") == st.AlterRename("materialized view", ("s", "m"), "N", True)
    assert st.classify("comment on column s.t.c is 'it''s'") == st.CommentOn("column", ("s", "t", "c"), "it's")
    assert st.classify("COMMENT ON TABLE t IS NULL") == st.CommentOn("table", ("t",), None)
    for sql, state in (("comment on cluster c is 'x'", "0A000"), ("comment on table t is", "42601"),
                       ("alter table t rename to", "42601")):
        with pytest.raises(SqlError) as e:
            st.classify(sql)
        assert e.value.sqlstate == state, sql
