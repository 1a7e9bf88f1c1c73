"""Resources come back after load (issue 14): after a second round of 40 concurrent sessions of
mixed statements (constants, lookups through Spark, INSERTs) has closed, the server process's open file
descriptors and threads, and the Spark driver JVM's descriptors and py4j connection threads,
return to what they were before (the connections' worker threads leave when idle, closing
their py4j sockets and JVM threads). Spark's own thread pools shrink on their own 60 s
keep-alive and are not counted; nor are the workers Arrow's two pools (CPU, IO) start lazily,
up to their fixed sizes, when concurrent INSERTs first overlap enough (seen with gdb: the
threads a second round adds are `arrow::internal::ThreadPool` workers, parked)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.slow

IDLE_S = 14.0  # the worker pool's idle timeout (10 s) and some slack
SESSIONS = 40
# Arrow's pools start workers lazily and keep them, never more than their sizes (the server
# uses the defaults, the same as this process's pyarrow); a leak per session would be SESSIONS
ARROW_POOL_THREADS = pa.cpu_count() + pa.io_thread_count()


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            out += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except OSError:
            pass
    return out


def _java(pid: int) -> int:
    todo, seen = [pid], set()
    while todo:
        p = todo.pop()
        seen.add(p)
        try:
            if Path(f"/proc/{p}/comm").read_text().strip() == "java":
                return p
        except OSError:
            continue
        todo += [c for c in _children(p) if c not in seen]
    raise AssertionError("no Spark driver JVM under the server")


def _py4j_threads(java: int) -> int:
    """JVM threads serving py4j connections (named Thread-N); Spark's own pools (block
    manager, task launch: cached, 60 s keep-alive; task-result-getter: fixed) are not counted."""
    n = 0
    for t in os.listdir(f"/proc/{java}/task"):
        try:
            n += Path(f"/proc/{java}/task/{t}/comm").read_text().startswith("Thread-")
        except OSError:
            pass
    return n


def _usage(pid: int, java: int) -> dict[str, int]:
    return {"fds": len(os.listdir(f"/proc/{pid}/fd")), "threads": len(os.listdir(f"/proc/{pid}/task")),
            "jvm fds": len(os.listdir(f"/proc/{java}/fd")), "jvm py4j threads": _py4j_threads(java)}


def test_fds_and_threads_return_after_load(tmp_path: Path) -> None:
    server = MzServer(tmp_path / "mzdata", tmp_path / "server.log")
    server.start()
    try:
        assert server.proc is not None
        pid = server.proc.pid
        java = _java(pid)
        with server.connect(autocommit=True) as c:
            c.execute("CREATE TABLE lk (id int, v text)")
            c.execute("INSERT INTO lk SELECT g, 'v' || g FROM generate_series(0, 99) AS g")
            c.execute("CREATE TABLE ins (id bigint)")
            c.execute("SELECT * FROM lk WHERE id = %s", (1,)).fetchall()
        errors: list[BaseException] = []

        def session(n: int) -> None:
            try:
                with server.connect(autocommit=True) as c:
                    for i in range(6):
                        match i % 3:
                            case 0:
                                assert c.execute("SELECT 1").fetchall() == [(1,)]
                            case 1:
                                assert c.execute("SELECT v FROM lk WHERE id = %s", (n,)).fetchall() == [(f"v{n}",)]
                            case _:
                                c.execute("INSERT INTO ins VALUES (%s)", (n * 10 + i,))
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        def load() -> dict[str, int]:
            threads = [threading.Thread(target=session, args=(n,)) for n in range(SESSIONS)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(600)
            assert not errors, errors[:3]
            return _usage(pid, java)

        # a first round starts what is started once and kept (bounded native pools of Arrow
        # and DuckDB, Spark's fixed pools); the second must give back all it takes
        load()
        time.sleep(IDLE_S)
        before = _usage(pid, java)
        during = load()
        with server.connect(autocommit=True) as c:
            assert c.execute("SELECT count(*) FROM ins").fetchone() == (SESSIONS * 4,)
        time.sleep(IDLE_S)
        after = _usage(pid, java)
        # the load did use more (worker threads with py4j sockets), and all of it came back
        assert during["threads"] > before["threads"], (before, during)
        for k, v in before.items():
            slack = 2 + (ARROW_POOL_THREADS if k == "threads" else 0)
            assert after[k] <= v + slack, (k, before, during, after)
    finally:
        server.stop()
