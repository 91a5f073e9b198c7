"""Property and fuzz tests over the parsers: frontmatter, Markdown blocks and links, link
resolution, request-path confinement. Whatever a file holds, parsing returns (never raises),
every line number points into the note, and the frontmatter is plain JSON data.

Short in CI (profile ``ci``); ``HYPOTHESIS_PROFILE=nightly pytest tests/test_fuzz_parsers.py``
runs 100x more examples (the nightly target in ``.ci/nightly``).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sidecar.api.registry import confined
from sidecar.core.frontmatter import load_frontmatter
from sidecar.core.model import LinkRef
from sidecar.core.note import parse_note
from sidecar.core.resolve import Catalog, NoteKey
from sidecar.errors import PathOutsideVault
from sidecar.store.vaultfs import Vault

# Pieces that Markdown and YAML parsers trip on, mixed with arbitrary text.
PIECES = st.sampled_from([
    "---\n", "...\n", "\ufeff", "\r\n", "\n", "\t", "  ", "# ", "## ", "- ", "1. ", "> ", "```",
    "~~~", "%%", "<!--", "-->", "[[", "]]", "![[", "|", "#", "^", "[", "](", ")", "`", "\\",
    "title: ", "tags: [", "aliases: ", "relations: {supersedes: [", "&a ", "*a ", "!!python/x ",
    "{{date}}", "é", "e\u0301", "\u202e", "\x00", "\ud7ff", "../", "/", ":", "? ", "=", "===\n",
])  # fmt: skip
MARKDOWN = st.lists(st.one_of(PIECES, st.text(max_size=12)), max_size=80).map("".join)


def _check(text: str) -> None:
    note = parse_note("folder/note.md", text, "h")
    lines = len(text.splitlines()) or 1
    json.dumps(note.frontmatter)  # plain JSON data, whatever the YAML held
    for link in note.links:
        assert 0 <= link.line <= lines and link.target.strip()
    for chunk in note.chunks:
        assert 0 <= chunk.start_line <= chunk.end_line <= lines
    assert len({c.chunk_id for c in note.chunks}) == len(note.chunks)


@given(MARKDOWN)
def test_markdown_pieces_never_break_the_parser(text: str) -> None:
    _check(text)


@given(st.text())
def test_arbitrary_text_never_breaks_the_parser(text: str) -> None:
    _check(text)


@given(st.binary())
def test_arbitrary_bytes_decoded_as_the_vault_does(data: bytes) -> None:
    _check(data.decode("utf-8", "replace"))


YAML_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20), PIECES),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20,
)  # fmt: skip


@given(st.dictionaries(st.text(max_size=10), YAML_VALUES, max_size=6), MARKDOWN)
def test_frontmatter_of_any_shape(data: dict[str, object], body: str) -> None:
    yaml_text = json.dumps(data, ensure_ascii=False)  # JSON is YAML flow syntax
    fm = load_frontmatter(f"---\n{yaml_text}\n---\n{body}".splitlines(keepends=True))
    json.dumps(fm.data)
    assert fm.error is None or isinstance(fm.error, str)


NAMES = st.lists(st.one_of(PIECES, st.text(min_size=1, max_size=6)), min_size=1, max_size=6).map(
    "".join
)


@given(st.lists(NAMES, min_size=1, max_size=8), NAMES, st.booleans())
def test_resolution_returns_a_known_note_or_says_why(
    names: list[str], target: str, markdown: bool
) -> None:
    paths = sorted({f"{n.strip('/').replace(chr(0), '')}.md" for n in names if n.strip("/")})
    catalog = Catalog.build(NoteKey(p, (p[:3],)) for p in paths)
    link = LinkRef(target, "", "link", target, "", not markdown, False, markdown, 1, "")
    res = catalog.resolve(link, paths[0] if paths else "x.md")
    if res.state in ("valid", "self"):
        assert res.target in paths or res.target == (paths[0] if paths else "x.md")
    else:
        assert res.target is None
    if res.state == "ambiguous":
        assert set(res.candidates) <= set(paths)


VAULT = Vault(Path(tempfile.mkdtemp(prefix="fuzzvault")))  # empty: no symlinks inside


@given(st.text(max_size=40))
def test_confined_paths_stay_inside_the_vault(rel: str) -> None:
    """What the request check lets through, the store's check agrees is inside."""
    try:
        confined(rel)
    except PathOutsideVault:
        return  # the request check may be stricter (a leading backslash), never looser
    joined = os.path.normpath(os.path.join(VAULT.root, rel))
    assert joined == str(VAULT.root) or joined.startswith(str(VAULT.root) + os.sep), rel
    assert VAULT.inside(rel) == bool(rel)
