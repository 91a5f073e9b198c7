from sidecar.core.chunks import ChunkOptions, chunk_hash
from sidecar.core.markdown import parse_body
from sidecar.core.note import parse_note


def test_chunks_follow_headings_with_breadcrumbs_and_lines() -> None:
    text = "---\ntitle: T\n---\n# A\nalpha\n\n## B\nbeta one\n\nbeta two\n# C\ngamma\n"
    note = parse_note("n.md", text, "h")
    got = [(c.chunk_id, c.heading, c.start_line, c.end_line, c.text) for c in note.chunks]
    assert got == [
        ("n.md#0", "A", 5, 5, "alpha"),
        ("n.md#1", "A > B", 8, 10, "beta one\n\nbeta two"),
        ("n.md#2", "C", 12, 12, "gamma"),
        ("n.md#properties", "", 1, 3, "n"),  # the file name: it is not the title
    ]


def test_long_sections_split_under_the_limit_with_overlap() -> None:
    sentence = "This sentence is about session storage and expiry. "
    text = "# Long\n" + sentence * 80 + "\n"
    note = parse_note("n.md", text, "h", ChunkOptions(max_chars=300, overlap_chars=80))
    assert len(note.chunks) > 10
    assert all(len(c.text) <= 300 for c in note.chunks)
    assert note.chunks[1].text.startswith("This sentence")
    words = sum(c.text.count("expiry") for c in note.chunks)
    assert words >= 80  # nothing lost (overlap may repeat a sentence)


def test_hash_changes_with_text_and_context_only() -> None:
    assert chunk_hash("T", "A", "x") == chunk_hash("T", "A", "x")
    assert chunk_hash("T", "A", "x") != chunk_hash("T", "A", "y")
    assert chunk_hash("T", "A", "x") != chunk_hash("T", "B", "x")


def test_title_from_frontmatter_else_file_name() -> None:
    assert parse_note("dir/My Note.md", "# Heading\n", "h").title == "My Note"
    assert parse_note("x.md", "---\ntitle: Given\n---\n", "h").title == "Given"


def _long_list_note() -> str:
    words = "with enough words in it to make the whole list longer than one chunk may be"
    items = "".join(f"{n}. Step {n} {words}.\n   - a detail of step {n}\n\n" for n in range(1, 6))
    return "# Steps\nHere is how the steps go:\n\n" + items


def test_a_long_list_splits_between_its_items_and_keeps_its_introduction() -> None:
    """A list too long for one chunk is cut where an item starts, as the blank-line scanner cut
    a loose list: its introduction stays with the first items, and no item's sub-item lands in
    another chunk (marko reads the list as one block; cut at its lines, the introduction was a
    chunk alone and 'a detail of step 3' went without its step)."""
    note = parse_note("n.md", _long_list_note(), "h", ChunkOptions(max_chars=320, overlap_chars=0))
    texts = [c.text for c in note.chunks if c.chunk_id != "n.md#properties"]
    assert texts[0].startswith("Here is how the steps go:\n\n1. Step 1")
    for n in range(1, 6):
        holding = [t for t in texts if f"Step {n} " in t]
        assert holding and all(f"a detail of step {n}" in t for t in holding)
    assert all(len(t) <= 320 for t in texts)


def test_a_long_tight_list_is_cut_between_items_kept_as_written() -> None:
    items = "".join(f"- item {n} of a tight list\n  - its detail {n}\n" for n in range(1, 13))
    note = parse_note("n.md", "# L\nIntro:\n\n" + items, "h", ChunkOptions(200, 0))
    texts = [c.text for c in note.chunks if c.chunk_id != "n.md#properties"]
    assert texts[0].startswith("Intro:\n\n- item 1 of a tight list\n  - its detail 1\n- item 2")
    assert all(t.startswith("- item") for t in texts[1:])
    assert sum(t.count("- item ") for t in texts) == 12  # no overlap asked for: none repeated
    for n in range(1, 13):
        assert [f"- item {n} of a tight list\n  - its detail {n}" in t for t in texts].count(
            True
        ) == 1


def test_a_list_that_fits_stays_one_piece() -> None:
    text = "# L\nIntro.\n\n- a\n- b\n- c\n"
    note = parse_note("n.md", text, "h", ChunkOptions(12, 0))
    assert [c.text for c in note.chunks][:2] == ["Intro.", "- a\n- b\n- c"]


