"""The pure planning pipeline shared by the coordinator, EXPLAIN and the golden tests:

bound HIR -> MIR (lowering) -> MIR optimizer -> LIR (lowering) -> finalize_dataflow
(refinements, in DESIGN §4.3's order). Nothing here touches Spark or the catalog.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from compute.plan import lir
from compute.plan.explain import explain_dataflow, finish_line
from compute.plan.explain_json import dataflow_json
from compute.plan.flags import PlanFlags
from compute.plan.lookup import IndexKeys
from compute.plan.lower import lower as lower_to_lir
from compute.plan.refinements import REFINEMENTS
from sql import mir
from sql.bind import BoundQuery
from sql.hir import Finishing, HirRel
from sql.lowering import lower as lower_to_mir
from sql.mir import Mir, mir_types
from sql.mir_explain import Annotations, explain_mir
from sql.mir_json import mir_json
from sql.optimize import optimize
from sql.scalar import Scalar, redacted_literals
from sql.transforms.cardinality import cardinalities
from sql.transforms.join_implementation import Ranges
from sql.types import SqlType


def to_mir_rel(rel: HirRel, now: int | None = None) -> Mir:
    return lower_to_mir(rel, now=now)


def get_storage(id: str, name: str, types: tuple[SqlType, ...]) -> Mir:
    return mir.Get(id, name, types)


def arrange_by(m: Mir, keys: tuple[Scalar, ...]) -> Mir:
    """An index: the indexed relation arranged by its keys."""
    return mir.ArrangeBy(m, (keys,))


def explain_mir_text(m: Mir, options: tuple[str, ...] = (), finishing: Finishing | None = None,
                     names: Mapping[str, tuple[str, ...]] | None = None, sizes: Mapping[str, int] | None = None) -> str:
    """EXPLAIN <RAW | DECORRELATED | OPTIMIZED> PLAN AS TEXT: the MIR tree, under a `Finish`
    line when the query's ORDER BY / LIMIT / OFFSET / output projection is not trivial.
    `names` (storage id -> column names) for WITH (humanized expressions)."""
    notes = Annotations(arity="arity" in options, types="types" in options, keys="keys" in options,
                        cardinality=cardinalities(m, sizes) if "cardinality" in options else None)
    humanized = (names or {}) if "humanized_exprs" in options else None
    with redacted_literals("redacted" in options):
        tree = explain_mir(m, join_impls="join_impls" in options, annotations=notes, humanized=humanized)
    fin = lir_finishing(finishing, len(mir_types(m))) if finishing is not None else None
    if fin is None:
        return tree + "\n"
    return finish_line(fin) + "\n" + "\n".join("  " + line for line in tree.split("\n")) + "\n"


def explain_mir_json(m: Mir, stage: str, name: str = "Explained Query") -> str:
    """EXPLAIN <stage> PLAN AS JSON of a MIR plan (shape: sql/mir_json.py)."""
    return json.dumps({"stage": stage, "plans": [{"id": name, "plan": mir_json(m)}]}, indent=2) + "\n"


def explain_lir_json(df: lir.Dataflow) -> str:
    """EXPLAIN PHYSICAL PLAN AS JSON (shape: compute/plan/explain_json.py)."""
    return json.dumps(dataflow_json(df), indent=2) + "\n"


def explain_dataflow_text(df: lir.Dataflow, node_ids: bool = False, records: dict[int, int] | None = None,
                          indexed: Mapping[str, str] | None = None) -> str:
    return explain_dataflow(df, node_ids=node_ids, records=records, indexed=indexed)


def explain_lir_text(df: lir.Dataflow, options: tuple[str, ...] = (), indexed: Mapping[str, str] | None = None,
                     lookups: IndexKeys | None = None) -> str:
    with redacted_literals("redacted" in options):
        return explain_dataflow(df, node_ids="node_ids" in options, indexed=indexed, lookups=lookups)


def to_mir(bound: BoundQuery, params: list[Any] | None = None, param_types: tuple[SqlType, ...] = (), now: int | None = None) -> Mir:
    return lower_to_mir(bound.rel, params, param_types, now)


def optimized_mir(bound: BoundQuery, params: list[Any] | None = None, param_types: tuple[SqlType, ...] = (), now: int | None = None,
                  sizes: Callable[[Mir], Mapping[str, int]] | None = None, monotonic: frozenset[str] = frozenset(),
                  ranges: Callable[[Mir], Ranges] | None = None) -> Mir:
    """`sizes`: the row counts of the storage collections a plan reads (by id), looked up
    by the caller (the catalog knows them) and passed to the optimizer as plain data;
    `ranges`: likewise the (min, max) of their integer columns.
    `monotonic`: the ids of the append-only storage collections (sources)."""
    m = to_mir(bound, params, param_types, now)
    return optimize(m, sizes=sizes(m) if sizes is not None else None, monotonic_sources=monotonic,
                    ranges=ranges(m) if ranges is not None else None)


def storage_ids(m: Mir) -> set[str]:
    """The ids of the storage collections `m` reads."""
    out: set[str] = set()

    def walk(x: Mir) -> None:
        if isinstance(x, mir.Get) and not x.local:
            out.add(x.id)
        for c in mir.mir_children(x):
            walk(c)

    walk(m)
    return out


def lir_finishing(f: Finishing, arity: int) -> lir.Finishing | None:
    if f.is_trivial(arity):
        return None
    return lir.Finishing(f.order_by, f.limit, f.offset, f.project)


def dataflow(m: Mir, finishing: Finishing | None, *, name: str = "Explained Query", single_time: bool = True,
             flags: PlanFlags = PlanFlags(), sizes: Mapping[str, int] | None = None) -> lir.Dataflow:
    """MIR -> LIR -> finalize_dataflow. `sizes`: the exact record counts of the storage
    collections at the read time (by id), for the join stages' bounds."""
    plan = lower_to_lir(m, sizes)
    types = mir_types(m)
    fin = lir_finishing(finishing, len(types)) if finishing is not None else None
    sources = tuple(dict.fromkeys(storage_sources(plan)))
    df = lir.Dataflow(name, plan, types, single_time, fin, sources)
    return finalize_dataflow(df, flags)


