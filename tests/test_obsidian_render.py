"""The Obsidian plugin's Relations pane, rendered: the real ``RelationsView`` (with its controller
and model) bundled on a shim of the Obsidian classes it uses, in headless Chromium, fed by the
real daemon. A small HTTP host on 127.0.0.1 serves the page and forwards its RPC calls to the
daemon's socket. The test reads the DOM; the screenshot goes to ``docs/img/relations-pane.png``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from sidecar.errors import SidecarError
from sidecar.transports.unix import RpcClient
from tests.conftest import EXAMPLE_VAULT
from tests.daemon_harness import RunningDaemon, running
from tests.test_plugins import OBSIDIAN, plugin_env, run, tool
from tests.test_relations_html import chromium

ROOT = Path(__file__).resolve().parents[1]
SHOT = ROOT / "docs" / "img" / "relations-pane.png"
NOTE = "services/Session Store.md"
# Obsidian's default dark theme variables the pane's CSS uses, so the picture looks like the app
THEME = """
body { margin: 0; background: #262626; color: #dadada; font-family: sans-serif;
  --font-ui-small: 13px; --font-ui-smaller: 12px; --font-semibold: 600; --font-medium: 500;
  --size-4-1: 4px; --size-4-2: 8px; --size-4-4: 16px; --radius-s: 4px;
  --text-muted: #b3b3b3; --text-faint: #8a8a8a; --text-error: #fb464c; --text-accent: #a68af9;
  --color-orange: #e9973f; --color-orange-rgb: 233, 151, 63;
  --background-modifier-hover: rgba(255,255,255,.07);
  --background-modifier-border: #363636; }
#sidebar { width: 380px; padding: 12px; }
a.internal-link { color: #a68af9; text-decoration: none; }
.search-result-file-matched-text { background: rgba(255, 208, 0, .4); color: #fff; }
"""


@pytest.fixture(scope="module")
def daemon() -> Iterator[RunningDaemon]:
    with running(EXAMPLE_VAULT, model="tiny") as d:
        yield d


def host(d: RunningDaemon, bundle: Path) -> ThreadingHTTPServer:
    styles = (OBSIDIAN / "styles.css").read_text("utf-8")
    page = (f"<!doctype html><html><head><meta charset='utf-8'><style>{THEME}{styles}</style>"
            "</head><body><div id='sidebar'></div><script src='/pane.js'></script></body></html>")  # fmt: skip

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = bundle.read_bytes() if self.path == "/pane.js" else page.encode()
            self.answer(body, "text/javascript" if self.path == "/pane.js" else "text/html")

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path == "/read":
                text = (d.vault / request["path"]).read_text("utf-8")
                self.answer(text.encode(), "text/plain")
                return
            try:
                with RpcClient(d.socket) as c:
                    reply: dict[str, Any] = {"result": c.call(request["method"], request["params"])}
            except SidecarError as exc:
                reply = {"error": {"code": exc.code, "message": str(exc)}}
            self.answer(json.dumps(reply).encode(), "application/json")

        def answer(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind + "; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Pane(HTMLParser):
    """The linked-mentions section as text: per linking note, its contexts and highlights."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.mentions: list[dict[str, Any]] = []
        self.notes: list[str] = []  # the pane's notes under its sections: a method's error
        self.drawn = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        cls = a.get("class") or ""
        self.drawn = self.drawn or a.get("data-drawn") == "yes"
        in_linked = self.inside("sidecar-linked")
        if "sidecar-mention" in cls.split() and in_linked:
            self.mentions.append({"source": None, "contexts": [], "hits": []})
        elif tag == "a" and in_linked and self.mentions and self.mentions[-1]["source"] is None:
            self.mentions[-1]["source"] = a.get("data-href")
        elif "sidecar-context" in cls.split() and in_linked:
            self.mentions[-1]["contexts"].append("")
        elif "sidecar-note" in cls.split():
            self.notes.append("")
        if tag not in ("br", "img", "input", "meta", "link"):
            self.stack.append(cls or tag)

    def handle_endtag(self, tag: str) -> None:
        if self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self.inside("sidecar-note") and self.notes:
            self.notes[-1] += data
        if not self.mentions or not self.inside("sidecar-linked"):
            return
        if self.inside("sidecar-context") and self.mentions[-1]["contexts"]:
            self.mentions[-1]["contexts"][-1] += data
            if self.stack[-1] == "search-result-file-matched-text":
                self.mentions[-1]["hits"].append(data)

    def inside(self, cls: str) -> bool:
        return any(cls in entry.split() for entry in self.stack)


@pytest.mark.e2e
@pytest.mark.timeout(240)
def test_relations_pane_rendered_in_chromium(daemon: RunningDaemon, tmp_path: Path) -> None:
    npm, node = tool("npm"), tool("node")
    env = plugin_env(daemon)
    if not (OBSIDIAN / "node_modules").is_dir():
        done = run([npm, "ci", "--no-audit", "--no-fund"], OBSIDIAN, env, timeout=180)
        assert done.returncode == 0, done.stderr[-3000:]
    built = run([node, "esbuild.config.mjs", "render"], OBSIDIAN, env, timeout=120)
    assert built.returncode == 0, built.stderr[-3000:]
    server = host(daemon, OBSIDIAN / "build-render" / "pane.js")
    url = f"http://127.0.0.1:{server.server_address[1]}/?note={NOTE.replace(' ', '%20')}"
    try:
        dom = chromium(tmp_path, "--virtual-time-budget=20000", "--dump-dom", url)
        SHOT.parent.mkdir(parents=True, exist_ok=True)
        shot = chromium(tmp_path, "--virtual-time-budget=20000", "--window-size=420,1000",
                        f"--screenshot={SHOT}", url)  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    assert dom.returncode == 0 and shot.returncode == 0, dom.stderr[-2000:]
    pane = Pane()
    pane.feed(dom.stdout)
    assert pane.drawn, dom.stdout[-3000:]
    by_source = {m["source"]: m for m in pane.mentions}
    auth = by_source["services/Auth Service.md"]
    # a link written in a property (depends_on) is a linked mention, as in Obsidian
    assert any("depends_on" in c.lower() or "depends on" in c.lower() for c in auth["contexts"]), (
        auth
    )
    # every occurrence of a note that links more than once: two body links and the property
    assert len(auth["contexts"]) == 3, auth
    assert "[[Session Store]]" in auth["hits"]  # the matched link is highlighted in its context
    assert "[Session Store runbook](Session%20Store.md#runbook)" in auth["hits"]
    assert {"people/Alice.md", "decisions/ADR-7 Session storage.md"} <= set(by_source)
    # the property link at its property's line (#21), its link highlighted there too
    prop = [c for c in auth["contexts"] if c.startswith("depends_on:")]
    assert prop and '"[[Session Store]]"' in prop[0], auth
    assert auth["hits"].count("[[Session Store]]") == 2, auth
    # every section answered: no method's error is shown under the pane (the related query is
    # the note's prose, never read as search syntax: "(see" once failed as a parenthesis)
    assert pane.notes == [], pane.notes
    assert SHOT.stat().st_size > 5_000
