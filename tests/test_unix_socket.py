"""The Unix-socket server and client over a real socket, with a dummy dispatch."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

from sidecar.errors import (
    DaemonUnreachable,
    MethodNotFound,
    NoteNotFound,
    SidecarError,
    UsageError,
)
from sidecar.transports.unix import RpcClient, RpcServer, is_serving
from tests.conftest import require

T = TypeVar("T")


async def dispatch(method: str, params: dict[str, Any]) -> Any:
    if method == "echo":
        return params
    if method == "slow":
        await asyncio.sleep(params.get("seconds", 0.2))
        return params
    if method == "fail":
        raise NoteNotFound("no note matches 'x'", {"query": "x"})
    if method == "boom":
        raise RuntimeError("secret internals")
    raise MethodNotFound(f"no method {method!r}")


class ServerThread:
    """An RpcServer on its own event loop in a thread, so the sync client can talk to it."""

    def __init__(self, path: Path, **kwargs: Any) -> None:
        self.path = path
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="rpc-test-loop")
        self.server = RpcServer(path, dispatch, **kwargs)

    def start(self) -> ServerThread:
        self.thread.start()
        try:
            self.run(self.server.start())
        except BaseException:
            self.shutdown_loop()
            raise
        return self

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def call_soon(self, fn: Callable[[], T]) -> T:
        async def wrapper() -> T:
            return fn()

        result: T = self.run(wrapper())
        return result

    def stop(self) -> list[asyncio.Task[Any]]:
        """Stop the server; return the tasks still alive on the loop afterwards."""
        self.run(self.server.stop())

        async def leftovers() -> list[asyncio.Task[Any]]:
            await asyncio.sleep(0)
            return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

        left: list[asyncio.Task[Any]] = self.run(leftovers())
        self.shutdown_loop()
        return left

    def shutdown_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture
def tmp_short() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(dir="/tmp", prefix="sc"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def sock_path(tmp_short: Path) -> Path:
    return tmp_short / "run" / "v.sock"


@pytest.fixture
def serve(sock_path: Path) -> Iterator[Callable[..., ServerThread]]:
    started: list[ServerThread] = []

    def factory(path: Path = sock_path, **kwargs: Any) -> ServerThread:
        server = ServerThread(path, **kwargs).start()
        started.append(server)
        return server

    yield factory
    for server in started:
        if server.thread.is_alive():
            assert server.stop() == []


@pytest.fixture(autouse=True)
def _no_thread_leaks() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert leaked == []


class Raw:
    """A bare socket speaking NDJSON, for what RpcClient would never send."""

    def __init__(self, path: Path, timeout: float = 5.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self.buffer = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def line(self) -> Any:
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def close(self) -> None:
        self.sock.close()


def req(method: str, params: dict[str, Any] | None = None, id: Any = 1) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode() + b"\n"


def test_socket_is_private(serve: Callable[..., ServerThread], sock_path: Path) -> None:
    serve()
    assert stat.S_ISSOCK(os.stat(sock_path).st_mode)
    assert stat.S_IMODE(os.stat(sock_path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(sock_path.parent).st_mode) == 0o700


def test_existing_own_directory_is_tightened(
    serve: Callable[..., ServerThread], sock_path: Path
) -> None:
    sock_path.parent.mkdir(mode=0o755)
    os.chmod(sock_path.parent, 0o755)
    serve()
    assert stat.S_IMODE(os.stat(sock_path.parent).st_mode) == 0o700


def test_call_and_errors_round_trip(serve: Callable[..., ServerThread], sock_path: Path) -> None:
    serve()
    with RpcClient(sock_path) as client:
        assert client.call("echo", {"q": "ünï 🚀", "n": [1, 2.5, None]}) == {
            "q": "ünï 🚀",
            "n": [1, 2.5, None],
        }
        assert client.call("echo") == {}
        with pytest.raises(NoteNotFound) as not_found:
            client.call("fail")
        assert not_found.value.data == {"query": "x"}
        with pytest.raises(MethodNotFound):
            client.call("nope")
        with pytest.raises(SidecarError) as internal:
            client.call("boom")
        assert internal.value.message == "internal error"
        assert internal.value.data == {"type": "RuntimeError", "message": "secret internals"}
        assert client.call("echo", {"still": "works"}) == {"still": "works"}


def test_many_concurrent_clients(serve: Callable[..., ServerThread], sock_path: Path) -> None:
    serve()

    def work(i: int) -> int:
        with RpcClient(sock_path, timeout=10) as client:
            for j in range(50):
                assert client.call("echo", {"client": i, "n": j}) == {"client": i, "n": j}
        return i

    with ThreadPoolExecutor(max_workers=20) as pool:
        assert sorted(pool.map(work, range(20))) == list(range(20))


def test_requests_on_one_connection_run_concurrently(
    serve: Callable[..., ServerThread], sock_path: Path
) -> None:
    serve()
    raw = Raw(sock_path)
    raw.send(req("slow", {"seconds": 0.5}, id="slow") + req("echo", {"x": 1}, id="fast"))
    assert raw.line()["id"] == "fast"
    assert raw.line() == {"jsonrpc": "2.0", "id": "slow", "result": {"seconds": 0.5}}
    raw.close()


def test_half_written_line_does_not_block_others(
    serve: Callable[..., ServerThread], sock_path: Path
) -> None:
    serve()
    stalled = Raw(sock_path)
    line = req("echo", {"a": 1}, id=9)
    stalled.send(line[:20])
    with RpcClient(sock_path, timeout=2) as other:
        assert other.call("echo", {"b": 2}) == {"b": 2}
    stalled.send(line[20:])
    assert stalled.line()["result"] == {"a": 1}
    stalled.close()


def test_oversized_line_is_refused_and_connection_survives(
    serve: Callable[..., ServerThread], sock_path: Path
) -> None:
    serve(max_line_bytes=4096)
    raw = Raw(sock_path)
    huge = req("echo", {"pad": "x" * 200_000}, id=1)
    raw.send(huge + req("echo", {"after": True}, id=2))
    refused = raw.line()
    assert refused["id"] is None
    assert refused["error"]["code"] == -32600
    assert "too large" in refused["error"]["message"]
    assert raw.line() == {"jsonrpc": "2.0", "id": 2, "result": {"after": True}}
    raw.close()
    with RpcClient(sock_path) as client:
        assert client.call("echo", {"pad": "y" * 3000}) == {"pad": "y" * 3000}


def test_malformed_json_then_same_connection_works(
    serve: Callable[..., ServerThread], sock_path: Path
) -> None:
    serve()
    raw = Raw(sock_path)
    raw.send(b'{"jsonrpc": "2.0", "method": \n')
    assert raw.line()["error"]["code"] == -32700
    raw.send(b"\xff\xfe\n\n   \n")  # not UTF-8, then blank lines that need no answer
    assert raw.line()["error"]["code"] == -32700
    raw.send(b'[{"jsonrpc":"2.0","method":"echo","params":[1],"id":3}]\n')
    assert raw.line()[0]["error"]["code"] == -32602
    raw.send(req("echo", {"ok": 1}, id=4))
    assert raw.line()["result"] == {"ok": 1}
    raw.close()


def test_reply_is_flushed_after_client_half_closes(
    serve: Callable[..., ServerThread], sock_path: Path
) -> None:
    serve()
    raw = Raw(sock_path)
    raw.send(req("slow", {"seconds": 0.1}, id=1) + b'{"jsonrpc":"2.0","id":2,"method":"echo"}')
    raw.sock.shutdown(socket.SHUT_WR)
    assert {raw.line()["id"], raw.line()["id"]} == {1, 2}
    raw.close()


def test_notifications_reach_subscribers_only(
    serve: Callable[..., ServerThread], sock_path: Path
) -> None:
    server = serve()
    with (
        RpcClient(sock_path) as everything,
        RpcClient(sock_path) as lint_only,
        RpcClient(sock_path) as nobody,
    ):
        all_events = everything.subscribe(timeout=2)
        lint_events = lint_only.subscribe(["lint.completed"], timeout=0.3)
        assert nobody.call("events.subscribe", {"events": ["reminder.due"]}) == {
            "subscribed": ["reminder.due"]
        }
        assert nobody.call("events.unsubscribe") == {"subscribed": []}
        server.run(server.server.notify("index.changed", {"paths": ["a.md"]}))
        assert next(all_events) == ("index.changed", {"paths": ["a.md"]})
        assert list(lint_events) == []
        server.run(server.server.notify("lint.completed", {"findings": 3}))
        assert next(all_events) == ("lint.completed", {"findings": 3})
        assert next(lint_only.subscribe(["lint.completed"], timeout=2)) == (
            "lint.completed",
            {"findings": 3},
        )
        assert nobody.call("echo", {"n": 1}) == {"n": 1}
        assert list(nobody.subscribe(["reminder.due"], timeout=0.2)) == []
        with pytest.raises(UsageError, match="unknown event"):
            nobody.subscribe(["index.chnaged"])


def test_slow_reader_is_dropped_and_logged(
    serve: Callable[..., ServerThread], sock_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = serve(max_queued_bytes=64 * 1024)
    raw = Raw(sock_path)
    raw.send(req("events.subscribe"))
    assert raw.line()["result"]["subscribed"]
    caplog.set_level(logging.WARNING)
    pad = "x" * 16_384
    for _ in range(400):  # ~6.5 MB: more than the kernel buffers plus our queue
        server.run(server.server.notify("index.changed", {"pad": pad}))
        if not server.call_soon(lambda: len(server.server._conns)):
            break
    assert server.call_soon(lambda: len(server.server._conns)) == 0
    assert "does not read" in caplog.text
    raw.close()
    with RpcClient(sock_path) as client:
        assert client.call("echo") == {}


def test_read_only_allow_list(serve: Callable[..., ServerThread], sock_path: Path) -> None:
    serve(read_only_methods={"echo"})
    with RpcClient(sock_path) as client:
        assert client.call("echo", {"a": 1}) == {"a": 1}
        with pytest.raises(MethodNotFound, match="read-only"):
            client.call("fail")
        assert client.call("events.subscribe", {"events": []}) == {"subscribed": []}


def test_other_uid_is_refused(serve: Callable[..., ServerThread], sock_path: Path) -> None:
    require(hasattr(socket, "SO_PEERCRED"), "SO_PEERCRED is Linux-only")
    server = serve()
    server.server._uid = os.getuid() + 1  # pretend the daemon runs as somebody else
    with RpcClient(sock_path, timeout=2) as client, pytest.raises(DaemonUnreachable):
        client.call("echo")


def test_second_server_on_live_path_refuses(
    serve: Callable[..., ServerThread], sock_path: Path
) -> None:
    serve()
    with pytest.raises(SidecarError, match="already serving"):
        serve()
    with RpcClient(sock_path) as client:
        assert client.call("echo", {"first": True}) == {"first": True}


def test_stale_socket_is_replaced(serve: Callable[..., ServerThread], sock_path: Path) -> None:
    sock_path.parent.mkdir(mode=0o700)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(sock_path))
    dead.close()  # the file stays, nobody listens: a daemon that crashed
    assert sock_path.exists()
    assert not is_serving(sock_path)
    serve()
    assert is_serving(sock_path)
    with RpcClient(sock_path) as client:
        assert client.call("echo") == {}


def test_non_socket_file_is_not_replaced(
    serve: Callable[..., ServerThread], sock_path: Path
) -> None:
    sock_path.parent.mkdir(mode=0o700)
    sock_path.write_text("precious")
    with pytest.raises(SidecarError, match="not a socket"):
        serve()
    assert sock_path.read_text() == "precious"


def test_stop_removes_socket_and_leaves_nothing_running(
    serve: Callable[..., ServerThread], sock_path: Path
) -> None:
    server = serve()
    client = RpcClient(sock_path, timeout=2)
    assert client.call("echo") == {}
    stalled = Raw(sock_path)
    stalled.send(req("slow", {"seconds": 30}))
    stalled.send(b'{"half": ')
    time.sleep(0.1)
    assert server.stop() == []
    assert not server.thread.is_alive()
    assert not sock_path.exists()
    with pytest.raises(DaemonUnreachable):
        client.call("echo")
    with pytest.raises(EOFError):
        stalled.line()
    with pytest.raises(DaemonUnreachable):
        RpcClient(sock_path)
    client.close()
    stalled.close()


def test_path_too_long_is_a_usage_error(tmp_short: Path) -> None:
    long_path = tmp_short / ("d" * 60) / ("s" * 60)
    with pytest.raises(UsageError, match="too long"):
        ServerThread(long_path).start()


def test_client_without_daemon(tmp_short: Path) -> None:
    with pytest.raises(DaemonUnreachable, match="no daemon"):
        RpcClient(tmp_short / "missing.sock")
    assert not is_serving(tmp_short / "missing.sock")
