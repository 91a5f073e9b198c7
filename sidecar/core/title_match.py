"""Which notes a piece of text names: note titles and aliases found as whole words.

A query that names a note ("Who founded the Journal of Mathematical Physics?") is a strong hint
that the note is relevant, the way a wikilink would be. Names are matched as token sequences,
indexed by their first token, so a query costs a few dict lookups per word, not a scan of every
title. Names shorter than ``min_chars`` are skipped (too many false hits: "Go", "AI").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> tuple[str, ...]:
    return tuple(t.lower() for t in _TOKEN.findall(text))


class TitleMatcher:
    def __init__(self, names: Iterable[tuple[str, str]], min_chars: int = 5) -> None:
        """``names``: (path, title or alias) pairs."""
        self._by_first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        for path, name in names:
            toks = tokens(name)
            if toks and len(" ".join(toks)) >= min_chars:
                self._by_first.setdefault(toks[0], []).append((toks, path))
        for entries in self._by_first.values():
            entries.sort(key=lambda e: -len(e[0]))

    def find(self, text: str) -> list[str]:
        """Paths of the notes named in ``text``, longest name first, each once."""
        toks = tokens(text)
        found: dict[str, int] = {}
        for i, tok in enumerate(toks):
            for name, path in self._by_first.get(tok, ()):
                if toks[i : i + len(name)] == name:
                    found[path] = max(found.get(path, 0), len(name))
        return sorted(found, key=lambda p: -found[p])
