"""``sidecar lsp`` as an editor runs it: a subprocess speaking LSP over stdio, driven by
pytest-lsp's client, talking to the real daemon on a copy of the dendron-site corpus."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.conftest import corpus
from tests.daemon_harness import RunningDaemon, running

pytestmark = [pytest.mark.slow, pytest.mark.e2e]
Scenario = Callable[[LanguageClient, Path], Awaitable[Any]]


@pytest.fixture(scope="module")
def daemon() -> Iterator[RunningDaemon]:
    with running(corpus("dendron-site")) as d:
        yield d


def drive(d: RunningDaemon, scenario: Scenario) -> Any:
    """Start ``sidecar lsp`` for the daemon's vault, initialise, run ``scenario``, shut down."""

    async def run() -> Any:
        config = ClientServerConfig(
            [sys.executable, "-m", "sidecar", "lsp", "--vault", str(d.vault)], server_env=d.env
        )
        client = await config.start()
        try:
            await client.initialize_session(t.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                root_uri=d.vault.as_uri(),
            ))  # fmt: skip
            return await asyncio.wait_for(scenario(client, d.vault), timeout=60)
        finally:
            await client.shutdown_session()

    return asyncio.run(run())


def uri(vault: Path, rel: str) -> str:
    return (vault / rel).as_uri()


def doc(vault: Path, rel: str) -> t.TextDocumentIdentifier:
    return t.TextDocumentIdentifier(uri(vault, rel))


async def open_note(client: LanguageClient, vault: Path, rel: str) -> str:
    text = (vault / rel).read_text("utf-8")
    client.text_document_did_open(t.DidOpenTextDocumentParams(
        t.TextDocumentItem(uri(vault, rel), "markdown", 1, text)))  # fmt: skip
    return text


def line_of(text: str, needle: str) -> tuple[int, int]:
    """0-based (line, column) of the first ``needle``."""
    for i, line in enumerate(text.split("\n")):
        if needle in line:
            return i, line.index(needle)
    raise AssertionError(f"{needle!r} not found")


def test_completion_of_note_names_headings_and_relations(daemon: RunningDaemon) -> None:
    async def scenario(client: LanguageClient, vault: Path) -> dict[str, Any]:
        rel = "dendron.topic.doctor.md"
        text = await open_note(client, vault, rel)
        end = len(text.split("\n"))
        edited = text + "\nSee [[dendron.topic.vau\nand [[dendron.topic.vaults#Rem\n"
        client.text_document_did_change(t.DidChangeTextDocumentParams(
            t.VersionedTextDocumentIdentifier(uri=uri(vault, rel), version=2),
            [t.TextDocumentContentChangeWholeDocument(edited)]))  # fmt: skip
        out = {}
        for key, line, col in (("notes", end, 23), ("headings", end + 1, 30)):
            got = await client.text_document_completion_async(
                t.CompletionParams(doc(vault, rel), t.Position(line, col))
            )
            assert isinstance(got, t.CompletionList)
            out[key] = got.items
        return out

    out = drive(daemon, scenario)
    labels = [i.label for i in out["notes"]]
    assert labels[0] == "dendron.topic.vaults"
    assert "dendron.topic.vaults.cook.transitive-vaults" in labels
    first = out["notes"][0].text_edit
    assert isinstance(first, t.TextEdit) and first.new_text == "dendron.topic.vaults]]"
    assert first.range.start.character == 6 and first.range.end.character == 23
    heads = [i.label for i in out["headings"]]
    assert heads == ["Remote Vault", "Remove Vault", "Remote"]  # headings 53, 86, 116


def test_relation_completion_in_frontmatter(daemon: RunningDaemon) -> None:
    async def scenario(client: LanguageClient, vault: Path) -> tuple[list[str], list[str]]:
        rel = "dendron.topic.doctor.md"
        text = await open_note(client, vault, rel)
        head, _, body = text.partition("\n---\n")
        edited = head + "\nrelations:\n  dep\n  supersedes:\n    - dendron.topic.vau\n---\n" + body
        client.text_document_did_change(t.DidChangeTextDocumentParams(
            t.VersionedTextDocumentIdentifier(uri=uri(vault, rel), version=2),
            [t.TextDocumentContentChangeWholeDocument(edited)]))  # fmt: skip
        key_line, _ = line_of(edited, "  dep")
        names = await client.text_document_completion_async(
            t.CompletionParams(doc(vault, rel), t.Position(key_line, 5))
        )
        target = await client.text_document_completion_async(
            t.CompletionParams(doc(vault, rel), t.Position(key_line + 2, 23))
        )
        assert isinstance(names, t.CompletionList) and isinstance(target, t.CompletionList)
        return [i.label for i in names.items], [str(i.text_edit.new_text) for i in target.items
                                                if i.text_edit]  # fmt: skip

    names, targets = drive(daemon, scenario)
    assert names == ["depends_on"]
    assert targets[0] == '"[[dendron.topic.vaults]]"'


