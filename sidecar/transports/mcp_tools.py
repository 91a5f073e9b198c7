"""The MCP tools ``sidecar mcp`` serves, generated from the registry into ``mcp_tools.json``.

Each tool's name is the method's with ``.`` turned into ``_`` (``memory.write`` ->
``memory_write``: clients such as Claude's API accept only ``[A-Za-z0-9_-]``), its description is
the method's summary, its input schema the params model's JSON schema, and read-only methods
carry ``readOnlyHint``.

Why a generated file and not the registry at start-up: the params models are pydantic classes
in modules that import the services (the store, the model), a second or more of imports, while
the server needs only their JSON. ``python -m sidecar.cli.docgen`` writes the file with the other
generated references, and a test fails when it is stale.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sidecar.api.registry import Method, Registry

__all__ = ["MANIFEST", "Tool", "generate", "load", "tool_name"]

MANIFEST = Path(__file__).with_name("mcp_tools.json")
Tool = dict[str, Any]  # {"method": rpc method name, "definition": the MCP Tool object}


def tool_name(method: str) -> str:
    return method.replace(".", "_")


def load() -> list[Tool]:
    tools: list[Tool] = json.loads(MANIFEST.read_text("utf-8"))["tools"]
    return tools


def generate(registry: Registry) -> str:
    """The file's text: every method's tool, in the registry's order."""
    tools = [{"method": m.name, "definition": _definition(m)} for m in registry]
    doc = {"generated_by": "python -m sidecar.cli.docgen; do not edit by hand", "tools": tools}
    return json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def _definition(method: Method) -> dict[str, Any]:
    schema = method.params.model_json_schema()
    schema.pop("title", None)
    annotations: dict[str, Any] = {"readOnlyHint": method.read_only}
    if not method.read_only:
        annotations["destructiveHint"] = False
    return {
        "name": tool_name(method.name),
        "title": method.name,
        "description": f"{method.summary} (sidecar RPC method {method.name})",
        "inputSchema": schema,
        "annotations": annotations,
    }
