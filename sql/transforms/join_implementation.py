"""JoinImplementation: choose how each Join is executed and in which order it reads its inputs.

    Join(xs, eq) = Join(xs, eq, type=differential, paths=(p,))      (Join::Linear)
    Join(xs, eq) = Join(xs, eq, type=delta, paths=(p0, .., pn-1))   (Join::Delta: 3 or more
        inputs, every one already arranged, i.e. an ArrangeBy: a delta join keeps no
        intermediate state but needs an arrangement of every input)
    Join(xs ++ ys, eq) = Project(perm)(Join((Join(xs, eq_x), Join(ys, eq_y)), ()))
        when no equivalence connects the inputs xs with the inputs ys: each connected
        component is joined on its own, and the components are crossed last

A path streams its first input and joins the running result with one further input per
stage, looked up by that input's side of the equivalences shared with the inputs joined so
far (its arrangement key). The order follows the equivalence graph: a stage always takes an
input that shares an equivalence with the stream, so within a component no stage is a cross
product. The order is chosen greedily (linear in the stages, never exponential in inputs):

- the start is the largest input by estimated rows (it is streamed, the others are lookups,
  which Spark can broadcast when small); for a delta join every input starts one path;
- each next input is, among those connected to the stream: a filtered one estimated at most
  1/10 of the start, the smallest such, that does not fan out (it shrinks the stream early:
  `lineitem ⋈ G ⋈ Filter(part)` looks up the filtered part before the per-key aggregate G;
  TPC-H q09 looks up `part`, filtered by name, before the unfiltered `supplier`), then one
  whose lookup key covers a unique key of it (the stream does not grow), then one that is
  not known to fan out, then one with the longest key (the most equalities), then the
  smallest estimate. A lookup fans out when its estimated rows are at least 10 times an
  upper bound on its key's distinct values: the product of max - min + 1 of the integer
  storage columns the key reads (`ranges`, from the batch files' statistics). TPC-H q05's
  `customer` looked up by `c_nationkey` (25 values, 6,000 rows each) waits for `orders`.

Ties are broken by the inputs' own plans (`stable_key`: the text of the input, whose column
references are local to it), and only then by input number, so the plan does not depend on
the FROM order: `FROM a, b` and `FROM b, a` stream and look up the same inputs in the same
order (only the join's output columns are laid out differently).

Estimated rows come from `sizes` (the row counts of storage collections, by id, passed in as
plain data) through Filters (an equality with a literal or a LIKE pattern keeps 1/10, other
predicates 1/2),
Unions (sums), global Reduces (1 row), TopK limits and joins (the largest input of each
connected component, the components multiplied). Unknown collections count 1,000 rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from sql import mir
from sql.scalar import CallBinary, CallUnary, Column, Literal, Scalar, columns_used, permute
from sql.transforms.analysis import unique_keys
from sql.transforms.visit import map_children

UNKNOWN_ROWS = 1000.0
SHRINK_RATIO = 10.0
# a lookup whose rows are this many times its key's distinct values (at least) is a fan-out
FAN_OUT = 10.0
# {collection id: {column: (min, max)}} of integer storage columns, where known
Ranges = Mapping[str, Mapping[int, tuple[int, int]]]
Path = tuple[tuple[int, tuple[Scalar, ...]], ...]


def join_implementation(r: mir.Mir, sizes: Mapping[str, int] | None = None, ranges: Ranges | None = None) -> mir.Mir:
    return _implement(r, sizes or {}, {}, ranges or {})


def _implement(r: mir.Mir, sizes: Mapping[str, int], env: dict[str, float], ranges: Ranges) -> mir.Mir:
    match r:
        case mir.Let(id=i, value=v, body=b):
            v2 = _implement(v, sizes, env, ranges)
            b2 = _implement(b, sizes, {**env, i: estimate(v2, sizes, env)}, ranges)
            return r if v2 is v and b2 is b else mir.Let(i, v2, b2)
        case mir.Join():
            r = map_children(r, lambda x: _implement(x, sizes, env, ranges))
            assert isinstance(r, mir.Join)
            return _implement_join(r, sizes, env, ranges)
        case _:
            return map_children(r, lambda x: _implement(x, sizes, env, ranges))


def _implement_join(r: mir.Join, sizes: Mapping[str, int], env: dict[str, float], ranges: Ranges) -> mir.Mir:
    comps = components(r)
    ests = [estimate(x, sizes, env) for x in r.inputs]
    stable = [stable_key(x) for x in r.inputs]
    if len(comps) > 1 and (any(len(c) > 1 for c in comps) or r.equivalences):
        return _cross_components(r, comps, sizes, env, ranges)
    if len(comps) > 1:  # a plain cross product: the largest input streamed first
        path = tuple((i, ()) for i in sorted(range(len(r.inputs)), key=lambda i: (-ests[i], stable[i], i)))
        return r if r.implementation == "differential" and r.paths == (path,) else replace(r, implementation="differential", paths=(path,))
    if len(r.inputs) > 2 and all(isinstance(x, mir.ArrangeBy) for x in r.inputs):
        kind, starts = "delta", list(range(len(r.inputs)))
    else:
        kind, starts = "differential", [min(range(len(r.inputs)), key=lambda i: (-ests[i], stable[i], i))]
    paths = tuple(order(r, s, ests, stable, ranges) for s in starts)
    if kind == r.implementation and paths == r.paths:
        return r
    return replace(r, implementation=kind, paths=paths)


def _cross_components(r: mir.Join, comps: list[list[int]], sizes: Mapping[str, int], env: dict[str, float],
                      ranges: Ranges) -> mir.Mir:
    """Join(xs ++ ys, eq) = Project(perm)(Join((Join(xs, eq_x), Join(ys, eq_y)), ())): each
    component on its own, the largest first, crossed last."""
    offs = offsets(r)
    ests = [estimate(x, sizes, env) for x in r.inputs]
    stable = [stable_key(x) for x in r.inputs]
    comps = sorted(comps, key=lambda c: (-max(ests[i] for i in c), min(stable[i] for i in c), c[0]))
    home = {i: k for k, comp in enumerate(comps) for i in comp}
    classes: list[list[tuple[Scalar, ...]]] = [[] for _ in comps]
    for cls in r.equivalences:
        owners = set().union(*(_owners(e, offs) for e in cls))
        classes[home[min(owners)] if owners else 0].append(cls)
    parts: list[mir.Mir] = []
    new_col: dict[int, int] = {}  # r's column -> column of the crossed parts
    base = 0
    for comp, eq in zip(comps, classes, strict=True):
        local: dict[int, int] = {}
        for i in comp:
            for c in range(offs[i], offs[i + 1]):
                local[c] = len(local)
        if len(comp) == 1 and not eq:
            parts.append(r.inputs[comp[0]])
        else:
            part = mir.Join(tuple(r.inputs[i] for i in comp), tuple(tuple(permute(e, local) for e in cls) for cls in eq))
            parts.append(_implement_join(part, sizes, env, ranges))
        new_col.update({c: base + k for c, k in local.items()})
        base += len(local)
    crossed = mir.Join(tuple(parts), (), "differential", (tuple((i, ()) for i in range(len(parts))),))
    return mir.Project(crossed, tuple(new_col[c] for c in range(offs[-1])))


def offsets(r: mir.Join) -> list[int]:
    offs = [0]
    for x in r.inputs:
        offs.append(offs[-1] + mir.arity(x))
    return offs


def _owners(e: Scalar, offs: list[int]) -> set[int]:
    return {next(i for i in range(len(offs) - 1) if offs[i] <= c < offs[i + 1]) for c in columns_used(e)}


def _owner(e: Scalar, offs: list[int]) -> int | None:
    owners = _owners(e, offs)
    return owners.pop() if len(owners) == 1 else None


def components(r: mir.Join) -> list[list[int]]:
    """The inputs grouped by the equivalences that connect them (each sorted, in order of
    their first input)."""
    offs = offsets(r)
    parent = list(range(len(r.inputs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for cls in r.equivalences:
        owners = set().union(*(_owners(e, offs) for e in cls))
        first = min(owners, default=None)
        for o in owners:
            parent[find(o)] = find(first)  # type: ignore[arg-type]
    groups: dict[int, list[int]] = {}
    for i in range(len(r.inputs)):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values())


class JoinGraph:
    """The equivalence classes of a join with the inputs each member reads (computed once:
    ordering asks for stage keys O(inputs²) times)."""

    def __init__(self, r: mir.Join) -> None:
        self.offs = offsets(r)
        self.n = len(r.inputs)
        self.classes = [[(e, frozenset(_owners(e, self.offs))) for e in cls] for cls in r.equivalences]
        # input -> the classes with a member over that input alone
        self.touching: list[list[int]] = [[] for _ in range(self.n)]
        for ci, cls in enumerate(self.classes):
            for i in sorted({next(iter(o)) for _, o in cls if len(o) == 1}):
                self.touching[i].append(ci)

    def stage_keys(self, done: set[int], cand: int) -> tuple[tuple[Scalar, ...], tuple[Scalar, ...]]:
        """(stream key over the join's columns, lookup key over `cand`'s own columns): for each
        equivalence class with a member over the inputs `done` and one over `cand` alone."""
        stream: list[Scalar] = []
        lookup: list[Scalar] = []
        for ci in self.touching[cand]:
            cls = self.classes[ci]
            theirs = next((e for e, o in cls if o <= done), None)
            mine = next((e for e, o in cls if o == {cand}), None)
            if theirs is not None and mine is not None:
                k = permute(mine, {c: c - self.offs[cand] for c in columns_used(mine)})
                if k not in lookup:
                    lookup.append(k)
                    stream.append(theirs)
        return tuple(stream), tuple(lookup)


def stable_key(x: mir.Mir) -> str:
    """A key of a join input that does not depend on its position among the join's inputs:
    its plan's text (an input's column references are its own, not the join's)."""
    return repr(x)


