"""Memory entries through the registry, on a real vault copy, a fake clock and the tiny embedder."""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.api import build_registry
from sidecar.core.memory_format import parse
from sidecar.embed import TinyEmbedder
from sidecar.errors import NoteNotFound, SidecarError, UsageError
from sidecar.services import reminders
from sidecar.services.context import Services
from tests.conftest import EXAMPLE_VAULT

T0 = dt.datetime(2026, 11, 29, 10, 0, tzinfo=dt.UTC)
REGISTRY = build_registry()


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += dt.timedelta(seconds=seconds)


Opener = Callable[..., Services]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def opener(tmp_path: Path, clock: FakeClock) -> Iterator[Opener]:
    opened: list[Services] = []
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)

    def open_(data: str = "data", **kw: Any) -> Services:
        s = Services.open(vault, tmp_path / data, embedder=TinyEmbedder(256), clock=clock, **kw)
        opened.append(s)
        s.reindex()
        s.embed_stage.run()
        return s

    yield open_
    for s in opened:
        s.close()


@pytest.fixture
def s(opener: Opener) -> Services:
    return opener()


def call(s: Services, method: str, **params: Any) -> Any:
    return REGISTRY.call(s, method, params)


def folder(s: Services) -> Path:
    return s.vault.root / ".sidecar" / "memory"


def add(s: Services, entry_id: str, title: str, **kw: Any) -> dict[str, Any]:
    return call(s, "memory.write", id=entry_id, title=title, entry_type=kw.pop("entry_type",
                "decision"), **kw)["entry"]  # fmt: skip


def test_write_is_a_file_in_the_design_format(s: Services) -> None:
    e = add(s, "redis-ttl", "Session keys expire after 14 days", content="Redis TTL 14 days.",
            tags=["sessions"], relations={"supports": ["Auth Service"]}, agent="claude-code")  # fmt: skip
    text = (folder(s) / "redis-ttl.md").read_text("utf-8")
    assert text.startswith('---\nid: redis-ttl\ntitle: "Session keys expire after 14 days"\n')
    assert "created_at: 2026-11-29T10:00:00Z" in text and 'agent: "claude-code"' in text
    assert e["links"] == [{"relation": "supports", "direction": "out", "kind": "note",
                           "path": "services/Auth Service.md", "target": "[[Auth Service]]"}]  # fmt: skip
    assert e["path"] == ".sidecar/memory/redis-ttl.md" and e["confidence"] == 0.8
    assert call(s, "memory.get", id="redis-ttl")["entry"]["body"] == "Redis TTL 14 days."
    with pytest.raises(NoteNotFound):
        call(s, "memory.get", id="nope")


def test_params_are_checked_at_the_edge(s: Services) -> None:
    with pytest.raises(UsageError, match="unknown relation"):
        call(s, "memory.write", title="t", relations={"likes": ["x"]})
    with pytest.raises(UsageError, match="reminder needs a due time"):
        call(s, "memory.write", title="t", entry_type="reminder")
    with pytest.raises(UsageError, match="not a memory id"):
        call(s, "memory.write", id="Bad Id", title="t")
    with pytest.raises(UsageError, match="not an ISO 8601"):
        call(s, "memory.write", title="t", entry_type="reminder", due_at="tomorrow")


def test_updates_keep_created_at_and_the_last_three_revisions(
    s: Services, clock: FakeClock
) -> None:
    add(s, "a", "Version 0", content="zero")
    for n in range(1, 6):
        clock.advance(60)
        e = add(s, "a", f"Version {n}", content=f"body number {n}")
    assert e["created_at"] == "2026-11-29T10:00:00Z" and e["updated_at"] == "2026-11-29T10:05:00Z"
    h = call(s, "memory.history", id="a")
    assert [parse(r["text"], "a", T0).title for r in h["revisions"]] == [
        "Version 4", "Version 3", "Version 2"]  # fmt: skip
    assert "Version 5" in h["current"]


