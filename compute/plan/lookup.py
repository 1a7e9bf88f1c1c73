"""Fast-path lookups (DESIGN §6): a one-shot SELECT that is an MFP over one indexed object
whose predicates pin the index key to finitely many literal tuples is answered from the
index's arrangement restricted to those keys (Materialize's `ReadIndex … [lookup value=(…)]`).

The predicates (a conjunction) imply `key ∈ V` for a finite set V of literal tuples when:
`k = lit` / `lit = k` gives {k: lit}; `k IS NULL` gives {k: NULL}; `OR` of such disjuncts
gives the union of theirs (every disjunct must pin something); `AND` / the predicate list
gives the product, dropping contradictory tuples; V is every combination covering the key.
Reading only the rows whose key is in V and then applying every predicate is exact (each row
the predicates keep has its key in V); the predicates still run on the restricted rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from compute.plan import lir
from sql.scalar import CallBinary, CallUnary, CallVariadic, Column, Literal, Scalar, literal_text

# at most this many key tuples (a literal IN list of hashes; DESIGN §5.2)
MAX_LOOKUP_VALUES = 400
# key types whose literals are hashed exactly as Spark hashes the stored keys
# (compute.render.key_hash); an index with another key type is read whole
LOOKUP_TYPES = frozenset({"bool", "int2", "int4", "int8", "text", "varchar", "date"})


@dataclass(frozen=True, slots=True)
class Lookup:
    source: str  # the indexed object's id
    index_id: str
    index_name: str  # qualified
    values: tuple[tuple[Literal, ...], ...]

    def explain(self, object_name: str) -> str:
        short = self.index_name.rsplit(".", 1)[-1]
        vals = ["(" + ", ".join(literal_text(v.value, v.typ) for v in t) + ")" for t in self.values]
        what = f"lookup value={vals[0]}" if len(vals) == 1 else f"lookup values=[{'; '.join(vals)}]"
        return f"ReadIndex on={object_name} {short}=[{what}]"


def index_keys(plan: lir.Plan) -> tuple[Scalar, ...]:
    """The key of an index's dataflow: its root ArrangeBy's first key (none: no key)."""
    n = plan.node
    if isinstance(n, lir.ArrangeBy) and n.keys:
        return tuple(n.keys[0])
    return ()


Assignment = dict[int, Literal]
# by indexed object id: its indexes (id, qualified name, key), in order of preference
IndexKeys = Mapping[str, Sequence[tuple[str, str, tuple[Scalar, ...]]]]


def _and(a: list[Assignment], b: list[Assignment]) -> list[Assignment]:
    out = []
    for x in a:
        for y in b:
            if all(x[k] == y[k] for k in x.keys() & y.keys()):
                out.append(x | y)
                if len(out) > MAX_LOOKUP_VALUES:
                    return out
    return out


def constraints(p: Scalar, key: Sequence[Scalar]) -> list[Assignment] | None:
    """The key assignments `p` implies one of (None: it implies nothing about the key)."""
    match p:
        case CallBinary(func="eq", expr1=a, expr2=Literal() as lit) if a in key:
            return [{key.index(a): lit}] if lit.typ == a.typ else None
        case CallBinary(func="eq", expr1=Literal() as lit, expr2=a) if a in key:
            return [{key.index(a): lit}] if lit.typ == a.typ else None
        case CallUnary(func="is_null", expr=a) if a in key:
            return [{key.index(a): Literal(None, a.typ)}]
        case CallVariadic(func="or", exprs=xs):
            out: list[Assignment] = []
            for x in xs:
                c = constraints(x, key)
                if c is None:
                    return None
                out.extend(c)
            return out
        case CallVariadic(func="and", exprs=xs):
            return conjunction(xs, key)
    return None


def conjunction(ps: Sequence[Scalar], key: Sequence[Scalar]) -> list[Assignment] | None:
    acc: list[Assignment] | None = None
    for p in ps:
        c = constraints(p, key)
        if c is not None:
            acc = c if acc is None else _and(acc, c)
            if len(acc) > MAX_LOOKUP_VALUES:
                return None
    return acc


def find_lookup(df: lir.Dataflow, indexes: IndexKeys) -> Lookup | None:
    """The lookup a one-shot dataflow is (an MFP over a Get of an indexed object whose
    predicates pin one of its indexes' keys), or None. `indexes`: on_id -> (index id,
    qualified name, key) per index, in order of preference."""
    n = df.plan.node
    while isinstance(n, lir.MfpNode):
        n = n.input.node
    if not df.single_time or not isinstance(n, lir.Get) or n.local or n.id not in indexes:
        return None
    pushed = dict(df.source_mfps).get(n.id)
    preds = pushed.predicates if pushed is not None else n.mfp.predicates
    for index_id, name, key in indexes[n.id]:
        if not key or not all(_over_columns(k, len(n.types)) and k.typ.name in LOOKUP_TYPES for k in key):
            continue
        got = conjunction(preds, key)
        if got is None or len(got) > MAX_LOOKUP_VALUES or any(len(a) < len(key) for a in got):
            continue
        values = tuple(dict.fromkeys(tuple(a[i] for i in range(len(key))) for a in got))
        return Lookup(n.id, index_id, name, values)
    return None


def _over_columns(x: Scalar, arity: int) -> bool:
    if isinstance(x, Column):
        return x.index < arity
    from sql.scalar import columns_used

    return all(c < arity for c in columns_used(x))


def filtered_source(df: lir.Dataflow) -> str | None:
    """The collection `df` reads when it is maps, filters and projections over one storage
    collection with no ORDER BY (Spark folds such a query over a local relation without a
    job: compute.render.sources), else None."""
    node = df.plan.node
    while isinstance(node, lir.MfpNode):
        node = node.input.node
    if isinstance(node, lir.Get) and not node.local and (df.finishing is None or not df.finishing.order_by):
        return node.id
    return None
