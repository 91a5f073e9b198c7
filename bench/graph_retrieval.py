"""Graph-aware retrieval on multi-hop QA: flat hybrid vs link boost vs graph context expansion.

    python bench/graph_retrieval.py [--sets musique-hipporag-100,hotpotqa-hipporag-100]
                                    [--work DIR] [--tune] [--queries N]

Each BEIR set (``../shared/eval/<set>``) becomes a vault: one note per paragraph, named by its
title (a repeated title gets `` (2)``, `` (3)``..., and ``up: [[Title]]`` to the article's first
paragraph, so the paragraphs of one article hang together as one page), with a wikilink wherever the paragraph
mentions another paragraph's title (the first mention of each, case-sensitive, whole words, a
trailing ``(film)``-style qualifier optional), as Wikipedia's own links would be; never to a
paragraph of its own article. The vault is indexed and embedded with the real model
(all-MiniLM-L6-v2) through ``Services``, and queried through ``services.search.search``.

Reported: Recall@5 and Recall@10 of the supporting paragraphs (a query's recall is the share
of its supporting paragraphs in the top k; the mean over queries). ``--tune`` runs the grid on
the first 50 queries of each set (the tuning split); the report is over all queries.
Vault and index are cached under ``--work`` so a second run only queries.
"""

from __future__ import annotations

import argparse
import csv
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
            head += f"up: \"[[{first_stem[d.title]}]]\"\n"
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

Ranker = Callable[[Services, str], list[str]]


def flat(limit: int = 10, **kw: Any) -> Ranker:
    """Paths in result order."""
    return lambda s, text: [r["path"] for r in s.search.search(Query(text, limit=limit, **kw))["results"]]


def expanded(results: int, expand: int = 1, **kw: Any) -> Ranker:
    """The top ``results`` notes, then the graph context items: what an agent would read."""

    def rank(s: Services, text: str) -> list[str]:
        out = s.search.search(Query(text, limit=results, expand=expand, **kw))
        return [r["path"] for r in out["results"]] + [c["path"] for c in out["graph_context"]]

    return rank


def recall(ranked: Sequence[str], gold: set[str], k: int) -> float:
    return len(gold & set(ranked[:k])) / len(gold)


def evaluate(
    s: Services, paths: dict[str, str], queries: Sequence[tuple[str, str, set[str]]],
    rankers: dict[str, tuple[Ranker, Ranker]],
) -> dict[str, dict[str, float]]:  # fmt: skip
    """Per config: mean Recall@5 (first ranker) and @10 (second), and ms per query."""
    out = {}
    for name, (at5, at10) in rankers.items():
        r5 = r10 = 0.0
        started = time.perf_counter()
        for _, text, gold in queries:
            r5 += recall([paths.get(p, p) for p in at5(s, text)], gold, 5)
            r10 += recall([paths.get(p, p) for p in at10(s, text)], gold, 10)
        ms = (time.perf_counter() - started) * 1000 / (2 * len(queries))
        n = len(queries)
        out[name] = {"recall@5": round(r5 / n, 4), "recall@10": round(r10 / n, 4), "ms": round(ms, 1)}
    return out
