"""Dataflow expiration (DESIGN §7; Materialize's `compute_replica_expiration_offset`).

The replica (the controller's set of dataflows and their Spark state) expires at
`started + offset` (offset 0: never). A dataflow's expiration is

- none when it has no table / source input (its results do not follow the wall clock) or
  its inputs' upper is empty (they will never change);
- its inputs' upper, when that is already beyond the replica's expiration;
- else the replica's expiration;

and its `until` becomes min(until, expiration): the temporal filters drop every update at a
time >= until instead of storing it (a retraction 30 days ahead is never held by a replica
that lives one day). Its frontier must then never pass the expiration — its output at later
times would be missing those updates — so before any dataflow would step to a time >=
its expiration, the replica restarts: every dataflow is rebuilt from its inputs with an
expiration computed from the new start (`Controller._restart_replica`); reads at later times
wait for that.
"""

from __future__ import annotations

from dataclasses import dataclass


def dataflow_expiration(replica_expiration: int | None, has_inputs: bool, inputs_upper: int | None) -> int | None:
    """The expiration of a dataflow hydrated now (see the module docstring)."""
    if replica_expiration is None or not has_inputs or inputs_upper is None:
        return None
    return max(replica_expiration, inputs_upper)


def merged_until(until: int | None, expiration: int | None) -> int | None:
    """until = min(until, expiration) (None: unbounded)."""
    if until is None:
        return expiration
    if expiration is None:
        return until
    return min(until, expiration)


@dataclass
class Replica:
    """When the replica (re)started (ms), and how often it restarted."""

    started: int
    restarts: int = 0

    def expiration(self, offset: int) -> int | None:
        """started + offset; None when the offset is 0 (off). The offset is the system
        variable's value when a dataflow hydrates (ALTER SYSTEM SET applies to dataflows
        installed or rehydrated after it)."""
        return self.started + offset if offset > 0 else None

    def restart(self, now: int) -> None:
        self.started = now
        self.restarts += 1
