"""Memory in the real daemon: reminders announced on time, editor edits picked up, and no
acknowledged entry lost to ``kill -9``."""

from __future__ import annotations

import datetime as dt
import random
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

import pytest

from sidecar.core.memory_format import parse
from sidecar.errors import DaemonUnreachable
from sidecar.transports.unix import RpcClient
from tests.conftest import EXAMPLE_VAULT
from tests.daemon_harness import KILL_ROUNDS, daemon_env, running, start

pytestmark = pytest.mark.e2e  # starts processes: the daemon, the CLI, editors

T = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def test_a_reminder_due_in_two_seconds_arrives_as_a_notification() -> None:
    with running(EXAMPLE_VAULT) as d, d.client() as sub, d.client() as c:
        events = sub.subscribe(["reminder.due"], timeout=8)  # 8 quiet ticks prove "once"
        written = time.monotonic()
        c.call("memory.write", {"id": "ping", "title": "Ping Alice", "entry_type": "reminder",
                                "due_in": 2, "content": "about the Redis upgrade"})  # fmt: skip
        name, params = next(events)
        waited = time.monotonic() - written
        assert name == "reminder.due"
        assert params["id"] == "ping" and params["body"] == "about the Redis upgrade"
        assert 1.0 <= waited <= 6.0, waited
        assert [r["id"] for r in c.call("reminders.due")["due"]] == ["ping"]
        assert next(events, None) is None  # announced once, not every tick


def test_the_daemon_picks_up_an_entry_edited_in_the_editor() -> None:
    with running(EXAMPLE_VAULT) as d, d.client() as c:
        c.call("memory.write", {"id": "edited", "title": "Before", "entry_type": "decision"})
        path = d.vault / ".sidecar" / "memory" / "edited.md"
        path.write_text(path.read_text("utf-8").replace('"Before"', '"After"'), "utf-8")
        (d.vault / ".sidecar" / "memory" / "typed.md").write_text("Typed by hand\n", "utf-8")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ids = {e["id"]: e["title"] for e in c.call("memory.list")["entries"]}
            if ids == {"edited": "After", "typed": "Typed by hand"}:
                break
            time.sleep(0.2)
        assert ids == {"edited": "After", "typed": "Typed by hand"}
        assert "Before" in c.call("memory.history", {"id": "edited"})["revisions"][0]["text"]


WORDS = [
    f"{a}{b}"
    for a in ("red", "post", "ses", "tok", "cach", "queu", "writ", "ind")
    for b in ("is", "gres", "sion", "en", "e", "ue", "er", "ex")
]


def _write_until_killed(client: RpcClient, acked: list[str], prefix: str) -> None:
    """Write entries one after another; an id counts as acknowledged once its call returned.
    Bodies are random words, so the near-duplicate gate lets every one through."""
    rng = random.Random(prefix)
    n = 0
    try:
        while True:
            entry_id = f"{prefix}-{n}"
            body = " ".join(rng.choices(WORDS, k=40))
            client.call("memory.write", {"id": entry_id, "title": f"Entry {entry_id}",
                                         "content": body})  # fmt: skip
            acked.append(entry_id)
            n += 1
    except DaemonUnreachable:
        return


def test_kill_9_during_memory_writes_loses_no_acknowledged_entry() -> None:
    state = Path(tempfile.mkdtemp(dir="/tmp", prefix="sck"))
    vault = state / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    env = daemon_env(state)
    folder = vault / ".sidecar" / "memory"
    acked: list[str] = []
    rng = random.Random(7)
    try:
        for round_ in range(KILL_ROUNDS):
            d = start(vault, env)
            try:
                with d.client() as c:
                    listed = {e["id"] for e in c.call("memory.list", {"limit": 10000})["entries"]}
                    assert set(acked) <= listed, f"round {round_}: lost {set(acked) - listed}"
                    writer = threading.Thread(target=_write_until_killed,
                                              args=(c, acked, f"r{round_}"))  # fmt: skip
                    writer.start()
                    time.sleep(rng.uniform(0.1, 0.6))
                    d.proc.send_signal(signal.SIGKILL)
                    d.proc.wait(timeout=10)
                    writer.join(timeout=30)
            finally:
                if d.proc.poll() is None:
                    d.proc.kill()
                    d.proc.wait(timeout=10)
            for entry_id in acked:
                text = (folder / f"{entry_id}.md").read_text("utf-8")
                assert parse(text, entry_id, T).title == f"Entry {entry_id}"
            for path in folder.glob("*.md"):  # no half-written file under a real name
                parse(path.read_text("utf-8"), path.stem, T)
        assert len(acked) >= KILL_ROUNDS  # at least one a round: the kills were mid-stream
    finally:
        shutil.rmtree(state, ignore_errors=True)
