"""``sidecar --profile DIR`` / ``SIDECAR_PROFILE``: profiles of the real stages, on request only."""

from __future__ import annotations

import pstats
from pathlib import Path

import pytest

from tests.test_cli import sidecar, vault  # noqa: F401  (the fixture)

pytestmark = pytest.mark.e2e  # starts processes: the daemon, the CLI, editors


def test_profile_flag_records_indexing_and_search(vault: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "prof"
    assert (
        sidecar("--profile", str(out), "index", "--no-embed", "--vault", str(vault)).returncode == 0
    )
    found = sidecar(
        "--profile", str(out), "search", "redis", "--mode", "lexical", "--vault", str(vault)
    )
    assert found.returncode == 0, found.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "index.prof",
        "index.txt",
        "search.prof",
        "search.txt",
    ]
    index = pstats.Stats(str(out / "index.prof"))
    functions = {name for (_file, _line, name) in index.stats}  # type: ignore[attr-defined]
    assert {"parse_note", "resolve_links"} <= functions
    assert "1 profiled calls" in (out / "search.txt").read_text()
    # The search's process brought the index up to date too: added to the first run's profile.
    assert "2 profiled calls" in (out / "index.txt").read_text()
    assert "search.py" in (out / "search.txt").read_text()


def test_without_the_switch_nothing_is_written(vault: Path, tmp_path: Path) -> None:  # noqa: F811
    env = {"SIDECAR_PROFILE": ""}
    assert sidecar("index", "--no-embed", "--vault", str(vault), env=env).returncode == 0
    assert not list(tmp_path.rglob("*.prof"))
