"""Results SQL leaves open, compared fairly (pure; the runner supplies PostgreSQL's extra runs).

Two cases where PostgreSQL's answer is one of several correct ones:

- **order among peers**: a window function over rows tied on its ORDER BY (`row_number`,
  `first_value`, `lead`, a ROWS frame, …), a window without ORDER BY, a top-level ORDER BY
  on expressions: the answer depends on the order in which the rows reach the sort, which
  SQL leaves open (tables are sets). The runner re-runs the statement on PostgreSQL with
  each table it scans shadowed by a copy in another physical order (`variants`). If one of
  those results equals mzspark's, PostgreSQL itself gives that answer for the same data:
  `same`. If PostgreSQL's own results differ among themselves, the statement's answer is
  open; the columns whose values (as a multiset) are the same in all of PostgreSQL's results
  must still agree, projected row by row, and every value in the other columns must be one
  PostgreSQL's results contain (`na` when so, else it stays `different`).
  When PostgreSQL's results do not change, nothing is decided here. The statement is also
  run with the ORDER BY of its subqueries removed where no LIMIT / OFFSET gives it a meaning
  (`without_inner_order`; not in ARRAY(..)): SQL leaves the order of a derived table's rows
  open and Materialize documents that it ignores such an ORDER BY, where PostgreSQL's
  executor happens to keep it for the outer query.
- **LIMIT / OFFSET without a top-level ORDER BY**: any N rows of the full result are correct.
  The runner runs the statement without its LIMIT / OFFSET on PostgreSQL (`without_limit`);
  mzspark's rows must be as many as PostgreSQL's and a sub-multiset of the full result.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from tests.pg_regress.classify import (
    Cls,
    Outcome,
    Verdict,
    _scan_depth0,
    classify,
    compare_rows,
    numeric_columns,
    order_by_keys,
    peer_runs,
    trimmed,
)

PEER_ORDER_NA = "result depends on the order of rows among peers (PostgreSQL's own result changes when its input rows are permuted); the columns it keeps fixed agree"
PEER_ORDER_SAME = "PostgreSQL gives this result with its input rows permuted"
LIMIT_SAME = "LIMIT without ORDER BY: as many rows as PostgreSQL's, all from the full result"

_QUERY_START = ("select", "with", "values", "table")
_WRITES = re.compile(r"\b(insert|update|delete|merge|nextval|setval)\b", re.I)


def is_query(sql: str) -> bool:
    """A plain query (no data-modifying CTE, no SELECT INTO) whose rows can be recomputed."""
    words = [w for _, w in _scan_depth0(sql.lstrip().lstrip("("))]
    if not words or words[0] not in _QUERY_START:
        return False
    return not _WRITES.search(sql) and "into" not in words


def peer_order_verdict(sql: str, pg: Outcome, mz: Outcome, variants: list[Outcome]) -> Verdict | None:
    """The verdict on a statement whose results differ, given PostgreSQL's results with its
    input rows permuted (see the module doc); None when they do not show the answer open."""
    alts = [v for v in variants if v.ok and v.has_rows and v.columns == pg.columns]
    if not pg.ok or not mz.ok or not alts:
        return None
    for v in alts:
        if classify(sql, v, mz).cls in (Cls.SAME, Cls.DOCUMENTED):
            return Verdict(Cls.SAME, PEER_ORDER_SAME)
    if all(compare_rows(sql, pg, v) is None for v in alts):
        return None  # PostgreSQL's answer did not move: a real difference
    if len(mz.columns) != len(pg.columns) or len(mz.rows) != len(pg.rows):
        return None
    num = numeric_columns(pg)
    results = [trimmed(o, num) for o in (pg, *alts)]
    fixed = [i for i in range(len(pg.columns))
             if all(Counter(r[i] for r in o.rows) == Counter(r[i] for r in results[0].rows) for o in results[1:])]

    def project(o: Outcome) -> Counter:
        return Counter(tuple(r[i] for i in fixed) for r in o.rows)

    mz_t = trimmed(mz, num)
    if project(mz_t) != project(results[0]):
        return None
    # an open column's values must be ones PostgreSQL's results contain (no invented value)
    seen = {v for o in results for r in o.rows for v in r}
    for i in range(len(pg.columns)):
        if i not in fixed and {r[i] for r in mz_t.rows} - seen:
            return None
    return Verdict(Cls.NA, PEER_ORDER_NA, {"fixed_columns": [pg.columns[i] for i in fixed]})


def _parse(sql: str) -> Any:
    import sqlglot

    try:
        return sqlglot.parse_one(sql, read="postgres")
    except sqlglot.errors.SqlglotError:
        return None


def round_trip(sql: str) -> str | None:
    """The statement as sqlglot prints it back, unchanged otherwise: the rewritten forms
    below are used only when this one gives PostgreSQL's own result (the printing kept the
    statement's meaning)."""
    tree = _parse(sql)
    return None if tree is None else tree.sql(dialect="postgres")


