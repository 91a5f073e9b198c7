"""``sidecar lsp`` on vaults as people name them: every feature on notes whose paths have spaces,
unicode (stored NFD, typed NFC), ``#``, ``%`` and parentheses, on a copy of kepano's vault (no
``.obsidian/``) and a small vault written here. Each server starts with its working directory
outside the vault and learns the vault only from ``initialize``, as an editor starts it."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import unicodedata
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from lsprotocol import types as t
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from sidecar.lsp.uris import to_path
from tests.conftest import corpus
from tests.daemon_harness import RunningDaemon, running

pytestmark = [pytest.mark.slow, pytest.mark.e2e]
Scenario = Callable[[LanguageClient], Awaitable[Any]]


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


CREME = nfd("Café notes/Crème brûlée.md")  # stored decomposed, as macOS writes names
CREME_NFC = unicodedata.normalize("NFC", CREME)
BUDGET = "Budget 100% (draft).md"
PLAN = "Plan #2.md"
SMALL = {
    "Home.md": "# Home\n\nDessert: [[Crème brûlée]] and [[Budget 100% (draft)]].\n",
    CREME: "---\ntags: [food]\n---\n# Crème brûlée\n\n## Caramel\n\nSee [[Home]].\n",
    BUDGET: "# Budget\n\nFor [[Crème brûlée#Caramel]].\n",
    PLAN: "# Plan\n\nThe [[Home]] note.\n",
}


@pytest.fixture(scope="module")
def runtime() -> Iterator[dict[str, str]]:
    """One runtime folder for both daemons, as on a real machine: a server that routes to
    either vault finds each one's socket there."""
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="scr") as folder:
        yield {"XDG_RUNTIME_DIR": folder}


@pytest.fixture(scope="module")
def kepano(runtime: dict[str, str]) -> Iterator[RunningDaemon]:
    with running(corpus("kepano-obsidian"), env=runtime) as d:
        yield d


@pytest.fixture(scope="module")
def small(runtime: dict[str, str]) -> Iterator[RunningDaemon]:
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="scn") as src:
        for rel, text in SMALL.items():
            (Path(src) / rel).parent.mkdir(parents=True, exist_ok=True)
            (Path(src) / rel).write_text(text, "utf-8")
        with running(Path(src), env=runtime) as d:
            yield d


def vault_uri(path: Path) -> str:
    return path.as_uri()


def uri(vault: Path, rel: str, form: str = "NFD") -> str:
    """A document URI as a client writes it: ``NFC`` composes the name (macOS editors do)."""
    name = unicodedata.normalize(form, rel) if form == "NFC" else rel
    return "file://" + quote(f"{vault}/{name}")


def drive(d: RunningDaemon, scenario: Scenario, *, folders: list[Path] | None = None) -> Any:
    """``sidecar lsp`` started in a folder outside the vault, the vault named only by rootUri
    (or by workspace folders), driven through ``scenario``."""
    env = {k: v for k, v in d.env.items() if k != "SIDECAR_VAULT"}

    async def run() -> Any:
        client = make_test_lsp_client()
        with tempfile.TemporaryDirectory(prefix="lsp-cwd") as cwd:
            await client.start_io(sys.executable, "-m", "sidecar", "lsp", env=env, cwd=cwd)
            try:
                await client.initialize_session(t.InitializeParams(
                    capabilities=client_capabilities("neovim"),
                    root_uri=vault_uri(d.vault) if folders is None else None,
                    workspace_folders=None if folders is None else [
                        t.WorkspaceFolder(vault_uri(f), f.name) for f in folders],
                    initialization_options={"autostart": False},
                ))  # fmt: skip
                return await asyncio.wait_for(scenario(client), timeout=60)
            finally:
                await client.shutdown_session()

    return asyncio.run(run())


async def open_doc(client: LanguageClient, doc_uri: str, text: str) -> None:
    client.text_document_did_open(t.DidOpenTextDocumentParams(
        t.TextDocumentItem(doc_uri, "markdown", 1, text)))  # fmt: skip


def change(client: LanguageClient, doc_uri: str, text: str, version: int = 2) -> None:
    client.text_document_did_change(t.DidChangeTextDocumentParams(
        t.VersionedTextDocumentIdentifier(uri=doc_uri, version=version),
        [t.TextDocumentContentChangeWholeDocument(text)]))  # fmt: skip


