"""Crash safety with real processes: SIGKILL right after an acknowledged write, and SIGKILL at
every step of a compaction, must lose nothing and change no shard's contents."""

from __future__ import annotations

import collections
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from catalog.catalog import Catalog, Column
from catalog.storage.arrow_types import arrow_to_updates, rows_to_arrow
from sql.types import INT4, INTERVAL, TEXT, Interval

REPO = Path(__file__).resolve().parents[2]
TYPES = [INT4, TEXT, INTERVAL]

PRELUDE = """
import os, signal, sys
from catalog.catalog import Catalog
from catalog.oracle import TimestampOracle
from catalog.storage.arrow_types import rows_to_arrow
from sql.types import INT4, INTERVAL, TEXT, Interval

TYPES = [INT4, TEXT, INTERVAL]

def die(*_a, **_k):
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)

cat = Catalog(sys.argv[1])
item = cat.get_item("public", "t")
"""


def run_killed(data_dir: Path, body: str) -> str:
    script = PRELUDE + textwrap.dedent(body)
    proc = subprocess.run(
        [sys.executable, "-c", script, str(data_dir)],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    return proc.stdout


def setup_table(data_dir: Path) -> str:
    c = Catalog(data_dir)
    item = c.create_item(
        schema="public",
        name="t",
        kind="table",
        create_sql="CREATE TABLE t (a int, b text, c interval)",
        columns=[Column("a", INT4), Column("b", TEXT), Column("c", INTERVAL)],
        with_shard=True,
    )
    c.close()
    assert item.shard_id is not None
    return item.shard_id


def contents(c: Catalog, shard_id: str, as_of: int | None = None) -> collections.Counter:
    table = c.storage.read_batches(c.shard_batches(shard_id, as_of), as_of)
    acc: collections.Counter = collections.Counter()
    if table is not None:
        for row, _t, d in arrow_to_updates(table, TYPES):
            acc[row] += d
    return collections.Counter({r: n for r, n in acc.items() if n != 0})


def test_sigkill_right_after_commit_loses_nothing(tmp_path: Path) -> None:
    shard_id = setup_table(tmp_path)
    out = run_killed(
        tmp_path,
        """
        oracle = TimestampOracle(cat)
        for i in range(20):
            ts = oracle.write_ts()
            table = rows_to_arrow(TYPES, [(i, str(i), Interval(0, i, 0))], ts, 1)
            bf = cat.storage.write_batch(item.shard_id, table)
            cat.commit_writes([(item.shard_id, bf)], ts)
            print("acked", ts, flush=True)
        die()
        """,
    )
    acked = [int(line.split()[1]) for line in out.splitlines() if line.startswith("acked")]
    assert len(acked) == 20
    # The killed process never checkpointed: recovery must come from the WAL.
    wal = tmp_path / "catalog.duckdb.wal"
    assert wal.exists() and wal.stat().st_size > 0

    c = Catalog(tmp_path)
    try:
        assert c.oracle_write_ts() == acked[-1]
        batches = c.shard_batches(shard_id)
        assert [b.min_time for b in batches] == acked
        assert contents(c, shard_id) == {(i, str(i), Interval(0, i, 0)): 1 for i in range(20)}
        assert c.orphans_cleaned == 0
        # New items after the crash do not reuse the crashed process's ids.
        new = c.create_item(
            schema="public", name="u", kind="view", create_sql="", columns=(), with_shard=False
        )
        assert new.id == "u2"
    finally:
        c.close()


def test_sigkill_between_file_write_and_commit(tmp_path: Path) -> None:
    shard_id = setup_table(tmp_path)
    run_killed(
        tmp_path,
        """
        bf = cat.storage.write_batch(item.shard_id, rows_to_arrow(TYPES, [(1, "x", None)], 5, 1))
        die()
        """,
    )
    files = list((tmp_path / "shards" / shard_id).iterdir())
    assert len(files) == 1
    c = Catalog(tmp_path)
    try:
        assert c.orphans_cleaned == 1
        assert c.shard_batches(shard_id) == []
        assert not files[0].exists()
        assert c.oracle_write_ts() == 0
    finally:
        c.close()


# Each crash point: code patched into the compacting process so it dies exactly there.
CRASH_POINTS = {
    # The merged batch is written and fsynced under its temp name, not yet renamed.
    "before_rename": "import catalog.storage.shard as m; m.os.replace = die",
    # The merged batch is durable but the manifest still lists the old batches.
    "before_swap": "Catalog._swap_batches = die",
    # Inside the manifest transaction, before its commit.
    "inside_swap_txn": """
        orig = Catalog._swap_batches
        def swap(self, *a):
            self._set_meta = die
            return orig(self, *a)
        Catalog._swap_batches = swap
    """,
    # The swap committed; the old files are not yet deleted.
    "before_delete": "Catalog._release = die",
}


@pytest.mark.parametrize("point", list(CRASH_POINTS))
def test_sigkill_during_compaction_keeps_contents(tmp_path: Path, point: str) -> None:
    shard_id = setup_table(tmp_path)
    c = Catalog(tmp_path)
    rows = [(i % 3, None if i % 2 else "v", Interval(i % 2, 0, 0)) for i in range(12)]
    for ts in range(1, 7):
        c.commit_writes(
            [(shard_id, c.storage.write_batch(shard_id, rows_to_arrow(TYPES, rows, ts, 1)))], ts
        )
        retract = rows_to_arrow(TYPES, rows[: ts * 2], ts, -1)
        c.commit_writes([(shard_id, c.storage.write_batch(shard_id, retract))], ts)
    since = 4
    expected = {ts: contents(c, shard_id, ts) for ts in (since, 5, 6)}
    old_batches = c.shard_batches(shard_id)
    c.close()

    run_killed(
        tmp_path,
        f"""
        {textwrap.indent(textwrap.dedent(CRASH_POINTS[point]), " " * 8).strip()}
        cat.compact(item.shard_id, {since})
        print("compaction finished without dying", flush=True)
        """,
    )

    c = Catalog(tmp_path)
    try:
        swapped = point == "before_delete"
        after = c.shard_batches(shard_id)
        if swapped:
            assert len(after) == 5  # one merged batch + the 4 batches at times 5, 6
            assert c.shard_since(shard_id) == since
            assert c.orphans_cleaned == 8  # the replaced files, deleted on reopen
        else:
            assert after == old_batches
            assert c.shard_since(shard_id) == 0
            assert c.orphans_cleaned == 1  # the merged batch that never made it in
        for ts, want in expected.items():
            assert contents(c, shard_id, ts) == want
        assert {p.name for p in (tmp_path / "shards" / shard_id).iterdir()} == {
            Path(b.path).name for b in after
        }
        # Compaction completes after the restart and still changes nothing.
        c.compact(shard_id, since)
        assert len(c.shard_batches(shard_id)) == 5
        for ts, want in expected.items():
            assert contents(c, shard_id, ts) == want
    finally:
        c.close()
