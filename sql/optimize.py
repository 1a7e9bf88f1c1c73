"""The MIR optimizer (DESIGN §4.2): pipelines are data, ordered tuples of named transforms,
each pipeline run to a fixpoint with a limit. Names and order mirror Materialize's:

1. logical: normalize lets, fusion, non-null requirements, predicate pushdown, projection pushdown, fold constants,
   fold letrec (closed recursions), reduce elision, threshold elision, union-negate fusion, literal lifting, redundant join;
2. the global dataflow pass has nothing to do here: views are inlined into the query when it
   is bound, so there is no cross-view demand or filter to push;
3. physical: JoinImplementation, CanonicalizeMfp, RelationCSE;
4. MonotonicFlag, given the ids of the append-only (monotonic) sources.

Semijoin idempotence and literal constraints (index lookups) are not implemented: there are
no index-lookup plans and decorrelation emits no repeated semijoins of one relation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

from sql import mir
from sql.transforms.canonicalize_mfp import canonicalize_mfp
from sql.transforms.fold_constants import fold_constants
from sql.transforms.fold_letrec import fold_letrec
from sql.transforms.fusion import fusion
from sql.transforms.join_implementation import Ranges, join_implementation
from sql.transforms.literal_lifting import literal_lifting
from sql.transforms.monotonic_flag import monotonic_flag
from sql.transforms.non_null_requirements import non_null_requirements
from sql.transforms.normalize_lets import normalize_lets
from sql.transforms.predicate_pushdown import predicate_pushdown
from sql.transforms.projection_pushdown import projection_pushdown
from sql.transforms.reduce_elision import reduce_elision
from sql.transforms.redundant_join import redundant_join
from sql.transforms.relation_cse import relation_cse
from sql.transforms.threshold_elision import threshold_elision
from sql.transforms.union_negate import union_negate

Transform = Callable[[mir.Mir], mir.Mir]

LOGICAL: tuple[Transform, ...] = (
    normalize_lets,
    fusion,
    non_null_requirements,
    predicate_pushdown,
    projection_pushdown,
    fold_constants,
    fold_letrec,
    reduce_elision,
    threshold_elision,
    union_negate,
    literal_lifting,
    redundant_join,
)
PHYSICAL: tuple[Transform, ...] = (join_implementation, canonicalize_mfp, relation_cse)
FIXPOINT_LIMIT = 100

TRANSFORMS: dict[str, Transform] = {t.__name__: t for t in LOGICAL + PHYSICAL + (monotonic_flag,)}
PIPELINES: dict[str, tuple[Transform, ...]] = {"logical": LOGICAL, "physical": PHYSICAL}


def fixpoint(r: mir.Mir, pipeline: tuple[Transform, ...], limit: int = FIXPOINT_LIMIT) -> mir.Mir:
    """Run the transforms in order, round after round, until every transform has seen the
    plan without changing it (at most `limit` rounds)."""
    unchanged = 0  # consecutive transforms that left the plan as it was
    for step in range(limit * len(pipeline)):
        new = pipeline[step % len(pipeline)](r)
        if new is r or new == r:
            unchanged += 1
            if unchanged == len(pipeline):
                return r
        else:
            r, unchanged = new, 0
    return r


def optimize(r: mir.Mir, pipeline: tuple[Transform, ...] | None = None, monotonic_sources: frozenset[str] = frozenset(),
             sizes: Mapping[str, int] | None = None, ranges: Ranges | None = None) -> mir.Mir:
    """The whole optimizer, or (with `pipeline`) just that pipeline to a fixpoint. `sizes`:
    the row counts of storage collections by id, where known, and `ranges` the (min, max) of
    their integer columns (JoinImplementation's inputs)."""
    if pipeline is not None:
        return fixpoint(r, pipeline)
    r = fixpoint(r, LOGICAL)
    physical = tuple(partial(t, sizes=sizes, ranges=ranges) if t is join_implementation else t for t in PHYSICAL)
    r = fixpoint(r, physical)
    return partial(monotonic_flag, sources=monotonic_sources)(r)
