"""The three real vaults in ../shared/corpora, indexed into a real LanceDB store."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sidecar.services.context import Services
from tests.conftest import corpus

pytestmark = pytest.mark.e2e  # every test here reads a whole real vault


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Services, dict]]:  # type: ignore[type-arg]
    out = {}
    for name in ("dendron-site", "obsidian-tasks-docs", "kepano-obsidian"):
        s = Services.open(corpus(name), tmp_path_factory.mktemp(name))
        out[name] = (s, s.reindex().to_dict())
    yield out  # type: ignore[misc]
    for s, _ in out.values():
        s.close()


def ratio(report: dict) -> float:  # type: ignore[type-arg]
    """Of the links to notes: the corpora carry no attachment files (ATTRIBUTION.md), so every
    embed of an image is broken, and says nothing of how notes resolve."""
    links = report["links"]
    broken = links["broken"] - links["attachments_missing"]
    return links["resolved"] / (links["resolved"] + broken)  # ambiguous names resolve


def test_dendron_resolves_at_least_90_percent(indexed) -> None:  # type: ignore[no-untyped-def]
    s, report = indexed["dendron-site"]
    assert report["notes"] == 1012 and report["errors"] == []
    assert ratio(report) >= 0.90
    # label-first links resolve to the note on the right of the pipe (dendron.faq.md line 142:
    # "[[lookup-feature|dendron.topic.lookup]]")
    outgoing = s.graph.links("dendron.faq")["outgoing"]
    hit = [o for o in outgoing if o["target"] == "dendron.topic.lookup.md"]
    assert [(o["line"], o["text"], o["state"]) for o in hit] == [(142, "lookup-feature", "valid")]


def test_tasks_docs_resolve_at_least_95_percent(indexed) -> None:  # type: ignore[no-untyped-def]
    _s, report = indexed["obsidian-tasks-docs"]
    assert report["notes"] == 118
    assert ratio(report) >= 0.95


def test_kepano_indexes_every_note_despite_invalid_yaml(indexed) -> None:  # type: ignore[no-untyped-def]
    s, report = indexed["kepano-obsidian"]
    assert report["notes"] == 103 and report["errors"] == []
    invalid = s.status()["invalid_frontmatter"]
    assert len(invalid) >= 20
    assert all(item["path"].startswith("Templates/") for item in invalid)
    # typed relations from frontmatter are edges named after their key
    relations = {e.relation for e in s.state.graph.edges()}
    assert {"categories", "author", "genre"} <= relations


def test_every_unresolved_link_is_listed_as_dangling(indexed) -> None:  # type: ignore[no-untyped-def]
    for s, report in indexed.values():
        dangling = s.graph.dangling()["dangling"]
        assert len(dangling) == report["links"]["broken"]
        assert all(d["source"] in s.state.notes and d["line"] >= 0 for d in dangling)


def test_backlinks_carry_line_and_context(indexed) -> None:  # type: ignore[no-untyped-def]
    s, _ = indexed["obsidian-tasks-docs"]
    back = s.graph.backlinks("Filters")["backlinks"]
    assert len(back) >= 10
    for b in back:
        text = (s.vault.root / b["source"]).read_text("utf-8").splitlines()
        if b["line"] > 0:
            assert "[" in text[b["line"] - 1]
            assert b["context"]


# A cold index of 1,000 notes parses in child processes (parse_worker).
def test_one_edit_in_dendron_reparses_exactly_one_note(tmp_path: Path) -> None:
    root = tmp_path / "dendron"
    shutil.copytree(corpus("dendron-site"), root)
    s = Services.open(root, tmp_path / "data")
    try:
        assert s.reindex().parsed == 1012
        note = root / "dendron.topic.lookup.md"
        note.write_text(note.read_text("utf-8") + "\nSee also [[dendron.topic.schema]].\n", "utf-8")
        st = note.stat()
        os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        report = s.reindex()
        assert (report.parsed, report.changed_paths) == (1, ["dendron.topic.lookup.md"])
        back = s.graph.backlinks("dendron.topic.schema")["backlinks"]
        assert "dendron.topic.lookup.md" in {b["source"] for b in back}
    finally:
        s.close()
