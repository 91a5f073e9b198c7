"""How the long-running daemon asks its allocators to keep resident memory small.

A daemon idles for days after bursts (a cold index, a big sync); what the bursts freed should
go back to the OS. Measured on a generated 10k-note vault (tiny embedder, so the model is not
in the figure): 537 MiB of anonymous memory with the defaults, 302 MiB with the three steps
below (``bench/daemon_bench.py``, docs/benchmarks.md).

- glibc gives each thread that mallocs its own arena, up to 8 per core; LanceDB's and ORT's
  worker threads each keep one full of freed pages. Two arenas are enough for a daemon whose
  hot paths are one writer and short queries.
- pyarrow's default pool (mimalloc) keeps freed segments; the system pool returns them.
- ``malloc_trim`` after a burst hands the free heap back.

Each step is a no-op where its library is absent (musl, macOS).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc

_M_ARENA_MAX = -8  # glibc's mallopt parameter number


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def tune_allocators(arenas: int = 2) -> None:
    """Call once at start-up, before the worker threads exist."""
    libc = _libc()
    if libc is not None:
        with contextlib.suppress(AttributeError):
            libc.mallopt(_M_ARENA_MAX, arenas)
    import pyarrow as pa

    with contextlib.suppress(NotImplementedError):
        pa.set_memory_pool(pa.system_memory_pool())


def release_free_memory() -> None:
    """Give freed heap back to the OS after a burst (a cold index, an embedding run)."""
    gc.collect()
    libc = _libc()
    if libc is not None:
        with contextlib.suppress(AttributeError):
            libc.malloc_trim(0)
