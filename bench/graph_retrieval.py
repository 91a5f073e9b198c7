"""Graph-aware retrieval on multi-hop QA: flat hybrid vs link boost vs graph context expansion.

    python bench/graph_retrieval.py [--sets musique-hipporag-100,...] [--work DIR] [--tune]

Each BEIR set (``../shared/eval/<set>``) becomes a vault: one note per paragraph, named by its
title (a repeated title gets `` (2)``..., and ``up: [[Title]]`` to the article's first paragraph,
so one article's paragraphs hang together as one page), with a wikilink at the first mention of
each other paragraph's title (case-sensitive, whole words, a ``(film)``-style qualifier
optional), as Wikipedia's own links would be; never to its own article. It is indexed and
embedded with the real model through ``Services`` and queried through ``services.search.search``.

Reported: Recall@5 and @10 of the supporting paragraphs (per query, the share of them in the top
k; the mean over queries). ``--tune`` runs the grid on the first 50 queries of each set (the
tuning split); the report is over all queries. Vault and index are cached under ``--work``.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe

from sidecar.embed import load_embedder
from sidecar.services.context import Services
from sidecar.services.graph_rank import GraphOptions
from sidecar.services.search import Query

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"
SETS = ("musique-hipporag-100", "hotpotqa-hipporag-100")
MIN_TITLE = 4  # "Red", "USB": too short to link by mention without noise
_UNSAFE = re.compile(r'[\\/:*?"<>|#^\[\]]+')
_QUALIFIER = re.compile(r"\s+\([^()]*\)$")


@dataclass(frozen=True, slots=True)
class Doc:
    doc_id: str
    title: str
    text: str


def load_set(root: Path) -> tuple[list[Doc], list[tuple[str, str, set[str]]]]:
    """Corpus, and (query id, text, supporting doc ids) for queries with qrels."""
    docs = [
        Doc(str(d["_id"]), str(d.get("title") or ""), str(d.get("text") or ""))
        for d in map(json.loads, (root / "corpus.jsonl").read_text("utf-8").splitlines())
    ]
    gold: dict[str, set[str]] = {}
    with (root / "qrels.tsv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if int(row["score"]) > 0:
                gold.setdefault(row["query-id"], set()).add(row["corpus-id"])
    queries = [
        (str(q["_id"]), str(q["text"]), gold[str(q["_id"])])
        for q in map(json.loads, (root / "queries.jsonl").read_text("utf-8").splitlines())
        if str(q["_id"]) in gold
    ]
    return docs, queries


def note_names(docs: Sequence[Doc]) -> dict[str, str]:
    """doc id -> file stem: the title made file-safe, `` (n)`` for a repeated title."""
    seen: dict[str, int] = {}
    out = {}
    for d in docs:
        stem = " ".join(_UNSAFE.sub(" ", d.title).split()) or d.doc_id
        seen[stem.lower()] = seen.get(stem.lower(), 0) + 1
        n = seen[stem.lower()]
        out[d.doc_id] = stem if n == 1 else f"{stem} ({n})"
    return out


def mention_pattern(docs: Sequence[Doc]) -> tuple[re.Pattern[str], dict[str, str]]:
    """One alternation of every linkable name (longest first) and name -> title."""
    names: dict[str, str] = {}
    for d in docs:
        for name in (d.title, _QUALIFIER.sub("", d.title)):
            if len(name) >= MIN_TITLE:
                names.setdefault(name, d.title)
    alternation = "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n)))
    return re.compile(rf"(?<!\w)(?:{alternation})(?!\w)"), names


def linked_text(doc: Doc, pattern: re.Pattern[str], names: dict[str, str],
                first_stem: dict[str, str]) -> str:  # fmt: skip
    """The paragraph with its first mention of each other article turned into a wikilink."""
    done: set[str] = set()

    def link(m: re.Match[str]) -> str:
        title = names[m.group(0)]
        if title == doc.title or title in done:
            return m.group(0)
        done.add(title)
        stem = first_stem[title]
        return f"[[{stem}]]" if stem == m.group(0) else f"[[{stem}|{m.group(0)}]]"

    return pattern.sub(link, doc.text)


def build_vault(docs: Sequence[Doc], root: Path) -> tuple[dict[str, str], int]:
    """Write the notes; return vault path -> doc id, and how many links were written."""
    stems = note_names(docs)
    first_stem: dict[str, str] = {}
    for d in docs:
        first_stem.setdefault(d.title, stems[d.doc_id])
    pattern, names = mention_pattern(docs)
    root.mkdir(parents=True, exist_ok=True)
    paths, links = {}, 0
    for d in docs:
        body = linked_text(d, pattern, names, first_stem)
        links += body.count("[[")
        title = json.dumps(d.title, ensure_ascii=False)
        head = f"title: {title}\n"
        if first_stem[d.title] != stems[d.doc_id]:  # a later paragraph of the same article
            head += f'up: "[[{first_stem[d.title]}]]"\n'
        (root / f"{stems[d.doc_id]}.md").write_text(
            f"---\n{head}---\n# {d.title}\n\n{body}\n", "utf-8"
        )
        paths[f"{stems[d.doc_id]}.md"] = d.doc_id
    return paths, links


def open_index(vault: Path, data: Path) -> tuple[Services, float]:
    embedder = load_embedder("minilm", cache_dir=Path.home() / ".cache" / "sidecar" / "models")
    services = Services.open(vault, data, embedder=embedder)
    started = time.perf_counter()
    services.reindex()
    services.embed_stage.run()
    return services, time.perf_counter() - started


# -- evaluation -----------------------------------------------------------------------------

Ranker = Callable[[Services, str, int], list[str]]  # (services, query, k) -> paths, best first


def ranker(boost: bool = False, hops: int = 1, reserve: float = 0.0, expand: int = 0,
           **opts: Any) -> Ranker:  # fmt: skip
    """A search configuration. ``reserve``: the share of the k slots given to graph context: the
    top ``k - round(k * reserve)`` results, then the context items, then the next results if
    the context had fewer. What an agent reading k notes would read, so every configuration is
    judged on the same budget. (The context of a k-result search leaves out all k results.)"""
    graph = GraphOptions(**opts)

    def rank(s: Services, text: str, k: int) -> list[str]:
        slots = round(k * reserve)
        q = Query(text, limit=k, boost_links=boost, hops=hops, expand=expand if slots else 0,
                  graph=graph)  # fmt: skip
        out = s.search.search(q)
        results = [r["path"] for r in out["results"]]
        context = [c["path"] for c in out["graph_context"]][:slots]
        return (results[: k - slots] + context + results[k - slots :])[:k]

    return rank


def recall(ranked: Sequence[str], gold: set[str], k: int) -> float:
    return len(gold & set(ranked[:k])) / len(gold)


def evaluate(
    s: Services, paths: dict[str, str], queries: Sequence[tuple[str, str, set[str]]], rank: Ranker
) -> dict[str, float]:
    """Mean Recall@5 and @10 over the queries, and milliseconds per search."""
    total = {5: 0.0, 10: 0.0}
    started = time.perf_counter()
    for _, text, gold in queries:
        for k in total:
            total[k] += recall([paths.get(p, p) for p in rank(s, text, k)], gold, k)
    ms = (time.perf_counter() - started) * 1000 / (2 * len(queries))
    n = len(queries)
    return {"recall@5": round(total[5] / n, 4), "recall@10": round(total[10] / n, 4),
            "ms": round(ms, 1)}  # fmt: skip


# Chosen on the tuning split (the first 50 queries of each set, ``--tune``), with the defaults of
# ``GraphOptions`` set to what the tuning found (boost: weight 0.8 from the top 3; expansion: from
# the top 2).
CONFIGS: dict[str, Ranker] = {
    "flat hybrid": ranker(),
    "link boost (hops 1)": ranker(boost=True, hops=1),
    "expansion (1 of 5, 2 of 10 slots; 2 hops)": ranker(reserve=0.2, expand=2),
    "link boost + expansion": ranker(boost=True, hops=1, reserve=0.2, expand=2),
}


def grid() -> dict[str, Ranker]:
    out = {"flat hybrid": ranker()}
    for w, hops, seeds in itertools.product((0.6, 0.7, 0.8, 0.9), (1, 2), (2, 3)):
        out[f"boost w={w} hops={hops} seeds={seeds}"] = ranker(
            boost=True, hops=hops, link_weight=w, seeds=seeds
        )
    for reserve, hops, seeds in itertools.product((0.2, 0.4), (1, 2), (2, 3)):
        out[f"expand reserve={reserve} hops={hops} seeds={seeds}"] = ranker(
            reserve=reserve, expand=hops, expand_seeds=seeds
        )
    return out


def prepare(name: str, work: Path) -> tuple[Services, dict[str, str], list[Any], dict[str, Any]]:
    docs, queries = load_set(EVAL / name)
    root = work / name
    paths, links = build_vault(docs, root / "vault")
    services, seconds = open_index(root / "vault", root / "data")
    facts = {"notes": len(docs), "links": links, "queries": len(queries),
             "index_seconds": round(seconds, 1)}  # fmt: skip
    return services, paths, queries, facts


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--work", type=Path, default=Path("/tmp/sidecar-graph-bench"))
    ap.add_argument("--tune", action="store_true", help="Grid on the first 50 queries.")
    args = ap.parse_args(argv)
    print(f"_{describe()}_\n")
    report: dict[str, Any] = {}
    for name in args.sets.split(","):
        services, paths, queries, facts = prepare(name, args.work)
        configs = grid() if args.tune else CONFIGS
        split = queries[:50] if args.tune else queries
        try:
            rows = {label: evaluate(services, paths, split, r) for label, r in configs.items()}
        finally:
            services.close()
        report[name] = {**facts, "evaluated": len(split), "results": rows}
        print(f"{name}: {facts['notes']} notes, {facts['links']} links, "
              f"{len(split)} of {facts['queries']} queries\n")  # fmt: skip
        print("| configuration | Recall@5 | Recall@10 | ms/query |\n|---|---|---|---|")
        for label, row in rows.items():
            print(f"| {label} | {row['recall@5']:.3f} | {row['recall@10']:.3f} | {row['ms']} |")
        print()
    (args.work / ("tune.json" if args.tune else "report.json")).write_text(
        json.dumps(report, indent=1)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
