"""Operator hydration status per LIR node per worker, observed from Spark (DESIGN §5.4, §8).

A dataflow's hydration renders its plan bottom-up; the renderer asks `Observer.tag(node)`
for a Spark job tag when it materializes a node's output (compute.render.listener
`tracked_count`). The first such materialization of a node *binds* it: the node's worker w
is hydrated once every result task of that job computing a partition p ≡ w (mod W) has
succeeded — or, if the output has fewer than W partitions and w owns none, once the whole
result stage has succeeded. A node never bound (fused into the stage of another node, or
needing no Spark work) inherits the status of its nearest bound ancestor: the stage that
computes its consumer computes it.

Statuses are kept per (object, generation); a re-hydration (driver restart, retried error)
starts a new generation with every status false, and events of older generations are
ignored. Changes are handed to `sink(object_id, rows)` on a writer thread, coalesced
(rows = every (plan_node_id, worker_id, hydrated) of the object).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

log = logging.getLogger("mzspark.hydration")

TAG_PREFIX = "mzh-"


def tag_of(object_id: str, gen: int, node_id: int) -> str:
    return f"{TAG_PREFIX}{object_id}-{gen}-{node_id}"


def parse_tag(tag: str) -> tuple[str, int, int] | None:
    if not tag.startswith(TAG_PREFIX):
        return None
    try:
        obj, gen, node = tag[len(TAG_PREFIX):].rsplit("-", 2)
        return obj, int(gen), int(node)
    except ValueError:
        return None


@dataclass
class _Bound:
    partitions: int = 0  # of the node's observed output (0: not known yet)
    done: set[int] = field(default_factory=set)  # partitions whose result task succeeded
    complete: bool = False  # the whole result stage succeeded


@dataclass
class _Flow:
    gen: int
    workers: int
    parents: dict[int, int | None]  # node id -> parent node id (None: the root)
    bound: dict[int, _Bound] = field(default_factory=dict)
    statuses: dict[tuple[int, int], bool] = field(default_factory=dict)
    cpu_ms: dict[tuple[int, int], int] = field(default_factory=dict)  # (node, worker): task run time

    def worker_done(self, b: _Bound, w: int) -> bool:
        if b.complete:
            return True
        if b.partitions == 0:
            return False
        mine = range(w, b.partitions, self.workers)
        return bool(mine) and all(p in b.done for p in mine)

    def recompute(self) -> bool:
        """Re-derive every status; whether any changed."""
        changed = False
        for n in self.parents:
            a: int | None = n
            while a is not None and a not in self.bound:
                a = self.parents[a]
            for w in range(self.workers):
                h = a is not None and self.worker_done(self.bound[a], w)
                if self.statuses.get((n, w)) != h:
                    self.statuses[(n, w)] = h
                    changed = True
        return changed

    def rows(self) -> list[tuple[int, int, bool]]:
        return [(n, w, self.statuses.get((n, w), False)) for n in sorted(self.parents) for w in range(self.workers)]


class Observer:
    """The renderer's handle on one hydration: job tags for the nodes it materializes."""

    def __init__(self, tracker: Tracker, object_id: str, gen: int) -> None:
        self._tracker, self._object_id, self._gen = tracker, object_id, gen

    def tag(self, node_id: int) -> str | None:
        """The tag for the job materializing `node_id`'s output, if that job observes the
        node (its first materialization in this hydration); else None."""
        return self._tracker._bind(self._object_id, self._gen, node_id)

    def no_work(self, node_id: int) -> None:
        """`node_id`'s output is known to be empty without any Spark work (a constant): it
        and the nodes below it it has no task to wait for."""
        if self._tracker._bind(self._object_id, self._gen, node_id) is not None:
            self._tracker._event(tag_of(self._object_id, self._gen, node_id), 0, complete=True)


