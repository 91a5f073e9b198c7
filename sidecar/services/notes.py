"""Reading and changing notes on an agent's behalf: read, write, edit, move.

The vault is the user's: nothing here writes unless asked by name, and nothing replaces text
its writer has not seen. Every write is atomic (temp file, fsync, rename), only Markdown notes
the index would see are written (not ``.obsidian/``, hidden or ignored folders, not through a
symlinked folder), and an existing note is replaced only with the ``expected_hash`` its writer
read (stale: ``WriteConflict`` with the hash now) or an explicit ``overwrite``. Edits change the
bytes they name and nothing else: find-and-replace works on the file's bytes, an append goes in
at the end of its section in the file's own line endings, and a move rewrites only the link
names the language server's rename would (``core/link_edits.py``, shared with it).

After a write the touched notes are re-indexed at once (the daemon runs this in its writer's
turn), so the agent's next search sees them.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from sidecar.core.anchors import heading_key
from sidecar.core.link_edits import Edit, apply_edits, new_note_path, rename_note_edits
from sidecar.core.link_spans import headings, links_in, split_lines
from sidecar.errors import NoteNotFound, PathOutsideVault, StoreError, UsageError, WriteConflict
from sidecar.services.editor import references
from sidecar.store.files import UnsafePath, describe

if TYPE_CHECKING:
    from sidecar.services.context import Services

READ_CHARS = 6_000  # a page of text by default (~1.5k tokens; the reply holds it twice)
MAX_READ_CHARS = 30_000  # never more in one answer (twice that in the reply)
NAME_MAX = 255  # Linux's and macOS's longest file name, in bytes
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True, slots=True)
class Current:
    path: str
    data: bytes
    text: str
    hash: str


def note_hash(data: bytes) -> str:
    """What ``expected_hash`` compares: the first 16 hex digits of the file's SHA-256."""
    return hashlib.sha256(data).hexdigest()[:16]


def load(services: Services, path: str) -> Current:
    f = services.vault.read(path)
    if f.data is None:
        raise NoteNotFound(f"{path}: {f.error}", {"path": path})
    if f.text is None or (f.error or "").startswith("binary"):
        raise UsageError(f"{path} is not a text note ({f.error})", {"path": path})
    return Current(path, f.data, f.data.decode("utf-8", "replace"), note_hash(f.data))


# -- read ----------------------------------------------------------------------------------------


def read(services: Services, note: str, heading: str | None = None, start_line: int | None = None,
         end_line: int | None = None, cursor: int | None = None,
         max_chars: int = READ_CHARS) -> dict[str, Any]:  # fmt: skip
    """The note's text (frontmatter included), all of it or one heading's section or a range of
    lines (1-based, inclusive), a page of at most ``max_chars`` at a time: ``next_cursor`` is the
    line to ask for next."""
    cur = load(services, services.graph.note(note))
    lines = split_lines(cur.text)
    first, last = 1, len(lines)
    if heading:
        first, last = _section(lines, heading, cur.path)
    if start_line is not None:
        first = max(first, start_line)
    if end_line is not None:
        last = min(last, end_line)
    if cursor is not None:
        first = max(first, cursor)
    budget = min(max(max_chars, 200), MAX_READ_CHARS)
    taken: list[str] = []
    size = 0
    line = first
    while line <= last and (not taken or size + len(lines[line - 1]) + 1 <= budget):
        text = lines[line - 1]
        if size + len(text) > budget:  # one line longer than the page: cut it
            text = text[: budget - size]
        taken.append(text)
        size += len(text) + 1
        line += 1
    with services.state.lock:
        record = services.state.notes.get(cur.path)
    out: dict[str, Any] = {
        "path": cur.path, "title": record.title if record else cur.path, "hash": cur.hash,
        "lines": len(lines), "start_line": first, "end_line": line - 1,
        "text": "\n".join(taken),
    }  # fmt: skip
    if line <= last:
        out["next_cursor"] = line
        out["truncated"] = f"lines {line}-{last} not shown: pass cursor {line} for the next page"
    return out


def _section(lines: list[str], heading: str, path: str) -> tuple[int, int]:
    """1-based first and last line of the heading's section (to the next heading as high)."""
    found = headings(lines)
    wanted = heading_key(heading.lstrip("#").strip())
    for i, h in enumerate(found):
        if heading_key(h.text) == wanted:
            end = next((n.line - 1 for n in found[i + 1 :] if n.level <= h.level), len(lines))
            return h.line, end
    names = ", ".join(h.text for h in found[:20]) or "none"
    raise UsageError(f"{path} has no heading {heading!r} (headings: {names})", {"path": path})


# -- write ---------------------------------------------------------------------------------------


