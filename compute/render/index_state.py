"""An index's state: its output collection kept in Spark (a consolidated local checkpoint).

`merged(Δ)` builds the next state (state + Δ, consolidated) without touching the current one;
`swap` installs it. Readers `acquire()` the current state and release it when their query is
done, so a state replaced meanwhile is freed only after its last reader (DESIGN §5.2: for now
a flat collection re-merged at every change, O(state); the spine comes with delta rendering).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from compute.render.recompute import checkpointed, consolidated, free


class IndexState:
    def __init__(self, snapshot: DataFrame) -> None:
        self._lock = threading.Lock()
        self._df = checkpointed(consolidated(snapshot))
        self._view = _register(self._df)
        self._users: dict[int, int] = {}
        self._retired: list[tuple[DataFrame, str]] = []

    def merged(self, delta: DataFrame) -> DataFrame | None:
        """The next state, stored; None when `delta` is empty."""
        if delta.isEmpty():
            return None
        with self._lock:
            cur = self._df
        return checkpointed(consolidated(cur.unionByName(delta)))

    def swap(self, df: DataFrame) -> None:
        view = _register(df)
        with self._lock:
            old = (self._df, self._view)
            self._df, self._view = df, view
            self._retired.append(old)
        self._free_unused()

    def acquire(self) -> tuple[str, Callable[[], None]]:
        """The current state as a global temporary view name, and `release`."""
        with self._lock:
            key = id(self._df)
            self._users[key] = self._users.get(key, 0) + 1
            view = self._view

        def release() -> None:
            with self._lock:
                self._users[key] -= 1
                if not self._users[key]:
                    del self._users[key]
            self._free_unused()
        return view, release

    def lookup(self, columns: Sequence[str], values: Sequence[object]) -> DataFrame:
        """The state's rows whose `columns` equal `values` (a point lookup by the key)."""
        with self._lock:
            df = self._df
        cond = F.lit(True)
        for c, v in zip(columns, values, strict=True):
            cond = cond & (F.col(c).isNull() if v is None else F.col(c) == F.lit(v))
        return df.where(cond)

    def rows(self) -> int:
        with self._lock:
            df = self._df
        return df.count()

    def _free_unused(self) -> None:
        with self._lock:
            keep, done = [], []
            for df, view in self._retired:
                (keep if id(df) in self._users else done).append((df, view))
            self._retired = keep
        for df, view in done:
            _drop(df, view)

    def retire(self) -> None:
        """Free the state once its last reader releases it (no new reader acquires it)."""
        with self._lock:
            self._retired.append((self._df, self._view))
        self._free_unused()

    def close(self) -> None:
        with self._lock:
            every = [*self._retired, (self._df, self._view)]
            self._retired = []
        for df, view in every:
            _drop(df, view)


def _register(df: DataFrame) -> str:
    name = f"mzi_{uuid.uuid4().hex}"
    df.createOrReplaceGlobalTempView(name)
    return name


def _drop(df: DataFrame, view: str) -> None:
    df.sparkSession.catalog.dropGlobalTempView(view)
    free(df)
