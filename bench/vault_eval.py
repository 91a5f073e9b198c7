"""Retrieval quality on the vault dev sets (and the BEIR sets), every mode and the plain baseline
in one run: ``python bench/vault_eval.py [--split report] [--sets a,b] [--beir scifact,...]``.

Each vault is indexed and embedded in-process with the real model (``Services.open`` /
``reindex`` / ``embed_stage.run``), every query goes through ``services.search.search``; the
plain baseline (``plain_baseline.py``) reads the same files. Metrics are overall and per
stratum, with the misses; the JSON goes to ``bench/results/vault-eval-<tag>.json``.

Variants for the vector-leg experiments (one change at a time, semantic mode on the tune half):
``--quantize none`` (the shipped int8 file as is), ``--no-prefix`` (chunks embedded without the
title > breadcrumb line), ``--max-chars N --overlap N`` (chunk size), ``--max-tokens N``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import devsets
from machine import describe
from plain_baseline import PlainBaseline

from sidecar.config import model_cache_dir
from sidecar.core import chunks as chunking
from sidecar.core import ranking
from sidecar.core.chunks import ChunkOptions
from sidecar.embed.onnx import OnnxEmbedder
from sidecar.services.context import Services
from sidecar.services.evaluate import score
from sidecar.services.search import Query
from sidecar.store.beir import EvalQuery, load_beir, write_corpus_vault

RESULTS = Path(__file__).parent / "results"
SHARED_EVAL = devsets.REPO.parent / "shared" / "eval"
MODES = ("lexical", "semantic", "hybrid", "hybrid+rerank", "baseline")
DEPTH = 20


def sidecar_search(
    services: Services, mode: str, to_id: Callable[[str], str], args: argparse.Namespace
) -> Callable[..., Any]:
    kind = "hybrid" if mode == "hybrid+rerank" else mode
    extra: dict[str, Any] = {"boost_links": args.boost_links} if kind == "hybrid" else {}
    if "rerank" in Query.__dataclass_fields__:
        extra["rerank"] = mode == "hybrid+rerank"
    if args.min_confidence is not None:
        extra["min_confidence"] = args.min_confidence

    def search(text: str, limit: int) -> list[tuple[str, float]]:
        res = services.search.search(Query(text, mode=kind, limit=limit, **extra))  # type: ignore[arg-type]
        return [(to_id(r["path"]), r.get("confidence", r["score"])) for r in res["results"]]

    return search


def run_set(name: str, root: Path, queries: list[EvalQuery], args: argparse.Namespace,
            to_id: Callable[[str], str], ids: dict[str, str] | None) -> dict[str, Any]:  # fmt: skip
    embedder = OnnxEmbedder(quantize=args.quantize, max_tokens=args.max_tokens,
                            cache_dir=model_cache_dir(os.environ))  # fmt: skip
    options = ChunkOptions(args.max_chars, args.overlap)
    out: dict[str, Any] = {"set": name, "queries": len(queries), "modes": {}}
    variant = (
        f"{args.quantize}-{int(args.no_prefix)}-{args.max_chars}-{args.overlap}-{args.max_tokens}"
    )
    with tempfile.TemporaryDirectory(prefix="sidecar-veval-") as tmp:
        data = Path(args.work) / name / variant if args.work else Path(tmp) / "index"
        services = Services.open(root, data, embedder=embedder, chunk_options=options)
        try:
            started = time.perf_counter()
            report = services.reindex()
            services.embed_stage.run()
            out.update(chunks=report.chunks, index_s=round(time.perf_counter() - started, 1))
            for mode in args.modes:
                if mode == "baseline":
                    base = PlainBaseline(root, ids, Path(args.work) if args.work else None)
                    fn: Callable[..., Any] = base.search
                else:
                    fn = sidecar_search(services, mode, to_id, args)
                if args.dump and mode == "hybrid":
                    dump(services, queries, Path(args.dump) / f"{name}.json", to_id)
                rankings, lat = [], []
                for q in queries:
                    t0 = time.perf_counter()
                    rankings.append(fn(q.text, DEPTH))
                    lat.append((time.perf_counter() - t0) * 1000)
                m = score(queries, rankings, args.floor)
                m["top"] = [
                    [r[0][1] if r else None, bool(q.gold)]
                    for q, r in zip(queries, rankings, strict=True)
                ]
                m["latency_ms_p50"] = round(sorted(lat)[len(lat) // 2], 1)
                out["modes"][mode] = m
        finally:
            services.close()
    return out


def dump(services: Services, queries: list[EvalQuery], path: Path,
         to_id: Callable[[str], str]) -> None:  # fmt: skip
    """Each query's hybrid top 20 with the full text of its chunk, to try rerankers apart."""
    from sidecar.store.chunk_search import chunk_rows

    out = []
    for q in queries:
        res = services.search.search(Query(q.text, limit=DEPTH, explain=True))["results"]
        rows = chunk_rows(services.store, [r["chunk_id"] for r in res])
        out.append({"id": q.qid, "query": q.text, "gold": sorted(q.gold), "stratum": q.stratum,
                    "results": [{"id": to_id(r["path"]), "score": r["score"],
                                 "explain": r.get("explain", {}),
                                 "text": rows[r["chunk_id"]]["text"], "heading": r["heading"]}
                                for r in res if r["chunk_id"] in rows]})  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out), "utf-8")


