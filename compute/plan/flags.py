"""PlanFlags: the session/system variables that steer planning (pipeline and refinements)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PlanFlags:
    """Session/system variables that steer planning."""

    enable_monotonic_oneshot_selects: bool = True
    enable_consolidate_after_union_negate: bool = True
    # refine_broadcast_lookups: join lookups of at most this many records are broadcast
    broadcast_join_threshold_rows: int = 100_000
