"""Subqueries lowered under the distinct values of the outer columns they read (the
identities are in sql.lowering's docstring): EXISTS / IN as semi- and anti-joins, NOT IN as
a null-aware anti-join, a grouped correlated aggregate as a left join, any other scalar
subquery by the general decorrelation."""

from __future__ import annotations

from sql.errors import SqlError
from sql.hir import (
    Exists,
    HirRel,
    HMap,
    HProject,
    Select,
)
from sql.hir_analysis import (
    at_most_one_row,
    exactly_one_row,
    free_columns,
    free_scalar_subqueries,
    local_gets,
)
from sql.lowering_ctx import TOP, Ctx, LowererBase, _distinct, raise_error
from sql.mir import (
    Constant,
    Filter,
    Join,
    Let,
    Map,
    Mir,
    Negate,
    Project,
    Reduce,
    Threshold,
    Union,
    mir_types,
)
from sql.scalar import (
    AggregateExpr,
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    If,
    Literal,
    Scalar,
)
from sql.subquery_keys import (
    EquiCorrelation,
    GroupedCorrelation,
    NotIn,
    equi_correlation,
    grouped_correlation,
    unshift,
)
from sql.types import BOOL, INT8

SUBQUERY_ROWS_MESSAGE = "more than one row returned by a subquery used as an expression"