def without_inner_order(sql: str) -> str | None:
    """The statement with the ORDER BY of every subquery / CTE that has no LIMIT / OFFSET /
    FETCH removed (an ARRAY(..) subquery's order is its elements' and stays); None when
    there is none or the statement does not parse."""
    from sqlglot import exp

    tree = _parse(sql)
    if tree is None:
        return None
    changed = False
    for q in list(tree.find_all(exp.Select, exp.Union)):
        if q is tree or not q.args.get("order") or q.args.get("limit") or q.args.get("offset"):
            continue
        if q.find_ancestor(exp.Array) is not None or isinstance(q.parent, exp.Array):
            continue
        q.set("order", None)
        changed = True
    return tree.sql(dialect="postgres") if changed else None


def reversed_unions(sql: str) -> str | None:
    """The statement with the operands of every UNION ALL chain in reverse order (a bag
    union is commutative), after an empty copy of the first operand (`LIMIT 0`) that keeps
    the union's column names and types; an ORDER BY / LIMIT of the whole union stays. The
    rows reach the operators above in another order. None when there is no such chain."""
    from sqlglot import exp

    tree = _parse(sql)
    if tree is None:
        return None

    def operands(u: exp.Expression) -> list[exp.Expression]:
        if isinstance(u, exp.Union) and u.args.get("distinct") is False and not any(
                u.args.get(k) for k in ("order", "limit", "offset", "with", "by_name")):
            return operands(u.this) + operands(u.expression)
        return [u]

    changed = False
    for u in list(tree.find_all(exp.Union)):
        if not isinstance(u, exp.Union) or u.args.get("distinct") is not False or isinstance(u.parent, exp.Union):
            continue
        parts = operands(u.this) + operands(u.expression)
        if not isinstance(parts[0], exp.Select) or parts[0].args.get("limit") or parts[0].args.get("offset"):
            continue
        chain: exp.Expression = exp.Subquery(this=parts[0].copy().limit(0))
        for p in reversed(parts):
            chain = exp.Union(this=chain, expression=p.copy(), distinct=False)
        for k in ("order", "limit", "offset"):
            if u.args.get(k) is not None:
                chain.set(k, u.args[k])
        if u is tree:
            tree = chain
        else:
            u.replace(chain)
        changed = True
    return tree.sql(dialect="postgres") if changed else None


_LIMIT_WORDS = ("limit", "offset", "fetch")


def without_limit(sql: str) -> str | None:
    """The statement without its top-level LIMIT / OFFSET / FETCH, when it has one and no
    top-level ORDER BY (which rows it returns is then open); else None."""
    if not is_query(sql) or order_by_keys(sql) is not None:
        return None
    body = sql.rstrip().rstrip(";")
    cut = [pos for pos, w in _scan_depth0(body) if w in _LIMIT_WORDS]
    return body[: cut[0]].rstrip() if cut else None


def limit_verdict(pg: Outcome, mz: Outcome, full: Outcome) -> Verdict | None:
    """`same` when mzspark's rows are as many as PostgreSQL's and all from PostgreSQL's full
    (unlimited) result, counted with multiplicity; None otherwise."""
    if not (pg.ok and mz.ok and full.ok and pg.has_rows and mz.has_rows and full.has_rows):
        return None
    if len(mz.columns) != len(pg.columns) or len(mz.rows) != len(pg.rows):
        return None
    if Counter(mz.rows) - Counter(full.rows):
        return None
    return Verdict(Cls.SAME, LIMIT_SAME)


