"""``sidecar lsp``'s connection as the specification has it, driven with raw frames over stdio:
the lifecycle and its error codes, malformed input, cancellation, position encodings. No daemon
runs (``--no-autostart``) except the one that hangs, for cancellation."""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from sidecar.config import load_settings
from sidecar.transports.unix_path import socket_path_for
from tests.daemon_harness import daemon_env

pytestmark = pytest.mark.e2e  # runs `sidecar lsp` as an editor does
NOTE = "My Note.md"
TEXT = "# Café 😀 plan\n\nSee [[Other note]] and more.\n\n## Zoë\n"
WAIT_S = 30  # an answer that does not come in this long is not coming (a loaded machine)


class Raw:
    """`sidecar lsp` in a subprocess; messages it sends are read into a queue by a thread."""

    def __init__(self, vault: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sidecar", "lsp", "--vault", str(vault), "--no-autostart"],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.got: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        assert self.proc.stdout is not None
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            length = None
            while (line := stream.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if length is None:
                return
            self.got.put(json.loads(stream.read(length)))

    def raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def reply(self, ident: Any, timeout: float = WAIT_S) -> dict[str, Any]:
        """The response to ``ident`` (other messages are kept in ``seen``)."""
        deadline = time.monotonic() + timeout
        for message in self.seen:
            if "method" not in message and message.get("id") == ident:
                self.seen.remove(message)
                return message
        while True:
            try:
                message = self.got.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise AssertionError(f"no response to {ident!r} in {timeout} s") from None
            if "method" not in message and message.get("id") == ident:
                return message
            self.seen.append(message)

    def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        self.send({"id": "init", "method": "initialize", "params": {
            "processId": None, "rootUri": None, "capabilities": capabilities or {}}})  # fmt: skip
        result: dict[str, Any] = self.reply("init")["result"]
        self.send({"method": "initialized", "params": {}})
        return result

    def open(self, vault: Path, rel: str = NOTE, text: str = TEXT) -> str:
        uri = (vault / rel).as_uri()
        self.send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "markdown", "version": 1, "text": text}}})  # fmt: skip
        return uri

    def finish(self, shutdown: bool = True) -> tuple[int, str]:
        if shutdown:
            self.send({"id": "bye", "method": "shutdown"})
            assert self.reply("bye") == {"jsonrpc": "2.0", "id": "bye", "result": None}
        self.send({"method": "exit"})
        _, stderr = self.proc.communicate(timeout=WAIT_S)
        return self.proc.returncode, stderr.decode()


@pytest.fixture
def vault() -> Iterator[tuple[Path, dict[str, str]]]:
    state = Path(tempfile.mkdtemp(dir="/tmp", prefix="scp"))
    (state / "vault").mkdir()
    (state / "vault" / NOTE).write_text(TEXT, "utf-8")
    env = {k: v for k, v in daemon_env(state).items() if k != "SIDECAR_VAULT"}
    try:
        yield state / "vault", env
    finally:
        subprocess.run(["rm", "-rf", str(state)], check=False)


def error_of(message: dict[str, Any]) -> int:
    assert "result" not in message, message
    return int(message["error"]["code"])


def test_lifecycle_and_bad_input_get_error_replies_never_a_traceback(
    vault: tuple[Path, dict[str, str]],
) -> None:
    root, env = vault
    lsp = Raw(root, env)
    hover = {"textDocument": {"uri": (root / NOTE).as_uri()}, "position": {"line": 0,
                                                                           "character": 0}}  # fmt: skip
    lsp.send({"id": 1, "method": "textDocument/hover", "params": hover})
    assert error_of(lsp.reply(1)) == -32002  # not initialized (was answered null)
    caps = lsp.initialize()["capabilities"]
    assert caps["positionEncoding"] == "utf-16" and caps["textDocumentSync"]["change"] == 1
    assert caps["renameProvider"] == {"prepareProvider": True}
    lsp.send({"id": 2, "method": "textDocument/noSuchThing", "params": {}})
    assert error_of(lsp.reply(2)) == -32601
    lsp.raw(b"Content-Length: 9\r\n\r\n{not json")
    assert error_of(lsp.reply(None)) == -32700  # was no reply, a traceback on stderr
    lsp.raw(b"Content-Type: application/json\r\n\r\n")  # no Content-Length
    assert error_of(lsp.reply(None)) == -32700
    lsp.send({"id": 3, "method": "textDocument/hover", "params": {"bogus": 1}})
    assert error_of(lsp.reply(3)) == -32602  # was never answered
    lsp.send({"id": 4, "method": "textDocument/documentSymbol",
              "params": {"textDocument": {"uri": (root / NOTE).as_uri()}}})  # fmt: skip
    assert [s["name"] for s in lsp.reply(4)["result"]] == ["Café 😀 plan"]  # still serving
    lsp.send({"id": 5, "method": "shutdown"})
    lsp.send({"id": 6, "method": "textDocument/documentSymbol",
              "params": {"textDocument": {"uri": (root / NOTE).as_uri()}}})  # fmt: skip
    assert lsp.reply(5)["result"] is None
    assert error_of(lsp.reply(6)) == -32600  # after shutdown (was dropped: no reply)
    status, stderr = lsp.finish(shutdown=False)
    assert status == 0
    assert "Traceback" not in stderr


