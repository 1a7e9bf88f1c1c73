"""Operator hydration statuses observed from Spark (issue 12, DESIGN §5.4, §8).

An index on a join + aggregate view over `MZSPARK_HYDRATION_ROWS` rows (default 200k; the
issue's ≥ 5M run: `make test-hydration-5m`) with `--workers 2`. While CREATE INDEX hydrates
in another session, the per-worker relation is polled: rows for every node id EXPLAIN prints,
for both workers, starting false; they flip while the dataflow is still hydrating; a node is
never true on a worker before the nodes it reads from; all true at the end; the aggregated
relations agree. The same after kill -9 and a restart; rows vanish on DROP; the system
variable turns reporting off.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from pathlib import Path

import asyncpg
import psycopg
import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.slow

ROWS = int(os.environ.get("MZSPARK_HYDRATION_ROWS", "200000"))
VIEW = ("SELECT a.k % 1000 AS g, count(*) AS c, sum(b.w) AS s FROM a JOIN b ON a.k = b.k "
        "GROUP BY a.k % 1000")

Snapshot = dict[tuple[int, int], bool]


def poll(mz: psycopg.Connection, object_id: str) -> Snapshot:
    rows = mz.execute("SELECT plan_node_id, worker_id, hydrated FROM "
                      "mz_internal.mz_compute_operator_hydration_statuses_per_worker "
                      "WHERE object_id = %s AND replica_id = 'u1'", (object_id,)).fetchall()
    return {(int(n), int(w)): h for n, w, h in rows}


def watch(server: MzServer, object_id: str | None, busy: threading.Event | None, name: str,
          until_s: float = 600) -> list[tuple[bool, Snapshot]]:
    """Snapshots (taken while `busy` was set?, statuses) until every status is true."""
    mz = server.connect(autocommit=True)
    out: list[tuple[bool, Snapshot]] = []
    deadline = time.monotonic() + until_s
    try:
        while time.monotonic() < deadline:
            oid = object_id or next(iter(mz.execute("SELECT id FROM mz_indexes WHERE name = %s", (name,)).fetchall()), (None,))[0]
            if oid is not None:
                object_id = oid
                during = busy is not None and busy.is_set()
                snap = poll(mz, oid)
                if snap:
                    out.append((during, snap))
                    if all(snap.values()) and not during:
                        return out
            time.sleep(0.02)
        raise AssertionError(f"not hydrated after {until_s} s: {out[-1:] if out else 'no rows'}")
    finally:
        mz.close()


def explained(mz: psycopg.Connection, index: str) -> dict[int, str]:
    (text,) = mz.execute(f"EXPLAIN PHYSICAL PLAN WITH (node_ids) FOR INDEX {index}").fetchone()
    return {int(m[2]): m[1] for m in re.finditer(r"^ *(.*?) // \{ node_id: (\d+) \}$", text, re.M)}


def check(snaps: list[tuple[bool, Snapshot]], nodes: set[int], parent: dict[int, int | None], hydrating: bool) -> None:
    keys = {(n, w) for n in nodes for w in (0, 1)}
    first = snaps[0][1]
    assert set(first) == keys and not any(first.values()), first
    seen: Snapshot = {}
    for _during, snap in snaps:
        assert set(snap) == keys, snap
        for k, h in snap.items():
            assert h or not seen.get(k), f"{k} went back to false"
            # a node is never hydrated on a worker before the nodes it reads from
            if h:
                for child, p in parent.items():
                    if p == k[0]:
                        assert snap[(child, k[1])], f"node {k[0]} true before its input {child} on worker {k[1]}"
        seen = snap
    assert all(snaps[-1][1].values())
    if hydrating:
        # flipped while the dataflow was still hydrating, not all at the end
        assert any(d and any(s.values()) and not all(s.values()) for d, s in snaps), [s for _d, s in snaps]


def lir(mz: psycopg.Connection, oid: str) -> dict[int, tuple[str, int | None]]:
    return {int(i): (op, None if p is None else int(p)) for i, op, p in mz.execute(
        "SELECT lir_id, operator, parent_lir_id FROM mz_introspection.mz_lir_mapping WHERE global_id = %s", (oid,))}


def test_hydration_statuses_per_node_per_worker(tmp_path: Path) -> None:
    server = MzServer(tmp_path / "mzdata", tmp_path / "server.log", extra_args=("--workers", "2"))
    server.start()
    try:
        mz = server.connect(autocommit=True)
        mz.execute("CREATE TABLE a (k int, v int)")
        mz.execute("CREATE TABLE b (k int, w int)")
        mz.execute(f"INSERT INTO a SELECT g % {ROWS // 4}, g FROM generate_series(1, {ROWS}) AS g")
        mz.execute(f"INSERT INTO b SELECT g, g % 7 FROM generate_series(1, {ROWS // 4}) AS g")
        mz.execute(f"CREATE VIEW v AS {VIEW}")

        busy = threading.Event()
        busy.set()
        errors: list[BaseException] = []

        def create() -> None:
            try:
                with server.connect(autocommit=True) as c:
                    c.execute("CREATE INDEX i ON v (g)")
            except BaseException as e:  # noqa: BLE001
                errors.append(e)
            finally:
                busy.clear()

        t = threading.Thread(target=create)
        t.start()
        snaps = watch(server, None, busy, "i")
        t.join()
        assert not errors, errors
        (oid,) = mz.execute("SELECT id FROM mz_indexes WHERE name = 'i'").fetchone()
        plan = explained(mz, "i")
        mapping = lir(mz, oid)
        assert {i: op for i, (op, _p) in mapping.items()} == plan
        parent = {i: p for i, (_op, p) in mapping.items()}
        check(snaps, set(plan), parent, hydrating=True)
        agg = dict((int(n), h) for n, h in mz.execute("SELECT plan_node_id, hydrated FROM mz_internal.mz_compute_operator_hydration_statuses "
                              "WHERE object_id = %s", (oid,)).fetchall())
        assert agg == dict.fromkeys(plan, True)
        row = mz.execute("SELECT hydrated, hydration_time > INTERVAL '0 s' FROM mz_internal.mz_compute_hydration_statuses "
                         "WHERE object_id = %s", (oid,)).fetchone()
        assert row == (True, True)
        assert mz.execute("SELECT hydrated FROM mz_internal.mz_hydration_statuses WHERE object_id = %s", (oid,)).fetchone() == (True,)
        expected = mz.execute(f"SELECT * FROM ({VIEW}) q ORDER BY g").fetchall()
        assert mz.execute("SELECT * FROM v ORDER BY g").fetchall() == expected
        mz.close()

        # a crash: every status false again at start, flipping as the dataflow rehydrates
        server.kill()
        server.start()
        snaps = watch(server, oid, None, "i")
        check(snaps, set(plan), parent, hydrating=False)
        mz = server.connect(autocommit=True)
        assert mz.execute("SELECT * FROM v ORDER BY g").fetchall() == expected

        # EXPLAIN ANALYZE: one row per node in EXPLAIN order; the Reduce holds state (records,
        # bytes) and took task time while hydrating (after the restart)
        rows = mz.execute("EXPLAIN ANALYZE MEMORY, CPU FOR INDEX i").fetchall()
        assert [(r[0].strip(), int(r[1])) for r in rows] == [(op, i) for i, op in plan.items()]
        red = next(i for i, op in plan.items() if op.startswith("Reduce"))
        (_op, _i, nbytes, records, elapsed) = next(r for r in rows if int(r[1]) == red)
        assert records > 0 and nbytes > 0 and elapsed.total_seconds() > 0, rows
        skew = mz.execute("EXPLAIN ANALYZE MEMORY WITH SKEW FOR INDEX i").fetchall()
        assert len(skew) == 2 * len(plan)
        red_rows = [r for r in skew if int(r[1]) == red]
        assert sum(r[8] for r in red_rows) == records and {int(r[2]) for r in red_rows} == {0, 1}
        for sql, state in (("EXPLAIN ANALYZE MEMORY FOR INDEX nope", "42P01"),
                           ("EXPLAIN ANALYZE CPU FOR MATERIALIZED VIEW a", "0A000"),
                           ("EXPLAIN ANALYZE MEMORY FOR INDEX v", "0A000")):
            with pytest.raises(psycopg.Error) as err:
                mz.execute(sql)
            assert err.value.sqlstate == state, sql

        # uint8 columns introspect for asyncpg
        async def browse() -> list:
            c = await asyncpg.connect(host=server.host, port=server.port, user="materialize", database="materialize")
            try:
                return await c.fetch("SELECT plan_node_id, worker_id, hydrated FROM "
                                     "mz_internal.mz_compute_operator_hydration_statuses_per_worker WHERE object_id = $1", oid)
            finally:
                await c.close()
        got = asyncio.run(browse())
        assert sorted((int(r[0]), int(r[1]), r[2]) for r in got) == sorted((n, w, True) for n in plan for w in (0, 1))

        # reporting off: a new index reports no operator rows, but still its hydration
        mz.execute("ALTER SYSTEM SET enable_compute_operator_hydration_status_logging = off")
        mz.execute("CREATE INDEX j ON v (c)")
        (jid,) = mz.execute("SELECT id FROM mz_indexes WHERE name = 'j'").fetchone()
        assert poll(mz, jid) == {}
        assert mz.execute("SELECT hydrated FROM mz_internal.mz_hydration_statuses WHERE object_id = %s", (jid,)).fetchone() == (True,)
        mz.execute("ALTER SYSTEM RESET enable_compute_operator_hydration_status_logging")

        # DROP: the rows vanish
        mz.execute("DROP INDEX i")
        assert poll(mz, oid) == {}
        assert lir(mz, oid) == {}
        assert mz.execute("SELECT count(*) FROM mz_internal.mz_compute_hydration_statuses WHERE object_id = %s", (oid,)).fetchone() == (0,)
        mz.close()
    finally:
        server.stop()
