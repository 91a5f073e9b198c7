"""Backlinks as Obsidian's pane lists them: every occurrence with its own line, context and the
link's place in it, and the same grouped per linking note."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sidecar.services.context import Services
from sidecar.services.occurrences import match_in
from tests.conftest import VaultFactory

Open = Callable[[Path], Services]

VAULT: dict[str, str | bytes] = {
    "Target note.md": "# Target note\n\n## Part\n",
    "Many.md": "---\nrelated: \"[[Target note]]\"\n---\n# Many\n\n"
               "First [[Target note]] and again [[target note|it]].\n\n"
               "Later, [the part](Target%20note.md#part).\n\n- ![[Target note#Part]]\n",
    "One.md": "Just [[Target note]].\n",
    "Self.md": "",
}  # fmt: skip


def test_every_occurrence_with_its_line_and_match(make_vault: VaultFactory, open_services: Open) -> None:  # fmt: skip
    s = open_services(make_vault(VAULT))
    s.reindex()
    r = s.graph.backlinks("Target note")
    rows = [(b["source"], b["line"], b["relation"]) for b in r["backlinks"]]
    assert rows.count(("Many.md", 6, "link")) == 2  # two links on one line: two rows
    assert ("Many.md", 8, "link") in rows and ("Many.md", 10, "link") in rows
    assert any(src == "Many.md" and rel == "related" for src, _, rel in rows)
    assert ("One.md", 1, "link") in rows and len(rows) == 6
    for b in r["backlinks"]:
        if b["match"] is not None:
            start, end = b["match"]
            assert "arget" in b["context"][start:end], b
    first, second = [b for b in r["backlinks"] if b["line"] == 6]
    assert first["context"][slice(*first["match"])] == "[[Target note]]"
    assert second["context"][slice(*second["match"])] == "[[target note|it]]"
    md = next(b for b in r["backlinks"] if b["line"] == 8)
    assert md["context"][slice(*md["match"])] == "[the part](Target%20note.md#part)"
    many, one = r["sources"]
    assert (many["source"], many["count"], set(many["relations"])) == (
        "Many.md",
        5,
        {"related", "link"},
    )
    assert many["lines"] == [b["line"] for b in r["backlinks"] if b["source"] == "Many.md"]
    assert one == {"source": "One.md", "count": 1, "relations": ["link"], "lines": [1]}


def test_match_in_context() -> None:
    ctx = "See [[A/B|b]], [[b#x]] and [b](../A/B.md)."
    assert ctx[slice(*match_in(ctx, "b", 0))] == "[[A/B|b]]"  # type: ignore[arg-type]
    assert ctx[slice(*match_in(ctx, "b", 1))] == "[[b#x]]"  # type: ignore[arg-type]
    assert match_in(ctx, "c") is None and match_in("", "b") is None
