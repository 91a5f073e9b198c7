"""A big batch of notes parsed on every core: ``python -m sidecar.services.parse_worker``.

marko costs a few milliseconds a note, so a cold index of a thousand notes is seconds of one
core. ``parse_all`` gives a share of a big batch to child processes started on this module and
parses the rest itself meanwhile. The children are plain subprocesses, not multiprocessing's:
a spawned child re-imports the parent's ``__main__`` (the CLI, the daemon's bulk child), which
costs more than its share of parsing. A child reads ``(ChunkOptions, [(path, text, digest)])``
pickled on stdin and writes the list of ``ParsedNote`` pickled on stdout, and dies with its
parent; a child that fails costs only time: its share is parsed in this process.
"""

from __future__ import annotations

import contextlib
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
_log = logging.getLogger(__name__)


def parse_all(
    jobs: Sequence[Job], options: ChunkOptions, progress: Progress | None = None
) -> list[ParsedNote]:
    """``jobs`` parsed, in their order; children take shares when the batch is big and there
    is more than one core."""
    children = _children(len(jobs))
    if children == 0:
        alone = _parse_here(jobs, options, progress, len(jobs))
        if progress is not None and jobs:
            progress(len(jobs), len(jobs))
        return alone
    shares = _shares(jobs, children + 1)
    started = [_Child(options, [jobs[i] for i in share]) for share in shares[1:]]
    out: list[ParsedNote | None] = [None] * len(jobs)
    mine = _parse_here([jobs[i] for i in shares[0]], options, progress, len(jobs))
    for i, note in zip(shares[0], mine, strict=True):
        out[i] = note
    for child, share in zip(started, shares[1:], strict=True):
        parsed = child.result()
        if parsed is None or len(parsed) != len(share):
            parsed = _parse_here([jobs[i] for i in share], options, None, len(jobs))
        for i, note in zip(share, parsed, strict=True):
            out[i] = note
    if progress is not None:
        progress(len(jobs), len(jobs))
    return [note for note in out if note is not None]


def _children(notes: int) -> int:
    if notes < MIN_NOTES:
        return 0
    return min(len(os.sched_getaffinity(0)), 4) - 1


def _shares(jobs: Sequence[Job], n: int) -> list[list[int]]:
    """Indices of ``jobs`` in ``n`` shares of about equal text, each in the batch's order."""
    shares: list[list[int]] = [[] for _ in range(n)]
    sizes = [0] * n
    for i in sorted(range(len(jobs)), key=lambda i: -len(jobs[i][1])):
        lightest = sizes.index(min(sizes))
        shares[lightest].append(i)
        sizes[lightest] += len(jobs[i][1])
    return [sorted(share) for share in shares]


def _parse_here(
    jobs: Sequence[Job], options: ChunkOptions, progress: Progress | None, total: int
) -> list[ParsedNote]:
    out = []
    for i, (path, text, digest) in enumerate(jobs):
        out.append(parse_note(path, text, digest, options))
        if progress is not None and i % 50 == 0:
            progress(i + 1, total)
    return out


class _Child:
    """One child parsing one share; ``result`` is None when it failed."""

    def __init__(self, options: ChunkOptions, jobs: list[Job]) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "sidecar.services.parse_worker", str(os.getpid())],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            )  # fmt: skip
        except OSError as exc:
            _log.warning("parser child did not start (%s); parsing in-process", exc)
            return
        payload = pickle.dumps((options, jobs), pickle.HIGHEST_PROTOCOL)
        # Written beside us: the pipe holds 64 KiB until the child has started and reads.
        self._writer = threading.Thread(target=self._write, args=(payload,), daemon=True)
        self._writer.start()

    def _write(self, payload: bytes) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        stdin = self._proc.stdin
        try:
            stdin.write(payload)
        except OSError:
            pass  # the child died; result() says so
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    def result(self) -> list[ParsedNote] | None:
        proc = self._proc
        if proc is None:
            return None
        try:
            self._writer.join()  # the child reads all of its share before it writes
            assert proc.stdout is not None
            with proc.stdout:
                out = proc.stdout.read()
            if proc.wait() != 0:
                raise RuntimeError(f"exit status {proc.returncode}")
            parsed = pickle.loads(out)
        except Exception as exc:  # any failure: the caller parses this share itself
            _log.warning("parser child failed (%s); parsing its share in-process", exc)
            return None
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        return parsed if isinstance(parsed, list) else None


def main(argv: list[str]) -> int:
    """``argv``: the parent's pid (a share left parsing after its parent died only slows
    down whatever runs next)."""
    die_with(int(argv[0]))
    options, jobs = pickle.load(sys.stdin.buffer)
    parsed = [parse_note(path, text, digest, options) for path, text, digest in jobs]
    sys.stdout.buffer.write(pickle.dumps(parsed, pickle.HIGHEST_PROTOCOL))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
