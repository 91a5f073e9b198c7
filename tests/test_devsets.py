"""The vault dev sets in bench/devsets: big enough, every stratum, gold that exists, fixed halves."""

from __future__ import annotations

import sys
from collections import Counter

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import devsets


def test_at_least_150_queries_over_four_vaults_in_five_strata() -> None:
    assert devsets.names() == [
        "dendron-site", "example-vault", "kepano-obsidian", "obsidian-tasks-docs"
    ]  # fmt: skip
    total = 0
    for name in devsets.names():
        rows = devsets.load(name)
        total += len(rows)
        assert set(Counter(str(r["stratum"]) for r in rows)) == set(devsets.STRATA), name
        assert len({r["id"] for r in rows}) == len(rows)
    assert total >= 150


def test_gold_paths_exist_and_only_no_answer_queries_have_none() -> None:
    for name in devsets.names():
        root = devsets.vault_root(name)
        for r in devsets.load(name):
            gold = list(r["gold"])  # type: ignore[call-overload]
            assert bool(gold) == (r["stratum"] != "no-answer"), r["id"]
            for path in gold:
                assert (root / path).is_file(), f"{r['id']}: {path} is not in {root}"


def test_splits_are_the_deterministic_halves() -> None:
    for name in devsets.names():
        rows = devsets.load(name)
        expected = {r["id"]: r["split"] for r in devsets.assign_splits(rows)}
        assert {r["id"]: r["split"] for r in rows} == expected
        for stratum in devsets.STRATA:
            split = Counter(r["split"] for r in rows if r["stratum"] == stratum)
            assert abs(split["tune"] - split["report"]) <= 1, (name, stratum)
