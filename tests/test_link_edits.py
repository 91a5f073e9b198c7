"""The link edits a rename makes (shared by the language server's rename and ``note.move``)."""

from __future__ import annotations

from sidecar.core.link_edits import Edit, apply_edits, rename_note_edits
from sidecar.core.link_spans import split_lines


def renamed(text: str, source: str, refs: list[dict[str, object]], old: str, new: str) -> str:
    return apply_edits(text, rename_note_edits(split_lines(text), source, refs, old, new))


def test_an_encoded_markdown_link_stays_encoded() -> None:
    """A path with a space cannot be written bare in a Markdown link: it ended the link (the
    rename wrote ``(Focused Work.md)``, which no longer links)."""
    text = "see [plan](Deep%20Work.md#log) here\n"
    ref = {"line": 1, "target": "Deep Work.md", "swapped": False}
    assert renamed(text, "Other.md", [ref], "Deep Work.md", "Focused Work.md") == (
        "see [plan](Focused%20Work.md#log) here\n"
    )
    spaced = "see [plan](<Deep Work.md>)\n"
    assert renamed(spaced, "Other.md", [ref], "Deep Work.md", "Focused Work.md") == (
        "see [plan](<Focused Work.md>)\n"
    )


def test_edits_leave_every_other_byte_alone() -> None:
    text = "a\r\nbb [[X]]\r\nccc\n\rd"
    out = apply_edits(text, [Edit(1, 5, 6, "Yz"), Edit(4, 0, 1, "D")])
    assert out == "a\r\nbb [[Yz]]\r\nccc\n\rD"


def test_a_link_in_a_nested_list_item_is_renamed() -> None:
    """Four spaces in, under a list item, a line is the item's text; read alone it is an
    indented code block, and the rename (from ``note.move``, and the LSP's) missed its link
    (dendron-site: ``dendron.tutorial.conclusion`` kept linking ``dendron.topic.hooks``)."""
    text = "- Extending\n    - Learn how to [[Hooks|dendron://site/dendron.topic.hooks]].\n"
    ref = {"line": 2, "target": "dendron.topic.hooks", "swapped": True}
    assert renamed(text, "a.md", [ref], "dendron.topic.hooks.md", "dendron.topic.lifecycle.md") == (
        "- Extending\n    - Learn how to [[Hooks|dendron://site/dendron.topic.lifecycle]].\n"
    )
    code = "text\n\n    [[dendron.topic.hooks]] is code here\n"
    ref = {"line": 3, "target": "dendron.topic.hooks", "swapped": False}
    assert renamed(code, "a.md", [ref], "dendron.topic.hooks.md", "x.md") == code


def test_a_new_name_cannot_leave_the_vault() -> None:
    import pytest

    from sidecar.core.link_edits import new_note_path

    assert new_note_path("a/b.md", "c") == "a/c.md"
    assert new_note_path("a/b.md", "d/c") == "d/c.md"
    for name in ["../../x", "a/../../x", "..", "x/..", "..\\x"]:
        with pytest.raises(ValueError, match="outside the vault"):
            new_note_path("a/b.md", name)
