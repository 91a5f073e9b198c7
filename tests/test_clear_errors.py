"""Issue 24's minor items: each a clear error instead of -32603 (an uncaught exception)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sidecar.api import build_registry
from sidecar.embed import TinyEmbedder
from sidecar.errors import NoteNotFound, SidecarError
from sidecar.services.context import Services

REGISTRY = build_registry()


@pytest.fixture
def services(tmp_path: Path) -> Services:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "n.md").write_text("# n\n\n[[Other]]\n", "utf-8")
    s = Services.open(vault, tmp_path / "d", embedder=TinyEmbedder(64))
    s.reindex()
    return s


@pytest.mark.parametrize("method", ["note.backlinks", "note.links"])
def test_a_note_name_over_255_bytes_is_not_found_and_names_no_folder(
    services: Services, method: str
) -> None:
    """It was ENAMETOOLONG, with the daemon's working folder in the message."""
    with pytest.raises(NoteNotFound) as err:
        REGISTRY.call(services, method, {"note": "x" * 300})
    assert os.getcwd() not in err.value.message
    services.close()


def test_reindexing_a_path_that_is_now_a_folder(services: Services) -> None:
    (services.vault.root / "n.md").unlink()
    (services.vault.root / "n.md").mkdir()  # was IsADirectoryError from os.fdopen
    report = REGISTRY.call(services, "index.reindex", {"paths": ["n.md"]})
    assert "n.md" in report["deleted_paths"] or any(
        f["path"] == "n.md" for f in services.status()["failed"]
    ), report
    services.close()


@pytest.mark.parametrize(
    ("method", "params"),
    [("reminders.due", {"within": 1e300}), ("memory.write", {"title": "t", "ttl": 1e300}),
     ("memory.write", {"title": "t", "due_in": 1e15})],
)  # fmt: skip
def test_durations_past_the_calendar_are_invalid_params(
    services: Services, method: str, params: dict[str, object]
) -> None:
    with pytest.raises(SidecarError) as err:
        REGISTRY.call(services, method, params)
    assert err.value.code == -32602, err.value.message
    services.close()


def assert_opening_removes(vault: Path, data: Path, ours: list[Path], theirs: list[Path]) -> None:
    """Half-written files at each path; opening the services removes ours and keeps theirs."""
    for path in ours + theirs:
        path.write_text("half-written\n", "utf-8")
    Services.open(vault, data, embedder=TinyEmbedder(64)).close()
    assert [p for p in ours if p.exists()] == []
    assert all(p.exists() for p in theirs)


def test_stray_temp_files_in_the_memory_folder_are_removed_at_the_next_start(
    tmp_path: Path,
) -> None:
    """A kill -9 between writing a temp file and renaming it leaves the temp file; only our
    own names go (``.NAME.sidecar-XXXXXXXX.tmp``, and mkstemp's from before)."""
    vault = tmp_path / "v"
    folder = vault / ".sidecar" / "memory"
    (folder / "archive").mkdir(parents=True)
    (folder / ".history" / "e1").mkdir(parents=True)
    ours = [folder / ".e1.md.sidecar-1a2b3c4d.tmp", folder / ".e2.md.k3j_9x2a.tmp",
            folder / "archive" / ".e3.md.sidecar-00ff00ff.tmp",
            folder / ".history" / "e1" / ".20261201T000000Z.md.sidecar-abcdef01.tmp"]  # fmt: skip
    theirs = [folder / "draft.tmp", folder / ".draft.tmp", folder / "e9.md.sidecar-1a2b3c4d"]
    assert_opening_removes(vault, tmp_path / "d", ours, theirs)


def test_stray_temp_files_among_the_notes_are_removed_at_the_next_start(tmp_path: Path) -> None:
    """The same for a note written by a command (rename, lint --fix): in the vault only our
    marked names go, since mkstemp's shape may be another app's temp file."""
    vault = tmp_path / "v"
    (vault / "My Folder (2)").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    (vault / "n.md").write_text("# n\n", "utf-8")
    ours = [vault / ".n.md.sidecar-1a2b3c4d.tmp",
            vault / "My Folder (2)" / ".Café #1.md.sidecar-00ff00ff.tmp"]  # fmt: skip
    theirs = [vault / ".n.md.k3j_9x2a.tmp", vault / "n.md.sidecar-1a2b3c4d.tmp",
              vault / ".obsidian" / ".x.md.sidecar-1a2b3c4d.tmp", vault / ".draft.tmp"]  # fmt: skip
    assert_opening_removes(vault, tmp_path / "d", ours, theirs)
    assert (vault / "n.md").read_text("utf-8") == "# n\n"


@pytest.mark.e2e  # starts the daemon
@pytest.mark.parametrize("name", [".sidecarignore", ".obsidian/app.json"])
def test_a_fifo_where_a_settings_file_belongs_does_not_hang_the_start(
    tmp_path: Path, name: str
) -> None:
    """open() on a FIFO blocks until a writer comes: the start hung for good."""
    vault = tmp_path / "v"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "n.md").write_text("# n\n", "utf-8")
    os.mkfifo(vault / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDECAR_")}
    env |= {"SIDECAR_EMBED_MODEL": "tiny", "SIDECAR_DATA_DIR": str(tmp_path / "d"),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg")}  # fmt: skip
    run = subprocess.run([sys.executable, "-m", "sidecar", "index", "--vault", str(vault)],
                         env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("method", ["note.check", "note.backlinks"])
def test_a_lone_surrogate_in_a_path_is_a_clear_error(services: Services, method: str) -> None:
    """JSON's \\udc80 escape decodes to a lone surrogate, which no file name can hold: it was
    -32603 from the UTF-8 encoder deep in the handler."""
    params = {"path": "a\udc80.md", "note": "a\udc80", "text": "# a\n"}
    model = REGISTRY.get(method).params
    with pytest.raises(SidecarError) as err:
        REGISTRY.call(services, method, {k: v for k, v in params.items()
                                          if k in model.model_fields})  # fmt: skip
    assert err.value.code == -32602 and "surrogate" in err.value.message
    services.close()
