"""Methods that read and change whole notes, and a note's context, shaped for agents:
``note.read``, ``note.write``, ``note.edit``, ``note.move``, ``note.context``.

The behaviour is ``services/notes.py``; here are the parameters, checked at the edge (paths in
the vault, one operation per edit), and how each is offered to a model.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from sidecar.api.registry import NOTE_FIELD_HELP, Agent, Method, Params, VaultPath
from sidecar.api.relation_methods import taxonomy_of
from sidecar.core.paging import PAGE_CHARS, page
from sidecar.errors import UsageError
from sidecar.services import notes
from sidecar.services.context import Services

Note = Field(description=NOTE_FIELD_HELP)
Hash = Field(None, description="From read_note: refused if the note changed since.")
CONTEXT_CHARS = 240
MAX_NOTE = 5_000_000  # characters of note text a request may carry (index.max_file_bytes)


class ReadParams(Params):
    note: VaultPath = Note
    heading: str | None = Field(None, description="Only this heading's section.")
    start_line: int | None = Field(None, ge=1, description="First line (1-based).")
    end_line: int | None = Field(None, ge=1, description="Last line (inclusive).")
    cursor: int | None = Field(None, ge=1, description="From next_cursor.")
    max_chars: int = Field(notes.READ_CHARS, ge=200, le=notes.MAX_READ_CHARS,
                           description="Most characters of text per answer.")  # fmt: skip


class WriteParams(Params):
    path: VaultPath = Field(description="Vault-relative path (.md optional).")
    content: str = Field(description="The whole note, frontmatter included.",
                         max_length=MAX_NOTE)  # fmt: skip
    expected_hash: str | None = Hash
    overwrite: bool = Field(False, description="Replace an existing note without a hash.")


class EditParams(Params):
    note: VaultPath = Note
    find: str | None = Field(None, description="Exact text to replace (once, unless "
                             "replace_all).", max_length=MAX_NOTE)  # fmt: skip
    replace: str = Field("", description="Its replacement.", max_length=MAX_NOTE)
    replace_all: bool = Field(False, description="Replace every occurrence.")
    append: str | None = Field(None, description="Text to add at the end of the section.",
                               max_length=MAX_NOTE)  # fmt: skip
    heading: str | None = Field(None, description="With append: the section (default: the "
                                "whole note).")  # fmt: skip
    expected_hash: str | None = Hash

    @model_validator(mode="after")
    def _one(self) -> EditParams:
        if (self.find is None) == (self.append is None):
            raise ValueError("give find (with replace) or append")
        return self


class MoveParams(Params):
    note: VaultPath = Note
    to: VaultPath = Field(min_length=1, description="New name (same folder) or vault-relative "
                          "path.")  # fmt: skip
    expected_hash: str | None = Hash


class ContextParams(Params):
    note: VaultPath = Note
    limit: int = Field(50, ge=1, le=1000, description="Most items per page.")
    cursor: str | None = Field(None, description="From next_cursor.")


def read(s: Services, p: ReadParams) -> dict[str, Any]:
    if p.start_line and p.end_line and p.end_line < p.start_line:
        raise UsageError("end_line is before start_line")
    return notes.read(s, p.note, p.heading, p.start_line, p.end_line, p.cursor, p.max_chars)


def context(s: Services, p: ContextParams) -> dict[str, Any]:
    """Typed relations (both ways, named from this note's side), then links, then backlinks."""
    links = s.graph.links(p.note)
    taxonomy = taxonomy_of(s)
    rel: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    back: list[dict[str, Any]] = []
    for o in links["outgoing"]:
        item = {"note": o["target"] or o["raw"], "line": o["line"], "state": o["state"]}
        if o["relation"] == "link":
            out.append({"kind": "link", **item})
        else:
            rel.append({"kind": "relation", "relation": o["relation"], **item})
    for i in links["incoming"]:
        item = {"note": i["source"], "line": i["line"]}
        if i["relation"] == "link":
            back.append({"kind": "backlink", **item, "context": i["context"][:CONTEXT_CHARS]})
        else:
            name = taxonomy.inverse(i["relation"]) or f"{i['relation']} (from)"
            rel.append({"kind": "relation", "relation": name, **item})
    with s.state.lock:
        record = s.state.notes.get(links["path"])
    counts = {"relations": len(rel), "links": len(out), "backlinks": len(back)}
    found = page([*rel, *out, *back], p.limit, p.cursor, PAGE_CHARS)
    return {"path": links["path"], "title": record.title if record else links["path"],
            "counts": counts, **found.fields("items")}  # fmt: skip


READ = Agent(
    "read_note", "Read a note",
    "A note's text (or one section or line range), in pages, with the hash write_note and "
    "edit_note take.",
    params=("note", "heading", "start_line", "end_line", "cursor"),
)  # fmt: skip
WRITE = Agent(
    "write_note", "Write a note",
    "Create a note, or replace one whole with expected_hash (from read_note) or overwrite; "
    "edit_note changes part of one.",
    idempotent=True, destructive=True,
)  # fmt: skip
EDIT = Agent(
    "edit_note", "Edit a note",
    "Replace exact text in a note, or append under a heading; the rest stays byte for byte.",
    idempotent=False, destructive=True,
)  # fmt: skip
MOVE = Agent(
    "move_note", "Move or rename a note",
    "Rename or move a note; every link to it, in every note, is rewritten.",
    idempotent=False, destructive=True,
)  # fmt: skip
CONTEXT = Agent(
    "note_context", "Note context",
    "What a note connects to: typed relations both ways (supersedes, depends_on, ...), links, "
    "and backlinks with context.",
)  # fmt: skip

METHODS = [
    Method("note.read", ReadParams, read, "A note's text, a section or a line range, in pages.",
           agent=READ),
    Method("note.write", WriteParams,
           lambda s, p: notes.write(s, p.path, p.content, p.expected_hash, p.overwrite),
           "Create a note or replace it whole (expected_hash or overwrite).", read_only=False,
           agent=WRITE),
    Method("note.edit", EditParams,
           lambda s, p: notes.edit(s, p.note, find=p.find, replace=p.replace,
                                   replace_all=p.replace_all, append=p.append, heading=p.heading,
                                   expected_hash=p.expected_hash),
           "Find and replace in a note, or append under a heading.", read_only=False,
           agent=EDIT),
    Method("note.move", MoveParams, lambda s, p: notes.move(s, p.note, p.to, p.expected_hash),
           "Rename or move a note and rewrite every link to it.", read_only=False, agent=MOVE),
    Method("note.context", ContextParams, context,
           "A note's typed relations, links and backlinks, in pages.", agent=CONTEXT),
]  # fmt: skip
