"""The MIR optimizer pipeline: transforms as data, run to a fixpoint with a limit."""

from __future__ import annotations

from collections.abc import Callable

from sql import mir
from sql.transforms.fold_constants import fold_constants
from sql.transforms.fusion import fusion
from sql.transforms.normalize_lets import normalize_lets
from sql.transforms.predicate_pushdown import predicate_pushdown

Transform = Callable[[mir.Mir], mir.Mir]

LOGICAL: tuple[Transform, ...] = (normalize_lets, fusion, predicate_pushdown, fold_constants)
FIXPOINT_LIMIT = 100


def optimize(r: mir.Mir, pipeline: tuple[Transform, ...] = LOGICAL) -> mir.Mir:
    for _ in range(FIXPOINT_LIMIT):
        before = r
        for t in pipeline:
            r = t(r)
        if r == before:
            return r
    return r
