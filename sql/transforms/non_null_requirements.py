"""Non-null requirements (Materialize's NonNullRequirements): a column whose NULLs a predicate
above rejects needs no rows with NULL there, so the NULL rows that outer joins and subqueries
add (`Map(null)(missing)`) can go before they are computed.

    Filter(p)(.. Map(.., null as #c, ..)(x) ..) = Filter(p)(.. Constant[] ..)
        when p is NULL (or false) whenever #c is NULL, and only linear operators (Union,
        Negate, Threshold, Project, Map, Filter, FlatMap, Join, a Let's body, a Reduce's
        group key) lie between

A required column of a Join requires every column of its equivalence class (null-safe
equivalences: a NULL only meets a NULL), and so does a column that an input's own top
Filter declares `IS NOT NULL`; a required Map column requires the columns its expression is
strict in; a Constant keeps only rows without NULL in the required columns. Nothing is
required of a Let's value, a Reduce's aggregates or a TopK's input (other readers, and the
NULL rows count there).
"""

from __future__ import annotations

from dataclasses import replace

from sql import mir
from sql.scalar import CallBinary, CallUnary, Column, Literal, Scalar

# functions whose result is NULL whenever an argument is NULL
_STRICT_BINARY = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "add", "sub", "mul", "div", "div_avg", "mod"})
_STRICT_UNARY = frozenset({"cast", "not", "neg"})


def strict_columns(e: Scalar) -> set[int]:
    """The columns c such that e is NULL whenever c is NULL."""
    match e:
        case Column(index=i):
            return {i}
        case CallBinary(func=f, expr1=a, expr2=b) if f in _STRICT_BINARY:
            return strict_columns(a) | strict_columns(b)
        case CallUnary(func=f, expr=x) if f in _STRICT_UNARY:
            return strict_columns(x)
        case _:
            return set()


def rejected_nulls(p: Scalar) -> set[int]:
    """The columns whose NULL makes predicate p not true."""
    match p:
        case CallUnary(func="not", expr=CallUnary(func="is_null", expr=x)):
            return strict_columns(x)
        case _:
            return strict_columns(p)


def non_null_requirements(r: mir.Mir) -> mir.Mir:
    return _nnr(r, frozenset())


def _empty(r: mir.Mir) -> mir.Mir:
    return mir.Constant((), mir.mir_types(r))


def _declared_non_null(x: mir.Mir) -> set[int]:
    """Columns that x's own top Filter (under Projects) keeps non-null."""
    match x:
        case mir.Filter(input=i, predicates=ps):
            out = set(_declared_non_null(i))
            for p in ps:
                if isinstance(p, CallUnary) and p.func == "not" and isinstance(p.expr, CallUnary) \
                        and p.expr.func == "is_null" and isinstance(p.expr.expr, Column):
                    out.add(p.expr.expr.index)
            return out
        case mir.Project(input=i, outputs=o):
            below = _declared_non_null(i)
            return {j for j, c in enumerate(o) if c in below}
        case _:
            return set()


def _nnr(r: mir.Mir, req: frozenset[int]) -> mir.Mir:
    match r:
        case mir.Constant(rows=rows) if req:
            keep = tuple((row, d) for row, d in rows if all(row[c] is not None for c in req))
            return r if len(keep) == len(rows) else replace(r, rows=keep)
        case mir.Constant() | mir.Get():
            return r
        case mir.Let(value=v, body=b):
            v2, b2 = _nnr(v, frozenset()), _nnr(b, req)
            return r if v2 is v and b2 is b else mir.Let(r.id, v2, b2)
        case mir.LetRec(values=vs, body=b):
            vs2, b2 = tuple(_nnr(v, frozenset()) for v in vs), _nnr(b, req)
            return r if b2 is b and all(x is y for x, y in zip(vs, vs2, strict=True)) else replace(r, values=vs2, body=b2)
        case mir.Project(input=x, outputs=o):
            return _with_input(r, x, frozenset(o[c] for c in req))
        case mir.Map(input=x, scalars=ss):
            n = mir.arity(x)
            need = set(req)
            for c in range(n + len(ss) - 1, n - 1, -1):  # scalars read only earlier columns
                if c in need:
                    e = ss[c - n]
                    if isinstance(e, Literal) and e.value is None:
                        return _empty(r)
                    need |= strict_columns(e)
            return _with_input(r, x, frozenset(c for c in need if c < n))
        case mir.FlatMap(input=x):
            n = mir.arity(x)
            return _with_input(r, x, frozenset(c for c in req if c < n))
        case mir.Filter(input=x, predicates=ps):
            need = set(req)
            for p in ps:
                need |= rejected_nulls(p)
            return _with_input(r, x, frozenset(need))
        case mir.Union(inputs=xs):
            ys = tuple(_nnr(x, req) for x in xs)
            return r if all(x is y for x, y in zip(xs, ys, strict=True)) else replace(r, inputs=ys)
        case mir.Negate(input=x) | mir.Threshold(input=x) | mir.ArrangeBy(input=x):
            return _with_input(r, x, req)
        case mir.Reduce(input=x, group_key=key):
            return _with_input(r, x, frozenset(key[c].index for c in req if c < len(key) and isinstance(key[c], Column)))  # type: ignore[union-attr]
        case mir.TopK(input=x):
            return _with_input(r, x, frozenset())
        case mir.Join(inputs=xs, equivalences=eq):
            offsets = [0]
            for x in xs:
                offsets.append(offsets[-1] + mir.arity(x))
            need = set(req)
            for j, x in enumerate(xs):
                need |= {offsets[j] + c for c in _declared_non_null(x)}
            for cls in eq:
                cols = {e.index for e in cls if isinstance(e, Column)}
                if cols & need:
                    need |= cols
            joined = tuple(_nnr(x, frozenset(c - offsets[j] for c in need if offsets[j] <= c < offsets[j + 1]))
                           for j, x in enumerate(xs))
            return r if all(x is y for x, y in zip(xs, joined, strict=True)) else replace(r, inputs=joined)
        case _:
            raise AssertionError(f"unexpected MIR node {type(r).__name__}")


def _with_input(r, x: mir.Mir, req: frozenset[int]) -> mir.Mir:
    y = _nnr(x, req)
    return r if y is x else replace(r, input=y)