def vault_sets(args: argparse.Namespace) -> list[dict[str, Any]]:
    out = []
    for name in args.sets:
        rows = devsets.load(name, args.split)
        queries = [EvalQuery(str(r["id"]), str(r["query"]), {str(p): 1 for p in r["gold"]},  # type: ignore[attr-defined]
                             str(r["stratum"])) for r in rows]  # fmt: skip
        out.append(run_set(name, devsets.vault_root(name), queries, args, lambda p: p, None))
    return out


def _beir_id(ids: dict[str, str], path: str) -> str:
    return ids.get(path, Path(path).stem)


_SYNTAX = re.compile(r'["()\[\]]|(?<!\S)-|\bOR\b|(?<=\w):')


def plain(text: str) -> str:
    """A BEIR query as plain words: its claims and questions hold parentheses, quotes and
    ``OR``, which the search box reads as Obsidian's syntax (30 of SciFact's 300 claims are a
    parentheses error); the plain baseline tokenises words anyway."""
    return " ".join(_SYNTAX.sub(lambda m: "or" if m.group() == "OR" else " ", text).split())


def beir_sets(args: argparse.Namespace) -> list[dict[str, Any]]:
    out = []
    for name in args.beir:
        corpus, raw = load_beir(SHARED_EVAL / name)
        queries = [replace(q, text=plain(q.text)) for q in raw]
        ids = {f"{d['id'].replace('/', '_')}.md": d["id"] for d in corpus}
        with tempfile.TemporaryDirectory(prefix="sidecar-beir-") as tmp:
            root = (Path(args.work) if args.work else Path(tmp)) / name / "vault"
            if not root.is_dir():
                write_corpus_vault(corpus, root)
            out.append(run_set(name, root, queries, args, partial(_beir_id, ids), ids))
    return out


def render(results: list[dict[str, Any]]) -> str:
    lines = ["| set | mode | R@5 | MRR | nDCG@10 |", "|---|---|---|---|---|"]
    for r in results:
        for mode, m in r["modes"].items():
            lines.append(f"| {r['set']} ({r['queries']} q) | {mode} | {m.get('recall@5', 0):.3f} | "
                         f"{m.get('mrr', 0):.3f} | {m.get('ndcg@10', 0):.3f} |")  # fmt: skip
            for s, sm in m.get("strata", {}).items():
                if sm.get("queries"):
                    lines.append(f"| | {mode} · {s} ({sm['queries']}) | {sm['recall@5']:.3f} | "
                                 f"{sm['mrr']:.3f} | {sm['ndcg@10']:.3f} |")  # fmt: skip
                elif "abstention" in sm:
                    a = sm["abstention"]
                    lines.append(f"| | {mode} · {s} ({a['empty_gold_queries']}) | nothing "
                                 f"returned: {a['correctly_abstained']:.2f} | | |")  # fmt: skip
    return "\n".join(lines)


