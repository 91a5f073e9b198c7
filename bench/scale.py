"""The cost curve: the whole daemon benchmark at 1k, 10k and 100k generated notes.

    python bench/scale.py                      # 1k, 10k, 100k: about an hour on 2 cores
    python bench/scale.py --sizes 1000 10000   # a quicker curve
    python bench/scale.py --render             # redraw the docs from bench/results/scale-*.json

For each size: a deterministic vault (``genvault.py``); the raw model's throughput on 1,000 of
its chunk texts in this process; then ``sidecar serve`` with the real model on a fresh store,
measured as a user meets it:

- start -> serving with every note lexically searchable (the cold index), then, while the
  embedding stage works through the backlog: lexical queries, graph queries and saves found by
  a lexical search, all over the socket (embedding must not block any of them);
- start -> every chunk embedded, the stage's chunks/s and its ratio to the raw model;
- then queries in every mode, saves found by a hybrid search, resident memory, idle CPU, the
  store's size on disk; the daemon restarted on the same store (time to serve, memory); after
  it stops, one-note re-index in process.

Each size writes ``bench/results/scale-<notes>.json``; the table and the plot
(``docs/img/scale.png``) between the ``scale`` markers of docs/benchmarks.md are rebuilt from
every such file present.

Before and after in one run: ``--compare DIR`` first measures the daemon of another checkout
(``DIR`` with its own ``.venv``, e.g. a worktree of the previous commit) at each size, into
``scale-<notes>-before.json``, then this checkout's. ``--code DIR --label before`` measures only
the other one (a 100k-note run is over an hour each). The harness, the model and the vault are
this checkout's in both, and the load average is sampled throughout (``load``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from genvault import WORDS, generate
from machine import describe, pct

from sidecar.config import model_cache_dir
from sidecar.core.note import parse_note
from sidecar.embed import load_embedder
from tests.daemon_harness import RunningDaemon, daemon_env, start

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
DOC = REPO / "docs" / "benchmarks.md"
PLOT = REPO / "docs" / "img" / "scale.png"
BEGIN, END = "<!-- scale:begin -->", "<!-- scale:end -->"
GRAPH_METHODS = ("note.backlinks", "graph.neighbors", "graph.traverse")


def timed(fn: Any, *args: Any) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - t0) * 1000


def summary(ms: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(ms), 2), "p95": round(pct(ms, 0.95), 2),
            "n": len(ms)}  # fmt: skip


def proc_stat(pid: int) -> tuple[float, int]:
    """(CPU seconds used, resident KiB) of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))
    return cpu, rss


def anon_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Anonymous:"):
            return int(line.split()[1])
    return 0


def resident_by_mapping(pid: int, top: int = 8) -> dict[str, float]:
    """Resident MiB per mapped file (anonymous memory as one entry), largest first: where
    the resident figure sits, e.g. native libraries' code against the heap."""
    sizes: dict[str, int] = {}
    name = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if not head:
            continue
        if "-" in head[0] and not head[0].endswith(":"):  # a mapping's header line
            name = Path(head[5]).name if len(head) > 5 and head[5].startswith("/") else "[anon]"
        elif head[0] == "Rss:":
            sizes[name] = sizes.get(name, 0) + int(head[1])
    ranked = sorted(sizes.items(), key=lambda kv: -kv[1])
    return {k: round(v / 1024, 1) for k, v in ranked[:top]}


def du_mib(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def table_versions(data: Path) -> int:
    """Versions committed to the store's LanceDB tables and still on disk (one manifest each),
    whatever the layout: the difference across saves is what they wrote."""
    return sum(1 for _ in (data / "lance").glob("*.lance/_versions/*.manifest"))


class LoadSampler:
    """The 1-minute load average every ``every`` seconds while a run lasts (the machine is
    shared: figures say what else ran)."""

    def __init__(self, every: float = 30) -> None:
        self.every = every
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            if self._stop.wait(self.every):
                return

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict[str, float]:
        s = self.samples or [0.0]
        return {"min": round(min(s), 2), "mean": round(statistics.mean(s), 2),
                "max": round(max(s), 2), "n": len(s)}  # fmt: skip


def raw_model_rate(vault: Path, sample: int = 1000) -> tuple[float, str]:
    """Chunks/s of the bare model on chunk texts of this vault, as the stage feeds them."""
    rng = random.Random(11)
    files = sorted(vault.rglob("*.md"))
    texts: list[str] = []
    for path in rng.sample(files, min(len(files), sample)):
        rel = path.relative_to(vault).as_posix()
        texts += [c.embed_text for c in parse_note(rel, path.read_text("utf-8"), "-").chunks]
    texts = texts[:sample]
    embedder = load_embedder("minilm", cache_dir=model_cache_dir(os.environ))
    embedder.embed(texts[:32])  # load and warm up
    t0 = time.perf_counter()
    for i in range(0, len(texts), 64):
        embedder.embed(texts[i : i + 64])
    return len(texts) / (time.perf_counter() - t0), embedder.model_id


def queries(rng: random.Random, count: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4))) for _ in range(count)]


