"""Search filters over note metadata: path prefix, tags, frontmatter ``key=value``.

Values compare by meaning, not by spelling: ``priority=2`` matches ``priority: 2`` and ``"2"``;
``due<2026-12-01`` compares dates; a list property matches when it contains the value; a
tag filter matches nested tags (``project`` matches ``project/alpha``).
"""

from __future__ import annotations

import datetime as dt
import difflib
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sidecar.errors import UsageError

_FILTER = re.compile(r"^\s*([^=<>!]+?)\s*(!=|>=|<=|=|<|>)\s*(.*?)\s*$")


@dataclass(frozen=True, slots=True)
class Filter:
    key: str
    op: str
    value: str


def parse_filters(items: Iterable[str]) -> tuple[Filter, ...]:
    out = []
    for item in items:
        m = _FILTER.match(item)
        if not m or not m.group(1):
            raise UsageError(
                f"filter {item!r} is not KEY=VALUE (or KEY<VALUE, KEY>=VALUE, KEY!=VALUE)"
            )
        out.append(Filter(m.group(1), m.group(2), m.group(3)))
    return tuple(out)


def _coerce(value: Any) -> Any:
    """A comparable form: numbers as floats, dates as dates, other text lowercased."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return (
            dt.date.fromisoformat(text[:10])
            if re.match(r"^\d{4}-\d{2}-\d{2}", text)
            else text.lower()
        )
    except ValueError:
        return text.lower()


def _compare(have: Any, op: str, want: Any) -> bool:
    a, b = _coerce(have), _coerce(want)
    if op in ("=", "!="):
        return bool((a == b) == (op == "="))
    if type(a) is not type(b):
        return False
    return bool({"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op])


def matches(frontmatter: Mapping[str, Any], f: Filter) -> bool:
    value = frontmatter.get(f.key)
    if value is None:
        return f.op == "!="
    if isinstance(value, list):
        hits = [_compare(v, "=", f.value) for v in value]
        if f.op == "=":
            return any(hits)
        if f.op == "!=":
            return not any(hits)
        return any(_compare(v, f.op, f.value) for v in value)
    return _compare(value, f.op, f.value)


def tag_matches(tags: Sequence[str], wanted: str) -> bool:
    wanted = wanted.lstrip("#").lower()
    return any(t.lower() == wanted or t.lower().startswith(wanted + "/") for t in tags)


def path_matches(path: str, prefix: str) -> bool:
    """``--path``: a folder or path prefix, ignoring case (as link resolution does)."""
    prefix = prefix.strip().lstrip("./").lower()
    path = path.lower()
    return (
        not prefix
        or path == prefix
        or path.startswith(prefix.rstrip("/") + "/")
        or (path.startswith(prefix))
    )


def unknown_scope(
    path: str, tags: Sequence[str], filters: Sequence[Filter],
    paths: Iterable[str], known_tags: Iterable[str], keys: Iterable[str],
) -> str | None:  # fmt: skip
    """Why a scope can match nothing because it names what no note has (a typo: a property key,
    a tag or a folder that does not occur in the vault), with the close names; None when every
    part names something real. A real name with no match is a valid query, not a typo."""
    keys, known_tags = set(keys), {t.lower() for t in known_tags}
    for f in filters:
        if f.key not in keys:
            return f"no note has the property '{f.key}' (--filter {f.key}{f.op}{f.value})" + (
                _close(f.key, keys)
            )
    for tag in tags:
        wanted = tag.lstrip("#").lower()
        if not any(t == wanted or t.startswith(wanted + "/") for t in known_tags):
            return f"no note has the tag '{tag}'" + _close(wanted, known_tags)
    paths = list(paths)
    if path.strip().lstrip("./") and not any(path_matches(p, path) for p in paths):
        folders = {posixpath.dirname(p) for p in paths} - {""}
        return f"no note is under the path '{path}'" + _close(path.strip("/"), folders | set(paths))
    return None


def _close(word: str, names: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, sorted(names), n=2, cutoff=0.7)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
