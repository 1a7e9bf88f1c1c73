"""LIR: the physical plan (DESIGN §4.3). `Plan = (node_id, node)`; ids post-order from 0."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from sql.mir import RecursionLimit
from sql.scalar import AggregateExpr, ColumnOrder, Scalar
from sql.types import SqlType

DEFAULT_BUCKETS = (268435456, 16777216, 1048576, 65536, 4096, 256, 16)


@dataclass(frozen=True, slots=True)
class Mfp:
    """Map, then filter, then project: expressions may reference input columns and earlier
    expressions (#input_arity + k); predicates and projection index the same space."""

    input_arity: int
    expressions: tuple[Scalar, ...] = ()
    predicates: tuple[Scalar, ...] = ()
    projection: tuple[int, ...] | None = None  # None = identity over input + expressions

    @property
    def output(self) -> tuple[int, ...]:
        if self.projection is not None:
            return self.projection
        return tuple(range(self.input_arity + len(self.expressions)))

    def is_identity(self) -> bool:
        return not self.expressions and not self.predicates and self.output == tuple(range(self.input_arity))


@dataclass(frozen=True, slots=True)
class Plan:
    node_id: int
    node: Node


@dataclass(frozen=True, slots=True)
class Constant:
    rows: tuple[tuple[tuple[Any, ...], int], ...]
    types: tuple[SqlType, ...]


@dataclass(frozen=True, slots=True)
class Get:
    id: str
    name: str
    types: tuple[SqlType, ...]
    strategy: str  # PassArrangements | Collection | Arrangement
    mfp: Mfp
    local: bool = False


@dataclass(frozen=True, slots=True)
class MfpNode:
    input: Plan
    mfp: Mfp


@dataclass(frozen=True, slots=True)
class FlatMap:
    input: Plan
    func: str
    exprs: tuple[Scalar, ...]
    types: tuple[SqlType, ...]


@dataclass(frozen=True, slots=True)
class JoinStage:
    """One lookup of a join path: the stream (the inputs joined so far) meets an arrangement
    of `lookup_relation` by `lookup_key` (over that input's columns) = `stream_key` (over
    the join's concatenated input columns); `thinning`: the stream's other columns, which
    ride along as values. No key: a cross product with that input.

    `lookup_rows`: an upper bound on the lookup input's records (sql.transforms.row_bounds;
    None: unknown); `broadcast`: the lookup is small enough to be sent whole to every
    worker, so the stream is joined where it is, without a shuffle (decided by
    refine_broadcast_lookups)."""

    lookup_relation: int
    lookup_key: tuple[Scalar, ...]
    stream_key: tuple[Scalar, ...]
    thinning: tuple[int, ...]
    lookup_rows: int | None = None
    broadcast: bool = False


@dataclass(frozen=True, slots=True)
class JoinPath:
    """A linear path: `source` is streamed (arranged by `source_key`, the first stage's
    stream key), then each stage joins one more input."""

    source: int
    source_key: tuple[Scalar, ...]
    stages: tuple[JoinStage, ...]


@dataclass(frozen=True, slots=True)
class Join:
    inputs: tuple[Plan, ...]
    equivalences: tuple[tuple[Scalar, ...], ...]
    strategy: str  # Linear | Delta
    arities: tuple[int, ...]
    # Linear: one path; Delta: one per input (path i starts at input i). The renderer of
    # one-shot dataflows joins in the order of the first path.
    paths: tuple[JoinPath, ...] = ()


@dataclass(frozen=True, slots=True)
class ReduceDistinct:
    pass


@dataclass(frozen=True, slots=True)
class ReduceAccumulable:
    pass


@dataclass(frozen=True, slots=True)
class ReduceHierarchical:
    monotonic: bool
    must_consolidate: bool = False
    buckets: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ReduceBasic:
    pass


ReducePlan = ReduceDistinct | ReduceAccumulable | ReduceHierarchical | ReduceBasic


@dataclass(frozen=True, slots=True)
class Reduce:
    input: Plan
    group_key: tuple[Scalar, ...]
    aggregates: tuple[AggregateExpr[Scalar], ...]
    plan: ReducePlan


@dataclass(frozen=True, slots=True)
class TopKMonotonicTop1:
    must_consolidate: bool


@dataclass(frozen=True, slots=True)
class TopKMonotonicTopK:
    must_consolidate: bool


@dataclass(frozen=True, slots=True)
class TopKBasic:
    buckets: tuple[int, ...] = DEFAULT_BUCKETS


TopKPlan = TopKMonotonicTop1 | TopKMonotonicTopK | TopKBasic


@dataclass(frozen=True, slots=True)
class TopK:
    input: Plan
    group_key: tuple[int, ...]
    order_key: tuple[ColumnOrder, ...]
    limit: int | None
    offset: int
    plan: TopKPlan


@dataclass(frozen=True, slots=True)
class Negate:
    input: Plan


@dataclass(frozen=True, slots=True)
class Threshold:
    input: Plan


@dataclass(frozen=True, slots=True)
class Union:
    inputs: tuple[Plan, ...]
    consolidate_output: bool = False


@dataclass(frozen=True, slots=True)
class ArrangeBy:
    input: Plan
    keys: tuple[tuple[Scalar, ...], ...]


@dataclass(frozen=True, slots=True)
class Let:
    id: str
    value: Plan
    body: Plan


@dataclass(frozen=True, slots=True)
class LetRec:
    """Mutually recursive bindings (values iterated to a fixpoint, see mir.LetRec), then body."""

    ids: tuple[str, ...]
    values: tuple[Plan, ...]
    limits: tuple[RecursionLimit | None, ...]
    body: Plan


Node = Constant | Get | MfpNode | FlatMap | Join | Reduce | TopK | Negate | Threshold | Union | ArrangeBy | Let | LetRec


@dataclass(frozen=True, slots=True)
class Finishing:
    order_by: tuple[ColumnOrder, ...]
    limit: int | None
    offset: int
    project: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Dataflow:
    """A plan to render: one-shot (until = as_of + 1) or maintained."""

    name: str  # header for EXPLAIN: "Explained Query" or the object's qualified name
    plan: Plan
    types: tuple[SqlType, ...]
    single_time: bool
    finishing: Finishing | None = None
    sources: tuple[tuple[str, str], ...] = ()  # (id, qualified name) of imported storage
    # refine_source_mfps: the MFP applied while reading a source, by source id (the Gets of
    # that source then read its output columns)
    source_mfps: tuple[tuple[str, Mfp], ...] = ()


def walk(x: Any) -> Iterator[Any]:
    """`x` and everything it holds: the fields of dataclasses (plan nodes, scalars) and the
    items of tuples, depth first."""
    yield x
    if is_dataclass(x) and not isinstance(x, type):
        for f in fields(x):
            yield from walk(getattr(x, f.name))
    elif isinstance(x, tuple):
        for y in x:
            yield from walk(y)