async def diagnostic_about(client: LanguageClient, doc_uri: str, needle: str) -> t.Diagnostic:
    for _ in range(100):
        found = [d for d in client.diagnostics.get(doc_uri, []) if needle in d.message]
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no diagnostic about {needle!r}: {client.diagnostics}")


def at(text: str, needle: str, offset: int = 0) -> t.Position:
    for i, line in enumerate(text.split("\n")):
        if needle in line:
            return t.Position(i, line.index(needle) + offset)
    raise AssertionError(f"{needle!r} not found")


def end_of(text: str) -> t.Position:
    lines = text.split("\n")
    return t.Position(len(lines) - 1, len(lines[-1]))


def ident(doc_uri: str) -> t.TextDocumentIdentifier:
    return t.TextDocumentIdentifier(doc_uri)


def references(doc_uri: str, line: int = 0) -> t.ReferenceParams:
    """References of the note itself (from a line that is no heading and no link)."""
    return t.ReferenceParams(text_document=ident(doc_uri), position=t.Position(line, 0),
                             context=t.ReferenceContext(include_declaration=False))  # fmt: skip


def rel_of(vault: Path, doc_uri: str) -> str:
    """The vault path a URI names, composed (NFC), whichever form the URI wrote."""
    path = to_path(doc_uri)
    assert path is not None
    return unicodedata.normalize("NFC", os.path.relpath(path, vault))


# -- kepano: real note names with spaces ------------------------------------------------------

MINIMAL = "Notes/Minimal Theme.md"
MEETING = "Notes/2023-09-12 Meeting with Steph.md"


def test_kepano_completion_on_unsaved_text(kepano: RunningDaemon) -> None:
    async def scenario(client: LanguageClient) -> Any:
        doc = uri(kepano.vault, MINIMAL)
        text = (kepano.vault / MINIMAL).read_text("utf-8")
        await open_doc(client, doc, text)
        edited = text + "\nSee [[Steph An"
        change(client, doc, edited)
        notes = await client.text_document_completion_async(
            t.CompletionParams(ident(doc), end_of(edited))
        )
        edited += "]] and [[Kevin Kelly#Boo"
        change(client, doc, edited, 3)
        heads = await client.text_document_completion_async(
            t.CompletionParams(ident(doc), end_of(edited)))  # fmt: skip
        return notes, heads

    notes, heads = drive(kepano, scenario)
    assert isinstance(notes, t.CompletionList) and notes.items[0].label == "Steph Ango"
    assert isinstance(heads, t.CompletionList) and [i.label for i in heads.items] == ["Books"]


def test_kepano_definition_hover_and_references(kepano: RunningDaemon) -> None:
    async def scenario(client: LanguageClient) -> Any:
        doc = uri(kepano.vault, MEETING)
        text = (kepano.vault / MEETING).read_text("utf-8")
        await open_doc(client, doc, text)
        where = at(text, "[[Out of Control]]", 4)
        found = await client.text_document_definition_async(t.DefinitionParams(ident(doc), where))
        hover = await client.text_document_hover_async(t.HoverParams(ident(doc), where))
        steph = uri(kepano.vault, "References/Steph Ango.md")
        refs = await client.text_document_references_async(references(steph))
        return found, hover, refs

    found, hover, refs = drive(kepano, scenario)
    assert isinstance(found, t.Location)
    assert rel_of(kepano.vault, found.uri) == "References/Out of Control.md"
    assert "`References/Out of Control.md`" in hover.contents.value
    sources = sorted({rel_of(kepano.vault, r.uri) for r in refs})
    assert MEETING in sources and "Clippings/Buy wisely.md" in sources and len(sources) == 6
    meeting = next(r for r in refs if rel_of(kepano.vault, r.uri) == MEETING)
    line = (kepano.vault / MEETING).read_text("utf-8").split("\n")[meeting.range.start.line]
    assert line[meeting.range.start.character : meeting.range.end.character] == "[[Steph Ango]]"


