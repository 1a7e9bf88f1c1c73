"""Temporal filters rendered (DESIGN §7; the bounds are compute.plan.temporal's).

One rendering of the bounds serves every renderer: `bounded` adds each row's validity
interval [__lo, __up) (NULL: unbounded) to the MFP's output, then

- `valid_at(t)`: the rows valid at t (lower <= t < upper): a dataflow rendered at one time
  (the recompute renderer, a hydration) and, by the identity max(t, lower) = t ⟺ lower <= t,
  the part of a step's updates at time t that is due at once;
- `future(t, until)`: the rest of the updates of a step at t: (row, lower, +diff) for
  t < lower < upper and (row, upper, −diff) for upper > max(t, lower), each only at a time
  < until (dataflow expiration: updates at or past `until` are never stored).

`Pending` holds the future updates of one temporal MFP in Spark: cached pieces keyed (and
sorted) by time, so releasing the updates due at t reads only the column batches whose time
range reaches t (batch pruning), never the whole state, and nothing is held by the driver
but each piece's row count and time range.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pyspark.sql import SparkSession

from compute.plan import lir
from compute.plan.temporal import Bound, NotTemporal, TemporalMfp, split
from compute.render.arrangement import HASH, Stored, merge_decision, store
from compute.render.rel import DIFF, Rel, RenderContext, cname, cnames, mfp_columns
from compute.render.scalar import render_scalar
from sql.errors import unsupported

LO, UP = "__lo", "__up"
# merge pending pieces when there are more than this many (every release reads them all)
MAX_PIECES = 8


def split_temporal(m: lir.Mfp) -> TemporalMfp | None:
    try:
        return split(m)
    except NotTemporal:
        raise unsupported("mz_now() outside a temporal filter in maintained dataflows") from None


def _bound_sql(b: Bound, cols: list[str]) -> str:
    x = render_scalar(b.expr, cols)
    if b.rounding != "ms":
        us = f"unix_micros(CAST({x} AS TIMESTAMP))"
        if b.rounding == "floor":
            x = f"(({us} - pmod({us}, 1000)) div 1000)"
        else:  # ceil(us / 1000) = -floor(-us / 1000)
            x = f"(-((-{us} - pmod(-{us}, 1000)) div 1000))"
    return f"({x} + {b.plus})" if b.plus else x


def _extreme(func: str, xs: list[str]) -> str:
    if not xs:
        return "CAST(NULL AS BIGINT)"
    return xs[0] if len(xs) == 1 else f"{func}({', '.join(xs)})"


def bounded(r: Rel, t: TemporalMfp, ctx: RenderContext) -> Rel:
    """The MFP's output rows passing its non-temporal predicates, with columns __lo / __up:
    the greatest lower and least upper bound (NULL: none). A NULL bound fails the filter."""
    m = t.mfp
    r, cols = mfp_columns(r, m, ctx)
    preds = [render_scalar(p, cols) for p in m.predicates]
    lows = [_bound_sql(b, cols) for b in t.lowers]
    ups = [_bound_sql(b, cols) for b in t.uppers]
    preds += [f"{x} IS NOT NULL" for x in lows + ups]
    exprs = [f"{cols[c]} AS {cname(k)}" for k, c in enumerate(m.output)]
    lo, up = _extreme("GREATEST", lows), _extreme("LEAST", ups)
    q = f"SELECT {', '.join([*exprs, DIFF, f'{lo} AS {LO}', f'{up} AS {UP}'])} FROM {ctx.sub(r)}"
    if preds:
        q += " WHERE " + " AND ".join(preds)
    return Rel(q, len(m.output))


def valid_at(b: Rel, time: int, ctx: RenderContext) -> Rel:
    """The rows of `bounded` valid at `time`."""
    cols = [*cnames(b.arity), DIFF]
    return Rel(f"SELECT {', '.join(cols)} FROM {ctx.sub(b)} WHERE ({LO} IS NULL OR {LO} <= {time}) AND ({UP} IS NULL OR {time} < {UP})",
               b.arity)


def future(b: Rel, time: int, until: int | None, ctx: RenderContext) -> str:
    """The updates of `bounded` (updated at `time`) due after `time` and before `until`:
    columns c.., diff and their time as __h."""
    cols = cnames(b.arity)
    before = "" if until is None else f" AND {LO} < {until}"
    ups = f"{UP} IS NOT NULL AND {UP} > {time} AND ({LO} IS NULL OR {LO} < {UP})"
    if until is not None:
        ups += f" AND {UP} < {until}"
    sub = ctx.sub(b)
    return (f"SELECT {', '.join([*cols, DIFF, f'{LO} AS {HASH}'])} FROM {sub} WHERE {LO} > {time} AND ({UP} IS NULL OR {LO} < {UP}){before}"
            f" UNION ALL SELECT {', '.join([*cols, f'-{DIFF} AS {DIFF}', f'{UP} AS {HASH}'])} FROM {ctx.sub(b)} WHERE {ups}")


@dataclass(frozen=True)
class Pending:
    """The future updates of one temporal MFP: pieces (c.., diff, __h = time; each with its
    time range) of which every update at a time <= `through` was released already."""

    arity: int
    pieces: tuple[Stored, ...] = ()
    through: int | None = None

    def rows(self) -> int:
        """Updates stored (released ones are dropped with their piece or at a merge)."""
        return sum(p.rows for p in self.pieces)

    def due(self, time: int) -> list[Stored]:
        return [p for p in self.pieces if _lo(p) <= time and (self.through is None or _hi(p) > self.through)]

    def read_due(self, time: int) -> Rel | None:
        """The updates at times in (through, time], not consolidated; None: there are none."""
        parts = []
        after = "" if self.through is None else f" AND {HASH} > {self.through}"
        for p in self.due(time):
            parts.append(f"SELECT {', '.join([*cnames(self.arity), DIFF])} FROM global_temp.{p.view} WHERE {HASH} <= {time}{after}")
        return Rel(" UNION ALL ".join(parts), self.arity) if parts else None

    def advanced(self, time: int) -> tuple[Pending, list[Stored]]:
        """Released through `time`: (the new state, the pieces it no longer holds)."""
        keep = tuple(p for p in self.pieces if _hi(p) > time)
        gone = [p for p in self.pieces if _hi(p) <= time]
        return replace(self, pieces=keep, through=time), gone

    def appended(self, piece: Stored) -> Pending:
        return replace(self, pieces=(*self.pieces, piece))

    def merged(self, spark: SparkSession, partitions: int) -> tuple[Pending, list[Stored], list[Stored]]:
        """The arrangement spine's merge policy (the first piece is the base); a merge drops
        the released updates and consolidates: (new state, pieces dropped, pieces made)."""
        if len(self.pieces) <= MAX_PIECES:
            return self, [], []
        decision, k = merge_decision(self.pieces[0].rows, [p.rows for p in self.pieces[1:]], max_batches=MAX_PIECES - 1)
        if decision == "none":
            return self, [], []
        pieces = list(self.pieces) if decision == "base" else list(self.pieces[-k:])
        cols = cnames(self.arity)
        after = "" if self.through is None else f" WHERE {HASH} > {self.through}"
        union = " UNION ALL ".join(f"SELECT * FROM global_temp.{p.view}{after}" for p in pieces)
        q = (f"SELECT {', '.join([*cols, f'SUM({DIFF}) AS {DIFF}', HASH])} FROM ({union}) AS _u "
             f"GROUP BY {', '.join([*cols, HASH])} HAVING SUM({DIFF}) <> 0")
        s = store(spark, q, self.arity, partitions if decision == "base" else None, bounds=True)
        made = [s] if s.rows else []
        if not s.rows:
            s.free(spark)
        rest = () if decision == "base" else self.pieces[:-k]
        return replace(self, pieces=(*rest, *made)), pieces, made


def _lo(p: Stored) -> int:
    assert p.bounds is not None
    return p.bounds[0]


def _hi(p: Stored) -> int:
    assert p.bounds is not None
    return p.bounds[1]