def test_exit_without_shutdown_ends_with_status_1(vault: tuple[Path, dict[str, str]]) -> None:
    root, env = vault
    lsp = Raw(root, env)
    lsp.initialize()
    status, stderr = lsp.finish(shutdown=False)
    assert status == 1, stderr


def symbol_ranges(lsp: Raw, uri: str, ident: int) -> list[tuple[int, int]]:
    lsp.send({"id": ident, "method": "textDocument/documentSymbol",
              "params": {"textDocument": {"uri": uri}}})  # fmt: skip
    top = lsp.reply(ident)["result"][0]
    return [(s["range"]["end"]["line"], s["range"]["end"]["character"])
            for s in (top, *top["children"])]  # fmt: skip


@pytest.mark.parametrize(("offered", "chosen", "ends"), [
    (None, "utf-16", [(0, 14), (4, 6)]),  # 😀 is two UTF-16 units, é and ë one
    (["utf-8", "utf-16"], "utf-8", [(0, 17), (4, 7)]),  # é two bytes, 😀 four
    (["utf-32"], "utf-32", [(0, 13), (4, 6)]),
])  # fmt: skip
def test_position_encoding_is_negotiated(
    vault: tuple[Path, dict[str, str]], offered: list[str] | None, chosen: str,
    ends: list[tuple[int, int]],
) -> None:  # fmt: skip
    root, env = vault
    lsp = Raw(root, env)
    general = {"general": {"positionEncodings": offered}} if offered else {}
    assert lsp.initialize(general)["capabilities"]["positionEncoding"] == chosen
    uri = lsp.open(root)
    assert symbol_ranges(lsp, uri, 1) == ends
    edited = TEXT.replace("## Zoë", "## Zoë 😀")  # a full-text change, as advertised
    lsp.send({"method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": edited}]}})  # fmt: skip
    grown = {"utf-16": 2, "utf-8": 4, "utf-32": 1}[chosen] + 1
    assert symbol_ranges(lsp, uri, 2) == [ends[0], (4, ends[1][1] + grown)]
    assert lsp.finish()[0] == 0


@pytest.fixture
def hung_daemon(vault: tuple[Path, dict[str, str]]) -> Iterator[Callable[[], None]]:
    """A daemon that accepts connections and never answers, where the vault's would listen;
    the fixture's value hangs it up (every connection closed)."""
    root, env = vault
    path = socket_path_for(load_settings(root, env), env)
    path.parent.mkdir(parents=True, exist_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(os.fspath(path))
    server.listen(8)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    def hang_up() -> None:
        server.close()
        path.unlink(missing_ok=True)
        for conn in held:
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield hang_up
    finally:
        hang_up()


def test_a_request_waiting_on_the_daemon_is_cancelled_at_once(
    vault: tuple[Path, dict[str, str]], hung_daemon: Callable[[], None],
) -> None:  # fmt: skip
    root, env = vault
    lsp = Raw(root, env)
    lsp.initialize()
    uri = lsp.open(root)
    at = {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 8}}
    lsp.send({"id": 1, "method": "textDocument/definition", "params": at})  # waits on the daemon
    lsp.send({"id": 2, "method": "textDocument/documentSymbol",
              "params": {"textDocument": {"uri": uri}}})  # fmt: skip
    time.sleep(0.5)
    started = time.monotonic()
    lsp.send({"method": "$/cancelRequest", "params": {"id": 1}})
    lsp.send({"method": "$/cancelRequest", "params": {"id": 2}})
    assert error_of(lsp.reply(1, timeout=5)) == -32800  # the hung call holds its own thread
    assert error_of(lsp.reply(2, timeout=5)) == -32800  # cancelled before it ran
    assert time.monotonic() - started < 5
    hung_daemon()  # now the definition fails over to "no daemon", and its answer is dropped
    status, _ = lsp.finish()
    assert status == 0
    assert not [m for m in lsp.seen if m.get("id") in (1, 2)]