def test_kepano_diagnostics_and_preferred_fix_on_unsaved_text(kepano: RunningDaemon) -> None:
    async def scenario(client: LanguageClient) -> Any:
        doc = uri(kepano.vault, MINIMAL)
        text = (kepano.vault / MINIMAL).read_text("utf-8")
        await open_doc(client, doc, text)
        change(client, doc, text + "\nSee [[Steph Angoo]] and [[No Such Note Here]].\n")
        broken = await diagnostic_about(client, doc, "Steph Angoo")
        other = await diagnostic_about(client, doc, "No Such Note Here")
        actions = await client.text_document_code_action_async(t.CodeActionParams(
            ident(doc), broken.range, t.CodeActionContext([broken])))  # fmt: skip
        return broken, other, actions

    broken, other, actions = drive(kepano, scenario)
    assert broken.code == "dangling_target" and other.code == "dangling_target"
    preferred = [a for a in actions if a.is_preferred]
    assert [a.title for a in preferred] == ["Change to [[Steph Ango]]"]
    change_ = preferred[0].edit.document_changes[0]
    assert rel_of(kepano.vault, change_.text_document.uri) == MINIMAL
    assert change_.edits[0].new_text == "Steph Ango"


def test_kepano_rename_a_spaced_note(kepano: RunningDaemon) -> None:
    async def scenario(client: LanguageClient) -> Any:
        doc = uri(kepano.vault, MEETING)
        text = (kepano.vault / MEETING).read_text("utf-8")
        await open_doc(client, doc, text)
        return await client.text_document_rename_async(t.RenameParams(
            ident(doc), at(text, "[[Out of Control]]", 4), "Out of Order"))  # fmt: skip

    edit = drive(kepano, scenario)
    renames = [c for c in edit.document_changes if isinstance(c, t.RenameFile)]
    assert [
        (rel_of(kepano.vault, r.old_uri), rel_of(kepano.vault, r.new_uri)) for r in renames
    ] == [("References/Out of Control.md", "References/Out of Order.md")]
    edits = {rel_of(kepano.vault, c.text_document.uri): [x.new_text for x in c.edits]
             for c in edit.document_changes if isinstance(c, t.TextDocumentEdit)}  # fmt: skip
    assert edits[MEETING] == ["Out of Order"]


# -- a small vault: NFD names, '#', '%', parentheses --------------------------------------------


def test_nfd_vault_every_feature(small: RunningDaemon) -> None:
    """The client writes the NFD-stored note's URI composed (NFC); the server finds the file."""

    async def scenario(client: LanguageClient) -> Any:
        creme = uri(small.vault, CREME, "NFC")
        text = (small.vault / CREME).read_text("utf-8")
        await open_doc(client, creme, text)
        edited = text + "\nAlso [[Budg"
        change(client, creme, edited)
        done = await client.text_document_completion_async(
            t.CompletionParams(ident(creme), end_of(edited)))  # fmt: skip
        change(client, creme, text + "\nAlso [[Hoem]].\n", 3)
        broken = await diagnostic_about(client, creme, "Hoem")
        actions = await client.text_document_code_action_async(t.CodeActionParams(
            ident(creme), broken.range, t.CodeActionContext([broken])))  # fmt: skip
        refs = await client.text_document_references_async(references(creme))
        home = uri(small.vault, "Home.md")
        home_text = SMALL["Home.md"]
        await open_doc(client, home, home_text)
        where = at(home_text, "[[Crème", 3)
        found = await client.text_document_definition_async(t.DefinitionParams(ident(home), where))
        hover = await client.text_document_hover_async(t.HoverParams(ident(home), where))
        budget = await client.text_document_definition_async(
            t.DefinitionParams(ident(home), at(home_text, "[[Budget", 3))
        )
        rename = await client.text_document_rename_async(t.RenameParams(
            ident(home), where, "Crème caramel"))  # fmt: skip
        return done, broken, actions, refs, found, hover, budget, rename

    done, broken, actions, refs, found, hover, budget, rename = drive(small, scenario)
    assert isinstance(done, t.CompletionList) and done.items[0].label == "Budget 100% (draft)"
    assert broken.code == "dangling_target"
    assert [a.title for a in actions if a.is_preferred] == ["Change to [[Home]]"]
    assert sorted(rel_of(small.vault, r.uri) for r in refs) == [BUDGET, "Home.md"]
    assert found.uri == uri(small.vault, CREME, "NFC")  # the document as the client opened it
    assert found.range.start.line == 0
    assert "Crème brûlée" in hover.contents.value
    assert rel_of(small.vault, budget.uri) == BUDGET
    renames = [c for c in rename.document_changes if isinstance(c, t.RenameFile)]
    assert [r.old_uri for r in renames] == [uri(small.vault, CREME, "NFC")]
    new = to_path(renames[0].new_uri) or ""  # in the stored folder, as the new name was typed
    assert new == f"{small.vault}/{nfd('Café notes')}/Crème caramel.md"
    edited = {rel_of(small.vault, c.text_document.uri) for c in rename.document_changes
              if isinstance(c, t.TextDocumentEdit)}  # fmt: skip
    assert edited == {"Home.md", BUDGET}


