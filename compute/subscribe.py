"""Subscriptions: transient maintained dataflows whose output goes to one client (DESIGN §6).

A subscription's dataflow is planned like a materialized view's and rendered by the same
maintained renderer (`compute.controller.renderer_for`), on the controller's thread, under
its work lock, after the installed dataflows of each pass:

- hydration at `as_of` (once every input is complete there): the output's snapshot is
  pushed at mz_timestamp = as_of (unless SNAPSHOT = false); frontier := as_of + 1;
- steps: the inputs' updates at each distinct write time t with frontier <= t <= U (U the
  inputs' upper, capped below UP TO) are one renderer step each, in time order; the step's
  output (consolidated) is pushed stamped t; frontier := t + 1. When more than EXACT_TIMES
  write times are pending (the subscription fell behind: a step costs more than the time
  between writes, or a past AS OF is caught up), they are one step stamped U instead, as
  the controller steps materialized views: the output at U is still exact, the times of
  the updates in between are coarsened to U. Either way the buffer holds the updates
  consolidated per timestamp and in timestamp order. A pass ends at frontier = U + 1;
  with PROGRESS a progress row (mz_timestamp = frontier, mz_progressed) then says every
  update below it was pushed. While a subscription is live the oracle ticks every second,
  so frontiers (progress rows, UP TO) advance with no writes.

Ends: the frontier reaching UP TO (`finished`); `cancel(err)` (client cancel, disconnect,
statement_timeout: the reader's side); the reader closing it; an error in a step (the
error is delivered to the reader after the rows before it). Once ended the controller
closes its renderer (the Spark state is freed) and forgets it.

Bounded buffer: at most `capacity` rows wait for the reader. The controller never waits
for a reader: a push that would exceed the capacity ends the subscription with 53200
("subscribe buffer exceeded"); the reader receives the complete timestamps buffered before
it, then the error. Compaction of every input is held at the subscription's frontier - 1.

Reader side (any thread): `poll(n)` takes buffered rows without blocking; `add_listener`
registers a callback run (from the controller's thread) when rows or the end arrive.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compute.expiration import dataflow_expiration
from compute.plan import lir
from compute.plan.temporal import is_temporal
from sql.errors import SqlError, before_since

log = logging.getLogger("mzspark.subscribe")

OUT_OF_MEMORY = "53200"
# at most this many pending write times are stepped one by one (exact timestamps); more
# are one step at the inputs' upper (a Spark step costs 0.1 s or more)
EXACT_TIMES = 4
TICK_MS = 1000


@dataclass(frozen=True, slots=True)
class Update:
    """One output row: data (`progressed` False) or progress (`diff`, `row` None)."""

    time: int
    progressed: bool
    diff: int | None
    row: tuple | None


class Subscription:
    """One live subscription: its dataflow (driven by `Subscribes`) and its buffer."""

    def __init__(self, sid: str, dataflow: lir.Dataflow, inputs: tuple, as_of: int, up_to: int | None,
                 snapshot: bool, progress: bool, capacity: int) -> None:
        self.id = sid
        self.dataflow = dataflow
        self.inputs = inputs  # compute.controller.Input
        self.as_of = as_of
        self.up_to = up_to
        self.snapshot = snapshot
        self.progress = progress
        self.capacity = capacity
        self.frontier = 0  # 0: not hydrated; else every update < frontier was pushed
        self.renderer: Any = None
        self.spark: Any = None
        self.until: int | None = None  # its expiration (compute.expiration): no update at >= until
        self.temporal = is_temporal(dataflow)  # mz_now() filters: steps also when updates fall due
        self.steps = 0
        self._lock = threading.Lock()
        self._buffer: deque[Update] = deque()
        self._listeners: list[Callable[[], None]] = []
        self._dirty = False
        self._ended = False  # no more pushes
        self._error: SqlError | None = None
        self.closed = False  # the reader is gone: tear down

    # -- reader side ------------------------------------------------------------------------------

    def poll(self, n: int | None = None) -> tuple[list[Update], bool]:
        """Up to `n` buffered updates (all with None), without blocking, and whether the
        subscription is over (nothing buffered and no more will come). Raises its error
        once the rows before it are taken."""
        with self._lock:
            self._dirty = False
            k = len(self._buffer) if n is None else min(n, len(self._buffer))
            out = [self._buffer.popleft() for _ in range(k)]
            over = self._ended and not self._buffer
            if over and not out and self._error is not None:
                raise self._error
            return out, over

    def add_listener(self, fn: Callable[[], None]) -> None:
        """`fn()` runs when something arrives; at once if something arrived since the
        last `poll`."""
        with self._lock:
            self._listeners.append(fn)
            now = self._dirty or self._ended
        if now:
            fn()

    def remove_listener(self, fn: Callable[[], None]) -> None:
        with self._lock:
            if fn in self._listeners:
                self._listeners.remove(fn)

    def cancel(self, err: SqlError | None) -> None:
        """End now (cancel, timeout, disconnect, the reader closing it): buffered rows are
        dropped; `err` (if any) is what the reader gets."""
        with self._lock:
            self._buffer.clear()
            if not self._ended or err is not None:
                self._error = err
            self._ended = True
            self.closed = True
        self._notify()

    @property
    def ended(self) -> bool:
        return self._ended

    # -- controller side --------------------------------------------------------------------------

    def push(self, updates: list[Update]) -> bool:
        """Append the updates of one timestamp; False (and the subscription ends with 53200)
        if they do not fit."""
        with self._lock:
            if self._ended:
                return False
            if len(self._buffer) + len(updates) > self.capacity:
                self._ended = True
                self._error = SqlError(
                    OUT_OF_MEMORY, f"subscribe buffer exceeded: more than {self.capacity} rows are waiting for the client",
                    hint="Read the subscription faster, or raise subscribe_buffer_rows.")
                ok = False
            else:
                self._buffer.extend(updates)
                ok = True
            self._dirty = True
        self._notify()
        return ok

    def finish(self, err: SqlError | None = None) -> None:
        """No more updates (UP TO reached, or an error after the buffered rows)."""
        with self._lock:
            if not self._ended:
                self._ended = True
                self._error = err
            self._dirty = True
        self._notify()

    def buffered(self) -> int:
        with self._lock:
            return len(self._buffer)

    def _notify(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for fn in listeners:
            try:
                fn()
            except Exception:  # noqa: BLE001 - a reader's callback never stops the controller
                log.debug("subscribe listener failed", exc_info=True)


class Subscribes:
    """The controller's live subscriptions (`compute.controller.Controller.subscribes`)."""

    def __init__(self, controller: Any) -> None:
        self.ctl = controller
        self._subs: dict[str, Subscription] = {}
        self._lock = threading.Lock()  # _subs (readers install while a pass runs)
        self._ids = itertools.count(1)
        self._last_tick = 0.0

    # -- installing -------------------------------------------------------------------------------

    def create(self, dataflow: lir.Dataflow, as_of: int, up_to: int | None, snapshot: bool, progress: bool,
               capacity: int) -> Subscription:
        """Install a subscription; it hydrates at the controller's next pass (woken now)."""
        from compute.controller import Input

        cat = self.ctl.catalog
        inputs = []
        for sid, _name in dataflow.sources:
            src = cat.get_item_by_id(sid)
            if src is None or src.shard_id is None:
                raise SqlError("XX000", f"subscribe input {sid} has no storage")
            inputs.append(Input(sid, src.shard_id, tuple(c.type for c in src.columns), src.kind == "materialized-view"))
        since = max((cat.shard_since(i.shard_id) for i in inputs), default=0)
        if as_of < since:
            raise before_since(as_of, since)
        sub = Subscription(f"t{next(self._ids)}", dataflow, tuple(inputs), as_of, up_to, snapshot, progress, capacity)
        with self._lock:
            self._subs[sub.id] = sub
        self.ctl._report_installed(sub.id, dataflow)  # mz_lir_mapping; every status false
        self.ctl._wake.set()
        return sub

    def live(self) -> list[Subscription]:
        with self._lock:
            return list(self._subs.values())

    def holds(self, shard_id: str) -> list[int]:
        """Compaction holds of the subscriptions reading `shard_id`."""
        return [(s.frontier or s.as_of + 1) - 1 for s in self.live()
                if not s.ended and any(i.shard_id == shard_id for i in s.inputs)]

    def close(self) -> None:
        for s in self.live():
            s.cancel(SqlError("57P01", "terminating connection due to administrator command"))
            self._teardown(s)
            self.ctl._report_dropped(s.id)
        with self._lock:
            self._subs.clear()

    # -- stepping (controller thread, under its work lock) ----------------------------------------

    def step_all(self) -> None:
        for s in sorted(self.live(), key=lambda s: int(s.id[1:])):
            if s.ended:
                self._teardown(s)
                self.ctl._report_dropped(s.id)
                with self._lock:
                    del self._subs[s.id]
                continue
            try:
                self._advance(s)
            except Exception as e:  # noqa: BLE001 - ends this subscription only
                s.finish(self._error_of(e))
        live = self.live()
        if any(not s.ended for s in live):
            self._tick()
        if any(s.ended for s in live):
            self.ctl._wake.set()  # tear them down at the next pass

    def _tick(self) -> None:
        """The oracle's read timestamp advances with no writes while subscriptions live,
        through the controller's tick (the coordinator's: it takes the write lock, so the read
        timestamp never passes a write group that has its timestamp but is not recorded yet)."""
        oracle = self.ctl.oracle
        if oracle.now_ms() - oracle.read_ts() >= TICK_MS and time.monotonic() - self._last_tick >= TICK_MS / 1000:
            self._last_tick = time.monotonic()
            if self.ctl.tick is not None:
                self.ctl.tick()
            else:  # a controller without a coordinator (tests): nothing writes concurrently
                oracle.tick()

    def _error_of(self, e: Exception) -> SqlError:
        from compute.render.errors import translate_spark_error

        lost = self.ctl.compute.lost_error(self.ctl.compute.current, e)
        if lost is not None:
            self.ctl._rehydrate = True
            return lost
        return e if isinstance(e, SqlError) else translate_spark_error(e)

    def _teardown(self, s: Subscription, why: str = "ended") -> None:
        if s.renderer is not None:
            try:
                s.renderer.close()
            except Exception:  # noqa: BLE001 - a lost driver holds nothing any more
                log.debug("closing subscription %s", s.id, exc_info=True)
            s.renderer = None
            log.info("subscription %s %s after %d steps", s.id, why, s.steps)

    def _upper(self, s: Subscription) -> int:
        """The greatest time at which every input is complete, below UP TO."""
        upper = self.ctl.oracle.read_ts()
        flows = self.ctl._dataflows
        for i in s.inputs:
            if i.materialized:
                up = flows[i.id].frontier if i.id in flows else self.ctl.catalog.shard_upper(i.shard_id)
                upper = min(upper, up - 1)
        if s.up_to is not None:
            upper = min(upper, s.up_to - 1)
        return upper

    def _session(self, s: Subscription, as_of: int) -> Any:
        spark = self.ctl.compute.spark()
        if s.spark is None or s.spark.sparkContext is not spark.sparkContext:
            from compute.render.spark import session_for

            cat = self.ctl.catalog
            s.spark = session_for(sum(b.rows for i in s.inputs for b in cat.shard_batches(i.shard_id, as_of)))
        return s.spark

    def _advance(self, s: Subscription) -> None:
        from compute.controller import due_at

        if s.up_to is not None and s.up_to <= s.as_of:
            s.finish()
            return
        upper = self._upper(s)
        start = s.frontier
        if s.frontier == 0:
            if upper < s.as_of:
                return  # AS OF in the future (or an input behind): wait
            self._hydrate(s)
            if s.ended:
                return
        elif s.renderer is None:
            self._hydrate(s, rebuild=True)  # the replica restarted: rebuilt at its frontier
        expires = s.until is not None and upper >= s.until
        if expires:
            assert s.until is not None
            upper = s.until - 1  # its output at `until` would miss the updates dropped there
        times = self._times(s, upper)
        steps = times if len(times) <= EXACT_TIMES else [upper]
        if s.temporal and upper >= s.frontier and (not steps or steps[-1] < upper) and due_at(s.renderer, upper):
            steps = [*steps, upper]  # temporal-filter updates fall due with no write
        for t in steps:
            if not self._step(s, t):
                return
        if upper >= s.frontier:
            s.frontier = upper + 1
        if s.progress and s.frontier > start and not s.push([Update(s.frontier, True, None, None)]):
            return
        if s.up_to is not None and s.frontier >= s.up_to:
            s.finish()
        elif expires and s.frontier >= (s.until or 0):
            # at its expiration: the replica restarts (compute.controller), and this
            # subscription is rebuilt at its frontier with the new replica's expiration
            self.ctl._expired = True
            self.ctl._wake.set()

    def replica_restarted(self) -> None:
        """Every subscription's Spark state is gone with the replica's: each is rebuilt at
        its frontier (nothing is sent again) at its next pass."""
        for s in self.live():
            if s.renderer is not None:
                self._teardown(s, "freed with the replica")
                self.ctl._observe(s.id, s.dataflow)  # every status false until rebuilt

    def _times(self, s: Subscription, upper: int) -> list[int]:
        """The distinct write times in [frontier, upper] of the inputs (every batch of a
        shard above a dataflow's read hold holds one write's time)."""
        cat = self.ctl.catalog
        times = {b.max_time for i in s.inputs for b in cat.shard_batches(i.shard_id, upper)
                 if s.frontier <= b.max_time <= upper}
        return sorted(times)

    def _hydrate(self, s: Subscription, rebuild: bool = False) -> None:
        """Build its dataflow at AS OF (the snapshot is sent if asked for), or (`rebuild`)
        at its frontier − 1, sending nothing: every update before the frontier was sent. Its
        expiration is the replica's now (compute.expiration.dataflow_expiration)."""
        from compute.controller import renderer_for
        from compute.render import oneshot
        from compute.render.spark import collect_arrow

        cat = self.ctl.catalog
        as_of = s.frontier - 1 if rebuild else s.as_of
        spark = self._session(s, as_of)
        # (the inputs' upper now, past the frontier: a rebuilt subscription makes progress
        # even when the replica's expiration is already behind it)
        until = dataflow_expiration(self.ctl.replica.expiration(self.ctl.expiration_offset()), bool(s.inputs),
                                    max(self._upper(s), as_of) + 1)
        leases = [cat.lease_batches(i.shard_id, as_of) for i in s.inputs]
        started = time.monotonic()
        try:
            renderer = renderer_for(spark, s.dataflow, {i.id: i.types for i in s.inputs})
            renderer.observer = self.ctl._observe(s.id, s.dataflow, spark)
            try:
                snaps = {i.id: oneshot.read_shard(spark, [b.path for b in lease.batches], i.types, as_of, True)
                         for i, lease in zip(s.inputs, leases, strict=True)}
                out = renderer.hydrate(snaps, time=as_of, until=until)
                rows = oneshot.arrow_rows(collect_arrow(out, small=False), s.dataflow.types) if s.snapshot and not rebuild else []
            except BaseException:
                renderer.close()
                raise
        finally:
            for lease in leases:
                lease.release()
        s.renderer, s.until = renderer, until
        s.frontier = as_of + 1
        renderer.observer = None
        took = time.monotonic() - started
        self.ctl._report_hydrated(s.id, took)
        log.info("subscription %s %s at %d in %.0f ms", s.id, "rebuilt" if rebuild else "hydrated", as_of, took * 1000)
        if rows:
            s.push(_updates(as_of, rows))

    def _step(self, s: Subscription, t: int) -> bool:
        """One step: the inputs' updates in [frontier, t], pushed at t."""
        from compute.controller import due_at
        from compute.render import oneshot
        from compute.render.spark import collect_arrow

        cat = self.ctl.catalog
        spark = self._session(s, t)
        started = time.monotonic()
        leases = []
        deltas = {}
        try:
            for i in s.inputs:
                lease = cat.lease_batches(i.shard_id, t)
                leases.append(lease)
                batches = [b for b in lease.batches if b.max_time >= s.frontier]
                if batches:
                    deltas[i.id] = oneshot.read_shard_range(spark, [b.path for b in batches], i.types, s.frontier - 1, t,
                                                            any(b.has_retractions for b in batches), sum(b.rows for b in batches))
            rows = []
            if deltas or (s.temporal and due_at(s.renderer, t)):
                out = s.renderer.step(deltas, time=t)
                rows = oneshot.arrow_rows(collect_arrow(out, small=False), s.dataflow.types)
                s.steps += 1
        finally:
            for lease in leases:
                lease.release()
        s.frontier = t + 1
        if deltas:
            log.info("subscription %s stepped to %d in %.0f ms (%d rows)", s.id, t, (time.monotonic() - started) * 1000, len(rows))
        return not rows or s.push(_updates(t, rows))


def _updates(t: int, rows: list[tuple[tuple, int]]) -> list[Update]:
    """A step's consolidated output as updates at `t` (retractions first, then by row)."""
    ordered = sorted(rows, key=lambda rd: (rd[1] > 0, repr(rd[0])))
    return [Update(t, False, d, r) for r, d in ordered]
