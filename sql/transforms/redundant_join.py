"""Redundant join: joining a relation with the distinct values of its own columns adds nothing.

    Join(.., A, .., Distinct(group_by=[#k1..#kn])(A), ..) on A.#ki = B.#i (each i)
        = Project(.., A's columns, .., A.#k1 .. A.#kn, ..)(Join(.., A, .., ..))

when A has no negative rows (each row of A then meets exactly the one distinct row of its
own key; join equivalences are null-safe, so NULL keys meet too). The same holds when the
join reads a Filter of A (its rows are rows of A). A and B may be read through Let
bindings, and the Distinct may read A through a Project. The other equivalences that
mention B's columns are rewritten onto A's.

    Join(.., R, .., R, ..) on R.#k = R'.#k for each column of a unique key k of R
        = Project(.., R's columns, .., R's columns again, ..)(Join(.., R, .., ..))

when R has no negative rows: each row of R meets exactly itself in the other copy (what
decorrelation leaves when every FROM item of a subquery is crossed with the same outer
keys).
"""

from __future__ import annotations

from dataclasses import replace

from sql import mir
from sql.scalar import Column, Scalar, permute
from sql.transforms.analysis import non_negative, unique_keys
from sql.transforms.visit import map_children


def _distinct_of(b: mir.Mir, env: dict[str, mir.Mir]) -> tuple[mir.Mir, tuple[int, ...]] | None:
    """b = Distinct(group_by=cols)(a): (a, cols)."""
    while isinstance(b, mir.Get) and b.local and b.id in env:
        b = env[b.id]
    if not (isinstance(b, mir.Reduce) and not b.aggregates and all(isinstance(k, Column) for k in b.group_key)):
        return None
    cols = tuple(k.index for k in b.group_key)  # type: ignore[union-attr]
    a = b.input
    if isinstance(a, mir.Project):
        cols = tuple(a.outputs[c] for c in cols)
        a = a.input
    return a, cols


def _within(x: mir.Mir, a: mir.Mir, env: dict[str, mir.Mir]) -> bool:
    """x's rows are rows of a: x is a, a filter of a, or a Let binding of either."""
    while True:
        if x == a:
            return True
        if isinstance(x, mir.Filter):
            x = x.input
        elif isinstance(x, mir.Get) and x.local and x.id in env:
            x = env[x.id]
        else:
            return False


def redundant_join(r: mir.Mir, env: dict[str, mir.Mir] | None = None) -> mir.Mir:
    env = {} if env is None else env
    if isinstance(r, mir.Let):
        value = redundant_join(r.value, env)
        body = redundant_join(r.body, {**env, r.id: value})
        return r if value is r.value and body is r.body else mir.Let(r.id, value, body)
    r = map_children(r, lambda c: redundant_join(c, env))
    if not isinstance(r, mir.Join):
        return r
    same = _same_relation_on_key(r, env)
    if same is not None:
        return redundant_join(same, env)
    for j, b in enumerate(r.inputs):
        found = _distinct_of(b, env)
        if found is None:
            continue
        a, cols = found
        for i, x in enumerate(r.inputs):
            if i != j and _within(x, a, env) and non_negative(a, {k: non_negative(v) for k, v in env.items()}):
                out = _remove(r, i, j, cols)
                if out is not None:
                    return redundant_join(out, env)
    return r


def _same_relation_on_key(r: mir.Join, env: dict[str, mir.Mir]) -> mir.Mir | None:
    """The second identity: two equal inputs joined on a unique key of theirs."""
    xs = r.inputs
    pairs = [(i, j) for j in range(len(xs)) for i in range(j) if xs[i] == xs[j]]
    if not pairs:
        return None
    keys_env: dict = {}
    signs: dict[str, bool] = {}
    for k, v in env.items():
        keys_env[k] = unique_keys(v, keys_env)
        signs[k] = non_negative(v, signs)
    for i, j in pairs:
        if not non_negative(xs[j], signs):
            continue
        for key in unique_keys(xs[j], keys_env):
            out = _remove(r, i, j, tuple(range(mir.arity(xs[j]))), check=key)
            if out is not None:
                return out
    return None


def _remove(r: mir.Join, i: int, j: int, cols: tuple[int, ...], check: frozenset[int] | None = None) -> mir.Mir | None:
    """Join r without input j, whose column p is input i's column cols[p]; the columns p in
    `check` (default: all) must be equated with theirs."""
    xs = r.inputs
    offsets = [0]
    for x in xs:
        offsets.append(offsets[-1] + mir.arity(x))
    b_cols = {offsets[j] + p: offsets[i] + c for p, c in enumerate(cols)}
    classes = [set(cls) for cls in r.equivalences]
    for p, c in b_cols.items():
        if (check is None or p - offsets[j] in check) and not any(_has(cls, p) and _has(cls, c) for cls in classes):
            return None
    # renumber: B's columns become A's key columns, the rest close the gap
    new_pos: dict[int, int] = {}
    for c in range(offsets[-1]):
        if c < offsets[j]:
            new_pos[c] = c
        elif c >= offsets[j + 1]:
            new_pos[c] = c - (offsets[j + 1] - offsets[j])
    for p, c in b_cols.items():
        new_pos[p] = new_pos[c]
    eq: list[tuple[Scalar, ...]] = []
    for cls in r.equivalences:
        uniq = tuple(dict.fromkeys(permute(e, new_pos) for e in cls))
        if len(uniq) > 1:
            eq.append(uniq)
    ins = xs[:j] + xs[j + 1:]
    if len(ins) == 1 and eq:
        return None  # a one-input join would need its equivalences as null-safe filters
    inner: mir.Mir = ins[0] if len(ins) == 1 else replace(r, inputs=ins, equivalences=tuple(eq))
    return mir.Project(inner, tuple(new_pos[c] for c in range(offsets[-1])))


def _has(cls, c: int) -> bool:
    return any(isinstance(e, Column) and e.index == c for e in cls)
