"""Saves as editors make them, queued when the writer is done (issue 23): the real daemon, real
inotify, the real socket and LanceDB on disk."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLE_VAULT
from tests.daemon_harness import LOAD, RunningDaemon, running
from tests.editor_saves import DRAFT_MARK, PATTERNS, in_place
from tests.test_plugins import tool

pytestmark = pytest.mark.e2e  # starts the daemon

# A ten-minute debounce: whatever is indexed here was queued by its close or its rename.
FALLBACK_ONLY = 600_000
# The coalescing window covers the gap between this process's two writes; on a loaded machine
# that gap is longer than an editor's.
SETTLE = {"SIDECAR_WATCH_SETTLE_MS": str(int(40 * LOAD))}


class Changes:
    """``index.changed`` notifications, each kept, read until one names a path."""

    def __init__(self, events: Iterator[tuple[str, dict[str, Any]]]) -> None:
        self.events = events
        self.seen: list[dict[str, Any]] = []

    def until(self, path: str) -> dict[str, Any]:
        for _name, params in self.events:
            self.seen.append(params)
            if path in params["paths"] or path in params["deleted"]:
                return params
        raise AssertionError(f"no index.changed for {path}; seen: {self.seen}")

    def times(self, path: str) -> int:
        return sum(path in p["paths"] or path in p["deleted"] for p in self.seen)


def found(d: RunningDaemon, word: str) -> set[str]:
    with d.client() as c:
        hits = c.call("search", {"query": word, "mode": "lexical", "limit": 5})["results"]
    return {h["path"] for h in hits}


def neovim(backupcopy: str) -> Callable[[Path, str], None]:
    """A save by real Neovim: ``backupcopy=no`` renames the note to its backup and writes a new
    file (vim's default on most files), ``yes`` copies the backup and writes in place."""
    nvim = tool("nvim")

    def save(path: Path, text: str) -> None:
        subprocess.run(
            [nvim, "--clean", "--headless", "-n", "-c", f"set backupcopy={backupcopy}", "-c",
             "%delete _", "-c", 'call setline(1, split($SAVE_TEXT, "\\n"))', "-c", "wq", str(path)],
            env={**os.environ, "SAVE_TEXT": text}, check=True, capture_output=True, timeout=30 * LOAD,
        )  # fmt: skip

    return save


def test_each_editors_save_is_indexed_once_when_its_writer_is_done(tmp_path: Path) -> None:
    source = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, source)
    patterns = {**PATTERNS, "Neovim, backupcopy=no": neovim("no"),
                "Neovim, backupcopy=yes": neovim("yes")}  # fmt: skip
    notes = {name: f"Saved by {name.split()[0]} (é #{i}).md" for i, name in enumerate(patterns)}
    for rel in notes.values():
        (source / rel).write_text("# Before\n\nThe old text.\n", "utf-8")
    with running(source, debounce_ms=FALLBACK_ONLY, env=SETTLE) as d, d.client() as sub:
        changes = Changes(sub.subscribe(["index.changed"], timeout=20 * LOAD))
        for i, (name, save) in enumerate(patterns.items()):
            word = f"finalword{i}x"
            save(d.vault / notes[name], f"# After\n\nSaved by {name}: {word}.\n")
            changes.until(notes[name])
            assert found(d, word) == {notes[name]}, name
            in_place(d.vault / "Scratch.md", f"# Scratch\n\nsentinel {i}\n")  # anything left
            changes.until("Scratch.md")  # of this save would be indexed by now
        assert not found(d, DRAFT_MARK)
        for name, rel in notes.items():
            assert changes.times(rel) == 1, (name, changes.seen)

        # A note written in two parts and closed after the second: the save of another note
        # in between is indexed, the open one is not.
        half = d.vault / "Half written.md"
        with half.open("w", encoding="utf-8") as fh:
            fh.write("# Half\n\nfirsthalfword comes first.\n")
            fh.flush()
            in_place(d.vault / "Scratch.md", "# Scratch\n\nwhile the other is open\n")
            changes.until("Scratch.md")
            assert changes.times("Half written.md") == 0
            fh.write("secondhalfword comes last.\n")
        changes.until("Half written.md")
        assert found(d, "firsthalfword") == found(d, "secondhalfword") == {"Half written.md"}
        assert changes.times("Half written.md") == 1

        # Idle: nothing polls. Once the vectors are in, the daemon wakes for its 5-s health
        # check and little else (the one release of memory after the last request, the
        # compaction's check): in 11 s, a handful of bursts of wake-ups where a job polling
        # each second makes eleven. Counted, not timed, so a loaded machine changes nothing.
        with d.client() as c:
            c.call("index.reindex", {"embed": True})
        bursts = wake_bursts(d.proc.pid, 11.0)
        assert len(bursts) <= 7, f"woken at {bursts} s"


