"""Is a prompt about this vault? The pure half of recall's decision to speak or stay silent.

An agent's prompts are mostly not questions for the vault: "thanks!", "fix the failing test in
parser.py", "what is the capital of France?". Any search finds *something* for them, so recall
asks for evidence on three scales before it hands an agent a note:

* **meaning, against the vault's background.** A cosine means little on its own: coding prompts
  score 0.5 against a software vault's notes and 0.3 against a recipe vault's. So each cosine is
  measured in standard deviations above the vault's *background*, the best cosines that
  generic prompts (``BACKGROUND_PROMPTS``: chat, coding requests, shell and trivia questions)
  reach in this vault. This is the semantic floor: no word match can make up for it.
* **the prompt's specific words, weighted by the vault's own IDF.** A note that contains the
  prompt's rare words ("giscus", "deadline") is evidence; one that shares only words common in
  this vault ("note", "test", "fix" in a software vault) or absent from it ("pytest" in a notes
  vault) is not. ``coverage`` is the IDF-weighted share of the prompt's content words a note
  contains, so a word the vault never uses counts fully against the match.
* **the passage, not only the chunk.** A question about one line of a long list ("what did the
  advice say about deadlines?") is diluted in its chunk's vector; the lines that share the
  prompt's words are embedded and compared too.

A note's score is its best semantic margin plus ``coverage_weight`` times its coverage; recall
speaks only when some note reaches ``threshold`` with a margin of at least ``min_margin``, and
prompts with fewer than ``min_words`` content words are never answered. The constants were
tuned on the tune half of ``bench/recall_set.jsonl`` (docs/benchmarks.md, recall).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # as the FTS tokenizer splits text
_PIECE = re.compile(r"\n+|(?<=[.!?])\s+")

# Function words and the filler of chat with an agent: they say nothing about the subject.
STOP_WORDS = frozenset(
    """a about above after again against all also am an and another any are as at be because
    been before being below between both but by can cannot could did do does doing done down
    during each either else etc ever every few for from further get gets getting go goes going
    gone got had has have having he her here hers him his how i if in into is it its itself
    just let lets like me mine more most much must my myself no nor not now of off on once
    one only or other our ours out over own please same shall she should so some such than
    that the their theirs them then there these they this those through to too under until
    up upon us very was we were what whats when where which while who whom whose why will
    with within without would yes yet you your yours yourself hi hello hey thanks thank ok
    okay sure yeah yep nope cool great good nice awesome perfect fine right wrong really
    maybe pls thx lol hmm oh ah s t d ll m re ve don doesn didn isn wasn won""".split()  # noqa: SIM905
)

# Prompts that are about nothing in particular, of the kinds people type into a coding agent.
# Their best cosines in a vault are its background. None of them is in bench/recall_set.jsonl.
BACKGROUND_PROMPTS: tuple[str, ...] = (
    "hi there", "good afternoon", "thank you", "okay, sounds right", "yes, do that",
    "please stop", "can you explain that again?", "what do you think?",
    "let's try something else", "that didn't work",
    "Add input validation to the signup handler in views.py",
    "Why does this function return None instead of a list?",
    "Write a unit test for the cache eviction logic",
    "Fix the off-by-one error in the loop in main.c",
    "Refactor this module to remove the global variables",
    "Add a docstring to every public function in api.py",
    "The build fails with a missing semicolon in index.js",
    "Make the API return 404 when the user is not found",
    "Write a SQL query that counts orders per customer",
    "Implement retry with exponential backoff for the HTTP client",
    "Convert this JSON to a TypeScript interface",
    "Why is my Python script so slow when reading a large CSV?",
    "Add a loading spinner while the data is fetched",
    "Create a Dockerfile for a Flask application",
    "What does this stack trace mean: KeyError: 'id'",
    "Write a function that reverses a linked list",
    "Set up eslint and prettier for this repository",
    "Update the dependencies and fix the breaking changes",
    "Explain the difference between a process and a thread",
    "Generate a random password in Python",
    "How do I list hidden files in a directory?", "How do I rename a git branch?",
    "How do I find which package provides a command on Debian?",
    "How do I compress a folder into a zip file from the terminal?",
    "How do I see the last 20 lines of a file?",
    "How do I run a command in the background and log its output?",
    "How do I check which version of node is installed?",
    "How do I copy a file over ssh with scp?", "How do I search my shell history?",
    "How do I change the owner of a directory recursively?",
    "Who painted the Mona Lisa?", "What is the tallest mountain in the world?",
    "How many planets are in the solar system?", "What is the chemical symbol for gold?",
    "When did the first person land on the moon?", "What language is spoken in Brazil?",
    "How does a refrigerator keep food cold?", "What is the largest ocean on Earth?",
    "Tell me a joke about programmers", "What's a good recipe for pancakes?",
    "How do I convert Celsius to Fahrenheit?", "What is the square root of 144?",
    "Who is the author of the Harry Potter books?", "What time zone is New York in?",
    "Give me a synonym for happy", "What is inflation in economics?",
    "How do airplanes stay in the air?", "Write a short poem about the ocean",
    "What are the rules of chess?", "What should I cook for dinner tonight?",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class GateOptions:
    min_words: int = 2  # content words a prompt needs before recall looks at all
    threshold: float = 5.0  # a note's score needed for recall to speak
    select: float = 4.0  # score each further note needs once recall speaks
    min_margin: float = 1.0  # semantic margin (background deviations) no note may lack
    coverage_weight: float = 4.0  # score for a note holding all of the prompt's words
    passage_offset: float = 2.0  # a short passage's cosine runs higher than its chunk's
    passage_min_words: int = 3  # a line matching a two-word chat prompt is chance
    min_std: float = 0.04  # a background tighter than this (tiny vaults) is widened to it


@dataclass(frozen=True, slots=True)
class Background:
    """How similar generic prompts look to this vault: mean and spread of their best cosines."""

    mean: float
    std: float
    vectors: int  # how many vectors it was measured on (remeasured when that drifts)

    def margin(self, cosine: float, min_std: float) -> float:
        return (cosine - self.mean) / max(self.std, min_std)


@dataclass(frozen=True, slots=True)
class Evidence:
    path: str
    cosine: float  # the note's best chunk, 0 when it was not among the semantic candidates
    passage: float  # best cosine of a passage sharing the prompt's words, 0 when none did
    coverage: float
    margin: float
    score: float

    def to_dict(self) -> dict[str, float | str]:
        return {"path": self.path, "cosine": round(self.cosine, 4),
                "passage": round(self.passage, 4), "coverage": round(self.coverage, 3),
                "margin": round(self.margin, 2), "score": round(self.score, 2)}  # fmt: skip


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def content_words(prompt: str) -> list[str]:
    """The prompt's words that could name a subject, each once, in order."""
    seen: dict[str, None] = {}
    for w in words(prompt):
        if len(w) > 1 and not w.isdigit() and w not in STOP_WORDS:
            seen.setdefault(w, None)
    return list(seen)


