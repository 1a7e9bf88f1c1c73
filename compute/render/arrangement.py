"""Arrangements of maintained dataflows (DESIGN §5.2): keyed collections held in Spark as an
LSM spine — a base range-partitioned by key hash, sorted within partitions and cached, plus
small recent batches (cached, sorted) merged into the base geometrically.

Every stored piece has columns c0..cN, diff and `__h`, the 64-bit hash of the arrangement's
key (`key_hash`). Reads restricted to a set of hashes keep whole keys (every row of a key has
its key's hash), so a restriction by hashes is exact for keyed operators: a colliding key is
read whole on both sides of an update and cancels out. Restricting by a literal `__h IN (...)`
lets Spark skip the cached column batches whose min/max exclude every hash (in-memory batch
pruning), which is what makes a lookup cost O(|Δ|) and not O(state).

A stored piece is a leaf of every plan reading it (a DataFrame over the cache's
InMemoryRelation): a plan built on state never grows with the plans that produced it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession

from compute.render.driver_calls import drop_view, register_view, sql_frame, store_rows
from compute.render.listener import tracked_count
from compute.render.oneshot import DIFF, Rel, cnames

HASH = "__h"
# restrictions up to this many hashes are literal IN lists (pruned by batch statistics);
# above, a semi-join with the delta's hashes (IN lists of ~1000+ literals overflow the JVM
# stack; DESIGN §5.2)
MAX_LITERAL_KEYS = 400
# a stored delta of at most this many rows brings its key hashes back with it
HASH_ROWS = 4 * MAX_LITERAL_KEYS
# a step's piece of at most this many rows is held as a local relation (its rows in the
# driver's plan, no cache, no lineage): a step's small pieces cost one collect each
LOCAL_ROWS = 1000
# merge the batches into the base when they hold more than this fraction of the base's rows
MERGE_FRACTION = 0.25
# ... or when there are more batches than this (every read unions them all)
MAX_BATCHES = 8


def key_hash(exprs: list[str]) -> str:
    """The key hash of a row: xxhash64 over the key values (a constant for no key)."""
    return f"xxhash64({', '.join(['42', *exprs])})"


def hash_literal(h: int) -> str:
    return f"{h}L" if h != -(2**63) else "(-9223372036854775807L - 1L)"


@dataclass(frozen=True, slots=True)
class Restriction:
    """Which keys to read: literal hashes, or the hashes in a relation's `__h` column."""

    hashes: tuple[int, ...] | None = None
    relation: str | None = None  # a SELECT with a column __h

    def predicate(self) -> str:
        if self.relation is not None:
            return f"{HASH} IN (SELECT {HASH} FROM ({self.relation}))"
        assert self.hashes is not None
        if not self.hashes:
            return "FALSE"
        return f"{HASH} IN ({', '.join(hash_literal(h) for h in self.hashes)})"


def merge_decision(base_rows: int, batch_rows: list[int], fraction: float = MERGE_FRACTION,
                   max_batches: int = MAX_BATCHES) -> tuple[str, int]:
    """The spine's merge policy after a batch was appended (batches oldest first):
    - ("base", n): merge every batch into the base, once the batches hold more than
      `fraction` of it (the base grows geometrically: a row is rebuilt O(log n) times);
    - ("batches", k): past `max_batches`, merge the newest k into one — at least enough to
      get back to half the limit, and further back while the next older batch is no larger
      than the merged ones (batch sizes stay geometric, so a row is merged O(log n) times
      and a merge happens about every max_batches / 2 steps);
    - ("none", 0)."""
    if not batch_rows:
        return ("none", 0)
    if sum(batch_rows) > fraction * base_rows:
        return ("base", len(batch_rows))
    if len(batch_rows) <= max_batches:
        return ("none", 0)
    k = len(batch_rows) - max_batches // 2
    while k < len(batch_rows) and batch_rows[-(k + 1)] <= sum(batch_rows[-k:]):
        k += 1
    return ("batches", k)


def few_keys(r: Rel, restriction: Restriction | None) -> Rel:
    """`r` in one partition when it holds only a few keys' rows (a literal restriction), so
    the aggregates and consolidations above it need no shuffle (a partitioning choice only)."""
    if restriction is None or restriction.hashes is None:
        return r
    return one_partition(r)


def one_partition(r: Rel) -> Rel:
    """`r` coalesced into one partition (no shuffle)."""
    return Rel(f"SELECT /*+ COALESCE(1) */ * FROM ({r.sql}) AS _s", r.arity)