def test_near_duplicates_are_refused_or_linked_as_contradicts(s: Services) -> None:
    add(s, "one-writer", "One writer serialises every write", content="All writes queue.")
    with pytest.raises(SidecarError) as err:
        call(s, "memory.write", title="One writer serialises every write!",
             content="all writes queue", entry_type="decision")  # fmt: skip
    assert err.value.data["duplicate_of"] == "one-writer" and err.value.code == -32000
    r = call(s, "memory.write", title="One writer serialises every write",
             content="All writes queue.", on_duplicate="contradicts")  # fmt: skip
    assert r["entry"]["relations"] == {"contradicts": ["[[one-writer]]"]}
    assert r["similar"][0]["id"] == "one-writer"
    incoming = call(s, "memory.get", id="one-writer")["entry"]["links"]
    assert incoming == [{"relation": "contradicts", "direction": "in", "kind": "memory",
                         "id": r["entry"]["id"], "title": r["entry"]["title"]}]  # fmt: skip


def test_supersede_refute_confirm(s: Services) -> None:
    add(s, "old", "Sessions live in Memcached")
    r = call(s, "memory.write", id="new", title="Sessions live in Redis", entry_type="decision",
             relations={"supersedes": ["old"]})  # fmt: skip
    assert r["superseded"] == ["old"]
    old = call(s, "memory.get", id="old")["entry"]
    assert (old["status"], old["superseded_by"]) == ("superseded", "new")
    assert "status: superseded\n" in (folder(s) / "old.md").read_text("utf-8")
    assert [e["id"] for e in call(s, "memory.list")["entries"]] == ["new"]
    assert {e["id"] for e in call(s, "memory.list", status="all")["entries"]} == {"new", "old"}
    c = call(s, "memory.confirm", id="new")["entry"]
    assert (c["confirmations"], c["confidence"]) == (1, 0.85)
    f = call(s, "memory.confirm", id="new", refute=True)["entry"]
    assert (f["status"], f["refutations"], f["confidence"]) == ("refuted", 1, 0.0)
    add(s, "v1", "Tokens live 15 minutes")
    revised = call(s, "memory.write", id="v2", title="Tokens live 15 minutes",
                   entry_type="decision", relations={"supersedes": ["v1"]})  # fmt: skip
    assert revised["superseded"] == ["v1"]  # repeating what it supersedes is no duplicate


def test_delete_and_expiry_archive_never_delete(s: Services, clock: FakeClock) -> None:
    add(s, "gone", "Archive me")
    add(s, "brief", "Short lived", ttl=60)
    r = call(s, "memory.delete", id="gone")
    assert r["archived"] and r["entry"]["status"] == "archived"
    assert not (folder(s) / "gone.md").exists()
    assert parse((folder(s) / "archive" / "gone.md").read_text("utf-8"), "gone", T0).status == (
        "archived"
    )
    clock.advance(61)
    assert call(s, "memory.list")["entries"] == []  # list catches up: "brief" expired
    assert (folder(s) / "archive" / "brief.md").exists()
    assert call(s, "memory.get", id="brief")["entry"]["archived"] is True


def test_links_to_entries_and_notes(s: Services) -> None:
    add(s, "a", "Entry A")
    add(s, "b", "Entry B")
    e = call(s, "memory.link", id="a", relation="derived_from", target="b")["entry"]
    assert e["links"][0] == {"relation": "derived_from", "direction": "out", "kind": "memory",
                             "id": "b", "target": "[[b]]"}  # fmt: skip
    e = call(s, "memory.link", id="a", relation="relates_to", target="ADR-7 Session storage")
    kinds = {(x["kind"], x.get("path")) for x in e["entry"]["links"]}
    assert ("note", "decisions/ADR-7 Session storage.md") in kinds
    e = call(s, "memory.link", id="a", relation="relates_to", target="Nowhere")["entry"]
    assert {"relation": "relates_to", "direction": "out", "kind": "missing",
            "target": "[[Nowhere]]"} in e["links"]  # fmt: skip
    e = call(s, "memory.link", id="a", relation="derived_from", target="b", remove=True)["entry"]
    assert "derived_from" not in e["relations"]