def finalize_dataflow(df: lir.Dataflow, flags: PlanFlags) -> lir.Dataflow:
    for refine in REFINEMENTS:
        df = refine(df, flags)
    return df


def explain(stage: str, bound: BoundQuery, options: tuple[str, ...] = (), flags: PlanFlags = PlanFlags(),
            params: list[Any] | None = None, param_types: tuple[SqlType, ...] = (), fmt: str = "text",
            sizes: Callable[[Mir], Mapping[str, int]] | None = None,
            names: Callable[[Mir], Mapping[str, tuple[str, ...]]] | None = None,
            indexed: Mapping[str, str] | None = None, lookups: IndexKeys | None = None,
            monotonic: frozenset[str] = frozenset(), ranges: Callable[[Mir], Ranges] | None = None) -> str:
    """EXPLAIN <stage> PLAN [AS <fmt>] of a one-shot SELECT. `names`: the column names of the
    storage collections a plan reads (by id), for humanized expressions. `indexed`: the index
    serving reads of a storage collection (its qualified name), by collection id; `lookups`:
    every index of each collection with its key (fast-path lookups, compute.plan.lookup)."""
    if stage in ("raw", "decorrelated"):
        m = to_mir(bound, params, param_types)
    else:
        m = optimized_mir(bound, params, param_types, sizes=sizes, monotonic=monotonic, ranges=ranges)
    if stage != "physical":
        if fmt == "json":
            return explain_mir_json(m, stage)
        return explain_mir_text(m, options, bound.finishing, names(m) if names is not None else None,
                                sizes(m) if sizes is not None else None)
    df = dataflow(m, bound.finishing, flags=flags, sizes=sizes(m) if sizes is not None else None)
    return explain_lir_json(df) if fmt == "json" else explain_lir_text(df, options, indexed, lookups)


def storage_sources(p: lir.Plan) -> Iterator[tuple[str, str]]:
    n = p.node
    if isinstance(n, lir.Get) and not n.local:
        yield (n.id, n.name)
    for c in lir_children(n):
        yield from storage_sources(c)


def lir_children(n: lir.Node) -> tuple[lir.Plan, ...]:
    match n:
        case lir.Constant() | lir.Get():
            return ()
        case lir.MfpNode(input=i) | lir.FlatMap(input=i) | lir.Reduce(input=i) | lir.TopK(input=i) | lir.Negate(input=i) | lir.Threshold(input=i) | lir.ArrangeBy(input=i):
            return (i,)
        case lir.Join(inputs=xs) | lir.Union(inputs=xs):
            return xs
        case lir.Let(value=v, body=b):
            return (v, b)
        case lir.LetRec(values=vs, body=b):
            return vs + (b,)
    raise AssertionError(n)
