// The vault's graph on one canvas: d3-force lays it out (Barnes-Hut, so 10k notes stay
// interactive), everything else is here. State lives in the URL hash (#focus=PATH&depth=2&
// folder=Notes&relations=link,supersedes&severity=error&only=1&colour=tag), so a view can be
// bookmarked and a test can open one. The page says what it drew in <body data-drawn-nodes>.
'use strict';
const data = JSON.parse(document.getElementById('graph-data').textContent);
const PALETTE = ['#4c78a8', '#f58518', '#54a24b', '#b279a2', '#e45756', '#72b7b2', '#eeca3b',
  '#9d755d', '#ff9da6', '#79706e', '#8cd17d'];
const OTHER = '#b8bec6', STALE = '#d5d8dc';
const MARK = {error: '#e00000', warning: '#f08c00', info: '#7f93a8'};
const RANK = {info: 1, warning: 2, error: 3, off: 99};
const started = performance.now();

// -- the data, indexed ---------------------------------------------------------------------------
const nodes = data.nodes.map((n, i) => Object.assign({i, deg: 0, worst: 0}, n));
const byId = new Map(nodes.map(n => [n.id, n]));
const edges = data.edges.filter(e => byId.has(e.s) && byId.has(e.t))
  .map(e => Object.assign({}, e, {source: byId.get(e.s), target: byId.get(e.t)}));
const adjacent = nodes.map(() => []);
for (const e of edges) {
  e.source.deg++; e.target.deg++;
  adjacent[e.source.i].push(e); adjacent[e.target.i].push(e);
}
for (const n of nodes) n.worst = Math.max(0, ...n.problems.map(p => RANK[p.severity] || 0));
const hubs = nodes.slice().sort((a, b) => b.deg - a.deg || (a.id < b.id ? -1 : 1));
const stale = n => /superseded|archived|deprecated|obsolete/i.test(n.status || '');
const radius = n => 3 + Math.min(9, Math.sqrt(n.deg) * 1.5);

// -- the view's state (from the hash, written back on every change) ----------------------------
const state = {focus: '', depth: 1, folder: '', relations: null, severity: 'warning', only: false,
  colour: 'folder'};
function readHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  state.focus = h.get('focus') || '';
  state.depth = Math.max(1, Math.min(5, parseInt(h.get('depth') || '1', 10) || 1));
  state.folder = h.get('folder') || '';
  state.relations = h.has('relations') ? new Set(h.get('relations').split(',').filter(Boolean)) : null;
  state.severity = RANK[h.get('severity')] ? h.get('severity') : 'warning';
  state.only = h.get('only') === '1';
  state.colour = ['folder', 'tag', 'none'].includes(h.get('colour')) ? h.get('colour') : 'folder';
}
function writeHash() {
  const h = new URLSearchParams();
  if (state.focus) { h.set('focus', state.focus); h.set('depth', state.depth); }
  if (state.folder) h.set('folder', state.folder);
  if (state.relations) h.set('relations', [...state.relations].join(','));
  if (state.severity !== 'warning') h.set('severity', state.severity);
  if (state.only) h.set('only', '1');
  if (state.colour !== 'folder') h.set('colour', state.colour);
  history.replaceState(null, '', h.toString() ? '#' + h.toString() : location.pathname);
}

// -- which nodes and edges are drawn ---------------------------------------------------------------
let shown = new Set(nodes), shownEdges = edges;
const relationOn = e => !state.relations || state.relations.has(e.relation);
const marked = n => n.worst >= RANK[state.severity];
function select() {
  let keep = nodes.filter(n => (!state.folder || n.folder === state.folder) && (!state.only || marked(n)));
  const root = byId.get(state.focus);
  if (root) {  // the note's neighbourhood, DEPTH steps along the relations shown, either way
    const within = new Set(keep), seen = new Set([root]);
    let frontier = [root];
    for (let d = 0; d < state.depth && frontier.length; d++) {
      const next = [];
      for (const n of frontier) for (const e of adjacent[n.i]) {
        if (!relationOn(e)) continue;
        const m = e.source === n ? e.target : e.source;
        if (!seen.has(m) && within.has(m)) { seen.add(m); next.push(m); }
      }
      frontier = next;
    }
    keep = [...seen];
  }
  shown = new Set(keep);
  shownEdges = edges.filter(e => relationOn(e) && shown.has(e.source) && shown.has(e.target));
  document.body.dataset.drawnNodes = shown.size;
  document.body.dataset.drawnEdges = shownEdges.length;
  document.getElementById('stats').textContent = `showing ${shown.size.toLocaleString()} of ` +
    `${nodes.length.toLocaleString()} notes, ${shownEdges.length.toLocaleString()} links`;
  const bar = document.getElementById('focusbar');
  bar.style.display = root ? '' : 'none';
  if (root) document.getElementById('focusname').textContent = root.title;
}

