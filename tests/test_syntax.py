"""The parser's shortcuts change nothing: marko with them renders exactly what marko renders
without them, on every CommonMark spec example and the notes of the three real vaults (with GFM)."""

from __future__ import annotations

import random
import signal

import pytest
from marko import Markdown
from marko.ext.gfm import GFM
from marko.helpers import MarkoExtension

from sidecar.core import syntax
from sidecar.core.note import parse_note
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


def _tree(
    el: object, out: list[tuple[int, str, str]], depth: int = 0
) -> list[tuple[int, str, str]]:
    """Every element of marko's tree with all its attributes (source spans, prefixes,
    tightness, inline offsets), in order."""
    fields = {k: getattr(v, "_runs", v) for k, v in vars(el).items() if k != "children"}
    out.append((depth, type(el).__name__, repr(sorted(fields.items()))))
    children = getattr(el, "children", None)
    for child in children if isinstance(children, list) else ():
        _tree(child, out, depth + 1)
    if not isinstance(children, list):
        out.append((depth + 1, "text", repr(children)))
    return out


# Lines a list is made of, and the lines that end one, change one or make marko read it
# another way: bullets and numbers, indents, tabs, blank lines, breaks of every kind.
_PIECES = ["- ", "* ", "+ ", "1. ", "2. ", "1) ", "10. ", "-  ", "-    ", "-     ", "-\t", " ",
           "  ", "    ", "\t", "a", "[[x|y]]", "[ ] t", "[x] t", "[a]: /u", "[a](b)", "[^1]: n",
           "**b**", "* *", "_i_", "___", "#", "# h", "#tag", "`c`", "```", "~~~", "~~s~~",
           "$m$", "$$", "%%", "==h==", "===", "---", ":--|--", "a | b", "|", "<div>", "> q",
           "1.5", "\u00a0", "\\", "x  ", "[[x]](u)", "[[x]][a]", "[[x]][]", "[[a*b]]",
           "[[a_b_]]", "[[c`]]", "[[a\\]]", "[[[x]]]", "]]", "[x|y]: /d", "![[e]](u)", "!", "[r\\[]: /u", "[x\\]]: /u", "[x [y]: /u",
           ""]  # fmt: skip
_WORDS = ["alpha", "beta", "[[x|y]]", "[a](b)", "**b**", "`c`", "d", "#tag", "x | y", "![[e]]",
          "[[x]]", "*a", "[b"]  # fmt: skip


def _wikilinks_among_links() -> list[str]:
    """Wikilinks where marko's link search could find a link in their brackets: followed by a
    link's destination or label, named by a definition, holding marks, in another link's text
    or in emphasis."""
    wikis = ["[[x]]", "![[x]]", "[[x|y]]", "[[a*b]]", "[[a_b_]]", "[[c`]]", "[[a\\]]", "[[[x]]]"]
    after = ["", "(u)", "[a]", "[]", "]", "](w)"]
    frames = [
        "{}",
        "[p {} q](v)",
        "[p {} q][a]",
        "*p {} q*",
        "_p {} q_",
        "`p {} q`",
        "[p {} q`](v)",
        "![p {}](v)",
        "[" * 63 + "{}](v)",
    ]
    defs = ["", "\n\n[a]: /u", "\n\n[x|y]: /d", "\n\n[x]: /e", "\n\n[[x]]: /f"]
    return [frame.format(wiki + tail) + d
            for wiki in wikis for tail in after for frame in frames for d in defs]  # fmt: skip


def _fences() -> list[str]:
    """Fenced code as ``syntax._fenced_code`` and marko read it: fences of both kinds and
    lengths, indented, with info strings, closed or not, in a list or a quote."""
    opens = ["```", "~~~", "````", " ```", "   ~~~ py x", "```a`", "```py {x}"]
    bodies = ["", "a\n", " a\n  b\n", "\tc\n  \td\n", "\n\n", "```x\n", "~~~~ \n"]
    closes = ["```", "~~~", "````", "    ```", " ``` ", "``", ""]
    return [f"{where}{first}\n{body}{close}{after}"
            for first in opens for body in bodies for close in closes
            for where, after in (("", ""), ("", "\nz\n"), ("- ", "\n"), ("> ", ""))]  # fmt: skip


# Link destinations that marko's character loop reads in every way it can: plain, with
# parentheses (balanced or not), escapes, spaces, titles, ``<...>``, controls, a line break.
_DESTS = ["u", "/a/b?c=1#d", "a(b)c", "a(b", "a)b", "a\\)b", "\\(", "<u>", "<u v>", "u \"t\"",
          "u 't'", "u (t)", "u\nv", " u", "u ", "\nu", "u\x01", "u\x7f", "u\u00a0v", "u\tv",
          "", "é/ü", "u\rv", "[x]", "u<v", "u>v", "*u*", "`u`"]  # fmt: skip


def _links() -> list[str]:
    """``[text](dest)`` and ``![alt](dest)`` with each destination, in frames that change what
    the link search sees around them (``syntax._plain_dest``)."""
    frames = ["{}", "a {} b", "*{}*", "[x {}](v)", "{}(w)", "{}x", "- {}\n- [y](z)"]
    links = [f"{bang}[t]({dest}{close})" for bang in ("", "!") for dest in _DESTS
             for close in ("", ")")]  # fmt: skip
    return [frame.format(link) for link in links for frame in frames]


