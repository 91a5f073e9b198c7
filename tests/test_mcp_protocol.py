"""The MCP server's own protocol handling, message by message, without a daemon: the handshake
every client version gets, the errors a confused client gets, and a stdout no library can
corrupt. (``test_mcp.py`` drives it with the SDK's client against the real daemon.)"""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
from typing import Any

import pytest

from sidecar.errors import NoteNotFound
from sidecar.transports import mcp_tools
from sidecar.transports.mcp_server import PROTOCOL_VERSIONS, Backend, McpServer


class FakeClient:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.calls: list[tuple[str, dict[str, Any] | None]] = []

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.calls.append((method, params))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def close(self) -> None:
        pass


def exchange(answer: Any, *messages: dict[str, Any] | bytes) -> tuple[dict[Any, Any], FakeClient]:
    client = FakeClient(answer)
    server = McpServer(mcp_tools.load(), Backend(lambda: client))
    lines = [m if isinstance(m, bytes) else json.dumps(m).encode() for m in messages]
    stdin = io.BytesIO(b"".join(line + b"\n" for line in lines))
    stdout = io.BytesIO()
    asyncio.run(server.serve(stdin, stdout))
    replies = [json.loads(line) for line in stdout.getvalue().splitlines()]
    return {r.get("id"): r for r in replies}, client


def request(ident: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return message


@pytest.mark.parametrize("asked", [*PROTOCOL_VERSIONS, "2099-01-01"])
def test_initialize_agrees_on_a_version(asked: str) -> None:
    replies, _ = exchange({}, request(1, "initialize", {
        "protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))  # fmt: skip
    result = replies[1]["result"]
    assert result["protocolVersion"] == (asked if asked in PROTOCOL_VERSIONS else "2025-11-25")
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "sidecar" and result["serverInfo"]["version"]


def test_notifications_get_no_answer_and_unknown_methods_an_error() -> None:
    replies, _ = exchange(
        {},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        request(2, "ping"),
        request(3, "server/discover", {}),  # the SDK's probe: "not found" makes it initialize
        request(4, "resources/list"),
    )
    assert set(replies) == {2, 3, 4}
    assert replies[2]["result"] == {}
    assert replies[3]["error"]["code"] == replies[4]["error"]["code"] == -32601


def test_tools_list_is_the_generated_file() -> None:
    replies, _ = exchange({}, request(1, "tools/list"))
    tools = replies[1]["result"]["tools"]
    assert tools == [t["definition"] for t in mcp_tools.load()]
    assert {"read_note", "search", "memory_write"} <= {t["name"] for t in tools}


def test_the_agents_toolset_is_small_and_written_for_a_model() -> None:
    """Issue 22: 38 tools and 23 kB before; titles were dotted names, 37 % of the descriptions
    an RPC suffix, 13 parameters undescribed."""
    replies, _ = exchange({}, request(1, "tools/list"))
    tools = replies[1]["result"]["tools"]
    wire = json.dumps(replies[1]["result"], separators=(",", ":"), ensure_ascii=False)
    assert len(tools) <= 15 and len(wire.encode()) <= 10_000
    for t in tools:
        assert "RPC" not in t["description"] and "." not in t["title"], t["name"]
        assert len(t["description"]) <= 200, t["name"]
        assert (
            set(t["annotations"])
            == {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
            and not t["annotations"]["openWorldHint"]
        )
        for name, prop in t["inputSchema"]["properties"].items():
            assert prop.get("description"), f"{t['name']}.{name}"
    writes = {t["name"] for t in tools if not t["annotations"]["readOnlyHint"]}
    assert writes == {"write_note", "edit_note", "move_note", "memory_write", "memory_update"}
    everything = {t["definition"]["name"] for t in mcp_tools.load(all_methods=True)}
    assert {"graph_export", "vault_catalog", "index_reindex"} <= everything
    assert not {"graph_export", "vault_catalog", "index_reindex"} & {t["name"] for t in tools}


def test_a_tool_call_goes_to_its_method_with_the_arguments_unchanged() -> None:
    replies, client = exchange({"backlinks": []}, request(1, "tools/call", {
        "name": "note_context", "arguments": {"note": "Auth Service"}}))  # fmt: skip
    assert client.calls == [("note.context", {"note": "Auth Service"})]
    assert replies[1]["result"]["structuredContent"] == {"backlinks": []}
    assert "isError" not in replies[1]["result"]


def test_a_failed_call_is_a_tool_error_and_the_session_goes_on() -> None:
    replies, _ = exchange(NoteNotFound("no note 'x'"), request(1, "tools/call", {
        "name": "note_context", "arguments": {"note": "x"}}), request(2, "ping"))  # fmt: skip
    result = replies[1]["result"]
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"])["error"]["code"] == -32002
    bug, _ = exchange(ZeroDivisionError("oops"), request(1, "tools/call", {
        "name": "note_context", "arguments": {"note": "x"}}))  # fmt: skip
    assert bug[1]["result"]["isError"] and "oops" in bug[1]["result"]["content"][0]["text"]
    assert replies[2]["result"] == {}


def test_unknown_tools_and_bad_arguments_are_invalid_params() -> None:
    replies, client = exchange(
        {},
        request(1, "tools/call", {"name": "no_such_tool", "arguments": {}}),
        request(2, "tools/call", {"name": "search", "arguments": ["q"]}),
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "x"},
        b"not json",
    )
    assert replies[1]["error"]["code"] == replies[2]["error"]["code"] == -32602
    assert replies[3]["error"]["code"] == -32600 and client.calls == []
    assert replies[None]["error"]["code"] == -32700


PRINTING = """
import sys
from sidecar.transports import mcp_tools
from sidecar.transports.mcp_server import Backend, McpServer, run_stdio

class Loud:
    def call(self, method, params=None):
        print("a library printing to stdout")
        return {"ok": True}
    def close(self):
        pass

run_stdio(McpServer(mcp_tools.load(), Backend(lambda: Loud())))
"""


@pytest.mark.e2e
def test_nothing_printed_during_a_call_reaches_the_protocol() -> None:
    message = request(1, "tools/call", {"name": "session_start", "arguments": {}})
    r = subprocess.run([sys.executable, "-c", PRINTING], input=json.dumps(message) + "\n",
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    lines = r.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["result"]["structuredContent"] == {"ok": True}
    assert "a library printing to stdout" in r.stderr
