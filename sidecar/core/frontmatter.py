"""Split and load YAML frontmatter without ever failing the note.

Templates such as ``created: {{date}}`` are invalid YAML; a note with them still indexes, its
body intact, and the problem is recorded for ``status`` and lint. Values are made JSON-safe
(dates become ISO strings) with a node budget, so an alias bomb cannot blow up memory later.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import yaml

try:  # the C loader is ~10x faster; fall back where PyYAML was built without libyaml
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on the PyYAML build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAX_FRONTMATTER_CHARS = 256 * 1024
MAX_NODES = 20_000


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
