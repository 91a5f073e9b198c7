from sidecar.core.chunks import ChunkOptions, chunk_hash
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
