"""The short text an MCP tool result carries beside its structured content.

A model reads the text; a client that understands ``structuredContent`` gets the data. So the
text says what the data says, once, in lines a model reads cheaply (paths, headings, snippets),
not the JSON a second time. Methods without a renderer get compact JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Render = Callable[[dict[str, Any]], str]


def render(method: str, result: Any) -> str:
    fn = RENDERERS.get(method)
    if fn is None or not isinstance(result, dict):
        return compact(result)
    try:
        return fn(result)
    except (KeyError, TypeError, ValueError):  # a shape we did not expect: the data as is
        return compact(result)


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _more(r: dict[str, Any]) -> list[str]:
    return [f"({r['more']})"] if r.get("more") else (
        [f"(more: cursor {r['next_cursor']!r})"] if r.get("next_cursor") else [])  # fmt: skip


def _where(h: dict[str, Any]) -> str:
    lines = f":{h['start_line']}-{h['end_line']}" if h.get("start_line") else ""
    head = f" > {h['heading']}" if h.get("heading") else ""
    return f"{h['path']}{lines}{head}"


def _search(r: dict[str, Any]) -> str:
    if not r["results"]:
        return f"No notes found for {r['query']!r}."
    out = [f"{len(r['results'])} notes for {r['query']!r}:"]
    for h in r["results"]:
        stale = f" [superseded by {h['superseded_by']}]" if h.get("superseded_by") else ""
        out.append(f"- {_where(h)}{stale}: {h.get('snippet', '')}")
    return "\n".join(out + _more(r))


def _read(r: dict[str, Any]) -> str:
    head = (f"{r['path']} (lines {r['start_line']}-{r['end_line']} of {r['lines']}, "
            f"hash {r['hash']})")  # fmt: skip
    return "\n".join([head, "", r["text"], *_more({"more": r.get("truncated")})])


def _context(r: dict[str, Any]) -> str:
    c = r["counts"]
    out = [f"{r['path']}: {c['relations']} typed relations, {c['links']} links, "
           f"{c['backlinks']} backlinks"]  # fmt: skip
    for i in r["items"]:
        if i["kind"] == "relation":
            out.append(f"- {i['relation']} {i['note']}")
        elif i["kind"] == "link":
            broken = "" if i.get("state") in (None, "valid") else f" ({i['state']})"
            out.append(f"- links to {i['note']}{broken} (line {i['line']})")
        else:
            out.append(f"- linked from {i['note']}:{i['line']}: {i.get('context', '')}")
    return "\n".join(out + _more(r))


def _traverse(r: dict[str, Any]) -> str:
    out = [f"{r['root']} along {r['relation']} ({r['direction']}): {len(r['nodes'])} notes"]
    out += [f"- {'  ' * (n['depth'] - 1)}{n['path']} (depth {n['depth']})" for n in r["nodes"]]
    return "\n".join(out + _more(r))


def _current(r: dict[str, Any]) -> str:
    if r.get("cycle"):
        return f"{r['path']}: supersedes cycle {' -> '.join(r['cycle'])}"
    if r["current"] == r["path"]:
        return f"{r['path']} is current (nothing supersedes it)."
    return f"{r['path']} is superseded; current: {r['current']} (chain {' -> '.join(r['chain'])})"


def _recall(r: dict[str, Any]) -> str:
    if r.get("abstained"):
        return f"Nothing in the vault is about this ({r.get('reason', '')})."
    out = [f"- {_where(n)}: {n.get('snippet', '')}" for n in r["notes"]]
    out += [f"- memory {m['id']} ({m['entry_type']}): {m['title']}" for m in r["memory"]]
    return "\n".join(out)


def _entry(r: dict[str, Any]) -> str:
    e = r["entry"]
    verb = "created" if r.get("created") else "updated"
    if r.get("archived"):
        verb = "archived"
    return f"Memory {e['id']} {verb}: {e['title']} ({e['entry_type']}, {e['status']})."


def _memory_search(r: dict[str, Any]) -> str:
    if not r["results"]:
        return f"No memory entries for {r['query']!r}."
    out = [f"- {h['id']} ({h['entry_type']}): {h['title']}" for h in r["results"]]
    return "\n".join(out + _more(r))


def _reminders(r: dict[str, Any]) -> str:
    out = [f"- due: {e['title']} ({e['id']}, {e.get('due_at')})" for e in r["due"]]
    out += [f"- upcoming: {e['title']} ({e['id']}, {e.get('due_at')})" for e in r["upcoming"]]
    return "\n".join(out + _more(r)) or "No reminders due or coming up."


def _lint(r: dict[str, Any]) -> str:
    counts = ", ".join(f"{rule} {sum(c.values())}" for rule, c in sorted(r["counts"].items()))
    out = [f"{r['total']} findings ({counts or 'none'})"]
    for f in r["findings"]:
        target = f" -> {f['target']}" if f.get("target") else ""
        out.append(f"- {f['severity']} {f['rule']}: {f['note']}:{f['line']}{target}")
    return "\n".join(out + _more(r))


def _written(r: dict[str, Any]) -> str:
    if "from" in r:
        files = len(r["updated"])
        return (
            f"Moved {r['from']} -> {r['to']}; links rewritten in {files} notes (hash {r['hash']})."
        )
    what = "created" if r.get("created") else "written"
    return f"{r['path']} {what} (hash {r['hash']})."


RENDERERS: dict[str, Render] = {
    "search": _search,
    "note.read": _read,
    "note.context": _context,
    "graph.traverse": _traverse,
    "graph.current": _current,
    "recall": _recall,
    "session.start": lambda r: r.get("text") or "Nothing to report.",
    "memory.write": _entry,
    "memory.update": _entry,
    "memory.search": _memory_search,
    "reminders.due": _reminders,
    "lint.summary": _lint,
    "note.write": _written,
    "note.edit": _written,
    "note.move": _written,
}
