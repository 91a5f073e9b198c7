"""The LSP features of ``sidecar lsp``, registered on one ``SidecarServer``.

Every handler turns the client's position into (line, column) of the document, asks the pure
modules (``complete``, ``text``, ``edits``) and ``navigate``, and converts back. A daemon that
cannot be reached answers empty (and says so in the log) rather than failing the editor.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from lsprotocol import types as t
from pygls.exceptions import JsonRpcInvalidParams

from sidecar.core import link_edits as e
from sidecar.core.fix import add_relation
from sidecar.core.link_spans import headings, split_lines
from sidecar.errors import DaemonUnreachable, SidecarError
from sidecar.lsp import complete, navigate
from sidecar.lsp.names import Names
from sidecar.lsp.server import DEBOUNCE_S, Scope, SidecarServer, finding_link
from sidecar.lsp.startup import Startup
from sidecar.lsp.uris import to_path
from sidecar.lsp.vault import Vault
from sidecar.lsp.vaults import Vaults

log = logging.getLogger(__name__)
R = TypeVar("R")
KIND = {"note": t.CompletionItemKind.File, "relation_target": t.CompletionItemKind.File,
        "heading": t.CompletionItemKind.Reference, "block": t.CompletionItemKind.Reference,
        "relation": t.CompletionItemKind.Property}  # fmt: skip
MAX_SYMBOLS = 200


def quiet(default: Any) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """A handler whose daemon is away answers ``default`` (logged) instead of an error."""

    def wrap(fn: Callable[..., R]) -> Callable[..., R]:
        @functools.wraps(fn)
        def inner(*args: Any) -> R:
            try:
                return fn(*args)
            except DaemonUnreachable as exc:
                log.warning("%s", exc)
                return default  # type: ignore[no-any-return]
            except SidecarError as exc:
                raise JsonRpcInvalidParams(str(exc)) from None

        return inner

    return wrap


def build(vaults: Vaults, autostart: bool = True) -> SidecarServer:
    ls = SidecarServer(vaults)
    startup = Startup(ls, autostart)

    def where(uri: str, pos: t.Position) -> tuple[Scope, str, list[str], int, int] | None:
        found = ls.doc(uri)
        lines = found[0].lines(found[1]) if found else None
        if found is None or lines is None:
            return None
        scope, rel = found
        line, col = scope.position(lines, pos)
        return scope, rel, lines, line, col

    @ls.feature(t.INITIALIZE)
    def initialize(ls_: SidecarServer, params: t.InitializeParams) -> None:
        folders = [to_path(f.uri) for f in params.workspace_folders or []]
        if not folders:
            folders = [to_path(params.root_uri) if params.root_uri else params.root_path]
        vaults.name(f for f in folders if f)
        options = params.initialization_options
        if isinstance(options, dict) and options.get("autostart") is False:
            startup.autostart = False

    @ls.feature(t.INITIALIZED)
    def initialized(ls_: SidecarServer, params: t.InitializedParams) -> None:
        for vault in vaults.named.values():
            startup.ensure(vault)

    @ls.feature(t.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(ls_: SidecarServer, params: t.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.removed:
            path = to_path(folder.uri)
            gone = vaults.remove(path) if path else None
            if gone is not None:
                startup.forget(gone)
                for uri in ls.open_uris():
                    if ls.doc(uri) is None:  # no vault now: its diagnostics go
                        ls.text_document_publish_diagnostics(t.PublishDiagnosticsParams(uri, []))
        for folder in params.event.added:
            path = to_path(folder.uri)
            if path:
                startup.ensure(vaults.add(path))
        for uri in ls.open_uris():
            ls.schedule_check(uri, 0)

    @ls.feature(t.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls_: SidecarServer, params: t.DidOpenTextDocumentParams) -> None:
        ls.opened(params.text_document.uri)
        found = ls.doc(params.text_document.uri)
        if found is not None:
            startup.ensure(found[0].vault)
            ls.schedule_check(params.text_document.uri, 0)

    @ls.feature(t.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls_: SidecarServer, params: t.DidCloseTextDocumentParams) -> None:
        ls.closed(params.text_document.uri)

    @ls.feature(t.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls_: SidecarServer, params: t.DidChangeTextDocumentParams) -> None:
        ls.schedule_check(params.text_document.uri, DEBOUNCE_S)

    @ls.feature(t.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls_: SidecarServer, params: t.DidSaveTextDocumentParams) -> None:
        ls.schedule_check(params.text_document.uri, DEBOUNCE_S)

    @ls.feature(t.TEXT_DOCUMENT_COMPLETION,
                t.CompletionOptions(trigger_characters=["[", "#", "^", " "]))  # fmt: skip
    @quiet(None)
    def completion(ls_: SidecarServer, params: t.CompletionParams) -> t.CompletionList | None:
        at = where(params.text_document.uri, params.position)
        ctx = complete.context_at(at[2], at[3], at[4]) if at else None
        if at is None or ctx is None:
            return None
        scope, rel, lines, line, col = at
        found, cut = complete.items(ctx, scope.vault.names(), rel)
        span = scope.range(lines, line, ctx.start, col)
        return t.CompletionList(cut, [
            t.CompletionItem(i.label, kind=KIND[i.kind], detail=i.detail, sort_text=f"{n:04d}",
                             filter_text=ctx.prefix + i.label if ctx.kind == "note" else None,
                             text_edit=t.TextEdit(span, i.insert))
            for n, i in enumerate(found)
        ])  # fmt: skip

    @ls.feature(t.TEXT_DOCUMENT_DEFINITION)
    @quiet(None)
    def definition(ls_: SidecarServer, params: t.DefinitionParams) -> t.Location | None:
        at = where(params.text_document.uri, params.position)
        return navigate.definition(*at) if at else None

    @ls.feature(t.TEXT_DOCUMENT_REFERENCES)
    @quiet([])
    def references(ls_: SidecarServer, params: t.ReferenceParams) -> list[t.Location]:
        at = where(params.text_document.uri, params.position)
        if at is None:
            return []
        scope, rel, lines, line, col = at
        target = navigate.target_at(scope, rel, lines, line, col) or navigate.Target(rel)
        return navigate.references(scope, target)

    @ls.feature(t.TEXT_DOCUMENT_HOVER)
    @quiet(None)
    def hover(ls_: SidecarServer, params: t.HoverParams) -> t.Hover | None:
        at = where(params.text_document.uri, params.position)
        return navigate.hover(*at) if at else None

    @ls.feature(t.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbols(ls_: SidecarServer, params: t.DocumentSymbolParams) -> list[Any]:
        found = ls.doc(params.text_document.uri)
        lines = found[0].lines(found[1]) if found else None
        return symbols(found[0], lines) if found and lines else []

    @ls.feature(t.WORKSPACE_SYMBOL)
    @quiet([])
    def workspace_symbols(ls_: SidecarServer, params: t.WorkspaceSymbolParams) -> list[Any]:
        query = params.query.lower()
        hits = [(Scope(ls, v), n) for v in vaults.all() for n in _names(v).notes.values()
                if query in n.title.lower() or query in n.path.lower()]  # fmt: skip
        hits.sort(key=lambda h: (not h[1].title.lower().startswith(query), len(h[1].title),
                                 h[1].path))  # fmt: skip
        zero = t.Range(t.Position(0, 0), t.Position(0, 0))
        return [
            t.SymbolInformation(name=n.title, kind=t.SymbolKind.File, container_name=n.path,
                                location=t.Location(scope.uri(n.path), zero))
            for scope, n in hits[:MAX_SYMBOLS]
        ]  # fmt: skip

    @ls.feature(t.TEXT_DOCUMENT_PREPARE_RENAME)
    @quiet(None)
    def prepare_rename(ls_: SidecarServer, params: t.PrepareRenameParams) -> t.Range | None:
        at = where(params.text_document.uri, params.position)
        target = navigate.target_at(*at) if at else None
        if at is None or target is None or target.span is None:
            return None
        line, start, end = target.span
        return at[0].range(at[2], line, start, end)

    @ls.feature(t.TEXT_DOCUMENT_RENAME)
    @quiet(None)
    def rename(ls_: SidecarServer, params: t.RenameParams) -> t.WorkspaceEdit | None:
        at = where(params.text_document.uri, params.position)
        target = navigate.target_at(*at) if at else None
        if at is None or target is None:
            return None
        try:
            return navigate.rename(at[0], target, params.new_name)
        except ValueError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None

    @ls.feature(t.TEXT_DOCUMENT_CODE_ACTION,
                t.CodeActionOptions(code_action_kinds=[t.CodeActionKind.QuickFix]))  # fmt: skip
    @quiet([])
    def code_actions(ls_: SidecarServer, params: t.CodeActionParams) -> list[t.CodeAction]:
        found = ls.doc(params.text_document.uri)
        text = found[0].text(found[1]) if found else None
        if found is None or text is None:
            return []
        out: list[t.CodeAction] = []
        for diag in params.context.diagnostics:
            if diag.source == "sidecar" and isinstance(diag.data, dict):
                out += fixes(found[0], found[1], text, diag, diag.data)
        return out

    return ls


def symbols(ls: Scope, lines: list[str]) -> list[t.DocumentSymbol]:
    """Headings as a tree: each heading holds the deeper ones that follow it."""
    roots: list[t.DocumentSymbol] = []
    stack: list[tuple[int, t.DocumentSymbol]] = []
    for head in headings(lines):
        row = head.line - 1
        where = ls.range(lines, row, 0, len(lines[row]))
        sym = t.DocumentSymbol(head.text or "(empty)", t.SymbolKind.String, where, where,
                               detail="#" * head.level, children=[])  # fmt: skip
        while stack and stack[-1][0] >= head.level:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(sym)  # type: ignore[union-attr]
        stack.append((head.level, sym))
    return roots


def fixes(ls: Scope, rel: str, text: str, diag: t.Diagnostic,
          finding: dict[str, Any]) -> list[t.CodeAction]:  # fmt: skip
    """The safe fixes for one finding, as edits the editor applies (nothing is written here)."""
    lines = split_lines(text)
    rule = finding.get("rule")
    out: list[t.CodeAction] = []
    if rule == "missing_inverse" and finding.get("target") and finding.get("relation"):
        link = ls.vault.names().link_for(str(finding["target"]))
        new = add_relation(text, str(finding["relation"]), link)
        edit = e.minimal_edit(text, new) if new is not None else None
        if edit is not None:
            title = f"Add {finding['relation']}: [[{link}]]"
            out.append(_action(ls, title, diag, rel, lines, [edit], True))
    link_ = finding_link(lines, finding)
    if rule == "dangling_target" and link_ is not None:
        part = link_.label_name if link_.label_name and not link_.name.text else link_.name
        new_path = navigate.note_path_for(part.text)
        create = t.CreateFile(ls.uri(new_path), options=t.CreateFileOptions(ignore_if_exists=True))
        out.append(t.CodeAction(f"Create note {new_path}", t.CodeActionKind.QuickFix,
                                diagnostics=[diag],
                                edit=t.WorkspaceEdit(document_changes=[create])))  # fmt: skip
        for name, preferred in ls.vault.names().closest(part.text):
            edit_ = e.Edit(link_.line, part.start, part.end, name)
            out.append(_action(ls, f"Change to [[{name}]]", diag, rel, lines, [edit_],
                               preferred))  # fmt: skip
    if rule == "ambiguous_link" and link_ is not None:
        for cand in finding.get("related") or []:
            edit_ = e.Edit(link_.line, link_.name.start, link_.name.end, e.stem(str(cand)))
            out.append(_action(ls, f"Use [[{e.stem(str(cand))}]]", diag, rel, lines, [edit_]))
    return out


def _action(ls: Scope, title: str, diag: t.Diagnostic, rel: str, lines: list[str],
            edits: list[e.Edit], preferred: bool = False) -> t.CodeAction:  # fmt: skip
    changes = navigate.doc_edit(ls, rel, lines, edits)
    return t.CodeAction(title, t.CodeActionKind.QuickFix, diagnostics=[diag],
                        is_preferred=preferred or None,
                        edit=t.WorkspaceEdit(document_changes=changes))  # fmt: skip


def _names(vault: Vault) -> Names:
    """The vault's names; a vault whose daemon is away has none (workspace symbols span all)."""
    try:
        return vault.names()
    except DaemonUnreachable:
        return Names()
