"""Admission control for statements that run Spark jobs.

At most `slots` such statements run at once; the others wait in a queue of at most `queue`
entries (first come, first served). A statement arriving at a full queue fails at once with
53300 (too_many_connections: the server's capacity, not the statement, is the problem); one
waiting is cancelled or timed out as usual (57014), through `check_interrupt`. Statements that
need no Spark job (constants, catalog reads, fast-path answers) never pass through here, so
they are never queued behind Spark work.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sql.errors import SqlError

TOO_MANY = "53300"
# a one-task query's job leaves the driver idle for most of its time (planning, py4j, result
# encoding), so more statements than cores may run; the rest wait their turn
DEFAULT_CONCURRENT_QUERIES = 8
DEFAULT_QUEUED_QUERIES = 1000
POLL_S = 0.05


class Admission:
    def __init__(self, slots: int, queue: int) -> None:
        if slots < 1 or queue < 0:
            raise ValueError("admission needs at least one slot and a non-negative queue")
        self.slots = slots
        self.queue = queue
        self._cond = threading.Condition()
        self._running = 0
        self._waiting: list[object] = []  # tickets in arrival order
        self.admitted = 0
        self.refused = 0

    @property
    def running(self) -> int:
        return self._running

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    @contextmanager
    def slot(self, check_interrupt: Callable[[], None] = lambda: None) -> Iterator[None]:
        """Hold one slot for the duration of the block."""
        self._acquire(check_interrupt)
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    def _acquire(self, check_interrupt: Callable[[], None]) -> None:
        with self._cond:
            if self._running < self.slots and not self._waiting:
                self._running += 1
                self.admitted += 1
                return
            if len(self._waiting) >= self.queue:
                self.refused += 1
                raise SqlError(TOO_MANY, f"too many queries waiting for compute ({self._running} running, "
                               f"{len(self._waiting)} waiting)",
                               hint="Retry the statement later, or raise --max-queued-queries.")
            ticket = object()
            self._waiting.append(ticket)
            try:
                while not (self._running < self.slots and self._waiting[0] is ticket):
                    self._cond.wait(POLL_S)
                    check_interrupt()  # cancel / statement_timeout while queued
            except BaseException:
                self._waiting.remove(ticket)
                self._cond.notify_all()
                raise
            self._waiting.pop(0)
            self._running += 1
            self.admitted += 1
            self._cond.notify_all()