def writable(services: Services, path: str) -> str:
    """``path`` as a note the index would see, or an error saying why not."""
    rel = path.strip().replace("\\", "/").lstrip("/")
    if not rel:
        raise UsageError("a note path is required")
    if not posixpath.splitext(rel)[1]:
        rel += ".md"
    if not services.vault.inside(rel):
        raise PathOutsideVault(f"path is outside the vault: {path!r}", {"path": path})
    if any(len(part.encode("utf-8")) > NAME_MAX for part in rel.split("/")):
        raise UsageError(f"a file or folder name is at most {NAME_MAX} bytes (in UTF-8): "
                         f"{_short(rel)}", {"path": rel})  # fmt: skip
    if not rel.lower().endswith((".md", ".markdown")):
        raise UsageError(f"only Markdown notes can be written (.md): {path!r}", {"path": path})
    if not services.vault.is_note(rel):
        raise UsageError(f"{rel} is in a hidden or ignored folder: not written", {"path": rel})
    return rel


def _short(rel: str) -> str:
    return rel if len(rel) <= 80 else f"{rel[:40]}…{rel[-30:]}"


def _existing(services: Services, rel: str) -> Current | None:
    try:
        st = services.vault.files.stat(rel)
    except UnsafePath as exc:
        raise UsageError(f"{rel}: {exc}; not written", {"path": rel}) from None
    except OSError as exc:  # a folder on the way is a file, say: the path cannot be a note
        raise UsageError(f"cannot write {rel}: {describe(exc)}", {"path": rel}) from None
    if st is None:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{rel} exists and is not a regular file: not written", {"path": rel})
    return load(services, rel)


def _guard(cur: Current | None, rel: str, expected_hash: str | None, overwrite: bool) -> None:
    if cur is None:
        if expected_hash:
            raise WriteConflict(f"{rel} does not exist (expected hash {expected_hash})",
                                {"path": rel, "hash": None})  # fmt: skip
        return
    if expected_hash:
        if expected_hash != cur.hash:
            raise WriteConflict(f"{rel} changed since it was read (hash {cur.hash}, not "
                                f"{expected_hash}): read it again", {"path": rel,
                                "hash": cur.hash})  # fmt: skip
    elif not overwrite:
        raise WriteConflict(f"{rel} exists: pass expected_hash (from read_note) or overwrite",
                            {"path": rel, "hash": cur.hash})  # fmt: skip


def _store(services: Services, rel: str, data: bytes) -> None:
    """Atomically, never through a symlink (``Vault.write``); a failure is one line."""
    try:
        services.vault.write(rel, data)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError) and not services.vault.root.is_dir():
            why = f"the vault folder is missing: {services.vault.root}"
            raise StoreError(f"cannot write {rel}: {why}", {"path": rel}) from exc
        raise StoreError(f"cannot write {rel}: {describe(exc)}", {"path": rel}) from exc


def write(services: Services, path: str, content: str, expected_hash: str | None = None,
          overwrite: bool = False) -> dict[str, Any]:  # fmt: skip
    rel = writable(services, path)
    cur = _existing(services, rel)
    _guard(cur, rel, expected_hash, overwrite)
    data = content.encode("utf-8")
    _store(services, rel, data)
    services.reindex(paths=[rel])
    return {"path": rel, "hash": note_hash(data), "created": cur is None, "bytes": len(data)}


# -- edit ----------------------------------------------------------------------------------------


def edit(services: Services, note: str, *, find: str | None = None, replace: str = "",
         replace_all: bool = False, append: str | None = None, heading: str | None = None,
         expected_hash: str | None = None) -> dict[str, Any]:  # fmt: skip
    """Find and replace (``find`` must occur once unless ``replace_all``), or ``append`` text at
    the end of ``heading``'s section (the end of the note without one)."""
    if (find is None) == (append is None):
        raise UsageError("give find (with replace) or append, not both")
    cur = load(services, services.graph.note(note))
    _guard(cur, cur.path, expected_hash, overwrite=True)
    if find is not None:
        data, count = _replace(cur, find, replace, replace_all)
        changed: dict[str, Any] = {"replacements": count}
    else:
        data, line = _append(cur, append or "", heading)
        changed = {"appended_at_line": line}
    _store(services, cur.path, data)
    services.reindex(paths=[cur.path])
    return {"path": cur.path, "hash": note_hash(data), **changed}


def _replace(cur: Current, find: str, replace: str, replace_all: bool) -> tuple[bytes, int]:
    if not find:
        raise UsageError("find must not be empty")
    old, new = find.encode("utf-8"), replace.encode("utf-8")
    count = cur.data.count(old)
    if count == 0 and b"\n" in old and b"\r\n" in cur.data:  # the note has CRLF line endings
        old, new = old.replace(b"\n", b"\r\n"), new.replace(b"\n", b"\r\n")
        count = cur.data.count(old)
    if count == 0:
        raise UsageError(f"{cur.path}: the text to find is not in the note (read it again?)",
                         {"path": cur.path, "hash": cur.hash})  # fmt: skip
    if count > 1 and not replace_all:
        raise UsageError(f"{cur.path}: the text to find occurs {count} times; give more of it "
                         "or pass replace_all", {"path": cur.path, "occurrences": count})  # fmt: skip
    return cur.data.replace(old, new, -1 if replace_all else 1), count


