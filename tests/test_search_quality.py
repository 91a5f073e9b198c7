"""Ranking that knows notes: confidence and abstention, codes in titles, per-stratum evaluation."""

from __future__ import annotations

from pathlib import Path

from sidecar.core.ranking import CONFIDENT, confidence
from sidecar.core.title_match import TitleMatcher
from sidecar.embed import TinyEmbedder
from sidecar.services.context import Services
from sidecar.services.evaluate import score
from sidecar.services.search import Query
from sidecar.store.beir import EvalQuery
from tests.conftest import VaultFactory

NOTES: dict[str, str | bytes] = {
    "decisions/ADR-5 Sessions in Postgres.md": "# ADR-5 Sessions in Postgres\n\nOne row each.\n",
    "decisions/ADR-7 Session storage.md": "# ADR-7 Session storage\n\nReplaces ADR-5 and ADR-6.\n",
    "cats.md": "# Cats\n\nThe cat sat on the warm mat all afternoon.\n",
}


def test_a_title_is_also_named_by_the_code_it_starts_with() -> None:
    m = TitleMatcher([("a.md", "ADR-5 Sessions in Postgres"), ("b.md", "ADR-55 Queues")])
    assert m.find("ADR-5") == ["a.md"]
    assert m.find("what did adr-55 decide") == ["b.md"]
    assert m.find("sessions") == []  # only the code, not every first word


def test_a_short_alias_names_its_note_only_when_it_is_the_whole_query() -> None:
    m = TitleMatcher([("z.md", "The Legend of Zelda Breath of the Wild"), ("z.md", "BOTW")])
    assert m.exact("BOTW") == ["z.md"]
    assert m.find("is BOTW open world") == []  # too short to look for inside a sentence
    m.drop("z.md", ["The Legend of Zelda Breath of the Wild", "BOTW"])
    assert m.exact("BOTW") == [] and m.find("the legend of zelda breath of the wild") == []


def test_confidence_follows_the_recall_rule() -> None:
    assert confidence(0.34, 0.0, 3) == CONFIDENT  # a cosine alone
    assert confidence(0.1, 4.5, 3) == CONFIDENT  # BM25 of 1.5 per query word alone
    assert confidence(0.25, 3.0, 3) == CONFIDENT  # a weaker cosine with a fair word match
    assert confidence(0.2, 1.0, 4) < CONFIDENT
    assert 0.0 <= confidence(-0.3, 0.0, 1) <= confidence(1.4, 99.0, 1) == 1.0


def test_results_carry_confidence_and_a_floor_drops_them(make_vault: VaultFactory,
                                                          tmp_path: Path) -> None:  # fmt: skip
    s = Services.open(make_vault(NOTES), tmp_path / "idx", embedder=TinyEmbedder())
    try:
        s.reindex()
        s.embed_stage.run()
        found = s.search.search(Query("ADR-5", min_confidence=0.0))["results"]
        assert found[0]["path"] == "decisions/ADR-5 Sessions in Postgres.md"
        assert all(0.0 <= r["confidence"] <= 1.0 for r in found)
        assert s.search.search(Query("ADR-5", min_confidence=1.01))["results"] == []
        lexical = s.search.search(Query("cat mat", mode="lexical"))["results"]
        assert [r["path"] for r in lexical] == ["cats.md"] and lexical[0]["confidence"] > 0
    finally:
        s.close()


def test_scores_per_stratum_and_lists_the_misses() -> None:
    queries = [
        EvalQuery("1", "a", {"x.md": 1}, "keyword"),
        EvalQuery("2", "b", {"y.md": 1}, "paraphrase"),
        EvalQuery("3", "c", {}, "no-answer"),
        EvalQuery("4", "d", {}, "no-answer"),
    ]
    rankings = [[("x.md", 0.9)], [("z.md", 0.8), ("y.md", 0.5)], [], [("z.md", 0.2)]]
    m = score(queries, rankings, floor=0.3)
    assert m["strata"]["keyword"]["mrr"] == 1.0
    assert m["strata"]["paraphrase"]["mrr"] == 0.5
    assert m["strata"]["no-answer"]["abstention"]["correctly_abstained"] == 1.0
    assert m["abstention"]["wrongly_abstained"] == 0.0
    misses = {x["id"]: x for x in m["misses"]}
    assert set(misses) == {"2", "4"}
    assert misses["2"]["first"] == "z.md" and misses["2"]["gold_rank"] == 2


def test_a_superseded_note_named_whole_still_comes_first(make_vault: VaultFactory,
                                                          tmp_path: Path) -> None:  # fmt: skip
    """Typing a note's name asks for that note (Obsidian's quick switcher opens it), even when
    it is superseded: it stays labelled, and its replacement follows it."""
    notes: dict[str, str | bytes] = {
        "ADR-5 Sessions in Postgres.md": '---\nstatus: superseded\nsuperseded_by: "[[ADR-7 '
        'Session storage]]"\n---\n# ADR-5 Sessions in Postgres\n\nOne row per session.\n',
        "ADR-7 Session storage.md": '---\nsupersedes: "[[ADR-5 Sessions in Postgres]]"\n---\n'
        "# ADR-7 Session storage\n\nReplaces ADR-5: sessions move to Redis.\n",
    }
    s = Services.open(make_vault(notes), tmp_path / "idx", embedder=TinyEmbedder())
    try:
        s.reindex()
        s.embed_stage.run()
        found = s.search.search(Query("ADR-5"))["results"]
        assert [r["path"] for r in found][:2] == ["ADR-5 Sessions in Postgres.md",
                                                  "ADR-7 Session storage.md"]  # fmt: skip
        assert found[0]["superseded_by"] == ["ADR-7 Session storage.md"]
        # a query that only mentions it keeps the current note first
        mentioned = s.search.search(Query("sessions in postgres one row"))["results"]
        assert mentioned[0]["path"] == "ADR-7 Session storage.md"
    finally:
        s.close()
