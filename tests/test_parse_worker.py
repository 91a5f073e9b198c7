"""A big batch is parsed by child processes and this one together, and reads exactly as if
parsed here, in the batch's order; a child that fails or stalls costs only time."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from sidecar.core.chunks import ChunkOptions
from sidecar.core.note import parse_note
from sidecar.services import parse_worker
from tests.conftest import corpus


def _jobs() -> list[tuple[str, str, str]]:
    root = corpus("dendron-site")
    notes = sorted(root.rglob("*.md"))[:400]
    return [(p.relative_to(root).as_posix(), p.read_text("utf-8", "replace"), str(i))
            for i, p in enumerate(notes)]  # fmt: skip


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_children_parse_what_this_process_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse_worker, "_children", lambda notes: 2)
    jobs = _jobs()
    seen: list[tuple[int, int]] = []
    parsed = parse_worker.parse_all(jobs, ChunkOptions(), lambda i, n: seen.append((i, n)))
    assert parsed == [parse_note(p, t, d) for p, t, d in jobs]
    assert seen[-1] == (len(jobs), len(jobs))


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_a_failed_child_costs_only_time(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(parse_worker, "_children", lambda notes: 1)
    monkeypatch.setattr(sys, "executable", "/bin/false")  # starts, reads nothing, exits 1
    jobs = _jobs()[:50]
    assert parse_worker.parse_all(jobs, ChunkOptions()) == [parse_note(*j) for j in jobs]
    assert "parser child failed" in caplog.text


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_a_stalled_child_does_not_hold_up_the_batch(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """This process parses a slow child's run from its end, and stops where the child's
    notes begin: it never waits for a child (the children once parsed fixed shares, and the
    batch took as long as the slowest)."""
    stalled = tmp_path / "python"
    stalled.write_text("#!/bin/sh\nexec sleep 60\n")
    stalled.chmod(0o755)
    monkeypatch.setattr(parse_worker, "_children", lambda notes: 1)
    monkeypatch.setattr(sys, "executable", str(stalled))
    jobs = _jobs()[:50]
    started = time.monotonic()
    assert parse_worker.parse_all(jobs, ChunkOptions()) == [parse_note(*j) for j in jobs]
    assert time.monotonic() - started < 30  # the child sleeps 60 s


def test_runs_are_even_and_in_order() -> None:
    jobs = [(str(i), "x" * (i % 7 + 1), "") for i in range(100)]
    runs = parse_worker._runs(jobs, 3)
    assert [lo for lo, _ in runs] == [0, *(hi for _, hi in runs[:-1])]
    assert runs[-1][1] == 100
    sizes = [sum(len(text) for _, text, _ in jobs[lo:hi]) for lo, hi in runs]
    assert max(sizes) - min(sizes) <= 14
    assert parse_worker._runs(jobs[:2], 3) == [(0, 1), (1, 2)]
    assert parse_worker._runs([], 2) == [(0, 0)]


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_a_child_dies_with_its_parent() -> None:
    """A share left parsing after its parent died (a daemon's bulk child killed with the
    daemon) would take the cores a restarted daemon needs."""
    import contextlib
    import os
    import pickle
    import subprocess
    import time

    busy = [(f"n{i}.md", "# t\n\n" + "- [[x]] word\n" * 3000, "d") for i in range(200)]
    shell = subprocess.Popen(  # the parent: starts the child on its own stdin, then exits
        ["sh", "-c", f"exec 3<&0; {sys.executable} -m sidecar.services.parse_worker $$ <&3 & "
                     "echo $!; sleep 3"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    assert shell.stdin is not None and shell.stdout is not None
    child = int(shell.stdout.readline())
    with contextlib.suppress(BrokenPipeError), shell.stdin:
        shell.stdin.write(pickle.dumps((ChunkOptions(), busy)))
    shell.wait()
    shell.stdout.close()
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{child}"):
        with open(f"/proc/{child}/stat") as stat:
            if stat.read().split()[2] == "Z":
                break
        assert time.monotonic() < deadline, "the parse child outlived its parent"
        time.sleep(0.05)
