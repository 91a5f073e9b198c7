"""The vault dev sets (``bench/devsets/*.jsonl``): labelled queries over real vaults.

Each line is ``{"id", "query", "gold": [vault paths], "stratum", "split"}``. The queries were
written by reading the notes, as a user of that vault would ask, never from a ranking. Strata:

- ``keyword``: words that appear in the answer;
- ``paraphrase``: the meaning of the answer without the words of its title;
- ``identifier``: a config key, a query instruction, an id, an alias, a property value;
- ``multi-hop``: the words match a note, the answer is one link away from it;
- ``no-answer``: nothing in the vault answers it (empty gold: the right result is nothing).

``split`` is fixed by :func:`assign_splits` (half of each vault's stratum is ``tune``, the other
half ``report``) and checked by a test, so the halves cannot drift when a query is added. Tune
on the ``tune`` half; report only the ``report`` half.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

HERE = Path(__file__).parent / "devsets"
REPO = Path(__file__).resolve().parents[1]
STRATA = ("keyword", "paraphrase", "identifier", "multi-hop", "no-answer")


def vault_root(name: str) -> Path:
    """Where each set's vault lives: the example vault in the repo, the rest in shared/."""
    if name == "example-vault":
        return REPO / "docs" / "example-vault"
    return REPO.parent / "shared" / "corpora" / name / "vault"


def assign_splits(rows: Iterable[dict[str, object]]) -> list[dict[str, object]]:
    """Within each stratum, order by the sha1 of the query and alternate tune, report, ...

    Deterministic, balanced per stratum, and independent of the order lines are written in.
    """
    rows = [dict(r) for r in rows]
    by_stratum: dict[str, list[dict[str, object]]] = {}
    for r in rows:
        by_stratum.setdefault(str(r["stratum"]), []).append(r)
    for group in by_stratum.values():
        group.sort(key=lambda r: hashlib.sha1(str(r["query"]).encode()).hexdigest())
        for i, r in enumerate(group):
            r["split"] = "tune" if i % 2 == 0 else "report"
    return rows


def load(name: str, split: str = "all") -> list[dict[str, object]]:
    rows = [json.loads(line) for line in (HERE / f"{name}.jsonl").read_text("utf-8").splitlines()
            if line.strip()]  # fmt: skip
    return [r for r in rows if split == "all" or r["split"] == split]


def names() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.jsonl"))