def search_latency(d: RunningDaemon, mode: str, texts: list[str]) -> dict[str, float]:
    with d.client() as c:
        return summary([timed(c.call, "search", {"query": q, "mode": mode}) for q in texts])


def graph_latency(d: RunningDaemon, notes: list[str], rng: random.Random) -> dict[str, Any]:
    out = {}
    with d.client() as c:
        for method in GRAPH_METHODS:
            params = [{"note": rng.choice(notes)} for _ in range(200)]
            if method == "graph.neighbors":
                params = [{**p, "depth": 2} for p in params]
            elif method == "graph.traverse":
                params = [{**p, "depth": 2, "relation": "depends_on"} for p in params]
            out[method] = summary([timed(c.call, method, p) for p in params])
    return out


def save_to_found(d: RunningDaemon, notes: list[str], mode: str, saves: int) -> dict[str, float]:
    """File appended -> the new word found by ``search`` in ``mode`` over the socket."""
    rng = random.Random(5 if mode == "lexical" else 6)
    nonce = time.time_ns() % 10**9  # words new to this run, whatever ran on the vault before
    found = []
    with d.client() as c:
        for i in range(saves):
            word = f"zqx{mode[:3]}{i}w{nonce}"
            rel = rng.choice(notes)
            t0 = time.perf_counter()
            with (d.vault / rel).open("a", encoding="utf-8") as fh:
                fh.write(f"\n{word} appended by the scale benchmark\n")
            # Semantic search always returns neighbours, and a superseded note ranks behind its
            # replacement (which hides it from a short list): look for the note itself.
            query = {"query": word, "mode": mode, "limit": 10, "include_superseded": True}
            while rel not in {hit["path"] for hit in c.call("search", query)["results"]}:
                time.sleep(0.005)
            found.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.5)
    return summary(found)


def restart(
    vault: Path, env: dict[str, str], texts: list[str], code: Path | None = None
) -> dict[str, Any]:
    """The daemon started again on the same store: until serving, and its memory once it has
    answered some hybrid queries (set beside the memory after the cold start above)."""
    t0 = time.perf_counter()
    d = start(vault, env, wait=3600, code=code)
    ready = time.perf_counter() - t0
    try:
        search_latency(d, "hybrid", texts)
        time.sleep(5)
        _, rss = proc_stat(d.proc.pid)
        with d.client() as c:
            cache = c.call("index.status").get("store_cache_mib")
        return {"ready_s": round(ready, 1), "rss_mib": round(rss / 1024),
                "anon_mib": round(anon_kib(d.proc.pid) / 1024), "store_cache_mib": cache,
                "resident_by_mapping": resident_by_mapping(d.proc.pid)}  # fmt: skip
    finally:
        d.stop(timeout=600)


REINDEX_PROBE = """
import json, random, sys, time
from pathlib import Path
from sidecar.config import model_cache_dir
from sidecar.embed import load_embedder
from sidecar.services.context import Services
import os
vault, data, notes = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.stdin.read())
s = Services.open(vault, data, embedder=load_embedder("minilm", cache_dir=model_cache_dir(os.environ)))
try:
    rng = random.Random(9)
    times = []
    for i in range(20):
        rel = rng.choice(notes)
        with (vault / rel).open("a", encoding="utf-8") as fh:
            fh.write(f"\\nreindex probe {i}\\n")
        t0 = time.perf_counter()
        s.reindex(paths=[rel])
        times.append((time.perf_counter() - t0) * 1000)
finally:
    s.close()
print(json.dumps(times))
"""


