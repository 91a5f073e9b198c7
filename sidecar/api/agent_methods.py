"""Methods for agents: ``recall`` (the per-prompt budget), ``session.start`` and reminders.

Recall's limits default to the ``recall.*`` settings when the composition root put settings on
``services``, so a vault can tune its floor once for every hook, MCP client and script.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

from pydantic import Field

from sidecar.api.memory_methods import fresh, when
from sidecar.api.registry import Agent, EntryId, Method, Params
from sidecar.core.memory import MAX_SECONDS
from sidecar.core.paging import page
from sidecar.errors import UsageError
from sidecar.services import reminders
from sidecar.services.context import Services
from sidecar.services.recall import RecallOptions, recall
from sidecar.services.session import DEFAULT_BUDGET, session_start


class RecallParams(Params):
    prompt: str = Field(description="The user's prompt (or any question).", max_length=100_000)
    max_notes: int | None = Field(None, ge=0, le=20, description="At most this many notes "
                                  "(default: setting recall.max_notes, 4).")  # fmt: skip
    max_memory: int | None = Field(None, ge=0, le=20, description="At most this many memory "
                                   "entries (default: setting recall.max_memory, 3).")  # fmt: skip
    min_score: float | None = Field(None, ge=0, le=1, description="Cosine floor for memory "
                                    "entries (default: setting recall.min_score).")  # fmt: skip
    threshold: float | None = Field(None, ge=0, le=20, description="How sure recall must be "
                                    "that a note is about the prompt (default: setting "
                                    "recall.threshold).")  # fmt: skip
    include_superseded: bool = Field(False, description="Also superseded notes and entries.")
    explain: bool = Field(False, description="Add the decision: the prompt's content words, "
                          "the vault's background and each candidate's scores.")  # fmt: skip


class SessionParams(Params):
    budget: int = Field(DEFAULT_BUDGET, ge=0, le=100_000, description="Most characters of text.")
    query: str = Field("", description="Rank the warmup by this (e.g. the project).")


class DueParams(Params):
    within: float = Field(reminders.DEFAULT_WITHIN, ge=0, le=MAX_SECONDS,
                          description="Upcoming: due within this many seconds.")  # fmt: skip
    limit: int | None = Field(None, ge=1, le=1000, description="Most per page (none: all).")
    cursor: str | None = Field(None, description="From next_cursor.")


class SnoozeParams(Params):
    id: EntryId = Field(description="The reminder's id.")
    seconds: float | None = Field(None, ge=0, description="Due again this many seconds from now.")
    until: str | None = Field(None, description="Due again at this ISO 8601 time.")


def options(s: Services, p: RecallParams) -> RecallOptions:
    base = RecallOptions()
    values: dict[str, Any] = dict(s.settings.values) if s.settings is not None else {}

    def pick(given: Any, key: str, default: Any) -> Any:
        return given if given is not None else values.get(key, default)

    threshold = float(pick(p.threshold, "recall.threshold", base.gate.threshold))
    gate = dataclasses.replace(
        base.gate,
        threshold=threshold,
        select=threshold - (base.gate.threshold - base.gate.select),
        min_words=int(values.get("recall.min_words", base.gate.min_words)),
    )
    return RecallOptions(
        max_notes=int(pick(p.max_notes, "recall.max_notes", base.max_notes)),
        max_memory=int(pick(p.max_memory, "recall.max_memory", base.max_memory)),
        min_score=float(pick(p.min_score, "recall.min_score", base.min_score)),
        min_lexical=float(values.get("recall.min_lexical", base.min_lexical)),
        include_superseded=p.include_superseded,
        gate=gate,
        explain=p.explain,
        log=s.data_dir / "recall-log.jsonl" if values.get("recall.log") else None,
    )


def do_recall(s: Services, p: RecallParams) -> dict[str, Any]:
    with contextlib.suppress(Exception):  # recall fails closed below; not here
        fresh(s)
    return recall(s, p.prompt, options(s, p))


def start(s: Services, p: SessionParams) -> dict[str, Any]:
    with contextlib.suppress(Exception):  # session start never fails its caller
        fresh(s)
    return session_start(s, p.budget, p.query)


def due(s: Services, p: DueParams) -> dict[str, Any]:
    fresh(s)
    out = reminders.due_and_upcoming(s.memory, p.within)
    if p.limit is None and p.cursor is None:
        return out
    both = [("due", r) for r in out["due"]] + [("upcoming", r) for r in out["upcoming"]]
    found = page(both, p.limit or len(both), p.cursor)
    out.update(due=[r for k, r in found.items if k == "due"],
               upcoming=[r for k, r in found.items if k == "upcoming"], total=found.total)  # fmt: skip
    if found.next_cursor:
        out["next_cursor"] = found.next_cursor
    return out


def snooze(s: Services, p: SnoozeParams) -> dict[str, Any]:
    if p.seconds is None and not p.until:
        raise UsageError("snooze needs seconds or until")
    until = when(p.until, None, s.clock()) if p.until else None
    return reminders.snooze(s.memory, p.id, p.seconds, until)


RECALL = Agent(
    "recall", "Recall",
    "The few notes and memory entries that matter for the user's prompt, or nothing; cheap, "
    "try it before searching.",
    params=("prompt",),
)  # fmt: skip
SESSION = Agent(
    "session_start", "Start a session",
    "Due reminders, the last handoff and a warmup of memory and recent notes; call it once "
    "when a session starts.", params=("budget",),
)  # fmt: skip
REMINDERS = Agent(
    "reminders", "Reminders",
    "Reminders due now and coming up (memory_write writes one).",
    params=("limit", "cursor"), defaults={"limit": 20},
)  # fmt: skip

METHODS = [
    Method("recall", RecallParams, do_recall, "The few notes and memory entries that matter for "
           "a prompt, or an abstention; never fails (errors abstain).", agent=RECALL),
    Method("session.start", SessionParams, start, "Due reminders, the newest handoff and a "
           "warmup of memory and notes, as text within a budget.", agent=SESSION),
    Method("reminders.due", DueParams, due, "Reminders that are due, and those coming up.",
           agent=REMINDERS),
    Method("reminders.snooze", SnoozeParams, snooze, "Move a reminder's due time later.",
           read_only=False),
]  # fmt: skip
