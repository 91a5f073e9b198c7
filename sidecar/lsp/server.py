"""``sidecar lsp``: the pygls server. This module wires LSP requests to ``navigate`` and keeps the
documents' diagnostics fresh; positions are converted to and from the client's encoding here.

Diagnostics come from the daemon's ``note.check`` on the buffer as the editor holds it: after
open and save at once, after changes once typing pauses (``DEBOUNCE_S``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from lsprotocol import types as t
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from sidecar.errors import SidecarError
from sidecar.lsp.text import LinkAt, frontmatter_end, links_on, split_lines
from sidecar.lsp.vault import Vault

log = logging.getLogger(__name__)
DEBOUNCE_S = 0.2
SEVERITY = {"error": t.DiagnosticSeverity.Error, "warning": t.DiagnosticSeverity.Warning,
            "info": t.DiagnosticSeverity.Information}  # fmt: skip


class SidecarServer(LanguageServer):
    def __init__(self, vault: Vault) -> None:
        super().__init__("sidecar", "0.1.0", text_document_sync_kind=t.TextDocumentSyncKind.Full)
        self.vault = vault
        self._pending: dict[str, asyncio.TimerHandle] = {}

    # -- documents and positions --------------------------------------------------------------

    def uri(self, rel: str) -> str:
        return str(from_fs_path(str(self.vault.abs(rel))))

    def rel(self, uri: str) -> str | None:
        path = to_fs_path(uri)
        return self.vault.rel(path) if path else None

    def open_doc(self, rel: str) -> Any:
        return self.workspace.text_documents.get(self.uri(rel))

    def text(self, rel: str) -> str | None:
        doc = self.open_doc(rel)
        return doc.source if doc is not None else self.vault.read(rel)

    def lines(self, rel: str) -> list[str] | None:
        text = self.text(rel)
        return split_lines(text) if text is not None else None

    def doc_version(self, rel: str) -> int | None:
        doc = self.open_doc(rel)
        return doc.version if doc is not None else None

    def position(self, lines: Sequence[str], pos: t.Position) -> tuple[int, int]:
        p = self.workspace.position_codec.position_from_client_units(list(lines), pos)
        return p.line, p.character

    def range(self, lines: Sequence[str], line: int, start: int, end: int,
              end_line: int | None = None) -> t.Range:  # fmt: skip
        raw = t.Range(t.Position(line, start), t.Position(line if end_line is None else end_line,
                                                          end))  # fmt: skip
        return self.workspace.position_codec.range_to_client_units(list(lines), raw)

    def link_range(self, lines: Sequence[str], link: LinkAt) -> t.Range:
        return self.range(lines, link.line, link.start, link.end)

    # -- diagnostics --------------------------------------------------------------------------

    def schedule_check(self, uri: str, delay: float) -> None:
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        loop = asyncio.get_running_loop()
        self._pending[uri] = loop.call_later(delay, self.publish, uri)

    def publish(self, uri: str) -> None:
        self._pending.pop(uri, None)
        rel = self.rel(uri)
        doc = self.workspace.text_documents.get(uri)
        if rel is None or doc is None or not rel.endswith((".md", ".markdown")):
            return
        try:
            result = self.vault.call("note.check", {"path": rel, "text": doc.source})
        except SidecarError as exc:
            log.warning("note.check failed for %s: %s", rel, exc)
            return
        lines = split_lines(doc.source)
        diagnostics = [self.diagnostic(lines, f) for f in result["findings"]]
        self.text_document_publish_diagnostics(
            t.PublishDiagnosticsParams(uri, diagnostics, version=doc.version)
        )

    def diagnostic(self, lines: Sequence[str], finding: dict[str, Any]) -> t.Diagnostic:
        link = finding_link(lines, finding)
        if link is not None:
            where = self.link_range(lines, link)
        else:
            row = max(int(finding["line"]) - 1, 0)
            width = len(lines[row]) if row < len(lines) else 0
            where = self.range(lines, row, 0, width)
        message = finding["detail"] + (f" — {finding['fix']}" if finding.get("fix") else "")
        return t.Diagnostic(where, message, SEVERITY.get(finding["severity"]),
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
        found = list(links_on(i, lines[i]))
        for link in found:
            names = {link.name.text.lower(), (link.label_name.text.lower()
                                              if link.label_name else "")}  # fmt: skip
            if name and (name in names or name.endswith("/" + link.name.text.lower())):
                return link
        if finding["rule"] == "broken_anchor" and found:
            return next((lk for lk in found if lk.anchor or lk.label_anchor), found[0])
    return None
