"""The graph as one self-contained HTML page: the data it carries, and the page put together.

No CDN, no network: the data sits in the page as JSON beside the script
(``sidecar/assets/graph/graph.js``) and the vendored d3-force that lays it out. Works from
``file://`` in any browser, offline, and can be mailed. What the page does is in graph.js.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sidecar.core.model import Edge, NoteRecord
from sidecar.core.relations import LINK, Taxonomy

PALETTE = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#17becf", "#bcbd22", "#7f7f7f")  # fmt: skip
LINK_COLOUR = "#b9c0c8"
UNTYPED_COLOUR = "#8a8f96"


def relation_colours(taxonomy: Taxonomy, used: Iterable[str]) -> dict[str, str]:
    """A colour per canonical typed relation in use (stable: taxonomy order), grey otherwise."""
    used = set(used)
    typed = [r for r in (*taxonomy.forward, *sorted(taxonomy.symmetric)) if r in used]
    out = {r: PALETTE[i % len(PALETTE)] for i, r in enumerate(typed)}
    for r in sorted(used - set(out)):
        out[r] = LINK_COLOUR if r == LINK else UNTYPED_COLOUR
    return out


def graph_data(
    notes: Mapping[str, NoteRecord], edges: Iterable[Edge], taxonomy: Taxonomy,
    findings: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:  # fmt: skip
    """Nodes, merged edges (one per canonical fact) and the problems of each note."""
    problems: dict[str, list[dict[str, Any]]] = {}
    for f in findings:
        problems.setdefault(str(f.get("note")), []).append(
            {k: f.get(k) for k in ("rule", "severity", "detail", "line", "target")}
        )
    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    for e in edges:
        if e.state != "valid" or not e.target or e.target == e.source:
            continue
        s, rel, t = taxonomy.canonical(e.source, e.relation, e.target)
        key = (s, rel, t)
        if key not in seen:
            seen[key] = {"s": s, "t": t, "relation": rel, "typed": taxonomy.is_typed(rel),
                         "stated": []}  # fmt: skip
        seen[key]["stated"].append(e.relation)
    nodes = [
        {"id": p, "title": n.title, "tags": list(n.tags), "folder": group_of(p),
         "status": str(n.frontmatter.get("status") or ""), "problems": problems.get(p, [])}
        for p, n in sorted(notes.items())
    ]  # fmt: skip
    out_edges = sorted(seen.values(), key=lambda d: (d["s"], d["relation"], d["t"]))
    colours = relation_colours(taxonomy, {d["relation"] for d in out_edges})
    return {"nodes": nodes, "edges": out_edges, "colours": colours}


def group_of(path: str) -> str:
    """What the page colours and gathers a note by: its top folder, or for a flat Dendron-style
    vault (``community.events.reading-series.md``) the first part of its dotted name."""
    if "/" in path:
        return path.split("/", 1)[0]
    stem = path.removesuffix(".md")
    return stem.split(".", 1)[0] if "." in stem else ""


def render_html(data: Mapping[str, Any], title: str, assets: Mapping[str, str]) -> str:
    """The page: ``assets`` holds ``page`` (the HTML template), ``script`` (ours) and
    ``vendor`` (d3-force and its parts, with their licence)."""
    payload = json.dumps(data, ensure_ascii=False, sort_keys=True).replace("<", "\\u003c")
    fills = {"TITLE": html.escape(title), "VENDOR": assets["vendor"], "SCRIPT": assets["script"],
             "DATA": payload}  # fmt: skip
    # one pass: a title or a note holding "{{SCRIPT}}" is not filled in again
    return re.sub(r"\{\{([A-Z]+)\}\}", lambda m: fills.get(m.group(1), m.group(0)), assets["page"])
