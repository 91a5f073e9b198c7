"""Graph queries over the in-memory index, shaped as the JSON of DESIGN section 7.

A NOTE argument may be a vault-relative path (with or without ``.md``), a path on disk inside
the vault, or a unique note name, alias or id; anything else is ``NoteNotFound`` with the close
matches, so a typo gets a useful answer.
"""

from __future__ import annotations

import difflib
import functools
import posixpath
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sidecar.core.graph import Step
from sidecar.core.model import Edge, LinkRef
from sidecar.errors import NoteNotFound, PathOutsideVault, UsageError
from sidecar.services.link_context import edge_contexts
from sidecar.services.occurrences import grouped, occurrences
from sidecar.services.state import IndexState
from sidecar.store.lance import IndexStore

F = TypeVar("F", bound=Callable[..., Any])


def locked(fn: F) -> F:
    """Run a query under the state lock, so it never sees a half-applied batch."""

    @functools.wraps(fn)
    def wrapper(self: GraphQueries, *args: Any, **kwargs: Any) -> Any:
        with self.state.lock:
            return fn(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class GraphQueries:
    def __init__(self, state: IndexState, store: IndexStore, root: Path) -> None:
        self.state = state
        self.store = store  # the links' contexts, which the state does not keep
        self.root = root

    # -- NOTE arguments -----------------------------------------------------------------------

    def note(self, arg: str) -> str:
        notes = self.state.notes
        text = arg.strip()
        if not text:
            raise UsageError("a note name or path is required")
        rel = self._as_vault_path(text)
        for cand in (rel, rel + ".md"):
            if cand in notes:
                return cand
        lowered = {p.lower(): p for p in notes}
        for cand in (rel.lower(), rel.lower() + ".md"):
            if cand in lowered:
                return lowered[cand]
        link = LinkRef(text, "", "link", text, "", True, False, False, 0, "")
        res = self.state.catalog.resolve(link, "")
        if len(res.candidates) > 1:  # a name typed as a query, not a link: ask which
            raise NoteNotFound(
                f"'{arg}' names several notes: {', '.join(res.candidates)}",
                {"candidates": list(res.candidates)},
            )
        if res.state == "valid" and res.target:
            return res.target
        linked = self._dangling_sources(text)
        if linked:  # a note people link to but nobody wrote: a near name would only mislead
            where = ", ".join(f"{e.source}:{e.line}" for e in linked[:3])
            more = f" and {len(linked) - 3} more" if len(linked) > 3 else ""
            raise NoteNotFound(
                f"no note '{arg}': it is a dangling link target, linked from {where}{more} but "
                "not written yet (`sidecar graph dangling` lists every such link)",
                {"close": [], "dangling": [{"source": e.source, "line": e.line} for e in linked]},
            )
        raise NoteNotFound(f"no note '{arg}'{self._suggest(text)}", {"close": self._close(text)})

    def _dangling_sources(self, text: str) -> list[Edge]:
        """The broken links whose written target is ``text`` (case-insensitively, any anchor
        and ``.md`` aside)."""
        want = text.lower().removesuffix(".md")

        def written(e: Edge) -> str:
            return e.raw.split("#", 1)[0].strip().lower().removesuffix(".md")

        found = [
            e for e in self.state.graph.dangling() if e.state == "broken" and written(e) == want
        ]
        return sorted(found, key=lambda e: (e.source, e.line))

    def _as_vault_path(self, text: str) -> str:
        path = Path(text)
        try:
            on_disk = path.is_absolute() or (Path.cwd() / path).exists()
        except (OSError, ValueError):  # a name over 255 bytes, NUL: a name, never a file here
            on_disk = False
        if on_disk:
            absolute = path if path.is_absolute() else Path.cwd() / path
            try:
                return absolute.resolve().relative_to(self.root).as_posix()
            except ValueError:
                if path.is_absolute():
                    raise PathOutsideVault(f"{text} is outside the vault {self.root}") from None
        return posixpath.normpath(text.replace("\\", "/")).lstrip("/")

    def _close(self, text: str) -> list[str]:
        names = {posixpath.splitext(p)[0].lower(): p for p in self.state.notes}
        names.update({posixpath.basename(k): v for k, v in list(names.items())})
        hits = difflib.get_close_matches(text.lower().removesuffix(".md"), names, n=5, cutoff=0.6)
        return sorted({names[h] for h in hits})

    def _suggest(self, text: str) -> str:
        close = self._close(text)
        return f"; did you mean: {', '.join(close)}?" if close else ""

    # -- queries ------------------------------------------------------------------------------

    def links(self, note: str, depth: int = 1, limit: int = 500) -> dict[str, Any]:
        with self.state.lock:
            path = self.note(note)
            g = self.state.graph
            incoming = list(g.incoming(path))
            out: dict[str, Any] = {
                "path": path,
                "outgoing": [_outgoing(e) for e in g.outgoing(path)],
            }
            if depth > 1:
                steps = g.neighbors(path, depth, limit=limit + 1)[1:]
                out["neighbors"] = [_step(s) for s in steps[:limit]]
                out["neighbors_truncated"] = len(steps) > limit
        contexts = edge_contexts(self.store, incoming)
        out["incoming"] = [_incoming(e, c) for e, c in zip(incoming, contexts, strict=True)]
        return out

    def backlinks(self, note: str) -> dict[str, Any]:
        """Every occurrence of a link here (``backlinks``) and the same per source note with a
        count (``sources``), as Obsidian's pane lists each line under its note."""
        with self.state.lock:
            path = self.note(note)
        rows = occurrences(self.state, self.store, path)
        rows = [r for r in rows if r["source"] != path]  # a note's links to itself are no backlinks
        return {"path": path, "backlinks": rows, "sources": grouped(rows)}

    @locked
    def orphans(self) -> dict[str, Any]:
        return {"orphans": self.state.graph.orphans()}

    @locked
    def neighbors(self, note: str, depth: int = 1, limit: int = 500) -> dict[str, Any]:
        """Nearest first; ``truncated`` says more notes lie within ``depth`` than ``limit``."""
        path = self.note(note)
        steps = self.state.graph.neighbors(path, depth, limit=limit + 1)[1:]
        return {"root": path, "depth": depth, "nodes": [_step(s) for s in steps[:limit]],
                "truncated": len(steps) > limit}  # fmt: skip

    @locked
    def path(self, source: str, target: str) -> dict[str, Any]:
        a, b = self.note(source), self.note(target)
        steps = self.state.graph.shortest_path(a, b)
        return {
            "from": a,
            "to": b,
            "found": steps is not None,
            "hops": len(steps) - 1 if steps else None,
            "path": [_step(s) for s in steps] if steps else [],
        }

    @locked
    def hubs(self, limit: int = 20) -> dict[str, Any]:
        rows = self.state.graph.hubs(limit)
        return {"hubs": [{"path": p, "incoming": i, "outgoing": o} for p, i, o in rows]}

    def dangling(self) -> dict[str, Any]:
        with self.state.lock:
            edges = list(self.state.graph.dangling())
        contexts = edge_contexts(self.store, edges)
        return {"dangling": [_dangling(e, c) for e, c in zip(edges, contexts, strict=True)]}

    @locked
    def export(self) -> dict[str, Any]:
        notes = self.state.notes
        return {
            "nodes": [
                {"path": p, "title": n.title, "tags": list(n.tags)} for p, n in sorted(notes.items())
            ],
            "edges": [
                {"source": e.source, "target": e.target, "raw": e.raw, "relation": e.relation,
                 "state": e.state, "line": e.line}
                for e in sorted(self.state.graph.edges(), key=lambda e: (e.source, e.line, e.raw))
            ],
        }  # fmt: skip


def _outgoing(e: Edge) -> dict[str, Any]:
    out: dict[str, Any] = {"target": e.target, "raw": e.raw, "relation": e.relation, "text": e.text,
           "line": e.line, "anchor": e.anchor, "embed": e.embed, "state": e.state}  # fmt: skip
    if e.candidates:
        out["candidates"] = list(e.candidates)
    return out


def _incoming(e: Edge, context: str) -> dict[str, Any]:
    return {"source": e.source, "relation": e.relation, "line": e.line, "text": e.text,
            "anchor": e.anchor, "context": context}  # fmt: skip


def _dangling(e: Edge, context: str) -> dict[str, Any]:
    return {"source": e.source, "raw": e.raw, "relation": e.relation, "line": e.line,
            "state": e.state, "candidates": list(e.candidates), "context": context}  # fmt: skip


def _step(s: Step) -> dict[str, Any]:
    via = None
    if s.via is not None:
        via = {"source": s.via.source, "target": s.via.target, "relation": s.via.relation,
               "line": s.via.line}  # fmt: skip
    return {"path": s.path, "depth": s.depth, "direction": s.direction, "via": via}
