"""The entry file format of DESIGN section 6: YAML frontmatter in a fixed key order, then the body.

Scripts rely on this format, so it is rendered by hand rather than by a YAML dumper: keys always in
the same order, times as ISO 8601 UTC, ``title`` double-quoted, ``relations`` an inline mapping.
The optional keys come after the documented ones (``agent``, ``expires_at``, ``confidence``), then
any key a person added in the editor, kept. Parsing is lenient where a hand-written file is
harmless (missing ``id`` or ``created_at``) and strict where guessing would change meaning (an
unknown ``entry_type`` or ``status`` is an error the caller reports).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from sidecar.core.frontmatter import load_frontmatter, string_list
from sidecar.core.memory import (
    ENTRY_TYPES,
    SOURCE_TYPES,
    STATUSES,
    Entry,
    iso,
    normalise_relations,
    parse_time,
    valid_id,
)

KEY_ORDER = ("id", "title", "entry_type", "source_type", "status", "tags", "created_at",
             "updated_at", "due_at", "superseded_by", "relations", "agent", "expires_at",
             "confidence")  # fmt: skip
_PLAIN = re.compile(r"[A-Za-z][\w/-]*")
_YAML_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "y", "n"})


class EntryError(ValueError):
    """The file cannot be read as an entry; the message says why, for ``memory`` status."""


def render(entry: Entry) -> str:
    lines = ["---", f"id: {entry.id}", f"title: {_quote(entry.title)}",
             f"entry_type: {entry.entry_type}", f"source_type: {entry.source_type}",
             f"status: {entry.status}", f"tags: [{', '.join(_scalar(t) for t in entry.tags)}]",
             f"created_at: {iso(entry.created_at)}", f"updated_at: {iso(entry.updated_at)}"]  # fmt: skip
    if entry.due_at is not None:
        lines.append(f"due_at: {iso(entry.due_at)}")
    if entry.superseded_by:
        lines.append(f"superseded_by: {entry.superseded_by}")
    if entry.relations:
        inner = ", ".join(
            f"{rel}: [{', '.join(_quote(t) for t in targets)}]" for rel, targets in entry.relations
        )
        lines.append(f"relations: {{{inner}}}")
    if entry.agent:
        lines.append(f"agent: {_quote(entry.agent)}")
    if entry.expires_at is not None:
        lines.append(f"expires_at: {iso(entry.expires_at)}")
    if entry.confidence is not None:
        lines.append(f"confidence: {entry.confidence:g}")
    lines += [f"{_scalar(k)}: {_json(v)}" for k, v in entry.extra]
    lines.append("---")
    body = entry.body.strip("\n")
    return "\n".join(lines) + "\n" + (body + "\n" if body else "")


def parse(text: str, fallback_id: str, default_time: dt.datetime) -> Entry:
    """An entry from a file's text; ``fallback_id`` is the file's stem, which wins over a
    different ``id`` in the frontmatter (the file name is what other entries link to)."""
    fm = load_frontmatter(text.splitlines(keepends=True))
    if fm.error:
        raise EntryError(fm.error)
    data = fm.data
    body = "".join(text.splitlines(keepends=True)[fm.body_start :]).strip("\n")
    return from_mapping(data, fallback_id, body, default_time)


def from_mapping(
    data: dict[str, Any], id_: str, body: str, default_time: dt.datetime, *, keep_extra: bool = True
) -> Entry:
    """An entry from frontmatter-shaped values (a file's, or an imported JSON object's)."""
    if not valid_id(id_):
        raise EntryError(f"'{id_}' is not a memory id (lowercase letters, digits, . _ -)")
    try:
        return _entry(data, id_, body, default_time, keep_extra)
    except (TypeError, ValueError) as exc:
        raise EntryError(str(exc)) from exc


def _entry(
    data: dict[str, Any], id_: str, body: str, default_time: dt.datetime, keep_extra: bool
) -> Entry:
    entry_type = _choice(data, "entry_type", ENTRY_TYPES, "topic")
    created = parse_time(data.get("created_at")) or default_time
    relations = data.get("relations") or {}
    if not isinstance(relations, dict):
        raise EntryError("relations must be a mapping of relation to links")
    confidence = data.get("confidence")
    return Entry(
        id=id_,
        title=str(data.get("title") or _first_line(body) or id_),
        entry_type=entry_type,
        created_at=created,
        updated_at=parse_time(data.get("updated_at")) or created,
        source_type=_choice(data, "source_type", SOURCE_TYPES, "user_statement"),
        status=_choice(data, "status", STATUSES, "active"),
        tags=string_list(data.get("tags")),
        due_at=parse_time(data.get("due_at")),
        superseded_by=str(data["superseded_by"]) if data.get("superseded_by") else None,
        relations=normalise_relations({k: string_list(v) for k, v in relations.items()}),
        agent=str(data.get("agent") or ""),
        expires_at=parse_time(data.get("expires_at")),
        confidence=float(confidence) if confidence is not None else None,
        body=body,
        extra=tuple((k, v) for k, v in data.items() if keep_extra and k not in KEY_ORDER),
    )


def _choice(data: dict[str, Any], key: str, allowed: tuple[str, ...], default: str) -> str:
    value = str(data.get(key) or default).strip().lower()
    if value not in allowed:
        raise EntryError(f"{key} '{value}' is not one of {', '.join(allowed)}")
    return value


def _first_line(body: str) -> str:
    for line in body.splitlines():
        if line.strip():
            return line.strip().lstrip("#").strip()[:120]
    return ""


# Characters JSON leaves raw that YAML may not carry raw: DEL and C1 controls are refused by the
# reader, and NEL, U+2028 and U+2029 are line breaks to YAML 1.1 (folded to a space when read).
_YAML_RAW = re.compile("[\x7f-\x9f\u2028\u2029\ufeff]")


def _quote(text: str) -> str:
    """JSON string syntax is valid YAML double-quoted syntax, escapes included."""
    return _json(text)


def _json(value: Any) -> str:
    return _YAML_RAW.sub(lambda c: f"\\u{ord(c[0]):04x}", json.dumps(value, ensure_ascii=False))


def _scalar(text: str) -> str:
    if _PLAIN.fullmatch(text) and text.lower() not in _YAML_WORDS:
        return text
    return _quote(text)
