"""MIR: the decorrelated relational IR that the optimizer transforms (DESIGN §4.2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, assert_never

from sql.scalar import (
    AggregateExpr,
    ColumnOrder,
    Scalar,
)
from sql.types import SqlType


# mir_types() memoized on the node (not an init field: dataclasses.replace never copies it)
def _cache() -> Any:
    return field(default=None, init=False, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class Constant:
    rows: tuple[tuple[tuple[Any, ...], int], ...]  # (row, diff)
    types: tuple[SqlType, ...]
    _types: tuple[SqlType, ...] | None = _cache()


@dataclass(frozen=True, slots=True)
class Get:
    id: str  # global id "u3" or local "l0"
    name: str
    types: tuple[SqlType, ...]
    local: bool = False
    _types: tuple[SqlType, ...] | None = _cache()


@dataclass(frozen=True, slots=True)
class Let:
    id: str
    value: Mir
    body: Mir
    _types: tuple[SqlType, ...] | None = _cache()


@dataclass(frozen=True, slots=True)
class RecursionLimit:
    """A LetRec binding's iteration limit: after `max_iters` iterations with changes, return
    the current value (`return_at_limit`) or error."""

    max_iters: int
    return_at_limit: bool = False

    def explain(self) -> str:
        return f"[recursion_limit={self.max_iters}{', return_at_limit' if self.return_at_limit else ''}]"


@dataclass(frozen=True, slots=True)
class LetRec:
    """Mutually recursive bindings: every value may read every id (and the body reads them
    too); the bindings are the least fixpoint of iterating all values from empty."""

    ids: tuple[str, ...]
    values: tuple[Mir, ...]
    types: tuple[tuple[SqlType, ...], ...]  # each binding's declared column types
    limits: tuple[RecursionLimit | None, ...]
    body: Mir
    _types: tuple[SqlType, ...] | None = _cache()


@dataclass(frozen=True, slots=True)
class Project:
    input: Mir
    outputs: tuple[int, ...]
    _types: tuple[SqlType, ...] | None = _cache()


@dataclass(frozen=True, slots=True)
class Map:
    input: Mir
    scalars: tuple[Scalar, ...]
    _types: tuple[SqlType, ...] | None = _cache()


@dataclass(frozen=True, slots=True)
class FlatMap:
    input: Mir
    func: str
    exprs: tuple[Scalar, ...]
    types: tuple[SqlType, ...]
    _types: tuple[SqlType, ...] | None = _cache()


@dataclass(frozen=True, slots=True)
class Filter:
    input: Mir
    predicates: tuple[Scalar, ...]
    _types: tuple[SqlType, ...] | None = _cache()


@dataclass(frozen=True, slots=True)
class Join:
    inputs: tuple[Mir, ...]
    # each class: scalars over the concatenated input columns that must be equal (non-null)
    equivalences: tuple[tuple[Scalar, ...], ...]
    implementation: str = "unimplemented"  # unimplemented | differential | delta
    # chosen by JoinImplementation: one path per start input (differential: one path), each
    # step (input, arrangement key over that input's columns; () for the streamed start)
    paths: tuple[tuple[tuple[int, tuple[Scalar, ...]], ...], ...] = ()
    _types: tuple[SqlType, ...] | None = _cache()


@dataclass(frozen=True, slots=True)
class Reduce:
    input: Mir
    group_key: tuple[Scalar, ...]
    aggregates: tuple[AggregateExpr[Scalar], ...]
    monotonic: bool = False
    _types: tuple[SqlType, ...] | None = _cache()


@dataclass(frozen=True, slots=True)
class TopK:
    input: Mir
    group_key: tuple[int, ...]
    order_key: tuple[ColumnOrder, ...]
    limit: int | None
    offset: int
    monotonic: bool = False
    _types: tuple[SqlType, ...] | None = _cache()


@dataclass(frozen=True, slots=True)
class Negate:
    input: Mir
    _types: tuple[SqlType, ...] | None = _cache()


@dataclass(frozen=True, slots=True)
class Threshold:
    input: Mir
    _types: tuple[SqlType, ...] | None = _cache()


@dataclass(frozen=True, slots=True)
class Union:
    inputs: tuple[Mir, ...]
    _types: tuple[SqlType, ...] | None = _cache()


@dataclass(frozen=True, slots=True)
class ArrangeBy:
    input: Mir
    keys: tuple[tuple[Scalar, ...], ...]
    _types: tuple[SqlType, ...] | None = _cache()


Mir = Constant | Get | Let | LetRec | Project | Map | FlatMap | Filter | Join | Reduce | TopK | Negate | Threshold | Union | ArrangeBy


def mir_types(r: Mir) -> tuple[SqlType, ...]:
    t = r._types
    if t is None:
        t = _mir_types(r)
        object.__setattr__(r, "_types", t)
    return t


def _mir_types(r: Mir) -> tuple[SqlType, ...]:
    match r:
        case Constant(types=t) | Get(types=t):
            return t
        case Let(body=b) | LetRec(body=b):
            return mir_types(b)
        case Project(input=i, outputs=o):
            it = mir_types(i)
            return tuple(it[c] for c in o)
        case Map(input=i, scalars=s):
            return mir_types(i) + tuple(x.typ for x in s)
        case FlatMap(input=i, types=t):
            return mir_types(i) + t
        case Filter(input=i) | TopK(input=i) | Negate(input=i) | Threshold(input=i) | ArrangeBy(input=i):
            return mir_types(i)
        case Join(inputs=xs):
            out: tuple[SqlType, ...] = ()
            for x in xs:
                out += mir_types(x)
            return out
        case Reduce(group_key=k, aggregates=a):
            return tuple(x.typ for x in k) + tuple(x.typ for x in a)
        case Union(inputs=xs):
            return mir_types(xs[0])
        case _:
            assert_never(r)


def arity(r: Mir) -> int:
    return len(mir_types(r))


def mir_children(r: Mir) -> tuple[Mir, ...]:
    match r:
        case Constant() | Get():
            return ()
        case Let(value=v, body=b):
            return (v, b)
        case LetRec(values=vs, body=b):
            return vs + (b,)
        case Project(input=i) | Map(input=i) | FlatMap(input=i) | Filter(input=i) | Reduce(input=i) | TopK(input=i) | Negate(input=i) | Threshold(input=i) | ArrangeBy(input=i):
            return (i,)
        case Join(inputs=xs) | Union(inputs=xs):
            return xs
        case _:
            assert_never(r)


