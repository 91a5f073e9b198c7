"""``sidecar memory ...`` and ``sidecar reminders``: thin commands over the ``memory.*`` and
``reminders.*`` methods. Flags follow DESIGN section 6 so scripts can rely on them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from sidecar.cli import memory_output as out
from sidecar.cli.base import common, fail, run_method
from sidecar.errors import UsageError

TYPES = ["topic", "problem", "decision", "reminder", "prior", "handoff"]
SOURCES = ["official_docs", "user_statement", "auto_extracted", "inference"]
STATUSES = ["active", "superseded", "refuted", "archived", "all"]


@click.group()
def memory() -> None:
    """Memory entries: decisions, problems, topics, reminders, priors and handoffs."""


@memory.command()
@common
@click.argument("entry_id", metavar="[ID]", required=False)
@click.option("--title", required=True, help="One line that states the fact.")
@click.option("--type", "entry_type", type=click.Choice(TYPES), default="topic", show_default=True)
@click.option("--content", default=None, help="The body text.")
@click.option("--file", "file", type=click.File("r"), help="Read the body from F ('-' is stdin).")
@click.option("--tags", default="", help="Comma-separated tags.")
@click.option("--due-in", type=click.FloatRange(min=0), help="Reminders: due in SECONDS.")
@click.option("--due", "due_at", metavar="ISO", help="Reminders: due at this ISO 8601 time.")
@click.option("--ttl", type=click.FloatRange(min=0, min_open=True), help="Archive after SECONDS.")
@click.option("--relates", multiple=True, metavar="REL:TARGET",
              help="Typed edge, repeatable: supports|contradicts|supersedes|derived_from|"
              "relates_to : entry id or note name.")  # fmt: skip
@click.option("--source", "source_type", type=click.Choice(SOURCES), default="user_statement")
@click.option("--agent", default="", help="Who wrote it (provenance).")
@click.option("--confidence", type=click.FloatRange(0, 1), default=None)
@click.option("--on-duplicate", type=click.Choice(["reject", "contradicts"]), default="reject",
              show_default=True, help="A near-duplicate is refused, or written as contradicts.")  # fmt: skip
def add(vault: str | None, as_json: bool, entry_id: str | None, title: str, entry_type: str,
        content: str | None, file: Any, tags: str, due_in: float | None, due_at: str | None,
        ttl: float | None, relates: tuple[str, ...], source_type: str, agent: str,
        confidence: float | None, on_duplicate: str) -> None:  # fmt: skip
    """Write a memory entry (ID is made from the title when omitted; an existing ID is updated)."""
    if content is not None and file is not None:
        fail(UsageError("--content and --file are exclusive"), as_json)
    params: dict[str, Any] = {
        "id": entry_id, "title": title, "entry_type": entry_type,
        "content": file.read() if file is not None else content or "",
        "tags": [t.strip() for t in tags.split(",") if t.strip()], "due_in": due_in,
        "due_at": due_at, "ttl": ttl, "relations": _relations(relates, as_json),
        "source_type": source_type, "agent": agent, "confidence": confidence,
        "on_duplicate": on_duplicate,
    }  # fmt: skip
    run_method(vault, as_json, "memory.write", params, out.fmt_entry)


def _relations(relates: tuple[str, ...], as_json: bool) -> dict[str, list[str]]:
    rels: dict[str, list[str]] = {}
    for item in relates:
        rel, sep, target = item.partition(":")
        if not sep or not rel.strip() or not target.strip():
            fail(UsageError(f"--relates takes REL:TARGET, got {item!r}"), as_json)
        rels.setdefault(rel.strip(), []).append(target.strip())
    return rels


@memory.command()
@common
@click.argument("entry_id", metavar="ID")
def get(vault: str | None, as_json: bool, entry_id: str) -> None:
    """Show one entry with its body and typed links."""
    run_method(vault, as_json, "memory.get", {"id": entry_id}, out.fmt_entry)


@memory.command(name="list")
@common
@click.option("--type", "types", type=click.Choice(TYPES), multiple=True)
@click.option("--tag", "tags", multiple=True)
@click.option("--status", type=click.Choice(STATUSES), default="active", show_default=True)
@click.option("--limit", type=click.IntRange(1, 10000), default=100, show_default=True)
def list_(vault: str | None, as_json: bool, types: tuple[str, ...], tags: tuple[str, ...],
          status: str, limit: int) -> None:  # fmt: skip
    """Entries, newest first."""
    params = {"types": list(types), "tags": list(tags), "status": status, "limit": limit}
    run_method(vault, as_json, "memory.list", params, out.fmt_entries)


@memory.command()
@common
@click.argument("query")
@click.option("--type", "types", type=click.Choice(TYPES), multiple=True)
@click.option("--status", type=click.Choice(STATUSES), default="active", show_default=True)
@click.option("--mode", type=click.Choice(["hybrid", "semantic", "lexical"]), default="hybrid")
@click.option("--limit", type=click.IntRange(1, 200), default=10, show_default=True)
def search(vault: str | None, as_json: bool, query: str, types: tuple[str, ...], status: str,
           mode: str, limit: int) -> None:  # fmt: skip
    """Find entries by words or meaning."""
    params = {"query": query, "types": list(types), "status": status, "mode": mode, "limit": limit}
    run_method(vault, as_json, "memory.search", params, out.fmt_entries)


@memory.command()
@common
@click.argument("entry_id", metavar="ID")
def delete(vault: str | None, as_json: bool, entry_id: str) -> None:
    """Archive an entry: status archived, file moved to archive/ (never deleted)."""
    run_method(vault, as_json, "memory.delete", {"id": entry_id}, out.fmt_entry)


@memory.command()
@common
@click.argument("entry_id", metavar="ID")
@click.option("--refute", is_flag=True, help="Refute the entry instead (status refuted).")
def confirm(vault: str | None, as_json: bool, entry_id: str, refute: bool) -> None:
    """Confirm an entry (its confidence grows), or refute it."""
    run_method(vault, as_json, "memory.confirm", {"id": entry_id, "refute": refute}, out.fmt_entry)


@memory.command()
@common
@click.argument("entry_id", metavar="ID")
@click.argument("relation", type=click.Choice(["supports", "contradicts", "supersedes",
                                               "derived_from", "relates_to"]))  # fmt: skip
@click.argument("target")
@click.option("--remove", is_flag=True, help="Remove the edge instead.")
def link(vault: str | None, as_json: bool, entry_id: str, relation: str, target: str,
         remove: bool) -> None:  # fmt: skip
    """Add a typed edge from entry ID to TARGET (an entry id or a note name)."""
    params = {"id": entry_id, "relation": relation, "target": target, "remove": remove}
    run_method(vault, as_json, "memory.link", params, out.fmt_entry)


@memory.command()
@common
@click.option("--active-only", is_flag=True, help="Leave archived entries out.")
def export(vault: str | None, as_json: bool, active_only: bool) -> None:
    """Every entry as one JSON document on stdout."""
    run_method(vault, True, "memory.export", {"include_archived": not active_only})


@memory.command(name="import")
@common
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--replace", is_flag=True, help="Overwrite entries whose id exists.")
def import_(vault: str | None, as_json: bool, paths: tuple[Path, ...], replace: bool) -> None:
    """Restore entries from an export (JSON), entry files (.md) or folders of them."""
    try:
        items = [item for p in paths for item in _items(p)]
    except (OSError, ValueError) as exc:
        fail(UsageError(f"cannot read the import: {exc}"), as_json)
    params = {"entries": items, "on_conflict": "replace" if replace else "skip"}
    run_method(vault, as_json, "memory.import", params, out.fmt_import)


def _items(path: Path) -> list[dict[str, Any]]:
    if path.is_dir():
        return [{"id": f.stem, "text": f.read_text("utf-8")} for f in sorted(path.glob("*.md"))]
    if path.suffix == ".md":
        return [{"id": path.stem, "text": path.read_text("utf-8")}]
    data = json.loads(path.read_text("utf-8"))
    entries = data.get("entries", data.get("memories")) if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise ValueError(f"{path}: expected a list of entries or {{'entries': [...]}}")
    return entries


@memory.command()
@common
@click.argument("entry_id", metavar="ID")
def history(vault: str | None, as_json: bool, entry_id: str) -> None:
    """The current text and the last revisions of an entry."""
    run_method(vault, as_json, "memory.history", {"id": entry_id}, out.fmt_history)


@click.command()
@common
@click.option("--within", type=click.FloatRange(min=0), default=7 * 86400.0, show_default=True,
              help="Also list reminders due within SECONDS.")  # fmt: skip
@click.option("--snooze", "snooze_id", metavar="ID", help="Snooze this reminder.")
@click.option("--for", "seconds", type=click.FloatRange(min=0), help="With --snooze: SECONDS.")
@click.option("--until", metavar="ISO", help="With --snooze: until this ISO 8601 time.")
@click.option("--done", "done_id", metavar="ID", help="Mark this reminder done (archives it).")
def reminders(vault: str | None, as_json: bool, within: float, snooze_id: str | None,
              seconds: float | None, until: str | None, done_id: str | None) -> None:  # fmt: skip
    """Reminders due now and coming up; snooze one, or mark one done."""
    if snooze_id:
        if (seconds is None) == (until is None):
            fail(UsageError("--snooze needs exactly one of --for or --until"), as_json)
        params = {"id": snooze_id, "seconds": seconds, "until": until}
        run_method(vault, as_json, "reminders.snooze", params, out.fmt_entry)
    elif done_id:
        run_method(vault, as_json, "memory.delete", {"id": done_id}, out.fmt_entry)
    else:
        run_method(vault, as_json, "reminders.due", {"within": within}, out.fmt_reminders)


COMMANDS = [memory, reminders]
