"""Recall with the real model on a real vault: silent on what people type into an agent that is
not about the vault (the reproducers of issue 22 among them), speaking on questions it answers.

Prompts come from the tune half of ``bench/recall_set.jsonl``; the report half is for the
benchmark (docs/benchmarks.md, recall), never asserted here.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from sidecar.api import build_registry
from sidecar.embed import load_embedder
from sidecar.services.context import Services
from tests.conftest import REPO, corpus

sys.path.insert(0, str(REPO / "bench"))
from recall_set import load_set, prompts_for

REGISTRY = build_registry()
pytestmark = pytest.mark.e2e  # the real model over a whole real vault
ISSUE = ["thanks!", "What is the capital of France?", "Fix the failing unit test in parser.py"]


@pytest.fixture(scope="module")
def kepano(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    root = tmp_path_factory.mktemp("kepano")
    shutil.copytree(corpus("kepano-obsidian"), root / "vault")
    s = Services.open(root / "vault", root / "idx", embedder=load_embedder("minilm"))
    s.reindex()
    s.embed_stage.run()
    yield s
    s.close()


def recall(s: Services, prompt: str) -> dict[str, Any]:
    return REGISTRY.call(s, "recall", {"prompt": prompt})


def test_silent_on_prompts_that_are_not_about_the_vault(kepano: Services) -> None:
    tune = [r["prompt"] for r in prompts_for(load_set(), "kepano-obsidian", "tune")
            if r["kind"] == "off"]  # fmt: skip
    spoke = {p: [n["path"] for n in r["notes"]] for p in [*ISSUE, *tune]
             if not (r := recall(kepano, p))["abstained"]}  # fmt: skip
    assert spoke == {}


def test_answers_questions_about_its_notes(kepano: Services) -> None:
    tune = [r for r in prompts_for(load_set(), "kepano-obsidian", "tune") if r["kind"] == "on"]
    missed = [r["prompt"] for r in tune
              if not {n["path"] for n in recall(kepano, r["prompt"])["notes"]} & set(r["gold"])]  # fmt: skip
    assert len(missed) <= 1, missed
    r = recall(kepano, "What does cost per use mean when deciding what to buy?")
    assert r["notes"][0]["path"] == "Clippings/Buy wisely.md"
    assert len(r["notes"]) <= 4 and sum(len(n.get("snippet", "")) for n in r["notes"]) <= 900


def test_a_line_of_a_long_list_is_found(kepano: Services) -> None:
    """The advice sits in one line of a 13-chunk clipping; its chunk's cosine is 0.2."""
    r = REGISTRY.call(kepano, "recall", {"prompt": "What does Kevin Kelly say about deadlines?",
                                         "explain": True})  # fmt: skip
    notes = {n["path"]: n for n in r["notes"]}
    assert "deadline" in notes["Clippings/68 Bits of Unsolicited Advice.md"]["snippet"].lower()
    assert r["decision"]["words"] == ["kevin", "kelly", "say", "deadlines"]
