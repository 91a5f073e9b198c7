"""Stdout for a protocol spoken over stdio (``sidecar mcp``, ``sidecar lsp``)."""

from __future__ import annotations

import os
import sys
from typing import IO


def claim_stdout() -> IO[bytes]:
    """The protocol's own copy of stdout; file descriptor 1 then points at stderr, so a library
    that prints cannot corrupt the stream."""
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return protocol
