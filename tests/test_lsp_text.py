"""The language server's pure parts: links to the column, completion contexts and candidates,
rename edits, and the editor methods of the daemon on a small vault (in-process)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sidecar.api import build_registry
from sidecar.core import link_edits as e
from sidecar.core.fix import add_relation
from sidecar.core.link_spans import heading_at, headings, link_at, links_in, links_on, split_lines
from sidecar.lsp import complete
from sidecar.lsp.names import Names
from sidecar.services.context import Services
from tests.conftest import VaultFactory


def test_links_on_a_line_split_into_parts() -> None:
    line = "A [[Note#Head|shown]], [[Label|dendron://v/a.b#x]] and [it](../dir/My%20Note.md#sec)"
    wiki, dendron, md = links_on(0, line)
    assert (wiki.name.text, wiki.anchor.text, wiki.label_name.text) == ("Note", "Head", "shown")  # type: ignore[union-attr]
    assert line[wiki.start : wiki.end] == "[[Note#Head|shown]]"
    assert line[dendron.label_name.start : dendron.label_name.end] == "a.b"  # type: ignore[union-attr]
    assert dendron.label_anchor is not None and dendron.label_anchor.text == "x"
    assert not md.wikilink and md.name.text == "../dir/My Note.md" and md.anchor.text == "sec"  # type: ignore[union-attr]
    assert line[md.name.start : md.name.end] == "../dir/My%20Note.md"


def test_links_in_code_are_not_links() -> None:
    assert [x.name.text for x in links_on(0, "`[[Not]]` but [[Yes]]")] == ["Yes"]
    assert link_at(["x [[A]] y"], 0, 3) is not None and link_at(["x [[A]] y"], 0, 8) is None


def test_heading_at_parses_only_where_a_heading_can_start() -> None:
    """``heading_at`` skips the parse on lines no heading starts on; the headings it still
    finds are the parse's: ATX in a list or a quote, a setext heading over two lines."""
    text = ("---\ntitle: T\n---\nPlain line\n\n- # In a list\n> ## Quoted\n\n"
            "Two lines\nof setext\n===\n\nA paragraph\n\n---\n")  # fmt: skip
    lines = split_lines(text)
    found = [i for i in range(len(lines)) if heading_at(lines, i) is not None]
    assert found == [h.line - 1 for h in headings(lines)] == [5, 6, 8]


def test_a_frontmatter_link_four_spaces_in_is_a_link() -> None:
    """A frontmatter line is YAML, read alone: its indentation makes no code block."""
    lines = split_lines('---\nrelated:\n    - "[[Deep]]"\n---\nbody\n')
    assert [(x.line, x.name.text, lines[x.line][x.start : x.end]) for x in links_in(lines)] == [
        (2, "Deep", "[[Deep]]")
    ]


def test_headings_after_frontmatter() -> None:
    lines = split_lines("---\ntitle: T\n---\n# One\ntext\n## Two\n")
    assert [(h.text, h.line) for h in headings(lines)] == [("One", 4), ("Two", 6)]


def names() -> Names:
    row = {"id": None, "blocks": [], "headings": []}
    return Names.from_catalog({"version": 1, "notes": [
        {**row, "path": "a/Session Store.md", "title": "Session Store", "aliases": ["Sessions"],
         "headings": [[2, "Expiry", 5], [2, "Keys", 9]], "blocks": ["abc"]},
        {**row, "path": "b/Auth.md", "title": "Auth", "aliases": []},
        {**row, "path": "c/Auth.md", "title": "Auth", "aliases": []},
    ], "relations": [{"name": "depends_on", "inverse": "required_by"},
                     {"name": "decided_by", "inverse": "decides"}]})  # fmt: skip


def test_completion_contexts() -> None:
    lines = ["see [[Sess", "see [[Session Store#Ke]]", "[[Session Store#^a", "[[x|lab"]
    note = complete.context_at(lines, 0, 10)
    assert note == complete.Context("note", "Sess", 6, close=True)
    head = complete.context_at(lines, 1, 22)
    assert head == complete.Context("heading", "Ke", 20, "Session Store", False)
    assert complete.context_at(lines, 2, 18) == complete.Context("block", "a", 17,
                                                                 "Session Store", True)  # fmt: skip
    assert complete.context_at(lines, 3, 7) is None
    fm = ["---", "relations:", "  dec", "  depends_on:", "    - Ses", "---"]
    assert complete.context_at(fm, 2, 5) == complete.Context("relation", "dec", 2)
    assert complete.context_at(fm, 4, 9) == complete.Context("relation_target", "Ses", 6)


def test_completion_items() -> None:
    n = names()
    found, cut = complete.items(complete.Context("note", "sess", 6, close=True), n, "x.md")
    assert [(i.label, i.insert) for i in found] == [  # the shorter name first
        ("Sessions", "Session Store|Sessions]]"),
        ("Session Store", "Session Store]]"),
    ]
    assert not cut
    auth, _ = complete.items(complete.Context("note", "auth", 0), n, "x.md")
    assert sorted(i.insert for i in auth) == ["b/Auth", "c/Auth"]  # ambiguous names: paths
    heads, _ = complete.items(complete.Context("heading", "k", 0, "Sessions"), n, "x.md")
    assert [i.label for i in heads] == ["Keys"]  # resolved through the alias
    rel, _ = complete.items(complete.Context("relation", "de", 0), n, "x.md")
    assert [i.label for i in rel] == ["decided_by", "depends_on"]
    target, _ = complete.items(complete.Context("relation_target", "Sess", 0), n, "x.md")
    assert target[0].insert == '"[[Session Store]]"'


