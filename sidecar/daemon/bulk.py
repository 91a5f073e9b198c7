"""A cold start's index, in a child process: ``python -m sidecar.daemon.bulk VAULT PID``.

A cold index allocates and frees much in small pieces (files read, parsed notes, Arrow
batches) among the objects the index keeps, and the allocators cannot hand back memory those
pin: a daemon that indexed 10k generated notes itself held 298 MiB (180 private), against 228
(122) for one that loaded the same index as at a restart (tiny embedder; figures in
``docs/benchmarks.md``). So when the daemon starts with a backlog of ``daemon.bulk_index_notes``
or more, it lends its writer lock to this child, which indexes, prints its report as one JSON
line and exits, its heap returned whole to the OS; the daemon then loads the store as a
restart would (``Services.reload``).

The child dies with the daemon (``PR_SET_PDEATHSIG``); a write cut short is repaired at the next
start like any crash. It never talks to a socket and never embeds (the daemon's embedding loop
does that).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from sidecar.config import load_settings
from sidecar.daemon.heap import tune_allocators
from sidecar.errors import SidecarError
from sidecar.services.children import die_with
from sidecar.services.context import Services


def _say(result: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    """``argv``: the vault, then the daemon's pid."""
    die_with(int(argv[1]))
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s sidecar.bulk: %(message)s")  # fmt: skip
    try:
        settings = load_settings(Path(argv[0]), os.environ)
        tune_allocators()
        services = Services.from_settings(settings)
    except SidecarError as exc:
        _say({"error": exc.message})
        return 1
    try:
        report = services.reindex()
    except SidecarError as exc:
        _say({"error": exc.message})
        return 1
    finally:
        services.close()
    _say(report.to_dict())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