def order(r: mir.Join, start: int, ests: list[float] | None = None, stable: list[str] | None = None,
          ranges: Ranges | None = None) -> Path:
    """The greedy path from `start` (see the module docstring)."""
    g = JoinGraph(r)
    n = len(r.inputs)
    ests = ests if ests is not None else [0.0] * n
    stable = stable if stable is not None else [""] * n
    keys = [unique_keys(x) for x in r.inputs]
    # a filtered input much smaller than the start: looked up early, it shrinks the stream
    shrinks = [_filtered(x) and ests[i] * SHRINK_RATIO <= ests[start] for i, x in enumerate(r.inputs)]
    done = {start}
    path: list[tuple[int, tuple[Scalar, ...]]] = [(start, ())]
    # the inputs sharing a class with an input: candidates once that input is joined
    near = [{j for ci in g.touching[i] for _, o in g.classes[ci] for j in o} for i in range(n)]
    frontier = set(near[start]) - done
    while len(done) < n:
        best: tuple[tuple[int, int, int, int, float, str, int], int, tuple[Scalar, ...]] | None = None
        cands = [(c, g.stage_keys(done, c)[1]) for c in sorted(frontier)]
        cands = [(c, key) for c, key in cands if key]
        smallest = min((ests[c] for c, _ in cands if shrinks[c]), default=0.0)
        for cand, key in cands:
            cols = {k.index for k in key if isinstance(k, Column)}
            unique = any(u <= cols for u in keys[cand])
            fans = not unique and ests[cand] >= FAN_OUT * distinct_bound(r.inputs[cand], key, ranges or {})
            first = shrinks[cand] and not fans and ests[cand] <= smallest
            rank = (0 if first else 1, 0 if unique else 1, 1 if fans else 0, -len(key), ests[cand], stable[cand], cand)
            if best is None or rank < best[0]:
                best = (rank, cand, key)
        if best is None:  # not connected (a single component never gets here)
            cand = min(set(range(n)) - done)
            best = ((1, 1, 1, 0, 0.0, "", cand), cand, ())
        path.append((best[1], best[2]))
        done.add(best[1])
        frontier = (frontier | near[best[1]]) - done
    return tuple(path)


