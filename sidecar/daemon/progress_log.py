"""What the daemon tells the person watching its log: how a long embedding is going, and,
once ready, the command to try next.

A cold 1,000-note vault embeds for a minute or two, during which semantic search only covers
what has vectors; without these lines the log is silent and the wait looks like a hang.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

_log = logging.getLogger("sidecar.daemon")

BIG_BURST = 500  # chunks: a burst this large gets progress lines (a save's few chunks do not)
EVERY_SECONDS = 15.0


class EmbedProgress:
    """Fed each committed batch (``batch``) and the end of each burst (``idle``); logs the
    progress of a large burst every ``EVERY_SECONDS`` and its total at the end."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.total = 0  # chunks pending when the burst began
        self.done = 0
        self.started = 0.0
        self.logged = 0.0

    def batch(self, n: int, pending: Callable[[], int]) -> None:
        now = self.clock()
        if not self.total:  # a burst begins: how big is it? (one count, not one per batch)
            self.total, self.done, self.started, self.logged = pending(), 0, now, now
        self.done += n
        if self.total >= BIG_BURST and now - self.logged >= EVERY_SECONDS:
            self.logged = now
            rate = self.done / max(now - self.started, 1e-9)
            left = max(self.total - self.done, 0) / rate if rate else 0.0
            _log.info("embedding: %d of %d chunks (%.0f/s, about %s left); until then semantic "
                      "search covers the chunks done", min(self.done, self.total), self.total,
                      rate, _minutes(left))  # fmt: skip

    def idle(self) -> None:
        if self.total >= BIG_BURST:
            took = self.clock() - self.started
            _log.info("embedded %d chunks in %s (%.0f/s): semantic search covers every note",
                      self.done, _minutes(took), self.done / max(took, 1e-9))  # fmt: skip
        self.total = 0


def _minutes(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min"


def ready_hint(vault: Path, notes: int) -> str:
    """The next command, spelt so it works in another terminal: the ``sidecar`` on PATH if
    it is this one, else its full path; the vault always by absolute path."""
    if notes == 0:
        return (f"{vault} holds no notes (only .md files count; hidden folders and "
                ".sidecarignore entries are skipped): is this the vault you meant?")  # fmt: skip
    command = f"{cli_command()} search 'what is this vault about' --vault {shlex.quote(str(vault))}"
    stop = " (Ctrl-C stops the daemon)" if sys.stderr.isatty() else ""
    return f"ready: ask it from another terminal, e.g. {command}{stop}"


def cli_command() -> str:
    exe = Path(sys.argv[0])
    if exe.name != "sidecar":  # python -m sidecar
        return f"{shlex.quote(sys.executable)} -m sidecar"
    on_path = shutil.which("sidecar")
    same = on_path is not None and os.path.realpath(on_path) == os.path.realpath(exe)
    return "sidecar" if same else shlex.quote(str(exe.resolve()))
