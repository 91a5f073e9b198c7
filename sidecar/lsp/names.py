"""The vault's names as the language server holds them: one ``vault.catalog`` answer, indexed.

Completion and workspace symbols answer from this without a round trip per keystroke beyond a
version check; link resolution for heading completion uses the core ``Catalog``, so it matches
what the daemon would answer.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sidecar.core.fix import basename_counts, link_name
from sidecar.core.model import LinkRef
from sidecar.core.resolve import Catalog, NoteKey

CLEAR = 0.8  # similarity of the best match for it to be preferred
MARGIN = 0.1  # ... and its lead over the next one


@dataclass(frozen=True, slots=True)
class NoteName:
    path: str
    title: str
    link: str  # how a new link writes it: the bare name when unique, else the path
    aliases: tuple[str, ...]
    headings: tuple[tuple[int, str, int], ...]  # (level, text, 1-based line)
    blocks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LinkName:
    """A name a link may complete to (a note's link name or one of its aliases), lowered and
    split into its dotted, slashed or spaced parts once per catalog: completion ranks every
    name on every keystroke."""

    label: str
    lower: str
    parts: tuple[str, ...]
    path: str  # the note's path, lowered
    note: NoteName
    alias: bool


@dataclass
class Names:
    version: int = -1
    notes: dict[str, NoteName] = field(default_factory=dict)
    relations: list[tuple[str, str | None]] = field(default_factory=list)
    catalog: Catalog = field(default_factory=Catalog)
    counts: Mapping[str, int] = field(default_factory=dict)
    _link_names: list[LinkName] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_catalog(cls, data: Mapping[str, Any]) -> Names:
        rows = list(data.get("notes", []))
        counts = basename_counts(r["path"] for r in rows)
        notes = {
            r["path"]: NoteName(
                r["path"], r["title"], link_name(r["path"], counts), tuple(r["aliases"]),
                tuple((int(a), str(b), int(c)) for a, b, c in r["headings"]), tuple(r["blocks"]),
            )
            for r in rows
        }  # fmt: skip
        keys = (NoteKey(r["path"], tuple(r["aliases"]), r["id"]) for r in rows)
        relations = [(r["name"], r.get("inverse")) for r in data.get("relations", [])]
        return cls(int(data["version"]), notes, relations, Catalog.build(keys), counts)

    def link_names(self) -> list[LinkName]:
        if self._link_names is None:
            self._link_names = [
                LinkName(label, label.lower(), tuple(re.split(r"[./ _-]", label.lower())),
                         note.path.lower(), note, alias)
                for note in self.notes.values()
                for label, alias in [(note.link, False), *((a, True) for a in note.aliases)]
            ]  # fmt: skip
        return self._link_names

    def resolve(self, name: str, source: str) -> str | None:
        """The note ``[[name]]`` written in ``source`` leads to, if exactly one."""
        link = LinkRef(name, "", "link", name, "", True, False, False, 0, "")
        res = self.catalog.resolve(link, source)
        return res.target if res.state in ("valid", "self") else None

    def link_for(self, path: str) -> str:
        return link_name(path, self.counts)

    def closest(self, written: str, n: int = 3) -> list[tuple[str, bool]]:
        """Link names of the notes a broken ``written`` most likely meant, each with whether it
        is the clear choice (the only close name, or a close one well ahead of the next): an editor's
        "apply the preferred fix" takes that one."""
        by_key: dict[str, str] = {}
        for note in self.notes.values():
            by_key.setdefault(note.link.lower(), note.link)
            by_key.setdefault(posixpath.basename(note.link).lower(), note.link)
            for alias in note.aliases:
                by_key.setdefault(alias.lower(), note.link)
        key = written.strip().lower()
        scored: dict[str, float] = {}
        for hit in difflib.get_close_matches(key, by_key, n=n * 2, cutoff=0.6):
            ratio = difflib.SequenceMatcher(None, key, hit).ratio()
            scored[by_key[hit]] = max(scored.get(by_key[hit], 0.0), ratio)
        ranked = sorted(scored.items(), key=lambda kv: -kv[1])[:n]
        clear = len(ranked) == 1 or (
            len(ranked) > 1 and ranked[0][1] >= CLEAR and ranked[0][1] - ranked[1][1] >= MARGIN
        )
        return [(name, clear and i == 0) for i, (name, _) in enumerate(ranked)]
