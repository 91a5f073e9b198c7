import datetime as dt

import pytest

from sidecar.core.filters import matches, parse_filters, path_matches, tag_matches
from sidecar.core.metrics import mrr, ndcg_at, recall_at, summarise
from sidecar.core.ranking import bm25_normalise, decay, rrf
from sidecar.errors import UsageError


def test_rrf_pins_the_reference_constants() -> None:
    fused = {f.key: f for f in rrf([["a", "b", "c"], ["b", "a", "d"]], k=60)}
    # rank 1 in both lists is the best possible: normalised to exactly 1.0
    assert rrf([["x"], ["x"]])[0].score == pytest.approx(1.0)
    assert fused["a"].score == pytest.approx((1 / 61 + 1 / 62) / (2 / 61))
    assert fused["d"].score == pytest.approx((1 / 63) / (2 / 61))
    assert fused["d"].ranks == (None, 3)
    assert [f.key for f in rrf([["a", "b", "c"], ["b", "a", "d"]])][:2] == ["a", "b"]


def test_bm25_and_decay_normalisation() -> None:
    assert bm25_normalise(1.5) == pytest.approx(0.5)
    assert bm25_normalise(0) == 0.0
    assert 0 < bm25_normalise(100) < 1
    assert decay(30, 30) == pytest.approx(0.5)
    assert decay(0, 30) == 1.0 and decay(10, 0) == 1.0


def test_filters_compare_by_meaning() -> None:
    fm = {"priority": 2, "status": "Active", "tags": ["a", "b"], "due": dt.date(2026, 12, 1).isoformat(),
          "score": "3.5", "done": False}  # fmt: skip

    def ok(expr: str) -> bool:
        return matches(fm, parse_filters([expr])[0])

    assert ok("priority=2") and ok("priority=2.0") and not ok("priority=3")
    assert ok("status=active")  # case-insensitive text
    assert ok("tags=b") and not ok("tags=c") and ok("tags!=c")
    assert ok("due<2026-12-02") and not ok("due<2026-11-30") and ok("due>=2026-12-01")
    assert ok("score>3") and not ok("score<3")
    assert ok("done=false")
    assert ok("missing!=x") and not ok("missing=x")
    assert not ok("status<5")  # text and number do not order
    with pytest.raises(UsageError):
        parse_filters(["no operator"])


def test_tag_and_path_prefix() -> None:
    assert tag_matches(["project/alpha"], "project") and tag_matches(["x"], "#X")
    assert not tag_matches(["projects"], "project")
    assert path_matches("a/b/c.md", "a/b") and path_matches("a/b/c.md", "a/b/")
    assert path_matches("a/b.md", "") and not path_matches("ab/c.md", "x")


def test_metrics() -> None:
    gold = {"d1": 1, "d2": 1}
    assert recall_at(["d1", "x", "d2"], gold, 2) == 0.5
    assert mrr(["x", "d2"], gold) == 0.5
    assert ndcg_at(["d1", "d2"], gold) == pytest.approx(1.0)
    assert ndcg_at(["x", "d1"], gold) < 1.0
    assert summarise([(["d1"], gold), (["x"], {})])["queries"] == 1


def test_weighted_rrf_caps_at_one_and_counts_only_present_lists() -> None:
    fused = {f.key: f for f in rrf([["a", "b"], ["b"], ["a"]], k=10, weights=(1, 1, 0.5),
                                   best=2 / 11)}  # fmt: skip
    assert fused["b"].score == pytest.approx((1 / 12 + 1 / 11) / (2 / 11))
    assert fused["a"].score == pytest.approx((1 / 11 + 0.5 / 11) / (2 / 11))
    assert rrf([["x"], ["x"], ["x"]], k=10, weights=(1, 1, 1), best=2 / 11)[0].score == 1.0


def test_title_matcher_finds_whole_names_longest_first() -> None:
    from sidecar.core.title_match import TitleMatcher

    m = TitleMatcher([("jmp.md", "Journal of Mathematical Physics"), ("j.md", "Journal"),
                      ("go.md", "Go"), ("alias.md", "Auth Service")])  # fmt: skip
    assert m.find("Who edits the journal of mathematical physics?") == ["jmp.md", "j.md"]
    assert m.find("Let's go") == []  # too short to trust
    assert m.find("the auth service, again") == ["alias.md"]
    assert m.find("authentication services") == []

    # Patched per note, as the state does on every change: the same answers as a fresh build.
    m.put("j.md", ["Journal Club", "Journal"], before=["Journal"])
    m.drop("alias.md", ["Auth Service"])
    m.put("go.md", ["Gone Elsewhere"], before=["Go"])
    m.put("new.md", ["Journal of Mathematical Physics Letters"])
    fresh = TitleMatcher([("jmp.md", "Journal of Mathematical Physics"),
                          ("j.md", "Journal Club"), ("j.md", "Journal"), ("go.md", "Gone Elsewhere"),
                          ("new.md", "Journal of Mathematical Physics Letters")])  # fmt: skip
    for text in (
        "the journal of mathematical physics letters",
        "journal club",
        "auth service",
        "journal",
        "go",
        "gone elsewhere",
    ):
        assert m.find(text) == fresh.find(text) and m.exact(text) == fresh.exact(text)
    assert m._by_first == fresh._by_first and m._short == fresh._short  # nothing left behind
    assert m.find("journal of mathematical physics letters") == ["new.md", "jmp.md", "j.md"]
    assert m.find("the auth service") == []
