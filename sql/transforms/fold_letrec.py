"""Constant folding of closed recursions: a LetRec whose bindings read only constants and
each other is computed while planning.

- LetRec(ids, values, body) = Let(id, Constant(fixpoint(id)), ..)(body), for the ids the body
  reads, when every value is closed: it reads only Constants, the LetRec's ids and ids bound
  inside it, through the operators below. The fixpoint is iterated exactly as the renderer
  iterates it (sql.recursion.fixpoint: binding order, latest values, RETURN AT / ERROR AT
  RECURSION LIMIT), evaluating each binding over the current values:
    Constant(rows) = rows;  Get(id) = id's current value;  ArrangeBy(x) = x
    Map / Filter / Project = FoldConstants' evaluation (the same scalar semantics)
    Union(xs) = the rows of all xs;  Negate(x) = x with negated diffs
    Threshold(x) = the rows of consolidate(x) with a positive diff
    Join(xs, classes) = the product of the inputs' rows (diffs multiplied) where the scalars
      of every class are non-null and equal
    Reduce(x, keys, no aggregates) = the distinct keys of x (every consolidated diff positive)
    Let(id, v, b) = b with id = v;  an inner LetRec = its own fixpoint, likewise
  consolidate(rows) sums each row's diffs and drops zeros; a binding changed iff its
  consolidated value changed. An accumulating binding `x = a UNION ALL .. UNION ALL x` is
  evaluated as the renderer does: x(new) = (a + ..)(current) + x(old), changed iff the
  added rows consolidate to non-zero.
- Anything else is left to the renderer, whose errors are the reference: a scalar or
  operator not above, an evaluation that would fail (overflow, division by zero, a
  cast's error, ERROR AT RECURSION LIMIT, no fixpoint), a value that is not exactly
  comparable (floats, arrays, records, ...), more than MAX_ROWS rows in one relation, more
  than MAX_ITERATIONS iterations, or more than MAX_WORK rows produced in all.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sql import mir
from sql.errors import SqlError
from sql.recursion import fixpoint
from sql.scalar import Scalar
from sql.transforms.fold_constants import NotFoldable, eval_scalar, foldable
from sql.transforms.visit import map_children

MAX_ROWS = 10_000
MAX_ITERATIONS = 1_000
MAX_WORK = 500_000

Rows = list[tuple[tuple[Any, ...], int]]
# column types whose Python values are equal exactly when Postgres' values are
_EQUALITY_TYPES = frozenset({"int2", "int4", "int8", "numeric", "bool", "text", "varchar", "bytea", "date"})


def fold_letrec(r: mir.Mir) -> mir.Mir:
    r = map_children(r, fold_letrec)
    if not isinstance(r, mir.LetRec) or not _closed_letrec(r, frozenset()):
        return r
    try:
        values = _Evaluator().letrec_values(r, {})
    except (NotFoldable, SqlError, ArithmeticError, TypeError, ValueError):
        return r
    body = r.body
    read = _local_reads(body)
    for lid, typs, rows in reversed(list(zip(r.ids, r.types, values, strict=True))):
        if lid in read:
            body = mir.Let(lid, mir.Constant(tuple(rows), typs), body)
    return body


def _closed_letrec(r: mir.LetRec, bound: frozenset[str]) -> bool:
    inner = bound | frozenset(r.ids)
    return all(_closed(v, inner) for v in r.values)


def _closed(r: mir.Mir, bound: frozenset[str]) -> bool:
    """Does r read only Constants and the ids `bound`, through operators _Evaluator evaluates?"""
    match r:
        case mir.Constant():
            return True
        case mir.Get(id=i, local=local):
            return local and i in bound
        case mir.Let(id=i, value=v, body=b):
            return _closed(v, bound) and _closed(b, bound | {i})
        case mir.LetRec(body=b):
            return _closed_letrec(r, bound) and _closed(b, bound | frozenset(r.ids))
        case mir.Map(input=x, scalars=ss):
            return all(foldable(s) for s in ss) and _closed(x, bound)
        case mir.Filter(input=x, predicates=ps):
            return all(foldable(p) for p in ps) and _closed(x, bound)
        case mir.Reduce(input=x, group_key=ks, aggregates=()):
            return all(foldable(k) for k in ks) and _closed(x, bound)
        case mir.Join(inputs=xs, equivalences=cs):
            return all(foldable(s) and s.typ.name in _EQUALITY_TYPES and s.typ.name == c[0].typ.name
                       for c in cs for s in c) and all(_closed(x, bound) for x in xs)
        case mir.Project(input=x) | mir.Negate(input=x) | mir.Threshold(input=x) | mir.ArrangeBy(input=x):
            return _closed(x, bound)
        case mir.Union(inputs=xs):
            return all(_closed(x, bound) for x in xs)
        case _:
            return False


def _local_reads(r: mir.Mir) -> set[str]:
    out: set[str] = set()

    def walk(x: mir.Mir) -> mir.Mir:
        if isinstance(x, mir.Get) and x.local:
            out.add(x.id)
        return map_children(x, walk)

    walk(r)
    return out


def _exact(v: Any) -> bool:
    """Is v a value whose Python equality and hash are Postgres' equality?"""
    if v is None or type(v) in (bool, int, str, bytes, datetime.date):
        return True
    return isinstance(v, Decimal) and v.is_finite()


