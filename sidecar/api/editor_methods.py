"""Read-only methods for editors (``sidecar lsp``): names for completion, link resolution from a
note, every reference to a note or heading, and lint of an unsaved buffer.

None of them writes: a buffer sent to ``note.check`` is parsed and resolved in memory only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from sidecar.api.lint_methods import setup as lint_setup
from sidecar.api.registry import NOTE_FIELD_HELP, Method, Params, VaultPath
from sidecar.services import editor

if TYPE_CHECKING:
    from sidecar.services.context import Services

Note = Field(description=NOTE_FIELD_HELP)
MAX_BUFFER = 5_000_000


class CatalogParams(Params):
    since: int | None = Field(None, description="A version the caller holds; unchanged: true "
                              "and no notes when the index has not changed since.")  # fmt: skip


class ResolveParams(Params):
    source: VaultPath = Field(
        description="Vault-relative path of the note the links are written in."
    )
    links: list[str] = Field(description="Links as written: [[T#h|a]], [t](p.md#h), or a bare "
                             "wikilink target T#h.", max_length=1000)  # fmt: skip


class ReferencesParams(Params):
    note: VaultPath = Note
    heading: str | None = Field(None, description="Only links to this heading of the note.")


class CheckParams(Params):
    path: VaultPath = Field(
        description="Vault-relative path the buffer belongs to (need not exist)."
    )
    text: str = Field(description="The note's text as the editor holds it, saved or not.",
                      max_length=MAX_BUFFER)  # fmt: skip


def _catalog(s: Services, p: CatalogParams) -> dict[str, Any]:
    return editor.catalog(s.state, lint_setup(s)[0], p.since)


def _resolve(s: Services, p: ResolveParams) -> dict[str, Any]:
    return editor.resolve(s.state, p.source, p.links)


def _references(s: Services, p: ReferencesParams) -> dict[str, Any]:
    return editor.references(s.state, s.store, s.graph.note(p.note), p.heading)


def _check(s: Services, p: CheckParams) -> dict[str, Any]:
    taxonomy, config = lint_setup(s)
    return editor.check(s.state, p.path.replace("\\", "/").lstrip("/"), p.text, taxonomy, config)


METHODS = [
    Method("vault.catalog", CatalogParams, _catalog,
           "Every note's path, title, aliases, id, headings and block ids, and the relation "
           "names, for completion."),
    Method("note.resolve", ResolveParams, _resolve,
           "Where links written in a note lead: target, state, candidates, heading line."),
    Method("note.references", ReferencesParams, _references,
           "Every link to a note (or one of its headings) as written, with source and line, and "
           "its columns when the line is ASCII up to it."),
    Method("note.check", CheckParams, _check,
           "Lint findings for a note's unsaved text (parsed in memory; nothing is written)."),
]  # fmt: skip
