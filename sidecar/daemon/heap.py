"""How the long-running daemon asks its allocators to keep resident memory small.

A daemon idles for days after bursts (a cold index, a big sync); what the bursts freed should
go back to the OS. Measured on a generated 10k-note vault (tiny embedder, so the model is not
in the figure): 537 MiB of anonymous memory with the defaults, 290 MiB with the three steps
below; with the real model, after a restart, searches and saves: 461 MiB resident with
``mallopt`` at run time, 400 MiB with ``MALLOC_ARENA_MAX`` in the environment at start.

- glibc gives each thread that mallocs its own arena, up to 8 per core; LanceDB's and ORT's
  worker threads each keep one full of freed pages. One arena is enough for a daemon whose
  hot paths are one writer and short queries, most of them under the GIL. Measured with
  ``bench/heap_probe.py`` on the generated 10k-note vault (the daemon's embedding loop, then
  ``malloc_trim``): two arenas held 432 MiB after the cold embedding and 350-357 after a
  restart; one arena 389 and 343, with the embedding as fast (271 vs 273 s). What two
  arenas left was free space inside their heaps, fragmented below page size, so no trim
  could return it. glibc reads ``MALLOC_ARENA_MAX`` when the process
  starts, which ``mallopt`` later cannot fully replace (LanceDB's runtime threads exist from
  import), so ``sidecar serve`` re-executes itself once with it set (``reexec_with_malloc_env``)
  unless the user set it.
- Tried and left out: a fixed mmap threshold (``MALLOC_MMAP_THRESHOLD_=262144``) took the
  10k-note vault after a cold start from 567 to 447 MiB, but every ONNX Runtime call then
  mapped and faulted in fresh pages for its activations: the model ran at 19 texts/s instead
  of 35, and the daemon's embedding stage fell to 0.61 of the raw model (bench/scale.py).
  With ORT's arena on, the speed came back (37 texts/s) at +48 MiB; not measured end to end.
- pyarrow's default pool (mimalloc) keeps freed segments; the system pool returns them.
- ``malloc_trim`` after a burst hands the free heap back; and during a long one, whenever the
  process has grown by ``TRIM_SLACK`` since the last trim (``HeapWatch``). At 100k notes each
  commit of a batch of vectors (a LanceDB merge that reads the whole chunks table) left
  ~500 MiB free but resident on the heap; a trim (13-55 ms) handed it back, so through the
  hour-long cold embedding the daemon held ~2.4 GiB instead of its working set.

Each step is a no-op where its library is absent (musl, macOS).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import os
import sys


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


MALLOC_ENV = {"MALLOC_ARENA_MAX": "1"}


def reexec_with_malloc_env() -> None:
    """Replace this process with itself, ``MALLOC_ENV`` set; returns if it is set already.

    Same pid, same arguments: a supervisor (systemd's ``Type=notify``, launchd) sees nothing.
    A variable the user set is kept as it is.
    """
    missing = {k: v for k, v in MALLOC_ENV.items() if k not in os.environ}
    if not missing or not sys.platform.startswith("linux"):
        return
    os.environ.update(missing)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])


def tune_allocators() -> None:
    """Call once at start-up: pyarrow's allocations go to the system pool. (The arena cap is
    the environment's, set by ``reexec_with_malloc_env``; a user's own value is left alone.)"""
    import pyarrow as pa

    with contextlib.suppress(NotImplementedError):
        pa.set_memory_pool(pa.system_memory_pool())


def release_free_memory() -> None:
    """Give freed heap back to the OS after a burst (a cold index, an embedding run)."""
    gc.collect()
    trim_heap()


def freeze_long_lived() -> None:
    """Move every object alive now out of the cyclic garbage collector's sight.

    The notes, edges and facts live as long as the daemon and are freed by reference counting
    when replaced. Unfrozen, every full collection walks all of them: at 100k notes 2.5
    million objects, 1.0-1.3 s holding the GIL, so any query or save then waited a second;
    frozen, 0 ms (probe: the kept 100k store loaded, typed facts and titles built,
    ``gc.collect()`` timed). The daemon collected after every embedding burst, i.e. after
    every save.

    Once, when the index is loaded: an object frozen while in flight (a future, a traceback)
    that later becomes cyclic garbage is never freed. Freezing after every burst instead
    was tried; the 10k-note cold start then ended at 456 MiB against 399 (one run each,
    not separated from run-to-run noise), so it was left out.
    """
    gc.collect()
    gc.freeze()


def trim_heap() -> None:
    """``malloc_trim``: free pages anywhere in glibc's heaps go back to the OS."""
    libc = _libc()
    if libc is not None:
        with contextlib.suppress(AttributeError):
            libc.malloc_trim(0)


TRIM_SLACK = 64 << 20


def resident_bytes() -> int:
    """This process's resident memory (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class HeapWatch:
    """Trims the heap once resident memory has grown ``slack`` bytes past where the last trim
    left it: cheap to ask after every step of a long burst (reading /proc/self/statm)."""

    def __init__(self, slack: int = TRIM_SLACK) -> None:
        self.slack = slack
        self.floor = resident_bytes()

    def check(self) -> bool:
        """Trim if grown; True if it trimmed. The floor follows resident memory down, so it
        measures growth from the lowest point since the last trim: a daemon made at 100k
        notes while the index loaded, with its floor at that peak (1.87 GiB), never trimmed
        again when its queries later left 270 MiB behind."""
        now = resident_bytes()
        if now < self.floor:
            self.floor = now
        if now - self.floor < self.slack:
            return False
        trim_heap()
        self.floor = resident_bytes()
        return True
