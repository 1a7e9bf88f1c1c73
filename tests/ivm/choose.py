"""Where the generator's choices come from: a seeded `random.Random` (the CLI, reproducible by
seed) or hypothesis' `st.data()` (the CI test, `derandomize=True`). The generator only calls
`choice`, `randint` and `chance`, so both drive the same code."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Chooser(Protocol):
    def choice(self, seq: Sequence[T]) -> T: ...
    def randint(self, lo: int, hi: int) -> int: ...
    def chance(self, p: float) -> bool: ...


class SeededChooser:
    """Choices from `random.Random(f"ivm-{seed}")`: a program is a function of its seed."""

    def __init__(self, seed: int | str) -> None:
        self.rng = random.Random(f"ivm-{seed}")

    def choice(self, seq: Sequence[T]) -> T:
        return self.rng.choice(seq)

    def randint(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p


class HypothesisChooser:
    """Choices drawn from hypothesis (`data` is the object `st.data()` gives a test)."""

    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st
        self.data, self.st = data, st

    def choice(self, seq: Sequence[T]) -> T:
        return seq[self.data.draw(self.st.integers(0, len(seq) - 1))]

    def randint(self, lo: int, hi: int) -> int:
        return int(self.data.draw(self.st.integers(lo, hi)))

    def chance(self, p: float) -> bool:
        return int(self.data.draw(self.st.integers(0, 999))) < int(p * 1000)
