"""Recall's gate as pure functions (``core/relevance.py``), and the labelled set it is tuned on."""

from __future__ import annotations

import sys

import pytest

from sidecar.core.relevance import (
    BACKGROUND_PROMPTS,
    Background,
    GateOptions,
    content_words,
    decide,
    enough_words,
    evidence,
    passages,
    stem,
)
from tests.conftest import CORPORA, REPO

sys.path.insert(0, str(REPO / "bench"))
from recall_set import load_set, prompts_for

BG = Background(mean=0.30, std=0.08, vectors=1000)
OPTS = GateOptions()


def test_content_words_drop_function_words_and_chat() -> None:
    assert content_words("Thanks! What is the capital of France?") == ["capital", "france"]
    assert content_words("ok, go ahead please") == ["ahead"]
    assert content_words("Fix the failing unit test in parser.py") == [
        "fix", "failing", "unit", "test", "parser", "py"]  # fmt: skip


def test_short_prompts_are_skipped_unless_an_identifier() -> None:
    for prompt in ("thanks!", "ok", "lgtm", "hello there", "continue"):
        assert not enough_words(prompt, content_words(prompt), OPTS), prompt
    for prompt in ("ENOSPC", "--dry-run", "maxItemErrors", "dendron.yml", "schema lookup"):
        assert enough_words(prompt, content_words(prompt), OPTS), prompt


def test_stems_meet_across_plural_and_tense() -> None:
    assert stem("deadlines") == stem("deadline") and stem("hiring") == stem("hire")
    assert stem("queries") == stem("query") and stem("class") == "class"


def test_passages_are_the_lines_sharing_the_prompts_words() -> None:
    text = "- Always demand a deadline. It weeds out the ordinary.\n- Learn to nap.\n- Be kind."
    assert passages(text, ["deadlines", "kelly"]) == ["Always demand a deadline."]


def test_lexical_strength_alone_cannot_pass_the_semantic_floor() -> None:
    words_only = evidence("a.md", cosine=0.30, passage=0.0, cov=1.0, bg=BG, opts=OPTS)
    assert words_only.margin == 0.0 and decide([words_only], OPTS)[0] == []
    meaning_only = evidence("b.md", cosine=0.55, passage=0.0, cov=0.0, bg=BG, opts=OPTS)
    assert decide([meaning_only], OPTS)[0] == []  # 3 deviations, none of the prompt's words
    both = evidence("c.md", cosine=0.45, passage=0.0, cov=0.8, bg=BG, opts=OPTS)
    chosen, why = decide([words_only, both, meaning_only], OPTS)
    assert [e.path for e in chosen] == ["c.md"] and why == ""


def test_a_close_line_counts_less_than_a_close_chunk() -> None:
    line = evidence("a.md", cosine=0.10, passage=0.62, cov=0.75, bg=BG, opts=OPTS)
    assert line.margin == (0.62 - 0.30) / 0.08 - OPTS.passage_offset
    chunk = evidence("a.md", cosine=0.62, passage=0.0, cov=0.75, bg=BG, opts=OPTS)
    assert chunk.score - line.score == pytest.approx(OPTS.passage_offset)
    assert decide([line], OPTS)[0] == [line]


def test_abstaining_says_why() -> None:
    weak = evidence("a.md", cosine=0.35, passage=0.0, cov=0.2, bg=BG, opts=OPTS)
    chosen, why = decide([weak], OPTS)
    assert chosen == [] and why.startswith("nothing is about this prompt (best score 1.4")


def test_the_labelled_set_has_both_kinds_for_every_corpus_and_a_stable_split() -> None:
    rows = load_set()
    assert len(rows) >= 150
    off = [r for r in rows if r["kind"] == "off"]
    assert 0.4 <= len(off) / len(rows) <= 0.6
    assert {r["category"] for r in off} == {"greeting", "ack", "coding", "general", "shell"}
    for vault in ("dendron-site", "kepano-obsidian", "obsidian-tasks-docs"):
        on = [r for r in rows if r["vault"] == vault]
        assert len(on) >= 40
        for r in on:
            for gold in r["gold"]:
                assert (CORPORA / vault / "vault" / gold).is_file(), gold
        tune, report = (prompts_for(rows, vault, s) for s in ("tune", "report"))
        assert not {r["id"] for r in tune} & {r["id"] for r in report}
        assert abs(len(tune) - len(report)) <= 8
    assert [r["split"] for r in load_set()] == [r["split"] for r in rows]  # deterministic
    assert not {r["prompt"].lower() for r in rows} & {p.lower() for p in BACKGROUND_PROMPTS}
