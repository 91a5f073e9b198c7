"""Load: many socket clients send mixed requests while a writer edits notes and a subscriber
counts ``index.changed``; no request fails and every edit is announced. CI runs 10 clients x
200 requests; ``python bench/load_bench.py`` runs the issue's 50 x 1,000 and reports latency.
A stuck client (half a line, never reading its notifications) does not block the others."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import pytest

from tests.conftest import EXAMPLE_VAULT
from tests.daemon_harness import RunningDaemon, running

pytestmark = pytest.mark.e2e  # starts processes: the daemon, the CLI, editors

REQUESTS = [
    ("search", {"query": "session storage", "mode": "lexical"}),
    ("note.backlinks", {"note": "Auth Service"}),
    ("graph.neighbors", {"note": "Session Store", "depth": 2}),
    ("index.status", {}),
    ("note.links", {"note": "Alice"}),
    ("graph.hubs", {"limit": 5}),
]


def load(d: RunningDaemon, clients: int, per_client: int, edits: int) -> dict[str, Any]:
    errors: list[BaseException] = []
    latencies: list[float] = []
    seen: set[str] = set()
    subscribed = threading.Event()

    def subscriber() -> None:
        with d.client(timeout=60) as c:
            events = c.subscribe(["index.changed"], timeout=60)
            subscribed.set()
            for _name, params in events:
                seen.update(params["paths"])
                if all(f"load {i}.md" in seen for i in range(edits)):
                    return

    def client(k: int) -> None:
        try:
            with d.client(timeout=60) as c:
                for i in range(per_client):
                    method, params = REQUESTS[(k + i) % len(REQUESTS)]
                    t = time.perf_counter()
                    c.call(method, params)
                    latencies.append(time.perf_counter() - t)
        except BaseException as exc:  # collected, re-raised on the main thread
            errors.append(exc)

    sub = threading.Thread(target=subscriber)
    sub.start()
    subscribed.wait(30)
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for i in range(edits):  # the writer: each edit a new note, so each must be announced
        (d.vault / f"load {i}.md").write_text(f"# Load {i}\n\n[[Auth Service]]\n", "utf-8")
        time.sleep(0.05)
    for t in threads:
        t.join(timeout=600)
    elapsed = time.perf_counter() - started
    sub.join(timeout=60)
    latencies.sort()
    return {"errors": errors, "latencies": latencies, "seen": seen, "seconds": elapsed,
            "alive": any(t.is_alive() for t in threads)}  # fmt: skip


def test_clients_and_a_writer_lose_nothing() -> None:
    with running(EXAMPLE_VAULT) as d:
        r = load(d, clients=10, per_client=200, edits=30)
    assert r["errors"] == [] and not r["alive"]
    assert len(r["latencies"]) == 10 * 200
    assert {f"load {i}.md" for i in range(30)} <= r["seen"]


def test_stuck_clients_do_not_block_others() -> None:
    with running(EXAMPLE_VAULT) as d:
        half = socket.socket(socket.AF_UNIX)
        half.connect(str(d.socket))
        half.sendall(b'{"jsonrpc": "2.0", "id": 1, "method": "index.st')  # never finished
        deaf = socket.socket(socket.AF_UNIX)
        deaf.connect(str(d.socket))
        deaf.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        deaf.sendall(b'{"jsonrpc":"2.0","id":1,"method":"events.subscribe"}\n')
        big = b'{"jsonrpc":"2.0","id":2,"method":"index.status","params":{"x":"' + b"a" * (
            65 * 1024 * 1024) + b'"}}\n'  # fmt: skip
        try:
            for i in range(40):  # notifications pile up for the client that never reads
                (d.vault / f"noise {i}.md").write_text(f"# Noise {i}\n" * 200, "utf-8")
            r = load(d, clients=5, per_client=50, edits=5)
            assert r["errors"] == [] and {f"load {i}.md" for i in range(5)} <= r["seen"]
            with socket.socket(socket.AF_UNIX) as s:  # an oversized line: refused, then served
                s.connect(str(d.socket))
                s.sendall(big + b'{"jsonrpc":"2.0","id":3,"method":"index.status"}\n')
                reader = s.makefile("r", encoding="utf-8")
                assert '"code":-32600' in reader.readline()
                assert '"id":3' in reader.readline()
        finally:
            half.close()
            deaf.close()
        assert "Traceback" not in d.log_text()


def percentile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0