def test_hash_and_percent_in_a_name(small: RunningDaemon) -> None:
    """``#`` must arrive encoded (``%23``): unencoded it would start the URI's fragment."""

    async def scenario(client: LanguageClient) -> Any:
        plan = uri(small.vault, PLAN)
        await open_doc(client, plan, SMALL[PLAN] + "[[Nowhere]]\n")
        broken = await diagnostic_about(client, plan, "Nowhere")
        symbols = await client.text_document_document_symbol_async(
            t.DocumentSymbolParams(ident(plan)))  # fmt: skip
        budget = uri(small.vault, BUDGET)
        await open_doc(client, budget, SMALL[BUDGET])
        head = await client.text_document_definition_async(
            t.DefinitionParams(ident(budget), at(SMALL[BUDGET], "#Caramel", 2))
        )
        return plan, broken, symbols, head

    plan, broken, symbols, head = drive(small, scenario)
    assert "%23" in plan and broken.code == "dangling_target"
    assert [s.name for s in symbols] == ["Plan"]
    assert head.uri == uri(small.vault, CREME) and head.range.start.line == 5  # not open: stored


# -- which vault ---------------------------------------------------------------------------------


def test_two_workspace_folders_route_by_path(kepano: RunningDaemon, small: RunningDaemon) -> None:
    async def scenario(client: LanguageClient) -> Any:
        outside = Path(tempfile.mkdtemp(prefix="lsp-out")) / "Loose note.md"
        outside.write_text("[[Home]] [[Nowhere]]\n", "utf-8")
        for rel, d in ((MINIMAL, kepano), ("Home.md", small)):
            await open_doc(client, uri(d.vault, rel), (d.vault / rel).read_text("utf-8") +
                           "\n[[Nowhere at all]]\n")  # fmt: skip
        a = await diagnostic_about(client, uri(kepano.vault, MINIMAL), "Nowhere at all")
        b = await diagnostic_about(client, uri(small.vault, "Home.md"), "Nowhere at all")
        await open_doc(client, outside.as_uri(), outside.read_text("utf-8"))
        loose = await client.text_document_completion_async(
            t.CompletionParams(ident(outside.as_uri()), t.Position(0, 4))
        )
        hover = await client.text_document_hover_async(
            t.HoverParams(ident(outside.as_uri()), t.Position(0, 3))
        )
        await asyncio.sleep(0.5)  # time for any diagnostics the loose note would get
        home_refs = await client.text_document_references_async(
            references(uri(small.vault, "Home.md"), 1)
        )
        messages = list(client.messages)
        return a, b, loose, hover, client.diagnostics.get(outside.as_uri()), home_refs, messages

    a, b, loose, hover, outside_diags, home_refs, messages = drive(
        kepano, scenario, folders=[kepano.vault, small.vault]
    )
    assert a.code == b.code == "dangling_target"
    assert loose is None and hover is None and not outside_diags
    assert {rel_of(small.vault, r.uri) for r in home_refs} == {CREME_NFC, PLAN}
    assert messages == []  # no popups


def test_workspace_folder_added_later(small: RunningDaemon) -> None:
    async def scenario(client: LanguageClient) -> Any:
        home = uri(small.vault, "Home.md")
        await open_doc(client, home, SMALL["Home.md"])
        before = await client.text_document_definition_async(
            t.DefinitionParams(ident(home), at(SMALL["Home.md"], "[[Crème", 3))
        )
        client.workspace_did_change_workspace_folders(
            t.DidChangeWorkspaceFoldersParams(
                t.WorkspaceFoldersChangeEvent(
                    added=[t.WorkspaceFolder(vault_uri(small.vault), "v")], removed=[]
                )
            )
        )
        after = await client.text_document_definition_async(t.DefinitionParams(
            ident(home), at(SMALL["Home.md"], "[[Crème", 3)))  # fmt: skip
        return before, after

    other = Path(tempfile.mkdtemp(prefix="lsp-ws"))
    before, after = drive(small, scenario, folders=[other])
    assert before is None
    assert isinstance(after, t.Location) and rel_of(small.vault, after.uri) == CREME_NFC
