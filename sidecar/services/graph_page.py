"""The graph page's files: our template and script, and the vendored d3-force (ISC licence,
``sidecar/assets/graph/vendor/``), read once from the package and put together by
``core.graph_html.render_html``."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from typing import Any

from sidecar.core.graph_html import render_html

VENDOR = ("d3-dispatch", "d3-quadtree", "d3-timer", "d3-force")  # each needs the ones before it


@functools.cache
def assets() -> dict[str, str]:
    root = resources.files("sidecar") / "assets" / "graph"
    vendor = root / "vendor"
    licence = (vendor / "LICENSE-d3").read_text("utf-8").strip()
    parts = [f"/* d3-force and its parts ({', '.join(VENDOR)}), from npm:\n{licence}\n*/"]
    for name in VENDOR:
        text = (vendor / f"{name}.min.js").read_text("utf-8")
        head, _, body = text.partition("\n")  # "// https://d3js.org/d3-force/ v3.0.1 Copyright ..."
        parts.append("// " + head.removeprefix("// ").replace("https://", "") + "\n" + body)
    return {"page": (root / "page.html").read_text("utf-8"),
            "script": (root / "graph.js").read_text("utf-8"), "vendor": "\n".join(parts)}  # fmt: skip


def graph_page(data: Mapping[str, Any], title: str = "Vault graph") -> str:
    return render_html(data, title, assets())
