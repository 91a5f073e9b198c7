import sys

from sidecar.core.links import frontmatter_links
from sidecar.core.markdown import CONTEXT_CHARS, parse_body
from sidecar.core.model import LinkRef


def links(text: str) -> list[LinkRef]:
    return list(parse_body(text).links)


def test_wikilink_forms() -> None:
    found = links("[[A]] [[B#Head]] [[C|alias]] [[D#^blk]] ![[E]] [[F#H|t]]\n")
    assert [(x.target, x.anchor, x.label, x.embed) for x in found] == [
        ("A", "", "", False), ("B", "Head", "", False), ("C", "", "alias", False),
        ("D", "^blk", "", False), ("E", "", "", True), ("F", "H", "t", False),
    ]  # fmt: skip
    assert found[2].text == "alias" and found[0].text == "A"


def test_escaped_pipe_in_tables_and_dendron_uri() -> None:
    found = links("| [[Note#Heading\\|alias]] |\n\n[[dendron://vault/a.b.c]]\n")
    assert (found[0].target, found[0].anchor, found[0].label) == ("Note", "Heading", "alias")
    assert found[1].target == "a.b.c"


def test_same_note_anchor_is_not_an_edge() -> None:
    assert links("[[#Heading]] [x](#anchor)\n") == []


def test_markdown_links_decode_and_skip_external() -> None:
    found = links(
        "[a](../x/Some%20Note.md#Part) [b](<with space.md>) [c](https://e.com/x.md) "
        '[d](mailto:a@b) ![img](pic.png) [e](y.md "title")\n'
    )
    assert [(x.target, x.anchor, x.embed, x.markdown) for x in found] == [
        ("../x/Some Note.md", "Part", False, True), ("with space.md", "", False, True),
        ("pic.png", "", True, True), ("y.md", "", False, True),
    ]  # fmt: skip


def test_code_and_comments_hide_links() -> None:
    text = "`[[a]]`\n\n```\n[[b]]\n```\n\n<!-- [[c]] -->\n\n%%[[d]]%%\n\n[[e]]\n"
    assert [x.target for x in links(text)] == ["e"]


def test_line_and_context() -> None:
    found = links("# T\n\nfirst line\nsee [[X]] here\n")
    assert found[0].line == 4
    assert found[0].context == "first line\nsee [[X]] here"


def test_every_occurrence_with_its_own_line_and_context() -> None:
    """A list item is its own context; the same target twice is two occurrences."""
    found = links("- one [[X]]\n- two [[X]] and [b](X.md)\n\n> quoted\n> [[Y]]\n")
    assert [(x.target, x.line, x.context) for x in found] == [
        ("X", 1, "one [[X]]"), ("X", 2, "two [[X]] and [b](X.md)"),
        ("X.md", 2, "two [[X]] and [b](X.md)"), ("Y", 5, "quoted\n> [[Y]]"),
    ]  # fmt: skip


def test_commonmark_links_the_old_scanner_missed() -> None:
    text = (
        "See [the doc][ref] and [again][Ref].\n\n[ref]: docs/A%20note.md#Part\n\n"
        "[angle](<folder/with space.md>) [esc](a\\_b.md) [ent](caf&eacute;.md) "
        "[paren](p(1).md)\n\n"
        "Setext [[Link]] heading\n===\n\n"
        '<div title="[[not-a-link]]">x</div>\n\n    [[indented code]]\n'
    )
    got = [(x.target, x.anchor, x.line) for x in links(text)]
    assert got == [
        ("docs/A note.md", "Part", 1), ("docs/A note.md", "Part", 1),
        ("folder/with space.md", "", 5), ("a_b.md", "", 5), ("café.md", "", 5),
        ("p(1).md", "", 5), ("Link", "", 7),
    ]  # fmt: skip


def test_long_paragraph_context_is_a_compact_window() -> None:
    words = " ".join(f"word{i}" for i in range(300))
    found = links(f"{words} see [[X]] here {words}\n")
    ctx = found[0].context
    assert "see [[X]] here" in ctx
    assert ctx.startswith("...") and ctx.endswith("...")
    assert len(ctx) <= CONTEXT_CHARS + 6
    # ASCII marks keep an ASCII paragraph at one byte a character in memory
    assert sys.getsizeof(ctx) < 2 * CONTEXT_CHARS


def test_relations_block_and_link_shaped_keys() -> None:
    data = {
        "relations": {"supersedes": ["[[ADR-6]]", "ADR 5"], "Depends-On": "[[DB]]"},
        "owner": "[[Alice]]",
        "categories": ["[[Books]]", "[[Films]]"],
        "mixed": ["[[X]]", "plain"],
        "related": [["Foo"]],  # YAML for an unquoted related: [[Foo]]
        "tags": ["[[not-a-relation]]"],
        "source": "[doc](docs/a.md)",
        "title": "x",
    }
    got = sorted((x.relation, x.target) for x in frontmatter_links(data))
    assert got == [
        ("categories", "Books"), ("categories", "Films"), ("depends_on", "DB"),
        ("owner", "Alice"), ("related", "Foo"), ("source", "docs/a.md"),
        ("supersedes", "ADR 5"), ("supersedes", "ADR-6"),
    ]  # fmt: skip
    assert all(x.line == 0 for x in frontmatter_links(data))
