"""Our recall on the peers' memory evals (the fixtures in ../shared/peers, never copied here).

    python bench/memory_eval.py                 # real model (all-MiniLM-L6-v2), Markdown out
    python bench/memory_eval.py --model tiny    # the hashing embedder, for a quick look
    python bench/memory_eval.py --dump          # per-query evidence, to tune the floors

Sets:
* mdkb ``memory-recall.json``: 12 memories, 12 recall queries (hit@1, hit@3 over recall's memory
  list) and 3 judge questions (the expected answer text is in a recalled entry).
* mdkb ``recall-options/translations-openrouter.json``: ``neg`` prompts, unrelated to the seeded
  memory: recall should abstain. (``pos`` needs mdkb's private memory, which is not shipped.)
* mdkb ``recall-watch-260.json``: one real prompt and the two entries mdkb injected for it.
* markdown-memory ``eval_data``: 6 corpus files + ``tests/fixtures/clean_doc.md`` as ``orbit.md``
  (upstream's corpus file is missing, its headings match), queries split dev/held_out x
  paraphrase/identifier/no_answer: Top-1 (recall's first note's section is the expected one),
  hit@budget (any returned note's section is), abstention on no_answer, false abstention.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sidecar.api import build_registry
from sidecar.config import model_cache_dir
from sidecar.embed import load_embedder
from sidecar.services.context import Services

PEERS = Path(__file__).resolve().parents[2] / "shared" / "peers"
MDKB = PEERS / "mdkb" / "assets" / "eval"
MDMEM = PEERS / "markdown-memory"
REGISTRY = build_registry()


@contextmanager
def opened(vault_files: dict[str, str], model: str) -> Iterator[Services]:
    root = Path(tempfile.mkdtemp(prefix="memeval"))
    try:
        for rel, text in vault_files.items():
            (root / "vault" / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / "vault" / rel).write_text(text, "utf-8")
        (root / "vault").mkdir(exist_ok=True)
        embedder = load_embedder(model, cache_dir=model_cache_dir(os.environ))
        services = Services.open(root / "vault", root / "data", embedder=embedder)
        try:
            services.reindex()
            services.embed_stage.run()
            yield services
        finally:
            services.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def call(services: Services, method: str, **params: Any) -> dict[str, Any]:
    return REGISTRY.call(services, method, params)


def seed_mdkb(services: Services, memories: list[dict[str, Any]]) -> None:
    entries = [{"id": m["id"], "title": m["title"], "content": m["content"],
                "tags": m.get("tags", []), "entry_type": "topic"} for m in memories]  # fmt: skip
    call(services, "memory.import", entries=entries)


def timed(services: Services, prompt: str, lat: list[float], **kw: Any) -> dict[str, Any]:
    t0 = time.perf_counter()
    r = call(services, "recall", prompt=prompt, **kw)
    lat.append((time.perf_counter() - t0) * 1000)
    return r


def mdkb_recall(model: str, dump: bool, kw: dict[str, Any]) -> dict[str, Any]:
    data = json.loads((MDKB / "memory-recall.json").read_text("utf-8"))
    neg = json.loads((MDKB / "recall-options" / "translations-openrouter.json").read_text())["neg"]
    out: dict[str, Any] = {}
    lat: list[float] = []
    with opened({}, model) as s:
        seed_mdkb(s, data["memories"])
        hit1 = hit3 = 0
        for q in data["recall"]:
            r = timed(s, q["query"], lat, **kw)
            ids = [m["id"] for m in r["memory"]]
            hit1 += bool(ids[:1]) and ids[0] in q["expected_ids"]
            hit3 += any(i in q["expected_ids"] for i in ids[:3])
            _dump(dump, q["query"], r, q["expected_ids"])
        judged = 0
        for q in data["judge"]:
            r = timed(s, q["question"], lat, **kw)
            text = " ".join(f"{m['title']} {m['body']}" for m in r["memory"]).lower()
            judged += q["expected_answer"].lower() in text
            _dump(dump, q["question"], r, [q["expected_answer"]])
        abstained = 0
        for p in neg:
            r = timed(s, p, lat, **kw)
            abstained += r["abstained"]
            if dump and not r["abstained"]:
                _dump(dump, p[:80], r, ["(should abstain)"])
        n = len(data["recall"])
        out["recall"] = {"n": n, "hit@1": hit1 / n, "hit@3": hit3 / n}
        out["judge"] = {"n": len(data["judge"]), "answered": judged / len(data["judge"])}
        out["neg"] = {"n": len(neg), "abstained": abstained / len(neg)}
        out["latency_ms"] = _lat(lat)
    return out


def mdkb_watch(model: str, kw: dict[str, Any]) -> dict[str, Any]:
    data = json.loads((MDKB / "recall-watch-260.json").read_text("utf-8"))
    with opened({}, model) as s:
        call(s, "memory.import", entries=[m["entry"] for m in data["memories"]])
        r = call(s, "recall", prompt=data["prompt"], **kw)
    return {
        "mdkb_injected": {m["entry"]["id"]: round(m["cosine"], 3) for m in data["memories"]},
        "ours": {m["id"]: m["cosine"] for m in r["memory"]},
        "abstained": r["abstained"],
    }


def mdmem_files() -> dict[str, str]:
    corpus = MDMEM / "scripts" / "eval_data" / "corpus"
    files = {p.relative_to(corpus).as_posix(): p.read_text("utf-8") for p in corpus.rglob("*.md")}
    files["orbit.md"] = (MDMEM / "tests" / "fixtures" / "clean_doc.md").read_text("utf-8")
    return files


def section_ok(hit: dict[str, Any], expected: str) -> bool:
    if "::" in expected:
        file, heading = expected.split("::", 1)
        same_file = hit["path"].rsplit("/", 1)[-1] == file
        return same_file and (heading.startswith("[") or hit.get("heading") == heading)
    return hit.get("heading") == expected


def h1(text: str) -> str:
    return next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")), "")


H1 = {path: h1(text) for path, text in mdmem_files().items()} if MDMEM.is_dir() else {}


def note_ok(hit: dict[str, Any], expected: str) -> bool:
    """The right note, whichever section: the expected path's first part is the note's H1."""
    if "::" in expected:
        return bool(hit["path"].rsplit("/", 1)[-1] == expected.split("::", 1)[0])
    return H1.get(hit["path"]) == expected.split(" > ", 1)[0]


def mdmem(model: str, dump: bool, kw: dict[str, Any]) -> dict[str, Any]:
    queries = json.loads((MDMEM / "scripts" / "eval_data" / "queries.json").read_text("utf-8"))
    neg = json.loads((MDKB / "recall-options" / "translations-openrouter.json").read_text())["neg"]
    out: dict[str, Any] = {}
    with opened(mdmem_files(), model) as s:
        lat: list[float] = []
        abstained = sum(timed(s, p, lat, **kw)["abstained"] for p in neg)
        out["mdkb_neg_prompts"] = {"n": len(neg), "abstained": abstained / len(neg),
                                   "latency_ms": _lat(lat)}  # fmt: skip
        for split in ("dev", "held_out"):
            for shape, items in queries[split].items():
                lat: list[float] = []
                rows = [(q, timed(s, q["query"], lat, **kw)) for q in items]
                out[f"{split}/{shape}"] = _score(rows, shape, dump) | {"latency_ms": _lat(lat)}
    return out


def _score(
    rows: list[tuple[dict[str, Any], dict[str, Any]]], shape: str, dump: bool
) -> dict[str, Any]:
    n = len(rows)
    if shape == "no_answer":
        return {"n": n, "abstained": sum(r["abstained"] for _, r in rows) / n}
    top1 = any1 = hit = abst = note1 = 0
    for q, r in rows:
        valid = [q["expected"], *[k for k, g in q.get("also_valid", {}).items() if g >= 2]]
        notes = r["notes"]
        top1 += bool(notes) and section_ok(notes[0], q["expected"])
        any1 += bool(notes) and any(section_ok(notes[0], v) for v in valid)
        hit += any(section_ok(nn, v) for nn in notes for v in valid)
        note1 += bool(notes) and any(note_ok(notes[0], v) for v in valid)
        abst += r["abstained"]
        _dump(dump, q["query"], r, valid)
    return {"n": n, "top1": top1 / n, "any_valid@1": any1 / n, "hit@budget": hit / n, "note@1": note1 / n,
            "false_abstention": abst / n}  # fmt: skip


def _dump(on: bool, query: str, r: dict[str, Any], expected: list[str]) -> None:
    if not on:
        return
    notes = [(n["path"], n.get("heading"), n["cosine"], n["bm25"]) for n in r["notes"]]
    mem = [(m["id"], m["cosine"]) for m in r["memory"]]
    print(
        f"Q {query!r} expect {expected}\n   notes {notes}\n   memory {mem} {r['reason']}",
        file=sys.stderr,
    )


def _lat(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": round(statistics.median(ordered), 1),
            "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="minilm")
    ap.add_argument("--dump", action="store_true")
    ap.add_argument("--min-score", type=float, default=None)
    args = ap.parse_args()
    kw = {} if args.min_score is None else {"min_score": args.min_score}
    results = {
        "model": args.model,
        "mdkb": mdkb_recall(args.model, args.dump, kw),
        "mdkb_watch": mdkb_watch(args.model, kw),
        "markdown_memory": mdmem(args.model, args.dump, kw),
    }
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
