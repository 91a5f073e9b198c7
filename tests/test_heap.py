"""The daemon's allocator housekeeping, against the real glibc heap of a fresh process."""

from __future__ import annotations

import json
import subprocess
import sys

from sidecar.daemon.heap import HeapWatch, resident_bytes

# In a process of its own: a long-lived test runner's heap is full of freed pages a burst
# would reuse, so what the watch sees would depend on the tests before it.
PROBE = """
from sidecar.daemon.heap import HeapWatch, resident_bytes
MIB = 1 << 20
watch = HeapWatch(slack=32 * MIB)
assert not watch.check(), "nothing grew since it was made"
# 150 MB in blocks under glibc's mmap threshold land on the heap; one block allocated after
# them and kept pins the heap's top, so freeing the rest leaves a resident hole that only
# malloc_trim returns (what a LanceDB merge left behind at 100k notes).
burst = [b"x" * 100_000 for _ in range(1500)]
pin = b"y" * 100_000
del burst
grown = resident_bytes()
assert grown - watch.floor > 100 * MIB, (grown, watch.floor)
assert watch.check(), "grown past the slack: trimmed"
assert resident_bytes() < grown - 100 * MIB, (resident_bytes(), grown)
assert not watch.check(), "the floor moved down with it"
print("ok", len(pin))
"""


FOLLOWS_DOWN = """
from sidecar.daemon.heap import HeapWatch, resident_bytes, trim_heap
MIB = 1 << 20
peak = [b"x" * 100_000 for _ in range(1500)]
pin = b"y" * 100_000
watch = HeapWatch(slack=32 * MIB)  # made at a peak, as the daemon is while its index loads
del peak
trim_heap()
assert not watch.check(), "smaller than its floor: nothing to trim"
burst = [b"x" * 100_000 for _ in range(1500)]
pin2 = b"y" * 100_000
del burst
assert watch.check(), "grown past the slack from the low point: trimmed"
print("ok", len(pin) + len(pin2))
"""


def test_heap_watch_measures_growth_from_the_lowest_point() -> None:
    if not sys.platform.startswith("linux"):  # no /proc, no glibc: the watch must stay idle
        assert resident_bytes() == 0 and not HeapWatch(slack=1).check()
        return
    run = subprocess.run([sys.executable, "-c", FOLLOWS_DOWN], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ok")


def test_heap_watch_hands_back_what_a_burst_freed() -> None:
    if not sys.platform.startswith("linux"):  # no /proc, no glibc: the watch must stay idle
        assert resident_bytes() == 0 and not HeapWatch(slack=1).check()
        return
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
