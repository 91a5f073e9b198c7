"""Commands for typed relations and the graph's views: ``graph traverse``, ``graph current``,
``graph export``, ``mentions``, ``edges``; and the text form of graph-aware search results."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from sidecar.cli import output
from sidecar.cli.base import common, fail, run_method
from sidecar.errors import UsageError


@click.command()
@common
@click.argument("note")
@click.option("--relation", "-r", required=True, help="Relation to follow, e.g. depends_on.")
@click.option("--depth", type=click.IntRange(1, 5), default=1, show_default=True)
@click.option("--inverse", is_flag=True, help="Walk the relation backwards.")
def traverse(
    vault: str | None, as_json: bool, note: str, relation: str, depth: int, inverse: bool
) -> None:
    """Notes reached from NOTE along one typed relation (either spelling counts)."""
    params = {"note": note, "relation": relation, "depth": depth, "inverse": inverse}
    run_method(vault, as_json, "graph.traverse", params, fmt_traverse)


@click.command()
@common
@click.argument("note")
def current(vault: str | None, as_json: bool, note: str) -> None:
    """Follow supersedes from NOTE to the newest note (reports a cycle instead of looping)."""
    run_method(vault, as_json, "graph.current", {"note": note}, fmt_current)


@click.command()
@common
@click.option("--format", "fmt", type=click.Choice(["json", "html"]), default="json",
              show_default=True, help="JSON (nodes and edges) or a self-contained HTML page.")  # fmt: skip
@click.option("--output", "-o", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write to this file instead of stdout.")  # fmt: skip
def export(vault: str | None, as_json: bool, fmt: str, out: Path | None) -> None:
    """The whole graph, as JSON or as an HTML page that draws it."""
    method = "graph.html" if fmt == "html" else "graph.export"
    if out is None and fmt == "json":
        run_method(vault, True, method, {})
    else:
        run_method(vault, as_json, method, {}, _writer(fmt, out, as_json))


def _writer(fmt: str, out: Path | None, as_json: bool) -> output.Formatter:
    def write(r: dict[str, Any]) -> str:
        text = r["html"] if fmt == "html" else json.dumps(r, indent=2, ensure_ascii=False)
        if out is None:
            sys.stdout.write(text)
            return ""
        try:
            out.write_text(text, "utf-8")
        except OSError as exc:
            fail(UsageError(f"cannot write {out}: {exc}"), as_json)
        return f"wrote {out}" + (
            f" ({r['nodes']} notes, {r['edges']} edges)" if "nodes" in r else ""
        )

    return write


@click.command()
@common
@click.argument("note")
def mentions(vault: str | None, as_json: bool, note: str) -> None:
    """Notes that name NOTE (title, file name, aliases) without linking it, with the line."""
    run_method(vault, as_json, "note.mentions", {"note": note}, fmt_mentions)


@click.command()
@common
@click.argument("note", required=False)
def edges(vault: str | None, as_json: bool, note: str | None) -> None:
    """Semantic edges of NOTE (link context, cluster, strength); without NOTE, the clusters."""
    run_method(vault, as_json, "note.edges", {"note": note}, fmt_edges)


# -- text output ------------------------------------------------------------------------------


def fmt_traverse(r: dict[str, Any]) -> str:
    n = len(r["nodes"])
    lines = [f"{r['root']}  ({r['relation']}, {n} note{'s' * (n != 1)})"]
    for n in r["nodes"]:
        where = ", ".join(f"{s['path']}:{s['line']}" for s in n["via"]["stated"])
        lines.append(f"{'  ' * n['depth']}{n['path']}  <- {n['via']['source']}  [{where}]")
    return "\n".join(lines)


def fmt_current(r: dict[str, Any]) -> str:
    lines = [" -> ".join(r["chain"])]
    if r.get("cycle"):
        lines.append("supersedes cycle: " + " -> ".join(r["cycle"]) + " (no current note)")
    else:
        lines.append(f"current: {r['current']}")
    if r.get("alternatives"):
        lines.append("also newest: " + ", ".join(r["alternatives"]))
    return "\n".join(lines)


def fmt_mentions(r: dict[str, Any]) -> str:
    lines = [f"{len(r['mentions'])} unlinked mentions of {r['path']}"]
    lines += [f"{m['source']}:{m['line']}  {m['text']}" for m in r["mentions"]]
    return "\n".join(lines)


def _edge_line(e: dict[str, Any]) -> str:
    strength = "" if e["strength"] is None else f"  strength {e['strength']:.2f}"
    label = f"  [{e['label']}]" if e.get("label") else ""
    return f"{e['source']}:{e['line']} -> {e['target']}{label}{strength}"


def fmt_edges(r: dict[str, Any]) -> str:
    lines = []
    for e in r["edges"] if isinstance(r.get("edges"), list) else []:
        lines.append(_edge_line(e))
        lines.append("       " + " ".join(e["context"].split())[:160])
    lines += [f"cluster {c['cluster']}: {c['label']} ({c['size']} edges)" for c in r["clusters"]]
    return "\n".join(lines)


def _stale_mark(hit: dict[str, Any]) -> str:
    if hit.get("superseded_by"):
        current = hit.get("current") or "a cycle"
        return f"  (superseded; current: {current})"
    return f"  (status: {hit['status']})" if hit.get("status") else ""


def fmt_search(r: dict[str, Any]) -> str:
    """Results marked when stale, then the graph context and the edge results."""
    lines = [partial_note(r["semantic_coverage"])] if r.get("semantic_coverage") else []
    if not r["results"] and not r.get("edge_results"):
        return "\n".join([*lines, f"no results for {r['query']!r}"])
    for hit in r["results"]:
        head = f"  [{hit['heading']}]" if hit["heading"] else ""
        lines.append(f"{hit['score']:.3f}  {hit['path']}:{hit['start_line']}{head}"
                     f"{_stale_mark(hit)}")  # fmt: skip
        lines.append(f"       {hit['snippet']}")
        if "explain" in hit:
            lines.append(f"       {hit['explain']}")
    if r.get("graph_context"):
        lines.append("graph context:")
    for c in r.get("graph_context", []):
        lines.append(f"  {c['hops']} hop  {c['path']}:{c['start_line']}  from {c['linked_from']} "
                     f"[{c['relation']}] \"{c['link_text']}\"{_stale_mark(c)}")  # fmt: skip
    for e in r.get("edge_results", []):
        lines.append(f"{e['score']:.3f}  {_edge_line(e)}")
        lines.append("       " + " ".join(e["context"].split())[:160])
    return "\n".join(lines)


def partial_note(c: dict[str, int]) -> str:
    return (f"note: semantic results cover {c['embedded']} of {c['chunks']} chunks so far (the "
            "rest are still being embedded; `sidecar status` shows progress); word matches "
            "cover every note")  # fmt: skip


def graph_search_options(fn: Any) -> Any:
    """The search command's graph options; their names are the ``search`` method's params."""
    fn = click.option(
        "--expand",
        type=click.IntRange(0, 3),
        default=0,
        show_default=True,
        help="Add up to 10 linked notes (this many hops away) as graph context.",
    )(fn)
    fn = click.option(
        "--hops",
        type=click.IntRange(1, 3),
        default=1,
        show_default=True,
        help="How far --boost-links reaches.",
    )(fn)
    fn = click.option(
        "--boost-links",
        is_flag=True,
        help="Boost notes linked to the top results, nearer ones more.",
    )(fn)
    fn = click.option("--include-superseded", is_flag=True,
                      help="Do not step superseded/archived notes back.")(fn)  # fmt: skip
    return fn
