"""Bottom-up MIR analyses shared by transforms (pure; no rewriting here).

- non_negative(r): every row of r has a positive multiplicity (storage reads are
  consolidated; Reduce/TopK/Threshold emit positive counts; Negate does not)
- unique_keys(r): sets of output columns on which r holds at most one row, and that row
  with multiplicity 1 (so a Reduce grouped by a superset sees singleton groups)
- local_ids(r): the local (Let/LetRec-bound) ids r reads
Ids bound by a LetRec are never in `env`: nothing is known of a recursive binding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, assert_never

from sql import mir
from sql.scalar import Column

Memo = dict[int, tuple[mir.Mir, object]]  # id(node) -> (node, result): one transform run


_T = TypeVar("_T")


def _memoized(analysis: Callable[[mir.Mir, dict[str, _T], Memo | None], _T], r: mir.Mir,
              env: dict[str, _T] | None, memo: Memo | None) -> _T:
    """`analysis(r)`, looked up in and recorded into `memo` (one transform run) when given."""
    if memo is None:
        return analysis(r, {} if env is None else env, None)
    hit = memo.get(id(r))
    if hit is not None and hit[0] is r:
        return hit[1]  # type: ignore[return-value]
    out = analysis(r, {} if env is None else env, memo)
    memo[id(r)] = (r, out)
    return out


def non_negative(r: mir.Mir, env: dict[str, bool] | None = None, memo: Memo | None = None) -> bool:
    return _memoized(_non_negative, r, env, memo)


def _non_negative(r: mir.Mir, env: dict[str, bool], memo: Memo | None) -> bool:
    def non_negative(x: mir.Mir, e: dict[str, bool]) -> bool:  # the recursion, memoized
        return _memo_non_negative(x, e, memo)

    match r:
        case mir.Constant(rows=rows):
            return all(d > 0 for _, d in rows)
        case mir.Get(id=i, local=loc):
            return env.get(i, False) if loc else True
        case mir.Let(id=i, value=v, body=b):
            return non_negative(b, {**env, i: non_negative(v, env)})
        case mir.LetRec(body=b):
            return non_negative(b, env)  # recursive ids are unknown (not in env): negative
        case mir.Project(input=x) | mir.Map(input=x) | mir.FlatMap(input=x) | mir.Filter(input=x) | mir.ArrangeBy(input=x):
            return non_negative(x, env)
        case mir.Join(inputs=xs) | mir.Union(inputs=xs):
            return all(non_negative(x, env) for x in xs)
        case mir.Reduce() | mir.TopK() | mir.Threshold():
            return True
        case mir.Negate():
            return False
        case _:
            assert_never(r)


Keys = frozenset[frozenset[int]]


def unique_keys(r: mir.Mir, env: dict[str, Keys] | None = None, memo: Memo | None = None) -> Keys:
    return _memoized(_unique_keys, r, env, memo)


def _unique_keys(r: mir.Mir, env: dict[str, Keys], memo: Memo | None) -> Keys:
    def unique_keys(x: mir.Mir, e: dict[str, Keys]) -> Keys:  # the recursion, memoized
        return _memo_unique_keys(x, e, memo)

    match r:
        case mir.Constant(rows=rows, types=ts):
            seen = [_equality_row(row, ts) for row, _ in rows]
            if all(d == 1 for _, d in rows) and _distinct(seen):
                return frozenset({frozenset(range(len(r.types)))})
            return frozenset()
        case mir.Get(id=i, local=loc):
            return env.get(i, frozenset()) if loc else frozenset()
        case mir.Let(id=i, value=v, body=b):
            return unique_keys(b, {**env, i: unique_keys(v, env)})
        case mir.LetRec(body=b):
            return unique_keys(b, env)  # recursive ids are unknown: no keys
        case mir.Map(input=x) | mir.Filter(input=x) | mir.ArrangeBy(input=x):
            return unique_keys(x, env)
        case mir.Threshold(input=x):
            return unique_keys(x, env) if non_negative(x) else frozenset()
        case mir.Project(input=x, outputs=o):
            out = set()
            for k in unique_keys(x, env):
                if all(c in o for c in k):
                    out.add(frozenset(o.index(c) for c in k))
            return frozenset(out)
        case mir.Reduce(group_key=key):
            return frozenset({frozenset(range(len(key)))})  # one row per group (empty key: <= 1 row)
        case mir.TopK(input=x, group_key=g, limit=lim):
            ks = set(unique_keys(x, env))
            if lim == 1:
                ks.add(frozenset(g))
            return frozenset(ks)
        case mir.Join(inputs=xs, equivalences=eq):
            return _join_keys(xs, eq, env, memo)
        case mir.FlatMap() | mir.Negate() | mir.Union():
            return frozenset()
        case _:
            assert_never(r)


def _join_keys(xs: tuple[mir.Mir, ...], eq, env: dict[str, Keys], memo: Memo | None) -> Keys:
    """A union of one key per input is a key of the join. An input whose key columns are all
    equated to columns of inputs still kept is determined by them (each combination of their
    rows meets at most one of its rows), so it is dropped from the key, greedily."""
    offsets = [0]
    for x in xs:
        offsets.append(offsets[-1] + mir.arity(x))

    owners = [i for i in range(len(xs)) for _ in range(offsets[i], offsets[i + 1])]

    def owner(c: int) -> int:
        return owners[c]

    bound: dict[int, set[int]] = {}  # column -> inputs owning a column equated to it
    for cls in eq:
        cols = [c.index for c in cls if isinstance(c, Column)]
        for c in cols:
            bound.setdefault(c, set()).update(owner(d) for d in cols if owner(d) != owner(c))
    per = [_memo_unique_keys(x, env, memo) for x in xs]
    kept = set(range(len(xs)))
    for i in range(len(xs)):
        others = kept - {i}
        if any(all(bound.get(offsets[i] + c, set()) & others for c in k) for k in per[i]):
            kept.discard(i)
    key: frozenset[int] = frozenset()
    for i in sorted(kept):
        if not per[i]:
            return frozenset()
        k = min(per[i], key=lambda s: (len(s), sorted(s)))
        key |= frozenset(offsets[i] + c for c in k)
    return frozenset({key})


def hashable(x: object) -> bool:
    """Array literals hold lists: such values (and scalars or plans holding them) don't hash."""
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _equality_row(row: tuple, types: tuple) -> tuple:
    """`row` with each jsonb value replaced by its equality key: rows are distinct when `=`
    tells them apart (jsonb '1.0' = '1' though their texts differ)."""
    if not any(t.name == "jsonb" for t in types):
        return row
    from sql.jsonb import equality_key

    return tuple(equality_key(v) if t.name == "jsonb" and isinstance(v, str) else v for v, t in zip(row, types, strict=True))


def _distinct(rows: list) -> bool:
    if all(hashable(row) for row in rows):
        return len(set(rows)) == len(rows)
    return all(a != b for i, a in enumerate(rows) for b in rows[i + 1:])


def local_ids(r: mir.Mir, acc: set[str] | None = None) -> set[str]:
    acc = set() if acc is None else acc
    if isinstance(r, mir.Get) and r.local:
        acc.add(r.id)
    for c in mir.mir_children(r):
        local_ids(c, acc)
    return acc


_memo_non_negative = non_negative
_memo_unique_keys = unique_keys
