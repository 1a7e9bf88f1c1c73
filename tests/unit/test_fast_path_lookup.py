"""Fast-path lookups without Spark: which predicates pin an index key to literal tuples
(compute/plan/lookup.py), and Spark's xxhash64 of key literals computed in Python
(compute/render/key_hash.py; the expected values were computed by Spark 4's xxhash64)."""

from __future__ import annotations

import datetime

from compute.plan.lookup import MAX_LOOKUP_VALUES, conjunction
from compute.render.key_hash import python_key_hash, xxh64
from sql.scalar import CallBinary, CallUnary, CallVariadic, Column, Literal
from sql.types import SqlType

INT, BIG, TEXT, BOOL = SqlType("int4"), SqlType("int8"), SqlType("text"), SqlType("bool")
A, B, C = Column(0, INT), Column(1, BIG), Column(2, TEXT)


def eq(x, v):
    return CallBinary("eq", x, Literal(v, x.typ), BOOL)


def or_(*xs):
    return CallVariadic("or", tuple(xs), BOOL)


def and_(*xs):
    return CallVariadic("and", tuple(xs), BOOL)


def values(got):
    return sorted(tuple(a[i].value for i in sorted(a)) for a in got)


def test_equalities_in_lists_and_products() -> None:
    assert values(conjunction([eq(A, 5)], [A])) == [(5,)]
    assert values(conjunction([or_(eq(A, 1), eq(A, 3))], [A])) == [(1,), (3,)]
    assert values(conjunction([or_(eq(A, 1), eq(A, 2)), eq(B, 7)], [A, B])) == [(1, 7), (2, 7)]
    pairs = or_(and_(eq(A, 1), eq(B, 2)), and_(eq(A, 3), eq(B, 4)))
    assert values(conjunction([pairs], [A, B])) == [(1, 2), (3, 4)]
    # contradictions drop out; an IS NULL is a NULL key
    assert values(conjunction([eq(A, 1), eq(A, 2)], [A])) == []
    assert values(conjunction([CallUnary("is_null", A, BOOL), eq(B, 2)], [A, B])) == [(None, 2)]


def test_predicates_that_do_not_pin_the_key() -> None:
    # a disjunct that says nothing about the key: no lookup
    assert conjunction([or_(eq(A, 1), eq(C, "x"))], [A]) is None
    # other predicates are ignored (still applied on the looked-up rows)
    assert values(conjunction([eq(C, "x"), eq(A, 1)], [A])) == [(1,)]
    assert conjunction([CallBinary("lt", A, Literal(3, INT), BOOL)], [A]) is None
    # a literal of another type than the key (no implicit cast here): no lookup
    assert conjunction([CallBinary("eq", A, Literal(3, BIG), BOOL)], [A]) is None
    # too many tuples
    many = or_(*(eq(A, i) for i in range(MAX_LOOKUP_VALUES + 1)))
    assert conjunction([many], [A]) is None


def test_xxh64_reference_vectors() -> None:
    assert xxh64(b"", 0) == 0xEF46DB3751D8E999
    assert xxh64(b"a", 0) == 0xD24EC4F1A98C6E5B
    assert xxh64(b"abc", 0) == 0x44BC2CF5AD770999


def test_key_hashes_equal_sparks() -> None:
    T = SqlType
    assert python_key_hash([5], [T("int4")]) == -3058336155542811417
    assert python_key_hash([-7], [T("int2")]) == -709615038318037338
    assert python_key_hash([2**40], [T("int8")]) == -4936178133413471517
    assert python_key_hash(["héllo wörld, a longer string over thirty-two bytes!!"], [T("text")]) == 8019082408455239255
    assert python_key_hash([None, 3], [T("int4"), T("int8")]) == -4440708427157455453
    assert python_key_hash([True], [T("bool")]) == -6466280531935681048
    assert python_key_hash([datetime.date(2020, 2, 29)], [T("date")]) == -6211113028033630971
    assert python_key_hash([""], [T("text")]) == -12619086009337663
    assert python_key_hash([1.5], [T("float8")]) is None