def wake_bursts(pid: int, seconds: float) -> list[float]:
    """When, over ``seconds``, any of the process's threads woke (sampled each 50 ms from
    schedstat's count of timeslices): one time per burst, which ends after 0.5 s without one."""

    def slices() -> int:
        total = 0
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(FileNotFoundError):  # a thread that just ended
                total += int((task / "schedstat").read_text().split()[2])
        return total

    bursts: list[float] = []
    last_wake, seen, t0 = -1.0, slices(), time.monotonic()
    while (now := time.monotonic() - t0) < seconds:
        time.sleep(0.05)  # the sampling period, not a wait for an event
        count = slices()
        if count != seen:
            if now - last_wake > 0.5:
                bursts.append(round(now, 2))
            last_wake, seen = now, count
    return bursts


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                   check=True, capture_output=True)  # fmt: skip


def test_a_checkout_of_500_notes_is_indexed_in_a_few_batches(tmp_path: Path) -> None:
    """A burst (git checkout, a sync tool) falls back to the debounce: one batch, not 500."""
    source = tmp_path / "vault"
    (source / "topics").mkdir(parents=True)
    git(source, "init", "-q", "-b", "main")
    for i in range(500):
        (source / "topics" / f"Topic {i:03}.md").write_text(f"# Topic {i}\n\nOld {i}.\n", "utf-8")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "old")
    git(source, "checkout", "-q", "-b", "new")
    for i in range(500):
        (source / "topics" / f"Topic {i:03}.md").write_text(
            f"# Topic {i}\n\nNew text {i}, see [[Topic {(i + 1) % 500:03}]].\n", "utf-8"
        )
    git(source, "commit", "-q", "-am", "new")
    git(source, "checkout", "-q", "main")
    with running(source, debounce_ms=300) as d, d.client() as sub:
        events = sub.subscribe(["index.changed"], timeout=30 * LOAD)
        git(d.vault, "checkout", "-q", "new")
        left = {f"topics/Topic {i:03}.md" for i in range(500)}
        batches = 0
        for _name, params in events:
            batches += 1
            left -= set(params["paths"])
            if not left:
                break
        assert not left, f"{len(left)} notes never indexed"
        assert batches <= 2, f"{batches} batches for one checkout"


def chunk_fragments(d: RunningDaemon) -> int:
    """Fragments of the daemon's chunks table, as a reader opening it now sees them."""
    import lancedb

    table = lancedb.connect(Path(d.env["SIDECAR_DATA_DIR"]) / "lance").open_table("chunks")
    return int(table.stats()["fragment_stats"]["num_fragments"])


def test_saves_are_compacted_in_the_next_quiet_moment_not_after_a_minute(tmp_path: Path) -> None:
    """Each save adds a fragment to the chunks table that every later search pays for (at
    dendron-site, 96 of them took a lexical search from 4 to 17 ms); after
    ``daemon.compact_saves`` saves they are compacted once the daemon is quiet for 2 s,
    though the idle compaction (set to ten minutes here) has not come."""
    source = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, source)
    env = {
        **SETTLE,
        "SIDECAR_DAEMON_COMPACT_SAVES": "4",
        "SIDECAR_DAEMON_COMPACT_IDLE_SECONDS": "600",
    }
    with running(source, debounce_ms=FALLBACK_ONLY, env=env) as d, d.client() as sub:
        changes = Changes(sub.subscribe(["index.changed"], timeout=20 * LOAD))
        start = chunk_fragments(d)
        for i in range(4):  # a fragment each (a note saved again drops its last one)
            in_place(d.vault / f"Saved {i}.md", f"# Saved\n\nsavedword{i} now\n")
            changes.until(f"Saved {i}.md")
            assert found(d, f"savedword{i}") == {f"Saved {i}.md"}
        assert chunk_fragments(d) >= start + 4
        deadline = time.monotonic() + 15 * LOAD
        while chunk_fragments(d) > 2:
            tried = [line for line in d.log_text().splitlines() if "chunks table" in line]
            assert time.monotonic() < deadline, f"{chunk_fragments(d)} fragments; {tried}"
            time.sleep(0.2)
        d.wait_for_log("chunks table compacted", timeout=15)  # logged just after the commit
        assert all(found(d, f"savedword{i}") == {f"Saved {i}.md"} for i in range(4))
        in_place(d.vault / "Saved 3.md", "# Saved\n\nafterword\n")
        changes.until("Saved 3.md")
        assert found(d, "afterword") == {"Saved 3.md"} and not found(d, "savedword3")
