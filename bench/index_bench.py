"""Index speed without embeddings: cold index, one-edit re-index, graph query latency.

    python bench/index_bench.py [VAULT]      # default: ../shared/corpora/dendron-site/vault

Copies the vault to a temp dir (the edit must not touch the original), indexes it cold into a
fresh LanceDB store (wall seconds, and CPU seconds of this process and the parser child: what
decides the time on a busy machine), appends a line to one note and re-indexes (repeated;
then that note's parse alone, its share of a re-index), then times
``note.backlinks``/``note.links``/``graph.neighbors`` over many notes. Prints Markdown rows.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, pct

from sidecar.core.note import parse_note
from sidecar.services.context import Services

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "dendron-site" / "vault"


def _cpu() -> float:
    """CPU seconds of this process and its waited-for children (the parser child): what a
    cold index costs on a machine whose cores are busy with other work."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(source, vault)
        services = Services.open(vault, Path(tmp) / "data")
        started, cpu = time.perf_counter(), _cpu()
        report = services.reindex()
        cold = time.perf_counter() - started
        cold_cpu = _cpu() - cpu
        notes = sorted(services.state.notes)
        target = vault / notes[len(notes) // 2]
        edits = []
        for i in range(20):
            with target.open("a", encoding="utf-8") as fh:
                fh.write(f"\nedit {i} links [[{Path(notes[i]).stem}]]\n")
            st = target.stat()
            os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + (i + 1) * 10**9))
            t0 = time.perf_counter()
            one = services.reindex(paths=[target.relative_to(vault).as_posix()])
            edits.append((time.perf_counter() - t0) * 1000)
            assert one.parsed == 1
        # The parse alone of the edited note, as the re-index parses it: its share of the above.
        rel, text = target.relative_to(vault).as_posix(), target.read_text("utf-8")
        parses = []
        for _ in range(20):
            t0 = time.perf_counter()
            parse_note(rel, text, "")
            parses.append((time.perf_counter() - t0) * 1000)
        full_noop = []
        for _ in range(5):
            t0 = time.perf_counter()
            services.reindex()
            full_noop.append((time.perf_counter() - t0) * 1000)
        queries: dict[str, list[float]] = {"note.backlinks": [], "note.links": [],
                                           "graph.neighbors (depth 2)": []}  # fmt: skip
        for path in notes:
            for name, call in (
                ("note.backlinks", lambda p=path: services.graph.backlinks(p)),
                ("note.links", lambda p=path: services.graph.links(p)),
                ("graph.neighbors (depth 2)", lambda p=path: services.graph.neighbors(p, 2)),
            ):
                t0 = time.perf_counter()
                call()
                queries[name].append((time.perf_counter() - t0) * 1000)
        services.close()
    print(f"Machine: {describe()}  ")
    print(f"Command: `python bench/index_bench.py {source}`\n")
    print("| measure | value |")
    print("|---|---|")
    print(f"| notes / chunks / edges | {report.notes} / {report.chunks} / {report.edges} |")
    print(f"| cold index, no embeddings | {cold:.2f} s ({report.notes / cold:.0f} notes/s) |")
    print(f"| its CPU, this process and the parser child | {cold_cpu:.2f} s |")
    print(f"| re-index after one edit (20 runs) | p50 {statistics.median(edits):.1f} ms, "
          f"p95 {pct(edits, 0.95):.1f} ms |")  # fmt: skip
    print(f"| of which the note's parse (`parse_note`, {len(text):,} chars, 20 runs) | "
          f"p50 {statistics.median(parses):.1f} ms, p95 {pct(parses, 0.95):.1f} ms |")  # fmt: skip
    print(f"| full scan, nothing changed (5 runs) | p50 {statistics.median(full_noop):.1f} ms |")
    for name, values in queries.items():
        print(f"| `{name}` in-process, every note ({len(values)}) | p50 {statistics.median(values):.3f} ms, "
              f"p95 {pct(values, 0.95):.3f} ms, max {max(values):.3f} ms |")  # fmt: skip


if __name__ == "__main__":
    main()
