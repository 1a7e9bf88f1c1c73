"""Shard batches: writes, manifests, reads at a time, compaction, orphans, leases."""

from __future__ import annotations

import collections
import datetime as dt
import decimal
import os
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog.catalog import Catalog, Column, Item
from catalog.oracle import TimestampOracle
from catalog.storage.arrow_types import arrow_to_updates, batch_schema, rows_to_arrow
from catalog.storage.compaction import consolidate
from catalog.storage.shard import Storage
from sql.errors import SqlError
from sql.types import INT4, INTERVAL, NUMERIC, TEXT, TIMESTAMPTZ, Interval, SqlType, numeric_typmod

D = decimal.Decimal
NUM = SqlType("numeric", numeric_typmod(12, 3))
TYPES = [INT4, TEXT, INTERVAL, NUM, NUMERIC, TIMESTAMPTZ]


@pytest.fixture
def cat(tmp_path: Path):
    c = Catalog(tmp_path)
    yield c
    c.close()


def make_table(c: Catalog, name: str = "t", types: list[SqlType] = TYPES) -> Item:
    return c.create_item(
        schema="public",
        name=name,
        kind="table",
        create_sql=f"CREATE TABLE {name} (...)",
        columns=[Column(f"x{i}", t) for i, t in enumerate(types)],
        with_shard=True,
    )


def write(
    c: Catalog, item: Item, rows: list[tuple[Any, ...]], ts: int, diff: int | list[int] = 1
) -> None:
    types = [col.type for col in item.columns]
    assert item.shard_id is not None
    bf = c.storage.write_batch(item.shard_id, rows_to_arrow(types, rows, ts, diff))
    c.commit_writes([(item.shard_id, bf)], ts)


def contents(c: Catalog, item: Item, as_of: int | None = None) -> collections.Counter:
    """The shard's collection at `as_of`: row -> multiplicity (zeros dropped)."""
    assert item.shard_id is not None
    types = [col.type for col in item.columns]
    table = c.storage.read_batches(c.shard_batches(item.shard_id, as_of), as_of)
    acc: collections.Counter = collections.Counter()
    if table is not None:
        for row, _t, d in arrow_to_updates(table, types):
            acc[row] += d
    return collections.Counter({r: n for r, n in acc.items() if n != 0})


