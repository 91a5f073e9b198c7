"""The relation commands as a user runs them: ``sidecar graph traverse/current/export``,
``sidecar mentions``, ``sidecar edges`` and the graph options of ``sidecar search``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_VAULT
from tests.test_cli import sidecar

pytestmark = pytest.mark.e2e  # starts processes: the daemon, the CLI, editors


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(EXAMPLE_VAULT, root)
    (root / "Notes.md").write_text("# Notes\n\nAsk Alice; the session store holds sessions.\n")
    return root


def test_traverse_and_current_json_and_text(vault: Path) -> None:
    r = sidecar("graph", "traverse", "ADR-5 Sessions in Postgres", "--relation", "superseded_by",
                "--depth", "3", "--vault", str(vault), "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [n["path"] for n in doc["nodes"]] == [
        "decisions/ADR-6 Sessions in Memcached.md", "decisions/ADR-7 Session storage.md"]  # fmt: skip
    r = sidecar("graph", "current", "ADR-5 Sessions in Postgres", "--vault", str(vault))
    assert r.returncode == 0 and "current: decisions/ADR-7 Session storage.md" in r.stdout
    bad = sidecar("graph", "traverse", "Welcome", "-r", "x", "--depth", "9", "--vault", str(vault))
    assert bad.returncode == 2


def test_mentions_edges_and_html_export(vault: Path, tmp_path: Path) -> None:
    r = sidecar("mentions", "Session Store", "--vault", str(vault), "--json")
    assert r.returncode == 0, r.stderr
    assert [(m["source"], m["line"]) for m in json.loads(r.stdout)["mentions"]] == [("Notes.md", 3)]
    r = sidecar("edges", "Session Store", "--vault", str(vault), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["edges"] and doc["clusters"] and all("strength" in e for e in doc["edges"])
    page = tmp_path / "out" / "graph.html"
    page.parent.mkdir()
    r = sidecar("graph", "export", "--format", "html", "-o", str(page), "--vault", str(vault))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"wrote {page}") and "<canvas" in page.read_text("utf-8")
    r = sidecar("graph", "export", "--vault", str(vault))
    assert {"nodes", "edges"} <= set(json.loads(r.stdout))


def test_search_graph_options(vault: Path) -> None:
    r = sidecar("search", "sessions postgres", "--lexical", "--boost-links", "--hops", "2",
                "--expand", "1", "--limit", "3", "--vault", str(vault), "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["results"][0]["path"] == "decisions/ADR-7 Session storage.md"
    assert doc["graph_context"] and all(c["hops"] == 1 for c in doc["graph_context"])
    r = sidecar("search", "sessions postgres", "--lexical", "--include-superseded",
                "--vault", str(vault))  # fmt: skip
    first = r.stdout.splitlines()[0]
    assert (
        "ADR-5 Sessions in Postgres.md" in first
        and "(superseded; current: decisions/ADR-7" in first
    )
    assert sidecar("search", "x", "--hops", "4", "--vault", str(vault)).returncode == 2
