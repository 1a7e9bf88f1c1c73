"""EXPLAIN ... AS JSON is valid JSON whose LIR node ids are those of the text EXPLAIN."""

from __future__ import annotations

import json
import re

import pytest

from tests.golden_runner import GoldenSession

QUERIES = [
    "SELECT a, count(*) FROM t GROUP BY a",
    "SELECT * FROM (SELECT * FROM t ORDER BY b LIMIT 5)",
    "SELECT t.a, u.b FROM t JOIN t AS u ON t.a = u.b WHERE t.b > 1",
    "SELECT a FROM t EXCEPT SELECT b FROM t",
    "SELECT a, (SELECT max(b) FROM t AS i WHERE i.a = t.a) FROM t",
    "WITH MUTUALLY RECURSIVE r(n int) AS (SELECT a FROM t UNION SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r",
]


def _ids(node: dict) -> list[int]:
    if node["op"] == "Let":
        return _ids(node["value"]) + _ids(node["body"]) + [node["node_id"]]
    if node["op"] == "LetRec":
        return [i for v in node["values"] for i in _ids(v)] + _ids(node["body"]) + [node["node_id"]]
    out: list[int] = []
    for c in node["inputs"]:
        out.extend(_ids(c))
    return out + [node["node_id"]]


@pytest.fixture(scope="module")
def gs():
    s = GoldenSession()
    s.run("CREATE TABLE t (a int, b int)")
    yield s
    s.close()


@pytest.mark.parametrize("q", QUERIES)
def test_physical_json_node_ids_match_text(gs: GoldenSession, q: str) -> None:
    doc = json.loads(gs.run("EXPLAIN PHYSICAL PLAN AS JSON FOR " + q)[0][0])
    assert doc["stage"] == "physical" and len(doc["plans"]) == 1
    ids = _ids(doc["plans"][0]["plan"])
    assert ids == list(range(len(ids))), "post-order ids from 0"
    text = gs.run("EXPLAIN PHYSICAL PLAN WITH (node_ids) FOR " + q)[0][0]
    assert sorted(int(x) for x in re.findall(r"node_id: (\d+)", text)) == sorted(ids)


@pytest.mark.parametrize("stage", ["RAW", "DECORRELATED", "OPTIMIZED"])
def test_mir_json_stages(gs: GoldenSession, stage: str) -> None:
    doc = json.loads(gs.run(f"EXPLAIN {stage} PLAN AS JSON FOR " + QUERIES[4])[0][0])
    assert doc["stage"] == stage.lower()
    assert doc["plans"][0]["id"] == "Explained Query"
    assert "op" in doc["plans"][0]["plan"]
