"""The runner's fair comparison of results SQL leaves open (tests/pg_regress/peers.py) and
ORDER BY keys written as select-list items (classify.key_columns)."""

from __future__ import annotations

from tests.pg_regress.classify import (
    Cls,
    Outcome,
    compare_rows,
    key_columns,
    order_by_keys,
    select_items,
)
from tests.pg_regress.peers import (
    is_query,
    limit_verdict,
    peer_group_verdict,
    peer_order_verdict,
    reversed_unions,
    round_trip,
    with_order_keys,
    without_inner_order,
    without_limit,
)


def _out(cols: tuple[str, ...], *rows: tuple) -> Outcome:
    return Outcome(True, cols, tuple(rows), len(rows), has_rows=True)


COLS = ("first_value", "unique1", "four")
SQL = "SELECT first_value(unique1) OVER (ORDER BY four), unique1, four FROM t"
PG = _out(COLS, ("0", "0", "0"), ("0", "8", "0"), ("5", "5", "1"))
PG_PERMUTED = _out(COLS, ("8", "0", "0"), ("8", "8", "0"), ("5", "5", "1"))


def test_order_among_peers_open_when_postgres_moves() -> None:
    # mzspark's answer is another valid one: PostgreSQL's own answer moved, the fixed columns agree
    mz = _out(COLS, ("8", "0", "0"), ("8", "8", "0"), ("5", "5", "1"))
    assert peer_order_verdict(SQL, PG, mz, [PG_PERMUTED]).cls is Cls.SAME  # exactly a permuted PG result
    mz2 = _out(COLS, ("8", "0", "0"), ("0", "8", "0"), ("5", "5", "1"))
    v = peer_order_verdict(SQL, PG, mz2, [PG_PERMUTED])
    assert v is not None and v.cls is Cls.NA and v.details["fixed_columns"] == ["unique1", "four"]


def test_order_among_peers_still_different() -> None:
    mz = _out(COLS, ("8", "0", "0"), ("8", "8", "0"), ("5", "5", "2"))  # a fixed column differs
    assert peer_order_verdict(SQL, PG, mz, [PG_PERMUTED]) is None
    mz = _out(COLS, ("9", "0", "0"), ("8", "8", "0"), ("5", "5", "1"))  # 9: no order gives it
    assert peer_order_verdict(SQL, PG, mz, [PG_PERMUTED]) is None
    mz = _out(COLS, ("8", "0", "0"), ("8", "8", "0"))  # a row missing
    assert peer_order_verdict(SQL, PG, mz, [PG_PERMUTED]) is None
    # PostgreSQL's answer does not move with its input order: a real difference
    assert peer_order_verdict(SQL, PG, PG_PERMUTED, [PG, PG]) is None
    other = _out(COLS, ("9", "0", "0"), ("9", "8", "0"), ("5", "5", "1"))
    # failed variants decide nothing
    assert peer_order_verdict(SQL, PG, other, [Outcome(False, sqlstate="42P01")]) is None


def test_permuted_order_under_top_level_order_by() -> None:
    sql = "SELECT k, v FROM t ORDER BY k"
    pg = _out(("k", "v"), ("1", "a"), ("2", "b"), ("2", "c"))
    moved = _out(("k", "v"), ("1", "a"), ("2", "c"), ("2", "b"))
    mz = _out(("k", "v"), ("1", "a"), ("2", "c"), ("2", "b"))
    assert compare_rows(sql, pg, mz) is None  # ties of the top-level ORDER BY were fair already
    sql2 = "SELECT k, v FROM t ORDER BY k, upper(v)"
    mz_wrong = _out(("k", "v"), ("2", "c"), ("1", "a"), ("2", "b"))
    assert peer_order_verdict(sql2, pg, mz_wrong, [moved]).cls is Cls.NA  # order open, rows agree
    assert peer_order_verdict(sql2, pg, _out(("k", "v"), ("2", "c"), ("1", "a"), ("2", "x")), [moved]) is None


def test_limit_without_order_by() -> None:
    assert without_limit("SELECT a FROM t LIMIT 2") == "SELECT a FROM t"
    assert without_limit("SELECT a FROM t OFFSET 1 LIMIT 2;") == "SELECT a FROM t"
    assert without_limit("SELECT a FROM (SELECT a FROM t LIMIT 2) s") is None
    assert without_limit("SELECT a FROM t ORDER BY a LIMIT 2") is None
    assert without_limit("SELECT 'limit 1' FROM t") is None
    assert without_limit("INSERT INTO t SELECT a FROM u LIMIT 2") is None
    full = _out(("a",), ("1",), ("1",), ("2",), ("3",))
    pg = _out(("a",), ("1",), ("1",))
    assert limit_verdict(pg, _out(("a",), ("3",), ("1",)), full).cls is Cls.SAME
    assert limit_verdict(pg, _out(("a",), ("2",), ("2",)), full) is None  # 2 occurs once
    assert limit_verdict(pg, _out(("a",), ("4",), ("1",)), full) is None
    assert limit_verdict(pg, _out(("a",), ("1",)), full) is None


def test_is_query() -> None:
    assert is_query("SELECT 1") and is_query("(SELECT 1) UNION (SELECT 2)") and is_query("with x as (select 1) select * from x")
    assert not is_query("WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d")
    assert not is_query("SELECT nextval('s')")
    assert not is_query("SELECT 1 INTO t")
    assert not is_query("UPDATE t SET a = 1 RETURNING *")


