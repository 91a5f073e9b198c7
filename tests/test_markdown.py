from sidecar.core.markdown import mask_inline_code, scan, slugify


def lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


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


def test_mask_keeps_offsets() -> None:
    text = "a `[[x]]` <!-- [[y]] --> %%[[z]]%% [[w]]"
    masked = mask_inline_code(text)
    assert len(masked) == len(text)
    assert "[[w]]" in masked and "[[x]]" not in masked and "[[y]]" not in masked
    assert "[[z]]" not in masked


def test_slug_ignores_case_and_punctuation() -> None:
    assert slugify("Token Lifetime: v2!") == slugify("token lifetime v2")
