"""How the long-running daemon keeps its resident memory near its working set.

A daemon idles for days after bursts of work (a cold index, an embedding backlog, a run of
queries); what a burst freed should go back to the OS, and what lives as long as the daemon
should not be walked by every garbage collection. Five steps, each measured in
``docs/benchmarks.md`` (resident memory; the BLAS thread: the hook per prompt):

- one glibc arena (``MALLOC_ARENA_MAX=1``, set by re-executing ``sidecar serve`` once, since
  glibc reads it only at start): each worker thread's own arena kept freed pages no trim
  could return;
- one OpenBLAS thread (``OPENBLAS_NUM_THREADS=1``, set the same way, before numpy loads it):
  its workers spin after each matrix product (five 6,800 x 384 products in a second used
  643 ms of CPU, 8 ms on one thread), taking a core of a two-core machine from the hook's own
  process, for a search's product that takes about a millisecond on one thread;
- pyarrow's system allocator instead of mimalloc, which keeps freed segments;
- the index as loaded frozen out of the cyclic garbage collector, once, when the daemon is
  ready (at 100k notes a full collection walked 2.5 million objects for about a second);
- one release (a collection, then ``malloc_trim``) after each burst, once it is over.

Each step is a no-op where its library is absent (musl, macOS).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import sys

MALLOC_ENV = {"MALLOC_ARENA_MAX": "1", "OPENBLAS_NUM_THREADS": "1"}  # read only at start


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
    """Call once at start-up: pyarrow's allocations go to the system pool."""
    import pyarrow as pa

    with contextlib.suppress(NotImplementedError):
        pa.set_memory_pool(pa.system_memory_pool())


def freeze_long_lived() -> None:
    """Move every object alive now out of the cyclic garbage collector's sight. Once, when the
    index is loaded: an object frozen while in flight (a future, a traceback) that later
    becomes cyclic garbage is never freed."""
    gc.collect()
    gc.freeze()


def release_free_memory() -> None:
    """After a burst: collect, then give glibc's free pages back to the OS."""
    gc.collect()
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    with contextlib.suppress(AttributeError):
        libc.malloc_trim(0)
