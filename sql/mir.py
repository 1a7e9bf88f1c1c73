"""MIR: the decorrelated relational IR that the optimizer transforms (DESIGN §4.2)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, assert_never

from sql.scalar import (
    AggregateExpr,
    ColumnOrder,
    Scalar,
    explain,
    explain_agg,
    explain_order,
    literal_text,
)
from sql.scalar import (
    Column as ColumnRef,
)
from sql.types import BOOL, SqlType


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


@dataclass(frozen=True)
class Annotations:
    """EXPLAIN's per-operator annotations (`// { arity: 2, types: "(integer?)", keys: "()" }`)."""

    arity: bool = False
    types: bool = False
    keys: bool = False

    def __bool__(self) -> bool:
        return self.arity or self.types or self.keys

    def text(self, r: Mir) -> str:
        parts = []
        if self.arity:
            parts.append(f"arity: {arity(r)}")
        if self.types:
            # nullability is not tracked: every column is shown as possibly null (`?`)
            parts.append('types: "(' + ", ".join(t.pg_format() + "?" for t in mir_types(r)) + ')"')
        if self.keys:
            from sql.transforms.analysis import unique_keys

            ks = sorted(sorted(k) for k in unique_keys(r))
            parts.append('keys: "(' + ", ".join("[" + ", ".join(str(c) for c in k) + "]" for k in ks) + ')"')
        return f" // {{ {', '.join(parts)} }}" if parts else ""


def column_names(r: Mir, storage: Mapping[str, tuple[str, ...]],
                 env: Mapping[str, list[str | None]] | None = None) -> list[str | None]:
    """The names of r's columns where they are known: a stored relation's columns (`storage`:
    id -> names) carried through projections, filters, joins and group keys; None elsewhere."""
    env = env or {}

    def unknown(n: int) -> list[str | None]:
        return [None] * n

    match r:
        case Constant():
            return unknown(arity(r))
        case Get(id=i, local=True):
            return list(env.get(i, unknown(arity(r))))
        case Get(id=i):
            names = storage.get(i)
            return list(names) if names is not None and len(names) == arity(r) else unknown(arity(r))
        case Let(id=i, value=v, body=b):
            return column_names(b, storage, {**env, i: column_names(v, storage, env)})
        case LetRec(body=b):
            return column_names(b, storage, env)
        case Project(input=x, outputs=o):
            n = column_names(x, storage, env)
            return [n[c] for c in o]
        case Map(input=x, scalars=xs):
            return column_names(x, storage, env) + unknown(len(xs))
        case FlatMap(input=x, types=ts):
            return column_names(x, storage, env) + unknown(len(ts))
        case Filter(input=x) | TopK(input=x) | Negate(input=x) | Threshold(input=x) | ArrangeBy(input=x):
            return column_names(x, storage, env)
        case Join(inputs=xs):
            return [n for x in xs for n in column_names(x, storage, env)]
        case Reduce(input=x, group_key=k, aggregates=a):
            n = column_names(x, storage, env)
            return [n[e.index] if isinstance(e, ColumnRef) else None for e in k] + unknown(len(a))
        case Union(inputs=xs):
            return column_names(xs[0], storage, env)
        case _:
            assert_never(r)


def explain_mir(r: Mir, annotate_arity: bool = False, join_impls: bool = False,
                annotations: Annotations | None = None,
                humanized: Mapping[str, tuple[str, ...]] | None = None) -> str:
    """`humanized` (storage id -> column names): columns print as `#1{b}` where known."""
    lines: list[str] = []
    _explain(r, 0, lines, annotations or Annotations(arity=annotate_arity), join_impls, humanized)
    return "\n".join(lines)


def explain_path(path: tuple[tuple[int, tuple[Scalar, ...]], ...]) -> str:
    """`%0 » %1[#0] » %2[#1, #2]`: inputs in join order with their arrangement keys."""
    return " » ".join(f"%{i}" + (f"[{', '.join(explain(k) for k in key)}]" if key else "") for i, key in path)


