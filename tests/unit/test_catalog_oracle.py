"""The timestamp oracle: monotonic write timestamps, applied-write reads, persistence."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from catalog.catalog import Catalog
from catalog.oracle import TimestampOracle


class FakeClock:
    def __init__(self, ms: int) -> None:
        self.ms = ms

    def __call__(self) -> float:
        return self.ms / 1000


@pytest.fixture
def cat(tmp_path: Path):
    c = Catalog(tmp_path)
    yield c
    c.close()


def test_write_ts_follows_clock_and_is_strictly_increasing(cat: Catalog) -> None:
    clock = FakeClock(1_000)
    o = TimestampOracle(cat, clock)
    assert o.write_ts() == 1_000
    assert o.write_ts() == 1_001  # clock did not move
    clock.ms = 5_000
    assert o.write_ts() == 5_000
    clock.ms = 10  # clock went backwards
    assert o.write_ts() == 5_001


def test_read_ts_is_last_applied_write(cat: Catalog) -> None:
    o = TimestampOracle(cat, FakeClock(1_000))
    assert o.read_ts() == 0
    t1 = o.write_ts()
    t2 = o.write_ts()
    assert o.read_ts() == 0  # nothing committed yet
    cat.commit_writes([], t1)  # commit_writes applies to the oracle
    assert o.read_ts() == t1
    cat.commit_writes([], t2)
    assert o.read_ts() == t2
    cat.commit_writes([], t1)  # out of order apply never moves read_ts back
    assert o.read_ts() == t2
    assert o.write_ts() > o.read_ts()
    assert cat.oracle_write_ts() == t2


def test_tick_persists_and_applies(cat: Catalog) -> None:
    clock = FakeClock(7_000)
    o = TimestampOracle(cat, clock)
    ts = o.tick()
    assert ts == 7_000 and o.read_ts() == 7_000 and cat.oracle_write_ts() == 7_000
    assert o.tick() == 7_001


def test_timestamps_survive_restart(tmp_path: Path) -> None:
    c = Catalog(tmp_path)
    o = TimestampOracle(c, FakeClock(50_000))
    ts = o.write_ts()
    c.commit_writes([], ts)
    c.close()
    c = Catalog(tmp_path)
    o = TimestampOracle(c, FakeClock(1_000))  # clock behind the persisted ts
    assert o.read_ts() == ts
    assert o.write_ts() == ts + 1
    c.close()


def test_concurrent_write_ts_distinct_and_increasing(cat: Catalog) -> None:
    o = TimestampOracle(cat, FakeClock(1_000))
    results: dict[int, list[int]] = {}

    def work(k: int) -> None:
        results[k] = [o.write_ts() for _ in range(500)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    all_ts = [t for r in results.values() for t in r]
    assert len(set(all_ts)) == len(all_ts) == 4000
    for r in results.values():
        assert r == sorted(r)
    assert max(all_ts) == 1_000 + 3_999