// -- colours: the commonest folders (or tags) get a colour each, the rest one grey ---------------
let groupColour = new Map();
const groupOf = n => state.colour === 'tag' ? (n.tags[0] || '') : state.colour === 'folder' ? n.folder : '';
function colours() {
  const counts = new Map();
  for (const n of nodes) { const g = groupOf(n); counts.set(g, (counts.get(g) || 0) + 1); }
  const top = [...counts].filter(([g]) => g).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  groupColour = new Map(top.slice(0, PALETTE.length).map(([g], i) => [g, PALETTE[i]]));
  legend(top.length > PALETTE.length);
}
const fill = n => stale(n) ? STALE : state.colour === 'none' ? PALETTE[0] : groupColour.get(groupOf(n)) || OTHER;

// -- layout -----------------------------------------------------------------------------------------
// Each folder starts around its own point on a circle, so the very first frame already reads by
// folder; the simulation then pulls linked notes together, a few ticks per frame.
let seed = 7;  // seeded: the same vault starts from the same picture
const rand = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
// A weak pull towards the folder's point keeps each folder together in a big vault.
const folders = [...new Set(nodes.map(n => n.folder))].sort();
const anchor = new Map();
folders.forEach((f, k) => {
  const members = nodes.filter(n => n.folder === f), a = 2 * Math.PI * k / folders.length;
  const R = folders.length > 1 ? 10 * Math.sqrt(nodes.length) : 0;
  anchor.set(f, [R * Math.cos(a), R * Math.sin(a)]);
  const spread = 6 * Math.sqrt(members.length);
  members.forEach(n => { const r = spread * Math.sqrt(rand()), t = 2 * Math.PI * rand();
    n.x = R * Math.cos(a) + r * Math.cos(t); n.y = R * Math.sin(a) + r * Math.sin(t); });
});
const pull = nodes.length > 200 ? 0.06 : 0.03;

// The simulation, written once for both places it runs: a Web Worker (so panning, hovering and
// filtering stay smooth while 10k notes settle; a tick takes ~100 ms there), else this thread.
function makeSim(d3, ns, links, anchors, pull) {
  return d3.forceSimulation(ns)
    .force('link', d3.forceLink(links).distance(30)
      .strength(e => 0.5 / Math.max(1, Math.min(e.source.deg, e.target.deg))))
    .force('charge', d3.forceManyBody().strength(-40).theta(0.9).distanceMax(600))
    .force('x', d3.forceX(n => anchors[n.folder][0]).strength(pull))
    .force('y', d3.forceY(n => anchors[n.folder][1]).strength(pull))
    .alphaDecay(ns.length > 3000 ? 0.04 : 0.025).stop();
}
function workerMain() {
  onmessage = ev => {
    const {ns, links, anchors, pull} = ev.data;
    const sim = makeSim(self.d3, ns, links, anchors, pull);
    while (sim.alpha() > sim.alphaMin()) {
      const until = performance.now() + 60;
      do sim.tick(); while (performance.now() < until && sim.alpha() > sim.alphaMin());
      const xy = new Float32Array(ns.length * 2);
      ns.forEach((n, i) => { xy[2 * i] = n.x; xy[2 * i + 1] = n.y; });
      postMessage({xy, done: sim.alpha() <= sim.alphaMin()}, [xy.buffer]);
    }
  };
}
const anchors = Object.fromEntries(anchor);
const simNodes = () => nodes.map(n => ({x: n.x, y: n.y, deg: n.deg, folder: n.folder}));
const simLinks = () => edges.map(e => ({source: e.source.i, target: e.target.i}));
let sim = null, layoutDone = false;
function settled() {
  layoutDone = true; fitted = true;
  document.body.dataset.settledMs = Math.round(performance.now() - started);
}
function startLayout() {
  try {
    const src = document.getElementById('vendor').textContent + '\n' + makeSim.toString() +
      '\n(' + workerMain.toString() + ')();';
    const worker = new Worker(URL.createObjectURL(new Blob([src], {type: 'text/javascript'})));
    worker.onmessage = ev => {
      const xy = ev.data.xy;
      nodes.forEach((n, i) => { n.x = xy[2 * i]; n.y = xy[2 * i + 1]; });
      if (!fitted) fit([...shown]);  // follow the layout until the user takes the view
      sceneDirty = true;
      if (ev.data.done) { settled(); worker.terminate(); }
    };
    worker.onerror = () => { worker.terminate(); sim = sim || mainThreadSim(); };
    worker.postMessage({ns: simNodes(), links: simLinks(), anchors, pull});
    document.body.dataset.layout = 'worker';
  } catch (err) {
    sim = mainThreadSim();
  }
}
function mainThreadSim() {
  document.body.dataset.layout = 'page';
  return makeSim(d3, nodes, simLinks(), anchors, pull);
}

