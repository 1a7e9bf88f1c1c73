"""An elastic thread pool for the connections' blocking work (planning, Spark calls, encoding).

Threads start on demand up to `max_workers` and exit after `idle_s` without work, so a burst
of sessions does not leave threads behind; each thread that talked to Spark holds a py4j
socket and a JVM thread, given back when the thread exits. A statement waiting for a compute
slot (server.admission) holds a thread, so `max_workers` is far above the admission slots:
constant queries always find a thread.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

_Item = tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]] | None


class ElasticExecutor(Executor):
    def __init__(self, max_workers: int, idle_s: float = 10.0, name: str = "worker") -> None:
        self.max_workers = max_workers
        self.idle_s = idle_s
        self.name = name
        self._q: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()
        self._idle = 0  # idle threads not yet promised to a submitted item
        self._backlog = 0  # items submitted while every thread was busy, at max_workers
        self._n = 0
        self._shutdown = False

    @property
    def threads(self) -> int:
        return len(self._threads)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        f: Future[Any] = Future()
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot submit after shutdown")
            if self._idle > 0:
                self._idle -= 1  # an idle thread takes it
            elif len(self._threads) < self.max_workers:
                self._n += 1
                t = threading.Thread(target=self._work, name=f"{self.name}_{self._n}", daemon=True)
                self._threads.add(t)
                t.start()
            else:
                self._backlog += 1  # the next thread to finish takes it
            self._q.put((f, fn, args, kwargs))
        return f

    def _work(self) -> None:
        me = threading.current_thread()
        while True:
            try:
                item = self._q.get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # nobody counts on this thread: leave
                        self._idle -= 1
                        self._threads.discard(me)
                        return
                continue  # promised to an item being put
            if item is None:
                with self._lock:
                    self._threads.discard(me)
                return
            f, fn, args, kwargs = item
            ok, value = False, None
            if f.set_running_or_notify_cancel():
                try:
                    value, ok = fn(*args, **kwargs), True
                except BaseException as e:  # noqa: BLE001 - handed to the waiter
                    value = e
            # free before the waiter wakes: its next item finds this thread
            with self._lock:
                if self._backlog > 0:
                    self._backlog -= 1
                else:
                    self._idle += 1
            if ok:
                f.set_result(value)
            elif value is not None:
                f.set_exception(value)
            del item, f, fn, args, kwargs, value

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shutdown = True
            threads = list(self._threads)
        if cancel_futures:
            while True:
                try:
                    item = self._q.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[0].cancel()
        for _ in threads:
            self._q.put(None)
        if wait:
            for t in threads:
                t.join()
