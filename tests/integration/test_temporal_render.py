"""Temporal filters in the incremental renderer (compute.render.delta + compute.render.temporal),
without the server: random insert / delete batches at steps one second apart (and steps with
no writes, which only advance time); after every step at time t the accumulated output must
equal the one-shot plan of the same query with mz_now() = t (the SELECT path: mz_now() a
literal) AND PostgreSQL 15 with mz_now() replaced by t. With an expiration (`until`) the
visible results are the same before it and fewer updates are held."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from compute.plan import lir
from tests.integration.test_delta_render import as_bag
from tests.pgref import reference_postgres

pytestmark = pytest.mark.spark

BASE = 1_700_000_000_000  # ms
TABLES = {"tt": ("a int", "ts timestamptz", "b bigint"), "uu": ("a int", "c int")}

# {now} is mz_now() in mzspark and the step's time in PostgreSQL ({now_ms} as a bigint)
QUERIES = {
    "window": "SELECT a, ts FROM tt WHERE {now} >= ts AND {now} < ts + INTERVAL '3 seconds'",
    "upper_only": "SELECT a, b FROM tt WHERE {now} <= ts + INTERVAL '2 seconds' AND a > 0",
    "bigint_bounds": "SELECT a FROM tt WHERE {now_ms} > b AND b + 2500 >= {now_ms}",
    "equal": "SELECT a FROM tt WHERE {now_ms} = b",
    "cast_mz_now": "SELECT a FROM tt WHERE {now_cast} > ts",
    "aggregate": "SELECT a, count(*) FROM tt WHERE {now} < ts + INTERVAL '4 seconds' GROUP BY a",
    "having": "SELECT a, max(ts) FROM tt GROUP BY a HAVING {now} < max(ts) + INTERVAL '3 seconds'",
    "join": "SELECT tt.a, uu.c FROM tt JOIN uu ON tt.a = uu.a WHERE {now} <= tt.ts + INTERVAL '2 seconds'",
}
STEPS = 8


def mz_sql(q: str) -> str:
    return q.format(now="mz_now()", now_ms="mz_now()", now_cast="mz_now()::timestamptz")


def pg_sql(q: str, t: int) -> str:
    ts = dt.datetime.fromtimestamp(t / 1000, tz=dt.UTC).isoformat()
    return q.format(now=f"'{ts}'::timestamptz", now_ms=str(t), now_cast=f"'{ts}'::timestamptz")


@pytest.fixture(scope="module")
def env() -> Iterator[dict[str, Any]]:
    from compute.render.spark import spark_session
    from tests.golden_runner import GoldenSession

    gs = GoldenSession()
    for t, cols in TABLES.items():
        gs.run(f"CREATE TABLE {t} ({', '.join(cols)})")
    spark = spark_session()
    with reference_postgres("pgtemporal-") as dsn, psycopg.connect(dsn, autocommit=True) as pg:
        pg.execute("SET TIME ZONE 'UTC'")
        for t, cols in TABLES.items():
            pg.execute(f"CREATE TABLE {t} ({', '.join(cols)})")
        yield {"gs": gs, "spark": spark, "pg": pg}
    gs.coord.close()
    gs.tmp.cleanup()


def plan(gs: Any, sql: str, now: int | None) -> lir.Dataflow:
    """The maintained dataflow of `sql` (now None), or its one-shot plan at `now`."""
    from compute.plan import pipeline
    from server.resolver import Resolver
    from sql import statements as st
    from sql.bind import Binder

    c = gs.coord
    target = st.classify(f"CREATE MATERIALIZED VIEW _temporal_mv AS {sql}")
    assert isinstance(target, st.CreateView)
    b = Binder(Resolver(c.catalog, gs.session, c.system))
    rel = b._finish_nested(b.bind_query(target.query, top=False))
    m = pipeline.optimize(pipeline.to_mir_rel(rel, now=now))
    return pipeline.dataflow(m, None, name="mv", single_time=now is not None)


class Inputs:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.acc: dict[str, dict[tuple[Any, ...], int]] = {t: {} for t in TABLES}

    def row(self, t: str, now: int) -> tuple[Any, ...]:
        if t == "uu":
            return (self.rng.choice([None, 1, 2, 3]), self.rng.choice([None, 10, 20]))
        ms = now + self.rng.randrange(-4000, 4000, 250)  # whole milliseconds (see below)
        ts = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
        return (self.rng.choice([None, 1, 2, 3]), self.rng.choice([ts, ts, None]), self.rng.choice([ms, ms + 500, None]))

    def batch(self, t: str, now: int, inserts: int, deletes: int) -> list[tuple[tuple[Any, ...], int]]:
        present = [r for r, d in self.acc[t].items() for _ in range(d)]
        rows = [(self.row(t, now), 1) for _ in range(inserts)]
        rows += [(r, -1) for r in self.rng.sample(present, min(deletes, len(present)))]
        for r, d in rows:
            self.acc[t][r] = self.acc[t].get(r, 0) + d
            if self.acc[t][r] == 0:
                del self.acc[t][r]
        return rows


def oneshot_at(env: dict[str, Any], sql: str, t: int, inputs: Inputs) -> dict[tuple[Any, ...], int]:
    from compute.render import oneshot

    spark = env["spark"]
    df = plan(env["gs"], sql, t)
    catalog = env["gs"].coord.catalog
    ids = {sid: qn.split(".")[-1] for sid, qn in df.sources}

    def read(i: str, ts: tuple) -> oneshot.Rel:
        types = tuple(c.type for c in catalog.get_item_by_id(i).columns)
        rows = list(inputs.acc[ids[i]].items())
        return oneshot.Rel(ctx.view(oneshot.constant_df(spark, rows, types), False), len(types))

    ctx = oneshot.RenderContext(spark, read, source_mfps=dict(df.source_mfps))
    try:
        r = oneshot.consolidate(oneshot.render(df.plan, ctx), ctx)
        return as_bag(oneshot.arrow_rows(spark.sql(r.sql).toArrow(), df.types))
    finally:
        ctx.release()


def pg_at(pg: psycopg.Connection, sql: str, t: int, inputs: Inputs) -> dict[tuple[Any, ...], int]:
    for name in TABLES:
        pg.execute(f"DELETE FROM {name}")
        rows = [r for r, d in inputs.acc[name].items() for _ in range(d)]
        if rows:
            with pg.cursor() as cur:
                cur.executemany(f"INSERT INTO {name} VALUES ({', '.join(['%s'] * len(rows[0]))})", rows)
    return as_bag([(tuple(r), 1) for r in pg.execute(pg_sql(sql, t)).fetchall()])


def run_steps(env: dict[str, Any], name: str, until: int | None, check: bool) -> tuple[list[dict], Any]:
    """Drive the dataflow of QUERIES[name]; the accumulated output after each step (and the
    dataflow, still open)."""
    from compute.render import oneshot
    from compute.render.delta import DeltaDataflow

    spark, gs = env["spark"], env["gs"]
    sql = QUERIES[name]
    df = plan(gs, mz_sql(sql), None)
    assert DeltaDataflow.supports(df)
    catalog = gs.coord.catalog
    ids = {sid: qn.split(".")[-1] for sid, qn in df.sources}
    types = {sid: tuple(c.type for c in catalog.get_item_by_id(sid).columns) for sid in ids}
    inputs = Inputs(sum(map(ord, name)))

    def frames(batches: dict[str, list]) -> dict[str, Any]:
        return {sid: oneshot.constant_df(spark, batches[ids[sid]], types[sid]) for sid in ids if ids[sid] in batches}

    flow = DeltaDataflow(spark, df)
    seen = []
    out: dict[tuple[Any, ...], int] = {}
    for step in range(STEPS + 1):
        t = BASE + step * 1000
        if step == 0:
            got = flow.hydrate(frames({n: inputs.batch(n, t, 10, 0) for n in TABLES}), time=t, until=until)
        elif step % 3 == 2:
            got = flow.step({}, time=t)  # no writes: time alone moves the results
        else:
            got = flow.step(frames({n: inputs.batch(n, t, 3, 2) for n in TABLES if inputs.rng.random() < 0.8}), time=t)
        delta = oneshot.arrow_rows(got.toArrow(), df.types)
        assert all(d != 0 for _, d in delta)
        for k, v in as_bag(delta).items():
            out[k] = out.get(k, 0) + v
        out = {k: v for k, v in out.items() if v}
        seen.append(dict(out))
        if check:
            assert out == oneshot_at(env, mz_sql(sql), t, inputs), f"step {step}: maintained != one-shot at {t}"
            assert out == pg_at(env["pg"], sql, t, inputs), f"step {step}: maintained != PostgreSQL at {t}"
    return seen, flow


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_temporal_filters_match_oneshot_and_postgres(env: dict[str, Any], name: str) -> None:
    seen, flow = run_steps(env, name, None, check=True)
    try:
        assert any(seen[i] != seen[i - 1] for i in range(2, len(seen), 3)), "no step without writes changed anything"
    finally:
        flow.close()


def test_expiration_drops_updates_past_until_and_keeps_results(env: dict[str, Any]) -> None:
    """With until after the last step the results are identical; fewer updates are held."""
    plain, f1 = run_steps(env, "upper_only", None, check=False)
    expiring, f2 = run_steps(env, "upper_only", BASE + STEPS * 1000 + 1, check=False)
    try:
        assert plain == expiring
        held, kept = f1.pending_updates(), f2.pending_updates()
        assert kept < held, (kept, held)
    finally:
        f1.close()
        f2.close()
