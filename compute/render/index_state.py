"""An index's state: its output collection kept in Spark as an arrangement (DESIGN §5.2) — an
LSM spine (`arrangement.Spine`) whose every row carries `__h`, the hash of the index key.

`merged(Δ)` stores Δ as a new batch (one Spark job, O(|Δ|)) and applies the spine's merge
policy (geometric: a base merge is rare and amortized), without touching the current state;
`swap` installs it. Readers `acquire()` the current version and release it when their query
is done; a piece no version in use holds any more is then freed.

Reads: the whole state is the consolidated union of the pieces (the base alone when there are
no batches); a lookup by key values (a fast-path peek) is the same restricted to the keys'
hashes, `__h IN (h1, ..)`: Spark skips every cached column batch whose `__h` min/max excludes
them (in-memory batch pruning), so a point lookup reads a batch per piece and partition, not
the state. A hash keeps whole keys, so the restriction is exact once the caller's predicate
(`key = literal`) is applied on top; colliding keys are removed by that predicate.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession

from compute.render.arrangement import HASH, Restriction, Spine, Stored, key_hash, store
from compute.render.delta import delta_session, hash_key
from compute.render.key_hash import python_key_hash
from compute.render.rel import DIFF, cnames
from compute.render.scalar import render_scalar
from compute.render.types import spark_type
from sql.scalar import Column, Literal, Scalar


@dataclass(eq=False)
class _Version:
    spine: Spine
    users: int = 0


@dataclass(frozen=True, slots=True)
class Pending:
    """The next state made by `merged`, to `swap` in."""

    spine: Spine
    made: tuple[Stored, ...]


class IndexState:
    def __init__(self, spark: SparkSession, snapshot: DataFrame, keys: Sequence[Scalar]) -> None:
        self._lock = threading.Lock()
        self.spark = delta_session(spark, step=False)
        self.partitions = int(spark.conf.get("spark.sql.shuffle.partitions") or "2")
        self.arity = len(snapshot.columns) - 1
        self.keys = tuple(keys)
        cols = cnames(self.arity)
        self._key_sql = [hash_key(render_scalar(k, cols), k.typ) for k in self.keys]
        # lookups hash literals in Python as Spark hashes values of the key's Spark type:
        # only for key columns of exactly that type (else a lookup reads the whole state)
        fields = snapshot.schema.fields
        self.lookups = all(isinstance(k, Column) and k.index < len(fields) and fields[k.index].dataType == spark_type(k.typ)
                           for k in self.keys)
        base = self._store(snapshot, base=True)
        self._current = _Version(Spine(self.arity, base))
        self._retired: list[_Version] = []
        self._held: dict[int, Stored] = {id(base): base}  # every piece not yet freed

    def _store(self, df: DataFrame, base: bool = False) -> Stored:
        view = f"mzx_{uuid.uuid4().hex}"
        df.createOrReplaceGlobalTempView(view)
        try:
            q = f"SELECT {', '.join([*cnames(self.arity), DIFF])}, {key_hash(self._key_sql)} AS {HASH} FROM global_temp.{view}"
            return store(self.spark, q, self.arity, self.partitions if base else None)
        finally:
            self.spark.catalog.dropGlobalTempView(view)

    # -- writing

    def merged(self, delta: DataFrame, stored: Stored | None = None, empty: bool = False) -> Pending | None:
        """The next state (Δ consolidated, as the renderers' outputs are); None when Δ is empty.
        `stored`: Δ already stored with this index's key hash (the delta renderer's output,
        now owned here); `empty`: Δ is known to be empty."""
        if empty and stored is None:
            return None
        s = stored if stored is not None else self._store(delta)
        if s.rows == 0:
            s.free(self.spark)
            return None
        with self._lock:
            spine = self._current.spine
        try:
            nxt, _gone, made = spine.appended(s).merged(self.spark, self.partitions)
        except BaseException:
            s.free(self.spark)
            raise
        return Pending(nxt, (s, *made))

    def swap(self, pending: Pending) -> None:
        with self._lock:
            self._retired.append(self._current)
            self._current = _Version(pending.spine)
            self._held.update({id(p): p for p in pending.made})
        self._free_unused()

    # -- reading

    def acquire(self, lookup: Sequence[tuple[Literal, ...]] | None = None) -> tuple[str, Callable[[], None]]:
        """The current state as a SELECT (columns c0.., diff; consolidated), restricted to the
        rows whose key hashes as one of `lookup`'s key tuples; and `release`."""
        with self._lock:
            v = self._current
            v.users += 1
        try:
            restriction = Restriction(hashes=self.hashes(lookup)) if lookup is not None and self.lookups else None
        except BaseException:
            self._release(v)
            raise
        return self._select(v.spine, restriction), lambda: self._release(v)

    def _select(self, spine: Spine, restriction: Restriction | None) -> str:
        cols = cnames(self.arity)
        where = f" WHERE {restriction.predicate()}" if restriction is not None else ""
        pieces = spine.pieces()
        parts = [f"SELECT {', '.join([*cols, DIFF])} FROM global_temp.{p.view}{where}" for p in pieces]
        if len(parts) == 1:
            return parts[0]  # the base alone is consolidated
        group = f" GROUP BY {', '.join(cols)}" if cols else ""
        out = f"SELECT {', '.join([*cols, f'SUM({DIFF}) AS {DIFF}'])} FROM ({{}}) AS _s{group} HAVING SUM({DIFF}) <> 0"
        if restriction is not None or spine.base is None or not cols:
            return out.format(" UNION ALL ".join(parts))
        # a whole read: base rows of keys no batch touches as they are (the base is
        # consolidated), the touched keys consolidated with the batches (a broadcast join
        # with the batches' hashes, not an aggregation of the whole state)
        sel = ", ".join(f"_b.{c}" for c in [*cols, DIFF, HASH])
        batches = " UNION ALL ".join(f"SELECT {', '.join([*cols, DIFF, HASH])} FROM global_temp.{p.view}" for p in spine.batches)
        touched = f"(SELECT DISTINCT {HASH} FROM ({batches}) AS _t0) AS _t"
        base = f"global_temp.{spine.base.view}"
        kept = f"SELECT /*+ BROADCAST(_t) */ {sel} FROM {base} AS _b LEFT ANTI JOIN {touched} ON _b.{HASH} = _t.{HASH}"
        hit = f"SELECT /*+ BROADCAST(_t) */ {sel} FROM {base} AS _b LEFT SEMI JOIN {touched} ON _b.{HASH} = _t.{HASH}"
        merged = out.format(f"{hit} UNION ALL {batches}")
        return f"SELECT {', '.join([*cols, DIFF])} FROM ({kept}) AS _k UNION ALL {merged}"

    def hashes(self, lookup: Sequence[tuple[Literal, ...]]) -> tuple[int, ...]:
        """The key hashes of literal key tuples, as the stored rows' `__h` (the lookup's key
        types are those `compute.plan.lookup.LOOKUP_TYPES` allows: hashed in Python)."""
        types = [k.typ for k in self.keys]
        out = set()
        for values in lookup:
            h = python_key_hash([lit.value for lit in values], types)
            if h is None:
                raise AssertionError(f"no key hash for a lookup of {values}")
            out.add(h)
        return tuple(sorted(out))

    def rows(self) -> int:
        with self._lock:
            return self._current.spine.rows()

    # -- freeing

    def _release(self, v: _Version) -> None:
        with self._lock:
            v.users -= 1
        self._free_unused()

    def _free_unused(self) -> None:
        """Free every piece no version in use (the current one, or one a reader holds) has."""
        with self._lock:
            self._retired = [v for v in self._retired if v.users > 0]
            live = {id(p) for v in [self._current, *self._retired] for p in v.spine.pieces()}
            gone = [p for k, p in self._held.items() if k not in live]
            for p in gone:
                del self._held[id(p)]
        for p in gone:
            p.free(self.spark)

    def retire(self) -> None:
        """Free the state once its last reader releases it (no new reader acquires it)."""
        with self._lock:
            self._retired.append(self._current)
            self._current = _Version(Spine(self.arity))  # holds nothing
        self._free_unused()

    def close(self) -> None:
        with self._lock:
            every = list(self._held.values())
            self._held.clear()
            self._retired = []
        for p in every:
            p.free(self.spark)
