"""HIR: the bound, typed form of a query, close to SQL (outer joins, Distinct, parameters).

Scalars reuse the MIR scalar nodes (sql.scalar) plus `Param` ($n, substituted by a literal
before lowering). Column references are positional into the node's input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, assert_never

from sql.mir import RecursionLimit
from sql.scalar import (
    AggregateExpr,
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    ColumnOrder,
    If,
    Literal,
    WindowFrame,
)
from sql.types import SqlType


@dataclass(frozen=True, slots=True)
class Param:
    n: int  # 1-based
    typ: SqlType


@dataclass(frozen=True, slots=True)
class OuterColumn:
    """A column of an enclosing query: `level` scopes out (1 = the immediately enclosing)."""

    level: int
    index: int
    typ: SqlType


@dataclass(frozen=True, slots=True)
class Exists:
    rel: HirRel
    typ: SqlType


@dataclass(frozen=True, slots=True)
class Select:
    """A scalar subquery: the single column of at most one row (NULL for none; 21000 for more)."""

    rel: HirRel
    typ: SqlType


HirScalar = (
    Column | Literal | CallUnary["HirScalar"] | CallBinary["HirScalar"] | CallVariadic["HirScalar"] | If["HirScalar"]
    | Param | OuterColumn | Exists | Select
)


@dataclass(frozen=True, slots=True)
class HGet:
    id: str
    name: str  # fully qualified, e.g. materialize.public.t; a recursive binding's own name
    types: tuple[SqlType, ...]
    local: bool = False  # a binding of an enclosing HLetRec (id = its HIR id)


@dataclass(frozen=True, slots=True)
class HConstant:
    rows: tuple[tuple[Any, ...], ...]
    types: tuple[SqlType, ...]


@dataclass(frozen=True, slots=True)
class HProject:
    input: HirRel
    outputs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class HMap:
    input: HirRel
    scalars: tuple[HirScalar, ...]


@dataclass(frozen=True, slots=True)
class HFilter:
    input: HirRel
    predicates: tuple[HirScalar, ...]


@dataclass(frozen=True, slots=True)
class HJoin:
    left: HirRel
    right: HirRel
    on: HirScalar  # over left ++ right columns
    kind: str  # inner | left | right | full
    lateral: bool = False  # right may reference left's columns (as OuterColumn level 1)


@dataclass(frozen=True, slots=True)
class HFlatMap:
    """For each input row, the input row ++ each row of the table function's output."""

    input: HirRel
    func: str
    exprs: tuple[HirScalar, ...]
    types: tuple[SqlType, ...]


@dataclass(frozen=True, slots=True)
class HReduce:
    input: HirRel
    group_key: tuple[int, ...]
    aggregates: tuple[AggregateExpr[HirScalar], ...]


@dataclass(frozen=True, slots=True)
class HDistinct:
    input: HirRel


@dataclass(frozen=True, slots=True)
class HTopK:
    input: HirRel
    group_key: tuple[int, ...]
    order_key: tuple[ColumnOrder, ...]
    limit: int | None
    offset: int


@dataclass(frozen=True, slots=True)
class WindowExpr:
    """`func(args) OVER (PARTITION BY partition_by ORDER BY order_by frame)` over the columns
    of an HWindow's input. `order[i]` orders by `order_by[order[i].column]`. func is one of
    row_number, rank, dense_rank, percent_rank, cume_dist, ntile (args: buckets), lag, lead
    (args: value, offset, default), first_value, last_value, nth_value (args: value, n), or
    an aggregate (sum, count, min, max, avg, the variances, ...; count(*) has arg `true`).
    `bounds`: for a RANGE offset frame, the (start, end) boundary values of each row
    (ORDER BY value -/+ offset, in a type comparable with the ORDER BY value)."""

    func: str
    args: tuple[HirScalar, ...]
    partition_by: tuple[HirScalar, ...]
    order_by: tuple[HirScalar, ...]
    order: tuple[ColumnOrder, ...]
    frame: WindowFrame
    typ: SqlType
    bounds: tuple[HirScalar | None, HirScalar | None] = (None, None)

    def scalars(self) -> tuple[HirScalar, ...]:
        """Every scalar the window function reads from its input."""
        return (*self.args, *self.partition_by, *self.order_by, *(b for b in self.bounds if b is not None))


@dataclass(frozen=True, slots=True)
class HWindow:
    """The input's rows, each extended with the value of every window function (one column
    per WindowExpr, in order). Window functions see the input after WHERE / GROUP BY /
    HAVING and before DISTINCT / ORDER BY / LIMIT, as in Postgres."""

    input: HirRel
    windows: tuple[WindowExpr, ...]


@dataclass(frozen=True, slots=True)
class HNegate:
    input: HirRel


@dataclass(frozen=True, slots=True)
class HThreshold:
    input: HirRel


@dataclass(frozen=True, slots=True)
class HUnion:
    inputs: tuple[HirRel, ...]


@dataclass(frozen=True, slots=True)
class HLetRec:
    """WITH MUTUALLY RECURSIVE: `values[i]` (cast to `types[i]`) may read every binding as
    HGet(ids[j], local=True), and so may `body`, whose result is the LetRec's."""

    ids: tuple[str, ...]
    names: tuple[str, ...]
    types: tuple[tuple[SqlType, ...], ...]
    values: tuple[HirRel, ...]
    limit: RecursionLimit | None
    body: HirRel


HirRel = HLetRec | HGet | HConstant | HProject | HMap | HFilter | HJoin | HReduce | HDistinct | HTopK | HNegate | HThreshold | HUnion | HFlatMap | HWindow


@dataclass(frozen=True, slots=True)
class Finishing:
    """Top-level ORDER BY / LIMIT / OFFSET and the final projection (not a dataflow op)."""

    order_by: tuple[ColumnOrder, ...]
    limit: int | None
    offset: int
    project: tuple[int, ...]

    def is_trivial(self, arity: int) -> bool:
        return not self.order_by and self.limit is None and self.offset == 0 and self.project == tuple(range(arity))


def scalar_type(e: HirScalar) -> SqlType:
    return e.typ


def hir_types(r: HirRel) -> tuple[SqlType, ...]:
    match r:
        case HGet(types=t) | HConstant(types=t):
            return t
        case HProject(input=i, outputs=o):
            it = hir_types(i)
            return tuple(it[c] for c in o)
        case HMap(input=i, scalars=s):
            return hir_types(i) + tuple(x.typ for x in s)
        case HFlatMap(input=i, types=t):
            return hir_types(i) + t
        case HWindow(input=i, windows=ws):
            return hir_types(i) + tuple(w.typ for w in ws)
        case HFilter(input=i) | HDistinct(input=i) | HTopK(input=i) | HNegate(input=i) | HThreshold(input=i):
            return hir_types(i)
        case HJoin(left=a, right=b):
            return hir_types(a) + hir_types(b)
        case HReduce(input=i, group_key=k, aggregates=aggs):
            it = hir_types(i)
            return tuple(it[c] for c in k) + tuple(a.typ for a in aggs)
        case HUnion(inputs=xs):
            return hir_types(xs[0])
        case HLetRec(body=b):
            return hir_types(b)
        case _:
            assert_never(r)
