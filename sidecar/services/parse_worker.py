"""A big batch of notes parsed on every core: ``python -m sidecar.services.parse_worker``.

marko costs a few milliseconds a note, so a cold index of a thousand notes is seconds of one
core. ``parse_all`` cuts a big batch into one run of notes per child process and parses from
the far end of the runs itself meanwhile: each child works forward through its run, sending
what it has parsed every few notes, and this process works backward from the run's end until
the two meet. Nobody waits on anybody: a child that starts late, runs slow or fails only
leaves more of its run to this process. The children are plain subprocesses, not
multiprocessing's: a spawned child re-imports the parent's ``__main__`` (the CLI, the daemon's
bulk child), which costs more than its share of parsing. A child reads
``(ChunkOptions, [(path, text, digest)])`` pickled on stdin, writes lists of ``ParsedNote``
pickled one after another on stdout, and dies with its parent.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence

from sidecar.core.chunks import ChunkOptions
from sidecar.core.model import ParsedNote
from sidecar.core.note import parse_note
from sidecar.services.children import die_with

Job = tuple[str, str, str]  # path, text, digest
Progress = Callable[[int, int], None]

# Below this many notes a child's start (~0.2 s of CPU to import marko and PyYAML) costs
# about what its share of the parsing saves.
MIN_NOTES = 300
# A child sends its notes once it has parsed this much text (~10 ms of marko): small enough
# that little is parsed twice where a child and this process meet.
SEND_CHARS = 10_000
_log = logging.getLogger(__name__)


def parse_all(
    jobs: Sequence[Job], options: ChunkOptions, progress: Progress | None = None
) -> list[ParsedNote]:
    """``jobs`` parsed, in their order; children share the work when the batch is big and
    there is more than one core."""
    out: list[ParsedNote | None] = [None] * len(jobs)
    wanted = _children(len(jobs))
    runs = _runs(jobs, max(wanted, 1))
    children = [_Child(options, jobs[lo:hi], start=wanted > 0) for lo, hi in runs]
    backs = [hi for _, hi in runs]  # this process has parsed jobs[back:hi] of each run
    mine = 0
    try:
        while True:
            # The run with the most left between its child's notes and ours.
            left, r = max((backs[r] - lo - children[r].done, r) for r, (lo, _) in enumerate(runs))
            if left <= 0:
                break
            backs[r] -= 1
            out[backs[r]] = parse_note(*jobs[backs[r]], options)
            mine += 1
            if progress is not None and mine % 50 == 0:
                progress(mine + sum(c.done for c in children), len(jobs))
    finally:
        for child in children:
            child.stop()
    for (lo, _), back, child in zip(runs, backs, children, strict=True):
        out[lo:back] = child.parsed[: back - lo]
    if progress is not None and jobs:
        progress(len(jobs), len(jobs))
    assert all(note is not None for note in out)
    return out  # type: ignore[return-value]


def _children(notes: int) -> int:
    if notes < MIN_NOTES:
        return 0
    return min(len(os.sched_getaffinity(0)), 4) - 1


def _runs(jobs: Sequence[Job], n: int) -> list[tuple[int, int]]:
    """``jobs`` cut into ``n`` runs ``[lo, hi)`` of about equal text, in order."""
    total = sum(len(text) for _, text, _ in jobs)
    cuts = [0]
    size = 0
    for i, (_, text, _) in enumerate(jobs):
        size += len(text)
        if len(cuts) < n and size >= total * len(cuts) / n:
            cuts.append(i + 1)
    cuts.append(len(jobs))
    return [(lo, hi) for lo, hi in itertools.pairwise(cuts) if hi > lo] or [(0, 0)]


class _Child:
    """One child parsing a run from its start; ``parsed`` holds what it has sent so far and
    ``done`` how many. Not ``start``ed (a small batch), it parses nothing."""

    def __init__(self, options: ChunkOptions, jobs: Sequence[Job], *, start: bool) -> None:
        self.parsed: list[ParsedNote] = []
        self.done = 0
        self._stopping = False
        self._proc: subprocess.Popen[bytes] | None = None
        if not start or not jobs:
            return
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "sidecar.services.parse_worker", str(os.getpid())],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            )  # fmt: skip
        except OSError as exc:
            _log.warning("parser child did not start (%s); parsing in-process", exc)
            return
        payload = pickle.dumps((options, list(jobs)), pickle.HIGHEST_PROTOCOL)
        # Threads beside us: the pipe holds 64 KiB until the child has started and reads, and
        # its notes arrive while this process parses.
        threading.Thread(target=self._write, args=(payload,), daemon=True).start()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _write(self, payload: bytes) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        stdin = self._proc.stdin
        try:
            stdin.write(payload)
        except OSError:
            pass  # the child died; stop() says so
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        try:
            with self._proc.stdout as stdout:
                while True:
                    notes = pickle.load(stdout)
                    self.parsed.extend(notes)
                    self.done = len(self.parsed)  # after the notes: the parser reads done first
        except EOFError:
            pass
        except Exception as exc:  # a garbled stream: what arrived whole still counts
            if not self._stopping:
                _log.warning("parser child failed (%s); parsing its share in-process", exc)

    def stop(self) -> None:
        """End the child (its run is parsed) and say whether it had failed."""
        proc = self._proc
        if proc is None:
            return
        self._stopping = True
        status = proc.poll()
        if status is None:
            proc.kill()
        proc.wait()
        self._reader.join()
        if status not in (None, 0):
            _log.warning("parser child failed (exit status %s); parsing its share in-process",
                         status)  # fmt: skip


def main(argv: list[str]) -> int:
    """``argv``: the parent's pid (a run left parsing after its parent died only slows down
    whatever runs next)."""
    die_with(int(argv[0]))
    options, jobs = pickle.load(sys.stdin.buffer)
    out = sys.stdout.buffer
    batch: list[ParsedNote] = []
    size = 0
    for path, text, digest in jobs:
        batch.append(parse_note(path, text, digest, options))
        size += len(text)
        if size >= SEND_CHARS:
            pickle.dump(batch, out, pickle.HIGHEST_PROTOCOL)
            out.flush()
            batch, size = [], 0
    if batch:
        pickle.dump(batch, out, pickle.HIGHEST_PROTOCOL)
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
