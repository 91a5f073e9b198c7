"""One registry of methods; every transport (socket, CLI, MCP, docs) reads it."""

from sidecar.api.registry import Method, Registry, build_registry

__all__ = ["Method", "Registry", "build_registry"]
