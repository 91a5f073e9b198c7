import pytest

from sidecar.core.markdown import Scanned, parse_body, slugify
from sidecar.core.note import parse_note


def scan(text: str, first: int = 0) -> Scanned:
    """The body of ``text`` from 0-based line ``first``, as the indexer reads it."""
    body = "".join(text.splitlines(keepends=True)[first:])
    return parse_body(body, first + 1)


def lines(text: str) -> str:
    return text


def test_headings_carry_levels_lines_and_breadcrumbs() -> None:
    s = scan(lines("# A\ntext a\n## B\ntext b\n### C\ntext c\n## D\ntext d\n"), 0)
    assert [(h.level, h.text, h.line) for h in s.headings] == [
        (1, "A", 1), (2, "B", 3), (3, "C", 5), (2, "D", 7)
    ]  # fmt: skip
    crumbs = {b.text: b.breadcrumb for b in s.blocks}
    assert crumbs["text c"] == ("A", "B", "C")
    assert crumbs["text d"] == ("A", "D")


def test_fenced_code_is_one_block_and_hides_headings() -> None:
    s = scan(lines("```py\n# not a heading\n```\n~~~\n## nor this\n~~~\n"), 0)
    assert s.headings == ()
    assert [b.is_code for b in s.blocks] == [True, True]
    assert s.blocks[0].start_line == 1 and s.blocks[0].end_line == 3


def test_unclosed_fence_runs_to_the_end() -> None:
    s = scan(lines("text\n\n```\n# hidden\n[[x]]\n"), 0)
    assert s.headings == ()
    assert s.blocks[-1].is_code and s.blocks[-1].end_line == 5


def test_setext_headings_but_not_after_list_items() -> None:
    s = scan(lines("Title\n=====\n\nSub\n---\n\n- item\n---\n"), 0)
    assert [(h.level, h.text, h.line) for h in s.headings] == [(1, "Title", 1), (2, "Sub", 4)]


def test_line_numbers_count_from_the_file_start() -> None:
    s = scan(lines("---\ntitle: x\n---\n# H\n\npara\n"), 3)
    assert s.headings[0].line == 4
    assert s.blocks[0].start_line == 6


def test_tags_outside_code_only_and_not_numbers_or_anchors() -> None:
    s = scan(lines("#one and #two/sub `#code` #123 [x](#anchor) a#b\n```\n#fenced\n```\n"), 0)
    assert s.tags == ("one", "two/sub")


def test_block_ids_and_comments() -> None:
    s = scan(lines("para one ^abc-1\n\n%%\n#hidden [[x]]\n%%\n\nafter\n"), 0)
    assert s.block_ids == ("abc-1",)
    assert "hidden" not in s.tags
    assert [b.text for b in s.blocks] == ["para one ^abc-1", "after"]


def test_code_comments_and_math_hide_links_and_tags() -> None:
    s = scan("a `[[x]]` <!-- [[y]] --> %%[[z]] #c%% $[[m]]$ [[w]] #t\n\n$$\n[[n]]\n$$\n")
    assert [link.target for link in s.links] == ["w"]
    assert s.tags == ("t",)


def test_the_first_to_begin_of_code_and_comment_wins() -> None:
    # CommonMark's rule for code spans and raw HTML, which Obsidian's comments follow: a code
    # span shows its `%%` literally, and a comment hides the backticks inside it.
    s = scan("Use `%%x%%` to hide, %%a `b` [[c]] #d%% [[e]] #f `g %%` [[h]] #i%%\n")
    assert [b.text for b in s.blocks] == ["Use `%%x%%` to hide,  [[e]] #f `g %%` [[h]] #i%%"]
    assert [link.target for link in s.links] == ["e", "h"]
    assert s.tags == ("f", "i")


def test_heading_text_is_what_a_reader_sees() -> None:
    s = scan("# foo *bar* \\*baz\\* `code` [[Note|shown]]\n\nPara\n---\n")
    assert [(h.level, h.text, h.line) for h in s.headings] == [
        (1, "foo bar *baz* code shown", 1), (2, "Para", 3)
    ]  # fmt: skip


def test_obsidian_extensions() -> None:
    text = (
        "> [!note] Title [[InCallout]]\n> body #calltag\n\n| a | b |\n|---|---|\n"
        "| [[Cell\\|alias]] | ~~x~~ ==hl== |\n\n- [ ] task [[Task]]\n\nNote[^1].\n\n"
        "[^1]: Footnote [[Foot]]\n"
    )
    s = scan(text)
    assert [(x.target, x.line) for x in s.links] == [
        ("InCallout", 1), ("Cell", 6), ("Task", 8), ("Foot", 12)
    ]  # fmt: skip
    assert s.tags == ("calltag",)


def test_line_numbers_survive_crlf_and_unicode_separators() -> None:
    note = parse_note("n.md", "---\r\ntitle: x\r\n---\r\n# H\u2028still\r\n\r\n[[A]]\r\n", "0")
    assert [h.line for h in note.headings] == [4]
    assert [x.line for x in note.links] == [6]
    assert note.line_count == 6


def test_slug_ignores_case_and_punctuation() -> None:
    assert slugify("Token Lifetime: v2!") == slugify("token lifetime v2")


def test_an_editor_document_is_parsed_once_for_its_links_headings_and_mentions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The language server and the editor services ask one document for its links, its
    headings and its unlinked mentions in turn: one parse serves all three."""
    from sidecar.core import link_spans, markdown, mentions

    markdown.parse_body_cached.cache_clear()
    calls: list[str] = []
    parse = markdown._PARSER.parse
    monkeypatch.setattr(markdown._PARSER, "parse", lambda text: calls.append(text) or parse(text))
    text = "---\ntitle: T\n---\n# Plan\n\nSee [[Alpha]] and [b](Beta.md), Gamma here.\n"
    lines = link_spans.split_lines(text)
    assert [link.name.text for link in link_spans.links_in(lines)] == ["Alpha", "Beta.md"]
    assert [h.text for h in link_spans.headings(lines)] == ["Plan"]
    pattern = mentions.name_pattern(["Gamma"])
    assert pattern is not None
    assert [m.line for m in mentions.find_mentions(text, pattern)] == [6]
    assert len(calls) == 1
