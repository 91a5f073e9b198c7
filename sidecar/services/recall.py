"""Recall: the agent's budget for one prompt (DESIGN section 6).

At most ``max_notes`` notes (their snippets within ``max_chars``) and ``max_memory`` memory
entries. Notes pass only the gate of ``core/relevance.py``: meaning above the vault's own
background, the prompt's specific words, a close line of a long chunk; most prompts an agent
sees are about something else, and recall then says nothing. Memory entries keep their own
floors (a cosine, or a strong BM25 match for identifiers a model does not know), since an
entry is short and written for exactly this. A superseded note is swapped for the note that
replaced it unless asked for. Any error fails closed: nothing recalled, ``abstained`` true and
the reason, never a traceback into an agent's context.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sidecar.core.chunks import is_properties
from sidecar.core.relations import Taxonomy
from sidecar.core.relevance import (
    Evidence,
    GateOptions,
    content_words,
    coverage,
    decide,
    enough_words,
    idf,
    passage_needed,
    passages,
    shared_weight,
)
from sidecar.core.relevance import evidence as gate_evidence
from sidecar.services.memory_search import search_memory
from sidecar.services.recall_hints import currency, memory_hints, note_hints
from sidecar.services.relevance import WordHits
from sidecar.services.search import Query, Ranked, snippet
from sidecar.store.chunk_search import chunk_rows

if TYPE_CHECKING:
    from sidecar.services.context import Services

_log = logging.getLogger(__name__)
_WORD = re.compile(r"\w+", re.UNICODE)
_TERM = re.compile(r"[^\W_]+", re.UNICODE)  # what the FTS tokenizer splits a query into
MAX_QUERY_WORDS = 64
BODY_CHARS = 400
CANDIDATES = 16  # search results the gate weighs
PASSAGE_CHUNKS = 5  # chunks (one a note) whose lines are compared one by one
MAX_PASSAGES = 3
PASSAGE_CEILING = 0.70  # no line of the tune half came closer than 0.65 to its prompt


@dataclass(frozen=True, slots=True)
class RecallOptions:
    """The memory floors were tuned on the markdown-memory dev split and mdkb's unrelated
    prompts (docs/benchmarks.md, memory recall): with all-MiniLM-L6-v2 a cosine of 0.34 alone is
    evidence; BM25 is counted per query word, since a long prompt piles up score from common
    words. The notes' gate is ``gate`` (tuned on bench/recall_set.jsonl)."""

    max_notes: int = 4
    max_memory: int = 3
    min_score: float = 0.34  # cosine alone suffices
    min_lexical: float = 1.5  # BM25 per query word alone suffices (identifiers)
    support_score: float = 0.25  # a weaker cosine ...
    support_lexical: float = 1.0  # ... with a fair word match also suffices
    include_superseded: bool = False
    max_chars: int = 900  # the notes' snippets together
    gate: GateOptions = GateOptions()
    explain: bool = False  # the decision (words, background, candidates' scores) in the result
    log: Path | None = None  # append each decision to this JSONL file


def recall(
    services: Services, prompt: str, opts: RecallOptions = RecallOptions()
) -> dict[str, Any]:
    try:
        result = _recall(services, prompt, opts)
    except Exception as exc:  # fail closed: an agent gets nothing rather than a wrong answer
        _log.warning("recall failed closed: %s", exc, exc_info=True)
        result = {"prompt": prompt, "notes": [], "memory": [], "abstained": True,
                  "reason": f"error: {exc}"}  # fmt: skip
    if opts.log is not None:
        _write_log(opts.log, result, services.clock())
    if not opts.explain:
        result.pop("decision", None)
    return result


def query_text(prompt: str) -> str:
    """Words only (no FTS syntax can fail), at most the first ``MAX_QUERY_WORDS``."""
    return " ".join(_WORD.findall(prompt)[:MAX_QUERY_WORDS])


def _recall(services: Services, prompt: str, opts: RecallOptions) -> dict[str, Any]:
    text = query_text(prompt)
    if not text:
        return _result(prompt, [], [], "empty prompt")
    words = content_words(text)
    if not enough_words(prompt, words, opts.gate):
        return _result(prompt, [], [], f"too short: {len(words)} content word(s) "
                       f"(recall needs {opts.gate.min_words})")  # fmt: skip
    taxonomy = _taxonomy(services)
    notes, why, decision = _notes(services, text, words, opts, taxonomy)
    memory, best_memory = _memory(services, text, opts)
    if not notes and memory:
        why = ""
    elif not notes and not why:
        why = f"nothing scored above the floor (best cosine {best_memory:.2f})"
    out = _result(prompt, notes, memory, why)
    out["decision"] = {"words": words, **decision}
    return out


def _result(prompt: str, notes: list[Any], memory: list[Any], reason: str) -> dict[str, Any]:
    return {"prompt": prompt, "notes": notes, "memory": memory,
            "abstained": not notes and not memory, "reason": reason}  # fmt: skip


