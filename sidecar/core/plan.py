"""Reindex planning: what the disk says against what the index holds, as a pure function.

Startup reconcile, watcher batches and ``sidecar index`` all run through these two steps, so
there is one definition of "changed". Step one picks the files worth reading (new, or whose
mtime/size moved); step two, given their content hashes, separates real edits from touches
(same bytes, new mtime) and pairs deletions with additions of the same bytes as renames.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

Stat = tuple[int, int]  # (mtime_ns, size)


@dataclass(frozen=True, slots=True)
class Indexed:
    mtime_ns: int
    size: int
    content_hash: str


@dataclass(frozen=True, slots=True)
class Candidates:
    to_read: tuple[str, ...]
    gone: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    parse: tuple[str, ...]
    touch: tuple[str, ...]
    delete: tuple[str, ...]
    renames: tuple[tuple[str, str], ...]


def candidates(
    disk: Mapping[str, Stat],
    indexed: Mapping[str, Indexed],
    *,
    full: bool = False,
    scope: frozenset[str] | None = None,
) -> Candidates:
    """Files to read and indexed notes no longer on disk; ``scope`` limits both to some paths."""
    paths = disk.keys() if scope is None else (scope & disk.keys())
    to_read = sorted(
        p for p in paths
        if full or p not in indexed or (indexed[p].mtime_ns, indexed[p].size) != disk[p]
    )  # fmt: skip
    known = indexed.keys() if scope is None else (scope & indexed.keys())
    gone = sorted(p for p in known if p not in disk)
    return Candidates(tuple(to_read), tuple(gone))


def classify(
    hashes: Mapping[str, str],
    indexed: Mapping[str, Indexed],
    gone: tuple[str, ...],
    *,
    full: bool = False,
) -> Plan:
    """``hashes``: content hash of each file read (unreadable files are left out)."""
    parse: list[str] = []
    touch: list[str] = []
    for path, digest in sorted(hashes.items()):
        old = indexed.get(path)
        if old is not None and old.content_hash == digest and not full:
            touch.append(path)
        else:
            parse.append(path)
    by_hash: dict[str, list[str]] = {}
    for path in gone:
        by_hash.setdefault(indexed[path].content_hash, []).append(path)
    renames = []
    for path in parse:
        olds = by_hash.get(hashes[path], [])
        if path not in indexed and len(olds) == 1:
            renames.append((olds.pop(), path))
    return Plan(tuple(parse), tuple(touch), gone, tuple(renames))