def distinct_bound(x: mir.Mir, key: tuple[Scalar, ...], ranges: Ranges) -> float:
    """An upper bound on the distinct values of `key` over x's rows: the product, over the
    key's columns, of max - min + 1 of the integer storage column each one reads (infinite
    when a key part is not such a column)."""
    bound = 1.0
    for k in key:
        src = _storage_column(x, k.index) if isinstance(k, Column) else None
        if src is None or (r := ranges.get(src[0], {}).get(src[1])) is None:
            return math.inf
        bound *= r[1] - r[0] + 1
    return bound


def _storage_column(x: mir.Mir, c: int) -> tuple[str, int] | None:
    """(collection id, column) that column c of x is a copy of, through Projects, Filters,
    Maps and ArrangeBys; None when c is computed."""
    while True:
        match x:
            case mir.Project(input=y, outputs=o):
                x, c = y, o[c]
            case mir.Filter(input=y) | mir.ArrangeBy(input=y):
                x = y
            case mir.Map(input=y) if c < mir.arity(y):
                x = y
            case mir.Get(id=i, local=False):
                return i, c
            case _:
                return None


def _filtered(x: mir.Mir) -> bool:
    """Does a predicate other than IS NOT NULL filter x (under its Maps, Projects and grouped
    Reduces: the distinct values of a filtered input are filtered too)?"""
    while isinstance(x, (mir.Project, mir.Map, mir.ArrangeBy, mir.Filter)) or (isinstance(x, mir.Reduce) and x.group_key):
        if isinstance(x, mir.Filter) and any(_selectivity(p) < 1.0 for p in x.predicates):
            return True
        x = x.input
    return False


