"""Text for memory, reminders, recall and session results (``--json`` prints the result itself).

Recall's text is what a ``UserPromptSubmit`` hook puts in front of the model, so it is phrased
as facts with their source, and is empty when recall abstained: no text, no distraction.
"""

from __future__ import annotations

from typing import Any


def fmt_entry(r: dict[str, Any]) -> str:
    e = r.get("entry", r)
    lines = [f"{e['id']}  [{e['entry_type']}, {e['status']}]  {e['title']}"]
    facts = [f"source {e['source_type']}", f"confidence {e['confidence']}",
             f"updated {e['updated_at']}"]  # fmt: skip
    if e.get("due_at"):
        facts.append(f"due {e['due_at']}")
    if e.get("superseded_by"):
        facts.append(f"superseded by {e['superseded_by']}")
    if e.get("tags"):
        facts.append("tags " + ", ".join(e["tags"]))
    lines.append("  " + "; ".join(facts))
    lines += [f"  {link['relation']} {_target(link)}" for link in e.get("links", [])]
    if e.get("body"):
        lines += ["", e["body"]]
    for s in r.get("similar", []):
        lines.append(f"note: similar to {s['id']} ({s['similarity']:.2f}) {s['title']}")
    for s in r.get("superseded", []):
        lines.append(f"superseded {s}")
    return "\n".join(lines)


def _target(link: dict[str, Any]) -> str:
    where = link.get("path") or link.get("id") or link.get("target", "")
    return f"{where} ({link['kind']})"


def fmt_entries(r: dict[str, Any]) -> str:
    rows = r.get("entries", r.get("results", []))
    lines = []
    for e in rows:
        score = f"{e['score']:.3f}  " if "score" in e else ""
        due = f"  due {e['due_at']}" if e.get("due_at") else ""
        lines.append(f"{score}{e['id']}  [{e['entry_type']}, {e['status']}]  {e['title']}{due}")
    lines += [f"problem: {p['path']}: {p['error']}" for p in r.get("problems", [])]
    return "\n".join(lines) if lines else "no memory entries"


def fmt_history(r: dict[str, Any]) -> str:
    parts = [f"== current\n{r['current'] or '(no current file)'}"]
    parts += [f"== revision saved {v['saved_at']}\n{v['text']}" for v in r["revisions"]]
    return "\n".join(parts)


def fmt_reminders(r: dict[str, Any]) -> str:
    lines = [f"due    {e['due_at']}  {e['id']}  {e['title']}" for e in r["due"]]
    lines += [f"later  {e['due_at']}  {e['id']}  {e['title']}" for e in r["upcoming"]]
    return "\n".join(lines) if lines else "no reminders due or coming up"


def fmt_import(r: dict[str, Any]) -> str:
    lines = [f"imported {len(r['imported'])}, skipped {len(r['skipped'])} (already there), "
             f"{len(r['errors'])} errors"]  # fmt: skip
    lines += [f"error: {e['id'] or '#' + str(e['index'])}: {e['error']}" for e in r["errors"]]
    return "\n".join(lines)


def fmt_recall(r: dict[str, Any]) -> str:
    if r.get("abstained"):
        return ""
    lines = []
    if r["notes"]:
        lines.append("Vault notes that may matter here (from sidecar recall):")
        lines += [_note_line(n) for n in r["notes"]]
    if r["memory"]:
        lines.append("Remembered (sidecar memory):")
        lines += [_memory_line(m) for m in r["memory"]]
    return "\n".join(lines)


def _note_line(n: dict[str, Any]) -> str:
    where = n["path"] + (f" > {n['heading']}" if n.get("heading") else "")
    head = f"- {where}: {n.get('snippet', '')}".rstrip(": ")
    if n.get("replaces"):
        head += f" (current version of {n['replaces']})"
    hints = [f"{h['relation']} {h.get('note') or h.get('memory')}" for h in n.get("hints", [])]
    return head + (f" [{'; '.join(hints)}]" if hints else "")


def _memory_line(m: dict[str, Any]) -> str:
    body = " ".join(m.get("body", "").split())
    text = f"{m['title']}. {body}" if body else m["title"]
    return f"- {m['entry_type'].capitalize()} ({m['id']}, confidence {m['confidence']}): {text}"
