"""The diff-weighted sum of an Accumulable reduce (compute.render.aggregates.accumulated_sum)."""

from __future__ import annotations

from compute.render.aggregates import accumulated_sum, weighted_sum
from sql.types import FLOAT8, INT4, NUMERIC, SqlType, numeric_typmod


def _num(p: int, s: int) -> SqlType:
    return SqlType("numeric", numeric_typmod(p, s))


def test_terms_of_a_short_scale_are_summed_in_their_own_scale() -> None:
    """sum(numeric(15,2)): no per-row rescale to the result's scale 10 (each term a decimal
    of scale 2, summed with 36 integer digits), one cast of the sum to decimal(38,10)."""
    got = accumulated_sum("c0", NUMERIC, _num(15, 2))
    assert got.count("decimal(38,10)") == 1
    assert got == ("CAST(SUM(CASE WHEN diff = 1 THEN CAST(c0 AS decimal(38,2)) ELSE CAST(c0 AS decimal(38,2)) * diff END)"
                   " AS decimal(38,10))")


def test_other_arguments_keep_the_rescaled_sum() -> None:
    """An unconstrained numeric argument (of unknown Spark scale, e.g. a product), a scale
    past the result's, or a non-numeric sum: each term in the result's type, as before."""
    for arg, t in [(NUMERIC, NUMERIC), (_num(30, 12), NUMERIC), (INT4, SqlType("int8")), (FLOAT8, FLOAT8)]:
        assert accumulated_sum("c0", t, arg) == weighted_sum("c0", t)
