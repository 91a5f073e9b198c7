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


def test_a_note_made_later_gets_the_links_naming_it_by_folder_or_uri(make_vault: VaultFactory, open_services: Open) -> None:  # fmt: skip
    """``folder/topic.markdown`` and Dendron's ``dendron://vault/topic.markdown`` resolve by
    their last part, ``.markdown`` included: a note of that name made after the linking note
    was indexed must take those links (dendron-site lost 7 links to its Markdown page so)."""
    root = make_vault({"A.md": "[[folder/topic.markdown]] and [[Label|dendron://v/topic.markdown]]\n",
                       "B.md": "# B\n"})  # fmt: skip
    s = open_services(root)
    s.reindex()
    (root / "topic.markdown.md").write_text("# Topic\n", "utf-8")
    s.reindex()
    rows = s.graph.backlinks("topic.markdown.md")["backlinks"]
    assert [(b["source"], b["line"], b["swapped"]) for b in rows] == [("A.md", 1, False),
                                                                       ("A.md", 1, True)]  # fmt: skip


def test_columns_are_the_links_on_their_lines(make_vault: VaultFactory, open_services: Open) -> None:  # fmt: skip
    """Each row's ``columns`` cover its link on its line (what LSP references answer without
    opening the note); a line not ASCII up to the link's end has none (the editor converts)."""
    root = make_vault({**VAULT, "Wide.md": "Café [[Target note]] · [[Target note]]\n"})
    s = open_services(root)
    s.reindex()
    rows = s.graph.backlinks("Target note")["backlinks"]
    placed = []
    for b in rows:
        line = (root / b["source"]).read_text("utf-8").split("\n")[b["line"] - 1]
        if b["columns"] is not None:
            placed.append((b["source"], line[slice(*b["columns"])]))
        else:
            assert not line.isascii(), b
    assert placed == [
        ("Many.md", "[[Target note]]"),
        ("Many.md", "[[Target note]]"),
        ("Many.md", "[[target note|it]]"),
        ("Many.md", "[the part](Target%20note.md#part)"),
        ("Many.md", "![[Target note#Part]]"),
        ("One.md", "[[Target note]]"),
    ]
    assert [b["columns"] for b in rows if b["source"] == "Wide.md"] == [None, None]
