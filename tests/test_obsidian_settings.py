"""Obsidian's own settings apply: "Excluded files" (``userIgnoreFilters``) are not indexed,
``status`` says what was applied, and a change to ``app.json`` under the daemon reindexes."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from sidecar.store.obsidian import ObsidianSettings
from tests.conftest import corpus
from tests.daemon_harness import running
from tests.test_cli import sidecar


def _kepano_without_templates(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    shutil.copytree(corpus("kepano-obsidian"), vault)
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "app.json").write_text(
        json.dumps({"userIgnoreFilters": ["Templates/"], "attachmentFolderPath": "Attachments"}),
        "utf-8",
    )
    return vault


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_kepano_with_templates_excluded_lints_clean(tmp_path: Path) -> None:
    vault = _kepano_without_templates(tmp_path)
    env = {"SIDECAR_DATA_DIR": str(tmp_path / "data")}
    lint = sidecar("lint", "--vault", str(vault), env=env)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    status = json.loads(sidecar("status", "--json", "--vault", str(vault), env=env).stdout)
    assert not [p for p in status.get("failed", []) if p["path"].startswith("Templates/")]
    assert status["invalid_frontmatter"] == []
    assert status["obsidian"] == {"app_json": ".obsidian/app.json",
                                  "userIgnoreFilters": ["Templates/"],
                                  "attachmentFolderPath": "Attachments", "error": None}  # fmt: skip
    text = sidecar("status", "--vault", str(vault), env=env).stdout
    assert "excluded files: Templates/" in text
    found = json.loads(sidecar("search", "template", "--lexical", "--json", "--limit", "50",
                               "--vault", str(vault), env=env).stdout)["results"]  # fmt: skip
    assert not [r for r in found if r["path"].startswith("Templates/")]


def test_filters_are_prefixes_or_slash_delimited_regexes(tmp_path: Path) -> None:
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "app.json").write_text(
        json.dumps({"userIgnoreFilters": ["Archive", "/\\.draft\\.md$/", "/([/"]}), "utf-8"
    )
    s = ObsidianSettings.load(tmp_path)
    assert s.excludes("Archive/old.md") and s.excludes("Archived.md")  # Obsidian: a prefix
    assert s.excludes("notes/x.draft.md") and not s.excludes("notes/x.md")
    assert s.error is not None and "/([/" in s.error
    (tmp_path / ".obsidian" / "app.json").write_text("{not json", "utf-8")
    assert "not valid JSON" in (ObsidianSettings.load(tmp_path).error or "")
    assert ObsidianSettings.load(tmp_path / "nowhere") == ObsidianSettings()


def _paths(c: Any, query: str) -> set[str]:
    out = c.call("search", {"query": query, "mode": "lexical", "limit": 10})
    return {r["path"] for r in out["results"]}


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_a_change_to_app_json_under_the_daemon_reindexes(tmp_path: Path) -> None:
    source = tmp_path / "vault"
    (source / "Templates").mkdir(parents=True)
    (source / "Templates" / "Daily.md").write_text("# Daily\n\nzebracorn\n", "utf-8")
    (source / "Note.md").write_text("# Note\n\nzebracorn too\n", "utf-8")
    with running(source) as d, d.client() as c:
        assert _paths(c, "zebracorn") == {"Templates/Daily.md", "Note.md"}
        (d.vault / ".obsidian").mkdir()
        (d.vault / ".obsidian" / "app.json").write_text(
            json.dumps({"userIgnoreFilters": ["Templates/"]}), "utf-8"
        )
        deadline = time.monotonic() + 30
        while _paths(c, "zebracorn") != {"Note.md"} and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _paths(c, "zebracorn") == {"Note.md"}
        assert c.call("index.status")["obsidian"]["userIgnoreFilters"] == ["Templates/"]
        (d.vault / ".obsidian" / "app.json").write_text("{}", "utf-8")
        deadline = time.monotonic() + 30
        while len(_paths(c, "zebracorn")) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _paths(c, "zebracorn") == {"Templates/Daily.md", "Note.md"}
