"""Link anchors (``#heading``, ``#^block``) as Obsidian, GitHub-style Markdown and Dendron write
them, reduced to one comparable key.

Obsidian links the heading text (``[[N#What's new?]]``), Markdown links and Dendron a slug
(``#whats-new``), and Dendron adds ranges (``#start,1:#end``, ``#*``). All of them reduce to the
heading's letters and digits, which is what a link checker has to compare.
"""

from __future__ import annotations

import re

from sidecar.core.markdown import slugify

_DENDRON_RANGE = re.compile(r"^(.*?)(?:,\d+)?(?::#?.*)?$")
_IS_RANGE = re.compile(r":#|,\d+(?::|$)")


def heading_key(text: str) -> str:
    """The key of a heading's text (or of its slug): lowercase letters and digits only."""
    return re.sub(r"[\W_]+", "", slugify(text))


def anchor_key(anchor: str) -> str | None:
    """The key a link's anchor must match, ``^id`` for a block, or None when nothing can be
    checked (``*`` wildcards). Dendron ranges check their start; Obsidian's ``A#B`` sub-heading
    paths their last part."""
    text = anchor.lstrip("#").strip()
    if _IS_RANGE.search(text):
        m = _DENDRON_RANGE.match(text)
        text = m.group(1) if m else text
    last = text.rstrip("#").rsplit("#", 1)[-1].strip()
    if last.startswith("^"):
        return "^" + last[1:].lower()
    if not last or last == "*":
        return None
    return heading_key(last) or None
