"""Where log lines go: stderr, ours at INFO and everyone else's from WARNING up.

Libraries log their progress at INFO to the root logger: onnxruntime's quantizer writes ~36
lines ("Quantization parameters for tensor ... not specified") while the model is prepared on
first use, APScheduler one per job run. None of that tells a user anything; our own INFO lines
(serving, indexed, ready) do.
"""

from __future__ import annotations

import logging
import sys

DAEMON_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def to_stderr(fmt: str = DAEMON_FORMAT) -> None:
    """Configure logging once per process (a second call changes nothing)."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format=fmt)
    logging.getLogger("sidecar").setLevel(logging.INFO)