def _passes(cosine: float, bm25: float, terms: int, opts: RecallOptions) -> bool:
    per_term = bm25 / max(terms, 1)
    return (
        cosine >= opts.min_score
        or per_term >= opts.min_lexical
        or (cosine >= opts.support_score and per_term >= opts.support_lexical)
    )


def _notes(services: Services, text: str, words: list[str], opts: RecallOptions,
           taxonomy: Taxonomy) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:  # fmt: skip
    """The notes the gate lets through (``core/relevance.py``), or none, why, and the scores."""
    if opts.max_notes <= 0:
        return [], "", {}
    if len(services.vectors) == 0:
        return [], "no note has a vector yet (run sidecar index)", {}
    ranked = services.search.rank(Query(text, limit=CANDIDATES, explain=True))
    hits = {c.path: c for c in ranked.best}
    bg = services.relevance.background(services)
    counts = services.relevance.word_notes(services, words)
    total = max(len(services.vectors), 1)
    weights = {w: idf(counts[w].count, total) for w in words}

    def weigh(path: str, passage: float) -> Evidence:
        cosine = float(hits[path].parts.get("cosine", 0.0)) if path in hits else 0.0
        cov = coverage(weights, [w for w in words if counts[w].in_note(path)])
        return gate_evidence(path, cosine, passage, cov, bg, opts.gate)

    evidence = {path: weigh(path, 0.0) for path in hits}
    chosen, why = decide(list(evidence.values()), opts.gate)
    best_passage: dict[str, tuple[float, str]] = {}
    rows: dict[str, dict[str, Any]] = {}
    if not chosen and len(words) >= opts.gate.passage_min_words:
        # Only a question about one line of a long chunk is left to find: compare the lines
        # holding the prompt's words, in the notes with enough of them to pass by a close line.
        hopeful = [e for e in evidence.values()
                   if passage_needed(e, bg, opts.gate) <= PASSAGE_CEILING]  # fmt: skip
        rows = _word_chunks(services, {e.path for e in hopeful}, words, counts, weights)
        best_passage = _passages(services, text, words, weights, rows, ranked.vec)
        for path, (cos, _) in best_passage.items():
            evidence[path] = weigh(path, cos)
        chosen, why = decide(list(evidence.values()), opts.gate)
    decision = {
        "background": {"mean": round(bg.mean, 4), "std": round(bg.std, 4)},
        "candidates": [e.to_dict() for e in sorted(evidence.values(), key=lambda e: -e.score)[:8]],
    }
    return _shape(services, chosen, ranked, rows, best_passage, opts, taxonomy), why, decision


