"""compute.render.scalar: a disjunction's equalities of one expression with literals render as
one Spark IN list, (e = v1) OR .. OR (e = vn) = e IN (v1, .., vn); other disjuncts stay."""

from __future__ import annotations

from compute.render.scalar import render_scalar
from sql.scalar import CallBinary, CallUnary, CallVariadic, Column, Literal
from sql.types import BOOL, INT4, TEXT, SqlType


def _eq(a, b):  # type: ignore[no-untyped-def]
    return CallBinary("eq", a, b, BOOL)


def test_equalities_of_one_expression_become_one_in_list() -> None:
    up = CallUnary("upper", Column(1, TEXT), TEXT)
    e = CallVariadic("or", (_eq(up, Literal("A", TEXT)), _eq(Column(0, INT4), Literal(1, INT4)),
                            _eq(Literal("B", TEXT), up), _eq(up, Literal(None, TEXT))), BOOL)
    out = render_scalar(e, ["c0", "c1"])
    assert out.count("upper(c1)") == 1
    assert " IN (" in out
    assert out.index(" IN (") < out.index("(c0 = ")  # the list takes the first equality's place
    assert "(c0 = " in out and " OR " in out  # a lone equality stays as it was


def test_a_single_equality_or_other_comparisons_are_unchanged() -> None:
    e = CallVariadic("or", (_eq(Column(0, INT4), Literal(1, INT4)), CallBinary("lt", Column(0, INT4), Literal(0, INT4), BOOL)), BOOL)
    out = render_scalar(e, ["c0"])
    assert " IN (" not in out
    assert out == "((c0 = CAST(1 AS int)) OR (c0 < CAST(0 AS int)))"


def test_char_n_equalities_keep_their_own_comparison() -> None:
    bp = SqlType("bpchar", (5,))
    e = CallVariadic("or", (_eq(Column(0, bp), Literal("ab", bp)), _eq(Column(0, bp), Literal("cd", bp))), BOOL)
    assert " IN (" not in render_scalar(e, ["c0"])
