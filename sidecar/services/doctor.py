"""Does the index still match the vault? The daemon-side half of ``sidecar doctor``.

Compared from disk and from the LanceDB tables themselves (not the in-memory state, which is
rebuilt from those tables at every start): each note on disk against its notes row by path and
content hash, each notes row against its chunk rows (the row lists their content hashes), chunk
rows left without a note, and the memory folder against the memory table. Each problem comes
with the fix ``repair`` applies: drop the rows of no note, re-parse the drifted notes (``full``
over just those paths: their chunk rows are made to match), re-sync the memory table from its
files. A note edited in the last debounce window shows as stale until the
watcher's batch lands; that is drift too, and repairing it is harmless.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from sidecar.core.note import content_hash

if TYPE_CHECKING:
    from sidecar.services.context import Services

REPAIR = "sidecar doctor --repair"


def check(services: Services) -> dict[str, Any]:
    """Every drift found, one dict per problem: ``check``, ``path``, ``problem``, ``fix``."""
    problems = [*_notes(services), *_memory(services)]
    return {"ok": not problems, "problems": problems, "notes_on_disk": len(services.vault.scan())}


def repair(services: Services) -> dict[str, Any]:
    """Make the index match the vault again, then check once more."""
    before = check(services)
    with services.state.lock:
        known = set(services.state.notes)
    orphans = [p for p in services.store.drifted() if p not in known]  # rows of no note
    services.store.delete_notes(orphans)
    drifted = sorted({p["path"] for p in before["problems"] if p["check"] == "index"})
    report = services.reindex(full=True, paths=drifted) if drifted else None
    services.memory.index.sync()
    after = check(services)
    return {
        **after,
        "repaired": {
            "before": before["problems"],
            "orphan_rows_dropped": orphans,
            "reparsed": report.changed_paths if report else [],
            "deleted": report.deleted_paths if report else [],
        },
    }


def _notes(services: Services) -> Iterator[dict[str, str]]:
    disk = services.vault.scan()
    rows = services.store.load_notes()
    failures = services.indexer.failures
    drifted = set(services.store.drifted())
    if disk and not rows:
        yield {
            "check": "index",
            "path": "",
            "fix": "sidecar index",
            "problem": f"the index is empty ({len(disk)} notes on disk): never indexed",
        }
        return
    for path in sorted(disk.keys() - rows.keys()):
        if path not in failures:
            yield _index(path, "on disk but not in the index")
    for path in sorted(rows.keys() - disk.keys()):
        yield _index(path, "in the index but no longer on disk")
    for path in sorted(disk.keys() & rows.keys()):
        f = services.vault.read(path)
        if f.data is None:
            continue  # unreadable now: the next index pass records it as a failure
        if content_hash(f.data) != rows[path].content_hash:
            yield _index(path, "changed on disk since it was indexed (stale)")
        elif path in drifted:
            yield _index(path, "its chunk rows are not the chunks its note row lists")
    for path in sorted(drifted - rows.keys() - disk.keys()):
        yield _index(path, "chunk rows without a note row")


def _memory(services: Services) -> Iterator[dict[str, str]]:
    index = services.memory.index
    files = {f.id for f in index.folder.scan()}
    rows = {str(r["id"]) for r in index.table.rows()}
    unreadable = {PurePath(p).stem for p in index.problems}
    for entry_id in sorted(files - rows - unreadable):
        yield _mem(entry_id, "entry file not in the memory table")
    for entry_id in sorted(rows - files):
        yield _mem(entry_id, "memory table row without an entry file")
    for path, error in sorted(index.problems.items()):
        yield {"check": "memory", "path": path, "problem": f"unreadable entry: {error}",
               "fix": "fix the file's frontmatter (see `sidecar memory list`)"}  # fmt: skip


def _index(path: str, problem: str) -> dict[str, str]:
    return {"check": "index", "path": path, "problem": problem, "fix": REPAIR}


def _mem(entry_id: str, problem: str) -> dict[str, str]:
    return {"check": "memory", "path": entry_id, "problem": problem, "fix": REPAIR}