class SubqueryLowerer(LowererBase):
    def _semijoin(self, inp: Mir, ctx: Ctx, n: int, sub: HirRel, anti: bool) -> Mir:
        """Filter(EXISTS S)(I) = I ⋉ keys(S) and Filter(NOT EXISTS S)(I) = I − (I ⋉ keys(S)),
        with keys(S) = Distinct(used outer columns of lower(S, D)), D = the distinct values
        of the columns of I that S reads (`_outer_keys`), joined back on those columns; or,
        when S only compares enclosing values with its own by equalities, the distinct values
        S compares them with (`_equi_semijoin`)."""
        width = ctx.k + n
        eqc = equi_correlation(_rows_of(sub), self._correlated)
        if eqc is not None:
            return self._equi_semijoin(inp, ctx, eqc, anti)
        inp_id, inp_get = self._let(inp)
        ts = mir_types(inp_get)
        if self._correlated(sub):
            used = self._outer_keys(sub, ctx, n, width)
            distinct = _distinct(Project(inp_get, tuple(used)))
            d_id, d_get = self._let(distinct)
            r = self.rel(sub, ctx.enter(d_get, n, used))
            keys: Mir = Reduce(Project(r, tuple(range(len(used)))), tuple(Column(j, ts[c]) for j, c in enumerate(used)), ())
            semi: Mir = Project(Join((inp_get, keys), tuple((Column(c, ts[c]), Column(width + j, ts[c])) for j, c in enumerate(used))), tuple(range(width)))
            body: Mir = Union((inp_get, Negate(semi))) if anti else semi
            return Let(inp_id, inp, Let(d_id, distinct, body))
        r = self.rel(sub, TOP)
        nonempty: Mir = Reduce(Project(r, ()), (), ())  # one row () iff S has rows
        if anti:
            nonempty = Union((Constant((((), 1),), ()), Negate(nonempty)))
        return Let(inp_id, inp, Project(Join((inp_get, nonempty), ()), tuple(range(width))))

    def _equi_semijoin(self, inp: Mir, ctx: Ctx, eqc: EquiCorrelation, anti: bool) -> Mir:
        """I ⋉ Distinct(s1, ..)(Filter(si IS NOT NULL)(lower(B))) on xi = si (see
        sql.subquery_keys; SQL `=` never matches NULL, join equivalences would)."""
        width = len(mir_types(inp))
        inp_id, inp_get = self._let(inp)
        base = self.rel(eqc.base, TOP)
        nb = len(mir_types(base))
        vals = [self.scalar(s, TOP) for _, s in eqc.pairs]
        key_rel: Mir = Project(Map(base, tuple(vals)), tuple(range(nb, nb + len(vals))))
        key_rel = Filter(key_rel, tuple(CallUnary("not", CallUnary("is_null", Column(j, v.typ), BOOL), BOOL) for j, v in enumerate(vals)))  # type: ignore[attr-defined]
        keys = _distinct(key_rel)
        outer = [self.scalar(unshift(x), ctx) for x, _ in eqc.pairs]
        eq = tuple((o, Column(width + j, v.typ)) for j, (o, v) in enumerate(zip(outer, vals, strict=True)))  # type: ignore[attr-defined]
        semi: Mir = Project(Join((inp_get, keys), eq), tuple(range(width)))
        body: Mir = Union((inp_get, Negate(semi))) if anti else semi
        return Let(inp_id, inp, body)

    def _not_in(self, inp: Mir, ctx: Ctx, ni: NotIn) -> Mir:
        """Filter(NOT (x IN S))(I) = Threshold(I − Project_I(Filter(p)(I × S)))
        with p = (x = s) IS NULL OR x = s (see the module docstring)."""
        width = len(mir_types(inp))
        inp_id, inp_get = self._let(inp)
        r = self.rel(ni.sub, TOP)
        s = self.scalar(ni.inner, TOP)
        vals = Project(Map(r, (s,)), (len(mir_types(r)),))
        cmp: Scalar = CallBinary("eq", self.scalar(unshift(ni.outer), ctx), Column(width, s.typ), BOOL)
        p: Scalar = CallVariadic("or", (CallUnary("is_null", cmp, BOOL), cmp), BOOL)
        matched = Project(Filter(Join((inp_get, vals), ()), (p,)), tuple(range(width)))
        return Let(inp_id, inp, Threshold(Union((inp_get, Negate(matched)))))

    def _grouped_subquery(self, inp: Mir, ctx: Ctx, width: int, g: GroupedCorrelation) -> Mir:
        """inp ++ S's value, for S = grouped_correlation(..) (see sql.subquery_keys): a left
        join of inp with G = lower(g.grouped) on xi = G's keys (SQL `=`: a NULL xi matches
        nothing), NULL where no key matches:

            M = Project(inp, value)(Filter(xi IS NOT NULL)(inp) ⋈ G on xi = keys)
            result = M ∪ Map(NULL)(inp − Project(inp)(M))     (G has one row per key)"""
        inp_id, inp_get = self._let(inp)
        grouped = self.rel(g.grouped, TOP)
        gts = mir_types(grouped)
        m = len(g.pairs)
        outer = [self.scalar(unshift(x), ctx) for x, _ in g.pairs]
        nonnull = Filter(inp_get, tuple(CallUnary("not", CallUnary("is_null", o, BOOL), BOOL) for o in outer))
        eq = tuple((o, Column(width + j, gts[j])) for j, o in enumerate(outer))
        matched: Mir = Project(Join((nonnull, grouped), eq), tuple(range(width)) + (width + m,))  # type: ignore[arg-type]
        m_id, m_get = self._let(matched)
        unmatched = Map(Union((inp_get, Negate(Project(m_get, tuple(range(width)))))), (Literal(None, gts[m]),))
        return Let(inp_id, inp, Let(m_id, matched, Union((m_get, unmatched))))

    def _outer_keys(self, sub: HirRel, ctx: Ctx, n: int, width: int) -> list[int]:
        """The columns of the input (k outer + n local) that subquery `sub` reads: all of them
        when it reads a recursive binding lowered under the enclosing rows."""
        if any(self._rec[i][0] is not None for i in local_gets(sub) if i in self._rec):
            return list(range(width))
        inner = Ctx(None, ctx.levels + (n,))
        return sorted({ctx.at(inner.offset(lv) + i) for lv, i in free_columns(sub)})

    def _apply_subquery(self, inp: Mir, ctx: Ctx, n: int, sub: Exists | Select) -> Mir:
        """inp (k + n columns) ++ one column: the subquery's value for each row."""
        width = ctx.k + n
        if isinstance(sub, Select) and self._correlated(sub.rel):
            g = grouped_correlation(sub.rel, self._correlated)
            if g is not None:
                return self._grouped_subquery(inp, ctx, width, g)
        inp_id, inp_get = self._let(inp)
        d_id: str | None
        d_get: Mir
        used = list(range(width))
        if self._correlated(sub.rel):
            used = self._outer_keys(sub.rel, ctx, n, width)
            distinct = _distinct(Project(inp_get, tuple(used)))
            d_id, d_get = self._let(distinct)
            r = self.rel(sub.rel, ctx.enter(d_get, n, used))
            w = len(used)
        else:
            d_id, d_get = None, Constant((((), 1),), ())
            r = self.rel(sub.rel, TOP)
            w = 0
        rts = mir_types(r)
        keys = tuple(Column(i, rts[i]) for i in range(w))
        r_id, r_get = self._let(r)
        if isinstance(sub, Select) and exactly_one_row(sub.rel):
            v: Mir = r_get
        elif isinstance(sub, Select) and at_most_one_row(sub.rel):
            vt = rts[w]
            missing = Union((d_get, Negate(Project(r_get, tuple(range(w))))))
            v = Union((r_get, Map(missing, (Literal(None, vt),))))
        elif isinstance(sub, Select):
            if len(rts) != w + 1:
                raise SqlError("42601", "subquery must return only one column")
            vt = rts[w]
            counted = Reduce(r_get, keys, (AggregateExpr("count", Literal(True, BOOL), False, INT8), AggregateExpr("any_value", Column(w, vt), False, vt)))
            checked = Map(counted, (If(CallBinary("gt", Column(w, INT8), Literal(1, INT8), BOOL), raise_error("21000", SUBQUERY_ROWS_MESSAGE, vt), Column(w + 1, vt), vt),))
            found = Project(checked, tuple(range(w)) + (w + 2,))
            missing = Union((d_get, Negate(Project(counted, tuple(range(w))))))
            v = Union((found, Map(missing, (Literal(None, vt),))))
        else:
            present = Reduce(Project(r_get, tuple(range(w))), keys, ())
            missing = Union((d_get, Negate(present)))
            v = Union((Map(present, (Literal(True, BOOL),)), Map(missing, (Literal(False, BOOL),))))
        vt_all = mir_types(v)
        joined = Join((inp_get, v), tuple((Column(c, vt_all[j]), Column(width + j, vt_all[j])) for j, c in enumerate(used[:w])))
        body: Mir = Let(r_id, r, Project(joined, tuple(range(width)) + (width + w,)))
        if d_id is not None:
            body = Let(d_id, distinct, body)
        return Let(inp_id, inp, body)

    # ---- relations --------------------------------------------------------------------


def _rows_of(sub: HirRel) -> HirRel:
    """EXISTS S = EXISTS S' for S = Project/Map(S'): only whether S has rows matters, and
    its select list is not evaluated (as in PostgreSQL); Maps holding subqueries stay."""
    while isinstance(sub, HProject) or isinstance(sub, HMap) and not any(free_scalar_subqueries(e) for e in sub.scalars):
        sub = sub.input
    return sub