// -- drawing ------------------------------------------------------------------------------------
const canvas = document.getElementById('graph'), ctx = canvas.getContext('2d');
let W = 0, H = 0, view = {k: 1, x: 0, y: 0}, hover = null, picked = null, fitted = false;
// Two layers: the scene (every edge, note, mark and label: ~25 ms of script and more of raster
// at 10k notes) is drawn into an offscreen canvas only when the layout or a filter changed or
// the view came to rest; panning, zooming and hovering only copy it, moved, and draw the few
// things in play on top. So the page answers at frame rate however many notes it holds.
const scene = document.createElement('canvas'), sctx = scene.getContext('2d');
let sceneView = null, sceneAt = -1e9, sceneCost = 0;
let sceneDirty = true, overlayDirty = true, lastMove = -1e9;
const dpr = window.devicePixelRatio || 1;
function resize() {
  W = window.innerWidth || 1200; H = window.innerHeight || 900;
  for (const c of [canvas, scene]) { c.width = W * dpr; c.height = H * dpr; }
  canvas.style.width = W + 'px'; canvas.style.height = H + 'px';
  sceneDirty = true;
}
function viewMoved() { lastMove = performance.now(); overlayDirty = true; fitted = true; }
function fit(list) {
  if (!list.length) return;
  // the middle 98% of the notes: a few unlinked ones drifting far off should not shrink the rest
  const xs = list.map(n => n.x).sort((a, b) => a - b), ys = list.map(n => n.y).sort((a, b) => a - b);
  const lo = Math.floor((list.length - 1) * 0.01), hi = Math.ceil((list.length - 1) * 0.99);
  const x0 = xs[lo], x1 = xs[hi], y0 = ys[lo], y1 = ys[hi];
  const top = 44, pad = 30, w = W - 2 * pad, h = H - top - 2 * pad - 80;  // 80: the legend
  view.k = Math.min(4, w / Math.max(x1 - x0, 1), h / Math.max(y1 - y0, 1));
  view.x = pad + w / 2 - view.k * (x0 + x1) / 2; view.y = top + pad + h / 2 - view.k * (y0 + y1) / 2;
}
const sx = n => view.x + view.k * n.x, sy = n => view.y + view.k * n.y;
function labelled() {
  // hubs always (more as you zoom in), every note when few are shown, and the ones in play
  const out = new Set(), room = Math.floor(12 * view.k * view.k) + 12;
  if (shown.size <= 150) shown.forEach(n => out.add(n));
  for (const n of hubs) { if (out.size >= room + 8) break; if (shown.has(n) && n.deg > 1) out.add(n); }
  return out;
}
function drawScene() {
  const t = performance.now(), ctx = sctx;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0); ctx.clearRect(0, 0, W, H);
  const byColour = new Map();
  for (const e of shownEdges) {
    const c = data.colours[e.relation] || OTHER;
    if (!byColour.has(c)) byColour.set(c, {typed: [], plain: []});
    byColour.get(c)[e.typed ? 'typed' : 'plain'].push(e);
  }
  ctx.globalAlpha = shownEdges.length > 5000 ? 0.35 : 0.7;
  for (const [c, group] of byColour) for (const kind of ['plain', 'typed']) {
    if (!group[kind].length) continue;
    ctx.strokeStyle = c; ctx.lineWidth = kind === 'typed' ? 2 : 0.8; ctx.beginPath();
    for (const e of group[kind]) { ctx.moveTo(sx(e.source), sy(e.source)); ctx.lineTo(sx(e.target), sy(e.target)); }
    ctx.stroke();
  }
  ctx.globalAlpha = 1;
  const scale = Math.max(0.6, Math.min(2, Math.sqrt(view.k)));
  const byFill = new Map();
  for (const n of shown) { const f = fill(n); if (!byFill.has(f)) byFill.set(f, []); byFill.get(f).push(n); }
  for (const [f, list] of byFill) {
    ctx.fillStyle = f; ctx.beginPath();
    for (const n of list) { const r = radius(n) * scale; ctx.moveTo(sx(n) + r, sy(n)); ctx.arc(sx(n), sy(n), r, 0, 2 * Math.PI); }
    ctx.fill();
  }
  for (const sev of ['info', 'warning', 'error']) {  // worst last, so it is the one on top
    if (RANK[sev] < RANK[state.severity]) continue;
    ctx.strokeStyle = MARK[sev]; ctx.lineWidth = sev === 'info' ? 1.5 : 2.5; ctx.beginPath();
    for (const n of shown) if (n.worst === RANK[sev]) {
      const r = radius(n) * scale + 2.5; ctx.moveTo(sx(n) + r, sy(n)); ctx.arc(sx(n), sy(n), r, 0, 2 * Math.PI); }
    ctx.stroke();
  }
  ctx.font = '11px system-ui, sans-serif'; ctx.lineWidth = 3; ctx.strokeStyle = 'rgba(255,255,255,.9)';
  ctx.fillStyle = '#222';
  const taken = [];  // label boxes drawn so far: a label that would overlap one is left out
  for (const n of labelled()) {
    const x = sx(n) + radius(n) * scale + 3, y = sy(n) + 4, w = ctx.measureText(n.title).width;
    const box = [x, y - 11, x + w, y + 3];
    if (taken.some(b => box[0] < b[2] && b[0] < box[2] && box[1] < b[3] && b[1] < box[3])) continue;
    taken.push(box); ctx.strokeText(n.title, x, y); ctx.fillText(n.title, x, y); }
  sceneView = {k: view.k, x: view.x, y: view.y};
  sceneAt = performance.now(); sceneCost = sceneAt - t; sceneDirty = false; overlayDirty = true;
  document.body.dataset.sceneMs = Math.round(sceneCost);
}
function present() {  // the scene where the view now is, and the notes in play on top
  const f = view.k / sceneView.k;
  ctx.setTransform(1, 0, 0, 1, 0, 0); ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.setTransform(f, 0, 0, f, dpr * (view.x - f * sceneView.x), dpr * (view.y - f * sceneView.y));
  ctx.drawImage(scene, 0, 0);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const scale = Math.max(0.6, Math.min(2, Math.sqrt(view.k)));
  ctx.font = '11px system-ui, sans-serif';
  for (const n of [hover, picked, byId.get(state.focus)]) if (n && shown.has(n)) {
    ctx.strokeStyle = '#111'; ctx.lineWidth = 2; ctx.beginPath();
    ctx.arc(sx(n), sy(n), radius(n) * scale + 5, 0, 2 * Math.PI); ctx.stroke();
    const x = sx(n) + radius(n) * scale + 7, y = sy(n) + 4;
    ctx.lineWidth = 3; ctx.strokeStyle = 'rgba(255,255,255,.95)'; ctx.strokeText(n.title, x, y);
    ctx.fillStyle = '#000'; ctx.fillText(n.title, x, y); }
  overlayDirty = false;
}