@dataclass(eq=False)
class Stored:
    """One cached piece of state: a leaf DataFrame registered as a global temporary view."""

    frame: DataFrame | None  # None: a local piece made in the JVM (store_local), see `df`
    cached: DataFrame | None
    view: str
    rows: int
    arity: int
    # the rows' key hashes, when asked for and at most HASH_ROWS rows
    hashes: tuple[int, ...] | None = None
    # (least, greatest) `__h`, when asked for (pieces keyed by time: compute.render.temporal)
    bounds: tuple[int, int] | None = None
    local: bool = False  # a local relation (store_local): nothing cached
    spark: SparkSession | None = None  # (a local piece's, to make `df` on first use)

    @property
    def sql(self) -> str:
        return f"SELECT * FROM global_temp.{self.view}"

    @property
    def df(self) -> DataFrame:
        """The piece as a DataFrame (a local piece's is analyzed only when first asked for:
        steps read pieces by their views)."""
        if self.frame is None:
            assert self.spark is not None
            self.frame = sql_frame(self.spark, self.sql)
        return self.frame

    def free(self, spark: SparkSession) -> None:
        if not self.local and self.cached is not None:
            self.cached.unpersist()
        drop_view(spark, self.view)


def store(spark: SparkSession, sql: str, arity: int, base_partitions: int | None = None, hashes: bool = False,
          bounds: bool = False, tag: str | None = None, sort: bool = True, local: bool = False) -> Stored:
    """Compute `sql` (columns c0.., diff, __h) now and cache it, sorted by `__h` within
    partitions (range-partitioned by `__h` into `base_partitions` for a base). One Spark job
    computes it (any error of the query is raised here) and counts its rows; with `hashes`,
    the same job brings back the rows' key hashes if there are at most HASH_ROWS; with
    `bounds`, their least and greatest `__h`. `tag` (without `hashes` / `bounds`): that job
    carries it (hydration reporting, compute.render.listener); `sort=False`: a scratch piece
    read whole (no sort within partitions); `local`: a result of at most LOCAL_ROWS rows is
    held as a local relation (`store_local`), a larger one is computed again and cached."""
    if local and tag is None and LOCAL_ROWS > 0:
        # (the limit in the SQL text: no Dataset of its own to analyze)
        small = store_local(spark, sql_frame(spark, f"SELECT * FROM ({sql}) AS _l LIMIT {LOCAL_ROWS + 1}"), arity, hashes, bounds,
                            limited=True)
        if small is not None:
            return small
    df = sql_frame(spark, sql)
    if base_partitions is not None:
        df = df.repartitionByRange(base_partitions, HASH)
    df = (df.sortWithinPartitions(HASH) if sort else df).persist()
    _truncate_lineage(df)
    got: tuple[int, ...] | None = None
    extent: tuple[int, int] | None = None
    try:
        if bounds:
            from pyspark.sql import functions as F

            n, lo, hi = df.agg(F.count(F.lit(1)), F.min(HASH), F.max(HASH)).collect()[0]
            extent = (int(lo), int(hi)) if n else (0, 0)
        elif hashes:
            # fewer rows than the limit: every partition was read (and cached)
            hs = [r[0] for r in df.select(HASH).limit(HASH_ROWS + 1).collect()]
            if len(hs) <= HASH_ROWS:
                got = tuple(hs)
        # one stage over the cached plan (df.count() adds a shuffle for its final sum)
        rows = n if extent is not None else len(got) if got is not None else tracked_count(spark, df, tag)
    except BaseException:
        df.unpersist()
        raise
    plan = df._jdf.queryExecution().withCachedData()
    leaf = DataFrame(spark._jvm.org.apache.spark.sql.classic.Dataset.ofRows(spark._jsparkSession, plan), spark)  # type: ignore[union-attr]
    view = f"mzd_{uuid.uuid4().hex}"
    register_view(spark, leaf, view)
    return Stored(leaf, df, view, rows, arity, got, extent)


def store_local(spark: SparkSession, df: DataFrame, arity: int, hashes: bool = False, bounds: bool = False,
                limited: bool = False) -> Stored | None:
    """`df` computed now by one collect of at most LOCAL_ROWS + 1 rows: if it has at most
    LOCAL_ROWS, a piece over a local relation of them (the rows stay in the JVM driver, typed
    exactly as computed; filters and projections over it are folded by the optimizer, with
    no Spark job), else None. A step's pieces are mostly this small: no cache, sort or lineage
    to keep. `limited`: `df` is already limited to LOCAL_ROWS + 1 rows. The relation is made
    and registered in the JVM (driver_calls.store_rows: rows taken from the optimized plan
    when it is already local, no SQL execution wrapper, no Dataset analyzed)."""
    view = f"mzd_{uuid.uuid4().hex}"
    got = store_rows(spark, df._jdf if limited else df._jdf.limit(LOCAL_ROWS + 1), LOCAL_ROWS, HASH if hashes or bounds else None,
                     view)
    if got is None:
        return None
    n, hs = got
    out_hashes: tuple[int, ...] | None = None
    extent: tuple[int, int] | None = None
    if hashes or bounds:
        if hs is None:  # (`__h` not a bigint: read back from the local view, no Spark job)
            hs = tuple(r[0] for r in sql_frame(spark, f"SELECT {HASH} FROM global_temp.{view}").collect())
        out_hashes = hs if hashes else None
        extent = (min(hs), max(hs)) if bounds and hs else (0, 0) if bounds else None
    return Stored(None, None, view, n, arity, out_hashes, extent, local=True, spark=spark)


