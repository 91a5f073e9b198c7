"""A full disk under the data dir, then room again: the daemon says so, keeps serving, catches up
and stops on SIGTERM (issue 24, major 1). Needs root for the tmpfs mount."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.errors import SidecarError
from tests.conftest import REPO, require
from tests.daemon_harness import RunningDaemon, daemon_env, start

NOTES = 1500  # ~6 MB of index with the tiny embedder: fills the 4 MB tmpfs mid-index


@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    require(os.geteuid() == 0, "root, to mount a tmpfs for the data dir")
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
                   check=True)  # fmt: skip
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def wait_for(check: Callable[[], Any], timeout: float, what: str, show: Callable[[], Any] = str):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}: {show()}")
        time.sleep(0.2)


def status(d: RunningDaemon) -> dict[str, Any]:
    with d.client(timeout=10) as c:
        result: dict[str, Any] = c.call("index.status")
        return result


@pytest.fixture
def full_disk_daemon() -> Iterator[tuple[RunningDaemon, Path]]:
    state = Path(tempfile.mkdtemp(dir="/tmp", prefix="scf"))
    vault = state / "vault"
    subprocess.run([sys.executable, str(REPO / "bench" / "genvault.py"), str(vault), "--notes",
                    str(NOTES)], check=True, capture_output=True)  # fmt: skip
    with tmpfs(state / "data", "4m") as data:
        env = {**daemon_env(state), "SIDECAR_DAEMON_BULK_INDEX_NOTES": "0"}
        env["SIDECAR_DATA_DIR"] = str(data)
        d = start(vault, env, wait=120)
        try:
            yield d, data
        finally:
            sys.stdout.write(d.log_text()[-6000:])  # shown when the test fails
            if d.proc.poll() is None:
                d.proc.kill()
                d.proc.wait(timeout=10)
    shutil.rmtree(state, ignore_errors=True)


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_a_full_disk_degrades_then_recovers(full_disk_daemon: tuple[RunningDaemon, Path]) -> None:
    d, data = full_disk_daemon
    degraded = wait_for(lambda: status(d)["daemon"].get("degraded"), 60, "status to say degraded")
    assert any("No space left" in p["error"] for p in degraded), degraded
    with d.client(timeout=30) as c:  # a write that needs the full store gets one clear line
        with pytest.raises(SidecarError) as err:
            for i in range(20):  # the first may still fit in what the disk has left
                # titles this alike are near-duplicates: the gate lets them through, so
                # each write reaches the disk rather than stopping at the gate's -32000
                c.call("memory.write", {"id": f"full-{i}", "title": f"written on a full disk {i}",
                                        "on_duplicate": "contradicts"})  # fmt: skip
        assert err.value.code == -32005 and "No space left" in err.value.message
        assert "\n" not in err.value.message and ".rs:" not in err.value.message
        try:  # a first search builds its full-text index, which may not fit either
            c.call("search", {"query": "session", "mode": "lexical"})
        except SidecarError as exc:
            assert exc.code == -32005 and "No space left" in exc.message
        assert c.call("graph.hubs", {"limit": 3}) is not None  # still serving from memory
    subprocess.run(["mount", "-o", "remount,size=400m", str(data)], check=True)
    done = wait_for(
        lambda: (s := status(d))["notes"] == NOTES and not s["daemon"].get("degraded")
        and s["pending"] == 0 and s,
        120, "the index to catch up once there was room", lambda: status(d),
    )  # fmt: skip
    assert done["daemon"]["ready"]
    note = d.vault / "Saved after the disk had room.md"
    note.write_text("# Saved\n\nquixotic zeppelin words\n", "utf-8")
    with d.client(timeout=30) as c:
        found = wait_for(
            lambda: c.call("search", {"query": "quixotic zeppelin", "mode": "lexical"})["results"],
            30, "the new note to be searchable",
        )  # fmt: skip
        assert found[0]["path"] == note.name
        assert c.call("memory.write", {"id": "after", "title": "written after"})["created"]
    t0 = time.monotonic()
    assert d.stop(signal.SIGTERM, timeout=20) == 0
    assert time.monotonic() - t0 < 10
    log = d.log_text()
    assert "Traceback" not in log, log[-3000:]
    assert "works again" in log


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_sigterm_on_a_full_disk_exits_promptly(full_disk_daemon: tuple[RunningDaemon, Path]):
    """Before, the embedding task had died on the full disk and the stop waited on it (>60 s)."""
    d, _data = full_disk_daemon
    wait_for(lambda: status(d)["daemon"].get("degraded"), 60, "status to say degraded")
    t0 = time.monotonic()
    assert d.stop(signal.SIGTERM, timeout=30) == 0
    assert time.monotonic() - t0 < 10
    assert "Traceback" not in d.log_text()
