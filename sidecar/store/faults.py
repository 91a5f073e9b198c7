"""Which failures mean "the disk or the system ran out", and how users read them.

LanceDB reports an I/O failure as ``RuntimeError('lance error: LanceError(IO): No space left on
device (os error 28), /root/.cargo/…/writer.rs:191:9')``; Python code as an ``OSError``, maybe as
the cause of our own ``StoreError``. Both mean the same to the daemon: writes fail until the
disk has room again (or a descriptor is freed), so status says ``degraded`` and failed saves are
retried; the request that hit it gets one line, not an internal error with a Rust source path.
"""

from __future__ import annotations

import errno
import os
import re

from sidecar.errors import StoreError

RESOURCE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EMFILE,
                             errno.ENFILE, errno.EIO, errno.ENOMEM})  # fmt: skip
_OS_ERROR = re.compile(r"\(os error (\d+)\)")
_TEXTS = {os.strerror(n): n for n in RESOURCE_ERRNOS}
_RUST_SOURCE = re.compile(r",? /\S+\.rs:\d+:\d+")  # LanceDB's messages end with one


def one_line(text: str) -> str:
    """A library's message as users should read it: its first line, no Rust source path."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return _RUST_SOURCE.sub("", lines[0] if lines else "")[:500]


def resource_errno(exc: BaseException | None) -> int | None:
    """The errno of a resource failure anywhere in the exception's chain, else None."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, OSError) and exc.errno in RESOURCE_ERRNOS:
            return exc.errno
        text = str(exc)
        m = _OS_ERROR.search(text)
        if m and int(m.group(1)) in RESOURCE_ERRNOS:
            return int(m.group(1))
        for words, number in _TEXTS.items():
            if words in text:
                return number
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


def storage_error(exc: BaseException) -> StoreError | None:
    """A ``StoreError`` saying what ran out, for a resource failure; None for anything else."""
    number = resource_errno(exc)
    if number is None:
        return None
    if isinstance(exc, StoreError):
        return StoreError(one_line(exc.message), exc.data)
    return StoreError(f"the index could not be written: {os.strerror(number)}", {"errno": number})
