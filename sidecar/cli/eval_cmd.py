"""``sidecar eval``: retrieval metrics on a labelled set, for every search mode."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from sidecar.cli import output
from sidecar.cli.base import fail
from sidecar.cli.client import connect
from sidecar.config import find_vault, load_settings, model_cache_dir
from sidecar.errors import SidecarError, UsageError

MODES = ("lexical", "semantic", "hybrid")


@click.command("eval")
@click.argument("directory", required=False, type=click.Path(exists=True, file_okay=False))
@click.option(
    "--vault", metavar="PATH", help="Evaluate this vault's index instead (with --queries)."
)
@click.option(
    "--queries",
    "queries_file",
    type=click.Path(exists=True, dir_okay=False),
    help='JSONL lines {"query": ..., "gold": [vault paths]} (empty gold: should abstain).',
)
@click.option(
    "--mode",
    "modes",
    multiple=True,
    type=click.Choice(MODES),
    help="Modes to measure (default: all three).",
)
@click.option(
    "--split",
    type=click.Choice(["tune", "report"]),
    default=None,
    help="Only the queries of this half of a dev set (their 'split' field).",
)
@click.option("--misses", "show_misses", is_flag=True, help="List the queries not answered first.")
@click.option("--max-queries", type=int, default=0, help="Only the first N queries.")
@click.option(
    "--abstain-below",
    type=float,
    default=0.0,
    help="Confidence floor for the abstention figures (0.34 is recall's).",
)
@click.option("--model", default=None, help="Embedding model spec (default: embed.model).")
@click.option("--json", "as_json", is_flag=True)
def eval_command(directory: str | None, vault: str | None, queries_file: str | None,
                 modes: tuple[str, ...], split: str | None, show_misses: bool, max_queries: int,
                 abstain_below: float, model: str | None, as_json: bool) -> None:  # fmt: skip
    """Retrieval metrics (nDCG@10, Recall@5/10, MRR, latency) on a BEIR-layout DIR, or on
    --vault with --queries."""
    from sidecar.cli.progress import bars_for

    chosen = list(modes) or list(MODES)
    progress = bars_for(sys.stderr)
    try:
        if directory:
            result = _beir(Path(directory), chosen, max_queries, abstain_below, model, progress)
        elif vault and queries_file:
            result = _vault(vault, Path(queries_file), split or "", chosen, max_queries,
                            abstain_below, progress)  # fmt: skip
        else:
            raise UsageError("give a BEIR directory, or --vault with --queries")
    except SidecarError as exc:
        fail(exc, as_json)
    output.emit(result, as_json, lambda r: _format(r, show_misses))


def _beir(root: Path, modes: list[str], max_q: int, floor: float, model: str | None,
          progress: Any) -> dict[str, Any]:  # fmt: skip
    import tempfile

    from sidecar.embed import load_embedder
    from sidecar.services.context import Services
    from sidecar.services.evaluate import evaluate
    from sidecar.services.search import Query
    from sidecar.store.beir import load_beir, write_corpus_vault

    corpus, queries = load_beir(root)
    queries = queries[:max_q] if max_q else queries
    spec = model or os.environ.get("SIDECAR_EMBED_MODEL", "minilm")
    embedder = load_embedder(spec, cache_dir=model_cache_dir(os.environ))
    with tempfile.TemporaryDirectory(prefix="sidecar-eval-") as tmp:
        vault = Path(tmp) / "vault"
        write_corpus_vault(corpus, vault)
        services = Services.open(vault, Path(tmp) / "index", embedder=embedder)
        try:
            report = services.reindex(progress=progress and progress("parse"))
            embedded = (
                services.embed_stage.run(progress=progress and progress("embed"))
                if modes != ["lexical"]
                else 0
            )

            def search(text: str, mode: str, depth: int) -> list[tuple[str, float]]:
                res = services.search.search(Query(text, mode=mode, limit=depth))  # type: ignore[arg-type]
                return [
                    (Path(r["path"]).stem, r.get("confidence", r["score"])) for r in res["results"]
                ]

            result = evaluate(
                search, queries, modes, abstain_below=floor, progress=progress and progress("eval")
            )
        finally:
            services.close()
    result.update(set=root.name, documents=len(corpus), chunks=report.chunks, embedded=embedded,
                  model=embedder.model_id)  # fmt: skip
    return result


def _vault(vault: str, path: Path, split: str, modes: list[str], max_q: int, floor: float,
           progress: Any) -> dict[str, Any]:  # fmt: skip
    from sidecar.services.evaluate import SearchFn, evaluate
    from sidecar.store.beir import load_vault_queries

    queries = load_vault_queries(path, split)
    queries = queries[:max_q] if max_q else queries
    client = connect(load_settings(find_vault(vault, os.environ, Path.cwd()), os.environ))

    def search(text: str, mode: str, depth: int) -> list[tuple[str, float]]:
        res = client.call("search", {"query": text, "mode": mode, "limit": depth})
        return [(r["path"], r.get("confidence", r["score"])) for r in res["results"]]

    fn: SearchFn = search
    try:
        result = evaluate(
            fn, queries, modes, abstain_below=floor, progress=progress and progress("eval")
        )
    finally:
        client.close()
    result["set"] = str(path) + (f" ({split} half)" if split else "")
    return result


def _format(r: dict[str, Any], show_misses: bool = False) -> str:
    lines = [f"{r['set']}: {r['queries']} queries"
             + (f", {r['documents']} documents, {r['chunks']} chunks" if "documents" in r else "")]  # fmt: skip
    lines.append(
        f"{'mode':<9} {'nDCG@10':>8} {'R@5':>7} {'R@10':>7} {'MRR':>7} {'p50 ms':>8} {'p95 ms':>8}"
    )
    for mode, m in r["modes"].items():
        lat = m["latency_ms"]
        lines.append(f"{mode:<9} {m.get('ndcg@10', 0):>8.4f} {m.get('recall@5', 0):>7.4f} "
                     f"{m.get('recall@10', 0):>7.4f} {m.get('mrr', 0):>7.4f} "
                     f"{lat['p50']:>8.2f} {lat['p95']:>8.2f}")  # fmt: skip
        for stratum, s in m.get("strata", {}).items():
            if s.get("queries"):
                lines.append(f"  {stratum:<12} {s['ndcg@10']:>6.4f} {s['recall@5']:>7.4f} "
                             f"{s['recall@10']:>7.4f} {s['mrr']:>7.4f}   ({s['queries']} queries)")  # fmt: skip
        if "abstention" in m:
            a = m["abstention"]
            lines.append(f"  abstention below {a['floor']}: {a['correctly_abstained']:.2%} "
                         f"of {a['empty_gold_queries']} no-answer queries got nothing, "
                         f"{a['wrongly_abstained']:.2%} of the others wrongly")  # fmt: skip
        if show_misses:
            for miss in m.get("misses", []):
                got = miss["first"] or "(nothing)"
                rank = miss["gold_rank"] or "-"
                lines.append(f"  miss [{miss['stratum']}] {miss['query']!r}: gold at {rank}, "
                             f"first {got}")  # fmt: skip
    return "\n".join(lines)
