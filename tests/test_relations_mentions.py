"""Unlinked mentions: a note's title, file name or alias named in prose without a link."""

from __future__ import annotations

from pathlib import Path

from sidecar.api import build_registry
from sidecar.core.mentions import find_mentions, name_pattern, names_for
from sidecar.embed import TinyEmbedder
from sidecar.services.context import Services
from tests.conftest import VaultFactory

VAULT = {
    "services/Auth Service.md": "---\naliases: [auth, Login API]\n---\n# Auth Service\n\nTokens.\n",
    "Auth.md": "# Auth\n\nA different, shorter note.\n",
    "Ops.md": (
        "---\ntitle: Ops\nowner: Auth Service\n---\n"  # frontmatter is not prose
        "# Ops\n\n"
        "Restart the auth service first, then [[Auth Service]] checks.\n"  # one unlinked
        "The [login api](services/Auth%20Service.md) is linked; `Auth Service` is code.\n"
        "\n```\nAuth Service in a fence\n```\n\n"
        "- Our Login API, again unlinked\n"
        "<!-- Auth Service in a comment -->\n"
        "Authentication services are not a mention.\n"
    ),
    "Notes.md": "# Notes\n\nNothing about it here.\n",
}


def test_mentions_in_prose_only_with_line_and_text(
    make_vault: VaultFactory, tmp_path: Path
) -> None:
    s = Services.open(make_vault(dict(VAULT)), tmp_path / "i", embedder=TinyEmbedder())
    s.reindex()
    try:
        out = build_registry().call(s, "note.mentions", {"note": "services/Auth Service.md"})
    finally:
        s.close()
    assert out["path"] == "services/Auth Service.md"
    assert out["names"] == ["Auth Service", "Login API", "auth"]
    got = [(m["source"], m["line"], m["name"]) for m in out["mentions"]]
    assert got == [("Ops.md", 7, "auth service"), ("Ops.md", 14, "Login API")]
    first = out["mentions"][0]
    assert first["text"].startswith("Restart the auth service first")
    assert first["column"] == 12 and first["links_elsewhere"] is True


def test_names_and_pattern_rules() -> None:
    assert names_for("Go", "Go", ["golang", "Go lang"]) == ["Go lang", "golang"]  # >= 3 chars
    pattern = name_pattern(["Redis Cluster", "Redis"])
    assert pattern is not None
    text = "# T\n\nScale the redis cluster; Redis alone; RedisInsight is a tool.\n"
    assert [m.name for m in find_mentions(text, pattern)] == ["redis cluster", "Redis"]
    assert name_pattern([]) is None
