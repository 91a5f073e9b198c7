"""``sidecar mcp`` as Claude Code runs it: a subprocess speaking MCP over stdio, driven by the SDK's
own client, talking to the real daemon (and, without one, to the index in-process)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from sidecar.api import build_registry
from sidecar.transports.mcp_server import tool_name
from tests.conftest import EXAMPLE_VAULT
from tests.daemon_harness import daemon_env, running


def server(vault: Path, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, env=env,
                                 args=["-m", "sidecar", "mcp", "--vault", str(vault)])  # fmt: skip


async def session(params: StdioServerParameters) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with Client(params, read_timeout_seconds=60) as client:
        tools = (await client.list_tools()).tools
        out["tools"] = {t.name: t for t in tools}
        found = await client.call_tool("search", {"query": "session storage", "limit": 3})
        out["search"] = found.structured_content
        wrote = await client.call_tool("memory_write", {
            "id": "mcp-entry", "title": "Written over MCP", "entry_type": "decision",
            "content": "Agents write memory through the daemon.", "agent": "test"})  # fmt: skip
        out["write"] = wrote.structured_content
        again = await client.call_tool("memory_write", {"title": "Written over MCP",
            "content": "Agents write memory through the daemon.", "entry_type": "decision"})  # fmt: skip
        out["duplicate"] = (again.is_error, json.loads(again.content[0].text))  # type: ignore[union-attr]
        bad = await client.call_tool("memory_get", {"id": 7})
        out["bad"] = (bad.is_error, json.loads(bad.content[0].text))  # type: ignore[union-attr]
    return out


def test_mcp_tools_are_the_registry_and_reach_the_daemon() -> None:
    with running(EXAMPLE_VAULT) as d:
        out = anyio.run(session, server(d.vault, d.env))
        with d.client() as c:
            entry = c.call("memory.get", {"id": "mcp-entry"})["entry"]
    registry = list(build_registry())
    assert set(out["tools"]) == {tool_name(m.name) for m in registry}
    write = out["tools"]["memory_write"]
    assert write.input_schema["properties"]["entry_type"]["enum"][0] == "topic"
    assert write.annotations is not None and write.annotations.read_only_hint is False
    assert out["tools"]["search"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert out["search"]["results"][0]["path"].startswith(("decisions/", "services/"))
    assert out["write"]["entry"]["id"] == "mcp-entry" and out["write"]["created"]
    is_error, body = out["duplicate"]
    assert is_error and body["error"]["data"]["duplicate_of"] == "mcp-entry"
    assert out["bad"][0] and out["bad"][1]["error"]["code"] == -32602
    assert (entry["title"], entry["agent"]) == ("Written over MCP", "test")


def test_mcp_without_a_daemon_serves_in_process(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    env = daemon_env(tmp_path)

    async def run() -> Any:
        async with Client(server(vault, env), read_timeout_seconds=120) as client:
            r = await client.call_tool("memory_write", {"id": "local", "title": "No daemon here"})
            listed = await client.call_tool("memory_list", {})
            return r.structured_content, listed.structured_content

    wrote, listed = anyio.run(run)
    assert wrote["entry"]["id"] == "local"
    assert [e["id"] for e in listed["entries"]] == ["local"]
    assert (vault / ".sidecar" / "memory" / "local.md").is_file()
