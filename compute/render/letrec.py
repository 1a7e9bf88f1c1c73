"""`WITH MUTUALLY RECURSIVE` (LIR LetRec) on Spark: the one place that runs Spark jobs while
rendering. The bindings are iterated to a fixpoint (`fixpoint`), each evaluation's value
stored as local checkpoints, and the body is rendered over the final values.

A binding's value is a list of stored parts (their UNION ALL; usually one). An accumulating
binding, `x = a UNION ALL .. UNION ALL x` (x read once, directly; PostgreSQL's WITH RECURSIVE
result `t = w UNION ALL t` is one), is evaluated by the identity

    x(new) = (a + ..)(current) + x(old)

appending the added collection as one more part instead of recomputing and re-consolidating
the whole of x; it changed iff the added collection is non-zero. When the added collection is
one stored part of another binding (`t = w + t`), that part is shared and the evaluation runs
no Spark job. The parts are compacted into one every `MAX_PARTS` appends, so the plans reading
x stay small. An iteration thus costs what its new rows cost (semi-naive evaluation of the
working-table recursion).

Early stop: when the query's only finishing is a LIMIT (no ORDER BY) and the LetRec's body
reads an accumulating binding whose multiplicities are never negative, iterations stop as soon
as that binding holds enough rows: its value only grows, so any rows of it are rows of its
fixpoint — the lazily evaluated recursive UNION of PostgreSQL (`.. SELECT n+1 FROM t) SELECT *
FROM t LIMIT 10` terminates there too).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from pyspark.sql import functions as F

from compute.plan import lir
from compute.plan.non_negative import non_negative
from compute.render.oneshot import _constant, render
from compute.render.rel import Rel, RenderContext, cnames
from sql.recursion import fixpoint
from sql.types import SqlType

# appended parts of an accumulating binding before they are compacted into one
MAX_PARTS = 16


def _local_gets(p: lir.Plan, ids: frozenset[str], out: dict[str, tuple[SqlType, ...]]) -> dict[str, tuple[SqlType, ...]]:
    """The ids among `ids` that `p` reads, with their column types."""
    from compute.plan.pipeline import lir_children

    n = p.node
    if isinstance(n, lir.Get) and n.local and n.id in ids:
        out[n.id] = n.types
    for c in lir_children(n):
        _local_gets(c, ids, out)
    return out


def _plain_get(p: lir.Plan) -> str | None:
    """The binding `p` reads as it is (a local Get without MFP), if it is one."""
    n = p.node
    return n.id if isinstance(n, lir.Get) and n.local and n.mfp.is_identity() else None


def accumulation(lid: str, value: lir.Plan) -> tuple[lir.Plan, ...] | None:
    """For `lid = a UNION ALL .. UNION ALL lid` (lid read once, as it is): the other inputs."""
    n = value.node
    if not isinstance(n, lir.Union):
        return None
    selfs = [k for k, x in enumerate(n.inputs) if _plain_get(x) == lid]
    others = tuple(x for k, x in enumerate(n.inputs) if k not in selfs)
    if len(selfs) != 1 or any(lid in _local_gets(x, frozenset({lid}), {}) for x in others):
        return None
    return others


def non_negative_bindings(ids: tuple[str, ...], values: tuple[lir.Plan, ...]) -> dict[str, bool]:
    """Which bindings never hold a negative multiplicity: the greatest solution of
    ok(x) = non_negative(value(x)) given ok. Sound by induction over the iterations: every
    binding starts empty, and a value over non-negative inputs is non-negative."""
    ok = dict.fromkeys(ids, True)
    while True:
        nxt = {i: ok[i] and non_negative(v, dict(ok)) for i, v in zip(ids, values, strict=True)}
        if nxt == ok:
            return ok
        ok = nxt


def _row_goal_binding(n: lir.LetRec, goal: int | None, acc: dict[str, tuple[lir.Plan, ...]], nonneg: dict[str, bool]) -> str | None:
    """The accumulating, non-negative binding whose row count may end the iteration early: the
    body reads it through an MFP that keeps every row (no predicate)."""
    if goal is None:
        return None
    b = n.body.node
    if not (isinstance(b, lir.Get) and b.local and b.id in acc and not b.mfp.predicates):
        return None
    return b.id if nonneg[b.id] else None


@dataclass
class _Values:
    """The bindings' current values as stored parts, shared by reference count."""

    ctx: RenderContext
    types: dict[str, tuple[SqlType, ...]]
    parts: dict[str, list[Rel]] = field(default_factory=dict)
    # per stored part (by its text): its `_Stats`
    stats: dict[str, _Stats] = field(default_factory=dict)
    refs: Counter[str] = field(default_factory=Counter)

    def set(self, lid: str, parts: list[Rel]) -> None:
        for p in parts:
            self.refs[p.sql] += 1
        for p in self.parts.get(lid, []):
            self.refs[p.sql] -= 1
            if not self.refs[p.sql]:
                del self.refs[p.sql], self.stats[p.sql]
                self.ctx.free(p)
        self.parts[lid] = parts
        if lid in self.types:
            self.ctx.lets[lid] = union(parts, self.types[lid], self.ctx)

    def total(self, lid: str) -> int:
        return sum(self.stats[p.sql].total for p in self.parts.get(lid, []))


