"""Group commit (server/group_commit.py): concurrent writers share commits, each is
acknowledged with its commit's timestamp only after that commit recorded; groups stage
while the group before them records, yet record (become visible) in timestamp order with
the write lock held throughout; a waiter for the write lock gets in under continuous load;
a dropped table fails only its writer, a failed stage or record fails its whole group and
nothing else."""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass

import pytest

from server.group_commit import GroupCommitter, WriteLock, merge


@dataclass(frozen=True)
class T:
    id: str


class FakeStore:
    """Stage takes the next timestamp and 'writes files' (a sleep: the fsyncs); record
    'commits the catalog' (a sleep) and makes the timestamp visible. Checks the pipeline's
    invariants as it goes."""

    def __init__(self, lock: WriteLock, stage_s: float = 0.01, record_s: float = 0.01) -> None:
        self.lock = lock
        self.stage_s, self.record_s = stage_s, record_s
        self.mu = threading.Lock()
        self.ts = itertools.count(1)
        self.staged: list[int] = []  # timestamps in staging order
        self.recorded: list[tuple[int, list]] = []  # (ts, writes) in record order
        self.inflight = 0
        self.max_inflight = 0
        self.exclusive = False  # someone else holds the write lock (a DDL)
        self.violations: list[str] = []

    def stage(self, writes: list) -> tuple[int, list]:
        if not self.lock.locked() or self.exclusive:
            self.violations.append("stage without the write lock")
        with self.mu:
            ts = next(self.ts)
            self.staged.append(ts)
            self.inflight += 1
            self.max_inflight = max(self.max_inflight, self.inflight)
        time.sleep(self.stage_s)
        return ts, writes

    def record(self, staged: tuple[int, list]) -> int:
        ts, writes = staged
        if not self.lock.locked() or self.exclusive:
            self.violations.append("record without the write lock")
        time.sleep(self.record_s)
        with self.mu:
            if self.recorded and self.recorded[-1][0] > ts:
                self.violations.append(f"recorded {ts} after {self.recorded[-1][0]}")
            self.recorded.append((ts, writes))
            self.inflight -= 1
        return ts


def test_pipelined_groups_record_in_timestamp_order_and_ack_after_record() -> None:
    lock = WriteLock()
    store = FakeStore(lock)
    g = GroupCommitter(lock, store.stage, store.record, lambda w: None)
    acks: dict[int, int] = {}
    seen_at_ack: dict[int, bool] = {}

    def writer(w: int) -> None:
        for k in range(10):
            i = w * 100 + k
            ts = g.commit([(T("t"), [(i,)], [1])])
            acks[i] = ts
            with store.mu:
                seen_at_ack[i] = any(t == ts for t, _ in store.recorded)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.violations == []
    assert len(acks) == 160 and all(seen_at_ack.values())  # acknowledged only once recorded
    assert [ts for ts, _ in store.recorded] == sorted(store.staged)  # record order = ts order
    assert g.commits == len(store.recorded) < 160 and g.writes == 160  # writes were grouped
    assert g.overlapped > 0 and store.max_inflight == 2  # staging overlapped a record, never more
    rows_at = {ts: sorted(r for _, rows, _ in w for r in rows) for ts, w in store.recorded}
    for i, ts in acks.items():
        assert (i,) in rows_at[ts]  # acknowledged with the commit that holds its row
    assert all(len(w) == 1 for _, w in store.recorded)  # one batch per table per commit
    assert not lock.locked()  # the pipeline released the write lock once empty


def test_a_waiter_for_the_write_lock_gets_in_under_continuous_load() -> None:
    lock = WriteLock()
    store = FakeStore(lock, 0.005, 0.005)
    g = GroupCommitter(lock, store.stage, store.record, lambda w: None)
    stop = threading.Event()

    def writer(w: int) -> None:
        i = 0
        while not stop.is_set():
            g.commit([(T("t"), [(w, i)], [1])])
            i += 1

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    waits = []
    try:
        time.sleep(0.1)
        for _ in range(5):
            t0 = time.monotonic()
            with lock:  # a DDL statement
                waits.append(time.monotonic() - t0)
                store.exclusive = True
                n = len(store.recorded)
                time.sleep(0.02)
                assert len(store.recorded) == n  # nothing recorded while it holds the lock
                store.exclusive = False
            time.sleep(0.02)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert max(waits) < 2.0, waits
    assert store.violations == []
    assert [ts for ts, _ in store.recorded] == sorted(store.staged)


def test_failures_stay_with_their_writers() -> None:
    lock = WriteLock()
    dropped = T("gone")
    calls: list[list] = []
    ts = itertools.count(1)

    def stage(writes: list) -> tuple[int, list]:
        calls.append(writes)
        if any(r == ("stage boom",) for _, rows, _ in writes for r in rows):
            raise OSError("disk full")
        return next(ts), writes

    def record(staged: tuple[int, list]) -> int:
        if any(r == ("record boom",) for _, rows, _ in staged[1] for r in rows):
            raise OSError("catalog commit failed")
        return staged[0]

    def check(writes: list) -> None:
        if any(item is dropped for item, _, _ in writes):
            raise LookupError("dropped")

    g = GroupCommitter(lock, stage, record, check)
    with pytest.raises(LookupError):
        g.commit([(dropped, [(1,)], [1])])
    assert calls == []  # nothing was staged for it
    assert g.commit([(T("t"), [(1,)], [1])]) == 1
    with pytest.raises(OSError, match="disk full"):
        g.commit([(T("t"), [("stage boom",)], [1])])
    with pytest.raises(OSError, match="catalog commit failed"):
        g.commit([(T("t"), [("record boom",)], [1])])
    assert g.commit([(T("t"), [(2,)], [1])]) == 3  # the committer still works
    assert not lock.locked()


def test_merge_sums_per_table() -> None:
    a, b = T("a"), T("b")
    out = merge([(a, [(1,)], [1]), (b, [(2,)], [-1]), (a, [(3,)], [1])])
    assert [(i.id, r, d) for i, r, d in out] == [("a", [(1,), (3,)], [1, 1]), ("b", [(2,)], [-1])]
