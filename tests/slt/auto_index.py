"""`--auto-index-selects` (Materialize's sqllogictest mode): a `query` record whose SQL is a
SELECT is run a second time through an indexed view and must give the expected output there
too:

    CREATE VIEW v (a1, …, an) AS <the query, unchanged>   -- columns renamed when n is known
    CREATE DEFAULT INDEX ON v
    SELECT * FROM v [ORDER BY <the query's ORDER BY as output positions>]
    DROP VIEW v                                           -- its index goes with it

As in Materialize's runner (`generate_view_sql`): the view keeps the query's ORDER BY / LIMIT
(a LIMIT is part of the view's rows; the ORDER BY alone orders nothing in a view), so the outer
SELECT re-imposes the order: each ORDER BY item that is a position or matches an output
expression (or an output alias) becomes that position; at the first item that matches nothing
the derived ORDER BY stops (a prefix). The record's sort mode then applies as usual, so only a
`nosort` record whose ORDER BY cannot be derived can see rows in another order. Output columns
are renamed a1 … an (one-shot SELECTs may repeat a column name, a view may not): by the
projection when it has no `*`, else by the record's column count (one deviation from
Materialize, whose views of `SELECT * FROM t, t AS u` fail with 42701)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlglot import exp

from sql.parse import parse_sql


@dataclass(frozen=True)
class ViewSql:
    create_view: str
    create_index: str
    select: str
    drop: str


def _parse(sql: str) -> exp.Expression | None:
    try:
        return parse_sql(sql)
    except Exception:  # noqa: BLE001 - not parseable: not a SELECT for this mode
        return None


def is_select(sql: str) -> bool:
    node = _parse(sql.strip().rstrip(";"))
    return isinstance(node, exp.Query) and not isinstance(node, exp.Values) if node is not None else False


def _projection(node: exp.Expression) -> list[exp.Expression] | None:
    """The select list of the query's leftmost SELECT (None for VALUES and the like)."""
    while True:
        match node:
            case exp.Select():
                return list(node.expressions)
            case exp.SetOperation():
                node = node.this
            case exp.Subquery():
                node = node.this
            case _:
                return None


def _is_star(e: exp.Expression) -> bool:
    return isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))


def num_attributes(node: exp.Expression) -> int | None:
    proj = _projection(node)
    if proj is None or any(_is_star(e) for e in proj):
        return None
    return len(proj)


def derived_order_by(node: exp.Expression) -> list[str]:
    """The query's top-level ORDER BY as output positions (a prefix, see the module doc)."""
    order = node.args.get("order")
    if order is None and isinstance(node, exp.Subquery):
        order = node.this.args.get("order") if isinstance(node.this, exp.Query) else None
    proj = _projection(node)
    if order is None or proj is None:
        return []
    out: list[str] = []
    for item in order.expressions:
        e = item.this
        if isinstance(e, exp.Literal) and not e.is_string:
            pos = exp.Literal.number(e.this)
        else:
            pos = None
            for i, p in enumerate(proj):
                inner = p.this if isinstance(p, exp.Alias) else p
                if inner == e or (isinstance(p, exp.Alias) and isinstance(e, exp.Column) and not e.table
                                  and e.name == p.alias):
                    pos = exp.Literal.number(i + 1)
                    break
            if pos is None:
                break
        positional = item.copy()
        positional.set("this", pos)
        out.append(positional.sql(dialect="postgres"))
    return out


def view_sql(sql: str, name: str | None = None, ncols: int | None = None) -> ViewSql | None:
    """The statements that run `sql` through an indexed view; None when it is not a SELECT.
    `ncols` (the record's column count) names the columns of a `SELECT *` too, where
    Materialize's runner leaves them (so `SELECT * FROM t, t AS u` fails there with 42701)."""
    text = sql.strip().rstrip(";").strip()
    node = _parse(text)
    if not isinstance(node, exp.Query) or isinstance(node, exp.Values):
        return None
    name = name or f"v{uuid.uuid4().hex}"
    n = num_attributes(node) or ncols
    cols = f" ({', '.join(f'a{i + 1}' for i in range(n))})" if n else ""
    order = derived_order_by(node)
    select = f"SELECT * FROM {name}" + (f" ORDER BY {', '.join(order)}" if order else "")
    return ViewSql(f"CREATE VIEW {name}{cols} AS {text}", f"CREATE DEFAULT INDEX ON {name}", select,
                   f"DROP VIEW IF EXISTS {name}")