ROW_A = (1, "a", Interval(1, 2, 3), D("1.500"), D("2.5"), dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
ROW_NULL = (None, None, None, None, None, None)
ROW_B = (2, "b", Interval(0, 0, 0), D("0.000"), D("-7"), None)


# ---------------------------------------------------------------------------------------
# writes and reads


def test_write_and_read_back(cat: Catalog) -> None:
    t = make_table(cat)
    assert t.shard_id is not None
    write(cat, t, [ROW_A, ROW_NULL], 100)
    write(cat, t, [ROW_B], 200, diff=3)
    (b1, b2) = cat.shard_batches(t.shard_id)
    assert (b1.rows, b1.min_time, b1.max_time, b1.has_retractions) == (2, 100, 100, False)
    assert (b2.rows, b2.min_time, b2.max_time) == (1, 200, 200)
    assert Path(b1.path).is_file() and Path(b1.path).parent.name == t.shard_id
    assert Path(b1.path).is_relative_to(cat.data_dir / "shards")
    assert pq.read_schema(b1.path).names == ["c0", "c1", "c2", "c3", "c4", "c5", "time", "diff"]
    assert pq.read_table(b1.path).schema.equals(batch_schema(TYPES))
    assert contents(cat, t) == {ROW_A: 1, ROW_NULL: 1, ROW_B: 3}
    assert not cat.shard_has_retractions(t.shard_id)
    write(cat, t, [ROW_A], 300, diff=-1)
    assert cat.shard_has_retractions(t.shard_id)
    assert not cat.shard_has_retractions(t.shard_id, as_of=299)
    assert contents(cat, t) == {ROW_NULL: 1, ROW_B: 3}


def test_as_of_filtering(cat: Catalog) -> None:
    t = make_table(cat)
    assert t.shard_id is not None
    write(cat, t, [ROW_A], 100)
    write(cat, t, [ROW_B], 200)
    write(cat, t, [ROW_A], 300, diff=-1)
    assert cat.shard_batches(t.shard_id, as_of=99) == []
    assert len(cat.shard_batches(t.shard_id, as_of=100)) == 1
    assert len(cat.shard_batches(t.shard_id, as_of=250)) == 2
    assert len(cat.shard_batches(t.shard_id)) == 3
    assert contents(cat, t, 99) == {}
    assert contents(cat, t, 150) == {ROW_A: 1}
    assert contents(cat, t, 200) == {ROW_A: 1, ROW_B: 1}
    assert contents(cat, t, 300) == {ROW_B: 1}


def test_multi_shard_commit_is_one_transaction(cat: Catalog) -> None:
    t = make_table(cat, "t", [INT4])
    u = make_table(cat, "u", [INT4])
    assert t.shard_id and u.shard_id
    bt = cat.storage.write_batch(t.shard_id, rows_to_arrow([INT4], [(1,)], 5, 1))
    bu = cat.storage.write_batch(u.shard_id, rows_to_arrow([INT4], [(2,)], 5, 1))
    cat.commit_writes([(t.shard_id, bt), (u.shard_id, bu)], 5)
    assert cat.shard_batches(t.shard_id) == [bt] and cat.shard_batches(u.shard_id) == [bu]
    assert cat.oracle_write_ts() == 5


def test_commit_to_dropped_shard_fails_and_cleans_up(cat: Catalog) -> None:
    t = make_table(cat, "t", [INT4])
    u = make_table(cat, "u", [INT4])
    assert t.shard_id and u.shard_id
    bt = cat.storage.write_batch(t.shard_id, rows_to_arrow([INT4], [(1,)], 5, 1))
    bu = cat.storage.write_batch(u.shard_id, rows_to_arrow([INT4], [(1,)], 5, 1))
    cat.drop_items([u.id])
    with pytest.raises(SqlError) as e:
        cat.commit_writes([(t.shard_id, bt), (u.shard_id, bu)], 5)
    assert e.value.sqlstate == "42P01"
    assert not Path(bt.path).exists() and not Path(bu.path).exists()
    assert cat.shard_batches(t.shard_id) == []  # nothing of the failed commit is visible
    assert cat.oracle_write_ts() == 0


def test_write_batch_validation(cat: Catalog) -> None:
    with pytest.raises(ValueError):
        cat.storage.write_batch("s1", rows_to_arrow([INT4], [], 1, 1))
    with pytest.raises(ValueError):
        cat.storage.write_batch("s1", pa.table({"c0": [1]}))
    with pytest.raises(ValueError):
        cat.storage.write_batch("../evil", rows_to_arrow([INT4], [(1,)], 1, 1))


def test_drop_deletes_files(cat: Catalog) -> None:
    t = make_table(cat)
    assert t.shard_id is not None
    write(cat, t, [ROW_A], 1)
    write(cat, t, [ROW_B], 2)
    paths = [b.path for b in cat.shard_batches(t.shard_id)]
    cat.drop_items([t.id])
    assert not any(Path(p).exists() for p in paths)
    with pytest.raises(SqlError):
        cat.shard_batches(t.shard_id)


def test_batches_survive_reopen(tmp_path: Path) -> None:
    c = Catalog(tmp_path)
    t = make_table(c)
    o = TimestampOracle(c)
    ts = o.write_ts()
    write(c, t, [ROW_A, ROW_B], ts)
    before = c.shard_batches(t.shard_id)  # type: ignore[arg-type]
    c.close()
    c = Catalog(tmp_path)
    assert c.shard_batches(t.shard_id) == before  # type: ignore[arg-type]
    assert contents(c, t) == {ROW_A: 1, ROW_B: 1}
    assert c.orphans_cleaned == 0
    assert TimestampOracle(c).read_ts() == ts
    c.close()


# ---------------------------------------------------------------------------------------
# compaction


def test_consolidate_groups_nulls_structs_decimals() -> None:
    types = [INT4, INTERVAL, NUM, TEXT]
    rows = [
        (1, Interval(1, 2, 3), D("1.000"), None),
        (1, Interval(1, 2, 3), D("1"), None),  # equal after scale
        (None, None, None, None),
        (None, None, None, None),
        (None, Interval(0, 0, 0), None, None),  # a zero interval is not NULL
        (2, Interval(0, 0, 1), D("2.5"), "x"),
    ]
    t = rows_to_arrow(types, rows, 7, [1, 2, 1, 1, 1, -1])
    out = consolidate(t)
    assert out.schema.equals(t.schema)
    got = {(r, time): d for r, time, d in arrow_to_updates(out, types)}
    assert got == {
        ((1, Interval(1, 2, 3), D("1.000"), None), 7): 3,
        ((None, None, None, None), 7): 2,
        ((None, Interval(0, 0, 0), None, None), 7): 1,
        ((2, Interval(0, 0, 1), D("2.500"), "x"), 7): -1,
    }


def test_consolidate_groups_arrays() -> None:
    """Array columns (Arrow lists, which Arrow cannot group by) consolidate by value: an
    inserted array and its retraction cancel; NULL elements and a NULL array group apart."""
    types = [INT4, SqlType("_int4"), SqlType("_text")]
    rows = [
        (1, [1, None, 3], ["a"]),
        (1, [1, None, 3], ["a"]),
        (1, [1, 3], ["a"]),
        (1, None, None),
        (1, [], []),
        (2, [5], [None]),
    ]
    t = rows_to_arrow(types, rows, 7, [1, -1, 1, 1, 2, 1])
    out = consolidate(t)
    assert out.schema.equals(t.schema)
    got = sorted((repr(r), time, d) for r, time, d in arrow_to_updates(out, types))
    assert got == sorted([
        (repr((1, [1, 3], ["a"])), 7, 1),
        (repr((1, None, None)), 7, 1),
        (repr((1, [], [])), 7, 2),
        (repr((2, [5], [None])), 7, 1),
    ])


def test_compaction_consolidates(cat: Catalog) -> None:
    t = make_table(cat)
    assert t.shard_id is not None
    write(cat, t, [ROW_A, ROW_NULL, ROW_B], 100)
    write(cat, t, [ROW_NULL], 110)
    write(cat, t, [ROW_A, ROW_B], 120, diff=[-1, 1])  # retraction cancels the insert
    write(cat, t, [ROW_B], 200, diff=-1)  # beyond since: untouched
    old = cat.shard_batches(t.shard_id)
    expected = {ts: contents(cat, t, ts) for ts in (150, 200, 500)}

    new = cat.compact(t.shard_id, 150)
    assert new is not None
    assert (new.min_time, new.max_time, new.rows, new.has_retractions) == (150, 150, 2, False)
    batches = cat.shard_batches(t.shard_id)
    assert batches == [old[3], new]
    assert not any(Path(b.path).exists() for b in old[:3])
    assert cat.shard_since(t.shard_id) == 150
    for ts, want in expected.items():
        assert contents(cat, t, ts) == want
    assert contents(cat, t, 150) == {ROW_NULL: 2, ROW_B: 2}
    times = {time for _, time, _ in arrow_to_updates(pq.read_table(new.path), TYPES)}
    assert times == {150}

    # Idempotent: nothing more to do at the same (or a lower) since.
    assert cat.compact(t.shard_id, 150) is None
    assert cat.compact(t.shard_id, 10) is None
    assert cat.shard_batches(t.shard_id) == batches

    # Compacting everything: the retraction at 200 meets the inserts.
    final = cat.compact(t.shard_id, 1000)
    assert final is not None and final.min_time == 1000
    assert cat.shard_batches(t.shard_id) == [final]
    assert contents(cat, t) == {ROW_NULL: 2, ROW_B: 1}
    assert cat.shard_since(t.shard_id) == 1000


def test_compaction_to_empty(cat: Catalog) -> None:
    t = make_table(cat)
    assert t.shard_id is not None
    write(cat, t, [ROW_A, ROW_NULL], 1)
    write(cat, t, [ROW_A, ROW_NULL], 2, diff=-1)
    paths = [b.path for b in cat.shard_batches(t.shard_id)]
    assert cat.compact(t.shard_id, 5) is None
    assert cat.shard_batches(t.shard_id) == []
    assert not any(Path(p).exists() for p in paths)
    assert contents(cat, t) == {}


def test_compaction_persists(tmp_path: Path) -> None:
    c = Catalog(tmp_path)
    t = make_table(c)
    write(c, t, [ROW_A], 1)
    write(c, t, [ROW_A], 2)
    new = c.compact(t.shard_id, 2)  # type: ignore[arg-type]
    c.close()
    c = Catalog(tmp_path)
    assert c.shard_batches(t.shard_id) == [new]  # type: ignore[arg-type]
    assert c.shard_since(t.shard_id) == 2  # type: ignore[arg-type]
    assert contents(c, t) == {ROW_A: 2}
    assert c.compact(t.shard_id, 2) is None  # type: ignore[arg-type]
    c.close()


def test_compaction_keeps_concurrent_writes(cat: Catalog) -> None:
    t = make_table(cat, "t", [INT4])
    assert t.shard_id is not None
    oracle = TimestampOracle(cat)
    written: list[int] = []
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set() or len(written) < 30:
            ts = oracle.write_ts()
            write(cat, t, [(len(written),)], ts)
            written.append(ts)

    th = threading.Thread(target=writer)
    th.start()
    compactions = 0
    try:
        while len(written) < 30:
            if cat.compact(t.shard_id, oracle.read_ts()) is not None:
                compactions += 1
            time.sleep(0.005)
    finally:
        stop.set()
        th.join()
    assert compactions >= 2
    assert contents(cat, t) == {(i,): 1 for i in range(len(written))}
    assert contents(cat, t, oracle.read_ts()) == {(i,): 1 for i in range(len(written))}


def test_leases_defer_deletion(cat: Catalog) -> None:
    t = make_table(cat, "t", [INT4])
    assert t.shard_id is not None
    write(cat, t, [(1,)], 1)
    write(cat, t, [(2,)], 2)
    with cat.lease_batches(t.shard_id) as leased:
        cat.compact(t.shard_id, 2)
        assert all(Path(b.path).exists() for b in leased)  # still readable
        table = cat.storage.read_batches(leased)
        assert table is not None and table.num_rows == 2
    assert not any(Path(b.path).exists() for b in leased)

    lease = cat.lease_batches(t.shard_id)
    cat.drop_items([t.id])
    assert all(Path(b.path).exists() for b in lease.batches)
    lease.release()
    lease.release()
    assert not any(Path(b.path).exists() for b in lease.batches)


# ---------------------------------------------------------------------------------------
# orphans


def test_clean_orphans(tmp_path: Path) -> None:
    c = Catalog(tmp_path)
    t = make_table(c, "t", [INT4])
    u = make_table(c, "u", [INT4])
    assert t.shard_id and u.shard_id
    write(c, t, [(1,)], 1)
    live = c.shard_batches(t.shard_id)[0].path
    # Crash leftovers: a written-but-uncommitted batch, a temp file, a dropped shard's file.
    orphan = c.storage.write_batch(t.shard_id, rows_to_arrow([INT4], [(9,)], 2, 1)).path
    tmp = Path(live).parent / ".deadbeef.parquet.tmp"
    tmp.write_bytes(b"partial")
    stray_dir = c.storage.root / "s999"
    stray_dir.mkdir()
    stray = stray_dir / "x.parquet"
    stray.write_bytes(b"x")
    unrelated = Path(live).parent / "README"
    unrelated.write_text("not ours")
    # A file written after this catalog was opened may be an in-flight write: kept.
    assert c.clean_orphans() == 0
    c.close()
    past = time.time() - 10
    for p in (orphan, tmp, stray):
        os.utime(p, (past, past))

    c = Catalog(tmp_path)
    assert c.orphans_cleaned == 3
    assert Path(live).exists() and unrelated.exists()
    assert not Path(orphan).exists() and not tmp.exists() and not stray.exists()
    assert not stray_dir.exists()
    assert contents(c, t) == {(1,): 1}
    assert c.clean_orphans() == 0
    c.close()


def test_storage_alone(tmp_path: Path) -> None:
    s = Storage(tmp_path)
    bf = s.write_batch("sx", rows_to_arrow([TEXT], [("a",), ("b",)], 3, [1, -1]))
    assert bf.rows == 2 and bf.has_retractions
    assert s.relative(bf.path).startswith("shards/sx/")
    assert s.read_batches([bf], as_of=2) is not None
    assert s.read_batches([bf], as_of=2).num_rows == 0  # type: ignore[union-attr]
    assert s.read_batches([]) is None
    assert s.delete_files([bf.path, bf.path]) == 1


def test_commit_rejects_batch_of_another_shard(cat: Catalog) -> None:
    t = make_table(cat, "t", [INT4])
    u = make_table(cat, "u", [INT4])
    assert t.shard_id and u.shard_id
    bf = cat.storage.write_batch(u.shard_id, rows_to_arrow([INT4], [(1,)], 5, 1))
    with pytest.raises(ValueError):
        cat.commit_writes([(t.shard_id, bf)], 5)
    assert cat.shard_batches(t.shard_id) == [] and cat.shard_batches(u.shard_id) == []
    assert not Path(bf.path).exists()


def test_storage_code_is_pyarrow_only() -> None:
    """catalog/storage/ never imports DuckDB or Spark (DESIGN §1/§3)."""
    import ast

    root = Path(__file__).resolve().parents[2] / "catalog" / "storage"
    for f in root.glob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for n in names:
                assert n.split(".")[0] not in {"duckdb", "pyspark"}, f"{f.name} imports {n}"
                assert n != "catalog.catalog", f"{f.name} imports the DuckDB catalog"


def test_short_decimals_are_stored_as_integers(cat: Catalog) -> None:
    """A numeric of at most 18 digits is an INT32 / INT64 column in the batch file (Spark
    decodes it as a long; pyarrow's default, a fixed-length byte array, costs a conversion
    per value), a wider one stays a byte array; every value reads back exact."""
    types = [SqlType("numeric", numeric_typmod(9, 2)), SqlType("numeric", numeric_typmod(15, 2)), NUMERIC]
    item = make_table(cat, "dec", types)
    rows = [(D("1234567.89"), D("-9999999999999.99"), D("123456789012345.0123456789")), (None, D("0.01"), D("-1"))]
    write(cat, item, rows, 10)
    (batch,) = cat.shard_batches(item.shard_id, 10)
    physical = [c.physical_type for c in (pq.ParquetFile(batch.path).metadata.row_group(0).column(i) for i in range(3))]
    assert physical == ["INT32", "INT64", "FIXED_LEN_BYTE_ARRAY"]
    assert contents(cat, item, 10) == collections.Counter({r: 1 for r in rows})