def estimate(r: mir.Mir, sizes: Mapping[str, int], env: dict[str, float]) -> float:
    """Estimated rows of `r` (see the module docstring)."""
    match r:
        case mir.Get(id=i, local=loc):
            if loc:
                return env.get(i, UNKNOWN_ROWS)
            return float(sizes[i]) if i in sizes else UNKNOWN_ROWS
        case mir.Constant(rows=rows):
            return float(sum(max(d, 0) for _, d in rows))
        case mir.Filter(input=x, predicates=ps):
            e = estimate(x, sizes, env)
            for p in ps:
                e *= _selectivity(p)
            return max(e, 1.0)
        case mir.Map(input=x) | mir.Project(input=x) | mir.ArrangeBy(input=x) | mir.Negate(input=x) | mir.Threshold(input=x) | mir.FlatMap(input=x):
            return estimate(x, sizes, env)
        case mir.Reduce(input=x, group_key=k):
            return 1.0 if not k else estimate(x, sizes, env)
        case mir.TopK(input=x, group_key=g, limit=lim, offset=off):
            e = estimate(x, sizes, env)
            return min(e, float(lim + off)) if lim is not None and not g else e
        case mir.Union(inputs=xs):
            return sum(estimate(x, sizes, env) for x in xs)
        case mir.Join(inputs=xs):
            ests = [estimate(x, sizes, env) for x in xs]
            total = 1.0
            for comp in components(r):
                total *= max(ests[i] for i in comp)
            return total
        case mir.Let(id=i, value=v, body=b):
            return estimate(b, sizes, {**env, i: estimate(v, sizes, env)})
        case mir.LetRec(body=b):
            return estimate(b, sizes, env)
    raise AssertionError(r)


def _selectivity(p: Scalar) -> float:
    match p:
        case CallUnary(func="not", expr=CallUnary(func="is_null")):
            return 1.0
        case CallBinary(func="eq", expr1=a, expr2=b) if isinstance(a, Literal) or isinstance(b, Literal):
            return 0.1
        case CallBinary(func="like" | "ilike", expr2=Literal()):
            return 0.1  # a pattern (TPC-H q09's '%green%', q20's 'forest%') keeps few rows, as an equality
    return 0.5
