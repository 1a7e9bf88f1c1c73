"""Group commit: writes that arrive together share one timestamp, one batch file per table
and one catalog transaction (one fsync of each), and each is acknowledged only once that
commit is durable.

A writer enqueues its writes; if no commit is running it becomes the leader: it takes every
write queued so far, commits them as one (under the coordinator's write lock), wakes their
writers, and hands leadership on. Writes queued while a commit runs go together in the next.
Committing several sessions' writes at one timestamp is what a transaction holding all of
them would do: none of them read anything, so any order among them is a serial order.
A write whose table was dropped meanwhile fails alone; a failure of the commit itself (a
full disk) fails every write of that group, none is acknowledged.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# (table item, rows, diffs) as server.writes commits them
Write = tuple[Any, list[tuple], list[int]]


@dataclass
class _Pending:
    writes: list[Write]
    done: bool = False
    ts: int = 0
    error: BaseException | None = None


class GroupCommitter:
    def __init__(self, lock: threading.Lock, commit: Callable[[list[Write]], int],
                 check: Callable[[list[Write]], None]) -> None:
        """`commit(writes)`: write and record them durably at one new timestamp (the caller
        holds `lock`); `check(writes)`: raise if they can no longer be committed."""
        self._lock = lock
        self._commit = commit
        self._check = check
        self._cv = threading.Condition()
        self._queue: list[_Pending] = []
        self._leading = False
        self.commits = 0  # group commits done (introspection for benches)
        self.writes = 0  # writes acknowledged through them

    def commit(self, writes: list[Write]) -> int:
        """Commit `writes` with whatever else arrives meanwhile; the commit's timestamp once
        it is durable."""
        p = _Pending(writes)
        with self._cv:
            self._queue.append(p)
            while not p.done and self._leading:
                self._cv.wait()
            if not p.done:
                self._leading = True
                group, self._queue = self._queue, []
        if not p.done:
            try:
                self._run(group)
            finally:
                with self._cv:
                    self._leading = False
                    self._cv.notify_all()
        if p.error is not None:
            raise p.error
        return p.ts

    def _run(self, group: list[_Pending]) -> None:
        try:
            with self._lock:
                live = []
                for p in group:
                    try:
                        self._check(p.writes)
                        live.append(p)
                    except BaseException as e:  # noqa: BLE001 - handed to its writer
                        p.error = e
                if live:
                    ts = self._commit(merge([w for p in live for w in p.writes]))
                    self.commits += 1
                    self.writes += len(live)
                    for p in live:
                        p.ts = ts
        except BaseException as e:  # noqa: BLE001 - every writer of the group gets it
            for p in group:
                if p.error is None:
                    p.error = e
        finally:
            for p in group:
                p.done = True


def merge(writes: list[Write]) -> list[Write]:
    """One (item, rows, diffs) per table: Σ over a table's writes."""
    merged: dict[str, Write] = {}
    for item, rows, diffs in writes:
        cur = merged.setdefault(item.id, (item, [], []))
        cur[1].extend(rows)
        cur[2].extend(diffs)
    return list(merged.values())