def _word_chunks(services: Services, paths: set[str], words: list[str],
                 counts: dict[str, WordHits], weights: dict[str, float]) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Per note, the row of its chunk holding most of the prompt's rare words: of its body when
    the body holds any (the properties say what the note is, the body line is the answer)."""
    best: dict[str, tuple[bool, float, str]] = {}
    for w in words:
        for chunk in counts[w].chunks or ():
            path = chunk.rsplit("#", 1)[0]
            if path in paths:
                got = sum(weights[v] for v in words if chunk in (counts[v].chunks or ()))
                key = (not is_properties(chunk), got, chunk)
                if key[:2] > best.get(path, (False, 0.0, ""))[:2]:
                    best[path] = key
    top = sorted(best.values(), key=lambda k: k[1], reverse=True)[:PASSAGE_CHUNKS]
    found = chunk_rows(services.store, [c for _, _, c in top])
    return {row["path"]: row for row in found.values()}


def _passages(services: Services, text: str, words: list[str], weights: dict[str, float],
              rows: dict[str, dict[str, Any]], vec: Any) -> dict[str, tuple[float, str]]:  # fmt: skip
    """Per note, the best cosine of its lines that share the prompt's rarest words, and that
    line. At most ``MAX_PASSAGES`` lines are embedded: each costs a model run (~10-25 ms); the
    prompt's own vector is the search's."""
    pieces: list[tuple[float, str, str]] = []
    for path, row in rows.items():
        for piece in passages(row.get("text", ""), words, limit=4):
            pieces.append((shared_weight(piece, weights), path, piece))
    pieces = sorted(pieces, key=lambda p: -p[0])[:MAX_PASSAGES]
    if not pieces:
        return {}
    prompt = vec if vec is not None else services.search.query_vector(text)
    vectors = np.asarray(services.embedder.embed([p for _, _, p in pieces]), np.float32)
    cosines = vectors @ prompt
    best: dict[str, tuple[float, str]] = {}
    for (_, path, piece), cos in zip(pieces, cosines, strict=True):
        if cos > best.get(path, (-1.0, ""))[0]:
            best[path] = (float(cos), piece)
    return best


def _shape(services: Services, chosen: list[Evidence], ranked: Ranked,
           rows: dict[str, dict[str, Any]], best_passage: dict[str, tuple[float, str]],
           opts: RecallOptions, taxonomy: Taxonomy) -> list[dict[str, Any]]:  # fmt: skip
    """The chosen notes (each superseded one swapped for its successor), their rows read in
    one query, and only now: most prompts choose none."""
    cur = currency(services.state, taxonomy)
    picked: list[tuple[Evidence, str]] = []
    for ev in chosen:
        path = ev.path if opts.include_superseded else cur.current(ev.path)
        if path is None or path in {p for _, p in picked}:
            continue
        picked.append((ev, path))
        if len(picked) == opts.max_notes:
            break
    ranks = {c.path: c for c in ranked.best}
    hits = {h["path"]: h for h in
            services.search.shape(ranked, [ranks[p] for _, p in picked if p in ranks])}  # fmt: skip
    out: list[dict[str, Any]] = []
    for ev, path in picked:
        item = _note_item(services, hits.get(path) or _row_hit(rows.get(path), path), path,
                          taxonomy)  # fmt: skip
        if path == ev.path and ev.path in best_passage:
            item["snippet"] = best_passage[ev.path][1]
        item["score"] = round(ev.score, 2)
        if path != ev.path:
            item["replaces"] = ev.path
        out.append(item)
    _fit(out, opts.max_chars)
    return out


def _row_hit(row: dict[str, Any] | None, path: str) -> dict[str, Any]:
    row = row or {}
    return {"path": path, "heading": row.get("heading", ""), "start_line": row.get("start_line", 1),
            "end_line": row.get("end_line", 1), "snippet": snippet(row.get("text", ""), ""),
            "score": 0.0}  # fmt: skip


def _fit(items: list[dict[str, Any]], budget: int) -> None:
    """Snippets cut so that all notes together stay within ``budget`` characters."""
    if not items:
        return
    each = max(80, budget // len(items) - 60)
    for item in items:
        text = item.get("snippet", "")
        if len(text) > each:
            item["snippet"] = text[: each - 1].rstrip() + "…"


def _note_item(services: Services, hit: dict[str, Any], path: str,
               taxonomy: Taxonomy) -> dict[str, Any]:  # fmt: skip
    with services.state.lock:
        note = services.state.notes.get(path)
    item: dict[str, Any] = {"path": path, "title": note.title if note else path}
    if path == hit["path"]:
        item.update(heading=hit["heading"], start_line=hit["start_line"],
                    end_line=hit["end_line"], snippet=hit["snippet"])  # fmt: skip
    parts = hit.get("explain", {})
    item.update(cosine=parts.get("cosine", 0.0), bm25=parts.get("bm25", 0.0))
    hints = note_hints(services.state, taxonomy, path)
    hints += memory_hints(services.memory.index.snapshot(), path, _note_resolver(services))
    item["hints"] = hints
    return item


def _write_log(path: Path, result: dict[str, Any], now: dt.datetime) -> None:
    """One JSON line per decision, for tuning the gate on a vault's real prompts; never raises
    (the log is a diagnostic, recall's answer does not depend on it)."""
    line = {"time": now.isoformat(timespec="seconds"), "prompt": result["prompt"][:500],
            "abstained": result["abstained"], "reason": result["reason"],
            "notes": [n["path"] for n in result["notes"]],
            "memory": [m["id"] for m in result["memory"]], **result.get("decision", {})}  # fmt: skip
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    except OSError as exc:
        _log.warning("recall log %s: %s", path, exc)


def _memory(
    services: Services, text: str, opts: RecallOptions
) -> tuple[list[dict[str, Any]], float]:
    if opts.max_memory <= 0:
        return [], 0.0
    status = "all" if opts.include_superseded else "active"
    hits = search_memory(services.memory, text, opts.max_memory * 4, status=status,
                         query_vector=services.search.query_vector)  # fmt: skip
    terms = len(_TERM.findall(text))
    out, best = [], 0.0
    for h in hits:
        best = max(best, h.cosine)
        bm25 = float(h.parts["bm25"])
        if h.record.entry.status == "archived" or not _passes(h.cosine, bm25, terms, opts):
            continue
        item = services.memory.view(h.record, body=True)
        item["body"] = item["body"][:BODY_CHARS]
        item.update(score=h.score, cosine=round(h.cosine, 4))
        out.append(item)
        if len(out) == opts.max_memory:
            break
    return out, best


def _note_resolver(services: Services) -> Any:
    ids = set(services.memory.index.records)

    def resolve(name: str) -> str | None:
        found = services.memory.viewer.resolve(name, ids)
        return found.get("path") if found["kind"] == "note" else None

    return resolve


def _taxonomy(services: Services) -> Taxonomy:
    s = services.settings
    if s is None:
        return Taxonomy.default()
    return Taxonomy.from_config(
        s["relations.pairs"], s["relations.symmetric"], s["relations.known"]
    )
