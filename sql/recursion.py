"""The iteration of recursive bindings (MIR/LIR LetRec) as Materialize runs it, independent of
what evaluates a binding: the renderer (compute/render/letrec.py, Spark jobs) and the planner's
constant folding of closed recursions (sql/transforms/fold_letrec.py) share it, so both stop,
return and fail at the same iteration."""

from __future__ import annotations

from collections.abc import Callable

from sql.errors import INTERNAL_ERROR, PROGRAM_LIMIT_EXCEEDED, SqlError
from sql.mir import RecursionLimit

# iterations of a WITH MUTUALLY RECURSIVE block without a recursion limit before we give up
MAX_ITERATIONS = 10_000


def limit_exceeded(limit: int) -> SqlError:
    """Materialize's error for a binding still changing at its ERROR AT RECURSION LIMIT."""
    return SqlError(
        INTERNAL_ERROR,
        f"Evaluation error: Recursive query exceeded the recursion limit {limit}. (Use RETURN AT RECURSION LIMIT "
        "to not error, but return the current state as the final result when reaching the limit.)",
    )


def no_fixpoint(max_iterations: int) -> SqlError:
    """Our error for a recursion without a limit that is still changing after `max_iterations`."""
    return SqlError(
        PROGRAM_LIMIT_EXCEEDED,
        f"WITH MUTUALLY RECURSIVE did not reach a fixpoint within {max_iterations} iterations",
        hint="Add RETURN AT RECURSION LIMIT or ERROR AT RECURSION LIMIT to bound the iteration.",
    )


def fixpoint(limits: tuple[RecursionLimit | None, ...], reads: tuple[frozenset[int], ...],
             step: Callable[[int], bool], check_interrupt: Callable[[], None] = lambda: None,
             max_iterations: int = MAX_ITERATIONS, enough: Callable[[], bool] = lambda: False) -> int:
    """Iterate recursive bindings 0..n-1 as Materialize does; returns the iterations run.

    All bindings start empty. An iteration re-evaluates the bindings in order, `step(k)`
    replacing binding k's value by its value over the latest values (this iteration's for
    bindings before k, the previous iteration's for k and those after) and returning whether
    it changed. Iterations stop at the first one that changes nothing, or after one at which
    `enough()` holds. A binding whose inputs
    (`reads`: the bindings its value reads) are unchanged since its last evaluation is not
    re-evaluated: it cannot change. At a binding's limit n (evaluation n): RETURN AT keeps the
    value of n evaluations (no further evaluation); ERROR AT fails if evaluation n (or a later
    one) still changes it. Without a limit, more than `max_iterations` iterations fail.
    """
    n = len(limits)
    version = [0] * n  # changes of each binding so far
    seen: list[tuple[int, ...] | None] = [None] * n  # versions of its inputs at its last evaluation
    frozen = [False] * n
    iteration = 0
    while True:
        iteration += 1
        changed_any = False
        for k in range(n):
            if frozen[k]:
                continue
            inputs = tuple(version[j] for j in sorted(reads[k]))
            if inputs != seen[k]:
                check_interrupt()
                seen[k] = inputs
                if step(k):
                    version[k] += 1
                    changed_any = True
                    lim = limits[k]
                    if lim is not None and iteration >= lim.max_iters and not lim.return_at_limit:
                        raise limit_exceeded(lim.max_iters)
            lim = limits[k]
            if lim is not None and lim.return_at_limit and iteration >= lim.max_iters:
                frozen[k] = True
        if not changed_any or all(frozen) or enough():
            return iteration
        if iteration >= max_iterations and any(lim is None for lim in limits):
            raise no_fixpoint(max_iterations)