def render_wide(results: list[dict[str, Any]]) -> str:
    """One row per set and stratum, one column per mode: R@5 / MRR / nDCG@10."""
    modes = list(dict.fromkeys(m for r in results for m in r["modes"]))
    lines = ["| set | " + " | ".join(modes) + " |", "|---" * (len(modes) + 1) + "|"]

    def cell(m: dict[str, Any]) -> str:
        if m.get("queries", 1) == 0 and "abstention" in m:
            return f"nothing returned {m['abstention']['correctly_abstained']:.2f}"
        return f"{m.get('recall@5', 0):.3f} / {m.get('mrr', 0):.3f} / {m.get('ndcg@10', 0):.3f}"

    for r in results:
        first = r["modes"][modes[0]]
        lines.append(f"| **{r['set']}** ({r['queries']} q) | "
                     + " | ".join(cell(r["modes"][m]) for m in modes) + " |")  # fmt: skip
        for s, sm in first.get("strata", {}).items():
            n = sm["queries"] or sm.get("abstention", {}).get("empty_gold_queries", 0)
            lines.append(f"| · {s} ({n}) | "
                         + " | ".join(cell(r["modes"][m]["strata"][s]) for m in modes) + " |")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--split", default="tune", choices=["tune", "report", "all"])
    ap.add_argument("--sets", default=",".join(devsets.names()))
    ap.add_argument("--beir", default="", help="e.g. scifact,hotpotqa-hipporag-100")
    ap.add_argument("--modes", default="lexical,semantic,hybrid,baseline")
    ap.add_argument("--quantize", default="dynamic", choices=["dynamic", "none"])
    ap.add_argument("--no-prefix", action="store_true")
    ap.add_argument("--max-chars", type=int, default=ChunkOptions().max_chars)
    ap.add_argument("--overlap", type=int, default=ChunkOptions().overlap_chars)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--floor", type=float, default=0.0)
    ap.add_argument("--misses", action="store_true")
    ap.add_argument("--sweep", action="store_true", help="abstention at each confidence floor")
    ap.add_argument("--boost-links", action="store_true", help="hybrid with the link boost")
    ap.add_argument("--min-confidence", type=float, default=None)
    ap.add_argument("--tag", default="")
    ap.add_argument("--work", default="", help="keep each set's index here, per variant")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a constant of sidecar.core.ranking, e.g. LENGTH_PRIOR=0.1, "
        "HYBRID_WEIGHTS=(1.0,0.8,0.7)",
    )
    ap.add_argument("--dump", default="", help="write each query's hybrid top 20 chunks here")
    ap.add_argument(
        "--render", nargs="+", default=[], help="print saved results (JSON) as one table"
    )
    args = ap.parse_args()
    if args.render:
        docs = [json.loads(Path(f).read_text("utf-8")) for f in args.render]
        print(render_wide([r for d in docs for r in d["results"]]))
        return
    args.sets = [s for s in args.sets.split(",") if s]
    args.beir = [s for s in args.beir.split(",") if s]
    args.modes = [m for m in args.modes.split(",") if m]
    for item in args.set:
        key, _, value = item.partition("=")
        setattr(ranking, key, type(getattr(ranking, key))(ast.literal_eval(value)))
    if args.no_prefix:
        chunking.embedding_input = lambda title, heading, text: text  # type: ignore[assignment]
    results = vault_sets(args) + beir_sets(args)
    print(render(results))
    if args.misses:
        for r in results:
            for mode, m in r["modes"].items():
                for miss in m.get("misses", []):
                    print(
                        f"{r['set']} {mode} [{miss['stratum']}] {miss['query']!r}: gold "
                        f"{miss['gold_rank']}, first {miss['first']} ({miss['first_score']})"
                    )
    if args.sweep:
        for mode in args.modes:
            tops = [t for r in results for t in r["modes"][mode]["top"]]
            for floor in [x / 100 for x in range(20, 62, 2)]:
                empty = [s for s, g in tops if not g]
                full = [s for s, g in tops if g]
                right = sum(s is None or s < floor for s in empty) / max(len(empty), 1)
                wrong = sum(s is None or s < floor for s in full) / max(len(full), 1)
                print(f"sweep {mode} floor {floor:.2f}: no-answer {right:.2f}, wrongly {wrong:.2f}")
    if args.tag:
        RESULTS.mkdir(exist_ok=True)
        doc = {"machine": describe(), "argv": sys.argv[1:], "results": results}
        (RESULTS / f"vault-eval-{args.tag}.json").write_text(json.dumps(doc, indent=1), "utf-8")


if __name__ == "__main__":
    main()