def _append(cur: Current, text: str, heading: str | None) -> tuple[bytes, int]:
    lines = split_lines(cur.text)
    newline = "\r\n" if "\r\n" in cur.text else "\n"
    end = _section(lines, heading, cur.path)[1] if heading else len(lines)
    while end > 0 and not lines[end - 1].strip() and (not heading or end > 1):
        end -= 1  # after the section's last text, not after its trailing blank lines
    body = text.strip("\n").replace("\r\n", "\n").replace("\n", newline)
    offset = _line_offset(cur.text, end)
    before = cur.text[:offset]
    sep = "" if not before or before.endswith(("\n", "\r")) else newline
    insert = f"{sep}{newline if before.strip() else ''}{body}{newline}"
    after = cur.text[offset:]
    if after and not after.startswith(("\n", "\r")):
        insert += newline
    return (before + insert + after).encode("utf-8"), end + 2 if before.strip() else end + 1


def _line_offset(text: str, lines: int) -> int:
    """The offset just after the first ``lines`` lines (their line endings included)."""
    if lines <= 0:
        return 0
    for seen, m in enumerate(re.finditer(r"\r\n|\r|\n", text), start=1):
        if seen == lines:
            return m.end()
    return len(text)


# -- move ----------------------------------------------------------------------------------------


def move(
    services: Services, note: str, to: str, expected_hash: str | None = None
) -> dict[str, Any]:
    """Rename or move a note and rewrite every link to it, in every note that links it, as the
    language server's rename does; the note's own relative Markdown links follow it."""
    old = services.graph.note(note)
    new = writable(services, new_note_path(old, to) if "/" not in to else to)
    if new == old:
        raise UsageError(f"{old} is already there")
    with services.state.lock:
        taken = {p.lower() for p in services.state.notes}
    if new.lower() in taken or (services.vault.root / new).exists():
        raise WriteConflict(f"a note {new} already exists: not moved", {"path": new})
    cur = load(services, old)
    _guard(cur, old, expected_hash, overwrite=True)
    by_source: dict[str, list[dict[str, Any]]] = {}
    for ref in references(services.state, services.store, old)["references"]:
        by_source.setdefault(ref["source"], []).append(ref)
    planned: dict[str, tuple[Current, str]] = {}
    skipped = []
    for source, refs in sorted(by_source.items()):
        try:
            was = cur if source == old else load(services, source)
        except (NoteNotFound, UsageError) as exc:
            skipped.append({"path": source, "why": exc.message})
            continue
        lines = split_lines(was.text)
        text = apply_edits(was.text, rename_note_edits(lines, source, refs, old, new))
        if text != was.text:
            planned[source] = (was, text)
    own = planned.pop(old, (cur, cur.text))[1]
    own = _follow(own, old, new, services)
    try:
        services.vault.files.rename(old, new)
    except FileExistsError:
        raise WriteConflict(f"a note {new} already exists: not moved", {"path": new}) from None
    except OSError as exc:
        raise StoreError(f"cannot move {old} to {new}: {describe(exc)}", {"path": old}) from exc
    if own != cur.text:
        _store(services, new, own.encode("utf-8"))
    updated = []
    for source, (was, text) in planned.items():
        _store(services, source, text.encode("utf-8"))
        updated.append({"path": source, "links": _changed_links(was.text, text)})
    services.reindex(paths=[old, new, *planned])
    return {"from": old, "to": new, "hash": note_hash(own.encode("utf-8")),
            "updated": updated, "skipped": skipped}  # fmt: skip


def _changed_links(before: str, after: str) -> int:
    a, b = split_lines(before), split_lines(after)
    return sum(1 for x, y in zip(a, b, strict=False) if x != y)


def _follow(text: str, old: str, new: str, services: Services) -> str:
    """The moved note's relative Markdown links, rewritten from its new folder."""
    if posixpath.dirname(old) == posixpath.dirname(new):
        return text
    lines = split_lines(text)
    edits: list[Edit] = []
    for link in links_in(lines):
        written = link.name.text
        if link.wikilink or not written or written.startswith("/") or _SCHEME.match(written):
            continue
        target = posixpath.normpath(posixpath.join(posixpath.dirname(old), unquote(written)))
        if target.startswith("..") or not (services.vault.root / target).exists():
            continue
        rel = posixpath.relpath(target, posixpath.dirname(new) or ".")
        raw = lines[link.line][link.name.start : link.name.end]
        value = quote(rel) if "%" in raw or (" " in rel and "<" not in link.written) else rel
        edits.append(Edit(link.line, link.name.start, link.name.end, value))
    return apply_edits(text, edits)
