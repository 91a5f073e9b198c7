"""``sidecar lsp``'s state: the open documents, their vaults, and their diagnostics; positions
are converted to and from the client's encoding here (``Scope``).

Diagnostics come from the daemon's ``note.check`` on the buffer as the editor holds it: after
open and save at once, after changes once typing pauses (``DEBOUNCE_S``). Everything here runs
on the connection's handler thread; other threads hand work to it with ``conn.submit``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from sidecar.core.link_spans import LinkAt, frontmatter_end, line_links, split_lines
from sidecar.errors import SidecarError
from sidecar.lsp.documents import Document, Positions
from sidecar.lsp.protocol import Connection
from sidecar.lsp.types import SEVERITY, Json, Position, Range, compact, span
from sidecar.lsp.vault import Vault
from sidecar.lsp.vaults import Vaults

log = logging.getLogger(__name__)
DEBOUNCE_S = 0.2


class SidecarServer:
    def __init__(self, vaults: Vaults, conn: Connection) -> None:
        self.vaults = vaults
        self.conn = conn
        self.methods: dict[str, Callable[[Json], Any]] = {}
        self.capabilities: Json = {}  # the client's, from initialize
        self.positions = Positions()
        self.documents: dict[str, Document] = {}  # by the client's URI
        self._pending: dict[str, threading.Timer | None] = {}
        self._open: dict[tuple[str, str], str] = {}  # (vault root, vault path) -> client's URI
        self.on_initialize: Callable[[Json], Json] = lambda params: {}

    def initialize(self, params: Json) -> Json:
        return self.on_initialize(params)

    # -- documents ----------------------------------------------------------------------------

    def doc(self, uri: str) -> tuple[Scope, str] | None:
        """The vault of the document at ``uri`` and its vault path; None outside every vault."""
        found = self.vaults.route(uri)
        return (Scope(self, found.vault), found.rel) if found is not None else None

    def opened(self, uri: str, text: str, version: int | None) -> None:
        self.documents[uri] = Document(text, version)
        found = self.vaults.route(uri)
        if found is not None:
            self._open[(found.vault.root.real, found.rel)] = uri

    def closed(self, uri: str) -> None:
        self.documents.pop(uri, None)
        self._open = {k: v for k, v in self._open.items() if v != uri}

    def open_uri(self, vault: Vault, rel: str) -> str | None:
        return self._open.get((vault.root.real, rel))

    def open_uris(self) -> list[str]:
        return list(self._open.values())

    # -- diagnostics --------------------------------------------------------------------------

    def schedule_check(self, uri: str, delay: float) -> None:
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        if delay <= 0:
            self._pending[uri] = None
            self.publish(uri, None)
            return
        timer = threading.Timer(delay, lambda: self.conn.submit(lambda: self.publish(uri, timer)))
        timer.daemon = True
        self._pending[uri] = timer
        timer.start()

    def publish(self, uri: str, timer: threading.Timer | None) -> None:
        if timer is not None and self._pending.get(uri) is not timer:
            return  # superseded by a later change
        self._pending.pop(uri, None)
        found = self.doc(uri)
        doc = self.documents.get(uri)
        if found is None or doc is None or uri not in self._open.values():
            return
        scope, rel = found
        if not rel.lower().endswith((".md", ".markdown")):
            return
        try:
            result = scope.vault.call("note.check", {"path": rel, "text": doc.text})
        except SidecarError as exc:
            log.warning("note.check failed for %s: %s", rel, exc)
            return
        lines = split_lines(doc.text)
        diagnostics = [scope.diagnostic(lines, f) for f in result["findings"]]
        self.conn.notify("textDocument/publishDiagnostics",
                         compact(uri=uri, diagnostics=diagnostics, version=doc.version))  # fmt: skip

    def clear_diagnostics(self, uri: str) -> None:
        self.conn.notify("textDocument/publishDiagnostics", {"uri": uri, "diagnostics": []})


class Scope:
    """One request's view: its vault, and the server's documents and position encoding."""

    def __init__(self, ls: SidecarServer, vault: Vault) -> None:
        self.ls = ls
        self.vault = vault

    def uri(self, rel: str) -> str:
        """The document's URI as the client opened it, else one for the file."""
        return self.ls.open_uri(self.vault, rel) or self.vault.uri(rel)

    def open_doc(self, rel: str) -> Document | None:
        uri = self.ls.open_uri(self.vault, rel)
        return self.ls.documents.get(uri) if uri is not None else None

    def text(self, rel: str) -> str | None:
        doc = self.open_doc(rel)
        return doc.text if doc is not None else self.vault.read(rel)

    def lines(self, rel: str) -> list[str] | None:
        text = self.text(rel)
        return split_lines(text) if text is not None else None

    def doc_version(self, rel: str) -> int | None:
        doc = self.open_doc(rel)
        return doc.version if doc is not None else None

    def position(self, lines: Sequence[str], pos: Any) -> tuple[int, int]:
        return self.ls.positions.from_client(lines, pos)

    def range(self, lines: Sequence[str], line: int, start: int, end: int,
              end_line: int | None = None) -> Range:  # fmt: skip
        last = line if end_line is None else end_line
        return span(self._to_client(lines, line, start), self._to_client(lines, last, end))

    def _to_client(self, lines: Sequence[str], line: int, col: int) -> Position:
        return self.ls.positions.to_client(lines, line, col)

    def link_range(self, lines: Sequence[str], link: LinkAt) -> Range:
        return self.range(lines, link.line, link.start, link.end)

    def diagnostic(self, lines: Sequence[str], finding: dict[str, Any]) -> Json:
        link = finding_link(lines, finding)
        if link is not None:
            where = self.link_range(lines, link)
        else:
            row = max(int(finding["line"]) - 1, 0)
            width = len(lines[row]) if row < len(lines) else 0
            where = self.range(lines, row, 0, width)
        message = finding["detail"] + (f" — {finding['fix']}" if finding.get("fix") else "")
        return compact(range=where, message=message, severity=SEVERITY.get(finding["severity"]),
                       code=finding["rule"], source="sidecar", data=finding)  # fmt: skip


def finding_link(lines: Sequence[str], finding: dict[str, Any]) -> LinkAt | None:
    """The link a finding is about, on its line (or in the frontmatter for line 0)."""
    line = int(finding["line"])
    rows = range(1, frontmatter_end(lines)) if line == 0 else [line - 1]
    raw = str(finding.get("target") or "")
    name = raw.partition("#")[0].strip().lower()
    for i in rows:
        if not 0 <= i < len(lines):
            continue
        found = line_links(lines, i)
        for link in found:
            names = {link.name.text.lower(), (link.label_name.text.lower()
                                              if link.label_name else "")}  # fmt: skip
            if name and (name in names or name.endswith("/" + link.name.text.lower())):
                return link
        if finding["rule"] == "broken_anchor" and found:
            return next((lk for lk in found if lk.anchor or lk.label_anchor), found[0])
    return None
