"""Temporal filters of maintained dataflows (DESIGN §7), as plan data: which MFPs compare
`mz_now()` and the validity bounds their comparisons give each row.

A temporal predicate `mz_now() <op> e` (or `e <op> mz_now()`, flipped) bounds the times at
which a row passes the filter to [lower, upper):

    mz_now() >= e: lower e      mz_now() > e: lower e + 1
    mz_now() <= e: upper e + 1  mz_now() < e: upper e       mz_now() = e: [e, e + 1)

with `e` in milliseconds (an mz_timestamp). When `mz_now()` is cast to timestamp(tz) the
comparison is on microseconds T·1000 <op> e, and the identities become exact roundings:
T·1000 >= e ⟺ T >= ceil(e/1000); T·1000 > e ⟺ T >= floor(e/1000) + 1; T·1000 <= e ⟺
T < floor(e/1000) + 1; T·1000 < e ⟺ T < ceil(e/1000). A row's lower bound is the greatest
of its lower bounds, its upper the least of its uppers; a NULL bound fails the filter (the
comparison is not true). The row is valid at t iff lower <= t < upper — the one-shot value
of the filter at t — and a maintained dataflow turns an update (row, t, diff) into
(row, max(t, lower), +diff) and (row, upper, −diff), dropping those at times >= until.

Nothing here touches Spark: compute.render.temporal renders the bounds.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

from compute.plan import lir
from sql.scalar import CallBinary, CallUnary, CallVariadic, Scalar

_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq"}
_CASTS = ("timestamp", "timestamptz")


@dataclass(frozen=True, slots=True)
class Bound:
    """One validity bound over the MFP's columns (input ++ expressions)."""

    expr: Scalar
    upper: bool  # an exclusive upper bound (else an inclusive lower bound)
    rounding: str  # "ms": expr is an mz_timestamp; "ceil" / "floor": a timestamp in µs, to ms
    plus: int = 0  # added after rounding


@dataclass(frozen=True, slots=True)
class TemporalMfp:
    """An MFP split into its non-temporal part and the bounds of its temporal predicates."""

    mfp: lir.Mfp  # the same MFP without its temporal predicates
    bounds: tuple[Bound, ...]

    @property
    def lowers(self) -> tuple[Bound, ...]:
        return tuple(b for b in self.bounds if not b.upper)

    @property
    def uppers(self) -> tuple[Bound, ...]:
        return tuple(b for b in self.bounds if b.upper)


class NotTemporal(ValueError):
    """`mz_now()` where no validity bound can express it."""


def calls_mz_now(x: Any) -> bool:
    return any(isinstance(y, CallVariadic) and y.func == "mz_now" for y in lir.walk(x))


def _mz_now_cast(x: Scalar) -> str | None:
    """'' for mz_now(), the target type for mz_now() cast to timestamp(tz), else None."""
    if isinstance(x, CallVariadic) and x.func == "mz_now":
        return ""
    if isinstance(x, CallUnary) and x.func == "cast" and x.typ.name in _CASTS:
        inner = x.expr
        if isinstance(inner, CallVariadic) and inner.func == "mz_now":
            return x.typ.name
    return None


def bounds_of(p: Scalar) -> tuple[Bound, ...]:
    """The bounds of one temporal predicate (raise NotTemporal for any other use of mz_now())."""
    if not (isinstance(p, CallBinary) and p.func in _FLIP):
        raise NotTemporal(p)
    op, a, b = p.func, p.expr1, p.expr2
    if _mz_now_cast(a) is None:
        op, a, b = _FLIP[op], b, a
    cast = _mz_now_cast(a)
    if cast is None or calls_mz_now(b):
        raise NotTemporal(p)
    if cast == "":
        lo = {"ge": ("ms", 0), "gt": ("ms", 1), "eq": ("ms", 0)}
        up = {"le": ("ms", 1), "lt": ("ms", 0), "eq": ("ms", 1)}
    else:
        lo = {"ge": ("ceil", 0), "gt": ("floor", 1), "eq": ("ceil", 0)}
        up = {"le": ("floor", 1), "lt": ("ceil", 0), "eq": ("floor", 1)}
    out = []
    if op in lo:
        out.append(Bound(b, False, *lo[op]))
    if op in up:
        out.append(Bound(b, True, *up[op]))
    return tuple(out)


def split(m: lir.Mfp) -> TemporalMfp | None:
    """`m` as a temporal MFP (None when it does not call mz_now()); NotTemporal when
    mz_now() is anywhere but a top-level temporal predicate."""
    if not calls_mz_now(m):
        return None
    if calls_mz_now(m.expressions):
        raise NotTemporal("mz_now() in a map expression")
    plain: list[Scalar] = []
    bounds: list[Bound] = []
    for p in m.predicates:
        if calls_mz_now(p):
            bounds.extend(bounds_of(p))
        else:
            plain.append(p)
    return TemporalMfp(lir.Mfp(m.input_arity, m.expressions, tuple(plain), m.projection), tuple(bounds))


def temporal_mfps(df: lir.Dataflow) -> Iterator[lir.Mfp]:
    """Every MFP of the dataflow that calls mz_now()."""
    for _, m in df.source_mfps:
        if calls_mz_now(m):
            yield m
    for x in lir.walk(df.plan):
        if isinstance(x, lir.Mfp) and calls_mz_now(x):
            yield x


def is_temporal(df: lir.Dataflow) -> bool:
    return next(temporal_mfps(df), None) is not None


def unsupported_reason(df: lir.Dataflow) -> str | None:
    """Why the dataflow's uses of mz_now() are not temporal filters the delta renderer
    evaluates (predicates of the MFPs of Gets, Mfp nodes and sources), or None."""
    for m in temporal_mfps(df):
        try:
            split(m)
        except NotTemporal:
            return "mz_now() outside a temporal filter"
    for x in lir.walk(df.plan):
        if _is_node_with_scalars(x) and calls_mz_now(_scalars_of(x)):
            return "mz_now() outside a temporal filter"
    return None


def _is_node_with_scalars(x: Any) -> bool:
    return isinstance(x, lir.Join | lir.Reduce | lir.TopK | lir.FlatMap | lir.ArrangeBy | lir.JoinPath | lir.JoinStage)


def _scalars_of(x: Any) -> tuple:
    """The scalars a node holds itself (not its inputs')."""
    return tuple(getattr(x, f.name) for f in fields(x) if f.name not in ("input", "inputs"))


