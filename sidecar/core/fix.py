"""Byte-preserving frontmatter edits for ``sidecar lint --fix``.

A fix may change the note's frontmatter and nothing else: the body, line endings (CRLF stays
CRLF), a BOM, comments, key order and quoting style are kept byte for byte. The YAML is edited as
lines, in the style the note already uses (block list, flow list, ``relations:`` mapping), never
re-serialised, because a YAML round-trip would rewrite quoting, comments and dates. Every edit is
checked by parsing the result: if the new frontmatter does not hold exactly the old values plus
the new link, the fix is refused (``None``) rather than risked.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from sidecar.core.frontmatter import split_frontmatter
from sidecar.core.links import frontmatter_links, normalise_relation

_KEY = re.compile(r"^(\s*)([^\s#\-][^:#]*?|\"[^\"]*\"|'[^']*')\s*:(?:\s+|$)(.*?)$")


def link_name(path: str, basenames: Mapping[str, int]) -> str:
    """``[[name]]`` text for a note: its bare name when unique in the vault, else its path."""
    stem = re.sub(r"\.(md|markdown)$", "", path, flags=re.I)
    base = posixpath.basename(stem)
    return base if basenames.get(base.lower(), 0) <= 1 else stem


def basename_counts(paths: Iterable[str]) -> Counter[str]:
    return Counter(posixpath.basename(link_name(p, {})).lower() for p in paths)


def quote(link: str) -> str:
    return '"[[' + link.replace("\\", "\\\\").replace('"', '\\"') + ']]"'


def add_relation(text: str, relation: str, link: str) -> str | None:
    """``text`` with ``relation: [[link]]`` added to its frontmatter, or None when that cannot be
    done safely (unclosed or invalid frontmatter, a value in a shape we do not edit)."""
    lines = text.splitlines(keepends=True)
    nl = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    raw, body_start = split_frontmatter(lines)
    if raw is None:
        if lines and lines[0].lstrip("\ufeff").strip() == "---":
            return None  # an unclosed frontmatter: adding another would hide it
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        head = f"---{nl}{relation}:{nl}  - {quote(link)}{nl}---{nl}"
        return bom + head + text[len(bom) :]
    old = _load(raw)
    if old is None:
        return None
    yaml_lines = lines[1 : body_start - 1]
    edited = _edit(yaml_lines, relation, link, nl)
    if edited is None or not _verified(old, _load("".join(edited)), relation, link):
        return None
    return "".join([lines[0], *edited, *lines[body_start - 1 :]])


def _load(raw: str) -> dict[str, Any] | None:
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError:
        return None
    if data is None:
        return {}
    return data if isinstance(data, dict) else None


def _edit(lines: list[str], relation: str, link: str, nl: str) -> list[str] | None:
    top = _keys(lines, 0, len(lines), indent=0)
    rel_block = next((i for i, k in top if normalise_relation(k) == "relations"), None)
    if rel_block is not None:
        start, end = rel_block + 1, _block_end(lines, rel_block)
        children = _keys(lines, start, end, indent=None)
        hit = next((i for i, k in children if normalise_relation(k) == relation), None)
        if hit is not None:
            return _append(lines, hit, link, nl)
    hit = next((i for i, k in top if normalise_relation(k) == relation), None)
    if hit is not None:
        return _append(lines, hit, link, nl)
    if rel_block is not None:
        return _add_child(lines, rel_block, relation, link, nl)
    flow = any(_value(line).startswith("[") for line in lines)
    entry = [f"{relation}: [{quote(link)}]{nl}"] if flow else [
        f"{relation}:{nl}", f"  - {quote(link)}{nl}"]  # fmt: skip
    return [*lines, *entry]


def _keys(lines: list[str], start: int, end: int, indent: int | None) -> list[tuple[int, str]]:
    """(index, key) of mapping keys at one indent (the first child's indent when None)."""
    out: list[tuple[int, str]] = []
    for i in range(start, end):
        m = _KEY.match(lines[i].rstrip("\r\n"))
        if m is None or lines[i].lstrip().startswith("#"):
            continue
        if indent is None:
            indent = len(m.group(1))
        if len(m.group(1)) == indent:
            out.append((i, m.group(2).strip("\"'")))
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _blank(line: str) -> bool:
    return not line.strip() or line.lstrip().startswith("#")


def _block_end(lines: list[str], key: int) -> int:
    """Index after the last line of the value that starts at ``lines[key]``."""
    base = _indent(lines[key])
    end = key + 1
    for i in range(key + 1, len(lines)):
        line = lines[i]
        if _blank(line):
            continue
        deeper = _indent(line) > base
        if not deeper and not (_indent(line) == base and line.lstrip().startswith("- ")):
            break
        end = i + 1
    return end


def _value(line: str) -> str:
    m = _KEY.match(line.rstrip("\r\n"))
    return _strip_comment(m.group(3)).strip() if m else ""


def _strip_comment(value: str) -> str:
    quote_char = ""
    for i, ch in enumerate(value):
        if quote_char:
            quote_char = "" if ch == quote_char else quote_char
        elif ch in "\"'":
            quote_char = ch
        elif ch == "#" and (i == 0 or value[i - 1] in " \t"):
            return value[:i].rstrip()
    return value


def _append(lines: list[str], key: int, link: str, nl: str) -> list[str] | None:
    line = lines[key]
    ending = line[len(line.rstrip("\r\n")) :]
    body = line.rstrip("\r\n")
    value = _value(line)
    tail = body[body.rindex(value) + len(value) :] if value else ""
    head = body[: len(body) - len(tail) - len(value)] if value else body
    if value.startswith("[") and value.endswith("]"):
        inner = value[1:-1]
        joined = f"{inner}, {quote(link)}" if inner.strip() else quote(link)
        return [*lines[:key], f"{head}[{joined}]{tail}{ending}", *lines[key + 1 :]]
    if value and value[0] not in "|>{&*!-":
        return [*lines[:key], f"{head}[{value}, {quote(link)}]{tail}{ending}", *lines[key + 1 :]]
    if value:
        return None
    return _append_item(lines, key, link, nl)


def _append_item(lines: list[str], key: int, link: str, nl: str) -> list[str] | None:
    end = _block_end(lines, key)
    items = [i for i in range(key + 1, end) if not _blank(lines[i])]
    if not items:
        prefix = " " * (_indent(lines[key]) + 2) + "- "
        return [*lines[: key + 1], f"{prefix}{quote(link)}{nl}", *lines[key + 1 :]]
    first = lines[items[0]]
    if any(_indent(lines[i]) != _indent(first) or not lines[i].lstrip().startswith("- ")
           for i in items):  # fmt: skip
        return None  # a nested mapping or multi-line items: not a shape we edit
    prefix = first[: _indent(first)] + "- "
    last = items[-1] + 1
    return [*lines[:last], f"{prefix}{quote(link)}{nl}", *lines[last:]]


def _add_child(lines: list[str], block: int, relation: str, link: str, nl: str) -> list[str] | None:
    value = _value(lines[block])
    if value.startswith("{") and value.endswith("}"):
        line = lines[block]
        i = line.rindex("}")
        sep = ", " if value[1:-1].strip() else ""
        return [*lines[:block], f"{line[:i]}{sep}{relation}: [{quote(link)}]{line[i:]}",
                *lines[block + 1 :]]  # fmt: skip
    end = _block_end(lines, block)
    children = _keys(lines, block + 1, end, indent=None)
    if value or not children:
        return None
    pad = lines[children[0][0]][: _indent(lines[children[0][0]])]
    flow = any(_value(lines[i]).startswith("[") for i, _ in children)
    entry = [f"{pad}{relation}: [{quote(link)}]{nl}"] if flow else [
        f"{pad}{relation}:{nl}", f"{pad}  - {quote(link)}{nl}"]  # fmt: skip
    last = max(i for i in range(block + 1, end) if not _blank(lines[i])) + 1
    return [*lines[:last], *entry, *lines[last:]]


def _verified(old: dict[str, Any], new: dict[str, Any] | None, relation: str, link: str) -> bool:
    """The new frontmatter holds the old values and links, plus exactly the one new link."""
    if new is None or _without(old, relation) != _without(new, relation):
        return False
    before = Counter((x.relation, x.target) for x in frontmatter_links(old))
    after = Counter((x.relation, x.target) for x in frontmatter_links(new))
    before[(relation, link)] += 1
    return before == after


def _without(data: dict[str, Any], relation: str) -> dict[str, Any]:
    out = {k: v for k, v in data.items() if normalise_relation(str(k)) != relation}
    rels = out.get("relations")
    if isinstance(rels, dict):
        out["relations"] = {k: v for k, v in rels.items() if normalise_relation(str(k)) != relation}
    return out


def unified_diff(path: str, old: str, new: str) -> str:
    """A ``git diff``-style patch of one note (``a/`` and ``b/`` prefixes, 2 lines context)."""
    out = []
    for line in difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True),
        f"a/{path}", f"b/{path}", n=2,
    ):  # fmt: skip
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