def union(parts: list[Rel], types: tuple[SqlType, ...], ctx: RenderContext) -> Rel:
    if not parts:
        return _constant((), types, ctx)
    if len(parts) == 1:
        return parts[0]
    return Rel(" UNION ALL ".join(f"SELECT * FROM {ctx.sub(p)}" for p in parts), parts[0].arity)


def render_letrec(n: lir.LetRec, ctx: RenderContext) -> Rel:
    """Iterate the bindings to a fixpoint (`fixpoint`), then render the body over them.

    Each evaluation renders a binding's value over the current values in `ctx.lets`, then
    consolidates it (negative multiplicities are kept), compares it with the old value and
    stores it as a local checkpoint in one Spark job (`_store`), and frees what the
    evaluation persisted and the superseded value; accumulating bindings append (module
    docstring). The final values live until `ctx.release()`. Under EXPLAIN ANALYZE the nodes
    of a binding's value report the records of its last evaluation."""
    goal, ctx.row_goal = ctx.row_goal, None
    ids, values = n.ids, n.values
    idset = frozenset(ids)
    types: dict[str, tuple[SqlType, ...]] = {}
    for p in (*values, n.body):
        _local_gets(p, idset, types)
    reads = tuple(frozenset(ids.index(i) for i in _local_gets(v, idset, {})) for v in values)
    acc = {i: o for i, v in zip(ids, values, strict=True) if (o := accumulation(i, v)) is not None}
    nonneg = non_negative_bindings(ids, values)
    goal_id = _row_goal_binding(n, goal, acc, nonneg)
    saved = {i: ctx.lets[i] for i in ids if i in ctx.lets}
    vals = _Values(ctx, types)
    for i in ids:
        vals.set(i, [])

    def evaluate(plan: lir.Plan, old: list[Rel] | None, positive: bool = False) -> tuple[Rel, bool]:
        """`plan` rendered and stored (its evaluation's temporaries freed), and whether it
        differs from the parts `old`."""
        mark = len(ctx.persisted)
        observed_before = set(ctx.observed) if ctx.observed is not None else set()
        value = render(plan, ctx)
        if positive and old is not None:
            new, stats = _store_positive(value, ctx)
            changed = _differs(new, stats, old, [vals.stats[p.sql] for p in old], ctx)
        else:
            new, changed, stats = _store(value, union(old, (), ctx) if old else None, ctx)
        if ctx.observed is not None:
            for nid in set(ctx.observed) - observed_before:
                ctx.counted[nid] = ctx.observed.pop(nid).count()
        kept = ctx.persisted.pop()
        ctx.release(mark)
        ctx.persisted.append(kept)
        vals.stats[new.sql] = stats
        return new, changed

    def step(k: int) -> bool:
        lid = ids[k]
        if lid in acc:
            return accumulate(lid, acc[lid])
        old = vals.parts[lid]
        new, changed = evaluate(values[k], old, nonneg[lid])
        vals.set(lid, [new])
        return changed

    def accumulate(lid: str, others: tuple[lir.Plan, ...]) -> bool:
        gets = [_plain_get(o) for o in others]
        shared = [p for g in gets if g is not None for p in vals.parts[g]] if all(g in idset for g in gets) else None
        nonzero = [p for p in shared or [] if vals.stats[p.sql].rows]
        if shared is not None and len(nonzero) <= 1:
            added = nonzero  # one consolidated part: non-zero iff it has a row
        else:
            plan = others[0] if len(others) == 1 else lir.Plan(-1, lir.Union(others))
            part, _ = evaluate(plan, None)
            added = [part] if vals.stats[part.sql].rows else []
            if not added:
                del vals.stats[part.sql]
                ctx.free(part)
        if not added:
            return False
        parts = [*vals.parts[lid], *added]
        vals.set(lid, [compact(parts)] if len(parts) > MAX_PARTS else parts)
        return True

    def compact(parts: list[Rel]) -> Rel:
        """The parts' sum as one stored part."""
        mark = len(ctx.persisted)
        new, _, stats = _store(union(parts, (), ctx), None, ctx)
        kept = ctx.persisted.pop()
        ctx.release(mark)
        ctx.persisted.append(kept)
        vals.stats[new.sql] = stats
        return new

    def enough() -> bool:
        return goal_id is not None and goal is not None and vals.total(goal_id) >= goal

    try:
        fixpoint(n.limits, reads, step, ctx.check_interrupt, ctx.max_iterations, enough)
        return render(n.body, ctx)
    finally:
        for i in ids:
            ctx.lets.pop(i, None)
        ctx.lets.update(saved)


