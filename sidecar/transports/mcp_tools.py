"""The MCP tools ``sidecar mcp`` serves, generated from the registry into ``mcp_tools.json``.

Two sets. **agent** (the default): the methods whose registry entry carries an ``Agent`` spec,
at most ~15 task-shaped tools (search, read_note, note_context, recall, memory_write, ...) with
descriptions written for a model, human titles, only the parameters a model needs, defaults
that keep answers small, and all four annotations (``readOnlyHint``, ``destructiveHint``,
``idempotentHint``, ``openWorldHint: false``). **all** (``sidecar mcp --all``): those plus every
other method under its RPC name with ``.`` turned into ``_`` (``graph.export`` ->
``graph_export``), for power users; editor and admin methods stay out of the default set.

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
Tool = dict[str, Any]  # {"method", "defaults", "paged" (by the server), "definition": MCP Tool}
CURSOR = {"type": "string", "description": "next_cursor of the previous page."}


def tool_name(method: str) -> str:
    return method.replace(".", "_")


def load(all_methods: bool = False) -> list[Tool]:
    tools: list[Tool] = json.loads(MANIFEST.read_text("utf-8"))["all" if all_methods else "agent"]
    return tools


def generate(registry: Registry) -> str:
    """The file's text: the agent set, then every method, in the registry's order."""
    agent = [_agent_tool(m) for m in registry if m.agent is not None]
    others = [_generic_tool(m) for m in registry if m.agent is None]
    doc = {"generated_by": "python -m sidecar.cli.docgen; do not edit by hand",
           "agent": agent, "all": agent + others}  # fmt: skip
    return json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def _agent_tool(method: Method) -> Tool:
    spec = method.agent
    assert spec is not None
    keep = spec.params or tuple(method.params.model_fields)
    schema = _schema(method, keep, dict(spec.defaults))
    idempotent = method.read_only if spec.idempotent is None else spec.idempotent
    definition = {
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "inputSchema": schema,
        "annotations": _annotations(method.read_only, spec.destructive, idempotent),
    }
    return {"method": method.name, "defaults": dict(spec.defaults), "paged": False,
            "definition": definition}  # fmt: skip


def _generic_tool(method: Method) -> Tool:
    schema = _schema(method, None, {})
    paged = "cursor" not in schema["properties"]
    if paged:  # the server pages an answer too big for one reply
        schema["properties"]["cursor"] = dict(CURSOR)
    title = method.name.replace(".", ": ").replace("_", " ").capitalize()
    definition = {
        "name": tool_name(method.name),
        "title": title,
        "description": method.summary,
        "inputSchema": schema,
        "annotations": _annotations(method.read_only, not method.read_only, method.read_only),
    }
    return {"method": method.name, "defaults": {}, "paged": paged, "definition": definition}


def _annotations(read_only: bool, destructive: bool, idempotent: bool) -> dict[str, Any]:
    return {"readOnlyHint": read_only, "destructiveHint": destructive,
            "idempotentHint": idempotent, "openWorldHint": False}  # fmt: skip


def _schema(
    method: Method, keep: tuple[str, ...] | None, defaults: dict[str, Any]
) -> dict[str, Any]:
    schema = method.params.model_json_schema()
    for key in ("title", "description", "additionalProperties"):  # extras are refused anyway
        schema.pop(key, None)
    props: dict[str, Any] = schema.get("properties", {})
    if keep is not None:
        props = {k: props[k] for k in keep if k in props}
        schema["required"] = [r for r in schema.get("required", []) if r in props]
    for name, prop in props.items():
        _drop_titles(prop)
        _plain(prop)
        if keep is not None:  # an agent's tool: only the defaults it sets, to stay small
            prop.pop("default", None)
        if name in defaults:
            prop["default"] = defaults[name]
    schema["properties"] = props
    if not schema.get("required"):
        schema.pop("required", None)
    for definition in schema.get("$defs", {}).values():
        _drop_titles(definition)
    return schema


def _plain(prop: dict[str, Any]) -> None:
    """``anyOf [X, null]`` with ``default: null`` is just an optional X; a default of false,
    "" or null says nothing a model needs (omitting the argument does the same)."""
    options = prop.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options and len(options) == 2:
        (other,) = [o for o in options if o != {"type": "null"}]
        del prop["anyOf"]
        prop.update(other)
    for bound in (
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
    ):  # the registry checks them, and says so
        prop.pop(bound, None)
    if "default" in prop and (prop["default"] is None or prop["default"] is False
                              or prop["default"] == ""):  # fmt: skip
        del prop["default"]


def _drop_titles(node: Any) -> None:
    """Pydantic titles every field ("Note", "Max Chars"): noise a model reads for every tool."""
    if isinstance(node, dict):
        node.pop("title", None)
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):  # names, not keywords
                for field_schema in value.values():
                    _drop_titles(field_schema)
            else:
                _drop_titles(value)
    elif isinstance(node, list):
        for value in node:
            _drop_titles(value)