class Tracker:
    """Every installed dataflow's statuses; fed by the listener, written through `sink`."""

    def __init__(self, sink: Callable[[str, Sequence[tuple[int, int, bool]]], None],
                 enabled: Callable[[], bool] = lambda: True) -> None:
        self._sink = sink
        self._enabled = enabled
        self._lock = threading.Lock()
        self._flows: dict[str, _Flow] = {}
        self._gens = 0
        self._dirty: set[str] = set()
        self._wake = threading.Condition(self._lock)
        self._write_lock = threading.Lock()  # held while writing (drop waits for it)
        self._closed = False
        # (task finish ms, row written ms) pairs, for the benchmark
        self.delays: list[float] = []
        self._pending_finish: dict[str, list[int]] = {}
        self._thread = threading.Thread(target=self._writer, name="hydration-writer", daemon=True)
        self._thread.start()

    # -- the controller

    def install(self, object_id: str, parents: Mapping[int, int | None], workers: int) -> Observer | None:
        """A (re)hydration of `object_id` starts: every status false. None when reporting
        is off (the renderer then materializes nothing extra)."""
        enabled = self._enabled()
        with self._lock:
            self._gens += 1
            gen = self._gens
            if enabled:
                f = _Flow(gen, workers, dict(parents))
                f.recompute()
                self._flows[object_id] = f
            else:
                self._flows.pop(object_id, None)  # no rows
            self._mark(object_id)
        return Observer(self, object_id, gen) if enabled else None

    def take_delays(self) -> list[float]:
        """The task end -> status row delays (ms) recorded since the last call."""
        with self._lock:
            out, self.delays = self.delays, []
            return out

    def drop(self, object_id: str) -> None:
        """Forget `object_id` (its rows are deleted by the caller)."""
        with self._write_lock, self._lock:
            self._flows.pop(object_id, None)
            self._dirty.discard(object_id)
            self._pending_finish.pop(object_id, None)

    def statuses(self, object_id: str) -> list[tuple[int, int, bool]]:
        with self._lock:
            f = self._flows.get(object_id)
            return [] if f is None else f.rows()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._wake.notify_all()
        self._thread.join(timeout=5)

    # -- the listener (compute.render.listener)

    def task_succeeded(self, tag: str, partition: int, partitions: int, finish_ms: int, run_ms: int = 0) -> None:
        self._event(tag, partitions, partition=partition, finish_ms=finish_ms, run_ms=run_ms)

    def cpu_ms(self, object_id: str) -> dict[tuple[int, int], int]:
        """Run time of the observed hydration tasks, by (node, worker) (EXPLAIN ANALYZE CPU)."""
        with self._lock:
            f = self._flows.get(object_id)
            return {} if f is None else dict(f.cpu_ms)

    def stage_completed(self, tag: str, partitions: int) -> None:
        self._event(tag, partitions, complete=True)

    # -- internals

    def _bind(self, object_id: str, gen: int, node_id: int) -> str | None:
        with self._lock:
            f = self._flows.get(object_id)
            if f is None or f.gen != gen or node_id not in f.parents or node_id in f.bound:
                return None
            f.bound[node_id] = _Bound()
            return tag_of(object_id, gen, node_id)

    def _event(self, tag: str, partitions: int, partition: int | None = None, finish_ms: int | None = None,
               complete: bool = False, run_ms: int = 0) -> None:
        parsed = parse_tag(tag)
        if parsed is None:
            return
        obj, gen, node = parsed
        with self._lock:
            f = self._flows.get(obj)
            if f is None or f.gen != gen or node not in f.bound:
                return
            b = f.bound[node]
            b.partitions = partitions
            if partition is not None:
                b.done.add(partition)
                k = (node, partition % f.workers)
                f.cpu_ms[k] = f.cpu_ms.get(k, 0) + run_ms
            b.complete = b.complete or complete
            if f.recompute():
                self._mark(obj)
                if finish_ms is not None:
                    self._pending_finish.setdefault(obj, []).append(finish_ms)

    def _mark(self, object_id: str) -> None:
        self._dirty.add(object_id)
        self._wake.notify_all()

    def _writer(self) -> None:
        while True:
            with self._lock:
                while not self._dirty and not self._closed:
                    self._wake.wait()
                if self._closed and not self._dirty:
                    return
            with self._write_lock:
                with self._lock:
                    work = [(o, self._flows[o].rows() if o in self._flows else []) for o in sorted(self._dirty)]
                    finished = {o: self._pending_finish.pop(o, []) for o in self._dirty}
                    self._dirty.clear()
                for obj, rows in work:
                    try:
                        self._sink(obj, rows)
                    except Exception:  # noqa: BLE001 - the next change writes again
                        log.exception("writing hydration statuses of %s", obj)
                        continue
                    now = time.time() * 1000
                    with self._lock:
                        self.delays.extend(now - t for t in finished.get(obj, []))