@dataclass(frozen=True, slots=True)
class _Stats:
    """A stored part: rows with a non-zero multiplicity (stored rows, when not consolidated),
    the sum of the multiplicities, and a fingerprint, the sum of multiplicity * hash(row): equal
    collections have equal fingerprints, however their rows are consolidated."""

    rows: int
    total: int
    fingerprint: int | None


def _observe(df, ctx: RenderContext, diff: str, *more):  # type: ignore[no-untyped-def]
    """`df` observed: its rows with a non-zero `diff`, their sum and fingerprint (`_Stats`)."""
    from pyspark.sql import Observation

    cols = [c for c in df.columns if c.startswith("c") and c[1:].isdigit()]
    h = F.xxhash64(*cols).cast("decimal(38,0)") if cols else F.lit(0).cast("decimal(38,0)")
    seen = Observation()
    out = df.observe(seen, *more, F.sum(F.when(F.col(diff) != 0, 1).otherwise(0)).alias("rows"),
                     F.sum(F.col(diff)).alias("total"), F.sum(h * F.col(diff)).alias("fp"))
    return out, seen


def _stats(got: dict) -> _Stats:  # type: ignore[type-arg]
    return _Stats(int(got["rows"] or 0), int(got["total"] or 0), int(got["fp"] or 0))


def _store_positive(value: Rel, ctx: RenderContext) -> tuple[Rel, _Stats]:
    """`value`, whose multiplicities are never negative, checkpointed as it is (no
    consolidation: no shuffle), with its `_Stats`, in one Spark job."""
    df, seen = _observe(ctx.session().sql(f"SELECT * FROM {ctx.sub(value)}"), ctx, "diff")
    new = ctx.checkpoint(df, value.arity)
    return new, _stats(seen.get)


def _differs(new: Rel, stats: _Stats, old: list[Rel], old_stats: list[_Stats], ctx: RenderContext) -> bool:
    """Whether the collection `new` differs from the sum of the parts `old` (all of them never
    negative). Different sums or fingerprints prove a difference, and two empty collections
    are equal; otherwise (equal, or a collision) one group-by compares them."""
    total = sum(s.total for s in old_stats)
    fingerprint = sum(s.fingerprint or 0 for s in old_stats)
    if (stats.total, stats.fingerprint) != (total, fingerprint):
        return True
    if total == 0:
        return False
    cols = cnames(new.arity)
    sides = [f"SELECT {', '.join([*cols, 'diff'])} FROM {ctx.sub(new)}",
             *[f"SELECT {', '.join([*cols, '-diff'])} FROM {ctx.sub(p)}" for p in old]]
    q = f"SELECT 1 FROM ({' UNION ALL '.join(sides)}) AS {ctx.alias()}"
    q += (" GROUP BY " + ", ".join(cols) if cols else "") + " HAVING SUM(diff) <> 0"
    return bool(ctx.session().sql(q).limit(1).collect())


def _store(value: Rel, old: Rel | None, ctx: RenderContext) -> tuple[Rel, bool, _Stats]:
    """`value` consolidated and checkpointed, whether it differs from `old` (`None` = empty),
    and its `_Stats`, in one Spark job: one group-by sums each row's new and old diffs, an
    observation counts the rows whose sums differ, and rows with a non-zero new diff are
    kept."""
    cols = cnames(value.arity)
    sides = [f"SELECT {', '.join([*cols, 'diff AS nd', 'CAST(0 AS BIGINT) AS od'])} FROM {ctx.sub(value)}"]
    if old is not None:
        sides.append(f"SELECT {', '.join([*cols, 'CAST(0 AS BIGINT) AS nd', 'diff AS od'])} FROM {ctx.sub(old)}")
    q = (f"SELECT {', '.join([*cols, 'COALESCE(SUM(nd), 0) AS nd', 'COALESCE(SUM(od), 0) AS od'])}"
         f" FROM ({' UNION ALL '.join(sides)}) AS {ctx.alias()}")
    if cols:
        q += " GROUP BY " + ", ".join(cols)
    df, seen = _observe(ctx.session().sql(q), ctx, "nd", F.sum(F.when(F.col("nd") != F.col("od"), 1).otherwise(0)).alias("changed"))
    new = ctx.checkpoint(df.where(F.col("nd") != 0).selectExpr(*cols, "nd AS diff"), value.arity)
    got = seen.get
    return new, bool(got["changed"]), _stats(got)
