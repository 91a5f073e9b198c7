"""Every note is findable by what it is: its name, aliases and properties form a chunk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sidecar.core.note import parse_note
from tests.conftest import corpus
from tests.test_cli import sidecar


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_blade_runner_is_found_by_its_title_on_kepano(tmp_path: Path) -> None:
    """kepano's References are properties only (40 of 102 notes have no body)."""
    vault = tmp_path / "vault"
    shutil.copytree(corpus("kepano-obsidian"), vault)
    env = {"SIDECAR_DATA_DIR": str(tmp_path / "data")}
    out = sidecar("search", "Blade Runner", "--lexical", "--json", "--vault", str(vault), env=env)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)["results"]
    assert results and results[0]["path"] == "References/Blade Runner.md"
    found = sidecar("search", "Ridley Scott", "--lexical", "--json", "--vault", str(vault), env=env)
    assert json.loads(found.stdout)["results"][0]["path"] == "References/Blade Runner.md"


def test_property_chunk_shows_values_as_a_reader_sees_them() -> None:
    text = (
        '---\naliases: [Replicants]\ncategories:\n  - "[[Movies]]"\ndirector: "[[Ridley Scott|R. Scott]]"\n'
        "cover: https://example.com/x.jpg\nrating: 7\nseen: true\ncssclasses: [wide]\n"
        "updated: 1665502251584\nnested: {a: 1}\n---\n"
    )
    note = parse_note("Movies/Blade Runner.md", text, "0")
    (chunk,) = note.chunks
    assert chunk.text.splitlines() == [
        "aliases: Replicants", "categories: Movies", "director: R. Scott", "rating: 7", "seen: yes",
    ]  # fmt: skip
    assert chunk.embed_text.startswith("Blade Runner\n")
    assert (chunk.start_line, chunk.end_line) == (1, 12)


def test_a_note_with_nothing_but_a_name_is_one_chunk_and_body_notes_get_none_extra() -> None:
    (empty,) = parse_note("Ideas/Empty idea.md", "", "0").chunks
    assert empty.embed_text.startswith("Empty idea")
    body = parse_note("Plain.md", "# Plain\n\nJust text.\n", "0")
    assert [c.text for c in body.chunks] == ["Just text."]
    titled = parse_note("file-name.md", "---\ntitle: Real Title\n---\nBody.\n", "0")
    assert [c.text for c in titled.chunks] == ["Body.", "file-name"]


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_property_links_carry_their_line_and_the_property_as_context(tmp_path: Path) -> None:
    """kepano: ``backlinks Movies`` shows each movie's ``categories:`` item, line and text."""
    vault = tmp_path / "vault"
    shutil.copytree(corpus("kepano-obsidian"), vault)
    env = {"SIDECAR_DATA_DIR": str(tmp_path / "data")}
    out = sidecar("backlinks", "Movies", "--json", "--vault", str(vault), env=env)
    assert out.returncode == 0, out.stderr
    rows = {r["source"]: r for r in json.loads(out.stdout)["backlinks"]}
    blade = rows["References/Blade Runner.md"]
    assert (blade["relation"], blade["line"]) == ("categories", 3)
    assert blade["context"] == 'categories: - "[[Movies]]"'
    lines = (vault / "References" / "Blade Runner.md").read_text("utf-8").splitlines()
    assert lines[blade["line"] - 1] == '  - "[[Movies]]"'
    text = sidecar("backlinks", "Movies", "--vault", str(vault), env=env).stdout
    assert "categories" in text and '"[[Movies]]"' in text


def test_obsidian_publish_flag_is_not_what_a_note_is_about() -> None:
    """``publish`` is Obsidian Publish's switch, like ``cssclasses`` a setting: on
    obsidian-tasks-docs 84 of 103 notes with a body got a chunk of their title and
    'publish: yes' alone, which outranked the body chunks that answer."""
    body = parse_note("Filters.md", "---\npublish: true\n---\n# Filters\n\nSome text.\n", "0")
    assert [c.text for c in body.chunks] == ["Some text."]
    aliased = parse_note("F.md", "---\npublish: true\naliases: [Filter]\n---\nText.\n", "0")
    assert [c.text for c in aliased.chunks] == ["Text.", "aliases: Filter"]
    (empty,) = parse_note("Empty.md", "---\npublish: true\n---\n", "0").chunks
    assert empty.embed_text.startswith("Empty")
