"""The real daemon on a copy of a real corpus: edits as editors make them, seen over the socket."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.errors import NoteNotFound, UsageError
from tests.conftest import EXAMPLE_VAULT, corpus
from tests.daemon_harness import LOAD, RunningDaemon, running, start

pytestmark = pytest.mark.e2e  # starts processes: the daemon, the CLI, editors


@pytest.fixture
def tasks_daemon() -> Iterator[RunningDaemon]:
    with running(corpus("obsidian-tasks-docs")) as d:
        yield d


def wait_changed(events: Iterator[tuple[str, dict[str, Any]]], path: str) -> dict[str, Any]:
    for name, params in events:
        if name == "index.changed" and (path in params["paths"] or path in params["deleted"]):
            return params
    raise AssertionError(f"no index.changed for {path}")


def sources(d: RunningDaemon, note: str) -> set[str]:
    with d.client() as c:
        return {b["source"] for b in c.call("note.backlinks", {"note": note})["backlinks"]}


def test_editor_saves_renames_moves_and_deletes(tasks_daemon: RunningDaemon) -> None:
    d, vault = tasks_daemon, tasks_daemon.vault
    with d.client() as sub:
        events = sub.subscribe(["index.changed"], timeout=20)
        # atomic save: write a temp file, rename it onto a new note
        tmp = vault / ".new-note.md.tmp"
        tmp.write_text("# New\n\nSee [[Filters]] for details.\n", "utf-8")
        os.replace(tmp, vault / "New note.md")
        assert wait_changed(events, "New note.md")["paths"] == ["New note.md"]
        assert "New note.md" in sources(d, "Filters")
        # in-place save
        with (vault / "New note.md").open("w", encoding="utf-8") as fh:
            fh.write("# New\n\nNow about [[Dates]] instead.\n")
        wait_changed(events, "New note.md")
        assert "New note.md" not in sources(d, "Filters")
        assert "New note.md" in sources(d, "Dates")
        # rename
        os.rename(vault / "New note.md", vault / "Renamed note.md")
        changed = wait_changed(events, "Renamed note.md")
        if "New note.md" not in changed["deleted"]:
            wait_changed(events, "New note.md")
        assert "Renamed note.md" in sources(d, "Dates")
        assert "New note.md" not in sources(d, "Dates")
        # move a folder holding notes
        os.rename(vault / "Queries", vault / "Searching")
        wait_changed(events, "Searching/Filters.md")
        with d.client() as c:
            assert c.call("note.links", {"note": "Searching/Filters.md"})["path"] == (
                "Searching/Filters.md"
            )
            nodes = {n["path"] for n in c.call("graph.export")["nodes"]}
            assert "Searching/Filters.md" in nodes
            assert not any(p.startswith("Queries/") for p in nodes)
            with pytest.raises(NoteNotFound):
                c.call("note.links", {"note": "Queries/No such note.md"})
        # delete
        (vault / "Renamed note.md").unlink()
        assert "Renamed note.md" in wait_changed(events, "Renamed note.md")["deleted"]
        assert "Renamed note.md" not in sources(d, "Dates")


def test_concurrent_clients_while_notes_change(tasks_daemon: RunningDaemon) -> None:
    errors: list[BaseException] = []
    counts: list[int] = []

    def reader() -> None:
        try:
            with tasks_daemon.client() as c:
                for _ in range(50):
                    counts.append(len(c.call("note.backlinks", {"note": "Filters"})["backlinks"]))
                    c.call("graph.neighbors", {"note": "Dates", "depth": 2})
        except BaseException as exc:  # collected and re-raised on the main thread
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(10)]
    for t in threads:
        t.start()
    for i in range(10):
        (tasks_daemon.vault / f"burst {i}.md").write_text(f"[[Filters]] {i}\n", "utf-8")
        time.sleep(0.02)
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert len(counts) == 500 and min(counts) > 0


def test_malformed_messages_get_errors_and_the_connection_lives(
    tasks_daemon: RunningDaemon,
) -> None:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(tasks_daemon.socket))
        reader = s.makefile("r", encoding="utf-8")
        s.sendall(b"this is not json\n")
        assert json.loads(reader.readline())["error"]["code"] == -32700
        s.sendall(b'{"jsonrpc": "2.0", "id": 1, "method": "note.links", "params": [1]}\n')
        assert json.loads(reader.readline())["error"]["code"] == -32602
        s.sendall(b'{"jsonrpc": "2.0", "id": 2, "method": "note.links", "params": {"x": 1}}\n')
        assert json.loads(reader.readline())["error"]["code"] == -32602
        s.sendall(b'{"jsonrpc": "2.0", "id": 3, "method": "nope"}\n')
        assert json.loads(reader.readline())["error"]["code"] == -32601
        s.sendall(b'{"jsonrpc": "2.0", "id": 4, "method": "index.status"}\n')
        assert json.loads(reader.readline())["result"]["notes"] == 118
    with tasks_daemon.client() as c, pytest.raises(UsageError):
        c.call("note.links", {"note": "Filters", "depth": 7})


def test_second_daemon_refuses_and_sigterm_exits_cleanly(tmp_path: Path) -> None:
    with running(EXAMPLE_VAULT) as d:
        second = subprocess.run(
            [sys.executable, "-m", "sidecar", "serve", "--vault", str(d.vault)],
            env=d.env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert second.returncode == 4  # its own code: the unit's RestartPreventExitStatus
        assert second.stderr.splitlines()[-1] == (
            f"sidecar: a sidecar daemon is already serving {d.vault.resolve()} at {d.socket}"
        )
        with d.client() as c:
            status = c.call("index.status")
            assert status["notes"] == 10  # the first one is unharmed
        # ``serve`` re-executed itself with glibc's malloc tuned: same pid, the variables set.
        assert status["daemon"]["pid"] == d.proc.pid
        assert "MALLOC_ARENA_MAX" not in d.env
        environ = Path(f"/proc/{d.proc.pid}/environ").read_bytes().split(b"\0")
        assert b"MALLOC_ARENA_MAX=1" in environ
        assert b"OPENBLAS_NUM_THREADS=1" in environ  # no spinning BLAS workers (heap.py)
        assert d.stop(signal.SIGTERM) == 0
        assert not d.socket.exists()


def test_cli_goes_through_the_socket_when_a_daemon_runs() -> None:
    with running(EXAMPLE_VAULT) as d:
        r = subprocess.run(
            [sys.executable, "-m", "sidecar", "status", "--json", "--vault", str(d.vault)],
            env=d.env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        status = json.loads(r.stdout)
        assert status["daemon"]["pid"] == d.proc.pid  # answered by the daemon, not in-process


def test_kill_9_mid_index_then_restart_repairs(tmp_path: Path) -> None:
    with running(corpus("dendron-site")) as d:
        with d.client(timeout=None) as c:
            assert c.call("index.reindex", {})["notes"] == 1012
        # start a full re-parse and kill the daemon while it writes
        threading.Thread(target=_call_quietly, args=(d, "index.reindex", {"full": True})).start()
        time.sleep(0.4)
        d.proc.kill()
        d.proc.wait(timeout=10 * LOAD)
        # edit while it is down: the restart must notice
        (d.vault / "written-while-down.md").write_text("[[dendron.topic.lookup]]\n", "utf-8")
        d2 = start(d.vault, d.env)
        try:
            with d2.client(timeout=None) as c:
                c.call("index.reindex", {})
                status = c.call("index.status")
                assert status["notes"] == 1013
                back = c.call("note.backlinks", {"note": "dendron.topic.lookup"})["backlinks"]
                assert "written-while-down.md" in {b["source"] for b in back}
                exported = c.call("graph.export")
        finally:
            d2.stop()
        assert exported == _fresh_export(d.vault)


def _call_quietly(d: RunningDaemon, method: str, params: dict[str, Any]) -> None:
    try:
        with d.client(timeout=None) as c:
            c.call(method, params)
    except Exception:  # the daemon is killed under this call on purpose
        return


def _fresh_export(vault: Path) -> dict[str, Any]:
    import tempfile

    from sidecar.services.context import Services

    with tempfile.TemporaryDirectory() as tmp:
        s = Services.open(vault, Path(tmp))
        try:
            s.reindex()
            return s.graph.export()
        finally:
            s.close()


def test_scheduled_lint_catches_up_writes_the_report_and_notifies() -> None:
    import shutil
    import tempfile

    from tests.daemon_harness import daemon_env

    state = Path(tempfile.mkdtemp(dir="/tmp", prefix="sct"))
    vault = state / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    env = {**daemon_env(state), "SIDECAR_LINT_REPORT_NOTE": "Sidecar/Lint report.md",
           "SIDECAR_LINT_SCHEDULE": "* * * * *"}  # fmt: skip
    d = start(vault, env)
    try:
        with d.client() as c:
            deadline = time.monotonic() + 30
            while c.call("lint.last")["ran_at"] is None:  # the missed first run, at start-up
                assert time.monotonic() < deadline
                time.sleep(0.1)
            last = c.call("lint.last")
            assert any(f["rule"] == "dangling_target" for f in last["findings"])
            report = (vault / "Sidecar" / "Lint report.md").read_text("utf-8")
            assert "[[daily/2026-11-28]]" in report or "[[2026-11-28]]" in report
            # the report note is indexed but not itself linted as an orphan
            assert not any(f["note"] == "Sidecar/Lint report.md" for f in last["findings"])
            with d.client() as sub:
                events = sub.subscribe(["lint.completed"], timeout=75)
                name, params = next(events)  # the every-minute schedule fires
                assert name == "lint.completed" and params["summary"]["total"] >= 1
    finally:
        d.stop()
        shutil.rmtree(state, ignore_errors=True)


def test_a_cold_start_indexes_in_a_child_process_then_serves_as_after_a_restart() -> None:
    """A start-up backlog over ``daemon.bulk_index_notes`` is indexed by a child holding the
    daemon's lent writer lock; the daemon then loads the store and carries on: queries, vectors,
    saves, and the lock still its own."""
    from sidecar.errors import StoreLocked
    from sidecar.services.context import Services

    bulk = {"SIDECAR_DAEMON_BULK_INDEX_NOTES": "100"}
    with running(corpus("dendron-site"), env=bulk) as d:
        assert "bulk index in a child process: 1012 notes" in d.log_text()
        with d.client(timeout=None) as c:
            status = c.call("index.status")
            assert status["notes"] == 1012 and status["daemon"]["ready"]
            assert status["daemon"]["pid"] == d.proc.pid
            hits = c.call("search", {"query": "lookup", "mode": "lexical"})["results"]
            assert hits and hits[0]["path"].endswith(".md")
            c.call("index.reindex", {"embed": True})  # the daemon's loop embeds the backlog
            status = c.call("index.status")
            assert status["pending"] == 0 and status["vectors"] == status["chunks"] > 0
        with d.client(timeout=None) as c:
            exported = c.call("graph.export")
        with pytest.raises(StoreLocked):  # the child's exit did not release the daemon's lock
            Services.open(d.vault, Path(d.env["SIDECAR_DATA_DIR"]))
        with d.client() as sub:
            events = sub.subscribe(["index.changed"], timeout=20)
            (d.vault / "after-bulk.md").write_text("# After\n\n[[dendron.topic.lookup]]\n", "utf-8")
            wait_changed(events, "after-bulk.md")
        assert "after-bulk.md" in sources(d, "dendron.topic.lookup")
    assert exported == _fresh_export(corpus("dendron-site"))


def test_the_watcher_asks_the_kernel_for_changes_only(tmp_path: Path) -> None:
    """Reads are not events: a cold index reads every note, and at 100k notes the open and
    close-without-write events overflowed inotify's queue, which watchdog answers by rescanning.
    A read must not reach the handler; a write must."""
    from watchdog.observers.inotify_c import InotifyConstants

    from sidecar.daemon.watcher import VaultWatcher

    (tmp_path / "a.md").write_text("# A\n", "utf-8")
    seen: list[str] = []
    w = VaultWatcher(tmp_path, lambda rel, _kind: seen.append(rel), lambda: None)
    w.start()
    try:
        observer = w._observer
        assert observer is not None
        (emitter,) = observer.emitters
        mask = emitter.get_event_mask_from_filter()
        assert not mask & (InotifyConstants.IN_OPEN | InotifyConstants.IN_CLOSE_NOWRITE)
        for _ in range(50):
            (tmp_path / "a.md").read_bytes()
        (tmp_path / "b.md").write_text("# B\n", "utf-8")
        deadline = time.monotonic() + 10
        while "b.md" not in seen and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        w.stop()
    assert "b.md" in seen and "a.md" not in seen


def dropped(d: RunningDaemon) -> int:
    return sum(int(n) for n in re.findall(r"\((\d+) unused vectors dropped\)", d.log_text()))


def test_idle_compaction_drops_unused_vectors_and_everything_still_answers() -> None:
    """Each save of a note leaves the vector of its old text behind (an undo would find it);
    idle compaction drops those, and saves, searches and memory go on as before."""
    idle = {"SIDECAR_DAEMON_COMPACT_IDLE_SECONDS": "1"}
    with running(EXAMPLE_VAULT, env=idle) as d, d.client() as c:
        note = d.vault / "burst.md"
        with d.client() as sub:
            events = sub.subscribe(["index.changed"], timeout=20 * LOAD)
            for i in range(3):  # saves, each embedded before the next
                note.write_text(f"# Burst\n\nThe kettle whistles round {i}.\n", "utf-8")
                wait_changed(events, "burst.md")
                c.call("index.reindex", {"embed": True})
                c.call("search", {"query": "kettle whistles"})
        deadline = time.monotonic() + 60 * LOAD
        while dropped(d) < 2:  # the first two texts' vectors, by one compaction or more
            assert time.monotonic() < deadline, d.log_text()
            time.sleep(0.2)
        assert dropped(d) == 2
        status = c.call("index.status")
        assert status["vectors"] == status["chunks"] and status["pending"] == 0
        hits = c.call("search", {"query": "kettle whistles round 11"})["results"]
        assert hits[0]["path"] == "burst.md"
        with d.client() as sub:
            events = sub.subscribe(["index.changed"], timeout=20 * LOAD)
            note.write_text("# Burst\n\nNow the teapot sings.\n", "utf-8")
            wait_changed(events, "burst.md")
        lexical = c.call("search", {"query": "teapot", "mode": "lexical"})["results"]
        assert [h["path"] for h in lexical] == ["burst.md"]
        c.call(
            "memory.write", {"id": "tea", "title": "Teapot over kettle", "entry_type": "decision"}
        )
        found = c.call("memory.search", {"query": "teapot"})["results"]
        assert [e["id"] for e in found] == ["tea"]
