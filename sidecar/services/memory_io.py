"""Export and import of memory entries.

Export is one JSON document holding every entry with its body and counters. Import takes the
same objects, mdkb-style objects (``content`` for the body, epoch-second times, counters beside
the entry) or raw entry files (``{"text": ..., "id": ...}``, which is how ``sidecar memory import``
sends a folder of ``.md`` entries). Import restores: it keeps the source's times and status and
bypasses the near-duplicate gate; an id that exists is skipped unless ``on_conflict=replace``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sidecar.core.memory import Counters, Entry, iso, parse_time
from sidecar.core.memory_format import KEY_ORDER, EntryError, from_mapping, parse
from sidecar.errors import SidecarError, UsageError
from sidecar.services.memory import MemoryService

FORMAT_VERSION = 1


def export(service: MemoryService, include_archived: bool = True) -> dict[str, Any]:
    rows = [r for r in service.index.snapshot() if include_archived or r.entry.active]
    rows.sort(key=lambda r: r.entry.id)
    return {
        "version": FORMAT_VERSION,
        "exported_at": iso(service.clock()),
        "entries": [service.view(r) for r in rows],
    }


def import_entries(
    service: MemoryService, items: Sequence[dict[str, Any]], on_conflict: str = "skip"
) -> dict[str, Any]:
    if on_conflict not in ("skip", "replace"):
        raise UsageError("on_conflict must be skip or replace")
    imported, skipped, errors = [], [], []
    for n, item in enumerate(items):
        try:
            entry, counters = _entry(item, service)
        except (EntryError, ValueError, TypeError) as exc:
            errors.append({"index": n, "id": str(item.get("id", "")), "error": str(exc)})
            continue
        if service.index.get(entry.id) is not None and on_conflict == "skip":
            skipped.append(entry.id)
            continue
        try:  # an entry the disk refuses is reported, and those before it stay imported
            service.index.save(entry)
            if counters is not None:
                service.index.set_counters(entry.id, counters)
        except SidecarError as exc:
            errors.append({"index": n, "id": entry.id, "error": exc.message})
            continue
        imported.append(entry.id)
    return {"imported": imported, "skipped": skipped, "errors": errors}


def _entry(item: dict[str, Any], service: MemoryService) -> tuple[Entry, Counters | None]:
    now = service.clock()
    if "text" in item:
        entry = parse(str(item["text"]), str(item.get("id", "")), now)
        return entry, None
    data = item.get("entry") if isinstance(item.get("entry"), dict) else item
    assert isinstance(data, dict)
    body = str(data.get("body", data.get("content", "")) or "")
    fields = {k: v for k, v in data.items() if k in KEY_ORDER and v is not None}
    entry = from_mapping(fields, str(data.get("id", "")), body, now, keep_extra=False)
    return entry, _counters(data)


def _counters(data: dict[str, Any]) -> Counters | None:
    if not any(k in data for k in ("confirmations", "refutations", "corrections")):
        return None
    confirmed = parse_time(data.get("last_confirmed_at"))
    return Counters(
        confirmations=int(data.get("confirmations") or 0),
        refutations=int(data.get("refutations") or data.get("corrections") or 0),
        last_confirmed_at=iso(confirmed) if confirmed else "",
    )
