"""Memory entries (DESIGN section 6), pure: the entry value, times, ids and the rules that act on
entries without touching a disk: near-duplicate verdicts, expiry, supersede/refute, confidence.

Every entry type is written to a Markdown file, not only the "durable" ones: nothing authored may
live only inside the index (DESIGN section 1), so a handoff or a reminder survives a rebuilt index
exactly as a decision does. What differs by type is only how entries are used (reminders have a
``due_at``, session start shows the newest handoff).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

ENTRY_TYPES = ("topic", "problem", "decision", "reminder", "prior", "handoff")
SOURCE_TYPES = ("official_docs", "user_statement", "auto_extracted", "inference")
STATUSES = ("active", "superseded", "refuted", "archived")
RELATIONS = ("supports", "contradicts", "supersedes", "derived_from", "relates_to")
SYMMETRIC = frozenset({"contradicts", "relates_to"})

# Cosine of the title+body vectors. mdkb measured with all-MiniLM-L6-v2 that a reworded restatement
# scores ~0.99 and a genuine paraphrase ~0.92, so 0.95 refuses repeats but keeps paraphrases; the
# advisory band below it tells the writer a similar entry exists.
DUPLICATE_COSINE = 0.95
SIMILAR_COSINE = 0.85

_BASE_CONFIDENCE = {"official_docs": 0.9, "user_statement": 0.8, "auto_extracted": 0.6,
                    "inference": 0.5}  # fmt: skip
_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,127}")

Relations = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True, slots=True)
class Entry:
    id: str
    title: str
    entry_type: str
    created_at: dt.datetime
    updated_at: dt.datetime
    source_type: str = "user_statement"
    status: str = "active"
    tags: tuple[str, ...] = ()
    due_at: dt.datetime | None = None
    superseded_by: str | None = None
    relations: Relations = ()
    agent: str = ""
    expires_at: dt.datetime | None = None
    confidence: float | None = None
    body: str = ""
    extra: tuple[tuple[str, Any], ...] = ()  # keys a person added by hand, kept as written

    def relation_map(self) -> dict[str, list[str]]:
        return {rel: list(targets) for rel, targets in self.relations}

    @property
    def active(self) -> bool:
        return self.status == "active"


@dataclass(frozen=True, slots=True)
class Counters:
    """Machine-local facts kept in the ``memory`` table, not in the synced file."""

    confirmations: int = 0
    refutations: int = 0
    last_confirmed_at: str = ""
    notified_for: str = ""  # the due_at a reminder.due was last sent for


@dataclass(frozen=True, slots=True)
class Verdict:
    kind: Literal["duplicate", "similar", "new"]
    other: str | None = None
    score: float = 0.0


# -- times and ids ----------------------------------------------------------------------------


# Longest duration a request may name (due_in, ttl, within): ~317 years, well inside the
# calendar from any date, so adding it to now never overflows.
MAX_SECONDS = 10**10


def iso(t: dt.datetime) -> str:
    """ISO 8601 UTC to the second, ``Z`` suffix: the file format's only time spelling. The year
    always has four digits (glibc's ``%Y`` writes year 1 as ``1``, which no parser reads)."""
    u = t.astimezone(dt.UTC)
    return f"{u.year:04d}-{u:%m-%dT%H:%M:%S}Z"


def parse_time(value: Any) -> dt.datetime | None:
    """ISO strings (``Z``, offsets, bare dates) and epoch seconds (mdkb exports) -> aware UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a time: {value!r}")
    try:
        if isinstance(value, int | float):
            return dt.datetime.fromtimestamp(value, dt.UTC).replace(microsecond=0)
        if isinstance(value, dt.datetime):
            t = value
        elif isinstance(value, dt.date):
            t = dt.datetime(value.year, value.month, value.day)
        else:
            t = dt.datetime.fromisoformat(str(value).strip())
        t = t if t.tzinfo else t.replace(tzinfo=dt.UTC)
        return t.astimezone(dt.UTC).replace(microsecond=0)
    except (OverflowError, OSError) as exc:  # year 1 at +05:00 is before the calendar in UTC
        raise ValueError(f"time out of range: {value!r}") from exc


def valid_id(text: str) -> bool:
    return bool(_ID.fullmatch(text))


def slugify(title: str, limit: int = 48) -> str:
    """A file-safe lowercase id from a title; ``entry`` when nothing usable is left."""
    ascii_ = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_.lower()).strip("-")
    return slug[:limit].rstrip("-") or "entry"


def unique_id(base: str, taken: Iterable[str]) -> str:
    used = set(taken)
    if base not in used:
        return base
    n = 2
    while f"{base}-{n}" in used:
        n += 1
    return f"{base}-{n}"


def target_name(target: str) -> str:
    """``[[Name#Heading|alias]]`` -> ``Name``; a bare name stays as it is."""
    inner = target.strip()
    if inner.startswith("[[") and inner.endswith("]]"):
        inner = inner[2:-2]
    return inner.split("|", 1)[0].split("#", 1)[0].strip()


def as_link(target: str) -> str:
    name = target_name(target)
    return f"[[{name}]]" if name else ""


# -- rules ------------------------------------------------------------------------------------


def text_key(title: str, body: str) -> str:
    """Case, spacing and punctuation folded: two entries with equal keys say the same thing."""
    words = re.findall(r"\w+", f"{title}\n{body}".lower())
    return " ".join(words)


def judge_duplicate(key: str, candidates: Iterable[tuple[str, float, str]]) -> Verdict:
    """The closest active entry decides: ``(id, cosine, text_key)`` per candidate; equal text
    keys count as cosine 1 whatever the model says."""
    best_id, best = None, 0.0
    for other, cosine, other_key in candidates:
        score = 1.0 if other_key == key else cosine
        if score > best:
            best_id, best = other, score
    if best >= DUPLICATE_COSINE:
        return Verdict("duplicate", best_id, round(best, 4))
    if best >= SIMILAR_COSINE:
        return Verdict("similar", best_id, round(best, 4))
    return Verdict("new", best_id, round(best, 4))


def confidence(entry: Entry, counters: Counters) -> float:
    """Stated confidence, else the source's; each confirmation adds, each refutation costs."""
    if entry.status == "refuted":
        return 0.0
    base = entry.confidence if entry.confidence is not None else _BASE_CONFIDENCE[entry.source_type]
    value = base + min(counters.confirmations, 4) * 0.05 - counters.refutations * 0.2
    return round(min(max(value, 0.0), 0.99), 2)


def is_expired(entry: Entry, now: dt.datetime) -> bool:
    return entry.status != "archived" and entry.expires_at is not None and entry.expires_at <= now


def archived(entry: Entry, now: dt.datetime) -> Entry:
    return replace(entry, status="archived", updated_at=now)


def superseded(entry: Entry, by: str, now: dt.datetime) -> Entry:
    return replace(entry, status="superseded", superseded_by=by, updated_at=now)


def with_relation(entry: Entry, relation: str, target: str, *, remove: bool = False) -> Entry:
    """Add (or drop) one typed edge, keeping the relations' order stable for clean diffs."""
    link = as_link(target)
    rels = entry.relation_map()
    targets = [t for t in rels.get(relation, []) if target_name(t) != target_name(link)]
    if not remove:
        targets.append(link)
    rels[relation] = targets
    ordered = tuple((r, tuple(rels[r])) for r in _relation_order(rels) if rels[r])
    return replace(entry, relations=ordered)


def _relation_order(rels: Mapping[str, list[str]]) -> list[str]:
    known = [r for r in RELATIONS if r in rels]
    return known + sorted(r for r in rels if r not in RELATIONS)


def normalise_relations(raw: Mapping[str, Iterable[str]]) -> Relations:
    rels = {str(k): [as_link(str(t)) for t in v if as_link(str(t))] for k, v in raw.items()}
    return tuple((r, tuple(dict.fromkeys(rels[r]))) for r in _relation_order(rels) if rels[r])