def _list_like(rng: random.Random) -> str:
    def text() -> str:
        if rng.random() < 0.75:
            return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))
        return "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 4)))

    lines = []
    lists = rng.random()  # how much of the document is list items
    for _ in range(rng.randint(1, 12)):
        r = rng.random()
        if r < 0.15:
            lines.append(rng.choice(["", "", "  ", "    ", "\t"]))
        elif r < 0.15 + lists * 0.75:
            indent = " " * rng.choice([0, 0, 0, 1, 2, 2, 3, 4, 5, 6, 8])
            bullet = rng.choice(["- ", "- ", "* ", "+ ", "1. ", "2. ", "1) ", "-  ", "-   "])
            lines.append(indent + bullet + text())
        else:
            lines.append(text())
    return "\n".join(lines) + rng.choice(["", "\n", "\n\n", "\n  \n"])


# Each builds or skips what marko would, only sooner; off (returning None), marko does it.
SHORT_WAYS = ("_simple_list", "_plain_block", "_past_wikilink", "_fenced_code", "_plain_dest")


def differing(parser: object, texts: list[str]) -> tuple[list[str], dict[str, int]]:
    """The texts whose tree (``_tree``) differs with the short ways on and off, and how often
    each way was taken."""
    ways = {name: getattr(syntax, name) for name in SHORT_WAYS}
    taken = dict.fromkeys(ways, 0)

    def counted(name: str) -> object:
        def way(*args: object) -> object:
            out = ways[name](*args)
            taken[name] += out is not None
            return out

        return way

    differ = []
    try:
        for text in texts:
            for name in ways:
                setattr(syntax, name, counted(name))
            fast = _tree(parser.parse(text), [])  # type: ignore[attr-defined]
            for name in ways:
                setattr(syntax, name, lambda *args: None)
            if _tree(parser.parse(text), []) != fast:  # type: ignore[attr-defined]
                differ.append(text)
    finally:
        for name, way in ways.items():
            setattr(syntax, name, way)
    return differ, taken


@pytest.mark.parametrize(
    "vaults",
    [pytest.param(False, id="generated"), pytest.param(True, id="vaults", marks=pytest.mark.e2e)],
)
def test_the_short_ways_build_what_marko_builds(vaults: bool) -> None:
    """``syntax._simple_list``, ``syntax._plain_block`` and ``syntax._fenced_code`` build
    simple lists, blank lines, paragraphs and fenced code without marko's per-line machinery,
    ``syntax._past_wikilink`` passes over a wikilink's brackets in the link search and
    ``syntax._plain_dest`` reads a plain link destination; the tree, every attribute of every element, is
    the one marko builds without them: on the spec examples and documents made up at random
    (or the three vaults)."""
    rng = random.Random(21)
    texts = _texts(True) if vaults else [ex.markdown for ex in examples()]
    made = [*_wikilinks_among_links(), *_fences(), *_links()]
    texts += [] if vaults else [*made, *(_list_like(rng) for _ in range(1500))]
    differ, taken = differing(syntax.new_parser(text_only_plain=True), texts)
    assert differ == []
    assert min(taken.values()) > 300  # every way was taken


def test_a_definition_whose_label_holds_an_escaped_bracket_is_one_in_a_list_item() -> None:
    """``[ref\\[]: /uri`` is a link reference definition (a label may hold an escaped
    bracket), in a list item too: the simple list took that item for a paragraph, and the
    reference to it resolved to nothing."""
    text = "- a\n- [ref\\[]: /uri\n\n[x][ref\\[]\n"
    assert [link.target for link in parse_note("n.md", text, "").links] == ["/uri"]


@pytest.mark.parametrize(
    "text",
    [
        "+\n\t[^1]:x",
        "- a\n+\n\t[^1]: note [[Link]]\n\nafter [[Other]]\n",
        "-\t  > q\n",
        "- a\n-\t  > q [[Link]]\n\nafter [[Other]]\n",
    ],
)
def test_a_block_that_consumes_nothing_does_not_hang_the_parse(text: str) -> None:
    """marko (2.2.4, with its footnote extension) parses an empty list item followed by a
    tab-indented footnote definition forever: the definition's prefix, built from the tab's
    first column only, never matches its own line, so it consumes nothing and is matched
    again, its copies filling memory. Stock marko does the same with a quote after a tab
    in a list item (``-\t  > q``: the item, holding nothing, is matched again, its copies
    filled 7.8 GB in 10 minutes). A note like that must not hang the index, and the line
    is still read: its links are links."""

    def hung(signum: int, frame: object) -> None:
        raise TimeoutError("the parse did not end")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    try:
        note = parse_note("n.md", text, "")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    targets = {link.target for link in note.links}
    assert "Other" in targets or "\n\n" not in text
    assert "Link" in targets or "> q [[Link]]" not in text


def test_a_plain_destination_is_read_as_marko_reads_it() -> None:
    """``syntax._plain_dest`` gives what marko's ``_expect_inline_link`` gives, or None."""
    from marko import inline_parser

    taken = 0
    for dest in _DESTS:
        for text in (f"]({dest})", f"]({dest}) x", f"]({dest}", f"]({dest}))"):
            fast = syntax._plain_dest(text, 1)
            if fast is not None:
                taken += 1
                assert fast == inline_parser._expect_inline_link(text, 1), text
    assert taken >= 20
