"""The connections' elastic thread pool: grows on demand up to its bound, runs every item,
and its threads leave after being idle (so their py4j sockets close)."""

from __future__ import annotations

import threading
import time

from server.pgwire.worker_pool import ElasticExecutor


def test_grows_to_its_bound_and_runs_everything() -> None:
    pool = ElasticExecutor(4, idle_s=0.2)
    gate = threading.Event()
    running = []
    lock = threading.Lock()

    def job(i: int) -> int:
        with lock:
            running.append(i)
        gate.wait(5)
        return i * 2

    futs = [pool.submit(job, i) for i in range(10)]
    time.sleep(0.3)
    assert pool.threads == 4 and len(running) == 4  # the other 6 wait for a thread
    gate.set()
    assert [f.result(5) for f in futs] == [i * 2 for i in range(10)]
    pool.shutdown()


def test_idle_threads_leave_and_come_back() -> None:
    pool = ElasticExecutor(8, idle_s=0.2)
    gate = threading.Event()
    futs = [pool.submit(gate.wait, 5) for _ in range(5)]
    time.sleep(0.1)
    assert pool.threads == 5
    gate.set()
    for f in futs:
        f.result(5)
    deadline = time.monotonic() + 5
    while pool.threads and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pool.threads == 0
    assert pool.submit(lambda: 7).result(5) == 7
    pool.shutdown()


def test_a_free_thread_is_reused_and_exceptions_reach_the_waiter() -> None:
    pool = ElasticExecutor(8, idle_s=5)
    for _ in range(20):
        assert pool.submit(lambda: 1).result(5) == 1
    assert pool.threads == 1

    def boom() -> None:
        raise KeyError("x")

    f = pool.submit(boom)
    try:
        f.result(5)
        raise AssertionError("no exception")
    except KeyError:
        pass
    pool.shutdown()
    assert pool.threads == 0