def test_rename_note_edits_keep_the_style_of_each_link() -> None:
    lines = ["[[Old]] [[old.md#h]] [[dir/Old|x]] [[Alias]]", "[t](../dir/Old.md) [[Y|Old]]"]
    refs = [{"line": 1, "target": t, "swapped": False} for t in ("Old", "old.md", "dir/Old",
                                                                  "Alias")]  # fmt: skip
    refs += [{"line": 2, "target": "../dir/Old.md"}, {"line": 2, "target": "Old", "swapped": True}]
    edits = e.rename_note_edits(lines, "sub/src.md", refs, "dir/Old.md", "dir/New Name.md")
    got = [(x.line, lines[x.line][x.start : x.end], x.new_text) for x in edits]
    assert got == [
        (0, "Old", "New Name"), (0, "old.md", "New Name.md"), (0, "dir/Old", "dir/New Name"),
        (1, "../dir/Old.md", "../dir/New%20Name.md"), (1, "Old", "New Name"),
    ]  # fmt: skip
    assert e.new_note_path("dir/Old.md", "New") == "dir/New.md"
    assert e.new_note_path("dir/Old.md", "[[top/New.md]]") == "top/New.md"


def test_rename_heading_edits_write_text_or_slug_as_the_link_did() -> None:
    lines = ["[[N#Old Name]] [[N#old-name]] [[N#other]]", "# Old Name", "[[#Old Name]]"]
    refs = [{"line": 1, "target": "N"}]
    got = [(x.line, x.new_text) for x in e.rename_heading_edits(lines, refs, "Old Name", "New!")]
    assert got == [(0, "New!"), (0, "new")]
    assert [(x.line, x.new_text) for x in e.local_anchor_edits(lines, "Old Name", "Fresh")] == [
        (2, "Fresh")]  # fmt: skip


def test_minimal_edit_covers_only_changed_lines() -> None:
    old = "---\ntitle: A\n---\nbody\n"
    new = add_relation(old, "superseded_by", "B")
    assert new is not None
    edit = e.minimal_edit(old, new)
    assert edit is not None and (edit.line, edit.last_line) == (2, 2)
    assert edit.new_text == 'superseded_by:\n  - "[[B]]"\n'
    assert e.minimal_edit(old, old) is None


def test_editor_methods_read_only(
    make_vault: VaultFactory, open_services: Callable[[Path], Services]
) -> None:
    root = make_vault({
        "A.md": "---\nsupersedes: ['[[B]]']\n---\n# A\nSee [[B#Part]] and [[B#Part]].\n",
        "B.md": "# B\n## Part\ntext ^blk\n",
        "C.md": "[[Bee|B]]\n",
    })  # fmt: skip
    s = open_services(root)
    s.reindex()
    r = build_registry()
    cat = r.call(s, "vault.catalog", {})
    assert [n["path"] for n in cat["notes"]] == ["A.md", "B.md", "C.md"]
    assert r.call(s, "vault.catalog", {"since": cat["version"]}) == {
        "version": cat["version"], "unchanged": True}  # fmt: skip
    res = r.call(s, "note.resolve", {"source": "A.md", "links": ["[[B#Part]]", "B#^blk", "Zz"]})
    assert [(x["target"], x["line"], x["anchor_found"]) for x in res["results"]] == [
        ("B.md", 2, True), ("B.md", None, True), (None, None, None)]  # fmt: skip
    refs = r.call(s, "note.references", {"note": "B"})["references"]
    assert [(x["source"], x["line"], x["relation"]) for x in refs] == [
        ("A.md", 2, "supersedes"),
        ("A.md", 5, "link"),
        ("A.md", 5, "link"),
        ("C.md", 1, "link"),
    ]
    # the language server places each row on its line: the property link at its own columns
    a_lines = split_lines((root / "A.md").read_text("utf-8"))
    placed = [(k.line, a_lines[k.line][k.start : k.end]) for k in e.locate(a_lines, refs[0])]
    assert placed == [(1, "[[B]]")]
    part = r.call(s, "note.references", {"note": "B", "heading": "Part"})["references"]
    assert len(part) == 2
    text = "# A\nSee [[Nope]] and [[B#Gone]]\n"
    found = r.call(s, "note.check", {"path": "A.md", "text": text})["findings"]
    assert [(f["rule"], f["line"]) for f in found] == [("broken_anchor", 2), ("dangling_target", 2)]
    b = r.call(s, "note.check", {"path": "B.md", "text": "# B\n"})["findings"]
    assert [(f["rule"], f["target"], f["relation"]) for f in b] == [
        ("missing_inverse", "A.md", "superseded_by")
    ]  # from the saved graph
    assert (root / "A.md").read_text().startswith("---")  # the buffer was not written
