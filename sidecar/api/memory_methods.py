"""``memory.*`` methods: write, get, list, search, delete (archive), confirm, link, export, import,
history. Field names follow DESIGN section 6 (``memory.write`` takes ``id, title, entry_type,
content, tags, due_in, due_at, ttl, relations``) so scripts and agents can rely on them."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import Field, field_validator

from sidecar.api.registry import Agent, EntryId, Method, Params, VaultPath, long_text
from sidecar.core.memory import MAX_SECONDS, RELATIONS, parse_time
from sidecar.core.paging import cursor_at, offset
from sidecar.errors import UsageError
from sidecar.services import memory_io
from sidecar.services.context import Services
from sidecar.services.memory_search import search as memory_search

EntryType = Literal["topic", "problem", "decision", "reminder", "prior", "handoff"]
Status = Literal["active", "superseded", "refuted", "archived", "all"]
Id = Field(description="The entry's id (its file name without .md).")
MAX_BODY = 1_000_000  # characters of an entry's body


def fresh(services: Services) -> None:
    """Without a daemon nothing rescans the folder in the background: catch up with edits made
    in the editor, and archive what expired, before answering."""
    if services.runtime is None:
        services.memory.index.sync()
        services.memory.expire()


def when(text: str | None, seconds: float | None, now: dt.datetime) -> dt.datetime | None:
    """``due_at`` (ISO 8601) or ``due_in`` (seconds from now), not both."""
    if text and seconds is not None:
        raise UsageError("give due_at or due_in, not both")
    if seconds is not None:
        return now + dt.timedelta(seconds=seconds)
    try:
        return parse_time(text)
    except ValueError as exc:
        raise UsageError(f"not an ISO 8601 time: {text!r}") from exc


class WriteParams(Params):
    id: EntryId | None = Field(
        None,
        description="Entry id; made from the title when omitted. "
        "An existing id updates that entry (its old text is kept as a revision).",
    )
    title: str = Field(min_length=1, description="One line that states the fact.")
    entry_type: EntryType = Field("topic", description="The kind of entry (default topic).")
    content: str = Field("", description="The body, Markdown.", max_length=MAX_BODY)
    tags: list[str] = Field(default_factory=list, description="Short topic words, e.g. "
                            "[\"redis\", \"sessions\"].")  # fmt: skip
    due_in: float | None = Field(None, ge=0, le=MAX_SECONDS,
                                 description="Reminder: seconds until due.")  # fmt: skip
    due_at: str | None = Field(None, description="Reminder: due time, ISO 8601.")
    ttl: float | None = Field(None, gt=0, le=MAX_SECONDS,
                              description="Archive the entry after this many seconds.")  # fmt: skip
    relations: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Typed edges: {supports|contradicts|supersedes|derived_from|relates_to: "
        "[entry id or note name]}.",
    )
    source_type: Literal["official_docs", "user_statement", "auto_extracted", "inference"] = Field(
        "user_statement", description="Where the fact comes from."
    )
    agent: str = Field("", description="Who wrote it (provenance), e.g. claude-code.")
    confidence: float | None = Field(None, ge=0, le=1, description="How sure the writer is, 0-1.")
    on_duplicate: Literal["reject", "contradicts"] = Field(
        "reject", description="A near-duplicate of an active entry is refused, or written and "
        "linked to it as contradicts.")  # fmt: skip

    @field_validator("relations")
    @classmethod
    def _known(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        unknown = sorted(set(value) - set(RELATIONS))
        if unknown:
            raise ValueError(f"unknown relation {', '.join(unknown)}; use {', '.join(RELATIONS)}")
        return value


class IdParams(Params):
    id: EntryId = Id


class ListParams(Params):
    types: list[EntryType] = Field(default_factory=list, description="Only these entry types.")
    tags: list[str] = Field(default_factory=list, description="Only entries with all these tags.")
    status: Status = Field("active", description="Entry status; all includes archived.")
    limit: int = Field(100, ge=1, le=10000)


class SearchParams(Params):
    query: str = Field(min_length=1, description="Words or a question.")
    limit: int = Field(10, ge=1, le=200, description="Most entries per page.")
    types: list[EntryType] = Field(default_factory=list, description="Only these entry types.")
    status: Status = Field("active", description="Entry status; all includes archived.")
    mode: Literal["hybrid", "semantic", "lexical"] = Field("hybrid", description="Ranking.")
    cursor: str | None = Field(None, description="From next_cursor.")
    window: int | None = Field(None, ge=1, le=200, description="Rank this many once and page "
                               "through them (stable pages).")  # fmt: skip


class UpdateParams(Params):
    id: EntryId = Id
    title: str | None = Field(None, min_length=1, description="New title.")
    content: str | None = Field(None, description="New body (replaces it).", max_length=MAX_BODY)
    append: str | None = Field(None, description="Text added at the end of the body.",
                               max_length=MAX_BODY)  # fmt: skip
    tags: list[str] | None = Field(None, description="New tags (replace them).")
    status: Literal["confirmed", "refuted", "archived"] | None = Field(
        None, description="confirmed: still true; refuted: no longer true; archived: put away."
    )


class ConfirmParams(Params):
    id: EntryId = Id
    refute: bool = Field(False, description="Refute instead: status refuted, refutations + 1.")


class LinkParams(Params):
    id: EntryId = Id
    relation: Literal["supports", "contradicts", "supersedes", "derived_from", "relates_to"]
    target: VaultPath = Field(min_length=1, description="A memory id or a note name.")
    remove: bool = Field(False, description="Remove this edge instead of adding it.")


class ExportParams(Params):
    include_archived: bool = True


class ImportParams(Params):
    entries: list[dict[str, Any]] = Field(
        description="Entries as memory.export writes them, mdkb-style objects, or "
        '{"id": ..., "text": <entry file>} for raw entry files.',
        json_schema_extra=long_text(MAX_BODY))  # fmt: skip
    on_conflict: Literal["skip", "replace"] = "skip"


def write(s: Services, p: WriteParams) -> dict[str, Any]:
    due = when(p.due_at, p.due_in, s.clock())
    return s.memory.write(
        id=p.id, title=p.title, entry_type=p.entry_type, content=p.content, tags=p.tags,
        due_at=due, ttl=p.ttl, relations=p.relations, source_type=p.source_type, agent=p.agent,
        confidence=p.confidence, on_duplicate=p.on_duplicate,
    )  # fmt: skip


def get(s: Services, p: IdParams) -> dict[str, Any]:
    fresh(s)
    return s.memory.get(p.id)


def list_(s: Services, p: ListParams) -> dict[str, Any]:
    fresh(s)
    return s.memory.entries(p.types, p.tags, p.status, p.limit)


def search(s: Services, p: SearchParams) -> dict[str, Any]:
    fresh(s)
    start = offset(p.cursor)
    end = start + p.limit
    found = memory_search(s.memory, p.query, p.window or end, p.types, p.status, p.mode)
    hits = found["results"]
    more = end < len(hits) if p.window else len(hits) == end  # a full page: maybe more
    out = {**found, "results": hits[start:end]}
    if more:
        out["next_cursor"] = cursor_at(end)
    return out


def update(s: Services, p: UpdateParams) -> dict[str, Any]:
    fresh(s)
    out: dict[str, Any] = {}
    if p.title is not None or p.content is not None or p.append or p.tags is not None:
        body = p.content if p.content is not None else s.memory.record(p.id).entry.body
        if p.append:
            body = f"{body.rstrip()}\n\n{p.append.strip()}".strip()
        out = s.memory.revise(p.id, title=p.title, body=body, tags=p.tags)
    if p.status == "archived":
        out = s.memory.delete(p.id)
    elif p.status is not None:
        out = s.memory.confirm(p.id, refute=p.status == "refuted")
    if not out:
        raise UsageError("nothing to update: give title, content, append, tags or status")
    return out


def history(s: Services, p: IdParams) -> dict[str, Any]:
    fresh(s)
    return s.memory.history(p.id)


def export(s: Services, p: ExportParams) -> dict[str, Any]:
    fresh(s)
    return memory_io.export(s.memory, p.include_archived)


WRITE = Agent(
    "memory_write", "Remember",
    "Remember a decision, problem, fact (topic), prior, handoff or reminder (due_in or "
    "due_at); a near-duplicate is refused with its id, for memory_update.",
    params=("title", "entry_type", "content", "tags", "due_in", "due_at", "relations"),
    idempotent=False,
)  # fmt: skip
SEARCH = Agent(
    "memory_search", "Search memory",
    "Find memory entries by words or meaning.",
    params=("query", "limit", "cursor"), defaults={"limit": 8, "window": 50},
)  # fmt: skip
UPDATE = Agent(
    "memory_update", "Update a memory entry",
    "Change a memory entry's title, body or tags, append to it, or mark it confirmed, "
    "refuted or archived (old text is kept).",
    idempotent=False,
)  # fmt: skip

METHODS = [
    Method("memory.write", WriteParams, write, "Write a memory entry (near-duplicates refused).",
           read_only=False, agent=WRITE),
    Method("memory.update", UpdateParams, update, "Change an entry's title, body or tags, or "
           "confirm, refute or archive it.", read_only=False, agent=UPDATE),
    Method("memory.get", IdParams, get, "One memory entry with its body and typed links."),
    Method("memory.list", ListParams, list_, "Memory entries, newest first."),
    Method("memory.search", SearchParams, search, "Find memory entries by words or meaning.",
           agent=SEARCH),
    Method("memory.delete", IdParams, lambda s, p: s.memory.delete(p.id),
           "Archive a memory entry (entries are never deleted).", read_only=False),
    Method("memory.confirm", ConfirmParams, lambda s, p: s.memory.confirm(p.id, p.refute),
           "Confirm a memory entry, or refute it.", read_only=False),
    Method("memory.link", LinkParams,
           lambda s, p: s.memory.link(p.id, p.relation, p.target, p.remove),
           "Add or remove a typed edge from an entry to an entry or a note.", read_only=False),
    Method("memory.export", ExportParams, export, "Every memory entry as one JSON document."),
    Method("memory.import", ImportParams,
           lambda s, p: memory_io.import_entries(s.memory, p.entries, p.on_conflict),
           "Restore memory entries from an export, mdkb objects or entry files.",
           read_only=False),
    Method("memory.history", IdParams, history, "The last revisions of a memory entry."),
]  # fmt: skip
