"""Group commit: writes that arrive together share one timestamp, one batch file per table
and one catalog transaction (one fsync of each), and each is acknowledged only once that
commit is durable.

A commit has two stages: *stage* (take a fresh timestamp, check the writes, write and fsync
their batch files) and *record* (one catalog transaction recording the files at that
timestamp, fsynced; the oracle's read timestamp advances to it on return). The stages are
pipelined: while group N records, group N+1 (the writes queued meanwhile) stages. So:
- groups stage one at a time, and take their timestamps in that order;
- a group records only after the group before it recorded (the stager waits for that turn
  before it lets the next group stage), so groups become durable and visible in timestamp
  order, and the read timestamp never passes a group that is still in flight;
- a write is acknowledged only after its group recorded; a group whose stage failed records
  nothing (its files are deleted) and the groups around it are unaffected.
The coordinator's write lock is held from the moment a group starts staging while none is in
flight until the pipeline is empty again, so DDL, UPDATE / DELETE and ticks (which read at
the read timestamp and take their own write timestamps under that lock) never interleave
with a group in flight. New groups do not start while someone waits for the lock (the
pipeline drains and lets them in).

Committing several sessions' writes at one timestamp is what a transaction holding all of
them would do: none of them read anything, so any order among them is a serial order.
A write whose table was dropped meanwhile fails alone; a failure of the commit itself (a
full disk) fails every write of that group, none is acknowledged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# (table item, rows, diffs) as server.writes commits them
Write = tuple[Any, list[tuple], list[int]]


class WriteLock:
    """The coordinator's write lock: a `threading.Lock` that counts the threads blocked on
    it, so that group commit can yield to them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._mu = threading.Lock()
        self._waiting = 0

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if not blocking:
            return self._lock.acquire(False)
        with self._mu:
            self._waiting += 1
        try:
            return self._lock.acquire(True, timeout)
        finally:
            with self._mu:
                self._waiting -= 1

    def acquire_uncounted(self) -> None:
        """Acquire without counting as a waiter (group commit's own acquisitions)."""
        self._lock.acquire()

    def release(self) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def waiting(self) -> int:
        return self._waiting

    def __enter__(self) -> WriteLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _held_lock() -> threading.Lock:
    lk = threading.Lock()
    lk.acquire()
    return lk


@dataclass
class _Pending:
    writes: list[Write]
    done: bool = False
    ts: int = 0
    error: BaseException | None = None
    wake: threading.Lock = field(default_factory=_held_lock)  # released to wake its writer


_YIELD_POLL_S = 0.0005  # how often a stager waiting for the lock's waiters to get in looks


class GroupCommitter:
    def __init__(self, lock: WriteLock, stage: Callable[[list[Write]], Any], record: Callable[[Any], int],
                 check: Callable[[list[Write]], None]) -> None:
        """`stage(writes)`: write their batch files durably at one new timestamp, returning
        what `record` needs; `record(staged)`: record them in one durable catalog
        transaction and return their timestamp (the caller holds `lock` for both);
        `check(writes)`: raise if they can no longer be committed."""
        self._lock = lock
        self._stage = stage
        self._record = record
        self._check = check
        self._mu = threading.Lock()
        self._queue: list[_Pending] = []
        self._staging = False  # a writer holds the stage slot (groups stage one at a time)
        self._inflight = 0  # groups started and not finished (the write lock is held while > 0)
        self._record_turn = threading.Lock()  # held by the group recording (or next to record)
        self.commits = 0  # group commits done (introspection for benches)
        self.writes = 0  # writes acknowledged through them
        self.overlapped = 0  # groups that staged while the group before them recorded

    def commit(self, writes: list[Write]) -> int:
        """Commit `writes` with whatever else arrives meanwhile; the commit's timestamp once
        it is durable. A writer sleeps until its group is done or it is handed the stage
        slot (each is woken alone: no thundering herd)."""
        p = _Pending(writes)
        with self._mu:
            self._queue.append(p)
            lead = not self._staging
            self._staging = True
        if not lead:
            p.wake.acquire()
        if not p.done:  # this writer holds the stage slot: it stages the queue as one group
            self._lead()
        if p.error is not None:
            raise p.error
        return p.ts

    def _lead(self) -> None:
        """Stage the queued writes as one group, wait for the turn to record, hand the stage
        slot on, record, wake the group's writers."""
        while self._lock.waiting():  # someone waits for the write lock: drain and let them in
            time.sleep(_YIELD_POLL_S)
        with self._mu:
            group, self._queue = self._queue, []
            self._inflight += 1
            first = self._inflight == 1
        staged: Any = None
        live: list[_Pending] = []
        has_turn = False
        try:
            try:
                if first:
                    self._lock.acquire_uncounted()
                for p in group:
                    try:
                        self._check(p.writes)
                        live.append(p)
                    except BaseException as e:  # noqa: BLE001 - handed to its writer
                        p.error = e
                if live:
                    staged = self._stage(merge([w for p in live for w in p.writes]))
                    self._record_turn.acquire()  # the group before this one has recorded
                    has_turn = True
            finally:
                self._pass_stage_slot()
            if has_turn:
                ts = self._record(staged)
                self.commits += 1
                self.writes += len(live)
                self.overlapped += not first
                for p in live:
                    p.ts = ts
        except BaseException as e:  # noqa: BLE001 - every writer of the group gets it
            for p in group:
                if p.error is None:
                    p.error = e
        finally:
            if has_turn:
                self._record_turn.release()
            with self._mu:
                self._inflight -= 1
                if self._inflight == 0:
                    self._lock.release()
            for p in group:
                p.done = True
                p.wake.release()

    def _pass_stage_slot(self) -> None:
        """The first queued writer gets the stage slot (it stages everything queued by the
        time it runs); with none queued the slot is free."""
        with self._mu:
            if self._queue:
                self._queue[0].wake.release()
            else:
                self._staging = False


def merge(writes: list[Write]) -> list[Write]:
    """One (item, rows, diffs) per table: Σ over a table's writes."""
    merged: dict[str, Write] = {}
    for item, rows, diffs in writes:
        cur = merged.setdefault(item.id, (item, [], []))
        cur[1].extend(rows)
        cur[2].extend(diffs)
    return list(merged.values())
