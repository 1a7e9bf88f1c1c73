"""Projection pushdown (demand): every operator computes only the columns its consumers read.

    prune(r, d) = Project(d)(r)          (d: the demanded columns of r, in order)

- Project(o)(x): prune(x, o[d]) re-projected
- Map(ss)(x): scalars no demanded column depends on go; x keeps the columns the rest read
- Filter(ps)(x), TopK(x), FlatMap(x): their input keeps d plus the columns they read (a
  Filter stays below the narrowing Project, as predicate pushdown wants it; a FlatMap reads
  through a narrowing Project over another operator, like a Reduce)
- Join(xs): each input keeps its share of d plus its equivalence columns
- Reduce(x): undemanded aggregates go (the group key stays: it defines the groups); a
  narrowing Project directly over another operator is absorbed into the key/aggregates
- Union / Negate: pushed to every input;  Threshold, ArrangeBy: need every column
- Let(l, v, body): v keeps only the columns some `Get l` in the pruned body reads;
  LetRec(vs, body): only the body is pruned (a recursive binding keeps its columns)
- Get / Constant: Project(d)(r) (a projected storage read; constants project their rows)
"""

from __future__ import annotations

from dataclasses import replace
from typing import assert_never

from sql import mir
from sql.scalar import columns_used, permute

# a Project over one of these lowers into the same Mfp / source read; over anything else it
# would be an Mfp operator of its own
_MFP_OR_LEAF = (mir.Get, mir.Constant, mir.Map, mir.Filter, mir.Project)


def projection_pushdown(r: mir.Mir) -> mir.Mir:
    out = _prune(r, tuple(range(mir.arity(r))), {})
    return r if out == r else out  # unchanged plans keep their identity (cheap comparisons)


def _project(r: mir.Mir, d: tuple[int, ...]) -> mir.Mir:
    """Project(d)(r), fused with a Project r may be, and omitted when it is the identity
    (so the result is already what fusion would make of it)."""
    if isinstance(r, mir.Project):
        d, r = tuple(r.outputs[c] for c in d), r.input
    return r if d == tuple(range(mir.arity(r))) else mir.Project(r, d)


def _over(r: mir.Mir, need: list[int], d: tuple[int, ...]) -> tuple[tuple[int, ...], dict[int, int]]:
    """The sorted input columns to keep and the old -> new position map."""
    keep = tuple(sorted(set(need)))
    return keep, {c: i for i, c in enumerate(keep)}


