"""Reminders: memory entries of type ``reminder`` with a ``due_at``.

A reminder is *due* from its ``due_at`` until it is snoozed (a later ``due_at``) or archived
(``memory delete``, which is how one marks it done). The daemon announces each due time once:
the ``notified_for`` counter remembers the ``due_at`` last announced, so a snooze re-arms the
reminder and a daemon that was down announces, at its next start, what came due meanwhile.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

from sidecar.core.memory import iso
from sidecar.errors import UsageError
from sidecar.services.memory import MemoryService
from sidecar.services.memory_index import Record

DEFAULT_WITHIN = 7 * 86400


def _reminders(service: MemoryService) -> list[Record]:
    rows = [r for r in service.index.snapshot()
            if r.entry.entry_type == "reminder" and r.entry.active and r.entry.due_at is not None]  # fmt: skip
    return sorted(rows, key=lambda r: (r.entry.due_at, r.entry.id))


def due_and_upcoming(service: MemoryService, within: float = DEFAULT_WITHIN) -> dict[str, Any]:
    """``due``: at or past their time, oldest first; ``upcoming``: due within ``within`` s."""
    now = service.clock()
    horizon = now + dt.timedelta(seconds=within)
    due, upcoming = [], []
    for r in _reminders(service):
        assert r.entry.due_at is not None
        if r.entry.due_at <= now:
            due.append(service.view(r, body=True))
        elif r.entry.due_at <= horizon:
            upcoming.append(service.view(r, body=True))
    return {"now": iso(now), "due": due, "upcoming": upcoming}


def snooze(service: MemoryService, entry_id: str, seconds: float | None = None,
           until: dt.datetime | None = None) -> dict[str, Any]:  # fmt: skip
    record = service.record(entry_id)
    if record.entry.entry_type != "reminder":
        raise UsageError(f"'{entry_id}' is a {record.entry.entry_type}, not a reminder")
    if (seconds is None) == (until is None):
        raise UsageError("snooze takes either seconds or until")
    now = service.clock()
    due = until if until is not None else now + dt.timedelta(seconds=seconds or 0)
    record = service.index.save(replace(record.entry, due_at=due, status="active", updated_at=now))
    return {"entry": service.view(record)}


def pending_announcements(service: MemoryService) -> list[Record]:
    """Due reminders not yet announced for their current ``due_at`` (read-only, cheap)."""
    now = service.clock()
    return [
        r for r in _reminders(service)
        if r.entry.due_at is not None and r.entry.due_at <= now
        and r.counters.notified_for != iso(r.entry.due_at)
    ]  # fmt: skip


def next_announcement(service: MemoryService) -> dt.datetime | None:
    """The earliest due time not yet announced, past or future."""
    return min((r.entry.due_at for r in _reminders(service)
                if r.entry.due_at is not None and r.counters.notified_for != iso(r.entry.due_at)),
               default=None)  # fmt: skip


def mark_announced(service: MemoryService, records: list[Record]) -> list[dict[str, Any]]:
    """Record the announcement (a table write: the daemon runs this on its writer) and return
    the ``reminder.due`` notification payloads."""
    out = []
    for r in records:
        assert r.entry.due_at is not None
        service.index.set_counters(
            r.entry.id, replace(r.counters, notified_for=iso(r.entry.due_at))
        )
        out.append({"id": r.entry.id, "title": r.entry.title, "due_at": iso(r.entry.due_at),
                    "body": r.entry.body, "tags": list(r.entry.tags)})  # fmt: skip
    return out
