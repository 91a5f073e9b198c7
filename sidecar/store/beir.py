"""Labelled retrieval sets on disk: BEIR layout (corpus.jsonl, queries.jsonl, qrels.tsv) and the
vault flavour (``{"query", "gold": [paths]}`` lines), plus writing a BEIR corpus out as a vault."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sidecar.errors import UsageError


@dataclass(frozen=True, slots=True)
class EvalQuery:
    qid: str
    text: str
    gold: dict[str, int]  # document id (or vault path) -> relevance grade
    stratum: str = ""  # the dev sets' kind of query (keyword, paraphrase, ...); "" for BEIR


def _jsonl(path: Path) -> Iterator[dict[str, object]]:
    try:
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        yield json.loads(line)
                    except ValueError as exc:
                        raise UsageError(f"{path}:{n}: not JSON: {exc}") from exc
    except FileNotFoundError as exc:
        raise UsageError(f"missing {path}") from exc


def load_beir(root: Path) -> tuple[list[dict[str, str]], list[EvalQuery]]:
    """The corpus and the queries that have qrels (BEIR's test queries)."""
    qrels: dict[str, dict[str, int]] = {}
    qrels_path = root / "qrels.tsv"
    if not qrels_path.exists():
        qrels_path = root / "qrels" / "test.tsv"
    try:
        with qrels_path.open(encoding="utf-8") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    except (FileNotFoundError, KeyError) as exc:
        raise UsageError(f"{root}: needs qrels.tsv with query-id, corpus-id, score") from exc
    corpus = [
        {"id": str(d["_id"]), "title": str(d.get("title") or ""), "text": str(d.get("text") or "")}
        for d in _jsonl(root / "corpus.jsonl")
    ]
    queries = [
        EvalQuery(str(q["_id"]), str(q["text"]), qrels[str(q["_id"])])
        for q in _jsonl(root / "queries.jsonl")
        if str(q["_id"]) in qrels
    ]
    return corpus, queries


def load_vault_queries(path: Path, split: str = "") -> list[EvalQuery]:
    """``{"query": ..., "gold": [vault paths], "stratum"?, "split"?}`` per line; an empty gold
    means "should abstain". With ``split`` only the lines of that half (``tune``/``report``)."""
    out = []
    for n, q in enumerate(_jsonl(path), 1):
        gold = q.get("gold") or []
        if not isinstance(gold, list):
            raise UsageError(f"{path}:{n}: gold must be a list of paths")
        if split and q.get("split") != split:
            continue
        out.append(EvalQuery(str(q.get("id", n)), str(q["query"]), {str(p): 1 for p in gold},
                             str(q.get("stratum") or "")))  # fmt: skip
    return out


def write_corpus_vault(corpus: list[dict[str, str]], root: Path) -> None:
    """One note per document, ``<id>.md``, titled by the document's title."""
    root.mkdir(parents=True, exist_ok=True)
    for doc in corpus:
        name = doc["id"].replace("/", "_")
        title = json.dumps(doc["title"] or doc["id"], ensure_ascii=False)
        heading = f"# {doc['title']}\n\n" if doc["title"] else ""
        (root / f"{name}.md").write_text(
            f"---\ntitle: {title}\n---\n{heading}{doc['text']}\n", "utf-8"
        )
