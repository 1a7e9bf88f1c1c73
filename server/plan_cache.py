"""Plans by statement text: a statement prepared again (psycopg's unnamed statements, the
simple-query protocol, every session sending the same text) reuses the plan bound the first
time, skipping parsing and binding.

A plan is bound from the statement's text and parameter types, the catalog (its version
changes with every DDL, temporary items included), and the session's user, database, search
path and IntervalStyle; the key holds all of them. A plan that read anything else while being
bound (a session function's value, a catalog relation's current rows, a temporary item:
server.resolver.Resolver.volatile) is not cached, nor is any plan of a session that has
temporary items (they shadow other items). Cached plans are shared between sessions and
never mutated.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

CAPACITY = 1024


class PlanCache:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._lock = threading.Lock()
        self._plans: OrderedDict[Hashable, Any] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> Any:
        with self._lock:
            got = self._plans.get(key)
            if got is None:
                self.misses += 1
                return None
            self._plans.move_to_end(key)
            self.hits += 1
            return got

    def put(self, key: Hashable, plan: Any) -> None:
        with self._lock:
            self._plans[key] = plan
            self._plans.move_to_end(key)
            while len(self._plans) > self.capacity:
                self._plans.popitem(last=False)
