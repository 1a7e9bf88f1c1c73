"""The timestamp oracle (EpochMilliseconds timeline).

Invariants:
- `write_ts()` returns `max(now_ms, last + 1)`: strictly increasing across callers and
  across restarts (it starts from the catalog's persisted last write timestamp).
- `read_ts()` is the last *applied* write timestamp: the largest `ts` whose
  `Catalog.commit_writes(..., ts)` has returned. Every acknowledged write is visible at
  `read_ts()`, and no write still in flight can land at or below it, because every later
  `write_ts()` is strictly greater than every timestamp handed out before. (Reading at the
  last *assigned* timestamp instead could let two reads at the same timestamp disagree
  while that write is in flight.)

Persistence: `Catalog.commit_writes(writes, ts)` persists `ts` in the same transaction as
the batches, and then calls `apply_write(ts)` on every oracle constructed on that catalog
(a commit listener), so callers need not call `apply_write` themselves. `tick()` persists
and applies a fresh timestamp without data (the once-a-second tick that lets temporal
filters progress): timestamps exposed to readers are always durable first.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from catalog.catalog import Catalog


class TimestampOracle:
    def __init__(self, catalog: Catalog, clock: Callable[[], float] = time.time) -> None:
        self._catalog = catalog
        self._clock = clock
        self._lock = threading.Lock()
        persisted = catalog.oracle_write_ts()
        self._last_write = persisted
        self._read = persisted
        # read timestamps handed to readers that may read maintained outputs (reader_ts)
        self._reader_times: set[int] = set()
        catalog.add_commit_listener(self.apply_write)

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    def write_ts(self) -> int:
        """A fresh write timestamp, greater than any handed out before."""
        with self._lock:
            ts = max(self.now_ms(), self._last_write + 1)
            self._last_write = ts
            return ts

    def read_ts(self) -> int:
        """The timestamp for strict serializable reads: the last applied write timestamp."""
        with self._lock:
            return self._read

    def reader_ts(self) -> int:
        """`read_ts()` for a reader, remembered as a time no step of a maintained dataflow
        may span: a step stamps its output updates with its upper, so one spanning a
        reader's time would show that reader the output without writes at or before it
        (compute.controller; see `step_upper`)."""
        with self._lock:
            self._reader_times.add(self._read)
            return self._read

    def step_upper(self, frontier: int) -> tuple[int, int | None]:
        """(`read_ts()`, the least reader time t with frontier <= t < read_ts(), or None),
        atomically: a reader given its time after this gets one >= read_ts()."""
        with self._lock:
            up = self._read
            return up, min((t for t in self._reader_times if frontier <= t < up), default=None)

    def forget_reader_times(self, below: int) -> None:
        """Reader times below every maintained dataflow's frontier no longer matter."""
        with self._lock:
            self._reader_times = {t for t in self._reader_times if t >= below}

    def peek_write_ts(self) -> int:
        """The last write timestamp handed out (applied or not)."""
        with self._lock:
            return self._last_write

    def apply_write(self, ts: int) -> None:
        """Mark writes at `ts` as committed (called by `Catalog.commit_writes`)."""
        with self._lock:
            if ts > self._read:
                self._read = ts
            if ts > self._last_write:
                self._last_write = ts

    def tick(self) -> int:
        """Advance the read timestamp to a fresh, persisted timestamp; returns it."""
        ts = self.write_ts()
        self._catalog.commit_writes([], ts)
        return ts
