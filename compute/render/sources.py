"""Imported storage collections for one-shot reads, with a per-shard cache.

A read at `as_of` that covers every batch of a shard (the usual strict-serializable read at
the latest timestamp) is served from a cached, consolidated DataFrame of the shard's
contents; the cache entry is keyed by the exact batch set, so any write or compaction makes
the next read build a new entry. An entry holds a read lease on its batch files so a cached
DataFrame's lineage never points at deleted files. Shards above `max_rows` are not cached.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession

from compute.render.oneshot import read_shard
from sql.types import SqlType


@dataclass
class _Entry:
    key: tuple[str, ...]
    df: DataFrame
    release: Callable[[], None]


class SourceCache:
    def __init__(self, spark: SparkSession, max_rows: int = 2_000_000) -> None:
        self.spark = spark
        self.max_rows = max_rows
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self.hits = 0
        self.misses = 0

    def read(self, shard_id: str, batches: list[Any], types: tuple[SqlType, ...], as_of: int,
             lease: Callable[[], Any]) -> tuple[DataFrame, Any | None]:
        """The shard's contents at `as_of`. `batches` are the shard's live batches; `lease()`
        takes a read lease on them. Returns (DataFrame, lease the caller must release or
        None when the cache owns it)."""
        complete = all(b.max_time <= as_of for b in batches)
        rows = sum(b.rows for b in batches)
        retractions = any(b.has_retractions for b in batches)
        if not complete or rows > self.max_rows:
            held = lease()
            return read_shard(self.spark, [b.path for b in held.batches], types, as_of, retractions), held
        key = tuple(b.path for b in batches)
        with self._lock:
            entry = self._entries.get(shard_id)
            if entry is not None and entry.key == key:
                self.hits += 1
                return entry.df, None
        held = lease()
        if tuple(b.path for b in held.batches) != key:  # a write raced us: read uncached
            return read_shard(self.spark, [b.path for b in held.batches], types, as_of, retractions), held
        df = read_shard(self.spark, list(key), types, as_of, retractions).persist(StorageLevel.MEMORY_AND_DISK)
        with self._lock:
            self.misses += 1
            old = self._entries.get(shard_id)
            self._entries[shard_id] = _Entry(key, df, held.release)
        if old is not None:
            old.df.unpersist(blocking=False)
            old.release()
        return df, None

    def drop(self, shard_id: str) -> None:
        with self._lock:
            old = self._entries.pop(shard_id, None)
        if old is not None:
            old.df.unpersist(blocking=False)
            old.release()
