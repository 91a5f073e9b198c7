"""Recall (the agent's per-prompt budget) and session start, in-process with the tiny embedder."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.api import build_registry
from sidecar.embed import TinyEmbedder
from sidecar.services.context import Services
from tests.conftest import EXAMPLE_VAULT, write_files

T0 = dt.datetime(2026, 11, 29, 10, 0, tzinfo=dt.UTC)
REGISTRY = build_registry()
STALE = {"decisions/ADR-5 Sessions in Postgres.md", "decisions/ADR-6 Sessions in Memcached.md"}


def open_vault(vault: Path, data: Path) -> Services:
    s = Services.open(vault, data, embedder=TinyEmbedder(256), clock=lambda: T0)
    s.reindex()
    s.embed_stage.run()
    return s


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Services]:
    shutil.copytree(EXAMPLE_VAULT, tmp_path / "vault")
    services = open_vault(tmp_path / "vault", tmp_path / "data")
    yield services
    services.close()


def call(s: Services, method: str, **params: Any) -> Any:
    return REGISTRY.call(s, method, params)


def test_recall_answers_within_budget_with_typed_hints(s: Services) -> None:
    r = call(s, "recall", prompt="how long do session keys live in redis")
    assert not r["abstained"] and 1 <= len(r["notes"]) <= 4
    paths = [n["path"] for n in r["notes"]]
    assert "decisions/ADR-7 Session storage.md" in paths and not STALE & set(paths)
    adr7 = r["notes"][paths.index("decisions/ADR-7 Session storage.md")]
    assert {"relation": "supersedes", "note": "decisions/ADR-6 Sessions in Memcached.md"} in (
        adr7["hints"]
    )
    assert len(call(s, "recall", prompt="session keys redis", max_notes=1)["notes"]) == 1


def test_recall_abstains_on_an_unrelated_prompt(s: Services) -> None:
    for prompt in ("Who won the 2006 FIFA World Cup?", "Recommend me a book on Roman history."):
        r = call(s, "recall", prompt=prompt)
        assert r["abstained"] and r["notes"] == [] and r["memory"] == []
        assert r["reason"].startswith("nothing is about this prompt")
    assert call(s, "recall", prompt="?!")["reason"] == "empty prompt"


def test_superseded_notes_only_when_asked(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write_files(vault, {
        "Old plan.md": "---\nstatus: superseded\nsuperseded_by: \"[[New plan]]\"\n---\n"
                       "# Old plan\n\nThe zebra migration moves every stripe by hand.\n",
        "New plan.md": "---\nrelations:\n  supersedes: [\"[[Old plan]]\"]\n---\n"
                       "# New plan\n\nA script does it now.\n",
    })  # fmt: skip
    s = open_vault(vault, tmp_path / "d")
    try:
        r = call(s, "recall", prompt="zebra migration stripes")
        assert [(n["path"], n.get("replaces")) for n in r["notes"]] == [("New plan.md",
                                                                         "Old plan.md")]  # fmt: skip
        r = call(s, "recall", prompt="zebra migration stripes", include_superseded=True)
        assert r["notes"][0]["path"] == "Old plan.md"
        assert {"relation": "superseded_by", "note": "New plan.md"} in r["notes"][0]["hints"]
    finally:
        s.close()


def test_recall_fails_closed(s: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: Any) -> Any:
        raise RuntimeError("index on fire")

    monkeypatch.setattr(s.search, "rank", boom)
    r = call(s, "recall", prompt="how long do session keys live in redis")
    assert r["abstained"] and r["notes"] == [] and r["reason"] == "error: index on fire"


def test_recall_brings_memory_with_its_links(s: Services) -> None:
    call(s, "memory.write", id="redis-ttl", title="Redis session keys expire after 14 days",
         entry_type="decision", relations={"supports": ["ADR-7 Session storage"]})  # fmt: skip
    r = call(s, "recall", prompt="when do redis session keys expire")
    assert [m["id"] for m in r["memory"]] == ["redis-ttl"]
    adr7 = next(n for n in r["notes"] if n["path"].endswith("ADR-7 Session storage.md"))
    assert {"relation": "supports", "memory": "redis-ttl", "entry_type": "decision",
            "title": "Redis session keys expire after 14 days"} in adr7["hints"]  # fmt: skip


def test_session_start_stays_under_budget_and_leads_with_reminders(s: Services) -> None:
    call(s, "memory.write", id="call-alice", title="Call Alice before the Redis upgrade",
         entry_type="reminder", due_in=0)  # fmt: skip
    call(s, "memory.write", title="Session A ended mid-refactor", entry_type="handoff",
         content="Old handoff.")  # fmt: skip
    s.clock = lambda: T0 + dt.timedelta(hours=1)
    s.memory.clock = s.clock
    call(s, "memory.write", id="handoff-new", title="Refactor of the session store is half done",
         entry_type="handoff", content="Next: move the TTL into config.")  # fmt: skip
    for n in range(30):
        call(s, "memory.write", id=f"fact-{n}", title=f"Fact number {n} about subsystem {n}",
             entry_type="decision", content=f"detail {n} " * 40)  # fmt: skip
    full = call(s, "session.start")
    text = full["text"]
    assert full["chars"] == len(text) <= 2000
    assert text.startswith("Due reminders:\n- Call Alice before the Redis upgrade")
    assert "Last handoff (2026-11-29 11:00 UTC): Refactor of the session store" in text
    assert full["reminders"] == ["call-alice"] and full["handoff"] == "handoff-new"
    assert "Remembered:" in text and "Recently edited notes:" in text
    small = call(s, "session.start", budget=150)
    assert small["chars"] <= 150 and small["text"].startswith("Due reminders:")
    assert call(s, "session.start", budget=0)["text"] == ""


def test_session_start_never_fails(s: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> Any:
        raise OSError("disk gone")

    monkeypatch.setattr(s.memory.index, "snapshot", boom)
    r = call(s, "session.start")
    assert r["text"] == "" and r["error"] == "disk gone"


def test_each_decision_goes_to_the_log_when_asked(s: Services, tmp_path: Path) -> None:
    from sidecar.services.recall import RecallOptions, recall

    log = tmp_path / "logs" / "recall-log.jsonl"
    recall(s, "thanks!", RecallOptions(log=log))
    said = recall(s, "how long do session keys live in redis", RecallOptions(log=log))
    assert "decision" not in said  # the scores are for the log (or explain), not the agent
    lines = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    assert [(x["prompt"], x["abstained"]) for x in lines] == [
        ("thanks!", True), ("how long do session keys live in redis", False)]  # fmt: skip
    assert lines[0]["reason"].startswith("too short") and lines[1]["notes"]
    assert lines[1]["words"] == ["long", "session", "keys", "live", "redis"]
    top = lines[1]["candidates"][0]
    assert set(top) == {"path", "cosine", "passage", "coverage", "margin", "score"}
    assert oct(log.stat().st_mode & 0o777) == "0o600"
    assert call(s, "recall", prompt="thanks!")["reason"].startswith("too short: 0 content")


def test_a_prompt_is_embedded_once_and_rows_are_read_only_for_the_notes_kept(
    s: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Per prompt the hook pays for one embedding (the notes' search, the memory leg and the
    lines share it, and a repeated prompt reuses it) and reads the rows of the notes it keeps
    only: an off-topic prompt keeps none of its candidates, and reads none."""
    import sidecar.services.search as search_module

    call(s, "memory.write", id="redis-ttl", title="Redis session keys expire after 14 days",
         entry_type="decision")  # fmt: skip
    embedded: list[str] = []
    embed = type(s.embedder).embed

    def counting(self: Any, texts: Any) -> Any:
        embedded.extend(texts)
        return embed(self, texts)

    read: list[str] = []
    rows = search_module.chunk_rows

    def reading(store: Any, ids: Any) -> Any:
        read.extend(ids)
        return rows(store, ids)

    monkeypatch.setattr(type(s.embedder), "embed", counting)
    monkeypatch.setattr(search_module, "chunk_rows", reading)
    prompt = "when do redis session keys expire"
    for _ in range(2):
        r = call(s, "recall", prompt=prompt)
        assert [m["id"] for m in r["memory"]] == ["redis-ttl"] and r["notes"]
    assert embedded.count(prompt) == 1
    assert len(read) <= len(r["notes"])
    read.clear()
    r = call(s, "recall", prompt="Who won the 2006 FIFA World Cup?")
    assert r["abstained"] and read == []
