"""The arrangement spine's pure parts (compute.render.arrangement): the geometric merge
policy and the key restrictions (no Spark is started)."""

from __future__ import annotations

from compute.render.arrangement import (
    MAX_BATCHES,
    Restriction,
    Spine,
    hash_literal,
    key_hash,
    merge_decision,
)
from compute.render.oneshot import Rel


def test_first_batch_becomes_the_base() -> None:
    assert merge_decision(0, [5]) == ("base", 1)
    assert merge_decision(0, []) == ("none", 0)


def test_small_batches_stay_until_they_pass_a_fraction_of_the_base() -> None:
    assert merge_decision(1000, [1, 1, 1]) == ("none", 0)
    assert merge_decision(1000, [100, 100]) == ("none", 0)
    assert merge_decision(1000, [200, 51]) == ("base", 2)


def test_too_many_batches_merge_the_newest() -> None:
    assert merge_decision(10**6, [1] * MAX_BATCHES) == ("none", 0)
    # back to half the limit, and on while the older batch is no larger than the merged ones
    assert merge_decision(10**6, [1000, 50, 9, 1, 1, 1, 1, 1, 1]) == ("batches", 6)
    assert merge_decision(10**6, [1] * (MAX_BATCHES + 1)) == ("batches", MAX_BATCHES + 1)


def _simulate(base: int, per_step: int, steps: int) -> tuple[int, int, int]:
    """(rows rewritten by batch merges, batch merges, base rebuilds) of `steps` appends."""
    batches: list[int] = []
    rewritten = merges = rebuilds = 0
    for _ in range(steps):
        batches.append(per_step)
        match merge_decision(base, batches):
            case ("base", _):
                base, batches, rebuilds = base + sum(batches), [], rebuilds + 1
            case ("batches", k):
                batches = [*batches[:-k], sum(batches[-k:])]
                rewritten, merges = rewritten + batches[-1], merges + 1
        assert len(batches) <= MAX_BATCHES
    return rewritten, merges, rebuilds


def test_merges_are_geometric() -> None:
    """One-row steps on a big base: per step, few rows re-merged and a merge every few
    steps, the same whatever the base's size; the base is rebuilt O(log) times."""
    for base in (10**6, 16 * 10**6):
        rewritten, merges, rebuilds = _simulate(base, 1, 20_000)
        assert rewritten / 20_000 < 200 and merges / 20_000 < 0.3 and rebuilds == 0
    _, _, rebuilds = _simulate(1000, 10, 20_000)
    assert rebuilds <= 25  # 1000 -> 201000 rows by factors of 1.25 (log_1.25 201 = 23.8)


def test_restriction_predicates() -> None:
    assert Restriction(hashes=()).predicate() == "FALSE"
    assert Restriction(hashes=(3, -2)).predicate() == "__h IN (3L, -2L)"
    assert Restriction(relation="SELECT 1 AS __h").predicate() == "__h IN (SELECT __h FROM (SELECT 1 AS __h))"
    assert hash_literal(-(2**63)) == "(-9223372036854775807L - 1L)"
    assert key_hash([]) == "xxhash64(42)"
    assert key_hash(["c0", "c1"]) == "xxhash64(42, c0, c1)"


def test_reads_union_base_and_batches_under_one_restriction() -> None:
    empty = Spine(2)
    r = empty.read(Restriction(hashes=(1,)), Rel("SELECT 1 AS c0, 2 AS c1, 1 AS diff", 2))
    assert r.sql.endswith("WHERE FALSE") and r.arity == 2
