"""`mz_introspection.mz_lir_mapping` rows of a dataflow, and its node tree.

The rows are read off `EXPLAIN PHYSICAL PLAN WITH (node_ids)` of the same dataflow, so
ids and operator text are equal by construction: one row per annotated line, `operator` =
the line without its indentation and annotation, `parent_lir_id` = the nearest annotated
line above it that is indented less, `nesting` = its depth below the root (0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from compute.plan import lir
from compute.plan.explain import explain_dataflow

_ANN = re.compile(r"^(?P<pad> *)(?P<op>.*?) // \{ node_id: (?P<id>\d+) \}$")


@dataclass(frozen=True, slots=True)
class LirRow:
    lir_id: int
    operator: str
    parent_lir_id: int | None
    nesting: int


def lir_mapping(df: lir.Dataflow) -> tuple[LirRow, ...]:
    rows: list[LirRow] = []
    stack: list[tuple[int, int]] = []  # (indent, lir id) of the annotated lines above
    for line in explain_dataflow(df, node_ids=True).splitlines():
        m = _ANN.match(line)
        if m is None:
            continue
        indent = len(m["pad"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else None
        rows.append(LirRow(int(m["id"]), m["op"], parent, len(stack)))
        stack.append((indent, int(m["id"])))
    return tuple(rows)


def parents(df: lir.Dataflow) -> dict[int, int | None]:
    """Every node id of the dataflow -> its parent's (None for the root)."""
    return {r.lir_id: r.parent_lir_id for r in lir_mapping(df)}
