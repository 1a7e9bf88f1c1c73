"""The IVM oracle (tests/ivm) is able to fail. No Spark: the "mzspark" side is a second
database of a throwaway PostgreSQL 15 whose maintained objects are PostgreSQL views (always
right: no mismatch over many seeds) or PostgreSQL materialized views, which are never refreshed
— every write is a lost write, which the oracle must catch and the minimizer shrink. A planted
extra row, a one-shot result that differs from the maintained one, and a failing write are
caught too."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.ivm.choose import HypothesisChooser, SeededChooser
from tests.ivm.minimize import ddmin, minimize
from tests.ivm.program import Obj, Program, from_seed, generate
from tests.ivm.queries import FAMILIES
from tests.ivm.runner import IvmOracle, Mismatch
from tests.oracle.__main__ import postgres_c_collation
from tests.oracle.compare import Outcome

PG_FAMILIES = tuple(f for f in FAMILIES if f != "wmr")   # WITH MUTUALLY RECURSIVE is mzspark's


@pytest.fixture(scope="module")
def dsns() -> Iterator[tuple[str, str]]:
    with postgres_c_collation() as dsn:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("CREATE DATABASE mzside TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'")
        yield dsn.replace("dbname=oracle", "dbname=mzside"), dsn


class PgAsMz(IvmOracle):
    """Objects on the 'mzspark' side are PostgreSQL views (`matview=False`) or materialized
    views that are never refreshed (`matview=True`: every write is lost)."""

    matview = False

    def create(self, p: Program, o: Obj) -> Mismatch | str:
        kind = "MATERIALIZED VIEW" if self.matview else "VIEW"
        r = self.run_mz(f"CREATE {kind} {o.name} ({o.columns}) AS {o.d.pg_sql}")
        assert r.ok, r.message
        for st_ in o.pg_create():
            assert self.run_pg(st_).ok
        return ""


@pytest.fixture
def oracle(dsns: tuple[str, str]) -> Iterator[PgAsMz]:
    mz_dsn, pg_dsn = dsns
    with psycopg.connect(mz_dsn, autocommit=True) as mz, psycopg.connect(mz_dsn, autocommit=True) as reader, \
            psycopg.connect(pg_dsn, autocommit=True) as pg:
        o = PgAsMz(mz, pg, reader=reader)
        try:
            yield o
        finally:
            o.drop()


def test_programs_are_functions_of_their_seed() -> None:
    assert from_seed(7) == from_seed(7)
    assert from_seed(7) != from_seed(8)
    p = from_seed(3, objects=6, writes=10)
    assert len(p.objects) == 6 and len(p.writes) == 10
    assert 2 <= len(p.tables) <= 3
    # every family can be generated and names its output columns c1..cN
    for fam in FAMILIES:
        q = generate(SeededChooser(fam), objects=2, writes=0, families=(fam,) if fam != "stacked" else ("agg", fam))
        assert q.objects[-1].d.family == fam
        assert "(c1" in q.objects[-1].mz_create()[0]


def test_postgres_against_itself_agrees(oracle: PgAsMz) -> None:
    found = []
    for seed in range(12):
        found += oracle.run(from_seed(seed, objects=5, writes=6, families=PG_FAMILIES))
    assert [m.report() for m in found] == []
    assert oracle.stats.checks >= 12 * 5 * 7 - 10
    assert len(oracle.stats.families) >= 10


def test_lost_writes_are_caught_and_minimized(oracle: PgAsMz) -> None:
    oracle.matview = True
    p = from_seed(5, objects=3, writes=8, families=("agg_global",))
    found = oracle.run(p)
    assert found, "a materialized view that is never refreshed must be reported"
    m = found[0]
    assert m.against == "postgres" and m.kind == "rows" and m.step >= 1
    small = minimize(oracle, p, m)
    assert small is not None
    assert len(small.objects) == 1 and small.objects[0].name == m.obj.name
    assert len(small.writes) == 1          # one write that changes the result suffices
    again = oracle.run(small, check_every=False)
    assert any(f.obj.name == m.obj.name for f in again)


def test_a_planted_row_is_caught_at_hydration(oracle: PgAsMz) -> None:
    plain = oracle.read_exec

    def extra_row(sql: str) -> Outcome:
        o = plain(sql)
        if sql.startswith("SELECT * FROM o2") and o.ok:
            return dataclasses.replace(o, rows=o.rows + (tuple("1" for _ in o.oids),))
        return o

    oracle.read_exec = extra_row
    found = oracle.run(from_seed(11, objects=3, writes=2, families=("join", "agg", "setop")))
    assert [(m.obj.name, m.step, m.against) for m in found] == [("o2", 0, "postgres")]


def test_oneshot_disagreement_is_caught(oracle: PgAsMz) -> None:
    plain = oracle.mz_exec
    p = from_seed(12, objects=2, writes=3, families=("distinct", "agg"))
    defs = {o.d.sql for o in p.objects}

    def lossy_oneshot(sql: str) -> Outcome:
        o = plain(sql)
        return dataclasses.replace(o, rows=o.rows[1:]) if sql in defs and o.ok and o.rows else o

    oracle.mz_exec = lossy_oneshot
    found = oracle.run(p)
    assert found and all(m.against == "oneshot" for m in found)


def test_a_failing_write_is_caught(oracle: PgAsMz) -> None:
    plain = oracle.mz_exec

    def no_deletes(sql: str) -> Outcome:
        return Outcome(False, sqlstate="XX000", message="boom") if sql.startswith("DELETE") else plain(sql)

    oracle.mz_exec = no_deletes
    p = from_seed(2, objects=1, writes=10)
    assert any(w.stmts[0].startswith("DELETE") for w in p.writes)
    found = oracle.run(p)
    assert [m.against for m in found] == ["write"]


def test_ddmin_finds_the_culprits() -> None:
    budget = [200]
    assert ddmin(list(range(20)), lambda xs: 7 in xs and 13 in xs, budget) == [7, 13]
    assert budget[0] > 0


@settings(derandomize=True, max_examples=15, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_hypothesis_drives_the_same_generator(data: st.DataObject) -> None:
    p = generate(HypothesisChooser(data), objects=3, writes=4)
    assert len(p.objects) == 3 and len(p.writes) == 4
    for o in p.objects:
        assert o.d.ncols >= 1 and o.d.sql.startswith(("SELECT", "WITH MUTUALLY RECURSIVE"))
