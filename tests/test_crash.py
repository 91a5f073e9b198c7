"""kill -9 at random points of indexing, 20 rounds: after each restart the index matches the
vault (``index.check``, what ``sidecar doctor`` reports) without any repair, and the graph equals
a fresh index of the same files. The memory-write loop is in test_memory_daemon.py."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from tests.daemon_harness import daemon_env, start
from tests.test_daemon import _call_quietly, _fresh_export

ROUNDS = 20


def make_vault(root: Path, n: int = 120) -> None:
    rng = random.Random(3)
    for i in range(n):
        links = " ".join(f"[[note {rng.randrange(n)}]]" for _ in range(5))
        body = "\n\n".join(f"## Part {k}\n\nText {i} {k} " * 20 for k in range(4))
        folder = root / f"f{i % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note {i}.md").write_text(f"# Note {i}\n\n{links}\n\n{body}\n", "utf-8")


def test_kill_9_mid_index_twenty_rounds_then_doctor_finds_nothing() -> None:
    state = Path(tempfile.mkdtemp(dir="/tmp", prefix="scc"))
    vault = state / "vault"
    make_vault(vault)
    env = daemon_env(state)
    rng = random.Random(11)
    try:
        for round_ in range(ROUNDS):
            d = start(vault, env)
            try:
                with d.client(timeout=None) as c:
                    check = c.call("index.check", {})
                    assert check["problems"] == [], f"round {round_}: {check['problems'][:5]}"
                threading.Thread(target=_call_quietly,
                                 args=(d, "index.reindex", {"full": True})).start()  # fmt: skip
                time.sleep(rng.uniform(0.05, 0.8))
                d.proc.send_signal(signal.SIGKILL)
                d.proc.wait(timeout=10)
            finally:
                if d.proc.poll() is None:
                    d.proc.kill()
                    d.proc.wait(timeout=10)
            # change the vault while no daemon runs: the restart must notice
            victim = vault / f"f{round_ % 10}" / f"note {round_}.md"
            if round_ % 2:
                victim.unlink()
            else:
                victim.write_text(f"# Rewritten {round_}\n\n[[note {round_ + 1}]]\n", "utf-8")
        d = start(vault, env)
        try:
            with d.client(timeout=None) as c:
                assert c.call("index.check", {})["problems"] == []
                exported = c.call("graph.export")
            doctor = subprocess.run(
                [sys.executable, "-m", "sidecar", "doctor", "--json", "--vault", str(vault)],
                env=env, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
        finally:
            d.stop()
        report = json.loads(doctor.stdout)
        assert doctor.returncode == 0 and report["ok"], report
        assert any(c["check"] == "socket" and c["status"] == "ok" for c in report["checks"])
        assert exported == _fresh_export(vault)
    finally:
        shutil.rmtree(state, ignore_errors=True)


def test_kill_9_of_the_daemon_during_its_bulk_index_takes_the_child_along() -> None:
    """The child indexing a cold start holds the daemon's lent lock: when the daemon dies it
    must die too (an orphan would keep the store locked), and the next start finishes the job."""
    state = Path(tempfile.mkdtemp(dir="/tmp", prefix="scb"))
    vault = state / "vault"
    make_vault(vault, n=3000)  # the child runs for seconds: its imports, then its writes
    env = {**daemon_env(state), "SIDECAR_DAEMON_BULK_INDEX_NOTES": "100"}
    try:
        # into its writes: the child runs for seconds, its imports, then its writes
        _kill_9_with_child(vault, env, b"sidecar.cli.bulk", random.Random(5).uniform(1.5, 3.0))
        d = start(vault, env)  # the lock is free: no StoreLocked
        try:
            with d.client(timeout=None) as c:
                assert c.call("index.status")["notes"] == 3000
                assert c.call("index.check", {})["problems"] == []
                exported = c.call("graph.export")
        finally:
            d.stop()
        assert exported == _fresh_export(vault)
    finally:
        shutil.rmtree(state, ignore_errors=True)


def test_kill_9_of_the_daemon_during_its_embedding_backlog_takes_the_backlog_child_along() -> None:
    """The child writing a backlog's vectors dies with the daemon, and the next start embeds
    what was left: every chunk gets its vector, and the index matches the vault."""
    state = Path(tempfile.mkdtemp(dir="/tmp", prefix="scc"))
    vault = state / "vault"
    make_vault(vault, n=1000)  # ~5k chunks: the backlog lasts seconds with the tiny model
    env = daemon_env(state)
    try:
        _kill_9_with_child(vault, env, b"sidecar.daemon.backlog", 0.5)  # into its writes
        d = start(vault, env)
        try:
            with d.client(timeout=None) as c:
                c.call("index.reindex", {"embed": True})
                status = c.call("index.status")
                assert status["pending"] == 0 and status["vectors"] == status["chunks"] > 4000
                assert c.call("index.check", {})["problems"] == []
        finally:
            d.stop()
    finally:
        shutil.rmtree(state, ignore_errors=True)


def _kill_9_with_child(vault: Path, env: dict[str, str], module: bytes, after: float) -> None:
    """Start the daemon, ``kill -9`` it ``after`` seconds into its child running ``module``,
    and see the child go too (it must not outlive its daemon)."""
    with (vault.parent / "first.log").open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "sidecar", "serve", "--vault", str(vault)],
                                env=env, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    child = _wait_for_child(proc.pid, time.monotonic() + 120, module)
    time.sleep(after)
    assert _state_of(child) not in ("gone", "Z"), "the child ended before the kill: grow n"
    proc.kill()
    proc.wait(timeout=10)
    gone = time.monotonic() + 10
    while Path(f"/proc/{child}").exists() and _state_of(child) != "Z":
        assert time.monotonic() < gone, f"the {module.decode()} child outlived its daemon"
        time.sleep(0.05)


def _wait_for_child(parent: int, deadline: float, module: bytes) -> int:
    """The pid of the daemon's child running ``module``, once it runs."""
    while time.monotonic() < deadline:
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for pid in children:
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                except OSError:
                    continue
                if module in cmdline:
                    return int(pid)
        time.sleep(0.02)
    raise AssertionError(f"no {module.decode()} child appeared")


def _state_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
