"""Conformance: the index reads every CommonMark spec example as the reference HTML shows it.

Headings (level and text) and the set of relative link and image destinations, per example
(``tests/commonmark.py``). ``SIDECAR_COMMONMARK_SPEC`` points the thresholds at another spec
file; the list of known misses belongs to the vendored 0.31.2 spec.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.commonmark import SPEC, examples, measure, ours, reference

OTHER_SPEC = os.environ.get("SIDECAR_COMMONMARK_SPEC")
SPEC_FILE = Path(OTHER_SPEC) if OTHER_SPEC else SPEC

# Every example where the index deliberately reads the note as Obsidian does, not as the spec.
KNOWN_HEADING_MISSES = {
    96: "a note starting with a '---' line and closed by another has properties (frontmatter) "
    "there, in Obsidian; the spec reads a thematic break and a setext heading",
}
KNOWN_LINK_MISSES = {
    559: "'[[*foo* bar]]' is a wikilink in Obsidian; the spec reads '[' and a reference link",
}


@pytest.fixture(scope="module")
def figures():  # type: ignore[no-untyped-def]
    return measure(SPEC_FILE)


def test_spec_file_has_every_example() -> None:
    assert len(examples(SPEC_FILE)) >= 600


def test_headings_agree_with_the_reference(figures) -> None:  # type: ignore[no-untyped-def]
    assert figures.headings >= 0.99, figures.heading_misses


def test_link_destinations_agree_with_the_reference(figures) -> None:  # type: ignore[no-untyped-def]
    assert figures.links >= 0.95, figures.link_misses


@pytest.mark.skipif(OTHER_SPEC is not None, reason="the known misses are the vendored spec's")
def test_every_remaining_miss_is_known(figures) -> None:  # type: ignore[no-untyped-def]
    assert dict.fromkeys(figures.heading_misses) == dict.fromkeys(KNOWN_HEADING_MISSES)
    assert dict.fromkeys(figures.link_misses) == dict.fromkeys(KNOWN_LINK_MISSES)


def test_reference_reading_of_known_examples() -> None:
    """The measure itself: reference links and headings of a few examples read as written."""
    by_number = {ex.number: ex for ex in examples(SPEC)}
    assert reference(by_number[62]).headings == ((1, "foo"), (2, "foo"), (3, "foo"),
                                                  (4, "foo"), (5, "foo"), (6, "foo"))  # fmt: skip
    assert reference(by_number[482]).destinations == {"/uri"}
    assert ours(by_number[482]).destinations == {"/uri"}
