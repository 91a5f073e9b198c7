"""Compare what the index reads in a note with what a CommonMark renderer shows.

For each example of a CommonMark spec file (``tests/spec/commonmark-0.31.2.txt``, CC-BY-SA 4.0,
see ``tests/spec/NOTICE.md``), the reference HTML gives the headings (level and plain text) and
the set of relative link and image destinations (what could name a note or an attachment: no
URL scheme, not a bare ``#fragment``). ``parse_note`` on the example's Markdown must give the
same. Run it as a script to print the figures and every miss:

    python -m tests.commonmark [SPEC_FILE]
"""

from __future__ import annotations

import html
import re
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

from sidecar.core.note import parse_note

SPEC = Path(__file__).with_name("spec") / "commonmark-0.31.2.txt"
_EXAMPLE = re.compile(r"^`{32} example[^\n]*\n([\s\S]*?)^\.\n([\s\S]*?)^`{32}$", re.M)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True, slots=True)
class Example:
    number: int
    markdown: str
    html: str


@dataclass(frozen=True, slots=True)
class Seen:
    headings: tuple[tuple[int, str], ...]
    destinations: frozenset[str]


def examples(spec: Path = SPEC) -> list[Example]:
    text = spec.read_text("utf-8")
    return [
        Example(i, md.replace("→", "\t"), out.replace("→", "\t"))
        for i, (md, out) in enumerate(_EXAMPLE.findall(text), start=1)
    ]


def destination(url: str) -> str | None:
    """The note or file part of a destination as the index keeps it, or None for a URL."""
    if not url or url.startswith(("#", "//")) or _SCHEME.match(url):
        return None
    path = unquote(url.split("#", 1)[0].split("?", 1)[0]).strip()
    return path or None


class _Reference(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.headings: list[tuple[int, str]] = []
        self.destinations: set[str] = set()
        self._heading: tuple[int, list[str]] | None = None
        self._raw_depth = 0  # inside <code>/<pre> text is literal, never parsed as Markdown

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag in ("a", "img"):
            found = destination(values.get("href" if tag == "a" else "src") or "")
            if found is not None:
                self.destinations.add(found)
        if tag == "img" and self._heading is not None:
            self._heading[1].append(values.get("alt") or "")
        if re.fullmatch(r"h[1-6]", tag):
            self._heading = (int(tag[1]), [])

    def handle_endtag(self, tag: str) -> None:
        if re.fullmatch(r"h[1-6]", tag) and self._heading is not None:
            level, parts = self._heading
            self.headings.append((level, " ".join("".join(parts).split())))
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading[1].append(data)


def reference(example: Example) -> Seen:
    parser = _Reference()
    parser.feed(example.html)
    parser.close()
    return Seen(tuple(parser.headings), frozenset(parser.destinations))


def ours(example: Example) -> Seen:
    note = parse_note(f"spec/example-{example.number}.md", example.markdown, "0")
    heads = tuple((h.level, " ".join(html.unescape(h.text).split())) for h in note.headings)
    dests = {link.target for link in note.links if link.markdown}
    return Seen(heads, frozenset(d for d in dests if d))


@dataclass(frozen=True, slots=True)
class Figures:
    """``headings``: examples whose headings agree, over every example (none on both sides
    agrees). ``links``: examples whose destination sets agree, over the examples where either
    side has one (a link the parser invents counts against it)."""

    examples: int
    heading_misses: tuple[int, ...]
    heading_examples: int  # examples where either side has a heading
    link_examples: int
    link_misses: tuple[int, ...]
    reference_link_examples: int  # examples where the reference has a destination

    @property
    def headings(self) -> float:
        return 1 - len(self.heading_misses) / self.examples

    @property
    def headings_where_present(self) -> float:
        return 1 - len(self.heading_misses) / self.heading_examples

    @property
    def links(self) -> float:
        return 1 - len(self.link_misses) / self.link_examples


def measure(spec: Path = SPEC) -> Figures:
    h_total = l_total = l_ref = 0
    h_miss: list[int] = []
    l_miss: list[int] = []
    all_examples = examples(spec)
    for ex in all_examples:
        want, got = reference(ex), ours(ex)
        if want.headings or got.headings:
            h_total += 1
        if want.headings != got.headings:
            h_miss.append(ex.number)
        if want.destinations or got.destinations:
            l_total += 1
        l_ref += bool(want.destinations)
        if want.destinations != got.destinations:
            l_miss.append(ex.number)
    return Figures(len(all_examples), tuple(h_miss), h_total, l_total, tuple(l_miss), l_ref)


def main() -> None:
    spec = Path(sys.argv[1]) if len(sys.argv) > 1 else SPEC
    fig = measure(spec)
    by_number = {ex.number: ex for ex in examples(spec)}
    h, n = len(fig.heading_misses), fig.heading_examples
    print(
        f"headings: {fig.examples - h}/{fig.examples} examples agree = {fig.headings:.3f}; "
        f"{n - h}/{n} = {fig.headings_where_present:.3f} of those with a heading"
    )
    print(
        f"links:    {fig.link_examples - len(fig.link_misses)}/{fig.link_examples} = "
        f"{fig.links:.3f} of the examples with a relative destination on either side "
        f"({fig.reference_link_examples} in the reference)"
    )
    for kind, misses in (("heading", fig.heading_misses), ("link", fig.link_misses)):
        for n in misses:
            ex = by_number[n]
            want, got = reference(ex), ours(ex)
            shown = (want.headings, got.headings) if kind == "heading" else (
                sorted(want.destinations), sorted(got.destinations))  # fmt: skip
            print(f"{kind} miss {n}: {ex.markdown!r}\n    want {shown[0]}\n    got  {shown[1]}")


if __name__ == "__main__":
    main()
