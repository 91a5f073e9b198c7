"""Printing results: one JSON document under ``--json``, readable text otherwise."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import click

from sidecar.cli import STARTED

Formatter = Callable[[dict[str, Any]], str]
MORE_NEIGHBOURS = "… more notes within reach (raise --limit)"


def emit(result: Any, as_json: bool, formatter: Formatter | None = None) -> None:
    if as_json or formatter is None:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        text = formatter(result)
        if text:
            click.echo(text)


def fmt_index(r: dict[str, Any]) -> str:
    links = r.get("links", {})
    lines = [
        f"{r['notes']} notes, {r['chunks']} chunks ({r['embedded']} embedded now), {r['edges']} edges "
        f"({r['changed']} changed, {r['deleted']} deleted, {r['renamed']} renamed) "
        f"{took(r)}",
        f"links: {links.get('resolved', 0)} resolved, {links.get('broken', 0)} broken, "
        f"{links.get('ambiguous', 0)} ambiguous, {links.get('attachments', 0)} attachments "
        f"({links.get('attachments_missing', 0)} missing, counted as broken)",
    ]
    lines += _listed([f"error: {e['path']}: {e['error']}" for e in r.get("errors", [])], "errors")
    lines += _listed([f"warning: {w['path']}: {w['warning']}" for w in r.get("warnings", [])],
                     "warnings")  # fmt: skip
    return "\n".join(lines)


def took(r: dict[str, Any], now: Callable[[], float] = time.monotonic) -> str:
    """``in 16.2 s (parse 0.3 s, embed 8.1 s, start-up 7.8 s)``: the whole wait since the
    command started, then the stages when they differ enough to matter. Start-up is the rest:
    loading the index and the model, or waiting for the daemon."""
    total = max(now() - STARTED, float(r.get("seconds", 0.0)))
    parts = [(name, float(secs)) for name, secs in r.get("stages", {}).items() if secs >= 0.05]
    rest = total - float(r.get("seconds", 0.0))
    if rest >= 0.05:
        parts.append(("start-up", rest))
    inner = ", ".join(f"{name} {seconds_text(secs)}" for name, secs in parts)
    return f"in {seconds_text(total)}" + (f" ({inner})" if len(parts) > 1 else "")


def seconds_text(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds >= 0.1 else f"{seconds * 1000:.0f} ms"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs:02d} s"


LISTED = 5  # per kind of problem in the text output; --json has every one


def fmt_status(r: dict[str, Any]) -> str:
    lines = [
        f"vault:   {r['vault']}",
        f"index:   {r['data_dir']}",
        f"daemon:  {daemon_line(r.get('daemon'))}",
        f"notes:   {r['notes']}   chunks: {r['chunks']}   waiting for vectors: {r['pending']}",
        f"model:   {r['model']}   last indexed: {r['last_indexed'] or 'never'}",
    ]
    if links := r.get("links"):
        lines.append(f"links:   {links.get('resolved', 0)} resolved, {links.get('broken', 0)} "
                     f"broken; attachments: {links.get('attachments', 0)} found, "
                     f"{links.get('attachments_missing', 0)} missing")  # fmt: skip
    obsidian = r.get("obsidian") or {}
    if obsidian.get("app_json"):
        excluded = ", ".join(obsidian.get("userIgnoreFilters") or []) or "none"
        lines.append(f"obsidian: {obsidian['app_json']}: excluded files: {excluded}; "
                     f"attachments: {obsidian.get('attachmentFolderPath') or 'vault root'}")  # fmt: skip
        if obsidian.get("error"):
            lines.append(f"obsidian: {obsidian['error']}")
    lines += _listed([f"failed:  {f['path']}: {f['error']}" for f in r.get("failed", [])],
                     "failed notes")  # fmt: skip
    lines += _listed([f"invalid frontmatter: {f['path']}" for f in r.get("invalid_frontmatter", [])],
                     "notes with invalid frontmatter (`sidecar lint` gives each one's line)")  # fmt: skip
    lines += _listed([f"warning: {w['path']}: {w['warning']}" for w in r.get("warnings", [])],
                     "warnings")  # fmt: skip
    return "\n".join(lines)


def daemon_line(daemon: dict[str, Any] | None) -> str:
    if not daemon:
        return "none serves this vault (`sidecar serve` starts one); this ran in-process"
    state = "watching the vault" if daemon.get("watching") else "starting"
    return f"serving on {daemon['socket']} (pid {daemon['pid']}, {state})"


def _listed(lines: list[str], what: str) -> list[str]:
    if len(lines) <= LISTED + 1:
        return lines
    return [*lines[:LISTED], f"… and {len(lines) - LISTED} more {what}; --json lists all"]


def fmt_links(r: dict[str, Any]) -> str:
    lines = [f"{r['path']}", "outgoing:"]
    for e in r["outgoing"]:
        mark = "" if e["state"] == "valid" else f"  [{e['state']}]"
        lines.append(f"  {e['line']:>4}  {e['relation']:<10} {e['target'] or e['raw']}{mark}")
    lines.append("incoming:")
    lines += [f"  {e['source']}:{e['line']}  {e['relation']}" for e in r["incoming"]]
    for n in r.get("neighbors", []):
        lines.append(f"  {'  ' * n['depth']}{n['path']} (depth {n['depth']})")
    if r.get("neighbors_truncated"):
        lines.append(MORE_NEIGHBOURS)
    return "\n".join(lines)


def fmt_backlinks(r: dict[str, Any]) -> str:
    lines = [_backlinks_head(r)]
    for b in r["backlinks"]:
        context = " ".join(b["context"].split())[:160]
        lines.append(f"{b['source']}:{b['line']}  [{b['relation']}]  {context}")
    return "\n".join(lines)


def fmt_backlink_sources(r: dict[str, Any]) -> str:
    lines = [_backlinks_head(r)]
    for g in r["sources"]:
        lines.append(f"{g['count']:>4}  {g['source']}  [{', '.join(g['relations'])}]")
    return "\n".join(lines)


def _backlinks_head(r: dict[str, Any]) -> str:
    n, notes = len(r["backlinks"]), len(r["sources"])
    return (f"{n} link{'s' * (n != 1)} from {notes} note{'s' * (notes != 1)} to "
            f"{r['path']}")  # fmt: skip


def fmt_list(key: str) -> Formatter:
    return lambda r: "\n".join(str(x) for x in r[key])


def fmt_steps(r: dict[str, Any]) -> str:
    nodes = r.get("nodes", r.get("path", []))
    if "found" in r and not r["found"]:
        return f"no path from {r['from']} to {r['to']}"
    out = []
    for n in nodes:
        via = n.get("via")
        arrow = {"out": "->", "in": "<-"}.get(n["direction"], "")
        how = f"  ({arrow} {via['relation']})" if via else ""
        out.append(f"{'  ' * n['depth']}{n['path']}{how}")
    if r.get("truncated"):
        out.append(MORE_NEIGHBOURS)
    return "\n".join(out)


def fmt_hubs(r: dict[str, Any]) -> str:
    return "\n".join(
        f"{h['incoming']:>5} in {h['outgoing']:>5} out  {h['path']}" for h in r["hubs"]
    )


def fmt_dangling(r: dict[str, Any]) -> str:
    return "\n".join(
        f"{d['source']}:{d['line']}  {d['raw']}  [{d['state']}]"
        + (f" candidates: {', '.join(d['candidates'])}" if d["candidates"] else "")
        for d in r["dangling"]
    )
