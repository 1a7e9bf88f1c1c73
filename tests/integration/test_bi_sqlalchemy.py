"""SQLAlchemy 2 reflection (`inspect(engine)`) with the psycopg 3 and psycopg2 dialects, and
pandas' read_sql_table / read_sql_query, against the system relations."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import pytest
import sqlalchemy as sa

from tests.integration.harness import MzServer
from tests.integration.tools.replay import spark_jobs

pytestmark = pytest.mark.integration

DIALECTS = ["postgresql+psycopg", "postgresql+psycopg2"]


def engine(server: MzServer, dialect: str) -> sa.Engine:
    return sa.create_engine(server.url(dialect), poolclass=sa.pool.NullPool)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_inspection(mz_server: MzServer, uniq: Callable[[str], str], dialect: str) -> None:
    t, v, mv = uniq("t"), uniq("v"), uniq("mv")
    eng = engine(mz_server, dialect)
    with eng.begin() as conn:
        conn.execute(sa.text(
            f"CREATE TABLE {t} (id int NOT NULL, region text NOT NULL, amount numeric(10,2), label varchar(30), "
            f"at timestamptz, big bigint, ok boolean, ratio double precision, day date, PRIMARY KEY (id, region))"))
        conn.execute(sa.text(f"CREATE INDEX {t}_label ON {t} (label)"))
        conn.execute(sa.text(f"CREATE VIEW {v} AS SELECT id, label FROM {t}"))
        conn.execute(sa.text(f"CREATE MATERIALIZED VIEW {mv} AS SELECT id FROM {t}"))
    with mz_server.connect() as c:
        jobs = spark_jobs(c)
    insp = sa.inspect(eng)
    schemas = insp.get_schema_names()
    assert "public" in schemas and "mz_catalog" in schemas and "mz_internal" in schemas
    assert not any(s.startswith("pg_") for s in schemas)
    assert t in insp.get_table_names()
    assert v not in insp.get_table_names() and mv not in insp.get_table_names()
    assert v in insp.get_view_names()
    assert mv in insp.get_materialized_view_names()
    assert insp.has_table(t) and not insp.has_table(uniq("missing"))
    cols = {c["name"]: c for c in insp.get_columns(t)}
    assert list(cols) == ["id", "region", "amount", "label", "at", "big", "ok", "ratio", "day"]
    expected = {
        "id": sa.INTEGER, "region": sa.TEXT, "amount": sa.NUMERIC, "label": sa.VARCHAR, "at": sa.TIMESTAMP,
        "big": sa.BIGINT, "ok": sa.BOOLEAN, "ratio": sa.DOUBLE_PRECISION, "day": sa.DATE,
    }
    for name, typ in expected.items():
        assert isinstance(cols[name]["type"], typ), (name, cols[name]["type"])
    assert cols["amount"]["type"].precision == 10 and cols["amount"]["type"].scale == 2
    assert cols["label"]["type"].length == 30
    assert cols["at"]["type"].timezone is True
    assert cols["id"]["nullable"] is False and cols["amount"]["nullable"] is True
    assert insp.get_pk_constraint(t) == {"constrained_columns": ["id", "region"], "name": f"{t}_pkey", "comment": None}
    indexes = insp.get_indexes(t)
    assert [(i["name"], i["column_names"], i["unique"]) for i in indexes] == [(f"{t}_label", ["label"], False)]
    assert insp.get_foreign_keys(t) == []
    assert insp.get_unique_constraints(t) == []
    assert insp.get_check_constraints(t) == []
    assert insp.get_table_comment(t) == {"text": None}
    assert [c["name"] for c in insp.get_columns(v)] == ["id", "label"]
    with mz_server.connect() as c:
        assert spark_jobs(c) == jobs, "reflection must not start Spark jobs"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_pandas(mz_server: MzServer, uniq: Callable[[str], str], dialect: str) -> None:
    t = uniq("t")
    eng = engine(mz_server, dialect)
    with eng.begin() as conn:
        conn.execute(sa.text(f"CREATE TABLE {t} (id int PRIMARY KEY, name text)"))
        conn.execute(sa.text(f"INSERT INTO {t} VALUES (1, 'ada'), (2, 'grace')"))
    df = pd.read_sql_table(t, eng)
    assert list(df.columns) == ["id", "name"]
    assert sorted(df.itertuples(index=False, name=None)) == [(1, "ada"), (2, "grace")]
    meta = pd.read_sql_query(
        sa.text("SELECT c.relname, c.relkind, a.attname FROM pg_catalog.pg_class c "
                "JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid WHERE c.relname = :t AND a.attnum > 0 "
                "ORDER BY a.attnum"), eng, params={"t": t})
    assert meta.to_dict("records") == [
        {"relname": t, "relkind": "r", "attname": "id"}, {"relname": t, "relkind": "r", "attname": "name"}]
    hydration = pd.read_sql_query("SELECT * FROM mz_internal.mz_compute_operator_hydration_statuses", eng)
    assert list(hydration.columns) == ["object_id", "plan_node_id", "replica_id", "hydrated"]