_IDENTIFIER = re.compile(r"[A-Z][A-Z0-9]{3,}|\w_\w|[a-z][A-Z]|^\s*[-/.]{1,2}\w|\w\.\w")


def enough_words(prompt: str, found: Sequence[str], opts: GateOptions) -> bool:
    """Whether a prompt says enough to be looked up: ``min_words`` content words, or a single
    identifier (``ENOSPC``, ``--dry-run``, ``maxItemErrors``), a whole question in one word."""
    if len(found) >= opts.min_words:
        return True
    return len(found) == 1 and bool(_IDENTIFIER.search(prompt))


def stem(word: str) -> str:
    """A crude English stem, enough to see that "deadlines" and "deadline." or "hiring" and
    "hire" share a word."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    for suffix in ("ing", "ed", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def idf(df: int, total: int) -> float:
    """BM25's IDF: a word in no chunk weighs most, a word in half of them almost nothing."""
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def coverage(weights: Mapping[str, float], present: Iterable[str]) -> float:
    total = sum(weights.values())
    return sum(weights[w] for w in set(present) if w in weights) / total if total else 0.0


def passages(text: str, prompt_words: Iterable[str], limit: int = 4) -> list[str]:
    """Lines and sentences of a chunk that share a stem with the prompt's content words."""
    stems = {stem(w) for w in prompt_words}
    out = []
    for piece in _PIECE.split(text):
        piece = piece.strip().lstrip("-*>#0123456789. ").strip()
        if piece and stems & {stem(w) for w in words(piece)}:
            out.append(piece[:240])
            if len(out) == limit:
                break
    return out


def shared_weight(piece: str, weights: Mapping[str, float]) -> float:
    """The IDF weight of the prompt's words a passage holds (by stem)."""
    stems = {stem(w) for w in words(piece)}
    return sum(v for w, v in weights.items() if stem(w) in stems)


def passage_needed(found: Evidence, bg: Background, opts: GateOptions) -> float:
    """The cosine a passage of this note would need for the note to reach the threshold."""
    margin = opts.threshold - opts.coverage_weight * found.coverage + opts.passage_offset
    return bg.mean + margin * max(bg.std, opts.min_std)


def evidence(path: str, cosine: float, passage: float, cov: float, bg: Background,
             opts: GateOptions) -> Evidence:  # fmt: skip
    margin = bg.margin(cosine, opts.min_std)
    if passage > 0:
        margin = max(margin, bg.margin(passage, opts.min_std) - opts.passage_offset)
    return Evidence(path, cosine, passage, cov, margin, margin + opts.coverage_weight * cov)


def decide(found: Sequence[Evidence], opts: GateOptions) -> tuple[list[Evidence], str]:
    """The notes to hand over, best first, or none and why."""
    eligible = [e for e in found if e.margin >= opts.min_margin]
    best = max(eligible, key=lambda e: e.score, default=None)
    if best is None or best.score < opts.threshold:
        top = max((e.score for e in found), default=0.0)
        return [], f"nothing is about this prompt (best score {top:.1f} < {opts.threshold:.1f})"
    chosen = [e for e in eligible if e.score >= opts.select]
    return chosen, ""