PEER_GROUP_SAME = "ties on the ORDER BY keys (computed by PostgreSQL) hold the same rows, in another order"


@dataclass(frozen=True)
class KeyedOrder:
    """The statement with its ORDER BY keys appended to the select list (`sql`, no LIMIT /
    OFFSET), the number of original output columns, the output column each key repeats
    (or None: an appended column), and the LIMIT / OFFSET window."""

    sql: str
    width: int
    key_columns: tuple[int | None, ...]
    offset: int
    limit: int | None


def with_order_keys(sql: str) -> KeyedOrder | None:
    """For `SELECT items FROM … ORDER BY k1, … [LIMIT n] [OFFSET o]` (one SELECT, no set
    operation, no `*`): `SELECT items, k1 AS __pk0, … FROM … ORDER BY k1, …` so PostgreSQL
    computes every row's sort key. An ordinal or an output alias key names an output column
    instead. None when the statement is not of that form."""
    from sqlglot import exp

    tree = _parse(sql)
    if not isinstance(tree, exp.Select) or not tree.args.get("order") or tree.args.get("with"):
        return None
    items = tree.expressions
    if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star)) for e in items):
        return None
    aliases = {e.alias_or_name.lower(): i for i, e in enumerate(items) if e.alias_or_name}

    def literal_int(x: Any) -> int | None:
        node = x.args.get("expression") if x is not None else None
        if x is None:
            return None
        if isinstance(node, exp.Literal) and node.is_int:
            return int(node.this)
        return -1

    limit, offset = literal_int(tree.args.get("limit")), literal_int(tree.args.get("offset"))
    if limit == -1 or offset == -1 or tree.args.get("fetch") is not None:
        return None
    keyed = tree.copy()
    keyed.set("limit", None)
    keyed.set("offset", None)
    cols: list[int | None] = []
    extra = 0
    for o in tree.args["order"].expressions:
        k = o.this
        if isinstance(k, exp.Literal) and k.is_int and 1 <= int(k.this) <= len(items):
            cols.append(int(k.this) - 1)
        elif isinstance(k, exp.Column) and not k.table and k.name.lower() in aliases:
            cols.append(aliases[k.name.lower()])
        else:
            keyed.append("expressions", exp.alias_(k.copy(), f"__pk{extra}"))
            cols.append(None)
            extra += 1
    return KeyedOrder(keyed.sql(dialect="postgres"), len(items), tuple(cols), offset or 0, limit)


def peer_group_verdict(pg: Outcome, mz: Outcome, keyed: KeyedOrder, full: Outcome) -> Verdict | None:
    """`same` when mzspark's rows, position by position, fall into PostgreSQL's peer groups
    (rows with equal ORDER BY keys, in PostgreSQL's sorted full result `full`) as PostgreSQL's
    own rows do: for every group the LIMIT / OFFSET window cuts, mzspark's rows at those
    positions are a sub-multiset of the group's rows, of the same size. Any order among peers
    (and any choice among the peers a LIMIT cuts) is a correct answer."""
    if not (pg.ok and mz.ok and full.ok and pg.has_rows and mz.has_rows and full.has_rows):
        return None
    if len(mz.columns) != keyed.width or len(mz.rows) != len(pg.rows):
        return None
    num = [i for i in numeric_columns(full) if i < keyed.width]
    rows = trimmed(full, numeric_columns(full)).rows
    mz_rows = trimmed(mz, num).rows
    extra = iter(range(keyed.width, keyed.width + sum(c is None for c in keyed.key_columns)))
    key_idx = [c if c is not None else next(extra) for c in keyed.key_columns]
    if any(i >= len(full.columns) for i in key_idx):
        return None
    end = len(rows) if keyed.limit is None else min(len(rows), keyed.offset + keyed.limit)
    if end - keyed.offset != len(mz_rows) and not (end <= keyed.offset and not mz_rows):
        return None
    for start, stop in peer_runs(rows, key_idx):
        lo, hi = max(start, keyed.offset), min(stop, end)
        if lo < hi:
            group = Counter(r[: keyed.width] for r in rows[start:stop])
            if Counter(mz_rows[lo - keyed.offset: hi - keyed.offset]) - group:
                return None
    return Verdict(Cls.SAME, PEER_GROUP_SAME)
