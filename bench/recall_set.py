"""The labelled prompts of ``recall_set.jsonl`` and their deterministic tune/report split.

Within each group (kind, vault, category) prompts are ordered by the SHA-256 of their id and
alternate tune, report, tune, ... so each half holds every kind of prompt. No sidecar imports:
tests and older checkouts load the set the same way.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def load_set(path: Path = HERE / "recall_set.jsonl") -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["kind"], r["vault"], r["category"])].append(r)
    for members in groups.values():
        members.sort(key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())
        for i, r in enumerate(members):
            r["split"] = "tune" if i % 2 == 0 else "report"
    return rows


def prompts_for(rows: list[dict[str, Any]], vault: str, split: str) -> list[dict[str, Any]]:
    return [
        r for r in rows
        if r["vault"] in ("*", vault) and split in ("all", r["split"])
        and vault not in r.get("except", {})
    ]  # fmt: skip
