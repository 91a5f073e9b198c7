"""Imports point one way: errors/config -> core -> store/embed -> services -> api -> transports
-> daemon/cli. A module may import its own layer and any layer to its left, never to its right."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "sidecar"
LAYERS = {
    "errors": 0, "config": 0, "profiling": 0, "logs": 0, "core": 1, "store": 2, "embed": 2, "services": 3, "api": 4,
    "transports": 5, "lsp": 5, "daemon": 6, "cli": 6,
}  # fmt: skip


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "sidecar" or len(parts) < 2:
        return None
    return LAYERS.get(parts[1])


def test_imports_point_one_way() -> None:
    problems = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        here = layer_of(".".join(rel.parts))
        if here is None:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                there = layer_of(name)
                if there is not None and there > here:
                    problems.append(f"{rel} imports {name}")
    assert problems == []


def test_core_does_no_io() -> None:
    banned = {"os", "pathlib", "lancedb", "onnxruntime", "socket", "time", "subprocess", "random"}
    for path in (PACKAGE / "core").rglob("*.py"):
        tree = ast.parse(path.read_text("utf-8"))
        imported = {
            a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
        } | {
            n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
        }  # fmt: skip
        assert not (imported & banned), f"{path.name} imports {imported & banned}"
