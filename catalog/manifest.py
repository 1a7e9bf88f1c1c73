"""Shard manifests: committed batches, the oracle's write timestamp, read leases, orphans, compaction."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from catalog.durable import CatalogStore, D
from catalog.storage.compaction import compact_table
from catalog.storage.shard import BATCH_SUFFIX, SHARDS_DIR, TMP_SUFFIX, BatchFile
from sql.errors import UNDEFINED_TABLE, SqlError


@dataclass(frozen=True, slots=True)
class _Batch:
    file: BatchFile
    rel: str  # path relative to the data directory (as stored)
    seq: int
    compacted: bool


@dataclass(slots=True)
class _Shard:
    shard_id: str
    item_id: str
    since: int
    dropped: bool
    batches: list[_Batch] = field(default_factory=list)
    # a materialized view's shard: every time < upper is complete (persisted with its batches)
    upper: int = 0


class BatchLease:
    """A read lease on a set of batch files: while held, compaction and drops defer deleting
    them. Use as a context manager or call `release()`."""

    __slots__ = ("batches", "_catalog", "_paths", "_released")

    def __init__(self, catalog: ShardManifests, batches: list[BatchFile]) -> None:
        self.batches = batches
        self._catalog = catalog
        self._paths = [b.path for b in batches]
        self._released = False

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._catalog._release(self._paths)

    def __enter__(self) -> list[BatchFile]:
        return self.batches

    def __exit__(self, *exc: object) -> None:
        self.release()


class ShardManifests(CatalogStore):
    """The shard-manifest part of `Catalog`."""

    _commit_listeners: list[Callable[[int], None]]
    # Read leases: path -> count; paths retired while leased wait in _deferred.
    _leases: dict[str, int]
    _deferred: set[str]
    _shards: dict[str, _Shard]
    _opened_at: float
    # the compute controller's read holds: compaction never advances a shard's since past it
    _read_hold: Callable[[str], int | None] | None = None

    # ----------------------------------------------------------------------------------
    # timestamp oracle state

    def oracle_write_ts(self) -> int:
        """The persisted last write timestamp (max ts of any `commit_writes`)."""
        return self._meta["oracle_write_ts"]

    def add_commit_listener(self, fn: Callable[[int], None]) -> None:
        """`fn(ts)` is called after every successful `commit_writes` (outside the lock)."""
        with self._lock:
            self._commit_listeners.append(fn)

    # ----------------------------------------------------------------------------------
    # shard manifests

    def _live_shard(self, shard_id: str) -> _Shard:
        st = self._shards.get(shard_id)
        if st is None or st.dropped:
            raise SqlError(UNDEFINED_TABLE, f"unknown or dropped shard '{shard_id}'")
        return st

    def set_read_hold(self, fn: Callable[[str], int | None]) -> None:
        """`fn(shard_id)`: the greatest `since` compaction may give the shard (None: any)."""
        self._read_hold = fn

    def shard_upper(self, shard_id: str) -> int:
        """A materialized view's shard: every time below it is complete (0: nothing yet)."""
        with self._lock:
            return self._live_shard(shard_id).upper

    def commit_writes(self, writes: list[tuple[str, BatchFile]], ts: int,
                      uppers: Mapping[str, int] | None = None) -> None:
        """Record written batches in their shards' manifests and advance the oracle's
        persisted write timestamp to `ts`, in one transaction. Durable on return (the
        DuckDB WAL is fsynced at commit). On failure the batch files are deleted.
        `commit_writes([], ts)` just persists `ts` (oracle ticks). `uppers`: new uppers of
        materialized-view shards, recorded in the same transaction as their batches."""
        try:
            rels = [self.storage.relative(bf.path) for _, bf in writes]
            for (shard_id, _bf), rel in zip(writes, rels, strict=True):
                if not rel.startswith(f"{SHARDS_DIR}/{shard_id}/"):
                    raise ValueError(f"batch {rel} does not belong to shard {shard_id}")
            with self._lock:
                rows = []
                seq = self._meta["next_batch_seq"]
                for (shard_id, bf), rel in zip(writes, rels, strict=True):
                    self._live_shard(shard_id)
                    rows.append((shard_id, seq, rel, bf))
                    seq += 1
                meta = {
                    "next_batch_seq": seq,
                    "oracle_write_ts": max(self._meta["oracle_write_ts"], ts),
                }
                with self._txn() as con:
                    if rows:  # one statement (executemany costs a statement per row)
                        con.execute(
                            f"INSERT INTO {D}.batches VALUES " + ", ".join("(?, ?, ?, ?, ?, ?, ?, false)" for _ in rows),
                            [x for sid, s, rel, bf in rows
                             for x in (sid, s, rel, bf.rows, bf.min_time, bf.max_time, bf.has_retractions)],
                        )
                    for sid, up in (uppers or {}).items():
                        self._live_shard(sid)
                        con.execute(f"DELETE FROM {D}.uppers WHERE shard_id = ?", [sid])
                        con.execute(f"INSERT INTO {D}.uppers VALUES (?, ?)", [sid, up])
                    self._set_meta(con, meta)
                self._meta.update(meta)
                for sid, s, rel, bf in rows:
                    self._shards[sid].batches.append(_Batch(bf, rel, s, False))
                for sid, up in (uppers or {}).items():
                    self._shards[sid].upper = up
                listeners = list(self._commit_listeners)
        except BaseException:
            self.storage.delete_files(bf.path for _, bf in writes)
            raise
        for fn in listeners:
            fn(ts)

    def shard_batches(self, shard_id: str, as_of: int | None = None) -> list[BatchFile]:
        """Live batches of a shard (those with `min_time <= as_of` when given), in commit
        order. Rows of a returned batch may still have `time > as_of`: filter on read."""
        with self._lock:
            st = self._live_shard(shard_id)
            return [b.file for b in st.batches if as_of is None or b.file.min_time <= as_of]

    def lease_batches(self, shard_id: str, as_of: int | None = None) -> BatchLease:
        """Like `shard_batches`, but the files are protected from deletion (by compaction
        or drops) until the lease is released."""
        with self._lock:
            batches = self.shard_batches(shard_id, as_of)
            for b in batches:
                self._leases[b.path] = self._leases.get(b.path, 0) + 1
            return BatchLease(self, batches)

    def _release(self, paths: Sequence[str]) -> None:
        free: list[str] = []
        with self._lock:
            for p in paths:
                n = self._leases[p] - 1
                if n:
                    self._leases[p] = n
                else:
                    del self._leases[p]
                    if p in self._deferred:
                        self._deferred.discard(p)
                        free.append(p)
        self._delete_now(free)

    def _retire(self, paths: Sequence[str]) -> list[str]:
        """Files no longer in the manifest: those not leased may be deleted now (returned),
        the others when their last lease is released. Caller holds the lock."""
        now: list[str] = []
        for p in paths:
            if p in self._leases:
                self._deferred.add(p)
            else:
                now.append(p)
        return now

    def _delete_now(self, paths: Sequence[str]) -> None:
        if paths:
            self.storage.delete_files(paths)

    def shard_has_retractions(self, shard_id: str, as_of: int | None = None) -> bool:
        return any(b.has_retractions for b in self.shard_batches(shard_id, as_of))

    def shard_since(self, shard_id: str) -> int:
        """Reads of the shard are only correct at times `>= since` (compaction frontier)."""
        with self._lock:
            return self._live_shard(shard_id).since

    def shard_ids(self) -> list[str]:
        """Live (not dropped) shards."""
        with self._lock:
            return [s for s, st in self._shards.items() if not st.dropped]

    def clean_orphans(self) -> int:
        """Delete files under `shards/` that the manifest does not reference (crash
        leftovers, `*.tmp`, files of dropped shards) and that predate this catalog's
        opening (so in-flight writes are never touched). Runs on open; returns the number
        of files deleted."""
        with self._lock:
            live = {b.file.path for st in self._shards.values() for b in st.batches}
            live |= set(self._leases) | self._deferred
            known_live_shards = {s for s, st in self._shards.items() if not st.dropped}
        root = self.storage.root
        if not root.exists():
            return 0
        doomed: list[str] = []
        empty_dirs: list[Path] = []
        for d in root.iterdir():
            if not d.is_dir():
                continue
            entries = list(d.iterdir())
            for f in entries:
                p = str(f)
                if p in live or not f.is_file():
                    continue
                if not (f.name.endswith(BATCH_SUFFIX) or f.name.endswith(TMP_SUFFIX)):
                    continue
                try:
                    if f.stat().st_mtime >= self._opened_at:
                        continue
                except FileNotFoundError:
                    continue
                doomed.append(p)
            if d.name not in known_live_shards:
                empty_dirs.append(d)
        n = self.storage.delete_files(doomed)
        for d in empty_dirs:
            with contextlib.suppress(OSError):
                d.rmdir()
        return n

    # ----------------------------------------------------------------------------------
    # compaction

    def compact(self, shard_id: str, since: int) -> BatchFile | None:
        """Merge every batch with `max_time <= since` into one consolidated batch with all
        times advanced to `since`, swapping the manifest in one transaction and deleting the
        old files afterwards. Returns the new batch, or None when there was nothing to do
        or everything cancelled out. A crash at any point leaves the shard's contents at
        every time `>= since` unchanged (old files are deleted only after the swap commits;
        a new file not yet in the manifest is an orphan)."""
        hold = self._read_hold(shard_id) if self._read_hold is not None else None
        if hold is not None:
            since = min(since, hold)
        with self._lock:
            st = self._live_shard(shard_id)
            chosen = [b for b in st.batches if b.file.max_time <= since]
            if not chosen or (len(chosen) == 1 and chosen[0].compacted):
                return None
            paths = [b.file.path for b in chosen]
            # Protect the inputs from concurrent drops while we read them.
            for p in paths:
                self._leases[p] = self._leases.get(p, 0) + 1
        new: BatchFile | None = None
        try:
            table = self.storage.read_files(paths)
            assert table is not None
            merged = compact_table(table, since)
            if merged.num_rows:
                new = self.storage.write_batch(shard_id, merged)
            swapped = self._swap_batches(shard_id, chosen, new, since)
        except BaseException:
            if new is not None:
                self.storage.delete_files([new.path])
            self._release(paths)
            raise
        if not swapped:
            if new is not None:
                self.storage.delete_files([new.path])
            self._release(paths)
            return None
        self._release(paths)
        return new

    def _swap_batches(
        self, shard_id: str, old: Sequence[_Batch], new: BatchFile | None, since: int
    ) -> bool:
        """Atomically replace `old` by `new` in the manifest and raise the shard's since.
        False (and no change) if the shard was dropped or `old` is no longer live."""
        new_rel = self.storage.relative(new.path) if new is not None else ""
        with self._lock:
            st = self._shards.get(shard_id)
            if st is None or st.dropped:
                return False
            live = {b.seq for b in st.batches}
            if any(b.seq not in live for b in old):
                return False
            seq = self._meta["next_batch_seq"]
            meta = {"next_batch_seq": seq + 1}
            new_since = max(st.since, since)
            with self._txn() as con:
                con.executemany(
                    f"DELETE FROM {D}.batches WHERE shard_id = ? AND seq = ?",
                    [(shard_id, b.seq) for b in old],
                )
                if new is not None:
                    con.execute(
                        f"INSERT INTO {D}.batches VALUES (?, ?, ?, ?, ?, ?, ?, true)",
                        [
                            shard_id,
                            seq,
                            new_rel,
                            new.rows,
                            new.min_time,
                            new.max_time,
                            new.has_retractions,
                        ],
                    )
                con.execute(
                    f"UPDATE {D}.shards SET since = ? WHERE shard_id = ?", [new_since, shard_id]
                )
                self._set_meta(con, meta)
            self._meta.update(meta)
            gone = {b.seq for b in old}
            kept = [b for b in st.batches if b.seq not in gone]
            if new is not None:
                kept.append(_Batch(new, new_rel, seq, True))
            st.batches = kept
            st.since = new_since
            # The old files stay leased by compact() until it releases them.
            for b in old:
                self._deferred.add(b.file.path)
        return True
