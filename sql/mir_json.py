"""EXPLAIN ... AS JSON for MIR (the RAW / DECORRELATED / OPTIMIZED stages).

The shape is ours, stable and documented here (keys appear in this order):

    {"stage": "optimized", "plans": [{"id": "Explained Query", "plan": NODE}]}

NODE = {"op": <Constant|Get|Let|LetRec|Project|Map|FlatMap|Filter|Join|Reduce|TopK|Negate|
        Threshold|Union|ArrangeBy>, <the operator's own fields>, "inputs": [NODE, ..]}
  Constant: "rows": [{"row": [VALUE, ..], "diff": n}], "types"
  Get: "id", "name", "local", "types";   Let: "id", "value": NODE, "body": NODE (no inputs)
  LetRec: "ids", "values": [NODE], "limits": [null | {"max_iters", "return_at_limit"}], "body"
  Project: "outputs": [i, ..];  Map: "scalars";  Filter: "predicates";  FlatMap: "func", "exprs"
  Join: "equivalences": [[SCALAR, ..], ..], "implementation", "paths": [[{"input", "key"}]]
  Reduce: "group_key", "aggregates": [{"func", "expr", "distinct", "type"[, "window"]}],
    "monotonic" (window aggregates add "window": {"order_by", "frame", "agg"})
  TopK: "group_key": [i], "order_key": [ORDER], "limit", "offset", "monotonic"
  ArrangeBy: "keys": [[SCALAR, ..], ..]
SCALAR = {"column": i, "type": T} | {"literal": VALUE, "type": T}
       | {"call": name, "args": [SCALAR, ..], "type": T} | {"if": [c, then, else], "type": T}
ORDER = {"column": i, "desc": bool, "nulls_last": bool};  T = the type's name
VALUE = null, a boolean, a number, or the value's Postgres text (numeric, dates, arrays, ...).
"""

from __future__ import annotations

import math
from typing import Any, assert_never

from sql import mir
from sql.literal import to_text
from sql.scalar import (
    AggregateExpr,
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    ColumnOrder,
    If,
    Literal,
    Scalar,
)
from sql.types import SqlType


def json_value(v: Any, t: SqlType | None = None) -> Any:
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float) and math.isfinite(v):
        return v
    return to_text(v, t)  # Postgres' text: numeric, dates, intervals, arrays, ...


def json_type(t: SqlType) -> str:
    return t.name


def scalar_json(e: Scalar) -> dict[str, Any]:
    match e:
        case Column(index=i, typ=t):
            return {"column": i, "type": json_type(t)}
        case Literal(value=v, typ=t):
            return {"literal": json_value(v, t), "type": json_type(t)}
        case CallUnary(func=f, expr=x, typ=t):
            return {"call": f, "args": [scalar_json(x)], "type": json_type(t)}
        case CallBinary(func=f, expr1=a, expr2=b, typ=t):
            return {"call": f, "args": [scalar_json(a), scalar_json(b)], "type": json_type(t)}
        case CallVariadic(func=f, exprs=xs, typ=t):
            return {"call": f, "args": [scalar_json(x) for x in xs], "type": json_type(t)}
        case If(cond=c, then=a, els=b, typ=t):
            return {"if": [scalar_json(c), scalar_json(a), scalar_json(b)], "type": json_type(t)}
        case _:
            assert_never(e)


def agg_json(a: AggregateExpr) -> dict[str, Any]:
    out = {"func": a.func, "expr": scalar_json(a.expr), "distinct": a.distinct, "type": json_type(a.typ)}
    if a.window is not None:
        w = a.window
        out["window"] = {
            "order_by": [order_json(o) for o in w.order_by],
            "frame": {"units": w.frame.units, "start": list(w.frame.start), "end": list(w.frame.end),
                      "exclude": w.frame.exclude, "bounds": list(w.bounds)},
            "agg": w.agg,
        }
    return out


def order_json(o: ColumnOrder) -> dict[str, Any]:
    return {"column": o.column, "desc": o.desc, "nulls_last": o.nulls_last}


def rows_json(rows, types) -> list[dict[str, Any]]:
    return [{"row": [json_value(v, t) for v, t in zip(row, types, strict=True)], "diff": d} for row, d in rows]


def limit_json(lim: mir.RecursionLimit | None) -> dict[str, Any] | None:
    return None if lim is None else {"max_iters": lim.max_iters, "return_at_limit": lim.return_at_limit}


def mir_json(r: mir.Mir) -> dict[str, Any]:
    node: dict[str, Any] = {"op": type(r).__name__}
    match r:
        case mir.Constant(rows=rows, types=ts):
            node |= {"rows": rows_json(rows, ts), "types": [json_type(t) for t in ts]}
        case mir.Get(id=i, name=n, types=ts, local=loc):
            node |= {"id": i, "name": n, "local": loc, "types": [json_type(t) for t in ts]}
        case mir.Let(id=i, value=v, body=b):
            return node | {"id": i, "value": mir_json(v), "body": mir_json(b)}
        case mir.LetRec(ids=ids, values=vs, limits=lims, body=b):
            return node | {"ids": list(ids), "values": [mir_json(v) for v in vs], "limits": [limit_json(x) for x in lims], "body": mir_json(b)}
        case mir.Project(outputs=o):
            node["outputs"] = list(o)
        case mir.Map(scalars=ss):
            node["scalars"] = [scalar_json(s) for s in ss]
        case mir.Filter(predicates=ps):
            node["predicates"] = [scalar_json(p) for p in ps]
        case mir.FlatMap(func=f, exprs=xs):
            node |= {"func": f, "exprs": [scalar_json(x) for x in xs]}
        case mir.Join(equivalences=eq, implementation=impl, paths=paths):
            node |= {
                "equivalences": [[scalar_json(x) for x in cls] for cls in eq],
                "implementation": impl,
                "paths": [[{"input": i, "key": [scalar_json(k) for k in key]} for i, key in p] for p in paths],
            }
        case mir.Reduce(group_key=k, aggregates=aggs, monotonic=m):
            node |= {"group_key": [scalar_json(x) for x in k], "aggregates": [agg_json(a) for a in aggs], "monotonic": m}
        case mir.TopK(group_key=g, order_key=o, limit=lim, offset=off, monotonic=m):
            node |= {"group_key": list(g), "order_key": [order_json(x) for x in o], "limit": lim, "offset": off, "monotonic": m}
        case mir.ArrangeBy(keys=ks):
            node["keys"] = [[scalar_json(x) for x in k] for k in ks]
        case mir.Negate() | mir.Threshold() | mir.Union():
            pass
        case _:
            assert_never(r)
    node["inputs"] = [mir_json(c) for c in mir.mir_children(r)]
    return node
