"""Shrinks a failing IVM oracle run: keep only the failing object (and the objects it reads) and
the writes up to the failing one, then drop writes, then initial rows, while the mismatch
persists (delta debugging over each list; every trial is a fresh run checked once, after its
last write)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from tests.ivm.program import Program, with_rows
from tests.ivm.runner import IvmOracle, Mismatch

T = TypeVar("T")


def ddmin(items: list[T], fails: Callable[[list[T]], bool], budget: list[int]) -> list[T]:
    """A smaller list for which `fails` still holds (chunks, then halving chunk sizes);
    `budget[0]` is the number of trials left, shared across calls."""
    n = 2
    while len(items) >= 1 and budget[0] > 0:
        size = max(1, len(items) // n)
        reduced = False
        for start in range(0, len(items), size):
            if budget[0] <= 0:
                break
            cand = items[:start] + items[start + size:]
            budget[0] -= 1
            if fails(cand):
                items, reduced = cand, True
                n = max(n - 1, 2)
                break
        if not reduced:
            if size == 1:
                break
            n = min(n * 2, len(items))
    return items


def minimize(oracle: IvmOracle, p: Program, m: Mismatch, budget: int = 40) -> Program | None:
    """The smallest program found that still shows `m`'s mismatch (same object, same side), or
    None when the mismatch does not reproduce on its own."""
    objects = p.objects if m.against == "write" else p.closure(m.obj.name)
    base = replace(p, objects=objects, writes=p.writes[:m.step])

    def fails(cand: Program) -> bool:
        found = oracle.run(cand, check_every=False)
        if m.against == "write":
            return any(f.against == "write" for f in found)
        return any(f.obj.name == m.obj.name and f.against == m.against for f in found)

    if not fails(base):
        return None
    left = [budget]
    writes = ddmin(list(base.writes), lambda ws: fails(replace(base, writes=tuple(ws))), left)
    base = replace(base, writes=tuple(writes))
    flat = [(t.name, r) for t in base.tables for r in t.rows]

    def rows_of(items: list[tuple[str, tuple[str, ...]]]) -> dict[str, tuple[tuple[str, ...], ...]]:
        return {t.name: tuple(r for name, r in items if name == t.name) for t in base.tables}

    flat = ddmin(flat, lambda items: fails(with_rows(base, rows_of(items))), left)
    return with_rows(base, rows_of(flat))