def _explain(r: Mir, depth: int, out: list[str], ar: Annotations, ji: bool = False,
             hn: Mapping[str, tuple[str, ...]] | None = None, env: dict[str, list[str | None]] | None = None) -> None:
    pad = "  " * depth
    suffix = ar.text(r) if ar else ""
    env = env or {}
    # the names the operator's scalars see (its input's columns), for humanized expressions
    names: list[str | None] | None = None
    if hn is not None:
        match r:
            case Join(inputs=xs):
                names = [n for x in xs for n in column_names(x, hn, env)]
            case Map(input=x, scalars=xs):
                names = column_names(x, hn, env) + [None] * len(xs)
            case Project(input=x) | Filter(input=x) | FlatMap(input=x) | Reduce(input=x) | TopK(input=x) | ArrangeBy(input=x):
                names = column_names(x, hn, env)
            case _:
                names = None
    match r:
        case Constant(rows=rows):
            if not rows:
                out.append(f"{pad}Constant <empty>{suffix}")
            else:
                out.append(f"{pad}Constant{suffix}")
                for row, diff in rows:
                    vals = ", ".join(literal_text(v, t) for v, t in zip(row, r.types, strict=True))
                    mult = f" x {diff}" if diff != 1 else ""
                    out.append(f"{pad}  - ({vals}){mult}")
            return
        case Get(name=n, local=loc):
            out.append(f"{pad}{'Get' if loc else 'ReadStorage'} {n}{suffix}")
            return
        case Let(id=i, value=v, body=b):
            out.append(f"{pad}With")
            out.append(f"{pad}  cte {i} =")
            _explain(v, depth + 2, out, ar, ji, hn, env)
            out.append(f"{pad}Return{suffix}")
            inner = {**env, i: column_names(v, hn, env)} if hn is not None else env
            _explain(b, depth + 1, out, ar, ji, hn, inner)
            return
        case LetRec(ids=ids, values=vs, limits=lims, body=b):
            out.append(f"{pad}With Mutually Recursive")
            for i, v, lim in zip(ids, vs, lims, strict=True):
                out.append(f"{pad}  cte {lim.explain() + ' ' if lim is not None else ''}{i} =")
                _explain(v, depth + 2, out, ar, ji, hn, env)
            out.append(f"{pad}Return{suffix}")
            _explain(b, depth + 1, out, ar, ji, hn, env)
            return
        case Project(outputs=o):
            out.append(f"{pad}Project ({', '.join(explain(ColumnRef(c, BOOL), names) for c in o)}){suffix}")
        case Map(scalars=s):
            out.append(f"{pad}Map ({', '.join(explain(x, names) for x in s)}){suffix}")
        case Filter(predicates=p):
            out.append(f"{pad}Filter {' AND '.join(explain(x, names) for x in p)}{suffix}")
        case FlatMap(func=f, exprs=xs):
            out.append(f"{pad}FlatMap {f}({', '.join(explain(x, names) for x in xs)}){suffix}")
        case Join(equivalences=eq, implementation=impl, paths=paths):
            on = " AND ".join(" = ".join(explain(x, names) for x in cls) for cls in eq)
            out.append(f"{pad}Join on=({on}) type={impl}{suffix}" if eq else f"{pad}CrossJoin type={impl}{suffix}")
            if ji and paths:
                out.append(f"{pad}  implementation")
                for path in paths:
                    out.append(f"{pad}    {explain_path(path)}")
        case Reduce(group_key=k, aggregates=a, monotonic=m):
            parts = []
            if k:
                parts.append(f"group_by=[{', '.join(explain(x, names) for x in k)}]")
            if a:
                parts.append(f"aggregates=[{', '.join(explain_agg(x, names) for x in a)}]")
            if m:
                parts.append("monotonic")
            out.append(f"{pad}{'Distinct' if not a else 'Reduce'} {' '.join(parts)}{suffix}".rstrip())
        case TopK(group_key=g, order_key=o, limit=lim, offset=off, monotonic=m):
            parts = []
            if g:
                parts.append(f"group_by=[{', '.join(f'#{c}' for c in g)}]")
            if o:
                parts.append(f"order_by=[{', '.join(explain_order(x) for x in o)}]")
            if lim is not None:
                parts.append(f"limit={lim}")
            if off:
                parts.append(f"offset={off}")
            if m:
                parts.append("monotonic")
            out.append(f"{pad}TopK {' '.join(parts)}{suffix}".rstrip())
        case Negate():
            out.append(f"{pad}Negate{suffix}")
        case Threshold():
            out.append(f"{pad}Threshold{suffix}")
        case Union():
            out.append(f"{pad}Union{suffix}")
        case ArrangeBy(keys=ks):
            out.append(f"{pad}ArrangeBy keys=[{', '.join('[' + ', '.join(explain(x, names) for x in k) + ']' for k in ks)}]{suffix}")
        case _:
            assert_never(r)
    for c in mir_children(r):
        _explain(c, depth + 1, out, ar, ji, hn, env)
