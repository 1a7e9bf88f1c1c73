"""Imported storage collections for one-shot reads, with a per-shard cache.

A read at `as_of` that covers every batch of a shard (the usual strict-serializable read at
the latest timestamp) is served from a cached, consolidated DataFrame of the shard's
contents, registered as a global temporary view that rendered queries select from; the cache entry is keyed by the exact batch set, so any write or compaction makes
the next read build a new entry. An entry holds a read lease on its batch files so a cached
DataFrame's lineage never points at deleted files. Shards above `max_rows` are not cached.

A query that only filters and projects a shard of at most LOCAL_ROWS rows (a point lookup)
reads it as a local relation instead (`read(..., local=True)`): its consolidated rows kept
in the driver, keyed by the same batch set, so Spark's optimizer folds the query into a local
relation and it is answered without a Spark job (spark.collect_local).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession

from compute.render.arrangement import LOCAL_ROWS, store_local
from compute.render.oneshot import read_shard
from compute.render.spark import TINY_INPUT_ROWS
from sql.types import SqlType


@dataclass
class _Entry:
    key: tuple[str, ...]
    df: DataFrame | None
    view: str
    release: Callable[[], None]
    users: int = 0
    retired: bool = False


def register(df: DataFrame) -> str:
    """A new global temporary view of `df`; its name."""
    name = f"mzs_{uuid.uuid4().hex}"
    df.createOrReplaceGlobalTempView(name)
    return name


class SourceCache:
    def __init__(self, spark: SparkSession, max_rows: int = 2_000_000) -> None:
        self.spark = spark
        self.max_rows = max_rows
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self._locals: dict[str, _Entry] = {}  # shards of at most LOCAL_ROWS rows, as local relations
        self.hits = 0
        self.misses = 0

    def read(self, shard_id: str, batches: list[Any], types: tuple[SqlType, ...], as_of: int,
             lease: Callable[[], Any], local: bool = False) -> tuple[str, Callable[[], None]]:
        """The shard's contents at `as_of` as a global temporary view name, and `done`, to
        call once the query no longer needs the view. `batches` are the shard's live batches;
        `lease()` takes a read lease on them (held until `done`, or by the cache entry).
        `local`: a local relation when the shard is small (the module's docstring)."""
        complete = all(b.max_time <= as_of for b in batches)
        rows = sum(b.rows for b in batches)
        retractions = any(b.has_retractions for b in batches)
        key = tuple(b.path for b in batches)
        if local and complete and rows <= LOCAL_ROWS:
            got = self._read_local(shard_id, key, types, as_of, retractions, lease)
            if got is not None:
                return got
        if complete and rows <= self.max_rows:
            with self._lock:
                entry = self._entries.get(shard_id)
                if entry is not None and entry.key == key:
                    self.hits += 1
                    entry.users += 1
                    return entry.view, lambda: self._done(entry)
        held = lease()
        if not complete or rows > self.max_rows or tuple(b.path for b in held.batches) != key:
            # uncached (too big, not at the latest time, or a write raced us)
            view = register(read_shard(self.spark, [b.path for b in held.batches], types, as_of, retractions))

            def done() -> None:
                try:
                    self.spark.catalog.dropGlobalTempView(view)
                finally:
                    held.release()
            return view, done
        df = read_shard(self.spark, list(key), types, as_of, retractions)
        if rows < TINY_INPUT_ROWS:
            # One partition reports SinglePartition, which satisfies every distribution:
            # aggregates and joins over it need no shuffle, so a query over small tables
            # runs as one stage (a 10-row join + group-by 105 -> 44 ms).
            df = df.coalesce(1)
        df = df.persist(StorageLevel.MEMORY_AND_DISK)
        new = _Entry(key, df, register(df), held.release, users=1)
        with self._lock:
            self.misses += 1
            old = self._entries.get(shard_id)
            self._entries[shard_id] = new
        if old is not None:
            self._retire(old)
        return new.view, lambda: self._done(new)

    def _read_local(self, shard_id: str, key: tuple[str, ...], types: tuple[SqlType, ...], as_of: int,
                    retractions: bool, lease: Callable[[], Any]) -> tuple[str, Callable[[], None]] | None:
        """The shard (every batch of `key`, all at or below `as_of`) as a local relation;
        None when a write or compaction changed its batches meanwhile."""
        with self._lock:
            entry = self._locals.get(shard_id)
            if entry is not None and entry.key == key:
                self.hits += 1
                entry.users += 1
                return entry.view, lambda: self._done(entry)
        held = lease()
        try:
            if tuple(b.path for b in held.batches) != key:
                return None
            stored = store_local(self.spark, read_shard(self.spark, list(key), types, as_of, retractions), len(types))
        finally:
            held.release()  # the rows are copied into the driver: the files are no longer read
        if stored is None:  # more consolidated rows than batch rows: cannot happen
            return None
        new = _Entry(key, None, stored.view, lambda: None, users=1)  # (a local piece: nothing to unpersist)
        with self._lock:
            self.misses += 1
            old = self._locals.get(shard_id)
            self._locals[shard_id] = new
        if old is not None:
            self._retire(old)
        return new.view, lambda: self._done(new)

    def _done(self, entry: _Entry) -> None:
        with self._lock:
            entry.users -= 1
            free = entry.retired and entry.users == 0
        if free:
            self._free(entry)

    def _retire(self, old: _Entry) -> None:
        """Replaced or dropped: freed now, or by the last query still using it."""
        with self._lock:
            old.retired = True
            free = old.users == 0
        if free:
            self._free(old)

    def _free(self, e: _Entry) -> None:
        try:
            if e.df is not None:
                e.df.unpersist(blocking=False)
            self.spark.catalog.dropGlobalTempView(e.view)
        finally:
            e.release()

    def abandon(self) -> None:
        """The driver holding the cached DataFrames is gone: release every entry's read
        lease (now, or when the last query using it finishes) without calling Spark."""
        with self._lock:
            entries = [*self._entries.values(), *self._locals.values()]
            self._entries, self._locals = {}, {}
            idle = []
            for e in entries:
                e.retired = True
                if e.users == 0:
                    idle.append(e)
        for e in idle:
            e.release()

    def drop(self, shard_id: str) -> None:
        with self._lock:
            olds = [self._entries.pop(shard_id, None), self._locals.pop(shard_id, None)]
        for old in olds:
            if old is not None:
                self._retire(old)
