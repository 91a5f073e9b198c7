"""A big batch is parsed by child processes and this one together, and reads exactly as if
parsed here, in the batch's order; a child that fails costs only time."""

from __future__ import annotations

import sys

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


def test_shares_are_even_and_in_order() -> None:
    jobs = [(str(i), "x" * (i % 7 + 1), "") for i in range(100)]
    shares = parse_worker._shares(jobs, 3)
    assert sorted(i for s in shares for i in s) == list(range(100))
    assert all(s == sorted(s) for s in shares)
    sizes = [sum(len(jobs[i][1]) for i in s) for s in shares]
    assert max(sizes) - min(sizes) <= 7


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
