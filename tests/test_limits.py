"""Resource bounds (issue 24, majors 2, 4 and 8): batches, string parameters, connections,
half lines, buffered bytes, and work left behind by clients that went away. The codec and the
socket server are tested on their own; the issue's reproducers run against the real daemon."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import select
import shutil
import socket
import struct
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.api import build_registry
from sidecar.errors import DaemonUnreachable, SidecarError, UsageError
from sidecar.transports import jsonrpc
from tests.conftest import EXAMPLE_VAULT, corpus, require
from tests.daemon_harness import RunningDaemon, running
from tests.test_unix_socket import Raw, ServerThread, req


def batch(method: str, n: int, params: dict[str, Any] | None = None) -> bytes:
    calls = [{"jsonrpc": "2.0", "id": i, "method": method, **({"params": params} if params else {})}
             for i in range(n)]  # fmt: skip
    return json.dumps(calls, separators=(",", ":")).encode()


# -- the codec ---------------------------------------------------------------------------------


def test_a_batch_is_capped_in_length_and_in_reply_size() -> None:
    ran: list[int] = []

    async def dispatch(method: str, params: dict[str, Any]) -> Any:
        ran.append(1)
        return "x" * 1000

    limits = jsonrpc.BatchLimits(max_batch=10, max_reply_bytes=3500)
    refused = json.loads(asyncio.run(jsonrpc.handle_line(batch("big", 11), dispatch, limits)) or "")
    assert refused["error"]["code"] == -32600 and "at most 10" in refused["error"]["message"]
    assert ran == []  # refused before anything ran
    replies = json.loads(asyncio.run(jsonrpc.handle_line(batch("big", 10), dispatch, limits)) or "")
    assert [("result" in r) for r in replies] == [True] * 3 + [False] * 7
    assert all(r["error"]["code"] == -32600 for r in replies[3:])
    assert [r["id"] for r in replies] == list(range(10))
    assert len(ran) == 4  # the fourth reply passed the cap; the six after it never ran


def test_every_string_parameter_is_capped() -> None:
    registry = build_registry()
    with pytest.raises(UsageError, match=r"query: a string may hold at most 10000"):
        registry.validate("search", {"query": "q" * 10_001})
    with pytest.raises(UsageError, match=r"tags\.1"):
        registry.validate("search", {"query": "q", "tags": ["a", "t" * 10_001]})
    with pytest.raises(UsageError, match="at most 10000"):
        registry.validate("memory.write", {"title": "t" * 20_000})
    registry.validate("search", {"query": "q" * 10_000})  # at the cap: fine
    registry.validate("memory.write", {"title": "t", "content": "c" * 200_000})  # a body
    registry.validate("recall", {"prompt": "p" * 50_000})
    registry.validate("note.check", {"path": "a.md", "text": "t" * 1_000_000})


# -- the socket server -------------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[Callable[..., ServerThread]]:
    started: list[ServerThread] = []
    folder = Path(tempfile.mkdtemp(dir="/tmp", prefix="scl"))  # short: a socket path <104 bytes

    def start(**kw: Any) -> ServerThread:
        s = ServerThread(folder / f"s{len(started)}" / "v.sock", **kw).start()
        started.append(s)
        return s

    yield start
    for s in started:
        s.stop()
    shutil.rmtree(folder, ignore_errors=True)


def test_one_connection_over_the_cap_is_refused_clearly(
    server: Callable[..., ServerThread],
) -> None:
    s = server(max_connections=3)
    held = [Raw(s.path) for _ in range(3)]
    for raw in held:
        raw.send(req("echo", {"n": 1}))
        assert raw.line()["result"] == {"n": 1}
    extra = Raw(s.path)
    refused = extra.line()
    assert (
        refused["error"]["code"] == -32000 and "too many connections" in refused["error"]["message"]
    )
    with pytest.raises((EOFError, ConnectionResetError)):
        extra.line()
    held.pop().close()
    time.sleep(0.2)
    again = Raw(s.path)
    again.send(req("echo", {"n": 2}))
    assert again.line()["result"] == {"n": 2}
    for raw in [*held, extra, again]:
        raw.close()


def test_half_a_line_left_idle_closes_the_connection(server: Callable[..., ServerThread]) -> None:
    s = server(idle_line_seconds=0.5)
    half = Raw(s.path)
    half.send(b'{"jsonrpc": "2.0", "id": 1, "method": "ec')
    quiet = Raw(s.path)  # connected, said one thing, then silent: an editor waiting for events
    quiet.send(req("echo"))
    assert quiet.line()["result"] == {}
    time.sleep(1.2)
    closed = half.line()
    assert "idle" in closed["error"]["message"]
    with pytest.raises((EOFError, ConnectionResetError)):
        half.line()
    quiet.send(req("echo", {"still": True}))
    assert quiet.line()["result"] == {"still": True}
    half.close()
    quiet.close()


def test_connections_that_never_speak_are_closed_when_seats_run_short(
    server: Callable[..., ServerThread],
) -> None:
    """Silent ones are closed while over half the seats are taken, and then a client gets in.
    Which of them go depends on when each one's idle timer fires: once one is closed the
    server may be back at half its seats and keep the others."""
    s = server(max_connections=4, idle_line_seconds=0.5)
    silent = [Raw(s.path) for _ in range(3)]  # more than half the seats
    deadline = time.monotonic() + 30
    while len(silent) * 2 > 4:
        assert time.monotonic() < deadline, "no silent connection was closed"
        ready, _, _ = select.select([r.sock for r in silent], [], [], 1.0)
        for raw in [r for r in silent if r.sock in ready]:
            assert "idle" in raw.line()["error"]["message"]
            raw.close()
            silent.remove(raw)
    with contextlib.closing(Raw(s.path)) as ok:
        ok.send(req("echo", {"ok": 1}))
        assert ok.line()["result"] == {"ok": 1}
    for raw in silent:
        raw.close()


def test_buffered_bytes_across_connections_are_bounded(server: Callable[..., ServerThread]) -> None:
    """Subscribers that never read: each stays under its own queue cap, together they pass
    the server's budget, and the one holding most is dropped."""
    s = server(max_queued_bytes=4 * 2**20, max_buffered_bytes=2**20)
    deaf = []
    for _ in range(3):
        raw = Raw(s.path)
        raw.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.send(req("events.subscribe"))
        assert raw.line()["result"]["subscribed"]
        deaf.append(raw)
    pad = "x" * 16_384
    for _ in range(300):  # ~5 MB in all
        s.run(s.server.notify("index.changed", {"pad": pad}))
    assert s.call_soon(lambda: s.server._budget.used) <= 2**20 + 20_000
    assert s.call_soon(lambda: len(s.server._conns)) < 3
    for raw in deaf:
        raw.close()


