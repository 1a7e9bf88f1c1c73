"""numeric var_pop / var_samp / stddev_pop / stddev_samp as PostgreSQL computes them
(compute.render.numeric_stats; pure Python, no Spark). Expected values: PostgreSQL 15's
(tests/integration/test_aggregates_vs_postgres.py compares with a live PostgreSQL)."""

from __future__ import annotations

from decimal import Decimal as D

import pytest

from compute.render.numeric_stats import _udf, numeric_stat, select_div_scale

AGGTEST_B = [D("7.8"), D("99.097"), D("0.09561"), D("324.78")]
LARGE = [D(x) for x in (100000003, 100000004, 100000006, 100000007)]


@pytest.mark.parametrize(("values", "func", "expected"), [
    (AGGTEST_B, "var_pop", "17189.054065929769"),
    (AGGTEST_B, "var_samp", "22918.738754573025"),
    (AGGTEST_B, "stddev_pop", "131.107032862199"),
    (AGGTEST_B, "stddev_samp", "151.389361431288"),
    # no cancellation
    (LARGE, "var_pop", "2.5000000000000000"),
    (LARGE, "var_samp", "3.3333333333333333"),
    (LARGE, "stddev_samp", "1.8257418583505537"),
    ([D(1)], "var_pop", "0"),
    ([D(1), None], "var_samp", None),
    ([], "stddev_pop", None),
])
def test_numeric_statistics(values: list, func: str, expected: str | None) -> None:
    got = numeric_stat(values, func)
    assert (None if got is None else got.normalize()) == (None if expected is None else D(expected).normalize())


def test_select_div_scale() -> None:
    # at least 16 significant digits: 98 / 3 -> 16, 275024.86 / 16 -> 12, 1e20 / 4 -> 0
    assert select_div_scale(D(98), D(3), 0) == 16
    assert select_div_scale(D("275024.86"), D(16), 0) == 12
    assert select_div_scale(D("8e40"), D(4), 0) == 0
    assert select_div_scale(D("8e40"), D(4), 20) == 20  # not below the numerator's display scale


def test_result_that_does_not_fit_is_refused() -> None:
    """decimal(38, 24) holds the result or the query fails (0A000), never other digits."""
    assert _udf([D("1e20"), D("3e20")], "var_pop", False).startswith("\u0001[0A000] ")  # type: ignore[union-attr]
    assert _udf([D(1), D(2)], "stddev_samp", False) == "0.70710678118654752440"


# numeric.sql's num_data, a numeric(210,10) column: Postgres stores every value with scale 10,
# so the result scale is select_div_scale(.., 2 * 10) (was: 2 * the largest scale of the
# digits, 9, giving 18 fractional digits)
NUM_DATA = [D(x).quantize(D("1e-10")) for x in ("0", "0", "-34338492.215397047", "4.31", "7799461.4119", "16397.038491",
                                                  "93901.57763026", "-83028485", "74881", "-24926804.045047420")]


def test_typed_scale_is_the_display_scale() -> None:
    assert str(numeric_stat(NUM_DATA, "stddev_samp", typed_scale=True)) == "27791203.28758835329805617386"
    assert str(numeric_stat(NUM_DATA, "stddev_samp")) == "27791203.287588353298056174"