def test_editing_the_file_in_the_editor_updates_the_entry(s: Services) -> None:
    add(s, "edit-me", "Before", content="old body")
    path = folder(s) / "edit-me.md"
    path.write_text(path.read_text("utf-8").replace("Before", "After"), "utf-8")
    assert call(s, "memory.get", id="edit-me")["entry"]["title"] == "After"
    assert "Before" in call(s, "memory.history", id="edit-me")["revisions"][0]["text"]
    (folder(s) / "broken.md").write_text("---\nentry_type: idea\n---\n", "utf-8")
    (folder(s) / "by-hand.md").write_text("A fact typed by hand\n", "utf-8")
    listed = call(s, "memory.list")
    assert {e["id"] for e in listed["entries"]} == {"edit-me", "by-hand"}
    assert listed["problems"][0]["path"].endswith("broken.md")
    path.unlink()
    assert {e["id"] for e in call(s, "memory.list")["entries"]} == {"by-hand"}
    assert "After" in call(s, "memory.history", id="edit-me")["revisions"][0]["text"]


def test_entries_and_counters_survive_a_restart(opener: Opener) -> None:
    first = opener()
    add(first, "keep", "Kept across restarts")
    call(first, "memory.confirm", id="keep")
    first.close()
    second = opener()
    assert call(second, "memory.get", id="keep")["entry"]["confirmations"] == 1


def test_a_visible_memory_folder_is_not_indexed_as_notes(opener: Opener, tmp_path: Path) -> None:
    s = opener(memory_folder=tmp_path / "vault" / "Memory")
    add(s, "visible", "Memory in a visible folder")
    assert (s.vault.root / "Memory" / "visible.md").exists()
    s.reindex()
    assert not any(p.startswith("Memory/") for p in s.state.notes)
    assert len(s.state.notes) == 10


def test_export_import_round_trip(opener: Opener, clock: FakeClock) -> None:
    a = opener()
    add(a, "x", "Fact X", content="x body", tags=["t"], relations={"supports": ["Alice"]})
    add(a, "y", "Fact Y")
    call(a, "memory.confirm", id="x")
    call(a, "memory.delete", id="y")
    dump = call(a, "memory.export")
    assert [e["id"] for e in dump["entries"]] == ["x", "y"]
    shutil.rmtree(folder(a))
    a.close()
    b = opener("data2")
    r = call(b, "memory.import", entries=dump["entries"])
    assert r == {"imported": ["x", "y"], "skipped": [], "errors": []}
    x = call(b, "memory.get", id="x")["entry"]
    assert (x["body"], x["tags"], x["confirmations"]) == ("x body", ["t"], 1)
    assert call(b, "memory.get", id="y")["entry"]["status"] == "archived"
    again = call(b, "memory.import", entries=dump["entries"] + [{"id": "Bad Id", "title": "t"}])
    assert again["skipped"] == ["x", "y"] and again["errors"][0]["id"] == "Bad Id"


def test_reminders_due_upcoming_snooze_and_announce_once(s: Services, clock: FakeClock) -> None:
    call(s, "memory.write", id="soon", title="Call Alice", entry_type="reminder", due_in=60)
    call(s, "memory.write", id="later", title="Upgrade Redis", entry_type="reminder",
         due_at="2026-12-10T09:00:00Z")  # fmt: skip
    r = call(s, "reminders.due", within=3600)
    assert (r["due"], [e["id"] for e in r["upcoming"]]) == ([], ["soon"])
    soon = s.memory.clock() + dt.timedelta(seconds=60)
    assert reminders.next_announcement(s.memory) == soon  # the daemon sleeps until then
    clock.advance(60)
    assert [e["id"] for e in call(s, "reminders.due")["due"]] == ["soon"]
    pending = reminders.pending_announcements(s.memory)
    assert [p["id"] for p in reminders.mark_announced(s.memory, pending)] == ["soon"]
    assert reminders.pending_announcements(s.memory) == []
    later = dt.datetime(2026, 12, 10, 9, tzinfo=dt.UTC)
    assert reminders.next_announcement(s.memory) == later  # "soon" was announced
    call(s, "reminders.snooze", id="soon", seconds=300)
    assert call(s, "reminders.due")["due"] == []
    clock.advance(300)
    assert [r.entry.id for r in reminders.pending_announcements(s.memory)] == ["soon"]
    with pytest.raises(UsageError, match="not a reminder"):
        add(s, "d", "A decision")
        call(s, "reminders.snooze", id="d", seconds=5)
