"""LSP references placed from the index's columns, on names and lines as people write them.

``note.references`` gives each link's columns when its line is ASCII up to the link's end, and
the server answers from them without opening the linking note; on other lines, and in a note
the editor holds open (its text wins, saved or not), the server finds the link in the text and
converts to the client's position encoding. Every location answered must cover exactly a link
to the note, in every encoding a client may negotiate."""

from __future__ import annotations

import asyncio
import sys
import tempfile
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from lsprotocol import types as t
from pytest_lsp import client_capabilities
from pytest_lsp.client import make_test_lsp_client

from sidecar.lsp.uris import to_path
from tests.daemon_harness import RunningDaemon, running

pytestmark = pytest.mark.e2e

TARGET = "Target 100% (draft).md"
ALL = "Links (all kinds).md"
PLAN = "Plan #2.md"
CREME = unicodedata.normalize("NFD", "Crème/Brûlée notes.md")
EDITED = "Edited.md"
VAULT = {
    TARGET: "# Target\n\n## Part two\n",
    ALL: (
        '---\nrelated: "[[Target 100% (draft)]]"\ndepends_on:\n  - "[[Target 100% (draft)]]"\n'
        "---\n# All\n\n"
        "Twice: [[Target 100% (draft)]] and [[target 100% (draft)|alias]].\n"
        '- [md](Target%20100%25%20%28draft%29.md "title") then ![[Target 100% (draft)]]\n'
        "> quoted [[Target 100% (draft)#Part two]]\n"
        "Café — [[Target 100% (draft)]]\n"
        "😀 emoji first [[Target 100% (draft)]] and [[Target 100% (draft)]]\n"
        "`[[Target 100% (draft)]]` is code, not a link.\n"
    ),
    PLAN: "# Plan\n\nSee [[Target 100% (draft)]].\n",
    CREME: unicodedata.normalize("NFD", "Crème — [[Target 100% (draft)]]\n"),
    EDITED: "Saved: [[Target 100% (draft)]]\n",
}
EXPECTED_LINES = {  # 0-based lines of the links, per linking note
    ALL: [1, 3, 7, 7, 8, 8, 9, 10, 11, 11],
    PLAN: [2],
    unicodedata.normalize("NFC", CREME): [0],
    EDITED: [0],
}


@pytest.fixture(scope="module")
def daemon() -> Iterator[RunningDaemon]:
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="slr") as src:
        for rel, text in VAULT.items():
            (Path(src) / rel).parent.mkdir(parents=True, exist_ok=True)
            (Path(src) / rel).write_text(text, "utf-8")
        with running(Path(src)) as d:
            yield d


def doc_uri(vault: Path, rel: str) -> str:
    return "file://" + quote(f"{vault}/{rel}")


def units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    return len(text.encode("utf-16-le")) // 2 if encoding == "utf-16" else len(text)


def column(line: str, character: int, encoding: str) -> int:
    """The code point at ``character`` client units into ``line``."""
    return next(i for i in range(len(line) + 1) if units(line[:i], encoding) >= character)


def references(d: RunningDaemon, encodings: list[str], buffer: str) -> tuple[str, Any]:
    """References of the target, with ``EDITED.md`` open in the editor holding ``buffer``."""
    env = {k: v for k, v in d.env.items() if k != "SIDECAR_VAULT"}
    caps = client_capabilities("neovim")
    caps.general = t.GeneralClientCapabilities(position_encodings=encodings)

    async def run() -> tuple[str, Any]:
        client = make_test_lsp_client()
        with tempfile.TemporaryDirectory(prefix="lsp-cwd") as cwd:
            await client.start_io(sys.executable, "-m", "sidecar", "lsp", env=env, cwd=cwd)
            try:
                init = await client.initialize_session(t.InitializeParams(
                    capabilities=caps, root_uri=d.vault.as_uri(),
                    initialization_options={"autostart": False}))  # fmt: skip
                client.text_document_did_open(t.DidOpenTextDocumentParams(t.TextDocumentItem(
                    doc_uri(d.vault, EDITED), "markdown", 1, buffer)))  # fmt: skip
                refs = await client.text_document_references_async(t.ReferenceParams(
                    text_document=t.TextDocumentIdentifier(doc_uri(d.vault, TARGET)),
                    position=t.Position(1, 0),
                    context=t.ReferenceContext(include_declaration=False)))  # fmt: skip
                return str(init.capabilities.position_encoding), refs
            finally:
                await client.shutdown_session()

    return asyncio.run(run())


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_every_reference_covers_its_link(daemon: RunningDaemon, encoding: str) -> None:
    buffer = "Saved, then edited: [[Target 100% (draft)]]\n"  # the link's columns moved
    used, refs = references(daemon, [encoding], buffer)
    assert used == encoding
    got: dict[str, list[int]] = {}
    for loc in refs:
        path = to_path(loc.uri)
        assert path is not None
        rel = unicodedata.normalize("NFC", str(Path(path).relative_to(daemon.vault)))
        text = buffer if rel == EDITED else Path(path).read_text("utf-8")
        line = text.split("\n")[loc.range.start.line]
        assert loc.range.end.line == loc.range.start.line
        start = column(line, loc.range.start.character, encoding)
        end = column(line, loc.range.end.character, encoding)
        written = unicodedata.normalize("NFC", line[start:end])
        assert written.startswith(("[[", "![[", "[md](")) and written.endswith(("]]", ")")), (
            rel, loc.range, line)  # fmt: skip
        assert "arget 100%" in written or "Target%20100%25" in written, (rel, written)
        got.setdefault(rel, []).append(loc.range.start.line)
    assert {rel: sorted(lines) for rel, lines in got.items()} == EXPECTED_LINES
