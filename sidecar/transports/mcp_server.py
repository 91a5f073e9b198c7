"""``sidecar mcp``: an MCP stdio server with one tool per registry method, generated, not written.

Each tool's name is the method's with ``.`` turned into ``_`` (``memory.write`` ->
``memory_write``: clients such as Claude's API accept only ``[A-Za-z0-9_-]``), its description is
the method's summary, its input schema the params model's JSON schema, and read-only methods
carry ``readOnlyHint``. Arguments go to the registry unchanged, so validation and errors are the
same as over the socket. Calls reach the methods through a ``connect`` callable the composition
root supplies: the daemon's socket when it serves the vault, else the index in-process.

Stdout belongs to the protocol: nothing here prints, logs go to stderr.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict

from sidecar.api.registry import Method, Registry
from sidecar.errors import DaemonUnreachable, SidecarError

INSTRUCTIONS = (
    "Tools over a local Markdown vault and its memory. Use recall with the user's prompt for the "
    "few notes and memory entries that matter (it abstains when nothing does); search for more; "
    "memory_write to remember a decision, problem or fact (near-duplicates are refused); "
    "session_start for due reminders and the last handoff."
)


class Client(Protocol):
    def call(self, method: str, params: dict[str, Any] | None = None) -> Any: ...

    def close(self) -> None: ...


class Backend:
    """One client at a time, used by one call at a time (neither client is thread-safe).

    A socket that drops is reconnected once per call (the daemon restarted); an idle client is
    closed by ``release_idle``, so an in-process index does not hold the writer lock, and a
    daemon started later can take over, while the server waits for its next call.
    """

    def __init__(self, connect: Callable[[], Client], idle_seconds: float = 30.0) -> None:
        self._connect = connect
        self._idle = idle_seconds
        self._client: Client | None = None
        self._lock = threading.Lock()
        self._last = time.monotonic()

    def call(self, method: str, params: dict[str, Any]) -> Any:
        with self._lock:
            self._last = time.monotonic()
            try:
                return self._current().call(method, params)
            except DaemonUnreachable:
                self._drop()
                return self._current().call(method, params)
            finally:
                self._last = time.monotonic()

    def release_idle(self) -> None:
        with self._lock:
            if self._client is not None and time.monotonic() - self._last >= self._idle:
                self._drop()

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _current(self) -> Client:
        if self._client is None:
            self._client = self._connect()
        return self._client

    def _drop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()


class _RawArguments(ArgModelBase):
    """Hands the tool's arguments through as sent: the registry validates them, so the MCP
    transport reports bad input exactly as the socket does."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return dict(self.__pydantic_extra__ or {})


def tool_name(method: str) -> str:
    return method.replace(".", "_")


def build_server(registry: Registry, backend: Backend, *, name: str = "sidecar") -> MCPServer[Any]:
    tools = [_tool(m, backend) for m in registry]

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_reaper, backend)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
                await anyio.to_thread.run_sync(backend.close)

    return MCPServer(name, instructions=INSTRUCTIONS, tools=tools, lifespan=lifespan,
                     log_level="WARNING")  # fmt: skip


async def _reaper(backend: Backend) -> None:
    while True:
        await anyio.sleep(5)
        await anyio.to_thread.run_sync(backend.release_idle)


def _tool(method: Method, backend: Backend) -> Tool:
    async def run(**arguments: Any) -> CallToolResult:
        try:
            result = await anyio.to_thread.run_sync(backend.call, method.name, arguments)
        except SidecarError as exc:
            text = json.dumps({"error": exc.to_dict()}, ensure_ascii=False)
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        text = json.dumps(result, ensure_ascii=False, indent=1)
        structured = result if isinstance(result, dict) else None
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=structured)  # fmt: skip

    schema = method.params.model_json_schema()
    schema.pop("title", None)
    return Tool(
        fn=run,
        name=tool_name(method.name),
        title=method.name,
        description=f"{method.summary} (sidecar RPC method {method.name})",
        parameters=schema,
        fn_metadata=FuncMetadata(arg_model=_RawArguments),
        is_async=True,
        context_kwarg=None,
        annotations=ToolAnnotations(read_only_hint=method.read_only,
                                    destructive_hint=False if not method.read_only else None),
    )  # fmt: skip
