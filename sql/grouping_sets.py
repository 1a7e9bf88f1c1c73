"""GROUP BY's grouping specification -> the list of grouping sets it denotes (PostgreSQL's
rules, parse_agg.c expand_grouping_sets), and the HIR that computes them.

Grouping expressions are numbered (key indices) by the binder; a grouping set is the
frozenset of the key indices it groups by. Everything here is pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from sql.errors import SqlError, unsupported
from sql.hir import HirRel, HMap, HProject, HReduce, HUnion
from sql.scalar import AggregateExpr, Literal
from sql.types import INT8, SqlType

GroupingSet = frozenset[int]

# PostgreSQL's limits (parse_agg.c, gram.y)
MAX_GROUPING_SETS = 4096
MAX_CUBE_ELEMENTS = 12
# Each grouping set is one Reduce over the input here: beyond this many, the plan would be
# unreasonably large, so such a query is refused (0A000) rather than run badly.
MAX_PLANNED_SETS = 256


@dataclass(frozen=True, slots=True)
class Unit:
    """A grouping expression or a parenthesized list of them (`()` is the empty set)."""

    keys: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Rollup:
    units: tuple[Unit, ...]


@dataclass(frozen=True, slots=True)
class Cube:
    units: tuple[Unit, ...]


@dataclass(frozen=True, slots=True)
class Sets:
    """GROUPING SETS (item, ...); the items may nest ROLLUP, CUBE and GROUPING SETS."""

    items: tuple[GroupItem, ...]


GroupItem = Unit | Rollup | Cube | Sets


def _union(units: tuple[Unit, ...] | list[Unit]) -> GroupingSet:
    return frozenset(k for u in units for k in u.keys)


def expand_rollup(units: tuple[Unit, ...]) -> list[GroupingSet]:
    """ROLLUP(u1, ..., un) = GROUPING SETS ((u1, ..., un), (u1, ..., un-1), ..., (u1), ())."""
    return [_union(units[:n]) for n in range(len(units), -1, -1)]


def expand_cube(units: tuple[Unit, ...]) -> list[GroupingSet]:
    """CUBE(u1, ..., un) = GROUPING SETS of all 2^n sublists of (u1, ..., un), largest first."""
    _check_cube(units)
    return [_union(list(c)) for n in range(len(units), -1, -1) for c in combinations(units, n)]


def _check_cube(units: tuple[Unit, ...]) -> None:
    if len(units) > MAX_CUBE_ELEMENTS:
        raise SqlError("54011", f"CUBE is limited to {MAX_CUBE_ELEMENTS} elements")


def expand_item(item: GroupItem) -> list[GroupingSet]:
    """The grouping sets of one GROUP BY item: a plain unit is the one set of its keys; a
    nested GROUPING SETS is the concatenation of its items' sets."""
    match item:
        case Unit(keys=ks):
            return [frozenset(ks)]
        case Rollup(units=us):
            return expand_rollup(us)
        case Cube(units=us):
            return expand_cube(us)
        case Sets(items=xs):
            return [s for x in xs for s in expand_item(x)]


def set_count(item: GroupItem) -> int:
    """How many grouping sets `item` expands to (without expanding it)."""
    match item:
        case Unit():
            return 1
        case Rollup(units=us):
            return len(us) + 1
        case Cube(units=us):
            _check_cube(us)
            return 2 ** len(us)
        case Sets(items=xs):
            return sum(set_count(x) for x in xs)


def expand_grouping(items: tuple[GroupItem, ...], distinct: bool = False) -> list[GroupingSet]:
    """GROUP BY i1, ..., in = GROUPING SETS of the cartesian product of the items' sets:
    {s1 ∪ ... ∪ sn | s1 ∈ sets(i1), ..., sn ∈ sets(in)}, as a list (duplicate sets kept,
    each giving its groups again); GROUP BY DISTINCT keeps the first of equal sets."""
    total = 1
    for it in items:
        total *= set_count(it)
        if total > MAX_GROUPING_SETS:
            raise SqlError("54001", f"too many grouping sets present (maximum {MAX_GROUPING_SETS})")
    result: list[GroupingSet] = [frozenset()]
    for it in items:
        result = [acc | s for acc in result for s in expand_item(it)]
    if distinct:
        result = list(dict.fromkeys(result))
    return result


def is_plain(sets: list[GroupingSet], nkeys: int) -> bool:
    """One set grouping by every key: an ordinary GROUP BY."""
    return len(sets) == 1 and sets[0] == frozenset(range(nkeys))


def absent_mask(s: GroupingSet, nkeys: int) -> int:
    """The set's id: bit i is set when key i is not grouped (NULL-padded) in it."""
    return sum(1 << i for i in range(nkeys) if i not in s)


def grouping_value(args: tuple[int, ...], mask: int) -> int:
    """GROUPING(a1, ..., an) in the set with `mask`: bit n-1-j is 1 when aj is not grouped."""
    v = 0
    for k in args:
        v = (v << 1) | ((mask >> k) & 1)
    return v


def grouping_sets_rel(inp: HirRel, positions: tuple[int, ...], key_types: tuple[SqlType, ...],
                      sets: list[GroupingSet], aggs: tuple[AggregateExpr, ...]) -> HirRel:
    """GROUP BY GROUPING SETS (S1, ..., Sm) over `inp` = ∪_i Pad_i(Reduce_{Si}(inp)), a
    UNION ALL where Pad_i lays each arm out as keys ++ [set id] ++ aggregates: the keys not
    in Si are NULL and the set id is absent_mask(Si) (GROUPING reads it). Key i groups by
    input column positions[i]; an empty Si is the ungrouped aggregate (one row, even over
    an empty input)."""
    if len(sets) > MAX_PLANNED_SETS:
        raise unsupported(f"GROUP BY with more than {MAX_PLANNED_SETS} grouping sets")
    n = len(key_types)
    arms: list[HirRel] = []
    for s in sets:
        cols = tuple(dict.fromkeys(positions[k] for k in sorted(s)))
        red = HReduce(inp, cols, aggs)
        width = len(cols) + len(aggs)
        absent = [k for k in range(n) if k not in s]
        pads = tuple(Literal(None, key_types[k]) for k in absent) + (Literal(absent_mask(s, n), INT8),)
        layout = tuple(cols.index(positions[k]) if k in s else width + absent.index(k) for k in range(n))
        arms.append(HProject(HMap(red, pads), (*layout, width + len(absent), *range(len(cols), width))))
    return arms[0] if len(arms) == 1 else HUnion(tuple(arms))
