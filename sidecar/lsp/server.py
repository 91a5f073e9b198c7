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

from sidecar.core.link_spans import LinkAt, frontmatter_end, line_links, split_lines
from sidecar.errors import SidecarError
from sidecar.lsp.vault import Vault
from sidecar.lsp.vaults import Vaults

log = logging.getLogger(__name__)
DEBOUNCE_S = 0.2
SEVERITY = {"error": t.DiagnosticSeverity.Error, "warning": t.DiagnosticSeverity.Warning,
            "info": t.DiagnosticSeverity.Information}  # fmt: skip


class SidecarServer(LanguageServer):
    def __init__(self, vaults: Vaults) -> None:
        super().__init__("sidecar", "0.1.0", text_document_sync_kind=t.TextDocumentSyncKind.Full)
        self.vaults = vaults
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._open: dict[tuple[str, str], str] = {}  # (vault root, vault path) -> client's URI

    # -- documents ----------------------------------------------------------------------------

    def doc(self, uri: str) -> tuple[Scope, str] | None:
        """The vault of the document at ``uri`` and its vault path; None outside every vault."""
        found = self.vaults.route(uri)
        return (Scope(self, found.vault), found.rel) if found is not None else None

    def opened(self, uri: str) -> None:
        found = self.vaults.route(uri)
        if found is not None:
            self._open[(found.vault.root.real, found.rel)] = uri

    def closed(self, uri: str) -> None:
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
        loop = asyncio.get_running_loop()
        self._pending[uri] = loop.call_later(delay, self.publish, uri)

    def publish(self, uri: str) -> None:
        self._pending.pop(uri, None)
        found = self.doc(uri)
        if found is None or uri not in self._open.values():
            return
        scope, rel = found
        doc = self.workspace.get_text_document(uri)
        if not rel.lower().endswith((".md", ".markdown")):
            return
        try:
            result = scope.vault.call("note.check", {"path": rel, "text": doc.source})
        except SidecarError as exc:
            log.warning("note.check failed for %s: %s", rel, exc)
            return
        lines = split_lines(doc.source)
        diagnostics = [scope.diagnostic(lines, f) for f in result["findings"]]
        self.text_document_publish_diagnostics(
            t.PublishDiagnosticsParams(uri, diagnostics, version=doc.version)
        )


class Scope:
    """One request's view: its vault, and the server's documents and position encoding."""

    def __init__(self, ls: SidecarServer, vault: Vault) -> None:
        self.ls = ls
        self.vault = vault

    def uri(self, rel: str) -> str:
        """The document's URI as the client opened it, else one for the file."""
        return self.ls.open_uri(self.vault, rel) or self.vault.uri(rel)

    def open_doc(self, rel: str) -> Any:
        uri = self.ls.open_uri(self.vault, rel)
        return self.ls.workspace.get_text_document(uri) if uri is not None else None

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
        p = self.ls.workspace.position_codec.position_from_client_units(lines, pos)
        return p.line, p.character

    def range(self, lines: Sequence[str], line: int, start: int, end: int,
              end_line: int | None = None) -> t.Range:  # fmt: skip
        last = line if end_line is None else end_line
        return t.Range(self._to_client(lines, line, start), self._to_client(lines, last, end))

    def _to_client(self, lines: Sequence[str], line: int, col: int) -> t.Position:
        """What pygls' ``position_to_client_units`` answers, without its count character by
        character in Python when the text is ASCII (every encoding counts characters there):
        a hub's references place thousands of positions."""
        try:
            before = lines[line][:col]
        except IndexError:
            return t.Position(len(lines), 0)
        units = self.ls.workspace.position_codec.client_num_units
        return t.Position(line, len(before) if before.isascii() else units(before))

    def link_range(self, lines: Sequence[str], link: LinkAt) -> t.Range:
        return self.range(lines, link.line, link.start, link.end)

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
        found = line_links(lines, i)
        for link in found:
            names = {link.name.text.lower(), (link.label_name.text.lower()
                                              if link.label_name else "")}  # fmt: skip
            if name and (name in names or name.endswith("/" + link.name.text.lower())):
                return link
        if finding["rule"] == "broken_anchor" and found:
            return next((lk for lk in found if lk.anchor or lk.label_anchor), found[0])
    return None
