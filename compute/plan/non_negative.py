"""Static analysis: can a plan's output contain negative multiplicities?

non_negative(Negate(x)) = false; Reduce, TopK, Threshold = true (they consolidate and check);
Constant = all diffs > 0; storage Get = true (reads are consolidated when the shard holds
retractions); Mfp/ArrangeBy = their input; Join/Union = all inputs; Let = its body with the
binding's value known; LetRec = its body with every recursive binding unknown (false).
"""

from __future__ import annotations

from typing import assert_never

from compute.plan import lir


def non_negative(p: lir.Plan, env: dict[str, bool] | None = None) -> bool:
    env = {} if env is None else env
    n = p.node
    match n:
        case lir.Constant(rows=rows):
            return all(d > 0 for _, d in rows)
        case lir.Get(id=i, local=loc):
            return env.get(i, False) if loc else True
        case lir.MfpNode(input=i) | lir.FlatMap(input=i) | lir.ArrangeBy(input=i):
            return non_negative(i, env)
        case lir.Join(inputs=xs) | lir.Union(inputs=xs):
            return all(non_negative(x, env) for x in xs)
        case lir.Reduce() | lir.TopK() | lir.Threshold():
            return True
        case lir.Negate():
            return False
        case lir.Let(id=i, value=v, body=b):
            return non_negative(b, {**env, i: non_negative(v, env)})
        case lir.LetRec(ids=ids, body=b):
            return non_negative(b, {**env, **dict.fromkeys(ids, False)})
        case _:
            assert_never(n)
