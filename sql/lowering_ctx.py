"""The lowering's context (sql.lowering): where the enclosing scopes' columns are, and the
state every lowering step shares (parameters, the query time, local ids, recursive
bindings in scope)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sql.errors import SqlError
from sql.hir import HirRel, HirScalar
from sql.hir_analysis import free_levels, local_gets
from sql.mir import Get, Join, Mir, Reduce, mir_types
from sql.scalar import CallBinary, Column, Literal, Scalar
from sql.types import TEXT, SqlType


@dataclass(frozen=True, slots=True)
class Ctx:
    """The outer relation (None at top level) and the arities of the enclosing scopes,
    outermost first. `cols`: where each column of the enclosing scopes (their concatenation,
    sum(levels) of them) is among the outer relation's columns, -1 where it is absent; None:
    all of them, in order. A subquery is lowered under the distinct values of only the
    enclosing columns it reads, as Materialize's decorrelation does."""

    outer: Mir | None = None
    levels: tuple[int, ...] = ()
    cols: tuple[int, ...] | None = None

    @property
    def k(self) -> int:
        """The number of the outer relation's columns."""
        return sum(self.levels) if self.cols is None else sum(1 for c in self.cols if c >= 0)

    def offset(self, level: int) -> int:
        if level > len(self.levels):
            raise SqlError("XX000", f"outer reference to level {level} beyond {len(self.levels)} scopes")
        return sum(self.levels[: len(self.levels) - level])

    def at(self, p: int) -> int:
        """The column of an input (k outer columns, then local ones) holding column p of the
        enclosing scopes' concatenation followed by the local columns."""
        full_k = sum(self.levels)
        if p >= full_k:
            return self.k + p - full_k
        c = p if self.cols is None else self.cols[p]
        if c < 0:
            raise SqlError("XX000", f"enclosing column {p} was not kept for this subquery")
        return c

    def enter(self, outer: Mir, n: int, used: list[int]) -> Ctx:
        """The context of a scope nested in this one, whose input has this context's k outer
        columns then n local ones, lowered under `outer` = the distinct values of the input
        columns `used`, in that order."""
        full = (self.cols if self.cols is not None else tuple(range(sum(self.levels)))) + tuple(range(self.k, self.k + n))
        pos = {c: j for j, c in enumerate(used)}
        return Ctx(outer, self.levels + (n,), tuple(pos.get(c, -1) if c >= 0 else -1 for c in full))


TOP = Ctx()


TOP = Ctx()


def _distinct(x: Mir) -> Mir:
    """Distinct(x) = Reduce(x, group_key=all columns, no aggregates)."""
    return Reduce(x, tuple(Column(i, t) for i, t in enumerate(mir_types(x))), ())


def raise_error(sqlstate: str, message: str, typ: SqlType) -> Scalar:
    return CallBinary("raise_error", Literal(sqlstate, TEXT), Literal(message, TEXT), typ)


class LowererBase:
    """What every lowering step shares; `rel` and `scalar` are sql.lowering.Lowerer's."""

    def __init__(self, params: list[Any] | None = None, param_types: tuple[SqlType, ...] = (), now: int | None = None) -> None:
        self.params = params or []
        self.param_types = param_types
        self.now = now  # the query timestamp that mz_now() stands for (None: keep mz_now())
        self._next_local = 0
        # HIR id of each recursive binding in scope -> (the outer relation it was lowered
        # under, its MIR Get: outer columns ++ declared columns)
        self._rec: dict[str, tuple[Mir | None, Get]] = {}

    # ---- helpers ----------------------------------------------------------------------
    def _let(self, value: Mir) -> tuple[str, Get]:
        lid = f"l{self._next_local}"
        self._next_local += 1
        return lid, Get(lid, lid, mir_types(value), local=True)

    @staticmethod
    def _cross(outer: Mir | None, x: Mir) -> Mir:
        return x if outer is None else Join((outer, x), ())

    def _correlated(self, sub: HirRel) -> bool:
        """Does `sub` depend on the enclosing rows: outer columns, or a recursive binding that
        was lowered under an outer relation?"""
        if free_levels(sub):
            return True
        return any(self._rec[i][0] is not None for i in local_gets(sub) if i in self._rec)

    if TYPE_CHECKING:  # sql.lowering.Lowerer defines them; declared here for the subquery steps
        def rel(self, r: HirRel, ctx: Ctx = TOP) -> Mir: ...

        def scalar(self, e: HirScalar, ctx: Ctx) -> Scalar: ...