# -- the real daemon ---------------------------------------------------------------------------


def rss_mib(pid: int) -> float:
    return (
        int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    )


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def raw_call(d: RunningDaemon, line: bytes, timeout: float = 60) -> Any:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(timeout)
        s.connect(str(d.socket))
        s.sendall(line + b"\n")
        return json.loads(s.makefile("rb").readline())


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_the_daemon_refuses_a_batch_of_exports_and_a_huge_query() -> None:
    """The issue: a 55 KB line of 1,000 ``graph.export`` calls took the daemon past 4 GB; a
    60 MB search query did the same."""
    with running(EXAMPLE_VAULT) as d:
        before = rss_mib(d.proc.pid)
        line = batch("graph.export", 1000)
        assert 40_000 < len(line) < 70_000
        reply = raw_call(d, line)
        assert reply["error"]["code"] == -32600 and "batch too large" in reply["error"]["message"]
        huge = raw_call(d, req("search", {"query": "q" * 60_000_000}).rstrip(b"\n"))
        assert huge["error"]["code"] == -32600 and "too large" in huge["error"]["message"]
        long = raw_call(d, req("search", {"query": "session " * 2000}).rstrip(b"\n"))
        assert (
            long["error"]["code"] == -32602
            and "limits.max_string_chars" in long["error"]["message"]
        )
        assert rss_mib(d.proc.pid) - before < 300
        with d.client() as c:
            assert c.call("index.status")["daemon"]["ready"]


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_idle_connections_do_not_lock_clients_out() -> None:
    """The issue: with the usual limit of 1,024 descriptors, 1,100 half-open connections locked
    every client out, the log took 1.5M lines in two minutes and the writer died."""
    prlimit = shutil.which("prlimit")
    require(prlimit is not None, "prlimit (util-linux), to run the daemon with 1,024 descriptors")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    require(hard >= 2400, "2,400 descriptors for the test's own 1,100 connections")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2400), hard))
    env = {"SIDECAR_LIMITS_IDLE_LINE_SECONDS": "2"}
    wrap = [str(prlimit), "--nofile=1024:1024", "--"]
    with running(EXAMPLE_VAULT, env=env, wrap=wrap) as d:
        conns = [connect_patiently(d.socket) for _ in range(1100)]
        for s in conns[::2]:
            with contextlib.suppress(OSError):  # one the daemon refused (over its cap)
                s.sendall(b'{"jsonrpc": "2.0", "id": 1, "method": "index.st')  # half a line
        deadline = time.monotonic() + 30
        while True:  # the silent and the half-written ones are closed after 2 s
            try:
                with d.client(timeout=5) as c:
                    c.call("memory.write", {"id": "still-writes", "title": "the writer lives"})
                    status = c.call("index.status")
                break
            except SidecarError:
                assert time.monotonic() < deadline, "clients are still locked out"
                time.sleep(0.5)
        assert not status["daemon"].get("degraded")
        for s in conns:
            s.close()
        log = d.log_text()
        assert len(log.splitlines()) < 100, log[-3000:]
        assert "Traceback" not in log