def one_note_reindex(
    vault: Path, data: Path, notes: list[str], code: Path | None = None
) -> dict[str, float]:
    """20 one-note re-indexes in a process of the measured code (``code``'s, or this one's),
    with the store's own model (its vectors stay valid); re-indexing never loads it."""
    python = str(code / ".venv" / "bin" / "python") if code else sys.executable
    out = subprocess.run(
        [python, "-c", REINDEX_PROBE, str(vault), str(data)], input=json.dumps(notes),
        capture_output=True, text=True, check=True, cwd=code or REPO,
    ).stdout  # fmt: skip
    return summary(json.loads(out.strip().splitlines()[-1]))


def steady_state(
    d: RunningDaemon, notes: list[str], rng: random.Random, texts: list[str], idle: float
) -> dict[str, Any]:
    """Queries per mode, graph methods, saves found by hybrid search, then idle CPU and memory
    (with what LanceDB's caches hold, inside the memory figures).

    Idle is measured once the daemon has settled after the saves: its compaction, due
    ``daemon.compact_idle_seconds`` (60) after the last write, has run. Before session 5 the
    60 s window started 5 s after the saves and caught that compaction or not depending on
    where its 30 s check fell."""
    r: dict[str, Any] = {
        "query": {m: search_latency(d, m, texts) for m in ("lexical", "semantic", "hybrid")},
        "graph": graph_latency(d, notes, rng),
    }
    settled = d.log_text().count(SETTLED)
    data = Path(d.env["SIDECAR_DATA_DIR"])
    versions = table_versions(data)
    r["save_to_hybrid"] = save_to_found(d, notes, "hybrid", SAVES)
    wait_embedded(d)
    r["table_versions_per_save"] = round((table_versions(data) - versions) / SAVES, 2)
    r["settle_after_saves_s"] = wait_settled(d, settled)
    time.sleep(5)
    cpu0, _ = proc_stat(d.proc.pid)
    time.sleep(idle)
    cpu1, rss = proc_stat(d.proc.pid)
    r["idle_cpu_pct"] = round(100 * (cpu1 - cpu0) / idle, 2)
    r["rss_mib"] = round(rss / 1024)
    r["anon_mib"] = round(anon_kib(d.proc.pid) / 1024)
    r["resident_by_mapping"] = resident_by_mapping(d.proc.pid)
    with d.client() as c:
        r["store_cache_mib"] = c.call("index.status").get("store_cache_mib")
    return r


SETTLED = "store caches:"  # the daemon's log line after a compaction
SAVES = 20


def wait_embedded(d: RunningDaemon, limit: float = 120) -> None:
    """Until no chunk waits for a vector (the saves' own vectors are part of what they wrote)."""
    deadline = time.monotonic() + limit
    with d.client() as c:
        while c.call("index.status")["pending"]:
            assert time.monotonic() < deadline, "the saves' vectors never landed"
            time.sleep(0.2)


def wait_settled(d: RunningDaemon, seen: int) -> float:
    """Wait for the compaction after the last writes (the ``seen``-th + 1 SETTLED line);
    the seconds waited."""
    t0 = time.perf_counter()
    while d.log_text().count(SETTLED) == seen:
        assert time.perf_counter() - t0 < 600, "no compaction after the saves"
        time.sleep(1)
    return round(time.perf_counter() - t0, 1)


