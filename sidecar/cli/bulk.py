"""The daemon's bulk index, run in a child process: ``python -m sidecar.cli.bulk VAULT``.

A cold index of a big vault allocates and frees gigabytes in small pieces (parsed notes, Arrow
batches, LanceDB writes); the allocator keeps much of it, so a daemon that indexed 10k notes
itself stayed ~100 MiB above one that loaded the same index at a restart, and ~650 MiB above at
100k (bench/scale.py). So the daemon lends its writer lock to this child, which indexes, prints
its report as one JSON line on stdout and exits, its heap returned whole to the OS; the daemon
then loads the result as a restart would (``Services.reload``).

It dies with the daemon (``PR_SET_PDEATHSIG``); a write cut short is repaired at the next
start like any crash. It never talks to a socket (the daemon serving the vault is its parent) and never embeds: the
daemon's embedding loop does that.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from sidecar import logs
from sidecar.cli.inprocess import open_services
from sidecar.config import load_settings
from sidecar.daemon.heap import tune_allocators
from sidecar.errors import SidecarError
from sidecar.services.children import die_with


def _say(result: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    """``argv``: the vault, then the daemon's pid."""
    die_with(int(argv[1]))
    logs.to_stderr("%(asctime)s %(levelname)s sidecar.bulk: %(message)s")
    try:
        settings = load_settings(Path(argv[0]), os.environ)
        tune_allocators()
        services = open_services(settings)
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
