"""The compute controller: one maintained dataflow per index and materialized view (DESIGN §5.3).

Time. A dataflow has a frontier F: its output is complete for every time < F. A step reads
every input update with F <= time <= U, where U (the step's time) is the least upper of its
inputs — a table is complete up to the oracle's read timestamp, a materialized view up to
its own frontier − 1 — hands them to the renderer as one untimed step, and then F := U + 1.
Steps run on one background thread, dataflows in dependency order (item ids ascend along
dependencies), woken by every committed write (a catalog commit listener) and once a second.

Materialized views append their output updates, stamped with the step's time, to their own
shard through the same durable path as table writes (fsynced Parquet batch + catalog
commit) together with the shard's new upper, so a frontier advances only once its output is
durable. At start (or after the Spark driver is lost) a view resumes from its persisted upper:
its inputs are hydrated at upper − 1 and nothing is rewritten. Compaction of every shard a
dataflow reads is held at its frontier − 1 (`Catalog.set_read_hold`).

An index's state is its output collection, kept in Spark (`IndexState`), rebuilt at start.

Temporal filters (mz_now(); DESIGN §7): renderers get the step's time; a dataflow with one
is also stepped without input updates when its pending updates come due, and while one is
installed the controller ticks the oracle once a second so time passes without writes.
Dataflow expiration (compute.expiration): each dataflow hydrates with an `until` from the
replica's expiration; a step that would take a frontier past it restarts the replica instead.

Errors in a step (division by zero, a failed cast, ...) put only that object in an error
state: reads of it fail with the error, the step is retried at every later wake-up (the
renderer's state is unchanged by a failed step), and a successful step clears it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from catalog.catalog import Catalog, Item
from catalog.oracle import TimestampOracle
from compute.expiration import Replica, dataflow_expiration
from compute.plan import lir
from compute.plan.temporal import is_temporal
from sql.errors import QUERY_CANCELED, SqlError

log = logging.getLogger("mzspark.controller")

REPLICA_ID = "u1"
# the system variable switching operator hydration reporting on and off (Materialize's name)
HYDRATION_LOGGING = "enable_compute_operator_hydration_status_logging"
TICK_S = 1.0
# compact a materialized view's shard once it holds this many batches
COMPACT_AFTER_BATCHES = 32


def renderer_for(spark: Any, dataflow: lir.Dataflow, input_types: dict, index: bool = False) -> Any:
    """The maintained renderer of a dataflow: the delta renderer where it supports the
    plan, else the recompute reference. An index's delta renderer stores each step's output
    keyed as the index's spine keeps it (compute.render.index_state)."""
    from compute.plan.lookup import index_keys
    from compute.render.delta import DeltaDataflow

    if DeltaDataflow.supports(dataflow):
        return DeltaDataflow(spark, dataflow, index_keys(dataflow.plan) if index else None)
    from compute.render.recompute import RecomputeDataflow

    return RecomputeDataflow(spark, dataflow, input_types)


@dataclass(frozen=True, slots=True)
class Input:
    id: str
    shard_id: str
    types: tuple
    materialized: bool  # a materialized view's shard (complete below its frontier)


@dataclass(eq=False)
class Maintained:
    """One installed dataflow."""

    item: Item
    dataflow: lir.Dataflow
    inputs: tuple[Input, ...]
    frontier: int = 0  # every time < frontier is complete (0: not hydrated)
    renderer: Any = None
    error: SqlError | None = None
    error_at: int = 0  # the time of the step that failed
    state: Any = None  # an index's IndexState
    # the least time the index state is valid at (the last step that changed it)
    valid_from: int = 0
    steps: int = 0
    spark: Any = None  # the SparkSession its work runs in
    temporal: bool = False  # has temporal filters: stepped when its pending updates are due
    until: int | None = None  # its expiration: it keeps no update at a time >= until

    @property
    def is_mv(self) -> bool:
        return self.item.kind == "materialized-view"


