"""Incremental rendering of maintained LIR dataflows (DESIGN §5.1 right column, §5.3): each
step turns the inputs' updates into the output's updates by the standard IVM identities,
against arrangements held in Spark (compute.render.arrangement). Operator semantics are the
one-shot renderings (compute.render.oneshot) applied to delta / restricted-state relations.

Rules (Δ = this step's updates; X' = X after the step; f|K = f restricted to the keys K):
- Get: Δout = Δin; Constant: its rows at hydration, nothing after.
- Mfp / FlatMap / Negate / ArrangeBy (linear): Δf(x) = f(Δx). Union: Δ(a + b) = Δa + Δb.
- Let: the value's Δ is computed once and shared by every local Get.
- Join: Δ(A1 ⋈ … ⋈ An) = Σ_i A1' ⋈ … ⋈ A(i-1)' ⋈ ΔAi ⋈ A(i+1) ⋈ … ⋈ An, every input kept as
  an arrangement by its lookup key; the first lookup of each term reads only the keys of ΔAi.
- Reduce / TopK / Threshold (keyed by the group key; Threshold by the whole row): with K the
  keys of Δin, Δout = f(in'|K) − out|K, where in' is the input arrangement with Δin added,
  f the one-shot operator and out the node's output arrangement.
- TopK over a monotonic input (MonotonicTop1 / MonotonicTopK): top_k(in') = top_k(out ∪ Δin)
  (no retractions), so only the output arrangement is kept (thinning).
- A temporal MFP (mz_now() in its predicates; DESIGN §7) at a step at time t: Δout = the
  updates of f(Δin) valid at t + the pending updates due in (previous t, t]; the updates of
  f(Δin) due after t (and before the dataflow's `until`) join the pending state
  (compute.render.temporal). A step's updates are all at the step's time.

A step is atomic: state pieces made during the step are swapped in only once every node (and
the output) has been computed; on an exception they are freed and the state is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from compute.plan import lir
from compute.render.arrangement import (
    HASH,
    HASH_ROWS,
    MAX_LITERAL_KEYS,
    Restriction,
    Spine,
    Stored,
    few_keys,
    key_hash,
    one_partition,
    store,
)
from compute.render.driver_calls import without_last
from compute.render.oneshot import (
    DIFF,
    Rel,
    RenderContext,
    _constant,
    _flat_map,
    _local_uses,
    _reduce,
    _topk,
    accumulable_parts,
    apply_mfp,
    cname,
    cnames,
    consolidate,
    grouped_outputs,
    jsonb_equality_key,
    negate,
    threshold,
    union,
)
from compute.render.scalar import render_scalar
from compute.render.temporal import Pending, bounded, future, split_temporal, valid_at
from sql.errors import unsupported
from sql.scalar import CallVariadic, Scalar, columns_used, permute
from sql.types import SqlType

# session settings of the step path (DESIGN §5.2): fine column batches (pruned by their
# min/max), literal IN lists kept as InSet (pruning is lost past the default 10 keys)
_SESSION_CONF = {
    "spark.sql.inMemoryColumnarStorage.batchSize": "2000",
    "spark.sql.optimizer.inSetConversionThreshold": "10",
    "spark.sql.adaptive.enabled": "false",
}
# ... and for steps (small deltas): no whole-stage code generation (each step's SQL text is
# new: compiling it costs more than it saves) and one shuffle partition
_STEP_CONF = {"spark.sql.codegen.wholeStage": "false", "spark.sql.shuffle.partitions": "1"}


def delta_session(spark: SparkSession, step: bool) -> SparkSession:
    """A sibling session (same context, cache and global views) with the settings of
    hydration or (`step`) of steps."""
    from compute.render.spark import register_functions

    s = spark.newSession()
    for k, v in (_SESSION_CONF | (_STEP_CONF if step else {})).items():
        s.conf.set(k, v)
    register_functions(s)
    return s


def hash_key(expr: str, typ: SqlType) -> str:
    """A key value as hashed: jsonb by its equality key (1.0 = 1), floats with -0.0 = 0.0."""
    if typ.name == "jsonb":
        return jsonb_equality_key(expr)
    if typ.name in ("float4", "float8"):
        return f"(CAST({expr} AS DOUBLE) + CAST(0 AS DOUBLE))"
    return expr


@dataclass(frozen=True, slots=True)
class _Delta:
    rel: Rel
    empty: bool  # known to hold no rows: no Spark work is needed for it
    consolidated: bool = False  # no two equal rows, no zero diff




def _unsupported_reason(df: lir.Dataflow) -> str | None:
    from compute.plan.temporal import unsupported_reason

    for x in lir.walk((df.plan, df.source_mfps)):
        if isinstance(x, lir.LetRec):
            return "WITH MUTUALLY RECURSIVE"
        if isinstance(x, CallVariadic) and x.func == "now":
            return "now()"
    return unsupported_reason(df)


def _accumulators(key: tuple[Scalar, ...], aggs: tuple) -> bool:
    """Whether a Reduce::Accumulable keeps per-key accumulators (a jsonb key's value and an
    interval sum's fields are not plain sums: those recompute the touched groups)."""
    return all(k.typ.name != "jsonb" for k in key) and all(a.typ.name != "interval" for a in aggs)


@dataclass(frozen=True, slots=True)
class _Term:
    """One term of a join's delta rule: ΔA_source joined with the other inputs in `order`;
    the first lookup is restricted to the keys of the delta (`stream_key` over the source's
    columns = that input's arrangement `first_arrangement`), if `stream_key` is not None."""

    source: int
    order: tuple[int, ...]
    stream_key: tuple[Scalar, ...] | None
    first_arrangement: int


@dataclass(frozen=True, slots=True)
class _JoinPlan:
    keys: tuple[tuple[tuple[Scalar, ...], ...], ...]  # per input: its arrangements' keys (local columns)
    terms: tuple[_Term, ...]


def _join_plan(n: lir.Join) -> _JoinPlan:
    """Per input i, the order of the delta term of ΔA_i (the planner's path i for a delta
    join, else following the equivalences from i) and the key of its first lookup."""
    k = len(n.inputs)
    offsets = [0]
    for a in n.arities:
        offsets.append(offsets[-1] + a)

    def local(x: Scalar, j: int) -> Scalar:
        return permute(x, {c: c - offsets[j] for c in columns_used(x)})

    def within(x: Scalar, j: int) -> bool:
        used = columns_used(x)
        return bool(used) and all(offsets[j] <= c < offsets[j + 1] for c in used)

    def pairs(i: int, j: int) -> tuple[tuple[Scalar, ...], tuple[Scalar, ...]]:
        """Equal (stream over i, lookup over j) expressions, of the same type."""
        s, lk = [], []
        for cls in n.equivalences:
            xi = next((x for x in cls if within(x, i)), None)
            xj = next((x for x in cls if within(x, j) and (xi is None or x.typ == xi.typ)), None)
            if xi is not None and xj is not None and xi.typ == xj.typ:
                s.append(local(xi, i))
                lk.append(local(xj, j))
        return tuple(s), tuple(lk)

    def connected(have: set[int], j: int) -> bool:
        cols = {c for h in have for c in range(offsets[h], offsets[h + 1])}
        for cls in n.equivalences:
            if any(columns_used(x) and columns_used(x) <= cols for x in cls) and any(within(x, j) for x in cls):
                return True
        return False

    keys: list[list[tuple[Scalar, ...]]] = [[] for _ in range(k)]
    raw_terms = []
    for i in range(k):
        path = next((p for p in n.paths if p.source == i), None) if n.strategy == "Delta" else None
        if path is not None and len(path.stages) == k - 1:
            order = [i, *(st.lookup_relation for st in path.stages)]
        else:
            order, rest = [i], [j for j in range(k) if j != i]
            while rest:
                nxt = next((j for j in rest if connected(set(order), j)), rest[0])
                order.append(nxt)
                rest.remove(nxt)
        stream, lookup = pairs(i, order[1]) if k > 1 else ((), ())
        raw_terms.append((i, tuple(order), stream if lookup else None, lookup))
        if k > 1 and lookup and lookup not in keys[order[1]]:
            keys[order[1]].append(lookup)
    for j in range(k):
        if not keys[j]:
            keys[j].append(())
    terms = tuple(_Term(i, order, stream, keys[order[1]].index(lookup) if (k > 1 and stream is not None) else 0)
                  for i, order, stream, lookup in raw_terms)
    return _JoinPlan(tuple(tuple(ks) for ks in keys), terms)


class DeltaDataflow:
    """A maintained dataflow rendered incrementally (see the module docstring)."""

    def __init__(self, spark: SparkSession, dataflow: lir.Dataflow, output_key: tuple[Scalar, ...] | None = None) -> None:
        """`output_key`: the output is an index's arrangement keyed by it — each step's output
        is stored with that key's hash, ready to be a batch of the index's spine (`take_output`)."""
        reason = _unsupported_reason(dataflow)
        if reason is not None:
            raise unsupported(f"{reason} in incrementally maintained dataflows")
        self.dataflow = dataflow
        self.partitions = int(spark.conf.get("spark.sql.shuffle.partitions") or "2")
        self.spark = delta_session(spark, step=False)
        self.step_spark = delta_session(spark, step=True)
        self.spines: dict[str, Spine] = {}
        self.owner: dict[str, int] = {}
        self.output: Stored | None = None
        self.hydrated = False
        # temporal filters: each temporal MFP's future updates (by name), and the time from
        # which updates are dropped (dataflow expiration; None: never)
        self.pending: dict[str, Pending] = {}
        self.until: int | None = None
        self.actions = 0  # Spark actions run by steps (for the benchmark)
        self.float_columns: dict[int, frozenset[int]] = {}  # by node id (see _Step.column_keys)
        self.output_key = output_key
        self.output_empty = False  # the last output had no rows (and none was stored)
        # hydration reporting (compute.hydration.Observer): job tags for the nodes whose
        # output hydration materializes; None: reporting off
        self.observer: Any = None

    @staticmethod
    def supports(dataflow: lir.Dataflow) -> bool:
        return _unsupported_reason(dataflow) is None

    def hydrate(self, snapshots: Mapping[str, DataFrame], *, time: int | None = None, until: int | None = None) -> DataFrame:
        assert not self.hydrated, "hydrated twice"
        self.until = until
        out = self._run(snapshots, initial=True, time=time)
        self.hydrated = True
        return out

    def step(self, deltas: Mapping[str, DataFrame], *, time: int | None = None) -> DataFrame:
        assert self.hydrated, "step before hydrate"
        return self._run(deltas, initial=False, time=time)

    def state_rows(self) -> Mapping[int, int]:
        out: dict[int, int] = {}
        for name, s in self.spines.items():
            out[self.owner[name]] = out.get(self.owner[name], 0) + s.rows()
        for name, pnd in self.pending.items():
            out[self.owner[name]] = out.get(self.owner[name], 0) + pnd.rows()
        return dict(sorted(out.items()))

    def has_due(self, time: int) -> bool:
        """Whether a step at `time` with no input updates may change the output (a pending
        piece reaches `time`); no Spark work."""
        return any(p.due(time) for p in self.pending.values())

    def pending_updates(self) -> int:
        """The future updates the dataflow holds (one Spark job when some were released
        from a piece that still holds later ones)."""
        total, parts = 0, []
        for pnd in self.pending.values():
            for p in pnd.pieces:
                if pnd.through is None or (p.bounds is not None and p.bounds[0] > pnd.through):
                    total += p.rows
                else:
                    parts.append(f"SELECT {HASH} FROM global_temp.{p.view} WHERE {HASH} > {pnd.through}")
        if parts:
            total += int(self.spark.sql(f"SELECT count(*) FROM ({' UNION ALL '.join(parts)}) AS _p").collect()[0][0])
        return total

    def state_pieces(self) -> dict[int, list[Stored]]:
        """The cached pieces of state held per LIR node id (EXPLAIN ANALYZE MEMORY)."""
        out: dict[int, list[Stored]] = {}
        for name, s in self.spines.items():
            out.setdefault(self.owner[name], []).extend(s.pieces())
        for name, pnd in self.pending.items():
            out.setdefault(self.owner[name], []).extend(pnd.pieces)
        return out

    def close(self) -> None:
        self._free_output()
        for s in self.spines.values():
            for p in s.pieces():
                p.free(self.spark)
        self.spines.clear()
        for pnd in self.pending.values():
            for p in pnd.pieces:
                p.free(self.spark)
        self.pending.clear()

    def take_output(self) -> tuple[Stored | None, bool]:
        """The last step's stored output (columns c0.., diff, and `__h` the hash of
        `output_key`), now the caller's to free; and whether that output was empty."""
        out, self.output = self.output, None
        return out, self.output_empty

    def _free_output(self) -> None:
        if self.output is not None:
            self.output.free(self.spark)
            self.output = None

    def _run(self, inputs: Mapping[str, DataFrame], initial: bool, time: int | None) -> DataFrame:
        self._free_output()
        st = _Step(self, inputs, initial, time)
        try:
            d = st.delta(self.dataflow.plan)
            out = d.rel if d.consolidated else consolidate(d.rel, st.ctx)
            cols = cnames(out.arity)
            h = "CAST(0 AS BIGINT)" if self.output_key is None else key_hash([hash_key(render_scalar(k, cols), k.typ) for k in self.output_key])
            q = f"SELECT {', '.join([*cols, DIFF])}, {h} AS {HASH} FROM {st.ctx.sub(out)}"
            self.output_empty = d.empty
            if d.empty:
                if self.observer is not None and st.initial:
                    self.observer.no_work(self.dataflow.plan.node_id)
                schema = st.spark.sql(q).drop(HASH).schema
                result = st.spark.createDataFrame([], schema)
            else:
                self.output = store(st.spark, q, out.arity, tag=st.tag(self.dataflow.plan.node_id), local=not st.initial)
                self.actions += 1
                result = _without_hash(st.spark, self.output)
            dropped = st.merge()
        except BaseException:
            st.abort()
            raise
        self.spines.update(st.spines)
        self.pending.update(st.pendings)
        self.owner.update(st.owner)
        st.finish(dropped)
        return result


def _without_hash(spark: SparkSession, out: Stored) -> DataFrame:
    """The stored output without its key hash: for a local piece, a local relation of its
    other columns (made in the JVM: no plan over the view to analyze, and collected with no
    planning at all: spark.collect_local); else `out.df.drop(HASH)`."""
    if out.local:
        got = without_last(spark, out.view)
        if got is not None:
            return got
    return DataFrame(out.df._jdf.drop(HASH), spark)  # (one py4j call)


class _Step:
    """One step's work: pending spines (swapped in by the caller on success), the pieces
    made for them (freed on failure) and the step's scratch views (freed at the end)."""

    def __init__(self, flow: DeltaDataflow, inputs: Mapping[str, DataFrame], initial: bool, time: int | None = None) -> None:
        self.flow = flow
        self.time = time
        self.pendings: dict[str, Pending] = {}  # temporal MFPs' new pending states
        self.released: list[Stored] = []  # pending pieces every update of which was released
        self.spark = flow.spark if initial else flow.step_spark
        self.inputs = inputs
        self.initial = initial
        self.ctx = RenderContext(self.spark, self._read_source, source_mfps=dict(flow.dataflow.source_mfps))
        self.spines: dict[str, Spine] = {}
        self.owner: dict[str, int] = {}
        self.created: list[Stored] = []
        self.temps: list[Stored] = []
        self.lets: dict[str, _Delta] = {}

    # -- bookkeeping

    def spine(self, name: str, nid: int, arity: int) -> Spine:
        """The arrangement `name` as of this step (with this step's batches, if any)."""
        self.owner[name] = nid
        if name in self.spines:
            return self.spines[name]
        return self.flow.spines.get(name) or Spine(arity)

    def committed(self, name: str, arity: int) -> Spine:
        return self.flow.spines.get(name) or Spine(arity)

    def tag(self, node_id: int | None) -> str | None:
        """At hydration with reporting on: the job tag observing `node_id`'s output (its
        first materialization), else None."""
        obs = self.flow.observer
        return obs.tag(node_id) if obs is not None and self.initial and node_id is not None else None

    def store(self, sql: str, arity: int, temp: bool = False, base: bool = False, hashes: bool = False,
              bounds: bool = False, observe: int | None = None, sort: bool = True) -> Stored:
        """Compute and cache `sql`: a piece of the new state (`base`: the first piece of an
        arrangement, range-partitioned by key), or (`temp`) this step's scratch; `hashes`:
        bring back its key hashes, `bounds` its least and greatest (see arrangement.store);
        `observe`: the node whose output `sql` is (hydration reporting)."""
        s = store(self.spark, sql, arity, self.flow.partitions if base else None, hashes=hashes and not self.initial,
                  bounds=bounds, tag=self.tag(observe), sort=sort, local=not self.initial)
        self.flow.actions += 1
        (self.temps if temp else self.created).append(s)
        return s

    def drop(self, s: Stored) -> None:
        """Free a piece made in this step that no state holds (e.g. an empty one)."""
        self.created.remove(s)
        s.free(self.spark)

    def collect(self, sql: str) -> list[Any]:
        self.flow.actions += 1
        return [r[0] for r in self.spark.sql(sql).collect()]

    def merge(self) -> list[Stored]:
        """Apply every touched spine's merge policy; the pieces the new state drops."""
        dropped: list[Stored] = []
        for name, s in list(self.spines.items()):
            merged, gone, made = s.merged(self.spark, self.flow.partitions)
            self.created.extend(made)
            dropped.extend(gone)
            self.spines[name] = merged
        dropped.extend(self.released)
        for name, pnd in list(self.pendings.items()):
            merged_p, gone, made = pnd.merged(self.spark, self.flow.partitions)
            self.flow.actions += len(made)
            self.created.extend(made)
            dropped.extend(gone)
            self.pendings[name] = merged_p
        return dropped

    def abort(self) -> None:
        for s in self.created + self.temps:
            try:
                s.free(self.spark)
            except Exception:  # noqa: BLE001 - freeing after a failure: keep going
                pass
        self.ctx.release()

    def finish(self, dropped: list[Stored]) -> None:
        for s in dropped + self.temps:
            s.free(self.spark)
        self.ctx.release()

    def _read_source(self, sid: str, types: tuple[SqlType, ...]) -> Rel:
        df = self.inputs.get(sid)
        if df is None:
            return _constant((), types, self.ctx)
        # a step's input (a local relation or a Parquet scan) stays the caller's; (at
        # hydration, release() unpersists the snapshot as before)
        return Rel(self.ctx.view(df, persist=False, borrowed=not self.initial), len(types))

    def restriction(self, hashed: Stored, key_sql: str | None = None) -> Restriction:
        """The keys of a stored delta (`key_sql`: another key hash over its columns): its
        literal hashes (pruned reads), or past MAX_LITERAL_KEYS a semi-join with it."""
        col = key_sql or HASH
        hs: set[int] | None = None
        if key_sql is None and hashed.hashes is not None:
            hs = set(hashed.hashes)
        elif hashed.rows <= HASH_ROWS:
            hs = set(self.collect(f"SELECT {col} FROM global_temp.{hashed.view}"))
        if hs is not None and len(hs) <= MAX_LITERAL_KEYS:
            return Restriction(hashes=tuple(sorted(hs)))
        return Restriction(relation=f"SELECT {col} AS {HASH} FROM global_temp.{hashed.view}")

    # -- the rules

    def delta(self, p: lir.Plan) -> _Delta:
        n, ctx = p.node, self.ctx
        match n:
            case lir.Constant(rows=rows, types=ts):
                live = self.initial and bool(rows)
                return _Delta(_constant(rows if live else (), ts, ctx), not live)
            case lir.Get(id=i, types=ts, mfp=m, local=True):
                return self.mfp(p.node_id, "mfp", self.lets[i], m)
            case lir.Get(id=i, types=ts, mfp=m):
                d = _Delta(self._read_source(i, ts), i not in self.inputs)
                if i in ctx.source_mfps:
                    d = self.mfp(p.node_id, "src", d, ctx.source_mfps[i])
                return self.mfp(p.node_id, "mfp", d, m)
            case lir.MfpNode(input=i, mfp=m):
                return self.mfp(p.node_id, "mfp", self.delta(i), m)
            case lir.FlatMap(input=i, func=f, exprs=xs, types=ts):
                d = self.delta(i)
                return _Delta(_flat_map(d.rel, f, xs, ts, ctx), d.empty)
            case lir.Negate(input=i):
                d = self.delta(i)
                return _Delta(negate(d.rel, ctx), d.empty)
            case lir.ArrangeBy(input=i):
                return self.delta(i)
            case lir.Union(inputs=ins, consolidate_output=c):
                ds = [self.delta(x) for x in ins]
                return _Delta(union([d.rel for d in ds], c, ctx), all(d.empty for d in ds))
            case lir.Let(id=i, value=v, body=b):
                d = self.delta(v)
                if not d.empty and _local_uses(b, i) > 1:
                    d = _Delta(ctx.materialize(d.rel), False)
                self.lets[i] = d
                try:
                    return self.delta(b)
                finally:
                    del self.lets[i]
            case lir.Join():
                return self.join(p.node_id, n, [self.delta(x) for x in n.inputs])
            case lir.Reduce(input=i, group_key=key, aggregates=aggs, plan=lir.ReduceAccumulable()) if _accumulators(key, aggs):
                return self.accumulable(p.node_id, self.delta(i), key, aggs)
            case lir.Reduce(input=i, group_key=key, aggregates=aggs, plan=rp):
                d = self.delta(i)
                cols = cnames(d.rel.arity)
                in_key = [hash_key(render_scalar(k, cols), k.typ) for k in key]
                out_key = [hash_key(cname(j), k.typ) for j, k in enumerate(key)]
                return self.keyed(p.node_id, d, in_key, out_key, lambda r: _reduce(r, key, aggs, rp, ctx), i.node_id)
            case lir.TopK(input=i, group_key=g, order_key=o, limit=lim, offset=off, plan=tp):
                d = self.delta(i)
                gk = self.column_keys(p.node_id, d.rel, list(g))
                thin = isinstance(tp, lir.TopKMonotonicTop1 | lir.TopKMonotonicTopK)
                return self.keyed(p.node_id, d, gk, gk, lambda r: _topk(r, g, o, lim, off, tp, ctx), i.node_id, thin=thin)
            case lir.Threshold(input=i):
                d = self.delta(i)
                cols = self.column_keys(p.node_id, d.rel, list(range(d.rel.arity)))
                return self.keyed(p.node_id, d, cols, cols, lambda r: threshold(r, ctx), i.node_id)
            case lir.LetRec():
                raise unsupported("WITH MUTUALLY RECURSIVE in incrementally maintained dataflows")
        raise AssertionError(n)

    def mfp(self, nid: int, tag: str, d: _Delta, m: lir.Mfp) -> _Delta:
        """Δf(x) = f(Δx) for a plain MFP; a temporal one (see the module docstring): the
        updates valid at the step's time and the pending ones due, the later ones kept."""
        ctx = self.ctx
        t = split_temporal(m)
        if t is None:
            return _Delta(apply_mfp(d.rel, m, ctx), d.empty)
        if self.time is None:
            raise unsupported("temporal filters in a dataflow stepped without a time")
        name = f"{nid}.{tag}"
        self.owner[name] = nid
        old = self.flow.pending.get(name) or Pending(len(t.mfp.output))
        parts = []
        new, gone = old.advanced(self.time)
        due = old.read_due(self.time)
        if not d.empty:
            b = bounded(d.rel, t, ctx)
            parts.append(valid_at(b, self.time, ctx))
            piece = self.store(future(b, self.time, self.flow.until, ctx), b.arity, base=not new.pieces, bounds=True)
            if piece.rows:
                new = new.appended(piece)
            else:
                self.drop(piece)
        if due is not None:
            parts.append(due)
        self.pendings[name] = new
        self.released.extend(gone)
        if not parts:
            return _Delta(Rel(f"SELECT * FROM {ctx.sub(apply_mfp(d.rel, t.mfp, ctx))} WHERE FALSE", len(t.mfp.output)), True)
        return _Delta(union(parts, False, ctx), False)

    def column_keys(self, nid: int, rel: Rel, columns: list[int]) -> list[str]:
        """Key columns as hashed (floats normalized: -0.0 = 0.0); their types from Spark's
        analysis of the relation (once per node)."""
        if nid not in self.flow.float_columns:
            fields = self.spark.sql(rel.sql).schema.fields
            self.flow.float_columns[nid] = frozenset(k for k, f in enumerate(fields) if f.dataType.typeName() in ("float", "double"))
        floats = self.flow.float_columns[nid]
        return [f"(CAST({cname(c)} AS DOUBLE) + CAST(0 AS DOUBLE))" if c in floats else cname(c) for c in columns]

    def keyed(self, nid: int, din: _Delta, in_key: list[str], out_key: list[str], f: Callable[[Rel], Rel],
              in_node: int | None = None, thin: bool = False) -> _Delta:
        """Δout = f(in'|K) − out|K for the keys K of Δin (thin: in' = out ∪ Δin); `in_node`:
        the input's node id (its output is the stored input)."""
        ctx = self.ctx
        in_name, out_name = f"{nid}.in", f"{nid}.out"
        arity = din.rel.arity
        oa = f(din.rel).arity
        if din.empty:
            # nothing changes; still the output's schema
            return _Delta(Rel(f"SELECT * FROM {ctx.sub(f(din.rel))} WHERE FALSE", oa), True)
        hashed_q = f"SELECT {', '.join([*cnames(arity), DIFF])}, {key_hash(in_key)} AS {HASH} FROM {ctx.sub(din.rel)}"
        hashed = self.store(hashed_q, arity, temp=thin, base=not thin and self.spine(in_name, nid, arity).empty(), hashes=True,
                            observe=in_node)
        if hashed.rows == 0:
            if not thin:
                self.drop(hashed)
            return _Delta(Rel(f"SELECT * FROM {ctx.sub(f(din.rel))} WHERE FALSE", oa), True)
        old_out = self.committed(out_name, oa)
        self.owner[out_name] = nid
        dview = Rel(f"SELECT {', '.join([*cnames(arity), DIFF])} FROM global_temp.{hashed.view}", arity)
        if thin:
            # the current top k of the touched groups, with the new rows
            restr = None if old_out.empty() else self.restriction(hashed)
            new_in = union([old_out.read(restr, dview), dview], False, ctx) if restr is not None else dview
        else:
            old_in = self.spine(in_name, nid, arity)
            restr = None if old_in.empty() and old_out.empty() else self.restriction(hashed)
            new_spine = old_in.appended(hashed)
            self.spines[in_name] = new_spine
            new_in = new_spine.read(restr, dview)
        new_out = f(new_in)
        dout = consolidate(few_keys(union([new_out, negate(old_out.read(restr, new_out), ctx)], False, ctx), restr), ctx)
        out_q = f"SELECT {', '.join([*cnames(oa), DIFF])}, {key_hash(out_key)} AS {HASH} FROM {ctx.sub(dout)}"
        out = self.store(out_q, oa, base=old_out.empty(), observe=nid)
        if out.rows == 0:
            # nothing changed; (the view stays readable until the end of the step)
            self.created.remove(out)
            self.temps.append(out)
        else:
            self.spines[out_name] = old_out.appended(out)
        return _Delta(Rel(f"SELECT {', '.join([*cnames(oa), DIFF])} FROM global_temp.{out.view}", oa), out.rows == 0, True)

    def accumulable(self, nid: int, din: _Delta, key: tuple[Scalar, ...], aggs: tuple) -> _Delta:
        """Reduce::Accumulable by per-key accumulators (the one-shot aggregates, all sums):
        acc' = acc + acc(Δin) for the keys K of Δin; Δout = out(acc'|K) − out(acc|K), both
        from one read of acc|K ∪ acc(Δin) (the old sums leave out acc(Δin)'s rows)."""
        ctx = self.ctx
        name = f"{nid}.acc"
        keyed, kc, exprs, where, outs, _ = accumulable_parts(din.rel, key, aggs, ctx)
        sums = [e.rsplit(" AS ", 1)[1] for e in exprs]
        m = len(kc)
        cols = cnames(m + len(sums))
        part = f"SELECT {', '.join([*kc, *exprs])} FROM {ctx.sub(keyed)}" + (f" GROUP BY {', '.join(kc)}" if kc else "")
        khash = key_hash([hash_key(k, x.typ) for k, x in zip(kc, key, strict=True)])
        stored_q = (f"SELECT {', '.join([*[f'{k} AS {c}' for k, c in zip([*kc, *sums], cols, strict=True)], f'CAST(1 AS BIGINT) AS {DIFF}'])}, "
                    f"{khash} AS {HASH} FROM ({part}) AS _p")
        empty = Rel(f"SELECT {', '.join([*cols, DIFF])} FROM ({stored_q}) AS _e WHERE FALSE", len(cols))
        if din.empty:
            named = Rel(f"SELECT {', '.join(f'{c} AS {k}' for c, k in zip(cols, [*kc, *sums], strict=True))} FROM {ctx.sub(empty)}", 0)
            return _Delta(Rel(f"SELECT * FROM {ctx.sub(grouped_outputs(ctx, named, where, outs))} WHERE FALSE", len(outs)), True)
        acc = self.spine(name, nid, len(cols))
        acc = acc if acc.sums_after is not None else Spine(len(cols), acc.base, list(acc.batches), m)
        dacc = self.store(stored_q, len(cols), base=acc.empty(), hashes=True, observe=nid)
        restr = None if acc.empty() else self.restriction(dacc)
        self.spines[name] = acc.appended(dacc)
        # the pieces tagged: 0 the old accumulators, 1 this step's
        tagged = " UNION ALL ".join([
            f"SELECT {', '.join(cols)}, 0 AS __new FROM {ctx.sub(acc.read(restr, empty))}",
            f"SELECT {', '.join(cols)}, 1 AS __new FROM global_temp.{dacc.view}"])
        both = [f"SUM(CASE WHEN __new = 0 THEN {c} END) AS o{j}, SUM({c}) AS n{j}" for j, c in enumerate(cols[m:])]
        grouped = (f"SELECT {', '.join([*cols[:m], *both])} FROM {ctx.sub(few_keys(Rel(tagged, len(cols)), restr))}"
                   + (f" GROUP BY {', '.join(cols[:m])}" if m else ""))
        # one row per key and side (0 old, 1 new) with that side's sums; no old row: no old side
        side = [f"CASE WHEN __side = 0 THEN o{j} ELSE n{j} END AS {s}" for j, s in enumerate(sums)]
        sides = (f"SELECT * FROM (SELECT {', '.join([*[f'{c} AS {k}' for c, k in zip(cols, kc, strict=False)], *side])}, __side "
                 f"FROM ({grouped}) AS _g LATERAL VIEW explode(array(0, 1)) _x AS __side) AS _s "
                 f"WHERE {sums[0]} IS NOT NULL")
        out = grouped_outputs(ctx, Rel(sides, 0), where, [*outs, "__side"])
        n = len(outs)
        signed = Rel(f"SELECT {', '.join(cnames(n))}, CASE WHEN {cname(n)} = 1 THEN {DIFF} ELSE -{DIFF} END AS {DIFF} FROM {ctx.sub(out)}", n)
        # computed by its reader (no state keeps it)
        return _Delta(consolidate(signed, ctx), False, True)

    def join(self, nid: int, n: lir.Join, ds: list[_Delta]) -> _Delta:
        """Σ_i A1' ⋈ … ⋈ A(i-1)' ⋈ ΔAi ⋈ A(i+1) ⋈ … ⋈ An (see the module docstring)."""
        from compute.render.oneshot import _join

        ctx = self.ctx
        plan = _join_plan(n)
        k = len(n.inputs)
        stored: list[Stored | None] = [None] * k
        for j, d in enumerate(ds):
            if d.empty:
                continue
            cols = cnames(d.rel.arity)
            for a, key in enumerate(plan.keys[j]):
                kh = key_hash([hash_key(render_scalar(x, cols), x.typ) for x in key])
                name = f"{nid}.in{j}.{a}"
                s = self.store(f"SELECT {', '.join([*cols, DIFF])}, {kh} AS {HASH} FROM {ctx.sub(d.rel)}", d.rel.arity,
                               base=self.spine(name, nid, d.rel.arity).empty(), hashes=a == 0,
                               observe=n.inputs[j].node_id if a == 0 else None)
                if s.rows == 0:
                    self.created.remove(s)
                    self.temps.append(s)
                else:
                    self.spines[name] = self.spine(name, nid, d.rel.arity).appended(s)
                if a == 0:
                    stored[j] = s
        terms = []
        for t in plan.terms:
            src = stored[t.source]
            if src is None or src.rows == 0:
                continue
            rels: list[Rel] = [Rel("", 0)] * k
            rels[t.source] = Rel(f"SELECT {', '.join([*cnames(n.arities[t.source]), DIFF])} FROM global_temp.{src.view}", n.arities[t.source])
            # a local delta against few keys of every other input: joined in one partition
            in_place = src.local and len(t.order) == 2
            for pos, j in enumerate(t.order[1:]):
                a = t.first_arrangement if pos == 0 else 0
                name = f"{nid}.in{j}.{a}"
                spine = self.spine(name, nid, n.arities[j]) if j < t.source else self.committed(name, n.arities[j])
                self.owner[name] = nid
                restr = None
                if pos == 0 and t.stream_key is not None and not spine.empty():
                    cols = cnames(n.arities[t.source])
                    same = t.stream_key == plan.keys[t.source][0]  # the delta's own hashes
                    restr = self.restriction(src, None if same else key_hash([hash_key(render_scalar(x, cols), x.typ) for x in t.stream_key]))
                rels[j] = spine.read(restr, ds[j].rel)
                in_place = in_place and (spine.empty() or (restr is not None and restr.hashes is not None))
            if in_place:
                rels[t.source] = one_partition(rels[t.source])
            path = lir.JoinPath(t.source, (), tuple(lir.JoinStage(j, (), (), ()) for j in t.order[1:]))
            terms.append(_join(rels, n.equivalences, n.arities, (path,), ctx, in_place=in_place))
        arity = sum(n.arities)
        if not terms:
            empties = [d.rel for d in ds]
            return _Delta(Rel(f"SELECT * FROM {ctx.sub(_join(empties, n.equivalences, n.arities, n.paths, ctx))} WHERE FALSE", arity), True)
        # (hydration reporting: the join is computed in the stages of the job storing its
        # consumer's state, and inherits that job's status; it is not materialized apart)
        return _Delta(union(terms, False, ctx), False)