// -- the loop: a few layout ticks per frame while the layout moves, a redraw when anything did --
let frames = 0, panning = false;
window.graphFrames = () => frames;  // for benchmarks: frames drawn so far
window.graphPan = on => { panning = on; };  // for benchmarks: pan a pixel a frame
function frame() {
  if (sim && !layoutDone) {  // no worker: a few ticks per frame here
    const until = performance.now() + 12;
    do sim.tick(); while (performance.now() < until && sim.alpha() > sim.alphaMin());
    if (!fitted) fit([...shown]);
    sceneDirty = true;
    if (sim.alpha() <= sim.alphaMin()) settled();
  }
  if (panning) { view.x += 1; viewMoved(); }
  const now = performance.now(), moving = now - lastMove < 150;
  if (!moving && sceneView && (view.k !== sceneView.k || view.x !== sceneView.x || view.y !== sceneView.y)) sceneDirty = true;
  // a scene costs its time again: while the layout moves, redraw it at most a quarter of the time
  if (sceneDirty && !moving && now - sceneAt > 3 * sceneCost) { drawScene(); present(); }
  else if (overlayDirty) present();
  frames++;
  requestAnimationFrame(frame);
}

// -- interaction ------------------------------------------------------------------------------
function nearest(px, py) {
  let best = null, bestD = 14 * 14;
  for (const n of shown) { const dx = sx(n) - px, dy = sy(n) - py, d = dx * dx + dy * dy;
    if (d < bestD) { best = n; bestD = d; } }
  return best;
}
const esc = s => String(s).replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]));
function show(n) {
  picked = n; overlayDirty = true;
  const box = document.getElementById('info');
  if (!n) { box.style.display = 'none'; return; }
  box.style.display = 'block';
  const links = adjacent[n.i].map(e => { const out = e.source === n, other = out ? e.target : e.source;
    return `<li>${out ? '' : '← '}${esc(e.relation)} ${out ? '→ ' : ''}<a data-go="${esc(other.id)}">${esc(other.title)}</a></li>`; });
  const probs = n.problems.map(p => `<li class="${esc(p.severity)}">${esc(p.severity)} ${esc(p.rule)}: ${esc(p.detail || '')}</li>`);
  box.innerHTML = `<b>${esc(n.title)}</b><br><small>${esc(n.id)}</small>` +
    (n.status ? `<br>status: ${esc(n.status)}` : '') +
    `<br><button id="focushere">focus here</button> <button id="closeinfo">close</button>` +
    `<ul>${probs.join('')}</ul><ul>${links.join('')}</ul>`;
  document.getElementById('focushere').onclick = () => { state.focus = n.id; changed(true); };
  document.getElementById('closeinfo').onclick = () => show(null);
  box.querySelectorAll('a[data-go]').forEach(a => { a.onclick = () => centre(byId.get(a.dataset.go)); });
}
function centre(n) {
  if (!n) return;
  if (!shown.has(n)) { state.focus = ''; state.folder = ''; state.only = false; changed(false); }
  view.k = Math.max(view.k, 1.5); view.x = W / 2 - view.k * n.x; view.y = H / 2 - view.k * n.y;
  viewMoved(); show(n);
}
function find(text) {
  const q = text.trim().toLowerCase();
  if (!q) return null;
  return nodes.find(n => n.title.toLowerCase() === q || n.id.toLowerCase() === q) ||
    nodes.find(n => n.title.toLowerCase().startsWith(q)) ||
    nodes.find(n => n.id.toLowerCase().includes(q)) || null;
}
function changed(refit) {
  writeHash(); select(); colours(); controls();
  if (refit) { fit([...shown]); fitted = true; }
  sceneDirty = true;
}
function controls() {
  document.getElementById('folder').value = state.folder;
  document.getElementById('colour').value = state.colour;
  document.getElementById('severity').value = state.severity;
  document.getElementById('only').checked = state.only;
  document.getElementById('depth').value = state.depth;
}
function legend(more) {
  const box = document.getElementById('legend'); box.innerHTML = '';
  const row = (title, items) => { const b = document.createElement('div');
    b.innerHTML = `<b>${title}</b>` + items.join(''); box.appendChild(b); return b; };
  const groups = [...groupColour].map(([g, c]) => `<span><i style="background:${c}"></i>${esc(g || '(vault root)')}</span>`);
  if (more) groups.push(`<span><i style="background:${OTHER}"></i>other</span>`);
  if (state.colour !== 'none') row(state.colour === 'tag' ? 'tags' : 'folders', groups);
  const rels = row('relations', Object.entries(data.colours).map(([r, c]) =>
    `<label><input type="checkbox" data-rel="${esc(r)}" ${!state.relations || state.relations.has(r) ? 'checked' : ''}>` +
    `<i class="line" style="background:${c}"></i>${esc(r)}</label> `));
  rels.querySelectorAll('input[data-rel]').forEach(cb => { cb.onchange = () => {
    const on = [...rels.querySelectorAll('input[data-rel]')].filter(x => x.checked).map(x => x.dataset.rel);
    state.relations = on.length === Object.keys(data.colours).length ? null : new Set(on); changed(false); }; });
  row('lint', ['error', 'warning', 'info'].filter(s => RANK[s] >= RANK[state.severity])
    .map(s => `<span class="${s}"><i style="background:#fff;border:2px solid ${MARK[s]}"></i>${s}</span>`));
}
function wire() {
  const folderSel = document.getElementById('folder');
  for (const f of folders.filter(Boolean)) { const o = document.createElement('option'); o.value = o.textContent = f; folderSel.appendChild(o); }
  const list = document.getElementById('titles');
  list.innerHTML = hubs.slice(0, 5000).map(n => `<option value="${esc(n.title)}">`).join('');
  folderSel.onchange = () => { state.folder = folderSel.value; changed(true); };
  document.getElementById('colour').onchange = ev => { state.colour = ev.target.value; changed(false); };
  document.getElementById('severity').onchange = ev => { state.severity = ev.target.value; changed(false); };
  document.getElementById('only').onchange = ev => { state.only = ev.target.checked; changed(true); };
  document.getElementById('depth').onchange = ev => { state.depth = Math.max(1, Math.min(5, +ev.target.value || 1)); changed(true); };
  document.getElementById('unfocus').onclick = () => { state.focus = ''; changed(true); };
  const input = document.getElementById('find');
  input.addEventListener('keydown', ev => { if (ev.key === 'Enter') centre(find(input.value)); });
  input.addEventListener('change', () => { const n = find(input.value); if (n && n.title === input.value) centre(n); });
  window.addEventListener('hashchange', () => { readHash(); changed(true); });
  window.addEventListener('resize', resize);
  let drag = null, moved = false;
  canvas.addEventListener('mousedown', ev => { drag = [ev.clientX - view.x, ev.clientY - view.y]; moved = false; });
  window.addEventListener('mouseup', ev => { if (drag && !moved) show(nearest(ev.clientX, ev.clientY)); drag = null; });
  canvas.addEventListener('mousemove', ev => {
    if (drag) { view.x = ev.clientX - drag[0]; view.y = ev.clientY - drag[1]; moved = true; viewMoved(); return; }
    const n = nearest(ev.clientX, ev.clientY), tip = document.getElementById('tip');
    if (n !== hover) { hover = n; overlayDirty = true; }
    if (!n) { tip.style.display = 'none'; return; }
    const worst = n.problems.filter(p => RANK[p.severity] >= RANK[state.severity]);
    tip.innerHTML = `<b>${esc(n.title)}</b><br>${esc(n.id)}` + (worst.length ? '<br>' + worst.map(p => esc(p.severity + ' ' + p.rule)).join(', ') : '');
    tip.style.left = (ev.clientX + 14) + 'px'; tip.style.top = (ev.clientY + 14) + 'px'; tip.style.display = 'block';
  });
  canvas.addEventListener('wheel', ev => { ev.preventDefault(); const f = ev.deltaY < 0 ? 1.2 : 1 / 1.2;
    view.x = ev.clientX - (ev.clientX - view.x) * f; view.y = ev.clientY - (ev.clientY - view.y) * f; view.k *= f;
    viewMoved(); }, {passive: false});
}

readHash(); resize(); wire(); select(); colours(); controls(); fit([...shown]);
drawScene(); present();
document.body.dataset.firstRenderMs = Math.round(performance.now());  // since navigation began
if (location.hash.includes('settle=1')) {  // benchmarks: the whole layout now, timed
  sim = mainThreadSim();
  const t = performance.now(); while (sim.alpha() > sim.alphaMin()) sim.tick();
  settled();
  document.body.dataset.layoutMs = Math.round(performance.now() - t); fit([...shown]);
  const d = performance.now(); for (let i = 0; i < 10; i++) drawScene();
  document.body.dataset.drawMs = Math.round((performance.now() - d) / 10);
} else {
  startLayout();
}
requestAnimationFrame(frame);
