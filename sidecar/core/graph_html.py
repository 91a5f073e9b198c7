"""The graph as one self-contained HTML page: typed edges coloured, lint problems marked.

No CDN, no network: the data sits in the page as JSON and a small inline script lays it out
(a few hundred steps of a force simulation, run once at load, seeded so the same vault draws the
same picture) and draws SVG: wheel to zoom, drag to pan, click a note for its links and problems,
type to find. Works from ``file://`` in any browser, offline, and can be mailed.
"""

from __future__ import annotations

import html
import json
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
        {"id": p, "title": n.title, "tags": list(n.tags),
         "status": str(n.frontmatter.get("status") or ""), "problems": problems.get(p, [])}
        for p, n in sorted(notes.items())
    ]  # fmt: skip
    out_edges = sorted(seen.values(), key=lambda d: (d["s"], d["relation"], d["t"]))
    colours = relation_colours(taxonomy, {d["relation"] for d in out_edges})
    return {"nodes": nodes, "edges": out_edges, "colours": colours}


def render_html(data: Mapping[str, Any], title: str = "Vault graph") -> str:
    payload = json.dumps(data, ensure_ascii=False, sort_keys=True).replace("<", "\\u003c")
    return (
        _PAGE.replace("{{TITLE}}", html.escape(title))
        .replace("{{DATA}}", payload)
        .replace("{{SCRIPT}}", _SCRIPT)
    )


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{TITLE}}</title>
<style>
 html,body{margin:0;height:100%;font:13px system-ui,sans-serif;background:#fff;color:#222}
 #bar{position:fixed;top:0;left:0;right:0;padding:6px 10px;background:#f6f7f9;
      border-bottom:1px solid #ddd;z-index:2}
 #bar input{width:220px} #legend span{margin-right:12px;white-space:nowrap}
 #legend i{display:inline-block;width:18px;height:3px;vertical-align:middle;margin-right:4px}
 svg{position:absolute;top:0;left:0;width:100%;height:100%}
 #info{position:fixed;right:0;top:40px;width:300px;max-height:80%;overflow:auto;background:#fff;
       border:1px solid #ddd;padding:8px;display:none;z-index:2}
 .problem{color:#b00020} .label{font-size:10px;fill:#333;pointer-events:none}
</style></head>
<body>
<div id="bar"><b>{{TITLE}}</b> &nbsp; <input id="find" placeholder="find a note">
 &nbsp; <span id="legend"></span></div>
<svg id="graph"><g id="view"></g></svg>
<div id="info"></div>
<script type="application/json" id="graph-data">{{DATA}}</script>
<script>{{SCRIPT}}</script>
</body></html>
"""

_SCRIPT = r"""
const data = JSON.parse(document.getElementById('graph-data').textContent);
const NS = 'http://www.w3.org/2000/svg';
const W = window.innerWidth || 1200, H = window.innerHeight || 900;
let seed = 7; const rand = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
const nodes = data.nodes.map(n => Object.assign({x: W/2 + (rand()-0.5)*W*0.6,
  y: H/2 + (rand()-0.5)*H*0.6, vx: 0, vy: 0, deg: 0}, n));
const byId = new Map(nodes.map(n => [n.id, n]));
const edges = data.edges.filter(e => byId.has(e.s) && byId.has(e.t));
edges.forEach(e => { byId.get(e.s).deg++; byId.get(e.t).deg++; });
function layout() {
  const n = nodes.length, steps = Math.max(60, Math.min(300, Math.floor(300000 / (n*n + 1))));
  const k = Math.sqrt((W * H) / Math.max(n, 1)) * 0.6;
  for (let s = 0; s < steps; s++) {
    const t = 0.1 * (1 - s / steps) * k;
    for (const a of nodes) { a.vx = 0; a.vy = 0; }
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) {
      const a = nodes[i], b = nodes[j]; let dx = a.x - b.x, dy = a.y - b.y;
      const d2 = Math.max(dx*dx + dy*dy, 0.01); if (d2 > 9*k*k) continue; const f = k * k / d2;
      a.vx += dx * f; a.vy += dy * f; b.vx -= dx * f; b.vy -= dy * f; }
    for (const e of edges) { const a = byId.get(e.s), b = byId.get(e.t);
      const dx = a.x - b.x, dy = a.y - b.y, d = Math.sqrt(dx*dx + dy*dy) || 0.01, f = d / k;
      a.vx -= dx * f; a.vy -= dy * f; b.vx += dx * f; b.vy += dy * f; }
    for (const a of nodes) { a.vx += (W/2 - a.x) * 0.05; a.vy += (H/2 - a.y) * 0.05;
      const v = Math.sqrt(a.vx*a.vx + a.vy*a.vy) || 1, m = Math.min(v, t);
      a.x += a.vx / v * m; a.y += a.vy / v * m; }
  }
  const xs = nodes.map(a => a.x), ys = nodes.map(a => a.y), pad = 60;
  const x0 = Math.min(...xs, 0), x1 = Math.max(...xs, 1), y0 = Math.min(...ys, 0), y1 = Math.max(...ys, 1);
  for (const a of nodes) { a.x = pad + (a.x - x0) / (x1 - x0 || 1) * (W - 2*pad - 300);
    a.y = 40 + pad + (a.y - y0) / (y1 - y0 || 1) * (H - 2*pad - 40); }
}
function el(tag, attrs, parent) { const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]); parent.appendChild(e); return e; }
function draw() {
  const view = document.getElementById('view'), defs = el('defs', {}, view);
  const mark = {}; Object.keys(data.colours).forEach((rel, i) => { mark[rel] = 'arrow-' + i; });
  for (const [rel, c] of Object.entries(data.colours)) {
    const m = el('marker', {id: mark[rel], viewBox: '0 0 10 10', refX: 18, refY: 5,
      markerWidth: 6, markerHeight: 6, orient: 'auto'}, defs);
    el('path', {d: 'M0,0 L10,5 L0,10 z', fill: c}, m); }
  for (const e of edges) { const a = byId.get(e.s), b = byId.get(e.t), c = data.colours[e.relation];
    const line = el('line', {x1: a.x, y1: a.y, x2: b.x, y2: b.y, stroke: c,
      'stroke-width': e.typed ? 2.5 : 1.2, 'marker-end': 'url(#' + mark[e.relation] + ')',
      class: 'edge', 'data-relation': e.relation}, view);
    if (!e.typed && e.relation !== 'link') line.setAttribute('stroke-dasharray', '4 3');
    el('title', {}, line).textContent = e.s + ' ' + e.relation + ' ' + e.t; }
  for (const a of nodes) { const r = 5 + Math.min(12, Math.sqrt(a.deg) * 2);
    const bad = a.problems.length > 0, stale = /superseded|archived|deprecated|obsolete/i.test(a.status);
    const g = el('g', {class: 'node' + (bad ? ' has-problem' : ''), 'data-path': a.id}, view);
    el('circle', {cx: a.x, cy: a.y, r: r, fill: stale ? '#c9ccd1' : '#4c78a8',
      stroke: bad ? '#e00000' : '#ffffff', 'stroke-width': bad ? 4 : 1.5}, g);
    if (bad) el('text', {x: a.x + r + 2, y: a.y - r, fill: '#e00000', 'font-weight': 'bold'}, g).textContent = '!';
    if (nodes.length <= 300) el('text', {x: a.x + r + 3, y: a.y + 4, class: 'label'}, g).textContent = a.title;
    el('title', {}, g).textContent = a.id + (bad ? '\n' + a.problems.map(p => p.rule).join(', ') : '');
    g.addEventListener('click', () => show(a)); }
}
function show(a) { const box = document.getElementById('info'); box.style.display = 'block';
  const esc = s => String(s).replace(/[&<>"]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
  const links = edges.filter(e => e.s === a.id || e.t === a.id)
    .map(e => '<li>' + esc(e.s === a.id ? e.relation + ' → ' + e.t : e.s + ' → ' + e.relation) + '</li>');
  const probs = a.problems.map(p => '<li class="problem">' + esc(p.severity + ' ' + p.rule + ': ' + (p.detail || '')) + '</li>');
  box.innerHTML = '<b>' + esc(a.title) + '</b><br><small>' + esc(a.id) + '</small>' +
    (a.status ? '<br>status: ' + esc(a.status) : '') + '<ul>' + probs.join('') + '</ul><ul>' + links.join('') + '</ul>'; }
function legend() { const box = document.getElementById('legend');
  for (const [rel, c] of Object.entries(data.colours)) { const s = document.createElement('span');
    s.innerHTML = '<i style="background:' + c + '"></i>'; s.appendChild(document.createTextNode(rel)); box.appendChild(s); }
  const p = document.createElement('span'); p.className = 'problem'; p.textContent = '● ! lint problem'; box.appendChild(p); }
document.getElementById('find').addEventListener('input', ev => { const q = ev.target.value.toLowerCase();
  document.querySelectorAll('.node').forEach(g => { g.style.opacity = !q || g.dataset.path.toLowerCase().includes(q) ? 1 : 0.15; }); });
function panZoom() { const svg = document.getElementById('graph'), view = document.getElementById('view');
  let k = 1, tx = 0, ty = 0, drag = null; const apply = () => view.setAttribute('transform', `translate(${tx},${ty}) scale(${k})`);
  svg.addEventListener('wheel', ev => { ev.preventDefault(); const f = ev.deltaY < 0 ? 1.2 : 1 / 1.2;
    tx = ev.clientX - (ev.clientX - tx) * f; ty = ev.clientY - (ev.clientY - ty) * f; k *= f; apply(); }, {passive: false});
  svg.addEventListener('mousedown', ev => { drag = [ev.clientX - tx, ev.clientY - ty]; });
  window.addEventListener('mousemove', ev => { if (drag) { tx = ev.clientX - drag[0]; ty = ev.clientY - drag[1]; apply(); } });
  window.addEventListener('mouseup', () => { drag = null; }); }
layout(); draw(); legend(); panZoom();
"""
