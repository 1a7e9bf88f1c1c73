"""LIR refinements run by finalize_dataflow, in DESIGN §4.3's order (one module each)."""

from __future__ import annotations

from collections.abc import Callable

from compute.plan import lir
from compute.plan.flags import PlanFlags
from compute.plan.refinements.refine_broadcast_lookups import refine_broadcast_lookups
from compute.plan.refinements.refine_single_time_consolidation import (
    refine_single_time_consolidation,
)
from compute.plan.refinements.refine_single_time_operator_selection import (
    refine_single_time_operator_selection,
)
from compute.plan.refinements.refine_source_mfps import refine_source_mfps
from compute.plan.refinements.refine_union_negate_consolidation import (
    refine_union_negate_consolidation,
)

Refinement = Callable[[lir.Dataflow, PlanFlags], lir.Dataflow]

REFINEMENTS: tuple[Refinement, ...] = (
    refine_source_mfps,
    refine_union_negate_consolidation,
    refine_single_time_operator_selection,
    refine_single_time_consolidation,
    refine_broadcast_lookups,
)