def consolidate(rows: Rows) -> Rows:
    """Each distinct row once, with the sum of its diffs, where non-zero (first-seen order)."""
    sums: dict[tuple[Any, ...], int] = {}
    for row, d in rows:
        if not all(_exact(v) for v in row):
            raise NotFoldable
        sums[row] = sums.get(row, 0) + d
    return [(row, d) for row, d in sums.items() if d]


@dataclass
class _Evaluator:
    """Evaluates closed MIR over constant rows, counting the rows it produces (MAX_WORK)."""

    work: int = 0

    def produced(self, rows: Rows) -> Rows:
        self.work += len(rows) + 1
        if len(rows) > MAX_ROWS or self.work > MAX_WORK:
            raise NotFoldable
        return rows

    def letrec_values(self, r: mir.LetRec, env: dict[str, Rows]) -> list[Rows]:
        """The consolidated fixpoint of r's bindings (the renderer's iteration)."""
        ids = r.ids
        env = {**env, **{i: [] for i in ids}}
        reads = tuple(frozenset(ids.index(i) for i in _local_reads(v) if i in ids) for v in r.values)
        acc = {k: others for k, (i, v) in enumerate(zip(ids, r.values, strict=True))
               if (others := _accumulation(i, v)) is not None}
        steps = 0

        def step(k: int) -> bool:
            nonlocal steps
            steps += 1
            if steps > MAX_ITERATIONS * len(ids):
                raise NotFoldable
            if k in acc:
                added = self.produced(consolidate([row for o in acc[k] for row in self.eval(o, env)]))
                env[ids[k]] = env[ids[k]] + added
                if len(env[ids[k]]) > MAX_ROWS:
                    raise NotFoldable
                return bool(added)
            new = consolidate(self.eval(r.values[k], env))
            old = env[ids[k]]
            env[ids[k]] = new
            return len(new) != len(old) or set(new) != set(old)  # (consolidated: distinct rows)

        fixpoint(r.limits, reads, step, max_iterations=MAX_ITERATIONS)
        return [consolidate(env[i]) for i in ids]

    def eval(self, r: mir.Mir, env: dict[str, Rows]) -> Rows:
        match r:
            case mir.Constant(rows=rows):
                return self.produced(list(rows))
            case mir.Get(id=i):
                return env[i]
            case mir.Let(id=i, value=v, body=b):
                return self.eval(b, {**env, i: self.eval(v, env)})
            case mir.LetRec(ids=ids, body=b):
                return self.eval(b, {**env, **dict(zip(ids, self.letrec_values(r, env), strict=True))})
            case mir.ArrangeBy(input=x):
                return self.eval(x, env)
            case mir.Map(input=x, scalars=ss):
                types = mir.mir_types(x)
                out = []
                for row, d in self.eval(x, env):
                    for s in ss:
                        row = row + (eval_scalar(s, row, types),)
                    out.append((row, d))
                return self.produced(out)
            case mir.Filter(input=x, predicates=ps):
                types = mir.mir_types(x)
                return self.produced([(row, d) for row, d in self.eval(x, env)
                                      if all(eval_scalar(p, row, types) is True for p in ps)])
            case mir.Project(input=x, outputs=o):
                return self.produced([(tuple(row[i] for i in o), d) for row, d in self.eval(x, env)])
            case mir.Union(inputs=xs):
                return self.produced([row for x in xs for row in self.eval(x, env)])
            case mir.Negate(input=x):
                return self.produced([(row, -d) for row, d in self.eval(x, env)])
            case mir.Threshold(input=x):
                return self.produced([(row, d) for row, d in consolidate(self.eval(x, env)) if d > 0])
            case mir.Reduce(input=x, group_key=ks, aggregates=()):
                types = mir.mir_types(x)
                keyed = consolidate([(tuple(eval_scalar(k, row, types) for k in ks), d) for row, d in self.eval(x, env)])
                if any(d < 0 for _, d in keyed):
                    raise NotFoldable  # a negative group count: the renderer's error
                return self.produced([(row, 1) for row, _ in keyed])
            case mir.Join(inputs=xs, equivalences=cs):
                return self.join([self.eval(x, env) for x in xs], cs, mir.mir_types(r))
            case _:
                raise NotFoldable

    def join(self, inputs: list[Rows], classes: tuple[tuple[Scalar, ...], ...], types: Any) -> Rows:
        out: Rows = [((), 1)]
        for rows in inputs:
            if len(out) * len(rows) > MAX_ROWS * 10:
                raise NotFoldable
            out = [(a + b, da * db) for a, da in out for b, db in rows]
            self.work += len(out)
        return self.produced([(row, d) for row, d in out if all(_equal(c, row, types) for c in classes)])


def _equal(cls: tuple[Scalar, ...], row: tuple[Any, ...], types: Any) -> bool:
    vs = [eval_scalar(s, row, types) for s in cls]
    if not all(_exact(v) for v in vs):
        raise NotFoldable
    return vs[0] is not None and all(v == vs[0] for v in vs[1:])


def _accumulation(lid: str, value: mir.Mir) -> tuple[mir.Mir, ...] | None:
    """For `lid = a UNION ALL .. UNION ALL lid` (lid read once, as it is): the other inputs."""
    if not isinstance(value, mir.Union):
        return None
    selfs = [x for x in value.inputs if isinstance(x, mir.Get) and x.id == lid]
    others = tuple(x for x in value.inputs if not (isinstance(x, mir.Get) and x.id == lid))
    if len(selfs) != 1 or any(lid in _local_reads(x) for x in others):
        return None
    return others

