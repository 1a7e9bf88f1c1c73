"""EXPLAIN text of MIR plans: operator tree, annotations, join implementations, humanized names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import assert_never

from sql.mir import (
    ArrangeBy,
    Constant,
    Filter,
    FlatMap,
    Get,
    Join,
    Let,
    LetRec,
    Map,
    Mir,
    Negate,
    Project,
    Reduce,
    Threshold,
    TopK,
    Union,
    arity,
    mir_children,
    mir_types,
)
from sql.scalar import (
    Column as ColumnRef,
)
from sql.scalar import (
    Scalar,
    explain,
    explain_agg,
    explain_order,
    literal_text,
)
from sql.transforms.analysis import unique_keys
from sql.transforms.cardinality import Estimate, estimate_text
from sql.types import BOOL


@dataclass(frozen=True)
class Annotations:
    """EXPLAIN's per-operator annotations (`// { arity: 2, types: "(integer?)", keys: "()" }`)."""

    arity: bool = False
    types: bool = False
    keys: bool = False
    # WITH (cardinality): each node's estimate by id(node) (sql.transforms.cardinality)
    cardinality: Mapping[int, Estimate] | None = None

    def __bool__(self) -> bool:
        return self.arity or self.types or self.keys or self.cardinality is not None

    def text(self, r: Mir) -> str:
        parts = []
        if self.arity:
            parts.append(f"arity: {arity(r)}")
        if self.types:
            # nullability is not tracked: every column is shown as possibly null (`?`)
            parts.append('types: "(' + ", ".join(t.pg_format() + "?" for t in mir_types(r)) + ')"')
        if self.keys:
            ks = sorted(sorted(k) for k in unique_keys(r))
            parts.append('keys: "(' + ", ".join("[" + ", ".join(str(c) for c in k) + "]" for k in ks) + ')"')
        if self.cardinality is not None:
            parts.append(f'cardinality: "{estimate_text(self.cardinality.get(id(r)))}"')
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
