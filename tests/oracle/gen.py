"""Typed random query generation: every query is a function of its seed (and of the schema,
itself a function of the seed's block). Expressions are generated for a wanted type, so most
queries are valid; constructs whose result PostgreSQL leaves unspecified are avoided
(LIMIT only under an ORDER BY over every output column, string_agg ordered by its own
argument, window functions whose value does not depend on the order of peers, no float sums
in windows, divisions by NULLIF(x, 0))."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from tests.oracle.ast import N, leaf, lst, opt, t
from tests.oracle.schema import NUMERIC_TYPES, ORDERABLE, TYPES, Table, literal

ALL_TYPES = tuple(TYPES)
HASHABLE = ("int", "bigint", "numeric", "text", "boolean", "date", "timestamp")


@dataclass(frozen=True)
class Rel:
    alias: str
    cols: tuple[tuple[str, str], ...]   # (name, type)


@dataclass(frozen=True)
class Ctx:
    rels: tuple[Rel, ...]
    outer: tuple[Rel, ...] = ()
    group: tuple[N, ...] | None = None   # grouped: the key expressions
    depth: int = 1                        # remaining subquery nesting
    windows: bool = False


@dataclass(frozen=True)
class Query:
    """A generated query. Metamorphic modes render the same tree through a second template
    (`other_fmt`), so the minimizer shrinks both queries at once."""
    mode: str                      # "diff" | "tlp" | "tlp_agg" | "norec"
    tree: N
    other_fmt: str | None = None

    def sql(self) -> str:
        return self.tree.render()

    def other_sql(self) -> str | None:
        return None if self.other_fmt is None else replace(self.tree, fmt=self.other_fmt).render()

    def with_tree(self, tree: N) -> Query:
        return replace(self, tree=tree)


@dataclass
class Gen:
    rng: random.Random
    tables: dict[str, tuple[tuple[str, str], ...]]   # visible relations by name
    mixcase: bool = False
    n_alias: int = 0
    budget: int = 3                                   # FROM primaries left in this FROM
    total: int = 5                                    # FROM primaries left in the whole query
    ctes: list[str] = field(default_factory=list)
    light: bool = False                               # the light tier: see generate()

    # ---- names ------------------------------------------------------------------------

    def ident(self, name: str) -> str:
        """Unquoted identifiers fold to lower case; mixcase queries spell some in upper."""
        if self.mixcase and self.rng.random() < 0.3:
            return name.upper() if self.rng.random() < 0.5 else name.capitalize()
        return name

    def alias(self) -> str:
        self.n_alias += 1
        return f"a{self.n_alias}"

    def colref(self, rel: Rel, name: str, ty: str) -> N:
        return leaf(f"{self.ident(rel.alias)}.{self.ident(name)}", ty)

    # ---- expressions ------------------------------------------------------------------

    def lit(self, ty: str) -> N:
        if self.rng.random() < 0.05:
            return leaf(f"NULL::{ty}", ty)
        return leaf(literal(self.rng, ty), ty)

    def columns_of(self, rels: tuple[Rel, ...], ty: str) -> list[tuple[Rel, str]]:
        return [(r, c) for r in rels for c, cty in r.cols if cty == ty]

    def atom(self, ty: str, ctx: Ctx) -> N:
        r = self.rng
        if ctx.group is not None:
            keys = [k for k in ctx.group if k.ty == ty]
            choice = r.random()
            if keys and choice < 0.4:
                return r.choice(keys)
            if choice < 0.85:
                agg = self.aggregate(ty, Ctx(ctx.rels, (), None, ctx.depth))
                if agg is not None:
                    return agg
            return self.lit(ty)
        cols = self.columns_of(ctx.rels, ty)
        outer = self.columns_of(ctx.outer, ty)
        x = r.random()
        if outer and x < 0.25:
            rel, c = r.choice(outer)
            return self.colref(rel, c, ty)
        if cols and x < 0.9:
            rel, c = r.choice(cols)
            return self.colref(rel, c, ty)
        if ty == "bigint" and self.columns_of(ctx.rels, "int") and x < 0.9:
            return t("CAST({0} AS bigint)", self.atom("int", ctx), ty=ty)
        return self.lit(ty)

    def expr(self, ty: str, ctx: Ctx, d: int = 2) -> N:
        r = self.rng
        if d <= 0 or r.random() < 0.35:
            return self.atom(ty, ctx)
        if ctx.depth > 0 and r.random() < 0.08:
            sub = self.scalar_subquery(ty, ctx)
            if sub is not None:
                return sub
        if ctx.windows and ctx.group is None and r.random() < 0.15:
            w = self.window(ty, ctx)
            if w is not None:
                return w
        x = r.random()
        e = lambda t2=ty: self.expr(t2, ctx, d - 1)  # noqa: E731
        if x < 0.15:
            return t("CASE WHEN {0} THEN {1} ELSE {2} END", self.pred(ctx, d - 1), e(), e(), ty=ty)
        if x < 0.22:
            return t("COALESCE({0}, {1})", e(), e(), ty=ty)
        if x < 0.26:
            return t("NULLIF({0}, {1})", e(), e(), ty=ty) if ty != "interval" else e()
        if x < 0.29 and ty in ORDERABLE:
            return t(r.choice(["greatest({0}, {1})", "least({0}, {1})"]), e(), e(), ty=ty)
        return self.typed(ty, ctx, d, e)

    def typed(self, ty: str, ctx: Ctx, d: int, e) -> N:  # noqa: C901
        r = self.rng
        pick = r.randrange(100)
        match ty:
            case "int":
                if pick < 25:
                    return t(r.choice(["({0} + {1})", "({0} - {1})", "({0} * {1})"]), e(), e(), ty=ty)
                if pick < 35:
                    return t(r.choice(["({0} / NULLIF({1}, 0))", "({0} % NULLIF({1}, 0))"]), e(), e(), ty=ty)
                if pick < 45:
                    return t(r.choice(["abs({0})", "(- {0})"]), e(), ty=ty)
                if pick < 55:
                    return t(r.choice(["length({0})", "strpos({0}, 'b')", "ascii({0})"]), e("text"), ty=ty)
                if pick < 65:
                    return t("CAST({0} AS int)", e(r.choice(["numeric", "double precision", "bigint"])), ty=ty)
                if pick < 72:
                    return t("({0} - {1})", e("date"), e("date"), ty=ty)
                if pick < 80:
                    part = r.choice(["YEAR", "MONTH", "DAY", "DOW", "DOY"])
                    return t(f"CAST(EXTRACT({part} FROM {{0}}) AS int)", e(r.choice(["date", "timestamp"])), ty=ty)
                if pick < 85:
                    return t("CAST(sign({0}) AS int)", e(), ty=ty)
                return t("CAST({0} AS int)", e("boolean"), ty=ty)
            case "bigint":
                if pick < 40:
                    return t(r.choice(["({0} + {1})", "({0} - {1})"]), e(), e(), ty=ty)
                if pick < 60:
                    return t("CAST({0} AS bigint)", e("int"), ty=ty)
                if pick < 75:
                    return t("({0} * {1})", e("int"), t("CAST({0} AS bigint)", e("int"), ty=ty), ty=ty)
                return t("abs({0})", e(), ty=ty)
            case "numeric":
                if pick < 25:
                    return t(r.choice(["({0} + {1})", "({0} - {1})", "({0} * {1})"]), e(), e(), ty=ty)
                if pick < 35:
                    return t("({0} / NULLIF({1}, 0))", e(), e(), ty=ty)
                if pick < 55:
                    k = r.choice([0, 1, 2])
                    return t(r.choice([f"round({{0}}, {k})", f"trunc({{0}}, {k})", "round({0})",
                                       "abs({0})", "ceil({0})", "floor({0})"]), e(), ty=ty)
                if pick < 70:
                    return t("CAST({0} AS numeric)", e(r.choice(["int", "bigint"])), ty=ty)
                if pick < 80:
                    return t("CAST({0} AS numeric(10,2))", e(), ty=ty)
                return t("({0} + {1})", e(), e("int"), ty=ty)
            case "double precision":
                if pick < 30:
                    return t(r.choice(["({0} + {1})", "({0} - {1})", "({0} * {1})"]), e(), e(), ty=ty)
                if pick < 55:
                    return t("CAST({0} AS double precision)", e(r.choice(["int", "numeric"])), ty=ty)
                if pick < 70:
                    return t(r.choice(["sqrt(abs({0}))", "abs({0})", "floor({0})", "ceil({0})", "round({0})"]), e(), ty=ty)
                return t("({0} / NULLIF({1}, 0))", e(), e(), ty=ty)
            case "text":
                if pick < 20:
                    return t("({0} || {1})", e(), e(), ty=ty)
                if pick < 45:
                    return t(r.choice(["upper({0})", "lower({0})", "trim({0})", "reverse({0})",
                                       "substr({0}, 2)", "substr({0}, 1, 2)", "replace({0}, 'b', 'XY')",
                                       "left({0}, 2)", "right({0}, 2)", "lpad({0}, 4, '*')",
                                       "rpad({0}, 4, '-')", "split_part({0}, ' ', 1)", "ltrim({0})",
                                       "initcap({0})", "repeat({0}, 2)", "md5({0})"]), e(), ty=ty)
                if pick < 55:
                    return t("concat({0}, {1})", e(), e(r.choice(["int", "text"])), ty=ty)
                src = r.choice(["int", "bigint", "numeric", "boolean", "date", "timestamp", "interval",
                                "double precision"])
                return t("CAST({0} AS text)", e(src), ty=ty)
            case "boolean":
                return self.pred(ctx, d)
            case "date":
                if pick < 40:
                    return t(r.choice(["({0} + {1})", "({0} - {1})"]), e(), e("int"), ty=ty)
                if pick < 70:
                    return t("CAST({0} AS date)", e("timestamp"), ty=ty)
                return t("make_date(2024, {0}, {1})", leaf(str(r.randint(1, 12))), leaf(str(r.randint(1, 28))), ty=ty)
            case "timestamp":
                if pick < 35:
                    return t(r.choice(["({0} + {1})", "({0} - {1})"]), e(), e("interval"), ty=ty)
                if pick < 50:
                    return t("({0} + {1})", e("date"), e("interval"), ty=ty)
                if pick < 75:
                    unit = r.choice(["day", "month", "hour", "year", "minute"])
                    return t(f"date_trunc('{unit}', {{0}})", e(), ty=ty)
                return t("CAST({0} AS timestamp)", e("date"), ty=ty)
            case "interval":
                if pick < 30:
                    return t("({0} - {1})", e("timestamp"), e("timestamp"), ty=ty)
                if pick < 50:
                    return t(r.choice(["({0} + {1})", "({0} - {1})"]), e(), e(), ty=ty)
                if pick < 65:
                    return t("({0} * {1})", e(), e("int"), ty=ty)
                if pick < 75:
                    return t("(- {0})", e(), ty=ty)
                if pick < 85:
                    return t(r.choice(["justify_hours({0})", "justify_days({0})"]), e(), ty=ty)
                return t("age({0}, {1})", e("timestamp"), e("timestamp"), ty=ty)
        raise ValueError(ty)

    def pred(self, ctx: Ctx, d: int = 2) -> N:
        r = self.rng
        b = "boolean"
        if d <= 0 or r.random() < 0.1:
            cols = self.columns_of(ctx.rels, b) if ctx.group is None else []
            if cols and r.random() < 0.5:
                rel, c = r.choice(cols)
                return self.colref(rel, c, b)
            return self.cmp(ctx, 0)
        x = r.random()
        if ctx.depth > 0 and x < 0.12:
            sub = self.subquery_pred(ctx)
            if sub is not None:
                return sub
        if x < 0.40:
            return self.cmp(ctx, d - 1)
        if x < 0.55:
            return t(r.choice(["({0} AND {1})", "({0} OR {1})"]), self.pred(ctx, d - 1), self.pred(ctx, d - 1), ty=b)
        if x < 0.62:
            return t("(NOT {0})", self.pred(ctx, d - 1), ty=b)
        if x < 0.72:
            ty = r.choice(ALL_TYPES)
            return t(r.choice(["({0} IS NULL)", "({0} IS NOT NULL)"]), self.expr(ty, ctx, d - 1), ty=b)
        if x < 0.77:
            ty = r.choice(ALL_TYPES)
            return t(r.choice(["({0} IS DISTINCT FROM {1})", "({0} IS NOT DISTINCT FROM {1})"]),
                     self.expr(ty, ctx, d - 1), self.expr(ty, ctx, d - 1), ty=b)
        if x < 0.83:
            ty = r.choice(ORDERABLE)
            return t(r.choice(["({0} BETWEEN {1} AND {2})", "({0} NOT BETWEEN {1} AND {2})"]),
                     self.expr(ty, ctx, d - 1), self.lit(ty), self.lit(ty), ty=b)
        if x < 0.89:
            ty = r.choice(("int", "text", "date", "numeric", "bigint"))
            items = lst([self.lit(ty) for _ in range(r.randint(1, 3))])
            return t(r.choice(["({0} IN ({1}))", "({0} NOT IN ({1}))"]), self.expr(ty, ctx, d - 1), items, ty=b)
        if x < 0.94:
            pat = r.choice(["'a%'", "'%b%'", "'_b%'", "'%'", "'A%'", "'%c'"])
            op = r.choice(["LIKE", "NOT LIKE", "ILIKE"])
            return t(f"({{0}} {op} {pat})",
                     self.expr("text", ctx, d - 1), ty=b)
        return t(r.choice(["({0} IS TRUE)", "({0} IS NOT FALSE)", "({0} IS UNKNOWN)"]), self.pred(ctx, d - 1), ty=b)

    def cmp(self, ctx: Ctx, d: int) -> N:
        r = self.rng
        ty = r.choice(ALL_TYPES + ("int", "int", "text"))
        op = "=" if ty == "boolean" and r.random() < 0.5 else r.choice(["=", "<>", "<", "<=", ">", ">="])
        rhs_ty = ty
        if ty in NUMERIC_TYPES and r.random() < 0.3:
            rhs_ty = r.choice(NUMERIC_TYPES)
        rhs = self.expr(rhs_ty, ctx, d) if r.random() < 0.6 else self.lit(rhs_ty)
        return t(f"({{0}} {op} {{1}})", self.expr(ty, ctx, d), rhs, ty="boolean")

    def column_expr(self, rels: tuple[Rel, ...]) -> N:
        """A column, sometimes under a function: a key for GROUP BY / PARTITION BY / window ORDER BY
        (never a bare literal, which GROUP BY would read as an output position)."""
        rel = self.rng.choice(rels)
        c, ty = self.rng.choice(rel.cols)
        ref = self.colref(rel, c, ty)
        if self.rng.random() < 0.2:
            match ty:
                case "int" | "bigint" | "numeric":
                    return t("({0} % 3)", ref, ty=ty)
                case "text":
                    return t("lower({0})", ref, ty=ty)
                case "timestamp":
                    return t("date_trunc('day', {0})", ref, ty=ty)
        return ref

    # ---- aggregates and windows -------------------------------------------------------

    def aggregate(self, ty: str, row: Ctx) -> N | None:
        """An aggregate returning `ty` whose arguments are row expressions of `row`."""
        r = self.rng
        row = Ctx(row.rels, (), None, 0)     # no outer references, no nested subqueries
        opts: list[tuple[str, str]] = []      # (template, argument type)
        if ty == "bigint":
            opts += [("count(*)", ""), ("count({0})", r.choice(ALL_TYPES)), ("count(DISTINCT {0})", r.choice(ALL_TYPES)),
                     ("sum({0})", "int")]
        if ty == "numeric":
            opts += [("sum({0})", r.choice(["bigint", "numeric"])), ("avg({0})", r.choice(["int", "bigint", "numeric"])),
                     ("sum(DISTINCT {0})", "numeric")]
        if ty == "double precision":
            opts += [("sum({0})", ty), ("avg({0})", ty)]
        if ty == "interval":
            opts += [("sum({0})", ty), ("avg({0})", ty)]
        if ty == "boolean":
            opts += [("bool_and({0})", ty), ("bool_or({0})", ty)]
        if ty == "text":
            opts += [("string_agg({0}, ',' ORDER BY {0})", ty), ("string_agg(DISTINCT CAST({0} AS text), '|' ORDER BY CAST({0} AS text))", ty)]
        if ty in ORDERABLE:
            opts += [("min({0})", ty), ("max({0})", ty)]
        if not opts:
            return None
        fmt, aty = r.choice(opts)
        arg = [self.expr(aty, row, 1)] if aty else []
        if r.random() < 0.15:
            fmt += f" FILTER (WHERE {{{len(arg)}}})"
            arg.append(self.pred(row, 1))
        return t(fmt, *arg, ty=ty)

    def window(self, ty: str, ctx: Ctx) -> N | None:
        r = self.rng
        opts: list[tuple[str, str]] = []
        if ty == "bigint":
            opts += [("rank()", ""), ("dense_rank()", ""), ("count(*)", ""), ("sum({0})", "int"),
                     ("count({0})", "text")]
        if ty == "numeric":
            opts += [("sum({0})", "numeric")]
        if ty in ORDERABLE:
            opts += [("min({0})", ty), ("max({0})", ty)]
        if not opts:
            return None
        fmt, aty = r.choice(opts)
        row = Ctx(ctx.rels, ctx.outer, None, 0)
        kids = [self.expr(aty, row, 1)] if aty else []
        parts = []
        if r.random() < 0.7:
            parts.append(f"PARTITION BY {{{len(kids)}}}")
            kids.append(self.column_expr(row.rels))
        if fmt in ("rank()", "dense_rank()") or r.random() < 0.5:
            parts.append(f"ORDER BY {{{len(kids)}}}" + r.choice(["", " DESC", " NULLS FIRST", " DESC NULLS LAST"]))
            kids.append(self.column_expr(row.rels))
        return t(f"{fmt} OVER ({' '.join(parts)})", *kids, ty=ty)

    # ---- subqueries -------------------------------------------------------------------

    def sub_ctx(self, ctx: Ctx) -> tuple[Ctx, tuple[Rel, ...]]:
        # In a grouped query a subquery may only see the keys; keep those uncorrelated.
        outer = () if ctx.group is not None else ctx.rels + ctx.outer
        return Ctx((), outer, None, ctx.depth - 1), outer

    def small_from(self, outer: tuple[Rel, ...], depth: int) -> tuple[N, tuple[Rel, ...]]:
        saved = self.budget
        self.budget = 1 if self.rng.random() < 0.7 else 2
        node, rels = self.from_clause(outer, depth, max_items=1)
        self.budget = saved
        return node, rels

    def scalar_subquery(self, ty: str, ctx: Ctx) -> N | None:
        sctx, outer = self.sub_ctx(ctx)
        frm, rels = self.small_from(outer, sctx.depth)
        inner = Ctx(rels, outer, None, sctx.depth)
        agg = self.aggregate(ty, inner)
        if agg is None:
            return None
        where = opt(" WHERE {0}", self.pred(inner, 1) if self.rng.random() < 0.8 else None)
        return t("(SELECT {0} FROM {1}{2})", agg, frm, where, ty=ty)

    def subquery_pred(self, ctx: Ctx) -> N | None:
        r = self.rng
        sctx, outer = self.sub_ctx(ctx)
        frm, rels = self.small_from(outer, sctx.depth)
        inner = Ctx(rels, outer, None, sctx.depth)
        where = opt(" WHERE {0}", self.pred(inner, 1) if r.random() < 0.8 else None)
        if r.random() < 0.4:
            return t(r.choice(["EXISTS (SELECT 1 FROM {0}{1})", "(NOT EXISTS (SELECT 1 FROM {0}{1}))"]),
                     frm, where, ty="boolean")
        ty = r.choice(("int", "text", "date", "numeric", "int"))
        lhs = self.expr(ty, ctx, 1)
        col = self.expr(ty, Ctx(rels, (), None, 0), 1)
        op = r.choice(["IN", "NOT IN", "= ANY", "< ALL"] if ty != "text" else ["IN", "NOT IN"])
        return t(f"({{0}} {op} (SELECT {{1}} FROM {{2}}{{3}}))", lhs, col, frm, where, ty="boolean")

    # ---- FROM -------------------------------------------------------------------------

    def table_ref(self) -> tuple[N, Rel]:
        name = self.rng.choice(sorted(self.tables))
        a = self.alias()
        return leaf(f"{self.ident(name)} AS {self.ident(a)}"), Rel(a, self.tables[name])

    def primary(self, outer: tuple[Rel, ...], lateral_scope: tuple[Rel, ...], depth: int) -> tuple[N, Rel, bool]:
        """A FROM primary; the flag says whether it is LATERAL (may see `lateral_scope`)."""
        r = self.rng
        self.budget -= 1
        self.total -= 1
        x = r.random()
        if depth > 0 and x < 0.15:
            node, cols = self.select_core(outer, None, depth - 1, windows=True)
            a = self.alias()
            return t(f"({{0}}) AS {a}", node), Rel(a, cols), False
        if depth > 0 and lateral_scope and x < 0.25:
            node, cols = self.select_core(outer + lateral_scope, None, depth - 1, windows=False, correlate=True)
            a = self.alias()
            return t(f"LATERAL ({{0}}) AS {a}", node), Rel(a, cols), True
        node, rel = self.table_ref()
        return node, rel, False

    def join_tree(self, outer: tuple[Rel, ...], prior: tuple[Rel, ...], depth: int) -> tuple[N, tuple[Rel, ...]]:
        r = self.rng
        node, rel, _ = self.primary(outer, prior, depth)
        rels: tuple[Rel, ...] = (rel,)
        while self.budget > 0 and self.total > 0 and r.random() < 0.4:
            rnode, rrel, lateral = self.primary(outer, prior + rels, depth)
            kinds = ["JOIN", "LEFT JOIN", "CROSS JOIN"] if lateral else \
                ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN", "JOIN", "LEFT JOIN"]
            kind = r.choice(kinds)
            if kind == "CROSS JOIN":
                node = t("{0} CROSS JOIN {1}", node, rnode)
            elif not lateral and r.random() < 0.3 and (using := self.using_cols(rels, rrel)):
                node = t(f"{{0}} {kind} {{1}} USING ({', '.join(self.ident(c) for c in using)})", node, rnode)
            elif kind == "FULL JOIN":
                node = t("{0} FULL JOIN {1} ON {2}", node, rnode, self.equi(rels, rrel))
            else:
                on_ctx = Ctx(rels + (rrel,), outer, None, depth)
                on = self.pred(on_ctx, 2) if r.random() < 0.5 else self.equi(rels, rrel)
                node = t(f"{{0}} {kind} {{1}} ON {{2}}", node, rnode, on)
            rels = rels + (rrel,)
        return node, rels

    def using_cols(self, left: tuple[Rel, ...], right: Rel) -> list[str]:
        names = [c for r in left for c, _ in r.cols]
        ltypes = {c: ty for r in left for c, ty in r.cols}
        common = [c for c, ty in right.cols if names.count(c) == 1 and ltypes[c] == ty]
        if not common:
            return []
        return self.rng.sample(common, min(len(common), self.rng.choice([1, 1, 2])))

    def equi(self, left: tuple[Rel, ...], right: Rel) -> N:
        """An equality between a left and a right column of one hashable type (FULL JOIN-able)."""
        r = self.rng
        pairs = [(lr, lc, rc, ty) for lr in left for lc, ty in lr.cols for rc, rty in right.cols
                 if ty == rty and ty in HASHABLE]
        if not pairs:
            return leaf("true", "boolean")
        lr, lc, rc, ty = r.choice(pairs)
        e = t("({0} = {1})", self.colref(lr, lc, ty), self.colref(right, rc, ty), ty="boolean")
        if r.random() < 0.2:
            lr, lc, rc, ty = r.choice(pairs)
            e = t("({0} AND ({1} = {2}))", e, self.colref(lr, lc, ty), self.colref(right, rc, ty), ty="boolean")
        return e

    def from_clause(self, outer: tuple[Rel, ...], depth: int, max_items: int = 3) -> tuple[N, tuple[Rel, ...]]:
        r = self.rng
        items: list[N] = []
        rels: tuple[Rel, ...] = ()
        n = min(max_items, r.choice([1, 1, 1, 2, 2, 3]))
        for i in range(n):
            if i > 0 and (self.budget <= 0 or self.total <= 0):
                break
            node, trels = self.join_tree(outer, rels, depth)
            items.append(node)
            rels = rels + trels
        return lst(items), rels

    # ---- SELECT -----------------------------------------------------------------------

    def select_core(self, outer: tuple[Rel, ...], out_types: list[str] | None, depth: int,
                    windows: bool = True, correlate: bool = False,
                    grouped: bool | None = None) -> tuple[N, tuple[tuple[str, str], ...]]:
        r = self.rng
        saved = self.budget
        self.budget = 2 if outer or depth == 0 else 3
        frm, rels = self.from_clause(outer, depth)
        self.budget = saved
        row = Ctx(rels, outer, None, depth, windows=False)
        if grouped is None:
            grouped = r.random() < 0.3
        types = out_types or [r.choice(ALL_TYPES) for _ in range(r.randint(1, 4))]
        where = None
        if r.random() < 0.6 or correlate:
            where = self.pred(row, 2)
        group_n: N | None = None
        having = None
        if grouped:
            keys = []
            for _ in range(r.choice([0, 1, 1, 2])):
                keys.append(self.column_expr(rels))
            gctx = Ctx(rels, outer, tuple(keys), depth)
            items = [self.expr(ty, gctx, r.choice([1, 2])) for ty in types]
            if keys:
                group_n = lst(keys)
            if r.random() < 0.3:
                having = self.pred(gctx, 1)
        else:
            ictx = Ctx(rels, outer, None, depth, windows=windows)
            items = [self.expr(ty, ictx, r.choice([1, 1, 2])) for ty in types]
        sel = lst([t(f"{{0}} AS c{i}", it) for i, it in enumerate(items)])
        distinct = opt("DISTINCT {0}", leaf("") if r.random() < 0.12 else None)
        node = t("SELECT {0}{1} FROM {2}{3}{4}{5}", distinct, sel, frm, opt(" WHERE {0}", where),
                 opt(" GROUP BY {0}", group_n), opt(" HAVING {0}", having))
        return node, tuple((f"c{i}", ty) for i, ty in enumerate(types))


TIERS = ("full", "light")


def make_gen(seed: int, tables: tuple[Table, ...], tier: str = "full") -> Gen:
    rng = random.Random(seed)
    g = Gen(rng, {tb.name: tuple((c.name, c.ty) for c in tb.columns) for tb in tables},
            mixcase=rng.random() < 0.05, light=tier == "light")
    if g.light:
        g.total = 2
    return g


def generate(seed: int, tables: tuple[Table, ...], tier: str = "full") -> Query:
    """The query of `seed`. The full tier nests (derived tables, LATERAL, subqueries in
    expressions, CTEs, set operations); the light tier (cheaper on Spark) keeps one or two
    tables, no nesting and fewer set operations, for throughput."""
    g = make_gen(seed, tables, tier)
    r = g.rng
    x = r.random()
    if x < 0.12:
        return tlp(g)
    if x < 0.17:
        return tlp_agg(g)
    if x < 0.25:
        return norec(g)
    return Query("diff", top_query(g))


def top_query(g: Gen) -> N:
    r = g.rng
    ctes: list[N] = []
    depth = 0 if g.light else 1
    if not g.light and r.random() < 0.2:
        for _ in range(r.randint(1, 2)):
            node, cols = g.select_core((), None, 1)
            shadow = r.random() < 0.3
            base = [n for n in sorted(g.tables) if n.startswith("t") and n not in g.ctes]
            name = r.choice(base) if shadow and base else f"w{len(ctes)}"
            g.ctes.append(name)
            g.tables = {**g.tables, name: cols}
            g.budget = 3
            ctes.append(t(f"{g.ident(name)} AS ({{0}})", node))
    g.budget = 3
    x = r.random()
    if x < (0.1 if g.light else 0.2):
        left, cols = g.select_core((), None, depth)
        types = [ty for _, ty in cols]
        body = t("({0})", left)
        for _ in range(r.choice([1, 1, 2])):
            g.budget = 3
            right, _ = g.select_core((), types, depth)
            op = r.choice(["UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"])
            body = t(f"{{0}} {op} ({{1}})", body, right)
    else:
        body, cols = g.select_core((), None, 0 if g.light else 2 if r.random() < 0.3 else 1)
        types = [ty for _, ty in cols]
    order = None
    if r.random() < 0.3 and "interval" not in types:
        positions = list(range(1, len(types) + 1))
        r.shuffle(positions)
        keys = ", ".join(f"{p}{r.choice(['', ' DESC', ' NULLS FIRST', ' DESC NULLS LAST'])}" for p in positions)
        lim = f" LIMIT {r.randint(0, 6)}" if r.random() < 0.7 else ""
        off = f" OFFSET {r.randint(1, 3)}" if lim and r.random() < 0.2 else ""
        order = leaf(f" ORDER BY {keys}{lim}{off}")
    with_n = opt("WITH {0} ", lst(ctes) if ctes else None)
    return t("{0}{1}{2}", with_n, body, order or leaf(""))


def _base(g: Gen) -> tuple[N, tuple[Rel, ...], N, Ctx]:
    g.budget = 3
    depth = 0 if g.light else 1
    frm, rels = g.from_clause((), depth)
    row = Ctx(rels, (), None, depth)
    return frm, rels, g.pred(row, 2), row


def tlp(g: Gen) -> Query:
    """Ternary logic partitioning: Q == Q WHERE p UNION ALL Q WHERE NOT p UNION ALL Q WHERE p IS NULL."""
    r = g.rng
    frm, rels, p, row = _base(g)
    items = lst([t(f"{{0}} AS c{i}", g.expr(r.choice(ALL_TYPES), row, r.choice([1, 2])))
                 for i in range(r.randint(1, 3))])
    distinct = "DISTINCT " if r.random() < 0.2 else ""
    union = "UNION" if distinct else "UNION ALL"
    part = f"SELECT {distinct}{{0}} FROM {{1}} WHERE "
    other = part + "{2} " + union + " " + part + "NOT {2} " + union + " " + part + "({2}) IS NULL"
    return Query("tlp", t(f"SELECT {distinct}{{0}} FROM {{1}}", items, frm, p), other)


def tlp_agg(g: Gen) -> Query:
    """Partitioned aggregates: MIN/MAX of partitions' MIN/MAX, SUM of partitions' COUNT/SUM."""
    r = g.rng
    frm, rels, p, row = _base(g)
    ty = r.choice(("int", "numeric", "text", "date", "bigint", "timestamp"))
    arg = g.expr(ty, row, r.choice([1, 2]))
    fn = r.choice(["min", "max", "count", "sum"] if ty in ("int", "numeric", "bigint") else ["min", "max", "count"])
    outer_fn = {"min": "min", "max": "max", "count": "sum", "sum": "sum"}[fn]
    part = f"SELECT {fn}({{0}}) AS m FROM {{1}} WHERE "
    other = f"SELECT {outer_fn}(m) FROM ({part}{{2}} UNION ALL {part}NOT {{2}} UNION ALL {part}({{2}}) IS NULL) AS u"
    return Query("tlp_agg", t(f"SELECT {fn}({{0}}) FROM {{1}}", arg, frm, p), other)


def norec(g: Gen) -> Query:
    """NoREC: count(*) WHERE p == sum(CASE WHEN p THEN 1 ELSE 0 END) over all rows."""
    frm, rels, p, row = _base(g)
    return Query("norec", t("SELECT count(*) FROM {0} WHERE {1}", frm, p),
                 "SELECT COALESCE(sum(CASE WHEN {1} THEN 1 ELSE 0 END), 0) FROM {0}")
