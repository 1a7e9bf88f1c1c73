"""Binding GROUP BY (plain, ROLLUP, CUBE, GROUPING SETS, DISTINCT) and GROUPING(...).

GROUP BY items become grouping keys (key indices) and a grouping specification, expanded
by sql.grouping_sets. As in PostgreSQL a key is identified by the select-list entry it
resolves to: an output name or ordinal names that entry, an expression names the first
entry equal to it (else itself), so `SELECT g AS x, g AS y ... GROUP BY x, ROLLUP(y)` has
two keys and `y` alone is NULL in the total row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from sqlglot import exp

from sql.bind_aggregates import _has_agg
from sql.bind_windows import _has_window
from sql.errors import GROUPING_ERROR, SYNTAX_ERROR, SqlError
from sql.grouping_sets import (
    Cube,
    GroupingSet,
    GroupItem,
    Rollup,
    Sets,
    Unit,
    expand_grouping,
    is_plain,
)
from sql.hir import HirScalar
from sql.scalar import Column
from sql.scope import Scope

if TYPE_CHECKING:
    from sql.bind import Binder

SelectItems = list[tuple[str, exp.Expression | None, int | None]]  # (name, expr, star column)


@dataclass
class GroupBy:
    keys: list[HirScalar]
    ties: dict[int, int]  # select item -> the key it is (named by an output name or ordinal)
    sets: list[GroupingSet] | None  # None: a plain GROUP BY (one set of every key)


def bind_group_by(binder: Binder, group: exp.Group | None, scope: Scope, items: SelectItems) -> GroupBy:
    """The keys and grouping sets of a GROUP BY clause (none: no keys, one empty set)."""
    entries: list[tuple[HirScalar, int | None]] = []  # (expression, select item it is)
    bound_items: dict[int, HirScalar | None] = {}

    def item_expr(j: int) -> HirScalar | None:
        if j not in bound_items:
            bound_items[j] = _bind_item(binder, items[j], scope)
        return bound_items[j]

    def key(g: exp.Expression) -> int:
        h, tie = _group_key(binder, g, scope, items)
        if tie is None:
            tie = next((j for j in range(len(items)) if item_expr(j) == h), None)
        for i, (kh, kt) in enumerate(entries):
            if (kt == tie and tie is not None) or (tie is None and kt is None and kh == h):
                return i
        entries.append((h, tie))
        return len(entries) - 1

    def unit(g: exp.Expression) -> Unit:
        return Unit(tuple(key(x) for x in _flatten_row(g)))

    def set_item(g: exp.Expression) -> GroupItem:
        if isinstance(g, exp.Rollup):
            return Rollup(tuple(unit(x) for x in g.expressions))
        if isinstance(g, exp.Cube):
            return Cube(tuple(unit(x) for x in g.expressions))
        if isinstance(g, exp.GroupingSets):
            return Sets(tuple(set_item(x) for x in g.expressions))
        return unit(g)

    group_items = tuple(set_item(g) for g in (group.expressions if group is not None else []))
    keys = [h for h, _ in entries]
    ties = {t: i for i, (_, t) in enumerate(entries) if t is not None}
    distinct = group is not None and group.args.get("all") is False
    sets = expand_grouping(group_items, distinct)
    return GroupBy(keys, ties, None if is_plain(sets, len(keys)) else sets)


def _flatten_row(g: exp.Expression) -> list[exp.Expression]:
    """The expressions of a grouping unit: `(a, (b, c))` is a, b, c (PostgreSQL flattens
    implicit row constructors in GROUP BY); `()` is none."""
    if isinstance(g, exp.Tuple):
        return [x for e in g.expressions for x in _flatten_row(e)]
    if isinstance(g, exp.Paren):
        return _flatten_row(g.this)
    if isinstance(g, (exp.Rollup, exp.Cube, exp.GroupingSets)):
        raise SqlError(SYNTAX_ERROR, f'syntax error at or near "{g.key.upper()}"')
    return [g]


def _bind_item(binder: Binder, item: tuple[str, exp.Expression | None, int | None], scope: Scope) -> HirScalar | None:
    """A select-list entry as a grouping expression would be (None when it cannot be one)."""
    _, e, star = item
    if e is None:
        return Column(cast(int, star), scope.columns[cast(int, star)].typ)
    if _has_agg(e) or _has_window(e) or next(e.find_all(exp.Subquery, exp.Exists, exp.Select), None) is not None:
        return None
    try:
        return binder.scalar(e, scope)
    except SqlError:
        return None


def _group_key(binder: Binder, g: exp.Expression, scope: Scope, items: SelectItems) -> tuple[HirScalar, int | None]:
    """A GROUP BY expression and the select item it names (by ordinal or output name)."""
    if isinstance(g, exp.Literal) and not g.is_string:
        k = int(g.this)
        if not 1 <= k <= len(items):
            raise SqlError("42P10", f"GROUP BY position {k} is not in select list")
        _, e, star = items[k - 1]
        h = Column(cast(int, star), scope.columns[cast(int, star)].typ) if e is None else binder.scalar(e, scope)
        return h, k - 1
    if isinstance(g, exp.Column) and not g.table:
        try:
            scope.lookup(g.name, None)
        except SqlError:
            for j, (n, e, _) in enumerate(items):
                if n == g.name and e is not None:
                    return binder.scalar(e, scope), j
            raise
    if _has_agg(g):
        raise SqlError(GROUPING_ERROR, "aggregate functions are not allowed in GROUP BY")
    return binder.scalar(g, scope), None