def connect_patiently(path: Path, within: float = 60) -> socket.socket:
    """A connection, retried while the listen backlog is full (the daemon accepts in turn)."""
    deadline = time.monotonic() + within
    while True:
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(str(path))
            return s
        except (BlockingIOError, ConnectionRefusedError, TimeoutError):
            s.close()
            assert time.monotonic() < deadline, "the daemon stopped accepting"
            time.sleep(0.01)


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_dropped_clients_take_their_work_with_them() -> None:
    """The issue: 10 clients that never read pushed RSS from 204 to 1,099 MB and held status at
    ~6 s for over 5 minutes: lines they had sent kept running after they went away. Measured
    here before the fix (dendron-site, 10 x 3,000 graph.export): the first status after the
    drop took 20 s; now the work in flight ends (threads cannot be stopped mid-call) and
    nothing queued runs."""
    with running(corpus("dendron-site")) as d:
        with d.client() as c:  # the embedding backlog done: the CPU measured below is ours
            deadline = time.monotonic() + 120
            while c.call("index.status")["pending"] and time.monotonic() < deadline:
                time.sleep(0.5)
        lines = b"".join(req("graph.export", {}, id=i) for i in range(3000))
        clients = []
        for _ in range(10):
            s = socket.socket(socket.AF_UNIX)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(str(d.socket))
            s.setblocking(False)
            with contextlib.suppress(BlockingIOError):  # full buffers: what got there is enough
                s.sendall(lines)
            clients.append(s)
        time.sleep(2)
        for s in clients:  # gone without reading a byte
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        dropped = time.monotonic()
        while True:
            t0 = time.monotonic()
            try:
                with d.client(timeout=3) as c:
                    c.call("index.status")
                if time.monotonic() - t0 < 1.0:
                    break
            except DaemonUnreachable:
                pass
            assert time.monotonic() - dropped < 12, "still busy with work for clients that left"
            time.sleep(0.5)
        spent = cpu_seconds(d.proc.pid)
        time.sleep(2)
        assert cpu_seconds(d.proc.pid) - spent < 0.6  # idle again, not working for nobody