@dataclass
class Controller:
    catalog: Catalog
    oracle: TimestampOracle
    compute: Any  # server.compute.Compute: spark(), lost_error()
    plan: Callable[[Item], lir.Dataflow]  # the maintained dataflow of an index / materialized view
    # advances the oracle's read timestamp to the wall clock (the coordinator's tick, which
    # takes the write lock); called once a second while a temporal dataflow is installed
    tick: Callable[[], object] | None = None
    # compute_replica_expiration_offset in ms (0: off), read when a dataflow hydrates
    expiration_offset: Callable[[], int] = lambda: 0
    # the read timestamps of open transactions: every shard stays readable at them
    txn_holds: Callable[[], list[int]] = lambda: []
    replica: Replica = field(default_factory=lambda: Replica(int(time.time() * 1000)))
    _dataflows: dict[str, Maintained] = field(default_factory=dict)
    _work: threading.RLock = field(default_factory=threading.RLock)  # one step (or install) at a time
    _changed: threading.Condition = field(default_factory=threading.Condition)  # frontiers / errors
    _wake: threading.Event = field(default_factory=threading.Event)
    _closed: threading.Event = field(default_factory=threading.Event)
    _rehydrate: bool = False
    _expired: bool = False  # a dataflow reached its expiration: the replica restarts
    _thread: threading.Thread | None = None
    _hydration: Any = None  # compute.hydration.Tracker (created at first use)
    subscribes: Any = None  # compute.subscribe.Subscribes: stepped after the dataflows of each pass

    def __post_init__(self) -> None:
        from compute.subscribe import Subscribes

        self.subscribes = Subscribes(self)

    # -- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Install every existing index and materialized view and start stepping; they
        rehydrate on the controller's thread (a view is readable meanwhile below its
        persisted upper; an index serves reads once hydrated)."""
        self.catalog.add_commit_listener(self._on_commit)
        self.catalog.set_read_hold(self._read_hold)
        for item in sorted(self.catalog.items(), key=lambda i: i.id_num):
            if item.kind in ("materialized-view", "index"):
                try:
                    self.install(item, hydrate=False)
                except SqlError as e:
                    log.error("cannot install %s: %s", item.qualified_name, e)
        self._thread = threading.Thread(target=self._loop, name="compute-controller", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._closed.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        with self._work:
            self.subscribes.close()
            for m in list(self._dataflows.values()):
                self._free(m)
            self._dataflows.clear()
        if self._hydration is not None:
            from compute.render.listener import remove_listeners

            remove_listeners()
            self._hydration.close()

    def driver_restarted(self) -> None:
        """The Spark driver was lost and restarted: every dataflow rehydrates."""
        self._rehydrate = True
        self._wake.set()

    # -- installing and dropping ------------------------------------------------------------------

    def install(self, item: Item, df: lir.Dataflow | None = None, hydrate: bool = True) -> None:
        """Plan (unless given `df`) and hydrate the dataflow of a new (or, at start,
        existing) index or materialized view. Planning errors (0A000 ...) raise; a data
        error during hydration puts the object in an error state."""
        if df is None:
            df = self.plan(item)
        inputs = []
        for sid, _name in df.sources:
            src = self.catalog.get_item_by_id(sid)
            if src is None or src.shard_id is None:
                raise SqlError("XX000", f"maintained input {sid} has no storage")
            inputs.append(Input(sid, src.shard_id, tuple(c.type for c in src.columns), src.kind == "materialized-view"))
        m = Maintained(item, df, tuple(inputs), temporal=is_temporal(df))
        self._report_installed(m.item.id, m.dataflow)
        if m.is_mv and item.shard_id is not None:
            m.frontier = self.catalog.shard_upper(item.shard_id)  # its durable output
        if not hydrate:
            self._dataflows[item.id] = m
            self._wake.set()
            return
        with self._work:
            self._dataflows[item.id] = m
            self._hydrate(m)
            if m.error is not None and m.error.sqlstate == "0A000":
                # an unsupported construct found while rendering: refused at CREATE
                del self._dataflows[item.id]
                self._free(m)
                self._report_dropped(item.id)
                raise m.error
        self._notify()

    def sync(self) -> None:
        """Stop the dataflows of dropped objects and free their Spark state."""
        with self._work:
            for oid in [i for i in self._dataflows if self.catalog.get_item_by_id(i) is None]:
                self._free(self._dataflows.pop(oid))
                self._report_dropped(oid)
        self._notify()

    def _free_renderer(self, m: Maintained) -> None:
        try:
            m.renderer.close()
        except Exception:  # noqa: BLE001
            log.debug("closing %s", m.item.id, exc_info=True)
        m.renderer = None

    def _free(self, m: Maintained) -> None:
        for held in (m.renderer, m.state):
            if held is not None:
                try:
                    held.close()
                except Exception:  # noqa: BLE001 - a lost driver holds nothing any more
                    log.debug("closing %s", m.item.id, exc_info=True)
        m.renderer = m.state = None

    # -- reads ------------------------------------------------------------------------------------

    def maintained(self, object_id: str) -> bool:
        return object_id in self._dataflows

    def installed(self, object_id: str) -> Maintained | None:
        return self._dataflows.get(object_id)

    def frontiers(self) -> list[tuple[str, str, int]]:
        """(object_id, replica_id, frontier) of every installed dataflow."""
        return [(i, REPLICA_ID, m.frontier) for i, m in sorted(list(self._dataflows.items()), key=lambda kv: kv[1].item.id_num)]

    def expirations(self) -> list[tuple[str, str, int | None, int, int, int]]:
        """(object_id, replica_id, expiration, pending updates, updates held in Spark state,
        replica start) of every hydrated dataflow, subscriptions included (under their
        transient ids); counted in Spark after any step in progress."""
        out = []
        with self._work:
            for oid, m in sorted(self._dataflows.items(), key=lambda kv: kv[1].item.id_num):
                if m.renderer is None:
                    continue
                pending = m.renderer.pending_updates() if hasattr(m.renderer, "pending_updates") else 0
                held = sum(m.renderer.state_rows().values()) + (m.state.rows() if m.state is not None else 0)
                out.append((oid, REPLICA_ID, m.until, pending, held, self.replica.started))
            for sub in sorted(self.subscribes.live(), key=lambda sub: int(sub.id[1:])):
                r = sub.renderer
                if r is None or sub.ended:
                    continue
                pending = r.pending_updates() if hasattr(r, "pending_updates") else 0
                out.append((sub.id, REPLICA_ID, sub.until, pending, sum(r.state_rows().values()), self.replica.started))
        return out

    def error(self, object_id: str) -> SqlError | None:
        m = self._dataflows.get(object_id)
        return m.error if m is not None else None

    def wait_until(self, object_id: str, ts: int, check: Callable[[], None] = lambda: None) -> None:
        """Return once the object's frontier is > ts (its output at ts is complete); raise
        its error if it is in an error state, or `check()`'s (a cancelled statement)."""
        self._wake.set()
        with self._changed:
            while True:
                m = self._dataflows.get(object_id)
                if m is None:
                    return
                if m.error is not None and m.error_at >= ts:
                    raise m.error
                if m.frontier > ts and m.error is None:
                    return
                check()
                if self._closed.is_set():
                    raise SqlError(QUERY_CANCELED, "the server is shutting down")
                self._changed.wait(0.05)

    def index_state(self, on_id: str, ts: int, check: Callable[[], None] = lambda: None,
                    patience_s: float = 5.0, lookup: tuple[str, Any] | None = None) -> tuple[str, Callable[[], None]] | None:
        """The state of an index on `on_id` valid at `ts` (a SELECT of its rows, and `release`
        to call when done), waiting up to `patience_s` for a hydrated index to catch up; None
        when no index has it (the caller then reads the object itself). `lookup`: (index id,
        key tuples) — only that index's rows with those keys (a fast-path peek)."""
        self._wake.set()
        deadline = time.monotonic() + patience_s
        with self._changed:
            while True:
                ready = [m for m in self._dataflows.values()
                         if m.item.kind == "index" and m.item.on_id == on_id and m.state is not None and m.error is None
                         and (lookup is None or m.item.id == lookup[0])]
                for m in ready:
                    if m.valid_from <= ts < m.frontier:
                        return m.state.acquire(lookup[1] if lookup is not None else None)
                if not any(m.frontier <= ts for m in ready) or time.monotonic() > deadline:
                    return None
                check()
                self._changed.wait(0.05)

    def read_window(self, on_id: str) -> tuple[str, int, int] | None:
        """(index id, first time, frontier) of the times an index on `on_id` can answer now."""
        for m in list(self._dataflows.values()):
            if m.item.kind == "index" and m.item.on_id == on_id and m.state is not None and m.error is None:
                return m.item.id, m.valid_from, m.frontier
        return None

    def indexed(self) -> dict[str, str]:
        """The index serving reads of each indexed object: on_id -> its qualified name."""
        out: dict[str, str] = {}
        for m in sorted(list(self._dataflows.values()), key=lambda m: m.item.id_num):
            if m.item.kind == "index" and m.item.on_id is not None:
                out.setdefault(m.item.on_id, m.item.qualified_name)
        return out

    def index_keys(self) -> dict[str, list[tuple[str, str, tuple]]]:
        """The indexes serving reads of each indexed object: on_id -> [(index id, qualified
        name, key expressions)], oldest first."""
        from compute.plan.lookup import index_keys

        out: dict[str, list[tuple[str, str, tuple]]] = {}
        for m in sorted(list(self._dataflows.values()), key=lambda m: m.item.id_num):
            if m.item.kind == "index" and m.item.on_id is not None:
                out.setdefault(m.item.on_id, []).append((m.item.id, m.item.qualified_name, index_keys(m.dataflow.plan)))
        return out

    def indexes_on(self, on_id: str) -> list[Item]:
        return [m.item for m in list(self._dataflows.values()) if m.item.kind == "index" and m.item.on_id == on_id]

    # -- stepping ---------------------------------------------------------------------------------

    def _on_commit(self, ts: int) -> None:
        self._wake.set()

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def _read_hold(self, shard_id: str) -> int | None:
        """Compaction of `shard_id` may advance its since at most to this."""
        holds = [m.frontier - 1 for m in list(self._dataflows.values())
                 if any(i.shard_id == shard_id for i in m.inputs)]
        for m in list(self._dataflows.values()):  # a view's own shard: reads at its frontier
            if m.is_mv and m.item.shard_id == shard_id:
                holds.append(m.frontier - 1)
        holds.extend(self.subscribes.holds(shard_id))
        holds.extend(self.txn_holds())
        return min(holds) if holds else None

    def _loop(self) -> None:
        while not self._closed.is_set():
            self._wake.wait(TICK_S)
            self._tick()
            self._wake.clear()
            if self._closed.is_set():
                return
            try:
                self.step_all()
            except Exception:  # noqa: BLE001 - the loop must survive anything
                log.exception("compute controller step failed")
                time.sleep(0.2)

    def _tick(self) -> None:
        """The oracle's once-a-second tick, while a temporal filter needs time to pass."""
        if self.tick is not None and any(m.temporal for m in list(self._dataflows.values())):
            try:
                self.tick()
            except Exception:  # noqa: BLE001 - the next pass ticks again
                log.exception("oracle tick failed")

    def _restart_replica(self) -> None:
        """The replica restarts (compute.expiration): every dataflow's Spark state is freed
        and rebuilt from its inputs, with an expiration computed from the new start; an
        index is unreadable (reads fall back to its object) until then, a view's durable
        output stands."""
        self._expired = False
        self.replica.restart(self.oracle.now_ms())
        log.warning("replica expired: restarting (restart %d), every dataflow rehydrates", self.replica.restarts)
        with self._changed:
            for m in self._dataflows.values():
                if m.state is not None:
                    m.state.retire()  # a read in progress keeps it until it is done
                    m.state = None
                self._free(m)
                m.until = None
                if not m.is_mv:
                    m.frontier = 0
        self.subscribes.replica_restarted()

    def step_all(self) -> None:
        """One pass: every dataflow (in dependency order) steps to its inputs' upper."""
        with self._work:
            if self._expired:
                self._restart_replica()
            if self._rehydrate:
                self._rehydrate = False
                with self._changed:
                    for m in self._dataflows.values():
                        m.renderer = m.state = m.spark = None  # held in the lost JVM
                        self._observe(m.item.id, m.dataflow)  # every status false until rehydrated
                        if not m.is_mv:  # a view's output is durable: its frontier stands
                            m.frontier = 0
            for m in sorted(self._dataflows.values(), key=lambda m: m.item.id_num):
                if self._closed.is_set():
                    return
                if m.renderer is None:
                    if m.error is None or self._upper(m) > m.error_at:
                        self._hydrate(m)
                else:
                    self._step(m)
            self.subscribes.step_all()
            frontiers = [m.frontier for m in self._dataflows.values()]
            self.oracle.forget_reader_times(min(frontiers) if frontiers else self.oracle.read_ts())
        self._notify()

    def _upper(self, m: Maintained) -> int:
        """The greatest time at which every input of `m` is complete."""
        # (a failed step is retried only past its failure: reader times at or before it
        # are answered by the error)
        lower = m.frontier if m.error is None else max(m.frontier, m.error_at + 1)
        upper, reader = self.oracle.step_upper(lower)
        for i in m.inputs:
            if i.materialized:
                up = self._dataflows[i.id].frontier if i.id in self._dataflows else self.catalog.shard_upper(i.shard_id)
                upper = min(upper, up - 1)
        # A step stamps all its updates with its upper: one spanning a reader's time would
        # show that reader the output without the updates at or before it. Such a step stops
        # at the reader's time; the next pass (right away) steps on.
        if reader is not None and reader < upper:
            self._wake.set()
            return reader
        return upper

    def _spark_session(self, m: Maintained, as_of: int | None = None) -> Any:
        """The Spark session of `m`'s work, chosen at hydration by its inputs' size (small
        inputs: one shuffle partition, no code generation; compute.render.spark)."""
        spark = self.compute.spark()
        if m.spark is None or m.spark.sparkContext is not spark.sparkContext:
            from compute.render.spark import session_for

            rows = sum(b.rows for i in m.inputs for b in self.catalog.shard_batches(i.shard_id, as_of))
            m.spark = session_for(rows)
        return m.spark

    def _hydrate(self, m: Maintained) -> None:
        """Build `m`'s state from its inputs' snapshots. A materialized view with a persisted
        upper resumes there (its shard already holds its output below it); if that failed
        (an error state at restart), it hydrates at the inputs' upper instead and appends
        the difference between its output and its shard's contents."""
        from compute.render import oneshot

        resume = self.catalog.shard_upper(m.item.shard_id) if m.is_mv and m.item.shard_id else 0
        as_of = resume - 1 if resume > 0 and m.error is None else self._upper(m)
        correct = resume > 0 and as_of >= resume
        if as_of < 0 or (resume == 0 and m.inputs and as_of < max(self.catalog.shard_since(i.shard_id) for i in m.inputs)):
            return  # an input is not readable yet: the next pass retries
        spark = self._spark_session(m, as_of)
        started = time.monotonic()
        until = dataflow_expiration(self.replica.expiration(self.expiration_offset()), bool(m.inputs), as_of + 1)
        leases = [self.catalog.lease_batches(i.shard_id, as_of) for i in m.inputs]
        if correct:
            assert m.item.shard_id is not None
            leases.append(self.catalog.lease_batches(m.item.shard_id, as_of))
        try:
            renderer = renderer_for(spark, m.dataflow, {i.id: i.types for i in m.inputs}, index=not m.is_mv)
            renderer.observer = self._observe(m.item.id, m.dataflow, spark)
            snaps = {i.id: oneshot.read_shard(spark, [b.path for b in lease.batches], i.types, as_of, True)
                     for i, lease in zip(m.inputs, leases, strict=False)}
            try:
                out = renderer.hydrate(snaps, time=as_of, until=until)
                if m.is_mv and resume == 0:
                    self._append(m, out, as_of)
                elif correct:
                    from compute.render.recompute import consolidated, negated

                    types = tuple(c.type for c in m.item.columns)
                    held = oneshot.read_shard(spark, [b.path for b in leases[-1].batches], types, as_of, True)
                    self._append(m, consolidated(out.unionByName(negated(held))), as_of)
                elif not m.is_mv:
                    old, m.state = m.state, _index_state(spark, out, m.dataflow)
                    _free_output(renderer)  # the index holds its own copy
                    if old is not None:
                        old.close()
            except BaseException:
                renderer.close()
                raise
        except Exception as e:  # noqa: BLE001
            self._failed(m, e, as_of)
            return
        finally:
            for lease in leases:
                lease.release()
        with self._changed:
            m.renderer, m.error, m.until = renderer, None, until
            m.frontier, m.valid_from = as_of + 1, as_of
        renderer.observer = None
        took = time.monotonic() - started
        self._report_hydrated(m.item.id, took)
        log.info("hydrated %s at %d in %.0f ms", m.item.qualified_name, as_of, took * 1000)

    # -- hydration reporting (compute.hydration, DESIGN §5.4) -----------------------------------

    def hydration(self) -> Any:
        """The tracker of operator hydration statuses (written to mz_internal as they change)."""
        if self._hydration is None:
            from compute.hydration import Tracker

            sysdb = self.catalog.system_db()
            self._hydration = Tracker(lambda oid, rows: sysdb.set_operator_hydration(oid, REPLICA_ID, rows),
                                      lambda: self.catalog.get_system_vars().get(HYDRATION_LOGGING, "on") == "on")
        return self._hydration

    def _workers(self) -> int:
        spark = self.compute.current
        return int(spark.conf.get("spark.sql.shuffle.partitions")) if spark is not None else 1

    def _observe(self, object_id: str, dataflow: lir.Dataflow, spark: Any = None) -> Any:
        """A (re)hydration of a dataflow (an index's, MV's or subscription's) starts: its
        statuses all false; the renderer's observer."""
        from compute.plan.lir_mapping import parents

        if spark is not None:
            from compute.hydration import TAG_PREFIX
            from compute.render.listener import ensure_listener

            ensure_listener(spark, self.hydration(), TAG_PREFIX)
        self.catalog.system_db().set_hydration_time(object_id, REPLICA_ID, None)
        return self.hydration().install(object_id, parents(dataflow), self._workers())

    def _report_installed(self, object_id: str, dataflow: lir.Dataflow) -> None:
        from compute.plan.lir_mapping import lir_mapping

        self.catalog.system_db().set_lir_mapping(object_id, [(r.lir_id, r.operator, r.parent_lir_id, r.nesting)
                                                             for r in lir_mapping(dataflow)])
        self._observe(object_id, dataflow)

    def _report_hydrated(self, object_id: str, took_s: float) -> None:
        self.catalog.system_db().set_hydration_time(object_id, REPLICA_ID, int(took_s * 1e9))
        delays = self.hydration().take_delays()
        if delays:  # task end -> status row written (benches/hydration.py reads this line)
            log.info("hydration status delays of %s: %s ms", object_id, ",".join(f"{d:.1f}" for d in delays))

    def _report_dropped(self, object_id: str) -> None:
        self.hydration().drop(object_id)
        self.catalog.system_db().drop_introspection(object_id)

    def _timed(self, m: Maintained, started: float, upper: int) -> None:
        log.info("stepped %s to %d in %.0f ms", m.item.qualified_name, upper, (time.monotonic() - started) * 1000)

    def _step(self, m: Maintained) -> None:
        from compute.render import oneshot

        upper = self._upper(m)
        if upper < m.frontier or (m.error is not None and upper <= m.error_at):
            return  # nothing new (a failed step is retried once its inputs change)
        if m.until is not None and upper >= m.until:
            # its output at `upper` would miss the updates dropped at >= until: step up to
            # its expiration (each incarnation makes progress), then the replica restarts
            self._expired = True
            self._wake.set()
            upper = m.until - 1
            if upper < m.frontier:
                return
        spark = self._spark_session(m)
        started = time.monotonic()
        leases = []
        deltas = {}
        stepped = False
        try:
            for i in m.inputs:
                lease = self.catalog.lease_batches(i.shard_id, upper)
                leases.append(lease)
                batches = [b for b in lease.batches if b.max_time >= m.frontier]
                if batches:
                    deltas[i.id] = oneshot.read_shard_range(spark, [b.path for b in batches], i.types, m.frontier - 1, upper,
                                                            any(b.has_retractions for b in batches), sum(b.rows for b in batches))
            new_state = None
            if deltas or m.error is not None or (m.temporal and due_at(m.renderer, upper)):
                out = m.renderer.step(deltas, time=upper)
                stepped = True
                if m.is_mv:
                    self._append(m, out, upper)
                else:
                    take = getattr(m.renderer, "take_output", None)
                    new_state = m.state.merged(out, *(take() if take is not None else (None, False)))
            elif m.is_mv:
                self.catalog.commit_writes([], upper, uppers={m.item.shard_id: upper + 1})
        except Exception as e:  # noqa: BLE001
            if stepped:
                # the renderer advanced but its output was not recorded: rebuild it from the
                # last recorded state (a view's persisted upper) at the next pass
                self._free_renderer(m)
            self._failed(m, e, upper)
            return
        finally:
            for lease in leases:
                lease.release()
        with self._changed:
            if new_state is not None:
                m.state.swap(new_state)
                m.valid_from = upper
            m.error = None
            m.frontier = upper + 1
            m.steps += 1
        self._timed(m, started, upper)
        if m.is_mv:
            self._maybe_compact(m)

    def _failed(self, m: Maintained, e: Exception, at: int) -> None:
        from compute.render.arrangement import state_lost
        from compute.render.errors import translate_spark_error

        lost = self.compute.lost_error(self.compute.current, e)
        if lost is not None:
            self._rehydrate = True
            return
        if state_lost(e):
            # an executor holding its arrangements is gone: hydrate it again from its inputs
            log.warning("%s lost state held by an executor: rehydrating", m.item.qualified_name)
            with self._changed:
                self._free(m)
                self._observe(m.item.id, m.dataflow)
                if not m.is_mv:
                    m.frontier = 0
            return
        err = e if isinstance(e, SqlError) else translate_spark_error(e)
        if m.error is None:
            log.warning("%s is in an error state: %s", m.item.qualified_name, err)
        with self._changed:
            m.error, m.error_at = err, at
            self._notify()

    def _append(self, m: Maintained, out: Any, ts: int) -> None:
        """Append output updates to the view's shard at `ts` and advance its upper to ts + 1,
        durably, in one catalog commit."""
        from catalog.storage.arrow_types import rows_to_arrow
        from compute.render.oneshot import arrow_rows
        from compute.render.spark import collect_arrow

        assert m.item.shard_id is not None
        types = tuple(c.type for c in m.item.columns)
        rows = arrow_rows(collect_arrow(out, small=False), types)
        files = []
        if rows:
            table = rows_to_arrow(types, [r for r, _ in rows], ts, [d for _, d in rows])
            files.append((m.item.shard_id, self.catalog.storage.write_batch(m.item.shard_id, table)))
        self.catalog.commit_writes(files, ts, uppers={m.item.shard_id: ts + 1})

    def _maybe_compact(self, m: Maintained) -> None:
        sid = m.item.shard_id
        if sid is not None and len(self.catalog.shard_batches(sid)) >= COMPACT_AFTER_BATCHES:
            try:
                self.catalog.compact(sid, min(self.oracle.read_ts(), m.frontier - 1))
            except Exception:  # noqa: BLE001
                log.exception("compaction of %s failed", sid)


def due_at(renderer: Any, time: int) -> bool:
    """Whether a temporal dataflow's step at `time` without input updates may change its
    output (always, for a renderer that cannot tell)."""
    has_due = getattr(renderer, "has_due", None)
    return True if has_due is None else bool(has_due(time))


def _index_state(spark: Any, out: Any, df: lir.Dataflow) -> Any:
    from compute.plan.lookup import index_keys
    from compute.render.index_state import IndexState

    return IndexState(spark, out, index_keys(df.plan))


def _free_output(renderer: Any) -> None:
    """Free the output a delta renderer keeps of its last step (see DeltaDataflow.take_output)."""
    take = getattr(renderer, "take_output", None)
    if take is not None and (stored := take()[0]) is not None:
        stored.free(renderer.spark)
