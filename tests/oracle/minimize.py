"""Delta debugging on the query tree: greedily apply the reduction that keeps the failure,
largest reductions first, until none does (or the test budget is spent).

Reductions (each a pure rewrite of one node):
  list      drop one element (keeping `min_len`)
  optional  drop the clause
  node      replace by a child of the same type (an expression by a same-typed operand, a
            join by one of its sides, a set operation by one of its operands)
  expr      replace by a small literal of its type
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tests.oracle.ast import N, Path, leaf, replace_at, size, walk

SIMPLE = {
    "int": "1", "bigint": "1", "numeric": "1.5", "double precision": "1.5::float8", "text": "'a'",
    "boolean": "true", "date": "DATE '2024-01-15'", "timestamp": "TIMESTAMP '2024-01-15 10:30:00'",
    "interval": "INTERVAL '1 day'",
}


def candidates(tree: N, keep_root: bool) -> Iterator[N]:
    for path, node in walk(tree):
        yield from _reductions(tree, path, node, keep_root)


def _reductions(tree: N, path: Path, node: N, keep_root: bool) -> Iterator[N]:
    if node.kind == "list":
        if len(node.kids) > node.min_len:
            for i in range(len(node.kids)):
                yield replace_at(tree, (*path, i), None)
        return
    if node.kind == "opt":
        if node.kids:
            yield replace_at(tree, (*path, 0), None)
        return
    if node.kind == "leaf" or (keep_root and not path):
        return
    for k in node.kids:
        if k.ty == node.ty and k.kind != "opt":
            yield replace_at(tree, path, k)
    if node.ty is not None:
        for lit in (SIMPLE[node.ty], f"NULL::{node.ty}"):
            yield replace_at(tree, path, leaf(lit, node.ty))


def minimize(tree: N, fails: Callable[[N], bool], budget: int = 250, keep_root: bool = False) -> N:
    tests = 0
    seen: set[str] = {tree.render()}
    improved = True
    while improved and tests < budget:
        improved = False
        cands = sorted(candidates(tree, keep_root), key=size)
        for c in cands:
            text = c.render()
            if text in seen or size(c) >= size(tree):
                continue
            seen.add(text)
            tests += 1
            if fails(c):
                tree = c
                improved = True
                break
            if tests >= budget:
                break
    return tree
