"""``sidecar mcp``: the Model Context Protocol over stdio, one tool per registry method.

The protocol is JSON-RPC 2.0, one message per line, so the server is our own codec
(``jsonrpc.handle_line``) plus the few MCP methods a tools-only server answers: ``initialize``,
``ping``, ``tools/list`` and ``tools/call`` (the SDK's ``server/discover`` probe is answered
"method not found", after which its client falls back to ``initialize``, as every other client
uses). The SDK's server was not used because importing it took 0.8-1.1 s and 65 MiB on this
machine, before serving anything; the tools come from a file generated from the registry
(``mcp_tools``), so starting imports neither pydantic nor the services.

Arguments go to the registry unchanged, so validation and errors are the same as over the
socket. Calls reach the methods through a ``connect`` callable the composition root supplies:
the daemon's socket when it serves the vault, else the index in-process.

Stdout belongs to the protocol: nothing here prints, logs go to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from sidecar import __version__
from sidecar.errors import MethodNotFound, SidecarError, UsageError
from sidecar.transports.client import Client, Reconnecting
from sidecar.transports.jsonrpc import handle_line
from sidecar.transports.mcp_pages import MAX_REPLY_CHARS, Pages
from sidecar.transports.mcp_render import render
from sidecar.transports.mcp_tools import Tool, tool_name
from sidecar.transports.stdio import claim_stdout

__all__ = ["INSTRUCTIONS", "PROTOCOL_VERSIONS", "Backend", "McpServer", "tool_name"]

INSTRUCTIONS = (
    "Tools over the user's local Markdown vault (notes with [[wikilinks]] and typed relations) "
    "and a memory of decisions, problems and facts. recall gives the few notes that matter for "
    "a prompt, or nothing; search finds more; read_note reads one whole. Change notes with "
    "edit_note, write_note and move_note (pass the hash read_note gave). memory_write remembers; "
    "session_start brings due reminders and the last handoff. Long listings come in pages: pass "
    "next_cursor back as cursor."
)
# the revisions negotiated with ``initialize``, oldest first; the last is offered by default
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
REAP_SECONDS = 5.0
_log = logging.getLogger(__name__)


class Backend:
    """One client at a time, used by one call at a time (neither client is thread-safe).

    A socket that drops is reconnected once per call (the daemon restarted); an idle client is
    closed by ``release_idle``, so an in-process index does not hold the writer lock, and a
    daemon started later can take over, while the server waits for its next call.
    """

    def __init__(self, connect: Callable[[], Client], idle_seconds: float = 30.0) -> None:
        self._idle = idle_seconds
        self._conn = Reconnecting(connect)
        self._lock = threading.Lock()
        self._last = time.monotonic()

    def call(self, method: str, params: dict[str, Any]) -> Any:
        with self._lock:
            self._last = time.monotonic()
            try:
                return self._conn.call(method, params)
            finally:
                self._last = time.monotonic()

    def release_idle(self) -> None:
        with self._lock:
            if time.monotonic() - self._last >= self._idle:  # a no-op when none is open
                self._conn.close()

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class McpServer:
    """Answers MCP requests; ``serve`` runs it over a pair of byte streams (stdin, stdout).

    Requests run concurrently (a ``ping`` is answered while a tool call waits on the daemon);
    the backend itself takes one call at a time.
    """

    def __init__(
        self, tools: list[Tool], backend: Backend, *, name: str = "sidecar",
        instructions: str = INSTRUCTIONS,
    ) -> None:  # fmt: skip
        self.backend = backend
        self._name, self._instructions = name, instructions
        self._tools = [t["definition"] for t in tools]
        self._by_name = {t["definition"]["name"]: t for t in tools}
        self.pages = Pages()

    async def dispatch(self, method: str, params: dict[str, Any]) -> Any:
        if method == "initialize":
            return self._initialize(params)
        if method == "ping" or method.startswith("notifications/"):
            return {}  # initialized, cancelled (a call in a thread cannot be interrupted), ...
        if method == "tools/list":
            return {"tools": self._tools}
        if method == "tools/call":
            return await self._call(params)
        raise MethodNotFound(f"method not found: {method}")

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": self._name, "title": "Vault Sidecar", "version": __version__},
            "instructions": self._instructions,
        }

    async def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        name, arguments = params.get("name"), params.get("arguments") or {}
        if not isinstance(name, str) or name not in self._by_name:
            raise UsageError(f"unknown tool: {name!r}")
        if not isinstance(arguments, dict):
            raise UsageError("tool arguments must be an object")
        tool = self._by_name[name]
        method = tool["method"]
        try:
            if self.pages.is_ours(arguments.get("cursor")):
                return _reply(method, self.pages.next(arguments["cursor"]))
            args = {**tool.get("defaults", {}), **arguments}
            if tool.get("paged"):
                args.pop("cursor", None)  # the server's own, for answers too big: none yet
            result = await asyncio.to_thread(self.backend.call, method, args)
        except SidecarError as exc:
            return _tool_error(exc.to_dict())
        except Exception as exc:  # a bug must not end the session: the agent sees it as a result
            _log.exception("tool %s failed", name)
            return _tool_error({"code": -32603, "message": f"internal error: {exc}"})
        reply = _reply(method, result)
        if _reply_size(reply) > MAX_REPLY_CHARS:
            try:
                reply = _reply(method, self.pages.first(result))
            except SidecarError as exc:
                return _tool_error(exc.to_dict())
        return reply

    async def serve(self, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        """Until stdin ends; then the calls in flight finish and the backend is closed."""
        loop = asyncio.get_running_loop()
        reaper = asyncio.create_task(self._reap())
        pending: set[asyncio.Task[None]] = set()
        try:
            while line := await loop.run_in_executor(None, stdin.readline):
                if line.strip():
                    task = asyncio.create_task(self._answer(line, stdout))
                    pending.add(task)
                    task.add_done_callback(pending.discard)
            if pending:
                await asyncio.wait(pending)
        finally:
            reaper.cancel()
            await asyncio.to_thread(self.backend.close)

    async def _answer(self, line: bytes, stdout: IO[bytes]) -> None:
        reply = await handle_line(line, self.dispatch)
        if reply is not None:
            stdout.write(reply.encode("utf-8") + b"\n")
            stdout.flush()

    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(REAP_SECONDS)
            await asyncio.to_thread(self.backend.release_idle)


def _reply(method: str, result: Any) -> dict[str, Any]:
    """The result once as structured content, and as the short text a model reads."""
    reply: dict[str, Any] = {"content": [{"type": "text", "text": render(method, result)}]}
    if isinstance(result, dict):
        reply["structuredContent"] = result
    return reply


def _reply_size(reply: dict[str, Any]) -> int:
    """Counted as a client's plain ``json.dumps`` would (spaces, ``\\u`` escapes): the larger
    count, so no client measures a reply over the bound (the compact count let a 37k-character
    ``graph_dangling`` on dendron-site through at 76.7k by the test's count)."""
    return len(reply["content"][0]["text"]) + len(json.dumps(reply.get("structuredContent")))


def _tool_error(error: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps({"error": error}, ensure_ascii=False)
    return {"content": [{"type": "text", "text": text}], "isError": True}


def run_stdio(server: McpServer) -> None:
    """Serve on the process's stdin and stdout; Ctrl-C ends it quietly.

    The protocol gets its own copy of stdout, and file descriptor 1 then points at stderr: a
    library that prints (in-process, the store and the model run here) cannot corrupt it."""
    protocol = claim_stdout()
    with contextlib.suppress(KeyboardInterrupt), protocol:
        asyncio.run(server.serve(sys.stdin.buffer, protocol))
