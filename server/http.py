"""The live plan page (issue 12): HTTP on a second port (`--http-port`, default 6876, bound
to the pgwire address's host).

    GET /                        every installed dataflow: hydration and frontier (live)
    GET /dataflows/<id>          its LIR graph (cytoscape.js, vendored under server/static/),
                                 each node a pie of its workers, green once hydrated, with
                                 the records its state holds; updated every 500 ms
    GET /api/dataflows[/<id>]    the same as JSON
    GET /static/cytoscape.min.js

Unknown objects and paths: 404. With `--password`, every request needs HTTP Basic auth with
that password (the pgwire login's check), so the port exposes nothing the login would not.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mzspark.http")

STATIC = Path(__file__).resolve().parent / "static"


class HttpServer:
    def __init__(self, coord: Any, host: str, port: int) -> None:
        self.coord, self.host, self.port = coord, host, port
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("http listening on %s:%d", self.host, self.port)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    # -- one connection, one request

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = (lines[0].split(" ") + ["", ""])[:3]
            headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
            if not self._authorized(headers.get("authorization", "")):
                await self._send(writer, 401, "text/plain", b"authentication required\n",
                                 {"WWW-Authenticate": 'Basic realm="mzspark"'})
            elif method != "GET":
                await self._send(writer, 405, "text/plain", b"method not allowed\n")
            else:
                loop = asyncio.get_running_loop()
                status, ctype, body = await loop.run_in_executor(None, self._route, path.split("?")[0])
                await self._send(writer, status, ctype, body)
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        except Exception:  # noqa: BLE001 - one bad request must not stop the server
            log.exception("http request failed")
            try:
                await self._send(writer, 500, "text/plain", b"internal error\n")
            except Exception:  # noqa: BLE001
                pass
        finally:
            writer.close()

    def _authorized(self, header: str) -> bool:
        if self.coord.password is None:
            return True
        if not header.lower().startswith("basic "):
            return False
        try:
            user, _, pw = base64.b64decode(header[6:]).decode().partition(":")
        except Exception:  # noqa: BLE001
            return False
        return bool(self.coord.check_password(user, pw))

    async def _send(self, writer: asyncio.StreamWriter, status: int, ctype: str, body: bytes,
                    extra: dict[str, str] | None = None) -> None:
        reason = {200: "OK", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error"}[status]
        hdrs = {"Content-Type": ctype, "Content-Length": str(len(body)), "Cache-Control": "no-store",
                "Connection": "close", **(extra or {})}
        writer.write(f"HTTP/1.1 {status} {reason}\r\n".encode() + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()).encode()
                     + b"\r\n" + body)
        await writer.drain()

    # -- routes

    def _route(self, path: str) -> tuple[int, str, bytes]:
        if path == "/":
            return 200, "text/html; charset=utf-8", INDEX_HTML.encode()
        if path == "/static/cytoscape.min.js":
            return 200, "application/javascript", (STATIC / "cytoscape.min.js").read_bytes()
        if path == "/api/dataflows":
            return 200, "application/json", json.dumps(self._objects()).encode()
        m = re.fullmatch(r"/(api/)?dataflows/([A-Za-z0-9]+)", path)
        if m:
            info = self._dataflow(m[2])
            if info is None:
                return 404, "text/plain", f"unknown dataflow {m[2]}\n".encode()
            if m[1]:
                return 200, "application/json", json.dumps(info).encode()
            return 200, "text/html; charset=utf-8", PAGE_HTML.replace("{{ID}}", m[2]).encode()
        return 404, "text/plain", b"not found\n"

    def _objects(self) -> list[dict[str, Any]]:
        ctl = self.coord.controller
        if ctl is None:
            return []
        out = []
        for oid, _r, frontier in ctl.frontiers():
            info = self._dataflow(oid)
            if info is not None:
                nodes = info["nodes"]
                out.append({"id": oid, "name": info["name"], "kind": info["kind"], "frontier": frontier,
                            "nodes": len(nodes), "hydrated_nodes": sum(all(n["workers"]) for n in nodes),
                            "hydrated": info["hydrated"]})
        return out

    def _dataflow(self, oid: str) -> dict[str, Any] | None:
        from compute.plan.lir_mapping import lir_mapping

        ctl = self.coord.controller
        m = ctl.installed(oid) if ctl is not None else None
        if m is None:
            return None
        statuses = {(n, w): h for n, w, h in ctl.hydration().statuses(oid)}
        workers = 1 + max((w for _n, w in statuses), default=ctl._workers() - 1)
        records: dict[int, int] = {}
        renderer = m.renderer
        if renderer is not None and hasattr(renderer, "state_pieces"):  # no Spark work: counted when stored
            try:
                records = dict(renderer.state_rows())
            except RuntimeError:  # its state changed meanwhile: none this time
                records = {}
        nodes = [{"id": r.lir_id, "operator": r.operator, "parent": r.parent_lir_id, "records": records.get(r.lir_id, 0),
                  "workers": [statuses.get((r.lir_id, w), False) for w in range(workers)]}
                 for r in lir_mapping(m.dataflow)]
        return {"id": oid, "name": m.item.qualified_name, "kind": m.item.kind, "frontier": m.frontier,
                "workers": workers, "reporting": bool(statuses), "hydrated": m.frontier > 0 and m.error is None,
                "nodes": nodes}


INDEX_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>mzspark dataflows</title>
<style>body{font-family:sans-serif;margin:2em}td,th{padding:4px 12px;text-align:left}</style></head>
<body><h1>Dataflows</h1>
<table><thead><tr><th>id</th><th>name</th><th>kind</th><th>hydrated nodes</th><th>hydrated</th><th>frontier</th></tr></thead>
<tbody id="rows"></tbody></table>
<script>
async function refresh() {
  const r = await fetch('/api/dataflows');
  const objs = await r.json();
  document.getElementById('rows').innerHTML = objs.map(o =>
    `<tr><td><a href="/dataflows/${o.id}">${o.id}</a></td><td>${o.name}</td><td>${o.kind}</td>` +
    `<td>${o.hydrated_nodes} / ${o.nodes}</td><td>${o.hydrated}</td><td>${o.frontier}</td></tr>`).join('');
}
refresh(); setInterval(refresh, 1000);
</script></body></html>
"""