def test_definition_goes_to_the_heading(daemon: RunningDaemon) -> None:
    async def scenario(client: LanguageClient, vault: Path) -> Any:
        rel = "dendron.faq.md"
        text = await open_note(client, vault, rel)
        line, col = line_of(text, "dendron.topic.vaults#remote-vault")
        note = await client.text_document_definition_async(
            t.DefinitionParams(doc(vault, rel), t.Position(line, col + 3))
        )
        heading = await client.text_document_definition_async(
            t.DefinitionParams(doc(vault, rel), t.Position(line, col + 24))
        )
        return note, heading

    note, heading = drive(daemon, scenario)
    assert isinstance(note, t.Location) and isinstance(heading, t.Location)
    assert note.uri.endswith("/dendron.topic.vaults.md")
    # the link names the heading "Remote Vault" (line 53): a definition lands on it either way
    assert note.range.start.line == 52 and heading.range.start.line == 52


def test_references_are_the_backlinks_with_columns(daemon: RunningDaemon) -> None:
    async def scenario(client: LanguageClient, vault: Path) -> Any:
        rel = "dendron.topic.pod-v2.quickstart.md"
        await open_note(client, vault, rel)
        return await client.text_document_references_async(t.ReferenceParams(
            text_document=doc(vault, rel), position=t.Position(0, 0),
            context=t.ReferenceContext(include_declaration=False)))  # fmt: skip

    locations = drive(daemon, scenario)
    assert locations is not None
    found = {(Path(loc.uri).name, loc.range.start.line) for loc in locations}
    assert ("dendron.topic.pod-v2.ref.builtin.google-docs.export.md", 16) in found
    assert ("dendron.topic.pod-v2.connections.md", 11) in found
    assert len({name for name, _ in found}) == 6
    export = next(loc for loc in locations if "google-docs.export" in loc.uri)
    line = (daemon.vault / "dendron.topic.pod-v2.ref.builtin.google-docs.export.md").read_text()
    text = line.split("\n")[16]
    assert text[export.range.start.character : export.range.end.character] == (
        "[[dendron.topic.pod-v2.quickstart]]"
    )


