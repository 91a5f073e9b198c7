"""Progress bars on stderr for the long stages of a command run in-process (parse, embed).

Each bar names its stage and shows the rate and the time left, so a 2-minute cold embedding
reads as work being done rather than a hang. Bars are drawn only on a terminal: under a pipe,
``--json`` or CI the stream stays clean (``bars_for`` returns None there).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

Progress = Callable[[int, int], None]
Bars = Callable[[str], Progress]
"""A stage name ("parse", "embed", "queries") -> the callable that draws that stage's bar."""

STAGES = {"parse": ("parse", "notes"), "embed": ("embed", "chunks"), "eval": ("eval", "queries")}
WIDTH = 24
REDRAW_SECONDS = 0.1  # at most ten redraws a second: a terminal is slower than our callbacks


def bars_for(stream: TextIO = sys.stderr) -> Bars | None:
    """Bars on ``stream`` when it is a terminal, else None (no bars at all)."""
    return (lambda stage: StageBar(stage, stream)) if stream.isatty() else None


class StageBar:
    """``embed [#########...............] 1536/5832 chunks  94/s  0:45 left``, redrawn in
    place; the last call (done == total) leaves ``... in 1:02 (94/s)`` on its own line."""

    def __init__(
        self, stage: str, stream: TextIO, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.label, self.unit = STAGES.get(stage, (stage, "items"))
        self.stream = stream
        self.clock = clock
        self.started: float | None = None
        self.first = 0  # items already done at the first call: the rate counts what we saw
        self.drawn = -REDRAW_SECONDS

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if self.started is None:
            self.started, self.first = now, done
        finished = done >= total
        if not finished and now - self.drawn < REDRAW_SECONDS:
            return
        self.drawn = now
        self.stream.write("\r" + self.line(done, total, now) + ("\n" if finished else ""))
        self.stream.flush()

    def line(self, done: int, total: int, now: float) -> str:
        assert self.started is not None
        filled = WIDTH * done // max(total, 1)
        bar = f"{self.label:<5} [{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total} {self.unit}"
        elapsed = now - self.started
        rate = (done - self.first) / elapsed if elapsed > 0 else 0.0
        speed = f"  {rate:.0f}/s" if rate >= 1 else ""
        if done >= total:
            return f"{bar} in {clock_time(elapsed)}{speed}"
        left = f"  {clock_time((total - done) / rate)} left" if rate > 0 else ""
        return f"{bar}{speed}{left}\x1b[K"  # clear what a longer earlier line left behind


def clock_time(seconds: float) -> str:
    """``0:45``, ``12:03``, ``1:02:03``; under ten seconds ``4.2 s``."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    s = round(seconds)
    hours, rest = divmod(s, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
