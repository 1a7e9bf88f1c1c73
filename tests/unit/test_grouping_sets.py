"""Grouping-set expansion (sql.grouping_sets): PostgreSQL's rules, checked as multisets of
sets (the order of the sets does not change a query's result)."""

from __future__ import annotations

from collections import Counter

import pytest

from sql.errors import SqlError
from sql.grouping_sets import (
    Cube,
    Rollup,
    Sets,
    Unit,
    absent_mask,
    expand_grouping,
    grouping_value,
    is_plain,
)


def u(*keys: int) -> Unit:
    return Unit(keys)


def sets(*ss: tuple[int, ...]) -> Counter[frozenset[int]]:
    return Counter(frozenset(s) for s in ss)


def expand(*items, distinct: bool = False) -> Counter[frozenset[int]]:
    return Counter(expand_grouping(tuple(items), distinct))


def test_plain_group_by_is_one_set():
    got = expand_grouping((u(0), u(1)))
    assert got == [frozenset({0, 1})]
    assert is_plain(got, 2)


def test_empty_set():
    assert expand_grouping((u(),)) == [frozenset()]
    assert is_plain([frozenset()], 0)


def test_rollup():
    assert expand(Rollup((u(0), u(1), u(2)))) == sets((0, 1, 2), (0, 1), (0,), ())


def test_rollup_of_composite_units():
    # ROLLUP((a, b), c) = GROUPING SETS ((a, b, c), (a, b), ())
    assert expand(Rollup((u(0, 1), u(2)))) == sets((0, 1, 2), (0, 1), ())


def test_cube():
    assert expand(Cube((u(0), u(1)))) == sets((0, 1), (0,), (1,), ())
    assert sum(expand(Cube((u(0), u(1), u(2)))).values()) == 8


def test_cartesian_product_of_items():
    # GROUP BY a, ROLLUP(b, c) = GROUPING SETS ((a, b, c), (a, b), (a))
    assert expand(u(0), Rollup((u(1), u(2)))) == sets((0, 1, 2), (0, 1), (0,))
    # ROLLUP(a, b), GROUPING SETS (c, d): 3 x 2 sets
    assert expand(Rollup((u(0), u(1))), Sets((u(2), u(3)))) == sets(
        (0, 1, 2), (0, 1, 3), (0, 2), (0, 3), (2,), (3,))


def test_nested_grouping_sets_concatenate():
    # GROUPING SETS (a, GROUPING SETS (a, CUBE (b)))
    assert expand(Sets((u(0), Sets((u(0), Cube((u(1),))))))) == sets((0,), (0,), (1,), ())
    assert expand(Sets((u(), Sets((u(), Sets((u(),))))))) == sets((), (), ())


def test_duplicate_keys_within_a_set_collapse_but_sets_stay():
    # GROUPING SETS ((a, (a, b)), ...): a set is a set of keys
    assert expand(Sets((u(0, 0, 1),))) == sets((0, 1))
    # GROUP BY a, b, GROUPING SETS (a): still one set
    assert expand(u(0), u(1), Sets((u(0),))) == sets((0, 1))


def test_group_by_distinct_removes_duplicate_sets():
    # ROLLUP(a, b), ROLLUP(a, c): 9 sets, 6 distinct
    items = (Rollup((u(0), u(1))), Rollup((u(0), u(2))))
    assert sum(expand(*items).values()) == 9
    assert expand(*items, distinct=True) == sets((0, 1, 2), (0, 1), (0, 2), (0,), ())


def test_limits():
    with pytest.raises(SqlError) as e:
        expand_grouping((Cube(tuple(u(i) for i in range(13))),))
    assert e.value.sqlstate == "54011"
    with pytest.raises(SqlError) as e:
        expand_grouping(tuple(Rollup((u(i),)) for i in range(13)))
    assert e.value.sqlstate == "54001"


def test_grouping_value():
    # keys a=0, b=1; set (a): b absent -> mask 0b10
    m = absent_mask(frozenset({0}), 2)
    assert m == 2
    assert grouping_value((0, 1), m) == 1  # GROUPING(a, b): b not grouped -> 01
    assert grouping_value((1, 0), m) == 2  # GROUPING(b, a) -> 10
    assert grouping_value((0, 1), absent_mask(frozenset(), 2)) == 3
    assert grouping_value((0,), absent_mask(frozenset({0, 1}), 2)) == 0