def _prune(r: mir.Mir, d: tuple[int, ...], lets: dict[str, set[int]]) -> mir.Mir:
    match r:
        case mir.Constant(rows=rows, types=ts):
            if d == tuple(range(len(ts))):
                return r
            return mir.Constant(tuple((tuple(row[c] for c in d), m) for row, m in rows), tuple(ts[c] for c in d))
        case mir.Get(id=i, local=loc):
            if loc and i in lets:
                lets[i].update(d)
                if d == tuple(range(len(r.types))):
                    return r  # reads every column: l's value will not be pruned
                return mir.Project(r, d)  # wrapped: rewritten if l's value is pruned
            return _project(r, d)
        case mir.Let(id=i, value=v, body=b):
            lets[i] = set()
            body = _prune(b, d, lets)
            used = tuple(sorted(lets.pop(i)))
            value = _prune(v, used, lets)
            if used == tuple(range(mir.arity(v))):
                return mir.Let(i, value, body)  # the wrappers already read every column
            pos = {c: k for k, c in enumerate(used)}
            return mir.Let(i, value, _rebind(body, i, pos, mir.mir_types(value)))
        case mir.LetRec(values=vs, body=b):
            # recursive bindings keep their declared columns; only the body is pruned
            values = tuple(_prune(v, tuple(range(mir.arity(v))), lets) for v in vs)
            return replace(r, values=values, body=_prune(b, d, lets))
        case mir.Project(input=x, outputs=o):
            keep, pos = _over(x, [o[c] for c in d], d)
            return _project(_prune(x, keep, lets), tuple(pos[o[c]] for c in d))
        case mir.Map(input=x, scalars=ss):
            n = mir.arity(x)
            wanted = set(d)
            for k in range(len(ss) - 1, -1, -1):
                if n + k in wanted:
                    wanted |= columns_used(ss[k])
            keep, pos = _over(x, [c for c in wanted if c < n], d)
            kept = [k for k in range(len(ss)) if n + k in wanted]
            for k in kept:
                pos[n + k] = len(pos)
            inner = _prune(x, keep, lets)
            m = mir.Map(inner, tuple(permute(ss[k], pos) for k in kept)) if kept else inner
            return _project(m, tuple(pos[c] for c in d))
        case mir.Filter(input=x, predicates=ps):
            need = list(d)
            for p in ps:
                need.extend(columns_used(p))
            keep, pos = _over(x, need, d)
            inner = _prune(x, keep, lets)
            preds = tuple(permute(p, pos) for p in ps)
            if isinstance(inner, mir.Project) and not _let_read(inner.input, lets):
                # the narrowing goes above the filter (where predicate pushdown would put it);
                # a `Project(Get l)` of a binding being pruned stays together: _rebind
                # rewrites exactly that shape once l's value has lost its unread columns
                f: mir.Mir = mir.Project(mir.Filter(inner.input, tuple(permute(p, inner.outputs) for p in preds)), inner.outputs)
            else:
                f = mir.Filter(inner, preds)
            return _project(f, tuple(pos[c] for c in d))
        case mir.FlatMap(input=x, exprs=xs, types=ts):
            n = mir.arity(x)
            need = [c for c in d if c < n]
            for e in xs:
                need.extend(columns_used(e))
            keep, pos = _over(x, need, d)
            inner = _prune(x, keep, lets)
            if isinstance(inner, mir.Project) and not isinstance(inner.input, _MFP_OR_LEAF):
                # read through the narrowing: the Project above the FlatMap absorbs it
                pos = {c: inner.outputs[p] for c, p in pos.items()}
                inner = inner.input
            width = mir.arity(inner)
            for k in range(len(ts)):
                pos[n + k] = width + k
            fm = replace(r, input=inner, exprs=tuple(permute(e, pos) for e in xs))
            return _project(fm, tuple(pos[c] for c in d))
        case mir.Join(inputs=xs, equivalences=eq):
            offsets = [0]
            for x in xs:
                offsets.append(offsets[-1] + mir.arity(x))
            needed = set(d)
            for cls in eq:
                for e in cls:
                    needed |= columns_used(e)
            pos = {}
            ins = []
            for j, x in enumerate(xs):
                local = tuple(c - offsets[j] for c in sorted(needed) if offsets[j] <= c < offsets[j + 1])
                for c in local:
                    pos[offsets[j] + c] = len(pos)
                ins.append(_prune(x, local, lets))
            new_eq = tuple(tuple(permute(e, pos) for e in cls) for cls in eq)
            return _project(replace(r, inputs=tuple(ins), equivalences=new_eq), tuple(pos[c] for c in d))
        case mir.Reduce(input=x, group_key=key, aggregates=aggs):
            nk = len(key)
            kept = [k for k in range(len(aggs)) if nk + k in d]
            needed = set()
            for e in key:
                needed |= columns_used(e)
            for k in kept:
                needed |= columns_used(aggs[k].expr)
            keep, pos = _over(x, list(needed), d)
            inner = _prune(x, keep, lets)
            if isinstance(inner, mir.Project) and not isinstance(inner.input, _MFP_OR_LEAF):
                # the Reduce reads through the narrowing itself (no Mfp between two operators)
                pos = {c: inner.outputs[p] for c, p in pos.items()}
                inner = inner.input
            red = replace(
                r, input=inner, group_key=tuple(permute(e, pos) for e in key),
                aggregates=tuple(replace(aggs[k], expr=permute(aggs[k].expr, pos)) for k in kept),
            )
            out = {c: c for c in range(nk)} | {nk + k: nk + j for j, k in enumerate(kept)}
            return _project(red, tuple(out[c] for c in d))
        case mir.TopK(input=x, group_key=g, order_key=ok):
            need = list(d) + list(g) + [o.column for o in ok]
            keep, pos = _over(x, need, d)
            top = replace(r, input=_prune(x, keep, lets), group_key=tuple(pos[c] for c in g),
                          order_key=tuple(replace(o, column=pos[o.column]) for o in ok))
            return _project(top, tuple(pos[c] for c in d))
        case mir.Union(inputs=xs):
            keep = tuple(sorted(set(d)))
            pos = {c: i for i, c in enumerate(keep)}
            return _project(mir.Union(tuple(_prune(x, keep, lets) for x in xs)), tuple(pos[c] for c in d))
        case mir.Negate(input=x):
            keep = tuple(sorted(set(d)))
            pos = {c: i for i, c in enumerate(keep)}
            return _project(mir.Negate(_prune(x, keep, lets)), tuple(pos[c] for c in d))
        case mir.Threshold(input=x) | mir.ArrangeBy(input=x):
            return _project(replace(r, input=_prune(x, tuple(range(mir.arity(x))), lets)), d)
        case _:
            assert_never(r)


def _let_read(r: mir.Mir, lets: dict[str, set[int]]) -> bool:
    """Is `r` a read of a local binding whose value this pass is pruning?"""
    return isinstance(r, mir.Get) and r.local and r.id in lets


def _rebind(r: mir.Mir, lid: str, pos: dict[int, int], types) -> mir.Mir:
    """`Project(d)(Get l)` -> `Project(pos[d])(Get l)` with l's pruned column types."""
    match r:
        case mir.Project(input=mir.Get(id=i, local=True) as g, outputs=o) if i == lid:
            return _project(replace(g, types=types), tuple(pos[c] for c in o))
        case mir.Let(id=i) if i == lid:
            return r  # shadowed (lowering never reuses ids; kept for safety)
    from sql.transforms.visit import map_children

    return map_children(r, lambda c: _rebind(c, lid, pos, types))
