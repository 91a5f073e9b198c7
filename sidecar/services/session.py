"""Session start: what an agent should know before the first prompt, within a character budget.

In priority order: the reminders that are due, the newest handoff, then a warmup of memory
entries and notes (ranked by relevance to ``query`` when one is given, else by confidence and
recency, and the most recently edited notes). Each line states a fact; a line that does not fit
the budget is left out whole, never cut mid-sentence. Nothing here may fail the caller: any
error yields empty text and the error beside it.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sidecar.core.memory import confidence
from sidecar.core.ranking import decay
from sidecar.services.memory_index import Record
from sidecar.services.recall import RecallOptions, recall
from sidecar.services.reminders import due_and_upcoming

if TYPE_CHECKING:
    from sidecar.services.context import Services

_log = logging.getLogger(__name__)
DEFAULT_BUDGET = 2000
WARMUP_TYPES = {"decision": 1.0, "problem": 0.9, "topic": 0.8, "prior": 0.7}
HALF_LIFE_DAYS = 30.0


class _Budget:
    def __init__(self, chars: int) -> None:
        self.left = chars
        self.lines: list[str] = []

    def add(self, line: str) -> bool:
        if len(line) + 1 > self.left:
            return False
        self.lines.append(line)
        self.left -= len(line) + 1
        return True

    def section(self, head: str, lines: Iterable[str]) -> int:
        """The heading only if at least one line under it fits; the lines that fitted."""
        pending = [ln for ln in lines if ln]
        if not pending or len(head) + len(pending[0]) + 2 > self.left:
            return 0
        self.add(head)
        return sum(1 for ln in pending if self.add(ln))


def session_start(
    services: Services, budget: int = DEFAULT_BUDGET, query: str = ""
) -> dict[str, Any]:
    try:
        return _session_start(services, budget, query)
    except Exception as exc:  # a session must start even when the sidecar cannot help
        _log.warning("session start failed: %s", exc, exc_info=True)
        return {"text": "", "chars": 0, "budget": budget, "error": str(exc)}


def _session_start(services: Services, budget: int, query: str) -> dict[str, Any]:
    memory = services.memory
    now = services.clock()
    out = _Budget(budget)
    reminders = due_and_upcoming(memory, within=86400)
    due_ids = [r["id"] for r in reminders["due"]]
    out.section("Due reminders:", (_reminder_line(r, "due") for r in reminders["due"]))
    out.section("Coming up in the next 24 hours:",
                (_reminder_line(r, "due") for r in reminders["upcoming"]))  # fmt: skip
    handoff = _newest_handoff(memory.index.snapshot())
    if handoff is not None:
        e = handoff.entry
        out.add(_clip(f"Last handoff ({_when(e.created_at)}): {e.title}. {_flat(e.body)}", 600))
    ranked = _warm_memory(services, query, now)
    out.section("Remembered:", (_memory_line(r) for r in ranked))
    notes = _warm_notes(services, query)
    head = "Notes related to this session:" if query else "Recently edited notes:"
    out.section(head, (f"- {p}: {t}" for p, t in notes))
    text = "\n".join(out.lines)
    return {
        "text": text, "chars": len(text), "budget": budget, "reminders": due_ids,
        "handoff": handoff.entry.id if handoff else None,
        "memory": [r.entry.id for r in ranked], "notes": [p for p, _ in notes],
    }  # fmt: skip


def _reminder_line(r: dict[str, Any], word: str) -> str:
    return f"- {r['title']} ({word} {_when_iso(r['due_at'])}; reminder {r['id']})"


def _newest_handoff(records: list[Record]) -> Record | None:
    handoffs = [r for r in records if r.entry.entry_type == "handoff" and r.entry.active]
    return max(handoffs, key=lambda r: (r.entry.created_at, r.entry.id), default=None)


def _warm_memory(services: Services, query: str, now: dt.datetime) -> list[Record]:
    records = [r for r in services.memory.index.snapshot()
               if r.entry.active and r.entry.entry_type in WARMUP_TYPES]  # fmt: skip
    if query:
        found = recall(services, query, RecallOptions(max_notes=0, max_memory=8))
        wanted = [m["id"] for m in found["memory"]]
        by_id = {r.entry.id: r for r in records}
        return [by_id[i] for i in wanted if i in by_id]

    def rank(r: Record) -> float:
        age = (now - r.entry.updated_at).total_seconds() / 86400
        weight = WARMUP_TYPES[r.entry.entry_type]
        return confidence(r.entry, r.counters) * weight * decay(age, HALF_LIFE_DAYS)

    return sorted(records, key=rank, reverse=True)[:12]


def _warm_notes(services: Services, query: str) -> list[tuple[str, str]]:
    if query:
        found = recall(services, query, RecallOptions(max_memory=0))
        return [(n["path"], n["title"]) for n in found["notes"]]
    with services.state.lock:
        notes = sorted(services.state.notes.values(), key=lambda n: -n.mtime_ns)[:5]
        return [(n.path, n.title) for n in notes]


def _memory_line(r: Record) -> str:
    e = r.entry
    facts = [e.id, e.source_type.replace("_", " ")]
    if r.counters.confirmations:
        facts.append(f"confirmed {r.counters.confirmations}x")
    body = _flat(e.body)
    text = f"{e.title}. {body}" if body and body != e.title else e.title
    return f"- {_cap(e.entry_type)}: {_clip(text, 240)} [{'; '.join(facts)}]"


def _flat(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, limit: int) -> str:
    """Cut at a word boundary with an ellipsis; a fact shortened, never a half word."""
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _cap(word: str) -> str:
    return word[:1].upper() + word[1:]


def _when(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _when_iso(value: str) -> str:
    return _when(dt.datetime.fromisoformat(value))
