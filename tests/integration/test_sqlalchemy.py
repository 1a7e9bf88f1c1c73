"""SQLAlchemy 2 with the psycopg (3) dialect: engine start-up queries, bound parameters,
Core inserts, transactions."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest
import sqlalchemy as sa

from tests.integration.harness import MzServer

pytestmark = pytest.mark.integration


def engine(server: MzServer) -> sa.Engine:
    return sa.create_engine(server.url("postgresql+psycopg"), poolclass=sa.pool.NullPool)


def test_connect_and_bound_params(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    eng = engine(mz_server)
    try:
        # connect() runs the dialect's initialisation (version(), current_schema(),
        # standard_conforming_strings, ...).
        with eng.connect() as conn:
            assert conn.execute(sa.text("SELECT 1")).scalar_one() == 1
            assert eng.dialect.server_version_info is not None
        with eng.begin() as conn:
            conn.execute(sa.text(f"CREATE TABLE {t} (id int, name text, born date)"))
        with eng.begin() as conn:
            conn.execute(
                sa.text(f"INSERT INTO {t} (id, name, born) VALUES (:id, :name, :born)"),
                [
                    {"id": 1, "name": "ada", "born": dt.date(1815, 12, 10)},
                    {"id": 2, "name": "alan", "born": dt.date(1912, 6, 23)},
                    {"id": 3, "name": "grace", "born": dt.date(1906, 12, 9)},
                ],
            )
        with eng.connect() as conn:
            rows = conn.execute(
                sa.text(
                    f"SELECT id, name FROM {t} WHERE born < :cutoff AND id <> :skip ORDER BY id"
                ),
                {"cutoff": dt.date(1910, 1, 1), "skip": 3},
            ).all()
            assert [tuple(r) for r in rows] == [(1, "ada")]
            n = conn.execute(sa.text(f"SELECT count(*) FROM {t}")).scalar_one()
            assert n == 3
    finally:
        eng.dispose()


def test_core_table_and_rollback(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    eng = engine(mz_server)
    md = sa.MetaData()
    table = sa.Table(t, md, sa.Column("k", sa.Integer), sa.Column("v", sa.Text))
    try:
        with eng.begin() as conn:
            conn.execute(sa.text(f"CREATE TABLE {t} (k int, v text)"))
        with eng.begin() as conn:
            conn.execute(table.insert(), [{"k": i, "v": f"v{i}"} for i in range(5)])
        with eng.connect() as conn:
            conn.execute(table.insert().values(k=99, v="never"))
            conn.rollback()
        with eng.connect() as conn:
            stmt = sa.select(table.c.v).where(table.c.k >= sa.bindparam("lo")).order_by(table.c.k)
            assert conn.execute(stmt, {"lo": 3}).scalars().all() == ["v3", "v4"]
            total = conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()
            assert total == 5
    finally:
        eng.dispose()
