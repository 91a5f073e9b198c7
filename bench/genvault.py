"""A deterministic synthetic vault: realistic note lengths, headings, power-law wikilinks, typed
relations, tags, and a small rate of invalid frontmatter.

    python bench/genvault.py OUT_DIR --notes 10000 [--seed 7]

Same seed and count, same bytes. Text comes from a fixed vocabulary (so BM25 and the model see
plausible, varied sentences), link targets are drawn with a Zipf-like weight so a few hubs
collect most backlinks, as in real vaults.
"""

from __future__ import annotations

import argparse
import random
from itertools import accumulate
from pathlib import Path

WORDS = [
    "session",
    "token",
    "cache",
    "redis",
    "postgres",
    "index",
    "query",
    "vault",
    "note",
    "graph",
    "link",
    "backlink",
    "decision",
    "design",
    "review",
    "deploy",
    "service",
    "latency",
    "memory",
    "budget",
    "reminder",
    "agent",
    "search",
    "vector",
    "model",
    "chunk",
    "heading",
    "paragraph",
    "release",
    "bug",
    "fix",
    "test",
    "metric",
    "dashboard",
    "owner",
    "team",
    "meeting",
    "plan",
    "risk",
    "migration",
    "schema",
    "config",
    "daemon",
    "socket",
    "plugin",
    "editor",
    "sync",
    "backup",
    "archive",
    "project",
    "customer",
    "invoice",
    "contract",
    "roadmap",
    "milestone",
    "incident",
    "runbook",
    "alert",
    "queue",
    "worker",
    "batch",
    "network",
    "storage",
    "disk",
    "cpu",
    "thread",
    "lock",
    "writer",
    "reader",
    "event",
    "watcher",
    "debounce",
    "compaction",
]
FOLDERS = ("projects", "areas", "resources", "daily", "people", "decisions", "meetings")
RELATIONS = ("depends_on", "supersedes", "relates_to", "decided_by", "caused")


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random, names: list[str], weights: list[float]) -> str:
    """``weights`` are cumulative (``random.choices``' ``cum_weights``): summing 100k weights
    for every link made a 100k-note vault take most of an hour; the draws are the same."""
    parts = []
    for _ in range(rng.randint(2, 6)):
        s = sentence(rng)
        if rng.random() < 0.35:
            target = rng.choices(names, cum_weights=weights)[0]
            s = s[:-1] + f", see [[{target}]]."
        parts.append(s)
    return " ".join(parts)


def note(i: int, rng: random.Random, names: list[str], weights: list[float]) -> str:
    lines = []
    if rng.random() < 0.01:
        lines += ["---", "created: {{date}}", "---"]  # a template left unfilled: invalid YAML
    else:
        tags = sorted({rng.choice(WORDS) for _ in range(rng.randint(0, 3))})
        lines += ["---", f"tags: [{', '.join(tags)}]", f"priority: {rng.randint(1, 5)}"]
        if rng.random() < 0.15:
            rel = rng.choice(RELATIONS)
            lines.append(f'{rel}: ["[[{rng.choices(names, cum_weights=weights)[0]}]]"]')
        lines.append("---")
    lines.append(f"# {names[i]}")
    for _ in range(rng.choices([1, 2, 3, 5, 8], [30, 30, 20, 15, 5])[0]):
        if rng.random() < 0.6:
            lines += ["", f"## {sentence(rng)[:-1][:40]}"]
        lines += ["", paragraph(rng, names, weights)]
    return "\n".join(lines) + "\n"


def generate(out: Path, count: int, seed: int = 7) -> list[Path]:
    rng = random.Random(seed)
    names = [f"{rng.choice(WORDS).title()} {rng.choice(WORDS)} {i}" for i in range(count)]
    weights = list(accumulate(1.0 / (rank + 1) ** 0.9 for rank in range(count)))
    written = []
    for i in range(count):
        folder = out / FOLDERS[i % len(FOLDERS)] / f"{i // 1000:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{names[i]}.md"
        path.write_text(note(i, rng, names, weights), "utf-8")
        written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    paths = generate(args.out, args.notes, args.seed)
    print(f"wrote {len(paths)} notes under {args.out}")


if __name__ == "__main__":
    main()
