"""The live plan page (issue 12) in a real headless browser (Debian's chromium through
selenium's WebDriver): while an index hydrates, its page draws the LIR graph (one node per
EXPLAIN node id, an edge to each node's parent) and its worker colours change as statuses
flip, until every node is hydrated; unknown objects are 404; with --password the port asks
for the same password. The screenshot is the README's (docs/plan-page.png)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.integration.harness import MzServer

pytestmark = pytest.mark.slow

ROWS = int(os.environ.get("MZSPARK_HYDRATION_ROWS", "200000"))
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "plan-page.png"


def get(server: MzServer, path: str, auth: str | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(f"http://{server.host}:{server.http_port}{path}")
    if auth is not None:
        req.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def browser():
    from selenium import webdriver

    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    assert chromium and driver, "make deps-test installs chromium and chromium-driver"
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,900"):
        opts.add_argument(a)
    return webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path=driver))


def test_plan_page_draws_and_updates_the_graph(tmp_path: Path) -> None:
    server = MzServer(tmp_path / "mzdata", tmp_path / "server.log", extra_args=("--workers", "2"))
    server.start()
    web = None
    try:
        assert server.http_port > 0
        mz = server.connect(autocommit=True)
        mz.execute("CREATE TABLE a (k int, v int)")
        mz.execute("CREATE TABLE b (k int, w int)")
        mz.execute(f"INSERT INTO a SELECT g % {ROWS // 4}, g FROM generate_series(1, {ROWS}) AS g")
        mz.execute(f"INSERT INTO b SELECT g, g % 7 FROM generate_series(1, {ROWS // 4}) AS g")
        mz.execute("CREATE VIEW v AS SELECT a.k % 1000 AS g, count(*) AS c, sum(b.w) AS s "
                   "FROM a JOIN b ON a.k = b.k GROUP BY a.k % 1000")
        assert get(server, "/dataflows/u999")[0] == 404
        assert get(server, "/api/dataflows/u999")[0] == 404
        assert get(server, "/nope")[0] == 404

        busy = threading.Event()
        busy.set()

        def create() -> None:
            try:
                with server.connect(autocommit=True) as c:
                    c.execute("CREATE INDEX i ON v (g)")
            finally:
                busy.clear()

        t = threading.Thread(target=create)
        t.start()
        oid = None
        deadline = time.monotonic() + 120
        while oid is None:
            assert time.monotonic() < deadline, "the index never appeared on the index page"
            objs = json.loads(get(server, "/api/dataflows")[1])
            oid = next((o["id"] for o in objs if o["name"].endswith(".i")), None)
            time.sleep(0.05)
        web = browser()
        web.get(f"http://{server.host}:{server.http_port}/dataflows/{oid}")
        states = []
        shot = False
        deadline = time.monotonic() + 600
        while True:
            assert time.monotonic() < deadline, states[-1:]
            st = web.execute_script("return window.cy ? {nodes: cy.nodes().length, edges: cy.edges().length,"
                                    " colors: cy.nodes().map(n => n.style('pie-1-background-color') + n.style('pie-2-background-color')),"
                                    " state: window.mzState} : null")
            if st is not None:
                states.append((busy.is_set(), st))
                s = st["state"]
                if not shot and 0 < s["hydrated"] < s["nodes"]:
                    SCREENSHOT.parent.mkdir(exist_ok=True)
                    web.save_screenshot(str(SCREENSHOT))
                    shot = True
                if s["hydrated"] == s["nodes"] and not busy.is_set():
                    break
            time.sleep(0.1)
        t.join()
        (text,) = mz.execute("EXPLAIN PHYSICAL PLAN WITH (node_ids) FOR INDEX i").fetchone()
        n = text.count("// { node_id:")
        first, last = states[0][1], states[-1][1]
        # the graph is drawn: a node per plan node, an edge to each non-root's parent
        assert first["nodes"] == n and first["edges"] == n - 1
        # and it updated live: colours changed while the page was open, ending all green
        assert last["state"]["updates"] > first["state"]["updates"]
        assert first["colors"] != last["colors"]
        assert any(not all(all(w) for w in s["state"]["workers"]) for _b, s in states)
        assert all(all(w) for w in last["state"]["workers"])
        assert len({c for c in last["colors"]}) == 1
        if not shot:
            web.save_screenshot(str(SCREENSHOT))
        # the index page lists it, hydrated
        web.get(f"http://{server.host}:{server.http_port}/")
        time.sleep(1.5)
        assert f"/dataflows/{oid}" in web.page_source
        mz.close()
    finally:
        if web is not None:
            web.quit()
        server.stop()


def test_plan_page_needs_the_password(tmp_path: Path) -> None:
    server = MzServer(tmp_path / "mzdata", tmp_path / "server.log", extra_args=("--password", "s3cret"))
    server.start()
    try:
        assert get(server, "/")[0] == 401
        assert get(server, "/api/dataflows", auth="materialize:wrong")[0] == 401
        assert get(server, "/api/dataflows", auth="materialize:s3cret") == (200, b"[]")
    finally:
        server.stop()
