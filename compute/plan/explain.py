"""EXPLAIN of LIR in Materialize's "verbose text" format (DESIGN §4.4)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import assert_never

from compute.plan import lir
from compute.plan.lookup import IndexKeys, find_lookup
from sql.scalar import explain, explain_agg, explain_order, literal_text


def fast_path(df: lir.Dataflow, indexed: Mapping[str, str]) -> str | None:
    """The index a one-shot dataflow is a fast-path peek of (an MFP over one indexed
    object: answered from the index's state, Materialize's `Explained Query (fast path)`),
    or None."""
    n = df.plan.node
    while isinstance(n, lir.MfpNode):
        n = n.input.node
    if isinstance(n, lir.Get) and not n.local and n.id in indexed:
        return indexed[n.id]
    return None


def explain_dataflow(df: lir.Dataflow, node_ids: bool = False, records: dict[int, int] | None = None,
                     indexed: Mapping[str, str] | None = None, lookups: IndexKeys | None = None) -> str:
    """`records` (EXPLAIN ANALYZE): records produced per node id, shown with the node ids.
    `indexed`: the index (qualified name) serving reads of a source, by source id; `lookups`:
    the indexes of each source with their keys (a fast-path lookup reads one by key, shown
    as Materialize's `ReadIndex on=obj idx=[lookup value=(..)]`)."""
    lines: list[str] = []
    indexed = indexed or {}
    header = df.name
    if df.single_time and (fast_path(df, indexed) is not None or isinstance(df.plan.node, lir.Constant)):
        header += " (fast path)"  # an index peek, or a constant answered without a dataflow
    lines.append(f"{header}:")
    depth = 1
    if df.finishing is not None:
        lines.append("  " + finish_line(df.finishing))
        depth = 2
    start = len(lines)
    _node(df.plan, depth, lines, node_ids, records)
    lk = find_lookup(df, lookups) if lookups else None
    if lk is not None:
        name = dict(df.sources)[lk.source]
        at = next(i for i in range(start, len(lines)) if lines[i].lstrip().startswith("Get::") and f" {name}" in lines[i])
        pad = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
        lines[at] = pad + lk.explain(name)
        if at + 1 < len(lines) and lines[at + 1].strip() == "raw=true":
            del lines[at + 1]
    if df.sources:
        lines.append("")
        pushed = dict(df.source_mfps)
        for sid, name in df.sources:
            lines.append(f"Source {name}")
            if sid in pushed:
                _mfp_lines(pushed[sid], "  ", lines)
    used = [lk.index_name if lk is not None and lk.source == sid else indexed[sid] for sid, _ in df.sources if sid in indexed]
    if used:
        lines.append("")
        lines.append("Used Indexes:")
        looked_up = lk.index_name if lk is not None else None
        lines.extend(f"  - {name} ({'lookup' if name == looked_up else '*** full scan ***'})" for name in dict.fromkeys(used))
    lines.append("")
    lines.append("Target cluster: quickstart")
    return "\n".join(lines) + "\n"


def _mfp_lines(m: lir.Mfp, pad: str, out: list[str]) -> None:
    if m.projection is not None:
        out.append(f"{pad}project=({', '.join(f'#{c}' for c in m.projection)})")
    if m.predicates:
        out.append(f"{pad}filter=({' AND '.join(explain(p) for p in m.predicates)})")
    if m.expressions:
        out.append(f"{pad}map=({', '.join(explain(e) for e in m.expressions)})")


def _keys(ks) -> str:
    return ", ".join(explain(k) for k in ks)


def _join_path_lines(path: lir.JoinPath, stage: str, pad: str, out: list[str]) -> None:
    """A join path as Materialize prints it: the stages last to first, then the source."""
    for j, st in reversed(list(enumerate(path.stages))):
        out.append(f"{pad}{stage}[{j}]")
        if not st.lookup_key:
            out.append(f"{pad}  cross_join")
        if st.broadcast:
            out.append(f"{pad}  broadcast rows<={st.lookup_rows}")
        out.append(f"{pad}  lookup={{ relation={st.lookup_relation}, key=[{_keys(st.lookup_key)}] }}")
        out.append(f"{pad}  stream={{ key=[{_keys(st.stream_key)}], thinning=({', '.join(f'#{c}' for c in st.thinning)}) }}")
    out.append(f"{pad}source={{ relation={path.source}, key=[{_keys(path.source_key)}] }}")


def _node(p: lir.Plan, depth: int, out: list[str], node_ids: bool, records: dict[int, int] | None = None) -> None:
    pad = "  " * depth
    dpad = pad + "  "
    if records is not None:
        ann = f" // {{ node_id: {p.node_id}, records: {records.get(p.node_id, 0)} }}"
    else:
        ann = f" // {{ node_id: {p.node_id} }}" if node_ids else ""
    n = p.node
    children: tuple[lir.Plan, ...] = ()
    match n:
        case lir.Constant(rows=rows, types=ts):
            if not rows:
                out.append(f"{pad}Constant <empty>{ann}")
            else:
                out.append(f"{pad}Constant{ann}")
                for row, diff in rows:
                    vals = ", ".join(literal_text(v, t) for v, t in zip(row, ts, strict=True))
                    out.append(f"{dpad}- ({vals}){' x ' + str(diff) if diff != 1 else ''}")
        case lir.Get(name=name, strategy=s, mfp=m, local=loc):
            out.append(f"{pad}Get::{s} {name}{ann}")
            _mfp_lines(m, dpad, out)
            if not loc:
                out.append(f"{dpad}raw=true")
        case lir.MfpNode(input=i, mfp=m):
            out.append(f"{pad}Mfp{ann}")
            _mfp_lines(m, dpad, out)
            children = (i,)
        case lir.FlatMap(input=i, func=f, exprs=xs):
            out.append(f"{pad}FlatMap {f}({', '.join(explain(x) for x in xs)}){ann}")
            children = (i,)
        case lir.Join(inputs=ins, strategy=s, paths=paths):
            out.append(f"{pad}Join::{s}{ann}")
            if s == "Delta":
                for j, path in enumerate(paths):
                    out.append(f"{dpad}plan_path[{j}]")
                    _join_path_lines(path, "delta_stage", dpad + "  ", out)
            elif paths:
                _join_path_lines(paths[0], "linear_stage", dpad, out)
            children = ins
        case lir.Reduce(input=i, group_key=k, aggregates=aggs, plan=rp):
            kind = {lir.ReduceDistinct: "Distinct", lir.ReduceAccumulable: "Accumulable", lir.ReduceHierarchical: "Hierarchical", lir.ReduceBasic: "Basic"}[type(rp)]
            out.append(f"{pad}Reduce::{kind}{ann}")
            if k:
                out.append(f"{dpad}group_by=[{', '.join(explain(x) for x in k)}]")
            match rp:
                case lir.ReduceAccumulable():
                    for j, a in enumerate(aggs):
                        out.append(f"{dpad}simple_aggrs[{j}]=({j}, {j}, {explain_agg(a)})")
                case lir.ReduceHierarchical(monotonic=mono, must_consolidate=mc, buckets=b):
                    out.append(f"{dpad}aggr_funcs=[{', '.join(a.func for a in aggs)}]")
                    out.append(f"{dpad}skips=[{', '.join('0' for _ in aggs)}]")
                    if mono:
                        out.append(f"{dpad}monotonic")
                        if mc:
                            out.append(f"{dpad}must_consolidate")
                    else:
                        out.append(f"{dpad}buckets=[{', '.join(str(x) for x in b)}]")
                case lir.ReduceBasic():
                    for j, a in enumerate(aggs):
                        out.append(f"{dpad}aggr[{j}]=({j}, {explain_agg(a)})")
                case lir.ReduceDistinct():
                    pass
                case _:
                    assert_never(rp)
            children = (i,)
        case lir.TopK(input=i, group_key=g, order_key=o, limit=lim, offset=off, plan=tp):
            kind = {lir.TopKMonotonicTop1: "MonotonicTop1", lir.TopKMonotonicTopK: "MonotonicTopK", lir.TopKBasic: "Basic"}[type(tp)]
            parts = []
            if g:
                parts.append(f"group_by=[{', '.join(f'#{c}' for c in g)}]")
            if o:
                parts.append(f"order_by=[{', '.join(explain_order(x) for x in o)}]")
            if lim is not None and not isinstance(tp, lir.TopKMonotonicTop1):
                parts.append(f"limit={lim}")
            if off:
                parts.append(f"offset={off}")
            if isinstance(tp, (lir.TopKMonotonicTop1, lir.TopKMonotonicTopK)) and tp.must_consolidate:
                parts.append("must_consolidate")
            out.append(f"{pad}TopK::{kind}{' ' + ' '.join(parts) if parts else ''}{ann}")
            children = (i,)
        case lir.Negate(input=i):
            out.append(f"{pad}Negate{ann}")
            children = (i,)
        case lir.Threshold(input=i):
            out.append(f"{pad}Threshold::Basic{ann}")
            children = (i,)
        case lir.Union(inputs=ins, consolidate_output=c):
            out.append(f"{pad}Union{' consolidate_output=true' if c else ''}{ann}")
            children = ins
        case lir.ArrangeBy(input=i, keys=ks):
            out.append(f"{pad}ArrangeBy{ann}")
            for j, k in enumerate(ks):
                out.append(f"{dpad}arrangements[{j}]={{ key=[{', '.join(explain(x) for x in k)}], permutation=id }}")
            children = (i,)
        case lir.Let(id=i, value=v, body=b):
            out.append(f"{pad}With{ann}")
            out.append(f"{dpad}cte {i} =")
            _node(v, depth + 2, out, node_ids, records)
            out.append(f"{pad}Return")
            _node(b, depth + 1, out, node_ids, records)
            return
        case lir.LetRec(ids=ids, values=vs, limits=lims, body=b):
            out.append(f"{pad}With Mutually Recursive{ann}")
            for i, v, rec_lim in zip(ids, vs, lims, strict=True):
                out.append(f"{dpad}cte {rec_lim.explain() + ' ' if rec_lim is not None else ''}{i} =")
                _node(v, depth + 2, out, node_ids, records)
            out.append(f"{pad}Return")
            _node(b, depth + 1, out, node_ids, records)
            return
        case _:
            assert_never(n)
    for child in children:
        _node(child, depth + 1, out, node_ids, records)


def finish_line(f: lir.Finishing) -> str:
    """`Finish order_by=[#0 asc nulls_last] limit=3 output=[#0, #1]` (Materialize)."""
    parts = []
    if f.order_by:
        parts.append(f"order_by=[{', '.join(explain_order(o) for o in f.order_by)}]")
    if f.limit is not None:
        parts.append(f"limit={f.limit}")
    if f.offset:
        parts.append(f"offset={f.offset}")
    parts.append(f"output=[{', '.join(f'#{c}' for c in f.project)}]")
    return "Finish " + " ".join(parts)
