"""EXPLAIN PHYSICAL PLAN ... AS JSON: the LIR dataflow as JSON (shape ours, stable, documented
here; scalars, aggregates, orders and values as in sql/mir_json.py):

    {"stage": "physical",
     "plans": [{"id": "Explained Query" | "<qualified object name>",
                "finishing": null | {"order_by": [ORDER], "limit", "offset", "output": [i]},
                "plan": NODE}],
     "sources": ["materialize.public.t", ..],
     "target_cluster": "quickstart"}

NODE = {"node_id": n, "op": <Constant|Get|Mfp|FlatMap|Join|Reduce|TopK|Negate|Threshold|
        Union|ArrangeBy|Let|LetRec>, "strategy": <variant, where LIR has one>, <fields>,
        "inputs": [NODE, ..]}
  Constant: "rows", "types";  Get: "strategy" (PassArrangements|Collection), "id", "name",
    "local", "mfp";  Mfp: "mfp";  FlatMap: "func", "exprs"
  MFP = {"input_arity": n, "map": [SCALAR], "filter": [SCALAR], "project": [i]}
  Join: "strategy" (Linear|Delta), "equivalences", "paths": [{"source", "source_key",
    "stages": [{"lookup_relation", "lookup_key", "stream_key", "thinning", "lookup_rows", "broadcast"}]}]
  Reduce: "strategy" (Distinct|Accumulable|Hierarchical|Basic), "group_key", "aggregates",
    and for Hierarchical "monotonic", "must_consolidate", "buckets"
  TopK: "strategy" (MonotonicTop1|MonotonicTopK|Basic), "group_key", "order_key", "limit",
    "offset", and "must_consolidate" (monotonic) or "buckets" (Basic)
  Threshold: "strategy": "Basic";  Union: "consolidate_output";  ArrangeBy: "keys"
  Let: "id", "value": NODE, "body": NODE (no inputs)
  LetRec: "ids", "values": [NODE], "limits": [null | {"max_iters", "return_at_limit"}], "body"
"""

from __future__ import annotations

from typing import Any, assert_never

from compute.plan import lir
from sql.mir_json import agg_json, json_type, limit_json, order_json, rows_json, scalar_json


def dataflow_json(df: lir.Dataflow) -> dict[str, Any]:
    fin = None
    if df.finishing is not None:
        f = df.finishing
        fin = {"order_by": [order_json(o) for o in f.order_by], "limit": f.limit, "offset": f.offset, "output": list(f.project)}
    return {
        "stage": "physical",
        "plans": [{"id": df.name, "finishing": fin, "plan": plan_json(df.plan)}],
        "sources": [name for _, name in df.sources],
        "target_cluster": "quickstart",
    }


def mfp_json(m: lir.Mfp) -> dict[str, Any]:
    return {
        "input_arity": m.input_arity,
        "map": [scalar_json(e) for e in m.expressions],
        "filter": [scalar_json(p) for p in m.predicates],
        "project": list(m.output),
    }


_REDUCE = {lir.ReduceDistinct: "Distinct", lir.ReduceAccumulable: "Accumulable", lir.ReduceHierarchical: "Hierarchical", lir.ReduceBasic: "Basic"}
_TOPK = {lir.TopKMonotonicTop1: "MonotonicTop1", lir.TopKMonotonicTopK: "MonotonicTopK", lir.TopKBasic: "Basic"}


def plan_json(p: lir.Plan) -> dict[str, Any]:
    n = p.node
    out: dict[str, Any] = {"node_id": p.node_id}
    inputs: tuple[lir.Plan, ...] = ()
    match n:
        case lir.Constant(rows=rows, types=ts):
            out |= {"op": "Constant", "rows": rows_json(rows, ts), "types": [json_type(t) for t in ts]}
        case lir.Get(id=i, name=name, strategy=s, mfp=m, local=loc):
            out |= {"op": "Get", "strategy": s, "id": i, "name": name, "local": loc, "mfp": mfp_json(m)}
        case lir.MfpNode(input=i, mfp=m):
            out |= {"op": "Mfp", "mfp": mfp_json(m)}
            inputs = (i,)
        case lir.FlatMap(input=i, func=f, exprs=xs):
            out |= {"op": "FlatMap", "func": f, "exprs": [scalar_json(x) for x in xs]}
            inputs = (i,)
        case lir.Join(inputs=ins, equivalences=eq, strategy=s):
            out |= {"op": "Join", "strategy": s, "equivalences": [[scalar_json(x) for x in cls] for cls in eq],
                    "paths": [{"source": p.source, "source_key": [scalar_json(k) for k in p.source_key],
                               "stages": [{"lookup_relation": st.lookup_relation, "lookup_key": [scalar_json(k) for k in st.lookup_key],
                                           "stream_key": [scalar_json(k) for k in st.stream_key], "thinning": list(st.thinning),
                                           "lookup_rows": st.lookup_rows, "broadcast": st.broadcast}
                                          for st in p.stages]} for p in n.paths]}
            inputs = ins
        case lir.Reduce(input=i, group_key=k, aggregates=aggs, plan=rp):
            out |= {"op": "Reduce", "strategy": _REDUCE[type(rp)], "group_key": [scalar_json(x) for x in k], "aggregates": [agg_json(a) for a in aggs]}
            if isinstance(rp, lir.ReduceHierarchical):
                out |= {"monotonic": rp.monotonic, "must_consolidate": rp.must_consolidate, "buckets": list(rp.buckets)}
            inputs = (i,)
        case lir.TopK(input=i, group_key=g, order_key=o, limit=lim, offset=off, plan=tp):
            out |= {"op": "TopK", "strategy": _TOPK[type(tp)], "group_key": list(g), "order_key": [order_json(x) for x in o], "limit": lim, "offset": off}
            match tp:
                case lir.TopKMonotonicTop1(must_consolidate=mc) | lir.TopKMonotonicTopK(must_consolidate=mc):
                    out["must_consolidate"] = mc
                case lir.TopKBasic(buckets=b):
                    out["buckets"] = list(b)
                case _:
                    assert_never(tp)
            inputs = (i,)
        case lir.Negate(input=i):
            out["op"] = "Negate"
            inputs = (i,)
        case lir.Threshold(input=i):
            out |= {"op": "Threshold", "strategy": "Basic"}
            inputs = (i,)
        case lir.Union(inputs=ins, consolidate_output=c):
            out |= {"op": "Union", "consolidate_output": c}
            inputs = ins
        case lir.ArrangeBy(input=i, keys=ks):
            out |= {"op": "ArrangeBy", "keys": [[scalar_json(x) for x in k] for k in ks]}
            inputs = (i,)
        case lir.Let(id=i, value=v, body=b):
            return out | {"op": "Let", "id": i, "value": plan_json(v), "body": plan_json(b)}
        case lir.LetRec(ids=ids, values=vs, limits=lims, body=b):
            return out | {"op": "LetRec", "ids": list(ids), "values": [plan_json(v) for v in vs], "limits": [limit_json(x) for x in lims], "body": plan_json(b)}
        case _:
            assert_never(n)
    out["inputs"] = [plan_json(c) for c in inputs]
    return out