def test_diagnostics_on_an_unsaved_change_and_their_fixes(daemon: RunningDaemon) -> None:
    async def scenario(client: LanguageClient, vault: Path) -> Any:
        rel = "dendron.topic.doctor.md"
        text = await open_note(client, vault, rel)
        await client.wait_for_notification(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        before = list(client.diagnostics.get(uri(vault, rel), []))
        edited = text + "\nSee [[dendron.topic.vaultz]] too.\n"
        client.text_document_did_change(t.DidChangeTextDocumentParams(
            t.VersionedTextDocumentIdentifier(uri=uri(vault, rel), version=2),
            [t.TextDocumentContentChangeWholeDocument(edited)]))  # fmt: skip
        for _ in range(50):
            await client.wait_for_notification(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            after = client.diagnostics.get(uri(vault, rel), [])
            if any("vaultz" in d.message for d in after):
                break
        broken = next(d for d in after if "vaultz" in d.message)
        actions = await client.text_document_code_action_async(t.CodeActionParams(
            doc(vault, rel), broken.range, t.CodeActionContext([broken])))  # fmt: skip
        return before, broken, actions, len(edited.split("\n"))

    before, broken, actions, lines = drive(daemon, scenario)
    assert not any("vaultz" in d.message for d in before)
    assert broken.code == "dangling_target" and broken.range.start.line == lines - 2
    assert broken.range.start.character == 4 and broken.range.end.character == 28
    titles = [a.title for a in actions]
    assert "Create note dendron.topic.vaultz.md" in titles
    assert "Change to [[dendron.topic.vaults]]" in titles
    fix = next(a for a in actions if a.title == "Change to [[dendron.topic.vaults]]")
    edit = fix.edit.document_changes[0].edits[0]
    assert edit.new_text == "dendron.topic.vaults" and edit.range.start.character == 6
    assert not (daemon.vault / "dendron.topic.vaultz.md").exists()  # nothing was written


def test_rename_a_note_updates_every_link(daemon: RunningDaemon) -> None:
    async def scenario(client: LanguageClient, vault: Path) -> Any:
        rel = "dendron.topic.pod-v2.ref.builtin.google-docs.export.md"
        text = await open_note(client, vault, rel)
        line, col = line_of(text, "[[dendron.topic.pod-v2.quickstart]]")
        where = t.Position(line, col + 5)
        span = await client.text_document_prepare_rename_async(
            t.PrepareRenameParams(doc(vault, rel), where)
        )
        edit = await client.text_document_rename_async(
            t.RenameParams(doc(vault, rel), where, "dendron.topic.pod-v2.getting-started")
        )
        return span, edit

    span, edit = drive(daemon, scenario)
    assert isinstance(span, t.Range) and span.end.character - span.start.character == len(
        "dendron.topic.pod-v2.quickstart"
    )
    changes = edit.document_changes
    renames = [c for c in changes if isinstance(c, t.RenameFile)]
    assert len(renames) == 1 and renames[0].new_uri.endswith(
        "/dendron.topic.pod-v2.getting-started.md"
    )
    edited = {Path(c.text_document.uri).name: c.edits for c in changes
              if isinstance(c, t.TextDocumentEdit)}  # fmt: skip
    assert len(edited) == 6
    for name, edits in edited.items():
        lines = (daemon.vault / name).read_text("utf-8").split("\n")
        for x in edits:
            old = lines[x.range.start.line][x.range.start.character : x.range.end.character]
            assert old == "dendron.topic.pod-v2.quickstart", name
            assert x.new_text == "dendron.topic.pod-v2.getting-started"
    assert (daemon.vault / "dendron.topic.pod-v2.quickstart.md").exists()  # the editor renames


def test_rename_a_heading_updates_anchors(daemon: RunningDaemon) -> None:
    async def scenario(client: LanguageClient, vault: Path) -> Any:
        rel = "dendron.topic.vaults.md"
        await open_note(client, vault, rel)
        return await client.text_document_rename_async(
            t.RenameParams(doc(vault, rel), t.Position(52, 6), "Remote Vaults")
        )

    edit = drive(daemon, scenario)
    by_file = {Path(c.text_document.uri).name: [(x.range.start.line, x.new_text) for x in c.edits]
               for c in edit.document_changes}  # fmt: skip
    assert by_file["dendron.topic.vaults.md"] == [(52, "Remote Vaults")]
    assert by_file["dendron.faq.md"] == [(223, "remote-vaults")]
    assert by_file["dendron.topic.doctor.md"] == [(119, "remote-vaults")]
    assert by_file["dendron.topic.vaults.cook.transitive-vaults.md"] == [(10, "remote-vaults")]
    assert len(by_file) == 4


def test_hover_and_symbols(daemon: RunningDaemon) -> None:
    async def scenario(client: LanguageClient, vault: Path) -> Any:
        rel = "dendron.faq.md"
        text = await open_note(client, vault, rel)
        line, col = line_of(text, "dendron.topic.vaults#remote-vault")
        hover = await client.text_document_hover_async(
            t.HoverParams(doc(vault, rel), t.Position(line, col + 3))
        )
        symbols = await client.text_document_document_symbol_async(
            t.DocumentSymbolParams(doc(vault, "dendron.topic.vaults.md"))
        )
        found = await client.workspace_symbol_async(t.WorkspaceSymbolParams("Doctor"))
        return hover, symbols, found

    hover, symbols, found = drive(daemon, scenario)
    assert isinstance(hover.contents, t.MarkupContent)
    assert "`dendron.topic.vaults.md`" in hover.contents.value
    assert "#### Remote Vault" in hover.contents.value
    names = [s.name for s in symbols]
    assert names[:2] == ["Summary", "Commands"]
    commands = symbols[1]
    assert [c.name for c in commands.children][:2] == ["Create New Vault", "Add Existing Vault"]
    assert any(s.location.uri.endswith("/dendron.topic.doctor.md") for s in found)


def test_a_rename_that_would_leave_the_vault_is_refused(daemon: RunningDaemon) -> None:
    """As rust-analyzer refuses a rename outside the workspace: ``../../x`` gave an edit (and a
    RenameFile) pointing outside the vault, which the editor would have carried out."""

    async def scenario(client: LanguageClient, vault: Path) -> list[str]:
        rel = "dendron.topic.pod-v2.ref.builtin.google-docs.export.md"
        text = await open_note(client, vault, rel)
        line, col = line_of(text, "[[dendron.topic.pod-v2.quickstart]]")
        refused = []
        for name in ["../../x", "a/../../x", "..\\..\\x"]:
            try:
                await client.text_document_rename_async(
                    t.RenameParams(doc(vault, rel), t.Position(line, col + 5), name)
                )
            except Exception as exc:  # the server's error reaches the client as an exception
                refused.append(str(exc))
        return refused

    refused = drive(daemon, scenario)
    assert len(refused) == 3 and all("outside the vault" in r for r in refused), refused
