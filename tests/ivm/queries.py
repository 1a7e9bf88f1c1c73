"""Random maintained queries for the IVM oracle, one family per construct the maintained
renderer must get right: inner / LEFT / FULL joins, every aggregate kind, DISTINCT, DISTINCT ON,
per-group TopK (LATERAL … ORDER BY … LIMIT and `row_number() <= k`), LIMIT / OFFSET, set
operations, window functions, correlated subqueries, WITH MUTUALLY RECURSIVE, table functions
and queries over earlier maintained objects.

Every query's result is a function of the data as a multiset (no LIMIT without an ORDER BY over
every output column, ordered aggregates ordered by their own argument, window values that do
not depend on the order of peers), so any difference from PostgreSQL is a bug, not a tie.
`pg_sql` is the same query in PostgreSQL's dialect (WITH RECURSIVE for a single recursive
binding), or None where PostgreSQL has no equivalent (mutual recursion): such objects are
compared with mzspark's one-shot SELECT only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tests.ivm.choose import Chooser
from tests.oracle.schema import Column, Table

NUMERIC = ("int", "bigint", "numeric")
ORDERED = ("int", "bigint", "numeric", "text", "date")
ARRAYABLE = ("int", "bigint", "text", "date")   # array text has no numeric tolerance


@dataclass(frozen=True)
class Def:
    family: str
    sql: str                  # mzspark's definition
    pg_sql: str | None        # PostgreSQL's (None: no equivalent)
    ncols: int
    deps: tuple[str, ...] = ()  # earlier objects it reads


@dataclass(frozen=True)
class Prev:
    """An earlier maintained object a query may read (its columns are c1 … c<ncols>)."""
    name: str
    ncols: int


def _cols(t: Table, tys: tuple[str, ...]) -> list[Column]:
    return [col for col in t.columns if col.ty in tys]


def _col(c: Chooser, t: Table, tys: tuple[str, ...]) -> Column:
    return c.choice(_cols(t, tys) or _cols(t, ("int",)))


_TEXTS = ("'a'", "'b'", "''")


def _pred(c: Chooser, a: str, t: Table) -> str:
    col = c.choice(t.columns)
    match c.randint(0, 5):
        case 0:
            return f"{a}.i0 > {c.choice(('0', '1', '2'))}"
        case 1:
            return f"{a}.s0 <> {c.choice(_TEXTS)}"
        case 2:
            return f"{a}.{col.name} IS NOT NULL"
        case 3:
            return f"{a}.i0 IN (1, 2, 3, -1)"
        case 4:
            return f"({a}.i0 < 4 OR {a}.s0 IS NULL)"
    return "true"


def _two(c: Chooser, tables: tuple[Table, ...]) -> tuple[Table, Table]:
    a = c.choice(tables)
    return a, c.choice(tables)   # a self-join now and then


def _on(c: Chooser) -> str:
    return c.choice(("a.i0 = b.i0", "a.i0 = b.i0", "a.s0 = b.s0", "a.i0 = b.i0 AND a.s0 <> b.s0"))


def join(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    ta, tb = _two(c, tables)
    kind = c.choice(("JOIN", "LEFT JOIN", "FULL JOIN", "RIGHT JOIN"))
    out = ["a.i0", "b.i0", f"a.{c.choice(ta.columns).name}", f"b.{c.choice(tb.columns).name}"]
    where = f" WHERE {_pred(c, 'a', ta)}" if kind == "JOIN" and c.chance(0.5) else ""
    sql = f"SELECT {', '.join(out)} FROM {ta.name} a {kind} {tb.name} b ON {_on(c)}{where}"
    return Def("join", sql, sql, len(out))


def join3(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    ta, tb = _two(c, tables)
    tc = c.choice(tables)
    k1, k2 = c.choice(("JOIN", "LEFT JOIN", "FULL JOIN")), c.choice(("JOIN", "LEFT JOIN"))
    out = ["a.s0", "b.i0", "c.s0", f"c.{c.choice(tc.columns).name}"]
    sql = (f"SELECT {', '.join(out)} FROM {ta.name} a {k1} {tb.name} b ON {_on(c)} "
           f"{k2} {tc.name} c ON c.i0 = coalesce(b.i0, a.i0)")
    return Def("join3", sql, sql, len(out))


def _aggs(c: Chooser, a: str, t: Table) -> list[str]:
    n = _col(c, t, NUMERIC).name
    o = _col(c, t, ORDERED).name
    arr = _col(c, t, ARRAYABLE).name
    bools = _cols(t, ("boolean",))
    b = f"{a}.{bools[0].name}" if bools and c.chance(0.7) else f"({a}.i0 > 1)"
    anyc = c.choice(t.columns).name
    every = [
        "count(*)", f"count({a}.{anyc})", f"sum({a}.{n})", f"avg({a}.{n})", f"min({a}.{o})",
        f"max({a}.{o})", f"count(DISTINCT {a}.{anyc})", f"string_agg({a}.s0, ',' ORDER BY {a}.s0)",
        f"array_agg({a}.{arr} ORDER BY {a}.{arr})", f"bool_and({b})", f"bool_or({b})",
        f"sum(DISTINCT {a}.{n})", f"max({a}.{n}) - min({a}.{n})",
    ]
    k = c.randint(2, 5)
    picked: list[str] = []
    while len(picked) < k:
        e = c.choice(every)
        if e not in picked:
            picked.append(e)
    return picked


def agg(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    t = c.choice(tables)
    key = c.choice(("i0", "s0", c.choice(t.columns).name))
    aggs = _aggs(c, "a", t)
    having = " HAVING count(*) > 1" if c.chance(0.25) else ""
    where = f" WHERE {_pred(c, 'a', t)}" if c.chance(0.4) else ""
    sql = f"SELECT a.{key}, {', '.join(aggs)} FROM {t.name} a{where} GROUP BY a.{key}{having}"
    return Def("agg", sql, sql, 1 + len(aggs))


def agg_global(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    t = c.choice(tables)
    aggs = _aggs(c, "a", t)
    where = f" WHERE {_pred(c, 'a', t)}" if c.chance(0.5) else ""
    sql = f"SELECT {', '.join(aggs)} FROM {t.name} a{where}"
    return Def("agg_global", sql, sql, len(aggs))


def agg_join(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    ta, tb = _two(c, tables)
    kind = c.choice(("JOIN", "LEFT JOIN", "FULL JOIN"))
    key = c.choice(("a.i0", "a.s0", "b.s0"))
    aggs = _aggs(c, "b", tb)
    sql = f"SELECT {key}, {', '.join(aggs)} FROM {ta.name} a {kind} {tb.name} b ON {_on(c)} GROUP BY {key}"
    return Def("agg_join", sql, sql, 1 + len(aggs))


def distinct(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    t = c.choice(tables)
    cols = ["i0"] + ([c.choice(t.columns).name] if c.chance(0.6) else [])
    where = f" WHERE {_pred(c, 'a', t)}" if c.chance(0.4) else ""
    sql = f"SELECT DISTINCT {', '.join('a.' + x for x in cols)} FROM {t.name} a{where}"
    return Def("distinct", sql, sql, len(cols))


def _dir(c: Chooser) -> str:
    return c.choice(("", " DESC", " NULLS FIRST", " DESC NULLS LAST"))


def distinct_on(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    t = c.choice(tables)
    key = c.choice(("i0", "s0"))
    x = _col(c, t, ORDERED).name
    y = _col(c, t, ORDERED).name
    sql = (f"SELECT DISTINCT ON (a.{key}) a.{key}, a.{x}, a.{y} FROM {t.name} a "
           f"ORDER BY a.{key}, a.{x}{_dir(c)}, a.{y}{_dir(c)}")
    return Def("distinct_on", sql, sql, 3)


def topk_lateral(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    ta, tb = _two(c, tables)
    x = _col(c, tb, ORDERED).name
    k = c.randint(1, 3)
    off = f" OFFSET {c.randint(1, 2)}" if c.chance(0.2) else ""
    sql = (f"SELECT g.i0, l.{x} FROM (SELECT DISTINCT i0 FROM {ta.name}) g, "
           f"LATERAL (SELECT b.{x} FROM {tb.name} b WHERE b.i0 = g.i0 ORDER BY b.{x}{_dir(c)} LIMIT {k}{off}) l")
    return Def("topk_lateral", sql, sql, 2)


def topk_window(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    t = c.choice(tables)
    key = c.choice(("i0", "s0"))
    x = _col(c, t, ORDERED).name
    k = c.randint(1, 3)
    sql = (f"SELECT q.k, q.x FROM (SELECT a.{key} AS k, a.{x} AS x, row_number() OVER "
           f"(PARTITION BY a.{key} ORDER BY a.{x}{_dir(c)}) AS rn FROM {t.name} a) q WHERE q.rn <= {k}")
    return Def("topk_window", sql, sql, 2)


def limit(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    t = c.choice(tables)
    x = c.choice([col for col in t.columns if col.ty in ORDERED and col.name != "i0"]).name   # s0 at least
    order = f"a.i0{_dir(c)}, a.{x}{_dir(c)}"
    lim = f"LIMIT {c.randint(1, 4)}" + (f" OFFSET {c.randint(1, 3)}" if c.chance(0.4) else "")
    if c.chance(0.5):
        sql = f"SELECT a.i0, a.{x} FROM {t.name} a ORDER BY {order} {lim}"
        return Def("limit", sql, sql, 2)
    sql = (f"SELECT q.i0, count(*) FROM (SELECT a.i0, a.{x} FROM {t.name} a ORDER BY {order} {lim}) q "
           f"GROUP BY q.i0")
    return Def("limit", sql, sql, 2)


def setop(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    ta, tb = _two(c, tables)
    op = c.choice(("UNION", "UNION ALL", "EXCEPT", "EXCEPT ALL", "INTERSECT", "INTERSECT ALL"))
    cols = c.choice(("i0", "i0, s0", "s0"))
    wa = f" WHERE {_pred(c, 'a', ta)}" if c.chance(0.4) else ""
    sql = f"SELECT {cols} FROM {ta.name} a{wa} {op} SELECT {cols} FROM {tb.name} b"
    return Def("setop", sql, sql, len(cols.split(",")))


def window(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    t = c.choice(tables)
    key = c.choice(("i0", "s0"))
    x = _col(c, t, ORDERED).name
    n = _col(c, t, NUMERIC).name
    w = f"PARTITION BY a.{key} ORDER BY a.{x}"
    f = c.choice((f"rank() OVER ({w})", f"dense_rank() OVER ({w})", f"lag(a.{x}) OVER ({w})",
                  f"lead(a.{x}, 1) OVER ({w})", f"sum(a.{n}) OVER ({w})", f"count(*) OVER (PARTITION BY a.{key})",
                  f"max(a.{x}) OVER (PARTITION BY a.{key})", f"first_value(a.{x}) OVER ({w})",
                  f"sum(a.{n}) OVER ({w} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)"))
    sql = f"SELECT a.{key}, a.{x}, {f} FROM {t.name} a"
    return Def("window", sql, sql, 3)


def subquery(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    ta, tb = _two(c, tables)
    x = c.choice(ta.columns).name
    n = _col(c, tb, NUMERIC).name
    match c.randint(0, 4):
        case 0:
            cond = f"EXISTS (SELECT 1 FROM {tb.name} b WHERE b.i0 = a.i0 AND b.s0 <> a.s0)"
        case 1:
            cond = f"NOT EXISTS (SELECT 1 FROM {tb.name} b WHERE b.i0 = a.i0)"
        case 2:
            cond = f"a.i0 IN (SELECT b.i0 FROM {tb.name} b WHERE {_pred(c, 'b', tb)})"
        case 3:
            cond = f"a.i0 NOT IN (SELECT b.i0 FROM {tb.name} b WHERE {_pred(c, 'b', tb)})"
        case _:
            cond = f"a.i0 > (SELECT count(*) FROM {tb.name} b WHERE b.s0 = a.s0)"
    scalar = f"(SELECT max(b.{n}) FROM {tb.name} b WHERE b.i0 = a.i0)"
    sql = f"SELECT a.i0, a.{x}, {scalar} FROM {ta.name} a WHERE {cond}"
    return Def("subquery", sql, sql, 3)


def wmr(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    t = c.choice(tables)
    match c.randint(0, 2):
        case 0:   # counting up from the table's keys: PostgreSQL's WITH RECURSIVE … UNION
            top = c.randint(4, 8)
            base = f"SELECT i0 FROM {t.name} WHERE i0 BETWEEN -1 AND {top}"
            step = f"SELECT n + 1 FROM r WHERE n < {top}"
            sql = f"WITH MUTUALLY RECURSIVE r (n int) AS ({base} UNION {step}) SELECT n FROM r"
            return Def("wmr", sql, f"WITH RECURSIVE r (n) AS ({base} UNION {step}) SELECT n FROM r", 1)
        case 1:   # reachability over the edges (i0 -> length(s0)) of a table
            u = c.choice(tables)
            edges = f"SELECT i0 AS s, length(s0) AS d FROM {u.name} WHERE i0 IS NOT NULL AND s0 IS NOT NULL"
            base = f"SELECT s, d FROM ({edges}) e0"
            step = f"SELECT r.s, e.d FROM r JOIN ({edges}) e ON r.d = e.s"
            sql = f"WITH MUTUALLY RECURSIVE r (s int, d int) AS ({base} UNION {step}) SELECT s, d FROM r"
            return Def("wmr", sql, f"WITH RECURSIVE r (s, d) AS ({base} UNION {step}) SELECT s, d FROM r", 2)
    top = c.randint(5, 9)   # even / odd: mutual recursion, no PostgreSQL equivalent
    sql = (f"WITH MUTUALLY RECURSIVE even (n int) AS (SELECT i0 FROM {t.name} WHERE i0 BETWEEN 0 AND {top} "
           f"UNION SELECT n + 1 FROM odd WHERE n < {top}), odd (n int) AS (SELECT n + 1 FROM even WHERE n < {top}) "
           f"SELECT n, n % 2 FROM odd")
    return Def("wmr", sql, None, 2)


def srf(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    t = c.choice(tables)
    if c.chance(0.5):
        sql = f"SELECT a.s0, g FROM {t.name} a, generate_series(1, least(greatest(a.i0, 0), 4)) g"
        return Def("srf", sql, sql, 2)
    x = c.choice(_cols(t, ("text",))).name
    sql = f"SELECT a.i0, u FROM {t.name} a, unnest(ARRAY[a.s0, a.{x}, 'k']) u"
    return Def("srf", sql, sql, 2)


def stacked(c: Chooser, tables: tuple[Table, ...], prev: list[Prev]) -> Def:
    p = c.choice(prev)
    if c.chance(0.5):
        sql = f"SELECT p.c1, count(*) FROM {p.name} p GROUP BY p.c1"
        return Def("stacked", sql, sql, 2, (p.name,))
    t = c.choice(tables)
    sql = f"SELECT p.*, a.s0 FROM {p.name} p, {t.name} a WHERE a.i0 = {c.choice(('1', '2'))}"
    return Def("stacked", sql, sql, p.ncols + 1, (p.name,))


FAMILIES: dict[str, Callable[[Chooser, tuple[Table, ...], list[Prev]], Def]] = {
    f.__name__: f for f in (join, join3, agg, agg_global, agg_join, distinct, distinct_on, topk_lateral,
                            topk_window, limit, setop, window, subquery, wmr, srf, stacked)
}


def random_def(c: Chooser, tables: tuple[Table, ...], prev: list[Prev], families: tuple[str, ...] = ()) -> Def:
    names = [f for f in (families or tuple(FAMILIES)) if f != "stacked" or prev]
    return FAMILIES[c.choice(names)](c, tables, prev)
