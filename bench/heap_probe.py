"""Where a cold start's extra memory sits: the daemon's embedding loop in one process.

``MALLOC_ARENA_MAX=1 python bench/heap_probe.py VAULT DATA cold`` indexes ``VAULT`` into a
fresh ``DATA``, embeds every chunk as the daemon does (batches of 256, each one append),
compacts, and prints resident memory with glibc's and CPython's allocator figures. ``... DATA restart`` opens the same store as a
restarted daemon would, for comparison. Both use the real model. Run it with the arena cap
the daemon would use (``sidecar serve`` sets it for itself; this script does not).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import anon_kib, queries

from sidecar.daemon.app import warm
from sidecar.daemon.heap import release_free_memory, tune_allocators
from sidecar.embed import load_embedder
from sidecar.services.context import Services
from sidecar.services.search import Query


def glibc_heaps() -> str:
    """glibc's own account (``malloc_info``): bytes its heaps hold from the OS, and free."""
    libc = ctypes.CDLL("libc.so.6")
    libc.fopen.restype = ctypes.c_void_p
    with tempfile.NamedTemporaryFile(suffix=".xml") as tmp:
        fp = libc.fopen(tmp.name.encode(), b"w")
        libc.malloc_info(0, ctypes.c_void_p(fp))
        libc.fclose(ctypes.c_void_p(fp))
        xml = Path(tmp.name).read_text("utf-8")
    tail = xml[xml.rfind("</heap>") :]
    free = {
        m[1]: int(m[2]) >> 20
        for m in re.finditer(r'<total type="(\w+)" count="\d+" size="(\d+)"', tail)
    }
    system = {
        m[1]: int(m[2]) >> 20 for m in re.finditer(r'<system type="(\w+)" size="(\d+)"', tail)
    }
    return f"glibc heaps {system.get('current')} MiB, free in them {free.get('rest')}, mmapped {free.get('mmap')}"


def pymalloc() -> str:
    """CPython's small-object allocator (``sys._debugmallocstats``): the 1 MiB arenas it holds
    from the OS, and how much of them live objects use. An arena goes back only when empty."""
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode()
    arenas = re.search(r"# arenas allocated current\s*=\s*([\d,]+)", text)
    used = re.search(r"# bytes in allocated blocks\s*=\s*([\d,]+)", text)
    if not arenas or not used:
        return "pymalloc ?"
    in_use = int(used[1].replace(",", "")) >> 20
    return f"pymalloc arenas {arenas[1]} MiB, objects in them {in_use} MiB"


def resident_bytes() -> int:
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def report(tag: str) -> None:
    release_free_memory()
    print(
        f"{tag}: rss {resident_bytes() >> 20} MiB, anon {anon_kib(os.getpid()) >> 10} MiB; "
        f"{glibc_heaps()}; {pymalloc()}",
        flush=True,
    )


def cold(s: Services) -> None:
    s.reindex()
    report("parsed")
    stage, done = s.embed_stage, 0
    t0 = time.perf_counter()
    while (batch := stage.compute(256)) is not None:
        done += stage.commit(batch)
    s.compact()
    print(f"embedded {done} chunks in {time.perf_counter() - t0:.0f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("vault", type=Path)
    ap.add_argument("data", type=Path)
    ap.add_argument("mode", choices=["cold", "restart"])
    ap.add_argument("--queries", type=int, default=0, help="then this many queries per mode")
    args = ap.parse_args()
    tune_allocators()
    report("imported")
    embedder = load_embedder("minilm", cache_dir=Path.home() / ".cache" / "sidecar")
    s = Services.open(args.vault, args.data, embedder=embedder)
    try:
        report(f"opened: {len(s.state.notes):,} notes, vectors {s.vectors.nbytes >> 20} MiB")
        if args.mode == "cold":
            cold(s)
        warm(s)  # what the daemon builds before it says ready
        report("titles and typed facts built")
        for text in ("graph", "index", "budget"):
            s.search.search(Query(text))
        report(f"{args.mode}, then 3 hybrid queries")
        if args.queries:
            rng = random.Random(3)
            for mode in ("lexical", "semantic", "hybrid"):
                for q in queries(rng, args.queries):
                    s.search.search(Query(q, mode=mode))
                report(f"then {args.queries} {mode} queries")
            s.compact()
            report("then a compaction")
    finally:
        s.close()


if __name__ == "__main__":
    main()
