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
