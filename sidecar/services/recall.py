"""Recall: the agent's budget for one prompt (DESIGN section 6).

At most ``max_notes`` notes and ``max_memory`` memory entries, each with evidence above a floor
on an absolute scale (the cosine of the prompt to the text, or a strong BM25 match for
identifiers a model does not know); below it recall abstains rather than hand an agent
unrelated text. A superseded note is swapped for the note that replaced it unless asked for.
Any error fails closed: nothing recalled, ``abstained`` true and the reason, never a traceback
into an agent's context.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sidecar.core.relations import Taxonomy
from sidecar.services.memory_search import search_memory
from sidecar.services.recall_hints import currency, memory_hints, note_hints
from sidecar.services.search import Query

if TYPE_CHECKING:
    from sidecar.services.context import Services

_log = logging.getLogger(__name__)
_WORD = re.compile(r"\w+", re.UNICODE)
_TERM = re.compile(r"[^\W_]+", re.UNICODE)  # what the FTS tokenizer splits a query into
MAX_QUERY_WORDS = 64
BODY_CHARS = 400


@dataclass(frozen=True, slots=True)
class RecallOptions:
    """The floors were tuned on the markdown-memory dev split and mdkb's unrelated prompts
    (docs/benchmarks.md, memory recall): with all-MiniLM-L6-v2 a cosine of 0.34 alone is evidence; BM25 is
    counted per query word, since a long prompt piles up score from common words."""

    max_notes: int = 4
    max_memory: int = 3
    min_score: float = 0.34  # cosine alone suffices
    min_lexical: float = 1.5  # BM25 per query word alone suffices (identifiers)
    support_score: float = 0.25  # a weaker cosine ...
    support_lexical: float = 1.0  # ... with a fair word match also suffices
    include_superseded: bool = False


def recall(
    services: Services, prompt: str, opts: RecallOptions = RecallOptions()
) -> dict[str, Any]:
    try:
        return _recall(services, prompt, opts)
    except Exception as exc:  # fail closed: an agent gets nothing rather than a wrong answer
        _log.warning("recall failed closed: %s", exc, exc_info=True)
        return {"prompt": prompt, "notes": [], "memory": [], "abstained": True,
                "reason": f"error: {exc}"}  # fmt: skip


def query_text(prompt: str) -> str:
    """Words only (no FTS syntax can fail), at most the first ``MAX_QUERY_WORDS``."""
    return " ".join(_WORD.findall(prompt)[:MAX_QUERY_WORDS])


def _recall(services: Services, prompt: str, opts: RecallOptions) -> dict[str, Any]:
    text = query_text(prompt)
    if not text:
        return _result(prompt, [], [], "empty prompt")
    taxonomy = _taxonomy(services)
    notes, best_note = _notes(services, text, opts, taxonomy)
    memory, best_memory = _memory(services, text, opts)
    best = max(best_note, best_memory)
    why = "" if notes or memory else (
        f"nothing scored above the floor (best cosine {best:.2f} < {opts.min_score:.2f})"
    )  # fmt: skip
    return _result(prompt, notes, memory, why)


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


def _notes(services: Services, text: str, opts: RecallOptions,
           taxonomy: Taxonomy) -> tuple[list[dict[str, Any]], float]:  # fmt: skip
    if opts.max_notes <= 0:
        return [], 0.0
    found = services.search.search(Query(text, limit=opts.max_notes * 4, explain=True))
    terms = len(_TERM.findall(text))
    cur = currency(services.state, taxonomy)
    own = {h["path"]: h for h in found["results"]}
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    best = 0.0
    for hit in found["results"]:
        parts = hit.get("explain", {})
        cosine, bm25 = float(parts.get("cosine", 0.0)), float(parts.get("bm25", 0.0))
        best = max(best, cosine)
        if not _passes(cosine, bm25, terms, opts):
            continue
        path = hit["path"] if opts.include_superseded else cur.current(hit["path"])
        if path is None or path in seen:
            continue
        seen.add(path)
        item = _note_item(services, own.get(path, hit), path, taxonomy)
        if path != hit["path"]:
            item["replaces"] = hit["path"]
        out.append(item)
        if len(out) == opts.max_notes:
            break
    return out, best


def _note_item(services: Services, hit: dict[str, Any], path: str,
               taxonomy: Taxonomy) -> dict[str, Any]:  # fmt: skip
    with services.state.lock:
        note = services.state.notes.get(path)
    item: dict[str, Any] = {"path": path, "title": note.title if note else path}
    if path == hit["path"]:
        item.update(heading=hit["heading"], start_line=hit["start_line"],
                    end_line=hit["end_line"], snippet=hit["snippet"])  # fmt: skip
    parts = hit.get("explain", {})
    item.update(score=hit["score"], cosine=parts.get("cosine", 0.0), bm25=parts.get("bm25", 0.0))
    hints = note_hints(services.state, taxonomy, path)
    hints += memory_hints(services.memory.index.snapshot(), path, _note_resolver(services))
    item["hints"] = hints
    return item


def _memory(
    services: Services, text: str, opts: RecallOptions
) -> tuple[list[dict[str, Any]], float]:
    if opts.max_memory <= 0:
        return [], 0.0
    status = "all" if opts.include_superseded else "active"
    hits = search_memory(services.memory, text, opts.max_memory * 4, status=status)
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
