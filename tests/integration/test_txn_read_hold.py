"""A transaction's read timestamp holds compaction back: every read of the transaction sees
the inputs as of that timestamp even after other sessions' writes made the shards compact
(compaction merges every batch up to its `since` into one batch at `since`; without a hold,
a read at an earlier time would miss the merged rows)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest

from tests.integration.harness import MzServer


def test_a_transaction_reads_the_same_rows_after_compaction(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    t = uniq("t")
    with mz_server.connect() as w, mz_server.connect() as r:
        w.execute(f"CREATE TABLE {t} (n int)")
        for i in range(5):
            w.execute(f"INSERT INTO {t} VALUES ({i})")
        r.execute("BEGIN")
        first = r.execute(f"SELECT count(*), sum(n) FROM {t}").fetchone()
        assert first == (5, 10)
        # 40 more single-row batches: past 32 batches the shard compacts in the background
        for i in range(5, 45):
            w.execute(f"INSERT INTO {t} VALUES ({i})")
        # wait for the compaction: the table's since (read frontier) moves off 0
        deadline = time.monotonic() + 60
        while True:
            since = json.loads(w.execute(f"EXPLAIN TIMESTAMP AS JSON FOR SELECT * FROM {t}").fetchone()[0])["determination"]["since"]
            if since and since[0] > 0:
                break
            assert time.monotonic() < deadline, "the shard never compacted"
            time.sleep(0.5)
        again = r.execute(f"SELECT count(*), sum(n) FROM {t}").fetchone()
        r.execute("COMMIT")
        assert again == first
        assert r.execute(f"SELECT count(*) FROM {t}").fetchone() == (45,)


@pytest.mark.slow
def test_a_transaction_reads_maintained_objects_at_its_timestamp(mz_server: MzServer, uniq: Callable[[str], str]) -> None:
    """The same through an indexed view (a full read and a fast-path lookup) and a materialized
    view that step meanwhile; 40 steps compact the view's shard."""
    t, v, mv = uniq("t"), uniq("v"), uniq("mv")
    with mz_server.connect() as w, mz_server.connect() as r:
        w.execute(f"CREATE TABLE {t} (k int, n int)")
        w.execute(f"INSERT INTO {t} SELECT g % 3, g FROM generate_series(1, 5) AS g")
        w.execute(f"CREATE VIEW {v} AS SELECT k, count(*) AS c, sum(n) AS s FROM {t} GROUP BY k")
        w.execute(f"CREATE INDEX {v}_k ON {v} (k)")
        w.execute(f"CREATE MATERIALIZED VIEW {mv} AS SELECT count(*) AS c, sum(n) AS s FROM {t}")
        r.execute("BEGIN")
        first = (r.execute(f"SELECT * FROM {v} ORDER BY k").fetchall(), r.execute(f"SELECT * FROM {v} WHERE k = 1").fetchall(),
                 r.execute(f"SELECT * FROM {mv}").fetchall())
        for i in range(6, 46):
            w.execute(f"INSERT INTO {t} VALUES ({i % 3}, {i})")
        assert w.execute(f"SELECT * FROM {mv}").fetchall() == [(45, 1035)]
        again = (r.execute(f"SELECT * FROM {v} ORDER BY k").fetchall(), r.execute(f"SELECT * FROM {v} WHERE k = 1").fetchall(),
                 r.execute(f"SELECT * FROM {mv}").fetchall())
        r.execute("COMMIT")
        assert again == first
        assert first[2] == [(5, 15)]
