"""compute.render.frames: the frame predicates (pure; no Spark)."""

from __future__ import annotations

from compute.render import frames
from sql.scalar import (
    CURRENT_ROW,
    UNBOUNDED_FOLLOWING,
    UNBOUNDED_PRECEDING,
    ColumnOrder,
    WindowFrame,
)

C = frames.FrameRow("c.pos", "c.grp", "c.v", "c.lo", "c.hi")
R = frames.FrameRow("r.pos", "r.grp", "r.v")


def test_rows_offsets_and_exclusions() -> None:
    f = WindowFrame("rows", ("preceding", 2), ("following", 1), "ties")
    assert frames.in_frame(f, None, C, R) == "r.pos >= c.pos + (-2) AND r.pos <= c.pos + (1) AND (r.grp <> c.grp OR r.pos = c.pos)"


def test_groups_current_row_is_the_peer_group() -> None:
    f = WindowFrame("groups", CURRENT_ROW, ("following", 1), "group")
    assert frames.in_frame(f, ColumnOrder(0), C, R) == "r.grp >= c.grp AND r.grp <= c.grp + (1) AND r.grp <> c.grp"


def test_huge_offsets_are_clamped_to_stay_in_bigint() -> None:
    f = WindowFrame("rows", CURRENT_ROW, ("following", 2**63 - 1))
    assert frames.in_frame(f, None, C, R) == f"r.pos >= c.pos AND r.pos <= c.pos + ({2**32})"


def test_range_offsets_null_values_and_descending_order() -> None:
    asc_nulls_last = frames.in_frame(WindowFrame("range", ("preceding", None), UNBOUNDED_FOLLOWING), ColumnOrder(0), C, R)
    # a NULL current row has its NULL peers as the bound; NULL rows lie after the start
    assert asc_nulls_last == "(CASE WHEN c.v IS NULL THEN r.grp >= c.grp WHEN r.v IS NULL THEN TRUE ELSE r.v >= c.lo END)"
    desc_nulls_first = frames.in_frame(WindowFrame("range", UNBOUNDED_PRECEDING, ("following", None)),
                                       ColumnOrder(0, desc=True, nulls_last=False), C, R)
    assert desc_nulls_first == "(CASE WHEN c.v IS NULL THEN r.grp <= c.grp WHEN r.v IS NULL THEN TRUE ELSE r.v >= c.hi END)"


def test_spark_expresses_only_plain_rows_and_range_frames() -> None:
    assert frames.native(WindowFrame("rows", ("preceding", 1), CURRENT_ROW), (None, None))
    assert not frames.native(WindowFrame("rows", ("following", 2), ("following", 1)), (None, None))  # empty
    assert not frames.native(WindowFrame("groups", CURRENT_ROW, CURRENT_ROW), (None, None))
    assert not frames.native(WindowFrame("rows", CURRENT_ROW, CURRENT_ROW, "current_row"), (None, None))
    assert not frames.native(WindowFrame("range", ("preceding", None), CURRENT_ROW), (2, None))


def test_computed_rows_and_groups_offsets_are_read_from_the_row() -> None:
    # ROWS (expr) PRECEDING: the count in c.lo, NULL / negative refused when the query runs
    f = WindowFrame("rows", ("preceding", None), ("following", None))
    p = frames.in_frame(f, None, C, R)
    assert "r.pos >= c.pos - least(c.lo, 4294967296)" in p and "r.pos <= c.pos + least(c.hi, 4294967296)" in p
    assert "WHEN c.lo IS NULL THEN CAST(raise_error('[22004] frame starting offset must not be null') AS boolean)" in p
    assert "WHEN c.hi < 0 THEN CAST(raise_error('[22013] frame ending offset must not be negative') AS boolean)" in p
    g = frames.in_frame(WindowFrame("groups", ("preceding", None), CURRENT_ROW), ColumnOrder(0), C, R)
    assert "r.grp >= c.grp - least(c.lo, 4294967296)" in g and g.endswith("r.grp <= c.grp")
    assert not frames.native(f, (1, 2))