def _truncate_lineage(df: DataFrame) -> None:
    """Mark the cached column batches of (persisted) `df` for a local checkpoint: once the
    job computing them ends, their RDD no longer depends on the pieces it was computed from.
    Without it every piece's lineage holds every earlier piece's (a step reads the last one):
    the scheduler walks that history at each job, and a step's cost grows with the number of
    steps taken (measured: stages per step job 8 -> 47 over 40 steps; 1 with the checkpoint).
    The batches stay in the block manager (memory, then disk), so reads keep their
    in-memory batch pruning; the price is that a lost executor loses them for good (Spark's
    "Checkpoint block ... not found"): the controller then rehydrates the dataflow."""
    plan = df._jdf.queryExecution().withCachedData()
    if plan.getClass().getSimpleName() == "InMemoryRelation":
        plan.cacheBuilder().cachedColumnBuffers().localCheckpoint()


def state_lost(e: BaseException) -> bool:
    """Whether Spark failed because checkpointed state is gone (its executor was lost)."""
    return "Checkpoint block" in str(e) and "not found" in str(e)


@dataclass
class Spine:
    """The pieces of one arrangement: a base and recent batches (all with `__h`)."""

    arity: int
    base: Stored | None = None
    batches: list[Stored] = field(default_factory=list)
    # accumulators (Reduce::Accumulable): rows c0..c{sums_after-1} are a key, the other
    # columns sums that pieces add up (merging sums them per key; the first is the count)
    sums_after: int | None = None

    def rows(self) -> int:
        return (self.base.rows if self.base is not None else 0) + sum(b.rows for b in self.batches)

    def pieces(self) -> list[Stored]:
        return ([self.base] if self.base is not None else []) + self.batches

    def empty(self) -> bool:
        return not self.pieces()

    def read(self, restriction: Restriction | None, template: Rel, extra: list[Stored] | None = None, with_hash: bool = False) -> Rel:
        """The arrangement's rows (restricted to keys; `extra`: pending batches of this step),
        not consolidated. Empty: `template` with no rows (it gives the schema)."""
        cols = [*cnames(self.arity), DIFF] + ([HASH] if with_hash else [])
        pieces = self.pieces() + (extra or [])
        where = f" WHERE {restriction.predicate()}" if restriction is not None else ""
        if not pieces:
            sel = [*cnames(self.arity), DIFF] + ([f"CAST(0 AS BIGINT) AS {HASH}"] if with_hash else [])
            return Rel(f"SELECT {', '.join(sel)} FROM ({template.sql}) AS _e WHERE FALSE", self.arity)
        parts = [f"SELECT {', '.join(cols)} FROM global_temp.{p.view}{where}" for p in pieces]
        return few_keys(Rel(" UNION ALL ".join(parts), self.arity), restriction)

    def appended(self, batch: Stored) -> Spine:
        """The spine with `batch` added (the merge, if due, is done by `merged`); the first
        piece of an empty spine is its base (store it with base partitions: `store`)."""
        if self.empty():
            return Spine(self.arity, batch, [], self.sums_after)
        return Spine(self.arity, self.base, [*self.batches, batch], self.sums_after)

    def merged(self, spark: SparkSession, partitions: int) -> tuple[Spine, list[Stored], list[Stored]]:
        """Apply the merge policy: (new spine, pieces it no longer holds, pieces created)."""
        decision, k = merge_decision(self.base.rows if self.base is not None else 0, [b.rows for b in self.batches])
        if decision == "none":
            return self, [], []
        pieces = self.pieces() if decision == "base" else self.batches[-k:]
        cols = cnames(self.arity)
        union = " UNION ALL ".join(f"SELECT * FROM global_temp.{p.view}" for p in pieces)
        if self.sums_after is None:
            # consolidate: sum the diffs of equal rows (same key, so same hash), drop zeros
            group = ", ".join([*cols, HASH])
            q = f"SELECT {', '.join([*cols, f'SUM({DIFF}) AS {DIFF}', HASH])} FROM ({union}) AS _u GROUP BY {group} HAVING SUM({DIFF}) <> 0"
        else:
            # add up the accumulators of a key; a key counting no rows is gone
            m = self.sums_after
            sums = [f"SUM({c}) AS {c}" for c in cols[m:]]
            q = (f"SELECT {', '.join([*cols[:m], *sums, f'CAST(1 AS BIGINT) AS {DIFF}', HASH])} FROM ({union}) AS _u"
                 f" GROUP BY {', '.join([*cols[:m], HASH])} HAVING SUM({cols[m]}) <> 0")
        small = sum(p.rows for p in pieces) <= LOCAL_ROWS
        s = store(spark, q, self.arity, partitions if decision == "base" else None, local=small)
        if decision == "base":
            return Spine(self.arity, s, [], self.sums_after), pieces, [s]
        return Spine(self.arity, self.base, [*self.batches[:-k], s], self.sums_after), pieces, [s]
