"""The daemon's allocator housekeeping, against the real glibc heap of a fresh process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e  # each test runs a fresh process

# In a process of its own: a long-lived test runner's heap is full of freed pages a burst
# would reuse, so what a release hands back would depend on the tests before it.
PROBE = """
import os
from sidecar.daemon.heap import release_free_memory
MIB = 1 << 20
def rss():
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
# 150 MB in blocks under glibc's mmap threshold land on the heap; one block allocated after
# them and kept pins the heap's top, so freeing the rest leaves a resident hole that only
# malloc_trim returns (what a burst of LanceDB reads or queries leaves behind).
burst = [b"x" * 100_000 for _ in range(1500)]
pin = b"y" * 100_000
del burst
grown = rss()
release_free_memory()
assert rss() < grown - 100 * MIB, (rss(), grown)
print("ok", len(pin))
"""


def test_a_release_after_a_burst_hands_back_what_it_freed() -> None:
    if not sys.platform.startswith("linux"):
        return  # no glibc: nothing to hand back with
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ok")


def test_the_store_imports_lancedb_without_the_rest_client_api() -> None:
    """~13 MiB of pydantic-wrapped REST methods a local store never calls (sidecar/store)."""
    probe = (
        "import json, sys; from sidecar.store.lance import IndexStore; "
        "print(json.dumps([m for m in sys.modules if m.startswith('lance_namespace_urllib3')]))"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    loaded = json.loads(run.stdout)
    assert loaded and all(".api" not in m for m in loaded), loaded  # the models, not the API


def test_the_loaded_index_is_frozen_out_of_the_cyclic_collector() -> None:
    """At 100k notes a full collection walked 2.5 million objects of state for ~1 s."""
    probe = (
        "import gc; from sidecar.daemon.heap import freeze_long_lived\n"
        "state = [[i] for i in range(200_000)]  # lists: tracked by the collector\n"
        "garbage = [[] for _ in range(1000)]\n"
        "for g in garbage: g.append(g)  # cycles: collected, not frozen\n"
        "del garbage\n"
        "freeze_long_lived()\n"
        "print(gc.get_freeze_count(), len(gc.get_objects()))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    frozen, tracked = (int(x) for x in run.stdout.split())
    assert frozen > 200_000 and tracked < 1000, (frozen, tracked)
