"""Durability: SIGKILL the server while clients write; after a restart on the same data
directory every acknowledged write is there, every transaction is all-or-nothing, and each
writer's rows are a prefix of what it sent (no unacknowledged write is visible while an
earlier one is missing). With 16 writers the group commit pipeline (server/group_commit.py)
has two groups in flight at the crash. A graceful stop (SIGTERM) exits cleanly and keeps
everything too."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg
import pytest

from tests.integration.harness import MzServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TXN_SIZE = 3


@dataclass
class WriterLog:
    """What one writer did. Row ids are unique across writers; `txn` is 0 for single-row
    statements, else the id of the transaction's first row."""

    writer: int
    attempted: dict[int, int] = field(default_factory=dict)  # id -> txn, in the order sent
    acked_rows: set[int] = field(default_factory=set)
    acked_txns: set[int] = field(default_factory=set)
    error: BaseException | None = None


def writer(server: MzServer, table: str, log: WriterLog, stop: threading.Event) -> None:
    next_id = log.writer * 1_000_000 + 1
    step = 0
    try:
        with server.connect(connect_timeout=10) as conn:
            while not stop.is_set():
                step += 1
                if step % 4 == 0:
                    txn = next_id
                    ids = list(range(next_id, next_id + TXN_SIZE))
                    next_id += TXN_SIZE
                    for i in ids:
                        log.attempted[i] = txn
                    conn.execute("BEGIN")
                    for i in ids:
                        conn.execute(f"INSERT INTO {table} VALUES (%s, %s)", (i, txn))
                    conn.execute("COMMIT")
                    log.acked_txns.add(txn)
                    log.acked_rows.update(ids)
                else:
                    i = next_id
                    next_id += 1
                    log.attempted[i] = 0
                    conn.execute(f"INSERT INTO {table} VALUES (%s, %s)", (i, 0))
                    log.acked_rows.add(i)
    except psycopg.OperationalError as e:  # the crash
        log.error = e
    except BaseException as e:  # anything else is a test failure, reported below
        log.error = e


@pytest.mark.timeout(600)  # two server starts
@pytest.mark.parametrize("writers", [2, 16])
def test_acknowledged_writes_survive_sigkill(
    mz_server_factory: Callable[[], MzServer], uniq: Callable[[str], str], writers: int
) -> None:
    server = mz_server_factory()
    table = uniq("dur")
    with server.connect() as conn:
        conn.execute(f"CREATE TABLE {table} (id int, txn int)")
        conn.execute(f"INSERT INTO {table} VALUES (0, 0)")
        # Acknowledged before any crash: must survive too.
    logs = [WriterLog(w + 1) for w in range(writers)]
    stop = threading.Event()
    threads = [
        threading.Thread(target=writer, args=(server, table, log, stop), daemon=True)
        for log in logs
    ]
    for th in threads:
        th.start()

    # Let the writers get going (at least a few acknowledged writes and one committed
    # transaction), then ~2 s more, then crash mid-stream.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if sum(len(lg.acked_rows) for lg in logs) >= 5 * writers and any(lg.acked_txns for lg in logs):
            break
        if all(not th.is_alive() for th in threads):
            break
        time.sleep(0.05)
    time.sleep(2.0)
    alive_at_kill = [th.is_alive() for th in threads]
    server.kill()
    stop.set()
    for th in threads:
        th.join(60)
        assert not th.is_alive(), "writer thread hung after the server was killed"

    for lg in logs:
        # Writers only stop because the connection died.
        assert isinstance(lg.error, psycopg.OperationalError), repr(lg.error)
    assert all(alive_at_kill), "a writer stopped before the crash"
    acked = set().union(*(lg.acked_rows for lg in logs)) | {0}
    acked_txns = set().union(*(lg.acked_txns for lg in logs))
    attempted: dict[int, int] = {0: 0}
    for lg in logs:
        attempted.update(lg.attempted)
    assert len(acked) >= 6 and acked_txns, "too few writes before the crash to test anything"

    server.start()
    with server.connect() as conn:
        rows = conn.execute(f"SELECT id, txn FROM {table}").fetchall()
    ids = Counter(r[0] for r in rows)
    duplicated = sorted(i for i, n in ids.items() if n > 1)
    assert not duplicated, f"rows present more than once: {duplicated[:20]}"
    present = set(ids)
    lost = sorted(acked - present)
    assert not lost, f"{len(lost)} acknowledged rows lost, e.g. {lost[:20]}"
    invented = sorted(present - set(attempted))
    assert not invented, f"rows never written: {invented[:20]}"
    for i, txn in rows:
        assert attempted[i] == txn, f"row {i} has txn {txn}, written with {attempted[i]}"
    # All-or-nothing per transaction.
    per_txn = Counter(txn for _, txn in rows if txn != 0)
    partial = {t: n for t, n in per_txn.items() if n != TXN_SIZE}
    assert not partial, f"transactions partially present (txn: rows): {partial}"
    assert acked_txns <= set(per_txn)
    # Each writer sent its next write only after the previous one was acknowledged: what
    # survives of it is a prefix of what it sent (at most its last write unacknowledged).
    for lg in logs:
        sent = list(lg.attempted)
        mine = [i for i in sent if i in present]
        assert mine == sent[: len(mine)], f"writer {lg.writer}: a later write survived an earlier lost one"

    # The restarted server keeps working on the same table.
    with server.connect() as conn:
        conn.execute(f"INSERT INTO {table} VALUES (-1, 0)")
        n = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    assert n == (len(rows) + 1,)


@pytest.mark.timeout(600)  # two server starts
def test_graceful_restart_keeps_data(
    mz_server_factory: Callable[[], MzServer], uniq: Callable[[str], str]
) -> None:
    server = mz_server_factory()
    t = uniq("t")
    with server.connect() as conn:
        conn.execute(f"CREATE TABLE {t} (a int, b text)")
        conn.execute(f"INSERT INTO {t} VALUES (1, 'one'), (2, 'two')")
        conn.execute("BEGIN")
        conn.execute(f"INSERT INTO {t} VALUES (3, 'three')")
        conn.execute("COMMIT")
        conn.execute(f"DELETE FROM {t} WHERE a = 2")
    # SIGTERM: the server shuts down by itself, with exit code 0, within the grace period.
    assert server.stop() == 0
    server.start()
    with server.connect() as conn:
        rows = conn.execute(f"SELECT a, b FROM {t} ORDER BY a").fetchall()
        assert rows == [(1, "one"), (3, "three")]
        conn.execute(f"INSERT INTO {t} VALUES (4, 'four')")
        assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (3,)
