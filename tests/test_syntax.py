"""The parser's shortcuts change nothing: marko with them renders exactly what marko renders
without them, on every CommonMark spec example and the notes of the three real vaults (with GFM)."""

from __future__ import annotations

import pytest
from marko import Markdown
from marko.ext.gfm import GFM
from marko.helpers import MarkoExtension

from sidecar.core import syntax
from tests.commonmark import examples
from tests.conftest import corpus


def _texts(vaults: bool) -> list[str]:
    texts = [ex.markdown for ex in examples()]
    for name in ("dendron-site", "obsidian-tasks-docs", "kepano-obsidian") if vaults else ():
        notes = sorted(corpus(name).rglob("*.md"))
        step = 2 if name == "dendron-site" else 1  # half of dendron: stock marko takes ~10 s
        texts += [p.read_text("utf-8", "replace") for p in notes[::step]]
    return texts


@pytest.mark.parametrize(
    "gfm",
    [pytest.param(False, id="commonmark"), pytest.param(True, id="gfm", marks=pytest.mark.e2e)],
)  # the gfm case also reads the three real vaults
def test_fast_parser_renders_what_marko_renders(gfm: bool) -> None:
    elements = [*syntax.FAST_COMMONMARK, *(syntax.FAST_GFM if gfm else ())]
    fast = Markdown(
        parser=syntax.FastParser,
        extensions=[*([GFM] if gfm else []), MarkoExtension(elements=elements)],
    )
    stock = Markdown(extensions=[GFM] if gfm else [])
    differ = [text for text in _texts(gfm) if fast.convert(text) != stock.convert(text)]
    assert differ == []


@pytest.mark.e2e  # every note of the three real vaults
def test_text_only_paragraphs_read_as_parsed_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index's parser leaves paragraphs without links, tags, HTML or code unparsed; what
    the index reads (headings, blocks, links and their context, tags, ids, hidden spans) is
    what the full inline parse gives, on every spec example and every note of the vaults."""
    from sidecar.core import markdown

    texts = [markdown.normalise(t) for t in _texts(True)]
    fast = [markdown.parse_body(t) for t in texts]
    monkeypatch.setattr(markdown, "_PARSER", syntax.new_parser(text_only_plain=False))
    full = [markdown.parse_body(t) for t in texts]
    assert [i for i, (a, b) in enumerate(zip(fast, full, strict=True)) if a != b] == []


def test_callouts_are_read_as_callouts() -> None:
    """A shortcut takes the place of the element it wraps: the callout's, not the plain
    quote's (marko names an override after its direct base only)."""
    from sidecar.core import markdown

    quote = markdown._PARSER.parse("> [!Warning]- Mind the gap\n> body [[Link]]\n").children[0]
    assert isinstance(quote, syntax.Callout)
    assert (quote.kind, quote.title) == ("warning", "Mind the gap")
