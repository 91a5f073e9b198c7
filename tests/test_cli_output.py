"""Output a newcomer can trust (issue 25): a printed time covers the whole wait with its stages
apart, progress bars name their stage and show rate and time left, and a search run while the
vault is still being embedded says its semantic leg is partial."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.api import build_registry
from sidecar.cli import graph_cmd, output
from sidecar.embed.tiny import TinyEmbedder
from sidecar.services.context import Services
from tests.conftest import VaultFactory

NOTES = {f"Note {i}.md": f"# Note {i}\n\nAlpha beta gamma, paragraph {i}.\n" for i in range(6)}


def test_index_time_covers_the_whole_wait_with_stages_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """dendron-site printed "in 1.02 s" after 1 min 43 s: the time left out loading the model
    and embedding. The printed time now runs from the command's start."""
    import time

    monkeypatch.setattr(output, "STARTED", time.monotonic() - 103.0, raising=False)
    r = {"notes": 1013, "chunks": 5832, "embedded": 5832, "edges": 4000, "changed": 1013,
         "deleted": 0, "renamed": 0, "seconds": 101.0, "links": {},
         "stages": {"parse": 1.02, "embed": 99.98}}  # fmt: skip
    first = output.fmt_index(r).splitlines()[0]
    assert first.endswith(" in 1 min 43 s (parse 1.0 s, embed 1 min 40 s, start-up 2.0 s)")


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_index_json_gives_each_stage(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(text, "utf-8")
    env = {**os.environ, "SIDECAR_EMBED_MODEL": "tiny", "XDG_DATA_HOME": str(tmp_path / "d")}
    r = subprocess.run([sys.executable, "-m", "sidecar", "index", "--vault", str(vault), "--json"],
                       capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert set(report["stages"]) == {"parse", "embed"} and report["embedded"] == 6
    assert report["seconds"] >= sum(report["stages"].values()) - 0.01


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_bar_names_its_stage_with_rate_and_time_left() -> None:
    from sidecar.cli.progress import StageBar  # new with issue 25: the old bar said "indexing"

    stream, clock = io.StringIO(), Clock()
    bar = StageBar("embed", stream, clock)
    bar(0, 1000)
    clock.now += 10.0
    bar(400, 1000)
    clock.now += 15.0
    bar(1000, 1000)
    drawn = [part.replace("\x1b[K", "") for part in stream.getvalue().split("\r") if part]
    assert drawn[1] == "embed [#########...............] 400/1000 chunks  40/s  0:15 left"
    assert drawn[2] == "embed [########################] 1000/1000 chunks in 0:25  40/s\n"
    assert StageBar("parse", stream, clock).unit == "notes"


def test_no_bars_when_stderr_is_not_a_terminal() -> None:
    from sidecar.cli.progress import bars_for

    assert bars_for(io.StringIO()) is None


@pytest.fixture
def cold(make_vault: VaultFactory, tmp_path: Path) -> Iterator[Services]:
    """An index whose chunks are only partly embedded, as while the daemon's cold embedding
    runs."""
    s = Services.open(make_vault(dict(NOTES)), tmp_path / "idx", embedder=TinyEmbedder())
    s.reindex()
    batch = s.embed_stage.compute(2)
    assert batch is not None
    s.embed_stage.commit(batch)
    yield s
    s.close()


def test_search_says_when_the_semantic_leg_is_partial(cold: Services) -> None:
    registry = build_registry()
    out = registry.call(cold, "search", {"query": "alpha beta"})
    assert out["semantic_coverage"] == {"embedded": 2, "chunks": 6}
    assert graph_cmd.fmt_search(out).splitlines()[0] == (
        "note: semantic results cover 2 of 6 chunks so far (the rest are still being embedded; "
        "`sidecar status` shows progress); word matches cover every note"
    )
    assert "semantic_coverage" not in registry.call(
        cold, "search", {"query": "alpha", "mode": "lexical"}
    )
    cold.embed_stage.run()
    assert "semantic_coverage" not in registry.call(cold, "search", {"query": "alpha beta"})
