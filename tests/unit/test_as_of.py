"""sql.as_of: the AS OF clause split off a query's text (the last one outside parentheses)."""

from __future__ import annotations

import pytest

from sql import statements as st
from sql.as_of import AsOf, split_as_of
from sql.errors import SqlError


@pytest.mark.parametrize(("text", "want"), [
    ("SELECT * FROM t AS OF 5", AsOf("SELECT * FROM t", "5", False)),
    ("SELECT * FROM t ORDER BY a LIMIT 2 AS OF AT LEAST now() - INTERVAL '1 minute'",
     AsOf("SELECT * FROM t ORDER BY a LIMIT 2", "now() - INTERVAL '1 minute'", True)),
    ("SELECT (SELECT 1 AS of) AS OF 7", AsOf("SELECT (SELECT 1 AS of)", "7", False)),
    ("SELECT 'as of 3'", None),
    ("SELECT * FROM t AS OF", AsOf("SELECT * FROM t", "", False)),
])
def test_split_as_of(text: str, want: AsOf | None) -> None:
    assert split_as_of(text) == want


def test_classify_keeps_the_clause() -> None:
    q = st.classify("SELECT a FROM t AS OF AT LEAST 12")
    assert isinstance(q, st.Query) and q.as_of == "12" and q.as_of_at_least
    assert st.classify("SELECT a FROM t").as_of is None  # type: ignore[union-attr]
    with pytest.raises(SqlError) as e:
        st.classify("SELECT a FROM t AS OF AT LEAST")
    assert e.value.sqlstate == "42601"


def test_explain_timestamp_shows_the_as_of_timestamp() -> None:
    """EXPLAIN TIMESTAMP FOR SELECT ... AS OF t determines t (AT LEAST: the usual timestamp
    when later); a future t is reported as not answerable immediately, without waiting."""
    import json
    import time

    from tests.golden_runner import GoldenSession

    g = GoldenSession()
    try:
        def determination(q: str) -> dict:
            p = g.coord.prepare(g.session, f"EXPLAIN TIMESTAMP AS JSON FOR {q}", [])
            (text,) = next(iter(g.coord.execute(g.session, p, []).batches))[0]
            return json.loads(text)["determination"]

        p = g.coord.prepare(g.session, "CREATE TABLE t (a int)", [])
        g.coord.execute(g.session, p, [])
        past = determination("SELECT * FROM t AS OF 12345")
        assert past["timestamp"] == 12345 and past["respond_immediately"] is True
        usual = determination("SELECT * FROM t")["timestamp"]
        assert determination("SELECT * FROM t AS OF AT LEAST 12345")["timestamp"] >= usual
        t0 = time.monotonic()
        future = determination(f"SELECT * FROM t AS OF {usual + 3_600_000}")
        assert future["timestamp"] == usual + 3_600_000 and future["respond_immediately"] is False
        assert time.monotonic() - t0 < 5
    finally:
        g.close()
