"""Which notes a piece of text names: note titles and aliases found as whole words.

A query that names a note ("Who founded the Journal of Mathematical Physics?") is a strong hint
that the note is relevant, the way a wikilink would be. Names are matched as token sequences,
indexed by their first token, so a query costs a few dict lookups per word, not a scan of every
title. Names shorter than ``min_chars`` are skipped (too many false hits: "Go", "AI").

The matcher is patched per note as notes change (``put``/``drop``): rebuilt from every title it
cost 290 ms at 100k notes, paid by the first hybrid search after each save (bench/scale.py).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable

_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> tuple[str, ...]:
    return tuple(t.lower() for t in _TOKEN.findall(text))


_CODE = re.compile(r"^(?=\S*\d)\w+(?:[-_.]\w+)+$")


def with_codes(names: Iterable[str]) -> list[str]:
    """The names, plus the code a title starts with ("ADR-5 Sessions in Postgres" is also
    named by "ADR-5"): people cite decision records, tickets and RFCs by their number."""
    out = []
    for name in names:
        out.append(name)
        first, _, rest = name.partition(" ")
        if rest and _CODE.match(first):
            out.append(first)
    return out


class TitleMatcher:
    def __init__(self, names: Iterable[tuple[str, str]], min_chars: int = 5) -> None:
        """``names``: (path, title or alias) pairs."""
        self.min_chars = min_chars
        self._by_first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._short: dict[tuple[str, ...], set[str]] = {}
        for path, name in names:
            for each in with_codes([name]):
                self._add(path, each)
        for entries in self._by_first.values():
            entries.sort(key=lambda e: -len(e[0]))

    def _tokens(self, name: str) -> tuple[tuple[str, ...], bool]:
        """A name's words, and whether it is too short to look for in text (a query that is
        just "BOTW" still names it)."""
        toks = tokens(name)
        return toks, len(" ".join(toks)) < self.min_chars

    def _add(self, path: str, name: str) -> str | None:
        toks, short = self._tokens(name)
        if not toks:
            return None
        # one object per distinct word: titles repeat their words (at 10k generated notes 40k
        # title tokens were as many strings, ~2 MB)
        toks = tuple(map(sys.intern, toks))
        if short:
            self._short.setdefault(toks, set()).add(path)
            return None
        self._by_first.setdefault(toks[0], []).append((toks, path))
        return toks[0]

    def put(self, path: str, names: Iterable[str], before: Iterable[str] = ()) -> None:
        """Set the names of one note; ``before``: the names it was put with last (none if new)."""
        self.drop(path, before)
        for first in {self._add(path, name) for name in with_codes(names)} - {None}:
            assert first is not None
            self._by_first[first].sort(key=lambda e: -len(e[0]))

    def drop(self, path: str, names: Iterable[str]) -> None:
        """Forget a note's names (those it was put with: the caller has them, so the matcher
        keeps no copy of every note's names)."""
        for name in with_codes(names):
            toks, short = self._tokens(name)
            if not toks:
                continue
            if short:
                paths = self._short.get(toks, set())
                paths.discard(path)
                if not paths:
                    self._short.pop(toks, None)
                continue
            entries = self._by_first.get(toks[0], [])
            if (toks, path) in entries:
                entries.remove((toks, path))
            if not entries:
                self._by_first.pop(toks[0], None)

    def exact(self, text: str) -> list[str]:
        """Paths of the notes whose whole name (title, alias or code) is ``text``."""
        toks = tokens(text)
        if not toks:
            return []
        long = [path for name, path in self._by_first.get(toks[0], ()) if name == toks]
        return long + sorted(self._short.get(toks, ()))

    def find(self, text: str) -> list[str]:
        """Paths of the notes named in ``text``, longest name first, each once."""
        toks = tokens(text)
        found: dict[str, int] = {}
        for i, tok in enumerate(toks):
            for name, path in self._by_first.get(tok, ()):
                if toks[i : i + len(name)] == name:
                    found[path] = max(found.get(path, 0), len(name))
        return sorted(found, key=lambda p: -found[p])
