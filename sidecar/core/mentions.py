"""Unlinked mentions: places that name a note (title, file name or alias) without linking it.

Obsidian shows these under a note's backlinks; they are the links a writer forgot. A mention
counts only in prose: never inside a link (that is a link, not a mention), inline code, a code
fence, a comment or the frontmatter. Names are matched whole-word and case-insensitively, the
longest first, so "Auth Service" is one mention, not also one of "Auth".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sidecar.core.frontmatter import split_frontmatter
from sidecar.core.markdown import normalise, parse_body_cached, split_lines

MIN_NAME_CHARS = 3
LINE_CHARS = 240

_BARE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s>]+")


@dataclass(frozen=True, slots=True)
class Mention:
    line: int  # 1-based, in the whole file
    column: int  # 0-based, in that line
    name: str  # as written in the text
    text: str  # the line, trimmed

    def to_dict(self) -> dict[str, object]:
        return {"line": self.line, "column": self.column, "name": self.name, "text": self.text}


def names_for(title: str, stem: str, aliases: Iterable[str]) -> list[str]:
    """The names a note goes by, long enough to be meaningful, longest first."""
    names = {n.strip() for n in (title, stem, *aliases) if len(n.strip()) >= MIN_NAME_CHARS}
    return sorted(names, key=lambda n: (-len(n), n.lower()))


def name_pattern(names: list[str]) -> re.Pattern[str] | None:
    if not names:
        return None
    alternation = "|".join(re.escape(n) for n in names)
    return re.compile(rf"(?<!\w)(?:{alternation})(?!\w)", re.IGNORECASE)


def find_mentions(text: str, pattern: re.Pattern[str]) -> list[Mention]:
    """Every unlinked occurrence of ``pattern`` in the note's prose, in line order."""
    text = normalise(text)
    lines = split_lines(text)
    _, first = split_frontmatter(lines)
    offset = sum(len(line) for line in lines[:first])
    body = text[offset:]
    parsed = parse_body_cached(body, first + 1)
    masked = list(body)
    for start, end in parsed.hidden:  # links (text included), code spans, HTML, comments, math
        masked[start:end] = re.sub(r"[^\n]", " ", body[start:end])
    prose = _BARE_URL.sub(lambda m: " " * len(m.group(0)), "".join(masked))
    prose_lines = prose.split("\n")
    out: list[Mention] = []
    for block in parsed.blocks:
        if block.is_code:
            continue
        for number in range(block.start_line, block.end_line + 1):
            line = prose_lines[number - first - 1]
            for m in pattern.finditer(line):
                original = lines[number - 1].rstrip("\n")
                out.append(Mention(number, m.start(), m.group(0), _trim(original)))
    return out


def _trim(line: str) -> str:
    flat = " ".join(line.split())
    return flat if len(flat) <= LINE_CHARS else flat[: LINE_CHARS - 1] + "…"
