"""The LSP features of ``sidecar lsp``: one plain function per method, registered on one
``SidecarServer``, with the capabilities ``initialize`` advertises.

Every handler turns the client's position into (line, column) of the document, asks the pure
modules (``complete``, ``link_edits``) and ``navigate``, and converts back. A daemon that
cannot be reached answers empty (and says so in the log) rather than failing the editor.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from sidecar import __version__
from sidecar.core import link_edits as e
from sidecar.core.fix import add_relation
from sidecar.core.link_spans import headings, split_lines
from sidecar.errors import DaemonUnreachable, SidecarError, UsageError
from sidecar.lsp import complete, navigate
from sidecar.lsp.documents import Positions, apply_change, choose_encoding
from sidecar.lsp.names import Names
from sidecar.lsp.protocol import Connection
from sidecar.lsp.server import DEBOUNCE_S, Scope, SidecarServer, finding_link
from sidecar.lsp.startup import Startup
from sidecar.lsp.types import (
    KIND_FILE,
    KIND_PROPERTY,
    KIND_REFERENCE,
    SYMBOL_FILE,
    SYMBOL_STRING,
    SYNC_FULL,
    Json,
    Location,
    Range,
    compact,
    location,
    position,
    span,
)
from sidecar.lsp.uris import to_path
from sidecar.lsp.vault import Vault
from sidecar.lsp.vaults import Vaults

log = logging.getLogger(__name__)
R = TypeVar("R")
KIND = {"note": KIND_FILE, "relation_target": KIND_FILE, "heading": KIND_REFERENCE,
        "block": KIND_REFERENCE, "relation": KIND_PROPERTY}  # fmt: skip
MAX_SYMBOLS = 200
CAPABILITIES: Json = {
    "textDocumentSync": {"openClose": True, "change": SYNC_FULL, "save": True},
    "completionProvider": {"triggerCharacters": ["[", "#", "^", " "]},
    "hoverProvider": True,
    "definitionProvider": True,
    "referencesProvider": True,
    "documentSymbolProvider": True,
    "codeActionProvider": {"codeActionKinds": ["quickfix"]},
    "workspaceSymbolProvider": {"resolveProvider": False},
    "renameProvider": {"prepareProvider": True},
    "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True}},
}


def quiet(default: Any) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """A handler whose daemon is away answers ``default`` (logged) instead of an error; any
    other refusal reaches the editor as invalid params (-32602)."""

    def wrap(fn: Callable[..., R]) -> Callable[..., R]:
        @functools.wraps(fn)
        def inner(*args: Any) -> R:
            try:
                return fn(*args)
            except DaemonUnreachable as exc:
                log.warning("%s", exc)
                return default  # type: ignore[no-any-return]
            except SidecarError as exc:  # the daemon's own codes mean other things in LSP
                raise UsageError(str(exc)) from None

        return inner

    return wrap


def build(vaults: Vaults, conn: Connection, autostart: bool = True) -> SidecarServer:
    ls = SidecarServer(vaults, conn)
    startup = Startup(ls, autostart)
    on = ls.methods

    def where(params: Json) -> tuple[Scope, str, list[str], int, int] | None:
        found = ls.doc(params["textDocument"]["uri"])
        lines = found[0].lines(found[1]) if found else None
        if found is None or lines is None:
            return None
        scope, rel = found
        line, col = scope.position(lines, params["position"])
        return scope, rel, lines, line, col

    def initialize(params: Json) -> Json:
        ls.capabilities = params.get("capabilities") or {}
        encoding = choose_encoding(ls.capabilities)
        ls.positions = Positions(encoding)
        folders = [to_path(f["uri"]) for f in params.get("workspaceFolders") or []]
        if not folders:
            root = params.get("rootUri")
            folders = [to_path(root) if root else params.get("rootPath")]
        vaults.name(f for f in folders if f)
        options = params.get("initializationOptions")
        if isinstance(options, dict) and options.get("autostart") is False:
            startup.autostart = False
        return {"capabilities": {"positionEncoding": encoding, **CAPABILITIES},
                "serverInfo": {"name": "sidecar", "version": __version__}}  # fmt: skip

    ls.on_initialize = initialize

    def initialized(params: Json) -> None:
        for vault in vaults.named.values():
            startup.ensure(vault)

    def folders_changed(params: Json) -> None:
        event = params["event"]
        for folder in event.get("removed") or []:
            path = to_path(folder["uri"])
            gone = vaults.remove(path) if path else None
            if gone is not None:
                startup.forget(gone)
                for uri in ls.open_uris():
                    if ls.doc(uri) is None:  # no vault now: its diagnostics go
                        ls.clear_diagnostics(uri)
        for folder in event.get("added") or []:
            path = to_path(folder["uri"])
            if path:
                startup.ensure(vaults.add(path))
        for uri in ls.open_uris():
            ls.schedule_check(uri, 0)

    def did_open(params: Json) -> None:
        item = params["textDocument"]
        ls.opened(item["uri"], str(item["text"]), item.get("version"))
        found = ls.doc(item["uri"])
        if found is not None:
            startup.ensure(found[0].vault)
            ls.schedule_check(item["uri"], 0)

    def did_close(params: Json) -> None:
        ls.closed(params["textDocument"]["uri"])

    def did_change(params: Json) -> None:
        ident = params["textDocument"]
        doc = ls.documents.get(ident["uri"])
        if doc is None:
            return  # never opened: nothing to change
        for change in params["contentChanges"]:
            doc.text = apply_change(doc.text, change, ls.positions)
        doc.version = ident.get("version")
        ls.schedule_check(ident["uri"], DEBOUNCE_S)

    def did_save(params: Json) -> None:
        ls.schedule_check(params["textDocument"]["uri"], DEBOUNCE_S)

    @quiet(None)
    def completion(params: Json) -> Json | None:
        at = where(params)
        ctx = complete.context_at(at[2], at[3], at[4]) if at else None
        if at is None or ctx is None:
            return None
        scope, rel, lines, line, col = at
        found, cut = complete.items(ctx, scope.vault.names(), rel)
        where_ = scope.range(lines, line, ctx.start, col)
        return {"isIncomplete": cut, "items": [
            compact(label=i.label, kind=KIND[i.kind], detail=i.detail, sortText=f"{n:04d}",
                    filterText=ctx.prefix + i.label if ctx.kind == "note" else None,
                    textEdit={"range": where_, "newText": i.insert})
            for n, i in enumerate(found)
        ]}  # fmt: skip

    @quiet(None)
    def definition(params: Json) -> Location | None:
        at = where(params)
        return navigate.definition(*at) if at else None

    @quiet([])
    def references(params: Json) -> list[Location]:
        at = where(params)
        if at is None:
            return []
        scope, rel, lines, line, col = at
        target = navigate.target_at(scope, rel, lines, line, col) or navigate.Target(rel)
        return navigate.references(scope, target)

    @quiet(None)
    def hover(params: Json) -> Json | None:
        at = where(params)
        return navigate.hover(*at) if at else None

    def document_symbols(params: Json) -> list[Json]:
        found = ls.doc(params["textDocument"]["uri"])
        lines = found[0].lines(found[1]) if found else None
        return symbols(found[0], lines) if found and lines else []

    @quiet([])
    def workspace_symbols(params: Json) -> list[Json]:
        query = str(params["query"]).lower()
        hits = [(Scope(ls, v), n) for v in vaults.all() for n in _names(v).notes.values()
                if query in n.title.lower() or query in n.path.lower()]  # fmt: skip
        hits.sort(key=lambda h: (not h[1].title.lower().startswith(query), len(h[1].title),
                                 h[1].path))  # fmt: skip
        zero = span(position(0, 0), position(0, 0))
        return [{"name": n.title, "kind": SYMBOL_FILE, "containerName": n.path,
                 "location": location(scope.uri(n.path), zero)}
                for scope, n in hits[:MAX_SYMBOLS]]  # fmt: skip

    @quiet(None)
    def prepare_rename(params: Json) -> Range | None:
        at = where(params)
        target = navigate.target_at(*at) if at else None
        if at is None or target is None or target.span is None:
            return None
        line, start, end = target.span
        return at[0].range(at[2], line, start, end)

    @quiet(None)
    def rename(params: Json) -> Json | None:
        at = where(params)
        target = navigate.target_at(*at) if at else None
        if at is None or target is None:
            return None
        try:
            return navigate.rename(at[0], target, str(params["newName"]))
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    @quiet([])
    def code_actions(params: Json) -> list[Json]:
        found = ls.doc(params["textDocument"]["uri"])
        text = found[0].text(found[1]) if found else None
        if found is None or text is None:
            return []
        out: list[Json] = []
        for diag in params["context"]["diagnostics"]:
            data = diag.get("data")
            if diag.get("source") == "sidecar" and isinstance(data, dict):
                out += fixes(found[0], found[1], text, diag, data)
        return out

    on.update({
        "initialized": initialized,
        "workspace/didChangeWorkspaceFolders": folders_changed,
        "textDocument/didOpen": did_open,
        "textDocument/didClose": did_close,
        "textDocument/didChange": did_change,
        "textDocument/didSave": did_save,
        "textDocument/completion": completion,
        "textDocument/definition": definition,
        "textDocument/references": references,
        "textDocument/hover": hover,
        "textDocument/documentSymbol": document_symbols,
        "workspace/symbol": workspace_symbols,
        "textDocument/prepareRename": prepare_rename,
        "textDocument/rename": rename,
        "textDocument/codeAction": code_actions,
    })  # fmt: skip
    return ls


def symbols(ls: Scope, lines: list[str]) -> list[Json]:
    """Headings as a tree: each heading holds the deeper ones that follow it."""
    roots: list[Json] = []
    stack: list[tuple[int, Json]] = []
    for head in headings(lines):
        row = head.line - 1
        where = ls.range(lines, row, 0, len(lines[row]))
        sym: Json = {"name": head.text or "(empty)", "detail": "#" * head.level,
                     "kind": SYMBOL_STRING, "range": where, "selectionRange": where,
                     "children": []}  # fmt: skip
        while stack and stack[-1][0] >= head.level:
            stack.pop()
        (stack[-1][1]["children"] if stack else roots).append(sym)
        stack.append((head.level, sym))
    return roots


def fixes(ls: Scope, rel: str, text: str, diag: Json, finding: dict[str, Any]) -> list[Json]:
    """The safe fixes for one finding, as edits the editor applies (nothing is written here)."""
    lines = split_lines(text)
    rule = finding.get("rule")
    out: list[Json] = []
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
        create = {"kind": "create", "uri": ls.uri(new_path), "options": {"ignoreIfExists": True}}
        out.append({"title": f"Create note {new_path}", "kind": "quickfix", "diagnostics": [diag],
                    "edit": {"documentChanges": [create]}})  # fmt: skip
        for name, preferred in ls.vault.names().closest(part.text):
            edit_ = e.Edit(link_.line, part.start, part.end, name)
            out.append(_action(ls, f"Change to [[{name}]]", diag, rel, lines, [edit_],
                               preferred))  # fmt: skip
    if rule == "ambiguous_link" and link_ is not None:
        for cand in finding.get("related") or []:
            edit_ = e.Edit(link_.line, link_.name.start, link_.name.end, e.stem(str(cand)))
            out.append(_action(ls, f"Use [[{e.stem(str(cand))}]]", diag, rel, lines, [edit_]))
    return out


def _action(ls: Scope, title: str, diag: Json, rel: str, lines: list[str],
            edits: list[e.Edit], preferred: bool = False) -> Json:  # fmt: skip
    changes = navigate.doc_edit(ls, rel, lines, edits)
    return compact(title=title, kind="quickfix", diagnostics=[diag],
                   isPreferred=True if preferred else None,
                   edit={"documentChanges": changes})  # fmt: skip


def _names(vault: Vault) -> Names:
    """The vault's names; a vault whose daemon is away has none (workspace symbols span all)."""
    try:
        return vault.names()
    except DaemonUnreachable:
        return Names()