def test_order_by_key_written_as_select_item() -> None:
    sql = "SELECT depname, rank() OVER w FROM e WINDOW w AS (ORDER BY s) ORDER BY rank()  over w, 1"
    assert select_items(sql) == ["depname", "rank() OVER w"]
    assert key_columns(order_by_keys(sql) or [], ("depname", "rank"), select_items(sql)) == [1, 0]
    assert select_items("SELECT DISTINCT a + 1 AS x, b FROM t") == ["a + 1", "b"]
    assert key_columns(["a+1"], ("x", "b"), ["a + 1", "b"]) == [0]
    assert key_columns(["a+2"], ("x", "b"), ["a + 1", "b"]) is None
    pg = _out(("d", "r"), ("a", "1"), ("b", "1"), ("a", "2"))
    mz = _out(("d", "r"), ("b", "1"), ("a", "1"), ("a", "2"))
    assert compare_rows(sql, pg, mz) == "order"  # d breaks the tie
    by_rank = "SELECT depname, rank() OVER w FROM e WINDOW w AS (ORDER BY s) ORDER BY rank() OVER w"
    assert compare_rows(by_rank, pg, mz) is None
    assert compare_rows(by_rank, pg, _out(("d", "r"), ("a", "2"), ("b", "1"), ("a", "1"))) == "order"


def test_without_inner_order() -> None:
    sql = "SELECT last_value(ten) OVER (PARTITION BY four), ten FROM (SELECT * FROM tenk1 ORDER BY four, ten) s ORDER BY four"
    out = without_inner_order(sql)
    assert out is not None and out.upper().count("ORDER BY") == 1 and out.upper().endswith("ORDER BY FOUR")
    # an ORDER BY with a LIMIT chooses the rows; ARRAY(..) orders its elements; the top level is kept
    assert without_inner_order("SELECT * FROM (SELECT a FROM t ORDER BY a LIMIT 3) s") is None
    assert without_inner_order("SELECT ARRAY(SELECT a FROM t ORDER BY a)") is None
    assert without_inner_order("SELECT a FROM t ORDER BY a") is None
    with_cte = without_inner_order("WITH c AS (SELECT a FROM t ORDER BY a) SELECT * FROM c")
    assert with_cte is not None and "ORDER" not in with_cte.upper()


def test_reversed_unions() -> None:
    out = reversed_unions("SELECT * FROM (SELECT a, b FROM t UNION ALL SELECT c, d FROM u UNION ALL SELECT e, f FROM v) s")
    assert out is not None
    flat = " ".join(out.split())
    # an empty copy of the first operand (names, types), then the operands in reverse order
    assert flat.startswith("SELECT * FROM ((SELECT a, b FROM t LIMIT 0) UNION ALL SELECT e, f FROM v UNION ALL SELECT c, d FROM u")
    assert flat.endswith("UNION ALL SELECT a, b FROM t) AS s")
    out = reversed_unions("SELECT a FROM t UNION ALL SELECT b FROM u ORDER BY 1 LIMIT 3")
    assert out is not None and out.endswith("ORDER BY 1 LIMIT 3") and out.index("FROM u") < out.rindex("FROM t")
    assert reversed_unions("SELECT a FROM t UNION SELECT b FROM u") is None  # a set union: nothing to gain
    assert reversed_unions("SELECT a FROM t") is None
    assert round_trip("SELECT a FROM t") == "SELECT a FROM t"


def test_with_order_keys_appends_expression_keys() -> None:
    k = with_order_keys("select a, b, sum(v) as s from t group by rollup (a,b) order by coalesce(a,0)+coalesce(b,0), s limit 3 offset 1")
    assert k is not None and k.width == 3 and k.key_columns == (None, 2) and (k.limit, k.offset) == (3, 1)
    assert "AS __pk0" in k.sql and "LIMIT" not in k.sql.upper() and "ORDER BY" in k.sql.upper()
    assert with_order_keys("select * from t order by a") is None  # no star
    assert with_order_keys("select t.* from t order by a") is None
    assert with_order_keys("select count(*) from t group by a order by a") is not None
    assert with_order_keys("select a from t union select b from u order by 1") is None  # no set operation


def test_peer_group_verdict_accepts_any_order_among_ties_only() -> None:
    # ORDER BY k (appended column 2); the LIMIT 3 window cuts the second tie group (k = 2)
    k = with_order_keys("select x, y from t order by k limit 3")
    assert k is not None
    full = _out(("x", "y", "__pk0"), ("a", "1", "1"), ("b", "2", "2"), ("c", "3", "2"), ("d", "4", "2"), ("e", "5", "3"))
    pg = _out(("x", "y"), ("a", "1"), ("b", "2"), ("c", "3"))
    assert peer_group_verdict(pg, _out(("x", "y"), ("a", "1"), ("d", "4"), ("b", "2")), k, full).cls is Cls.SAME
    # a row of another group at a tie position, or the first group moved: not a tie
    assert peer_group_verdict(pg, _out(("x", "y"), ("a", "1"), ("e", "5"), ("b", "2")), k, full) is None
    assert peer_group_verdict(pg, _out(("x", "y"), ("b", "2"), ("a", "1"), ("c", "3")), k, full) is None
    # a duplicate of a peer that PostgreSQL has once
    assert peer_group_verdict(pg, _out(("x", "y"), ("a", "1"), ("b", "2"), ("b", "2")), k, full) is None
