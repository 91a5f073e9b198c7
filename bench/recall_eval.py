"""Does recall stay silent on off-topic prompts and find the note on on-topic ones?

    python bench/recall_eval.py                      # the report half, all three corpora
    python bench/recall_eval.py --split tune         # the half the floors were tuned on
    python bench/recall_eval.py --dump out.jsonl     # every prompt's decision, for tuning
    cd /tmp/old && PYTHONPATH=$PWD python "$OLDPWD/bench/recall_eval.py" --data-dir /tmp/old-idx
                                                     # an older checkout's recall, as shipped

The set is ``bench/recall_set.jsonl``: off-topic prompts of the kinds people type into a coding
agent (greetings, acknowledgements, coding requests naming files, general knowledge, shell
questions), asked of every corpus, and on-topic questions written by reading each corpus's notes,
each with the notes that answer it (``gold``); an off-topic prompt that one corpus does answer names it in ``except``, with why, and
is not asked of it. The split is deterministic: within each group
(kind, vault, category) prompts are ordered by the SHA-256 of their id and alternate tune/report.

Figures: *precision* on off-topic prompts is the share where recall injected nothing; *hit rate*
on on-topic prompts is the share where a gold note is among the notes recall returned. Recall
runs through the registry in-process on an index built with the real model (kept in
``--data-dir`` between runs, so only the first run embeds).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from sidecar.api import build_registry
from sidecar.config import model_cache_dir
from sidecar.embed import load_embedder
from sidecar.services.context import Services

try:
    from sidecar.core.relevance import GateOptions
    from sidecar.services.recall import RecallOptions, recall
except ImportError:  # an older checkout (--compare): recall through its registry, as shipped
    GateOptions = None  # type: ignore[assignment,misc]

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall_set import load_set, prompts_for

HERE = Path(__file__).resolve().parent
CORPORA = HERE.parents[1] / "shared" / "corpora"
VAULTS = ("dendron-site", "kepano-obsidian", "obsidian-tasks-docs")


def open_corpus(name: str, data_root: Path) -> Services:
    embedder = load_embedder("minilm", cache_dir=model_cache_dir(os.environ))
    services = Services.open(CORPORA / name / "vault", data_root / name, embedder=embedder)
    services.reindex()
    services.embed_stage.run()
    return services


def run_vault(services: Services, prompts: list[dict[str, Any]], gate: Any) -> list[dict[str, Any]]:
    opts = RecallOptions(max_memory=0, gate=gate, explain=True) if GateOptions else None
    registry = build_registry()
    out = []
    for r in prompts:
        t0 = time.perf_counter()
        if opts is None:
            got = registry.call(services, "recall", {"prompt": r["prompt"], "max_memory": 0})
        else:
            got = recall(services, r["prompt"], opts)
        ms = (time.perf_counter() - t0) * 1000
        paths = [n["path"] for n in got["notes"]]
        ok = not paths if r["kind"] == "off" else bool(set(paths) & set(r["gold"]))
        out.append({**r, "notes": paths, "ok": ok, "ms": round(ms, 1),
                    "reason": got.get("reason", ""), "decision": got.get("decision")})  # fmt: skip
    return out


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    off = [r for r in results if r["kind"] == "off"]
    on = [r for r in results if r["kind"] == "on"]
    return {
        "off_n": len(off),
        "precision": sum(r["ok"] for r in off) / max(len(off), 1),
        "on_n": len(on),
        "hit_rate": sum(r["ok"] for r in on) / max(len(on), 1),
        "p50_ms": statistics.median(r["ms"] for r in results) if results else 0.0,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=["report", "tune", "all"], default="report")
    ap.add_argument("--vault", action="append", choices=VAULTS, help="only these corpora")
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/sidecar-recall-eval"))
    ap.add_argument("--dump", type=Path, help="write every decision here (JSONL)")
    ap.add_argument("--misses", action="store_true", help="list the prompts recall got wrong")
    ap.add_argument("--gate", action="append", default=[], metavar="KEY=VALUE",
                    help="override one of core.relevance.GateOptions, e.g. threshold=4.5")  # fmt: skip
    args = ap.parse_args()
    gate = None
    if GateOptions is not None:
        gate = dataclasses.replace(
            GateOptions(), **{k: float(v) for k, v in (g.split("=", 1) for g in args.gate)}
        )
    rows = load_set()
    dumped = []
    print(f"| vault ({args.split} half) | off-topic n | precision | on-topic n | hit rate | "
          "p50 ms |\n|---|---|---|---|---|---|")  # fmt: skip
    for name in args.vault or VAULTS:
        services = open_corpus(name, args.data_dir)
        try:
            results = run_vault(services, prompts_for(rows, name, args.split), gate)
        finally:
            services.close()
        s = summary(results)
        print(f"| {name} | {s['off_n']} | {s['precision']:.3f} | {s['on_n']} | "
              f"{s['hit_rate']:.3f} | {s['p50_ms']:.0f} |", flush=True)  # fmt: skip
        dumped += [{**r, "corpus": name} for r in results]
        if args.misses:
            for r in results:
                if not r["ok"]:
                    print(f"    miss {r['id']}: {r['prompt'][:70]!r} -> {r['notes']} "
                          f"({r['reason']})", file=sys.stderr)  # fmt: skip
    if args.dump:
        args.dump.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in dumped))


if __name__ == "__main__":
    main()
