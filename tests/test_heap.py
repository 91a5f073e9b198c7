"""The daemon's allocator housekeeping, against the real glibc heap of this process."""

from __future__ import annotations

import sys

import pytest

from sidecar.daemon.heap import HeapWatch, resident_bytes

MIB = 1 << 20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and /proc: Linux only")
def test_heap_watch_hands_back_what_a_burst_freed() -> None:
    watch = HeapWatch(slack=32 * MIB)
    assert not watch.check()  # nothing grew since it was made
    # 150 MB in blocks under glibc's mmap threshold land on the heap; one block allocated
    # after them and kept pins the heap's top, so freeing the rest leaves a resident hole
    # that only malloc_trim returns (what a LanceDB merge left behind at 100k notes).
    burst = [b"x" * 100_000 for _ in range(1500)]
    pin = b"y" * 100_000
    del burst
    grown = resident_bytes()
    assert grown - watch.floor > 100 * MIB
    assert watch.check()
    assert resident_bytes() < grown - 100 * MIB
    assert not watch.check()  # the floor moved down with it
    assert pin
