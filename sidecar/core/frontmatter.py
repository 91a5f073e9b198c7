"""Split and load YAML frontmatter without ever failing the note.

Templates such as ``created: {{date}}`` are invalid YAML; a note with them still indexes, its
body intact, and the problem is recorded for ``status`` and lint. Values are made JSON-safe
(dates become ISO strings) with a node budget, so an alias bomb cannot blow up memory later.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

import yaml

try:  # the C loader is ~10x faster; fall back where PyYAML was built without libyaml
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAX_FRONTMATTER_CHARS = 256 * 1024
MAX_NODES = 20_000

# One ``key: value`` line: a plain run of words, a quoted string without escapes, a number.
_SIMPLE_LINE = re.compile(
    r"([A-Za-z_][A-Za-z0-9_-]{0,99}): "  # the key (YAML allows 1,024 characters)
    r"(?:([A-Za-z0-9][A-Za-z0-9 ._/-]*[A-Za-z0-9._/])"  # plain words, no trailing space
    r"|'([^'\n]*)'"  # single-quoted
    r"|\"([^\"\\\n]*)\""  # double-quoted, no escapes
    r"|([A-Za-z0-9]))$"  # one character
)
_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_RESOLVER = yaml.resolver.Resolver()


@dataclass(frozen=True, slots=True)
class Frontmatter:
    data: dict[str, Any]
    error: str | None
    body_start: int  # 0-based index of the first body line
    raw: str


def split_frontmatter(lines: list[str]) -> tuple[str | None, int]:
    """Return (yaml text or None, index of the first body line)."""
    if not lines or lines[0].rstrip("\r\n").lstrip("\ufeff").rstrip() != "---":
        return None, 0
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n").rstrip() in ("---", "..."):
            return "".join(lines[1:i]), i + 1
    return None, 0


def load_frontmatter(lines: list[str]) -> Frontmatter:
    raw, start = split_frontmatter(lines)
    if raw is None:
        return Frontmatter({}, None, 0, "")
    if len(raw) > MAX_FRONTMATTER_CHARS:
        return Frontmatter({}, f"frontmatter larger than {MAX_FRONTMATTER_CHARS} chars", start, "")
    data = _simple_mapping(raw)
    if data is not None:
        return Frontmatter(data, None, start, raw)
    try:
        data = yaml.load(raw, Loader=_Loader)
    except yaml.YAMLError as exc:
        return Frontmatter({}, f"invalid YAML: {_one_line(exc)}", start, raw)
    except (ValueError, RecursionError) as exc:
        return Frontmatter({}, f"invalid YAML: {exc}", start, raw)
    if data is None:
        return Frontmatter({}, None, start, raw)
    if not isinstance(data, dict):
        return Frontmatter({}, "frontmatter is not a mapping", start, raw)
    try:
        safe = _json_safe(data, [MAX_NODES])
    except _TooBig:
        return Frontmatter({}, f"frontmatter has more than {MAX_NODES} values", start, raw)
    return Frontmatter(safe, None, start, raw)


def _simple_mapping(raw: str) -> dict[str, Any] | None:
    """``raw`` read without PyYAML when every line is ``key: value`` with a plain string or a
    decimal integer that YAML's own resolver reads as such (most notes' frontmatter: PyYAML's
    constructor was ~5 % of a parse); None for anything else, which PyYAML reads."""
    lines = raw.split("\n")
    if lines[-1] != "" or not 2 <= len(lines) <= MAX_NODES // 2:  # MAX_NODES: PyYAML's error
        return None
    data: dict[str, Any] = {}
    for line in lines[:-1]:
        m = _SIMPLE_LINE.match(line)
        if m is None:
            return None
        key, word, single, double, one = m.groups()
        quoted = single if single is not None else double
        if _tag(key) != _STR or key in data:
            return None
        if quoted is not None:
            if not quoted.isprintable():  # YAML's line breaks (folded) and its banned characters
                return None
            data[key] = quoted
            continue
        value = word if word is not None else one
        tag = _tag(value)
        if tag == _INT and _DECIMAL.fullmatch(value):
            data[key] = int(value)
        elif tag == _STR:
            data[key] = value
        else:
            return None
    return data


def _tag(plain: str) -> str:
    """The tag YAML's resolver gives a plain scalar (``str``, ``int``, ``bool``, ...)."""
    return _RESOLVER.resolve(yaml.ScalarNode, plain, (True, False))  # type: ignore[no-untyped-call,no-any-return]


class _TooBig(Exception):
    pass


def _json_safe(value: Any, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    if isinstance(value, dict):
        return {str(k): _json_safe(v, budget) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_json_safe(v, budget) for v in value]
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, float) and value != value:  # NaN is not JSON
        return None
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:300]


def string_list(value: Any, *, split_spaces: bool = False) -> tuple[str, ...]:
    """A frontmatter value that may be a string, a list, or comma (or space) separated."""
    if value is None:
        return ()
    if isinstance(value, str):
        parts = value.split(",")
        if split_spaces:
            parts = [p for chunk in parts for p in chunk.split()]
        return tuple(p.strip() for p in parts if p.strip())
    if isinstance(value, list):
        return tuple(str(v).strip() for v in value if v is not None and str(v).strip())
    return (str(value),)
