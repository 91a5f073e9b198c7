"""What the sidecar's child processes share: dying with their parent."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with(parent: int) -> None:
    """SIGTERM this process when its parent dies, however it dies (Linux): an orphan would go
    on writing to the store, or holding the lent writer lock, after a restarted daemon took it
    (or, parsing, take the cores a restarted daemon needs)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it died before the line above
        sys.exit(1)