def test_comments_are_no_chunk_text_as_no_reader_sees_them() -> None:
    """Obsidian's reading view shows neither an HTML comment nor a ``%%`` comment, inline or
    as a block, at the top level or inside a list or quote: their words are in no chunk, and
    a block holding nothing else is no chunk. The lines stay the note's."""
    text = (
        "# T\n"  # 1
        "Intro <!-- hidden one --> after, and %%hidden two%% end.\n"  # 2
        "\n"
        "<!-- placeholder to force\n"  # 4
        "a blank line -->\n"
        "\n"
        "%%hidden three%%\n"  # 7
        "\n"
        "<!-- hidden four -->\n"  # 9
        "<div>shown <!-- hidden five --></div>\n"  # 10
        "\n"
        "- item one <!-- hidden six -->\n"  # 12
        "- item two %%hidden seven%%\n"
        "  %%\n"
        "  hidden eight\n"
        "  %%\n"
        "- item three\n"  # 17
        "\n"
        "> quoted <!-- hidden\n"  # 19
        "> nine -->\n"
        "\n"
        "`<!-- shown code -->` stays\n"  # 22
    )
    note = parse_note("n.md", text, "h")
    chunks = [c for c in note.chunks if c.chunk_id != "n.md#properties"]
    body = "\n".join(c.text for c in chunks)
    assert (
        "hidden" not in body
        and "placeholder" not in body
        and "<!--" not in body.replace("`<!-- shown code -->`", "")
    )
    for shown in ("Intro", "after, and", "end.", "shown", "item one", "item two",
                  "item three", "quoted", "`<!-- shown code -->` stays"):  # fmt: skip
        assert shown in body
    blocks = parse_body(text).blocks
    assert [(b.text.split()[0], b.start_line, b.end_line) for b in blocks] == [
        ("Intro", 2, 2), ("shown", 10, 10), ("-", 12, 17), (">", 19, 19), ("`<!--", 22, 22)
    ]  # fmt: skip
    assert blocks[2].text.count("\n") == 17 - 12


def test_a_long_list_with_comments_is_still_cut_between_its_items() -> None:
    items = "".join(f"- item {n} %%a comment of item {n}%%\n  - its detail {n}\n" for n in range(9))
    note = parse_note("n.md", "# L\n" + items, "h", ChunkOptions(120, 0))
    texts = [c.text for c in note.chunks if c.chunk_id != "n.md#properties"]
    assert all(t.startswith("- item") and "comment" not in t for t in texts)
    for n in range(9):
        assert sum(f"- item {n} - its detail {n}" in " ".join(t.split()) for t in texts) == 1


def test_html_markup_is_no_chunk_text_but_the_text_between_tags_is() -> None:
    """A reader sees what raw HTML shows, not its tags and attributes (on obsidian-tasks-docs,
    ``<span class="related-pages">#feature/dates</span>`` made 'pages' a word of ~90 notes)."""
    text = (
        "# T\n"
        'Press <kbd>Ctrl</kbd> now<br>next <span class="related-pages">#feature/x</span>, '
        "`<b>code</b>` stays.\n"
        "\n"
        '<div align="center">\n'
        '<img src="a.png" alt="x > y">\n'
        'Shown <a href="https://example.com/p">link words</a>\n'
        "</div>\n"
    )
    note = parse_note("n.md", text, "h")
    got = [c.text for c in note.chunks if c.chunk_id != "n.md#properties"]
    assert got == ["Press Ctrl now next #feature/x, `<b>code</b>` stays.\n\nShown link words"]
    assert [b.start_line for b in parse_body(text).blocks] == [2, 6]
    assert note.tags == ("feature/x",)
    assert [link.target for link in note.links] == ["a.png"]  # the HTML is still read for links


def test_a_section_of_nothing_but_an_embed_joins_the_next_chunk() -> None:
    """dendron-site's seed-bank note has a Quickstart section holding only
    ``![[dendron.topic.seed-bank.quickstart]]``: alone, that chunk (the title, the heading and
    the embedded note's path) ranked above the quickstart note itself in BM25 for "seed bank
    quickstart". It is the start of the chunk after it, which keeps its own heading."""
    text = (
        "# Seed Bank\n## Quickstart\n![[seed-bank.quickstart]]\n\n## Concepts\nA seed is a vault.\n"
    )
    note = parse_note("seed-bank.md", text, "h")
    got = [(c.chunk_id, c.heading, c.start_line, c.end_line, c.text) for c in note.chunks]
    assert got == [
        (
            "seed-bank.md#0",
            "Seed Bank > Concepts",
            3,
            6,
            "![[seed-bank.quickstart]]\n\nA seed is a vault.",
        ),
    ]


def test_embeds_that_end_a_note_join_the_chunk_before_and_a_note_of_one_embed_keeps_it() -> None:
    text = "# A\nalpha\n\n# B\n![[x]] ![[y|why]]\n![[z#part]]\n"
    got = [(c.heading, c.text) for c in parse_note("T.md", text, "h").chunks]
    assert got == [("A", "alpha\n\n![[x]] ![[y|why]]\n![[z#part]]")]
    alone = parse_note("Albums.md", "![[Albums.base]]\n", "h").chunks
    assert [(c.chunk_id, c.text) for c in alone] == [("Albums.md#0", "![[Albums.base]]")]


def test_a_tag_line_or_an_embed_among_words_is_no_chunk_apart() -> None:
    text = "# A\n#feature/filters\n\n# B\nSee ![[x]] for more.\n"
    got = [c.text for c in parse_note("T.md", text, "h").chunks]
    assert got == ["#feature/filters", "See ![[x]] for more."]