def run_size(
    count: int,
    work: Path,
    idle: float,
    budget: float | None = None,
    *,
    keep: bool = False,
    code: Path | None = None,
    extra_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``budget``: seconds to watch the embedding backlog instead of waiting for its end (the
    queries, saves and memory after it are then measured while it still runs). ``keep``: leave
    the vault copy and its index in ``work/state-N`` (to probe a restart with other code).
    ``code``: measure that checkout's daemon instead of this one's; ``extra_env``: settings
    for the daemon (``SIDECAR_*``), to measure a variant."""
    with LoadSampler() as load:
        r = _run_size(count, work, idle, budget, keep, code, extra_env or {})
    r["load"] = load.summary()
    r["env"] = extra_env or {}
    return r


def _run_size(
    count: int,
    work: Path,
    idle: float,
    budget: float | None,
    keep: bool,
    code: Path | None,
    extra_env: dict[str, str],
) -> dict[str, Any]:
    pristine = work / f"vault-{count}"
    if not pristine.is_dir():
        generate(pristine, count)
    raw, model_id = raw_model_rate(pristine)
    state = work / (f"state-{count}" + ("-other" if code else ""))
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir()
    vault = state / "vault"  # the run edits notes: a copy, so every run starts alike
    shutil.copytree(pristine, vault)
    env = {**daemon_env(state, debounce_ms=300, model="minilm"), **extra_env}
    env["XDG_CACHE_HOME"] = str(Path.home() / ".cache")  # the requantised model, built once
    t0 = time.perf_counter()
    d = start(vault, env, wait=4 * 3600, code=code)
    ready = time.perf_counter() - t0
    rng = random.Random(3)
    r: dict[str, Any] = {"notes": count, "machine": describe(), "model": model_id,
                         "raw_chunks_per_s": round(raw, 1), "ready_s": round(ready, 1),
                         "code": _commit(code or REPO)}  # fmt: skip
    try:
        with d.client(timeout=None) as c:
            status = c.call("index.status")
        notes = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
        r["chunks"], r["edges"] = status["chunks"], status["links"]["resolved"]
        r["while_embedding"] = {
            "pending_at_start": status["pending"],
            "lexical": search_latency(d, "lexical", queries(rng, 100)),
            "graph": graph_latency(d, notes, rng),
            "save_to_lexical": save_to_found(d, notes, "lexical", 10),
        }
        with d.client(timeout=None) as c:
            # The stage's rate is taken from here on, after the measurements above (their
            # saves pause the embedding on purpose, 1 s each, so queries get the cores).
            t1, left = time.perf_counter(), c.call("index.status")["pending"]
            if budget is None:
                c.call("index.reindex", {"embed": True})  # returns when every chunk has a vector
                embedded = time.perf_counter() - t0
                r["embedded_s"] = round(embedded, 1)
                window = (
                    (left, time.perf_counter() - t1)
                    if left >= 200
                    else (r["chunks"], embedded - ready)
                )
            else:  # watch the backlog for a while; the rest of the run happens during it
                time.sleep(budget)
                pending = c.call("index.status")["pending"]
                window = (left - pending, time.perf_counter() - t1)
                r["embedded_s"] = None
                r["pending_after_budget"] = pending
                r["budget_s"] = budget
            r["stage_chunks_per_s"] = round(window[0] / window[1], 1)
            r["stage_over_raw"] = round(r["stage_chunks_per_s"] / raw, 2)
        texts = queries(rng, 200)
        r.update(steady_state(d, notes, rng, texts, idle))
    finally:
        d.stop(timeout=600)
    r["restart"] = restart(vault, env, texts[:50], code)
    data = Path(env["SIDECAR_DATA_DIR"])
    r["disk_mib"] = round(du_mib(data), 1)
    r["one_note_reindex"] = one_note_reindex(vault, data, notes, code)
    r["command"] = f"python bench/scale.py {' '.join(sys.argv[1:])}"
    if not keep:
        shutil.rmtree(state, ignore_errors=True)
    return r


def _commit(tree: Path) -> str:
    run = subprocess.run(["git", "-C", str(tree), "log", "-1", "--format=%h %s"],
                         capture_output=True, text=True, check=False)  # fmt: skip
    return run.stdout.strip()[:72]


# -- the docs -----------------------------------------------------------------------------


def fmt_ms(s: dict[str, float]) -> str:
    return f"{s['p50']:.1f} / {s['p95']:.1f}"


ROWS: list[tuple[str, Any]] = [
    ("chunks / edges", lambda r: f"{r['chunks']:,} / {r['edges']:,}"),
    ("cold start -> lexically searchable", lambda r: f"{r['ready_s']:.1f} s"),
    ("cold start -> every chunk embedded", lambda r: f"{r['embedded_s'] / 60:.1f} min"
     if r["embedded_s"] else f"not waited for: {r['pending_after_budget']:,} left after "
     f"{r['budget_s'] / 60:.0f} min (at that rate {r['chunks'] / r['stage_chunks_per_s'] / 60:.0f} min in all) *"),
    ("embedding stage, chunks/s (raw model in the same run)",
     lambda r: f"{r['stage_chunks_per_s']} ({r['raw_chunks_per_s']}): **{r['stage_over_raw']}**"),
    ("while embedding: lexical query p50 / p95 ms",
     lambda r: fmt_ms(r["while_embedding"]["lexical"])),
    ("while embedding: save -> found (lexical) p50 / p95 ms",
     lambda r: fmt_ms(r["while_embedding"]["save_to_lexical"])),
    ("while embedding: `graph.neighbors` depth 2 p50 / p95 ms",
     lambda r: fmt_ms(r["while_embedding"]["graph"]["graph.neighbors"])),
    ("one-note re-index p50 / p95 ms", lambda r: fmt_ms(r["one_note_reindex"])),
    ("save -> found (hybrid) p50 / p95 ms", lambda r: fmt_ms(r["save_to_hybrid"])),
    ("`lexical` query p50 / p95 ms", lambda r: fmt_ms(r["query"]["lexical"])),
    ("`semantic` query p50 / p95 ms", lambda r: fmt_ms(r["query"]["semantic"])),
    ("`hybrid` query p50 / p95 ms", lambda r: fmt_ms(r["query"]["hybrid"])),
    ("`note.backlinks` p50 / p95 ms", lambda r: fmt_ms(r["graph"]["note.backlinks"])),
    ("`graph.neighbors` depth 2 p50 / p95 ms", lambda r: fmt_ms(r["graph"]["graph.neighbors"])),
    ("`graph.traverse` depends_on, depth 2 p50 / p95 ms", lambda r: fmt_ms(r["graph"]["graph.traverse"])),
    ("resident memory after the cold start (RSS; private)",
     lambda r: f"{r['rss_mib']} MiB ({r['anon_mib']} MiB)"),
    ("restart -> serving, every note loaded", lambda r: f"{r['restart']['ready_s']:.1f} s"
     if "restart" in r else "not measured"),
    ("resident memory after a restart (RSS; private)",
     lambda r: f"{r['restart']['rss_mib']} MiB ({r['restart']['anon_mib']} MiB)"
     if "restart" in r else "not measured"),
    ("store on disk", lambda r: f"{r['disk_mib']:.0f} MiB"),
    ("idle CPU over 60 s", lambda r: f"{r['idle_cpu_pct']:.2f} %"),
    ("table versions per one-note save", lambda r: f"{r['table_versions_per_save']:.1f}"
     if "table_versions_per_save" in r else "not measured"),
    ("load average during the run (min / mean / max)",
     lambda r: f"{r['load']['min']:.1f} / {r['load']['mean']:.1f} / {r['load']['max']:.1f}"
     if "load" in r else "not recorded"),
    ("code measured", lambda r: f"`{r['code'].split()[0]}`" if r.get("code") else "see text"),
]  # fmt: skip


def load_results() -> list[dict[str, Any]]:
    """The runs of record: this code's and the code it is compared with (``before``); runs of
    a variant (another ``--label``) are kept beside them, not drawn."""
    of_record = re.compile(r"scale-\d+(-before)?\.json")  # what a run without --label writes
    paths = [p for p in RESULTS.glob("scale-*.json") if of_record.fullmatch(p.name)]
    found = [json.loads(p.read_text()) for p in paths]
    return sorted(found, key=lambda r: (r["notes"], r.get("label") != "before"))


def column(r: dict[str, Any], results: list[dict[str, Any]]) -> str:
    """``10,000 notes``, or ``before`` / ``after`` when the size was measured both ways."""
    both = sum(1 for o in results if o["notes"] == r["notes"]) > 1
    name = f"{r['notes']:,} notes"
    return f"{name}, {r.get('label') or 'after'}" if both else name


def render_table(results: list[dict[str, Any]]) -> str:
    head = "| measure | " + " | ".join(column(r, results) for r in results) + " |"
    lines = [head, "|---|" + "---|" * len(results)]
    lines += [f"| {name} | " + " | ".join(cell(r) for r in results) + " |" for name, cell in ROWS]
    machines = sorted({r["machine"] for r in results})
    return "\n".join([
        f"Machine: {'; '.join(machines)}  ",
        "Command: `python bench/scale.py` (or one size: `--sizes N`; raw results: "
        "`bench/results/scale-*.json`); "
        f"model {results[-1]['model']}  ",
        "",
        *lines,
        *[f"\n\\* {r['notes']:,} notes: the embedding backlog was watched for "
          f"{r['budget_s'] / 60:.0f} min, not waited for, so every row from `save -> found (hybrid)` "
          "down was measured while it still ran with the model on both cores (idle "
          "CPU is the embedding's own)." for r in results if not r["embedded_s"]],
        "",
        "![Cost curve: latency and memory against vault size](img/scale.png)",
    ])  # fmt: skip


def render_plot(results: list[dict[str, Any]]) -> None:
    try:
        import matplotlib
    except ImportError:  # the README's install has no plotting: the table is the result
        print(f"{PLOT.relative_to(REPO)} not redrawn: pip install matplotlib to draw it")
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["notes"] for r in results]
    fig, (left, mid, right) = plt.subplots(1, 3, figsize=(13, 4))
    for label, get in [
        ("hybrid p95", lambda r: r["query"]["hybrid"]["p95"]),
        ("lexical p95", lambda r: r["query"]["lexical"]["p95"]),
        ("semantic p95", lambda r: r["query"]["semantic"]["p95"]),
        ("neighbors d2 p95", lambda r: r["graph"]["graph.neighbors"]["p95"]),
        ("one-note re-index p95", lambda r: r["one_note_reindex"]["p95"]),
    ]:
        left.plot(sizes, [get(r) for r in results], marker="o", label=label)
    left.set(xscale="log", yscale="log", xlabel="notes", ylabel="ms", title="Latency (p95)")
    left.legend(fontsize=8)
    mid.plot(sizes, [r["ready_s"] for r in results], marker="o", label="lexically searchable")
    full = [r for r in results if r["embedded_s"]]
    mid.plot(
        [r["notes"] for r in full],
        [r["embedded_s"] for r in full],
        marker="o",
        label="fully embedded",
    )
    mid.set(xscale="log", yscale="log", xlabel="notes", ylabel="s", title="Cold start")
    mid.legend(fontsize=8)
    right.plot(sizes, [r["rss_mib"] for r in results], marker="o", label="resident (RSS)")
    right.plot(sizes, [r["anon_mib"] for r in results], marker="o", label="private (anon)")
    again = [r for r in results if "restart" in r]
    right.plot([r["notes"] for r in again], [r["restart"]["rss_mib"] for r in again], marker="o",
               label="resident after a restart")  # fmt: skip
    right.plot(sizes, [r["disk_mib"] for r in results], marker="o", label="store on disk")
    right.set(xscale="log", xlabel="notes", ylabel="MiB", title="Memory and disk")
    right.legend(fontsize=8)
    for ax in (left, mid, right):
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOT, dpi=100)
    print(f"wrote {PLOT.relative_to(REPO)}")


def render_docs() -> None:
    results = load_results()
    if not results:
        raise SystemExit("no bench/results/scale-*.json yet: run the benchmark first")
    text = DOC.read_text("utf-8")
    before, _, rest = text.partition(BEGIN)
    _, _, after = rest.partition(END)
    if not rest:
        raise SystemExit(f"{DOC} has no {BEGIN} marker")
    DOC.write_text(f"{before}{BEGIN}\n{render_table(results)}\n{END}{after}", "utf-8")
    print(f"wrote {DOC.relative_to(REPO)}")
    render_plot(results)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--work", type=Path, default=Path("/tmp/sidecar-scale"))
    ap.add_argument("--idle", type=float, default=60)
    ap.add_argument("--render", action="store_true", help="only rebuild the docs")
    ap.add_argument(
        "--keep", action="store_true", help="keep each size's vault copy and index (state-N/)"
    )
    ap.add_argument(
        "--embed-budget",
        type=float,
        default=None,
        metavar="S",
        help="over 50k notes, watch the embedding for S seconds, not to its end",
    )
    ap.add_argument(
        "--compare",
        type=Path,
        metavar="DIR",
        help="at each size, first measure DIR's daemon (label 'before')",
    )
    ap.add_argument("--code", type=Path, metavar="DIR", help="measure only DIR's daemon")
    ap.add_argument("--label", default="", help="results file suffix (e.g. before)")
    ap.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting for the measured daemon, e.g. SIDECAR_DAEMON_BULK_INDEX_NOTES=0",
    )
    args = ap.parse_args()
    if not args.render:
        args.work.mkdir(parents=True, exist_ok=True)
        runs: list[tuple[Path | None, str]] = [(args.code.resolve() if args.code else None,
                                                args.label)]  # fmt: skip
        if args.compare:
            runs = [(args.compare.resolve(), "before"), (None, "")]
        for count in args.sizes:
            budget = args.embed_budget if count > 50_000 else None
            for code, label in runs:
                extra = dict(kv.split("=", 1) for kv in args.env)
                result = run_size(count, args.work, args.idle, budget, keep=args.keep, code=code,
                                  extra_env=extra)  # fmt: skip
                result["label"] = label
                out = RESULTS / f"scale-{count}{'-' + label if label else ''}.json"
                out.write_text(json.dumps(result, indent=1) + "\n")
                print(f"{count} notes {label}: {json.dumps(result)}", flush=True)
                subprocess.run(["sync"], check=False)
    render_docs()


if __name__ == "__main__":
    main()