PAGE_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>dataflow {{ID}}</title>
<script src="/static/cytoscape.min.js"></script>
<style>body{font-family:sans-serif;margin:1em}#graph{width:100%;height:80vh;border:1px solid #ccc}</style></head>
<body><h2 id="title">dataflow {{ID}}</h2><div id="summary"></div><div id="graph"></div>
<script>
const GREEN = '#2ca02c', GREY = '#cccccc';
window.mzState = {updates: 0, hydrated: 0, nodes: 0};
let cy = null;
function style(workers) {
  const s = {'label': 'data(label)', 'text-wrap': 'wrap', 'text-max-width': 180, 'text-valign': 'bottom', 'font-size': 11,
             'width': 34, 'height': 34, 'background-color': '#eeeeee', 'pie-size': '100%'};
  for (let w = 1; w <= workers; w++) { s[`pie-${w}-background-size`] = 100 / workers; s[`pie-${w}-background-color`] = `data(w${w})`; }
  return [{selector: 'node', style: s},
          // an edge from each node to its input; the arrow points where the data flows
          {selector: 'edge', style: {'curve-style': 'bezier', 'source-arrow-shape': 'triangle', 'width': 2}}];
}
function nodeData(n) {
  const d = {id: String(n.id), label: `${n.id}: ${n.operator}\\nrecords: ${n.records}`};
  n.workers.forEach((h, w) => { d[`w${w + 1}`] = h ? GREEN : GREY; });
  return d;
}
async function refresh() {
  const r = await fetch('/api/dataflows/{{ID}}');
  if (!r.ok) { document.getElementById('summary').textContent = 'dropped'; return; }
  const df = await r.json();
  document.getElementById('title').textContent = `${df.name} (${df.id}, ${df.kind})`;
  if (cy === null) {
    const els = df.nodes.map(n => ({data: nodeData(n)}));
    df.nodes.filter(n => n.parent !== null).forEach(n =>
      els.push({data: {id: `e${n.id}`, source: String(n.parent), target: String(n.id)}}));
    const root = df.nodes.find(n => n.parent === null);
    cy = cytoscape({container: document.getElementById('graph'), elements: els, style: style(df.workers),
                    layout: {name: 'breadthfirst', directed: true, roots: root ? [String(root.id)] : undefined, spacingFactor: 1.4}});
    window.cy = cy;
  } else {
    df.nodes.forEach(n => cy.getElementById(String(n.id)).data(nodeData(n)));
  }
  const hydrated = df.nodes.filter(n => n.workers.length && n.workers.every(h => h)).length;
  window.mzState = {updates: window.mzState.updates + 1, hydrated: hydrated, nodes: df.nodes.length,
                    workers: df.nodes.map(n => n.workers)};
  document.getElementById('summary').textContent =
    `${hydrated} of ${df.nodes.length} operators hydrated on all ${df.workers} workers; frontier ${df.frontier}` +
    (df.reporting ? '' : ' (hydration reporting is off)');
}
refresh(); setInterval(refresh, 500);
</script></body></html>
"""
