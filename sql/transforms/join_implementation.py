"""JoinImplementation: choose how each Join is executed and which arrangements it reads.

    Join(xs, eq) = Join(xs, eq, type=differential, paths=(p,))     2 inputs (or fewer)
    Join(xs, eq) = Join(xs, eq, type=delta, paths=(p0, .., pn-1))  3 or more inputs

A differential (linear) join streams its first input and joins the running result with one
arrangement per further input; a delta join has one such path per input (each input's
changes meet every other input's arrangement), so it keeps no intermediate state. Paths are
greedy: the next input is the lowest-numbered one sharing an equivalence with the inputs
already joined (a cross product only when none does); its arrangement key is its side of
those equivalences. The LIR lowering maps differential -> Join::Linear, delta -> Join::Delta.
No ArrangeBy nodes are inserted: the renderer builds the arrangements the paths name.
"""

from __future__ import annotations

from dataclasses import replace

from sql import mir
from sql.scalar import Scalar, columns_used, permute
from sql.transforms.visit import map_children


def join_implementation(r: mir.Mir) -> mir.Mir:
    r = map_children(r, join_implementation)
    if not isinstance(r, mir.Join):
        return r
    kind = "delta" if len(r.inputs) > 2 else "differential"
    starts = range(len(r.inputs)) if kind == "delta" else range(1)
    paths = tuple(_path(r, s) for s in starts)
    if kind == r.implementation and paths == r.paths:
        return r
    return replace(r, implementation=kind, paths=paths)


def _path(r: mir.Join, start: int) -> tuple[tuple[int, tuple[Scalar, ...]], ...]:
    offsets = [0]
    for x in r.inputs:
        offsets.append(offsets[-1] + mir.arity(x))

    cols_owner = [i for i in range(len(r.inputs)) for _ in range(offsets[i], offsets[i + 1])]

    def owner(e: Scalar) -> int | None:
        owners = {cols_owner[c] for c in columns_used(e)}
        return owners.pop() if len(owners) == 1 else None

    done = {start}
    path: list[tuple[int, tuple[Scalar, ...]]] = [(start, ())]
    while len(done) < len(r.inputs):
        best: tuple[int, tuple[Scalar, ...]] | None = None
        for cand in sorted(set(range(len(r.inputs))) - done):
            key: list[Scalar] = []
            for cls in r.equivalences:
                mine = [e for e in cls if owner(e) == cand]
                theirs = [e for e in cls if owner(e) in done]
                if mine and theirs:
                    k = permute(mine[0], {c: c - offsets[cand] for c in columns_used(mine[0])})
                    if k not in key:
                        key.append(k)
            if key:
                best = (cand, tuple(key))
                break
        if best is None:
            best = (min(set(range(len(r.inputs))) - done), ())
        path.append(best)
        done.add(best[0])
    return tuple(path)
