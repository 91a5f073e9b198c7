"""Symlinks a cloned or synced vault can ship: nothing outside the vault is read, written or
deleted through them, in the memory folder, the data dir or ``lint --fix`` (issue 24)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.api import build_registry
from sidecar.embed import TinyEmbedder
from sidecar.errors import SidecarError
from sidecar.services.context import Services

REGISTRY = build_registry()
NOTES = {"n.md": "# n\n", "Old.md": "---\nsuperseded_by: '[[New]]'\n---\n# Old\n",
         "sub/New.md": "# New\n"}  # fmt: skip


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Files a symlink in the vault points at; every test checks they are untouched."""
    out = tmp_path / "outside"
    out.mkdir()
    for name in "abcde":
        (out / f"{name}.md").write_text(f"---\ntitle: outside {name}\n---\n{name}\n", "utf-8")
    return out


def untouched(out: Path) -> dict[str, str]:
    return {p.name: p.read_text("utf-8") for p in sorted(out.iterdir())}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, "utf-8")
    (root / ".sidecar" / "memory").mkdir(parents=True)
    return root


Opener = Callable[[], Services]


@pytest.fixture
def opener(vault: Path, tmp_path: Path) -> Iterator[Opener]:
    opened: list[Services] = []

    def open_() -> Services:
        s = Services.open(vault, tmp_path / "data", embedder=TinyEmbedder(64))
        opened.append(s)
        return s

    yield open_
    for s in opened:
        s.close()


def call(s: Services, method: str, params: dict[str, Any]) -> Any:
    return REGISTRY.call(s, method, params)


# -- the memory folder -------------------------------------------------------------------------


def test_a_symlinked_history_folder_is_not_pruned(vault: Path, outside: Path, opener: Opener):
    """The issue's reproducer: revisions were pruned to 3 ``*.md`` files through the link."""
    before = untouched(outside)
    (vault / ".sidecar/memory/.history").mkdir()
    (vault / ".sidecar/memory/.history/e1").symlink_to(outside)
    s = opener()
    call(s, "memory.write", {"id": "e1", "title": "first fact"})
    with pytest.raises(SidecarError, match="symlink"):
        call(s, "memory.write", {"id": "e1", "title": "second fact about something else"})
    with pytest.raises(SidecarError, match="symlink"):
        call(s, "memory.history", {"id": "e1"})  # nor are the outside files read as revisions
    assert untouched(outside) == before
    assert "first fact" in call(s, "memory.get", {"id": "e1"})["entry"]["title"]


@pytest.mark.e2e  # starts processes (the CLI or the daemon)
def test_the_cli_reproducer_deletes_nothing(vault: Path, outside: Path, tmp_path: Path) -> None:
    """As the issue ran it: two ``sidecar rpc memory.write`` through the command line."""
    before = untouched(outside)
    (vault / ".sidecar/memory/.history").mkdir()
    (vault / ".sidecar/memory/.history/e1").symlink_to(outside)
    env = {**os.environ, "SIDECAR_EMBED_MODEL": "tiny", "SIDECAR_DATA_DIR": str(tmp_path / "d")}
    argv = [sys.executable, "-m", "sidecar", "rpc", "memory.write", "", "--vault", str(vault)]
    runs = []
    for title in ("first fact", "second fact"):
        argv[5] = f'{{"id":"e1","title":"{title}"}}'
        runs.append(subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120))
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[1].returncode == 1 and "symlink" in runs[1].stderr
    # One line of error, after the in-process notice the CLI prints when no daemon serves the vault.
    errors = [ln for ln in runs[1].stderr.splitlines() if "no daemon serves" not in ln]
    assert "Traceback" not in runs[1].stderr and len(errors) == 1, runs[1].stderr
    assert untouched(outside) == before


def test_a_symlinked_archive_is_neither_listed_nor_deleted_from(
    vault: Path, outside: Path, opener: Opener
) -> None:
    before = untouched(outside)
    (vault / ".sidecar/memory/archive").symlink_to(outside)
    s = opener()
    listed = call(s, "memory.list", {"status": "all"})
    assert listed["entries"] == []  # the outside files are not entries
    assert any("symlink" in p["error"] for p in listed["problems"])
    with pytest.raises(SidecarError, match="symlink"):  # it would unlink archive/a.md
        call(s, "memory.write", {"id": "a", "title": "a fact"})
    assert not (vault / ".sidecar/memory/a.md").exists()  # refused before anything was written
    assert untouched(outside) == before


def test_an_entry_file_that_is_a_symlink_is_not_read_or_replaced(
    vault: Path, outside: Path, opener: Opener
) -> None:
    before = untouched(outside)
    (vault / ".sidecar/memory/b.md").symlink_to(outside / "b.md")
    s = opener()
    assert call(s, "memory.list", {"status": "all"})["entries"] == []
    with pytest.raises(SidecarError, match="symlink"):
        call(s, "memory.write", {"id": "b", "title": "a fact"})
    assert (vault / ".sidecar/memory/b.md").is_symlink()
    assert untouched(outside) == before


def test_a_symlinked_memory_folder_is_refused(vault: Path, outside: Path, opener: Opener):
    before = untouched(outside)
    shutil.rmtree(vault / ".sidecar/memory")
    (vault / ".sidecar/memory").symlink_to(outside)
    s = opener()
    assert call(s, "memory.list", {"status": "all"})["entries"] == []
    with pytest.raises(SidecarError, match="symlink"):
        call(s, "memory.write", {"id": "c", "title": "a fact"})
    assert untouched(outside) == before


def test_an_editor_edit_with_a_symlinked_history_keeps_serving(
    vault: Path, outside: Path, opener: Opener
) -> None:
    """The sync keeps the old text as a revision when a file changes in the editor; with the
    history folder a symlink, that entry is reported and every other one still syncs."""
    before = untouched(outside)
    s = opener()
    call(s, "memory.write", {"id": "d", "title": "fact d"})
    call(s, "memory.write", {"id": "f", "title": "fact f, something else entirely"})
    (vault / ".sidecar/memory/.history").mkdir(exist_ok=True)
    (vault / ".sidecar/memory/.history/d").symlink_to(outside)
    for name in ("d", "f"):
        path = vault / f".sidecar/memory/{name}.md"
        path.write_text(path.read_text("utf-8").replace("fact", "edited fact"), "utf-8")
    s.memory.index.sync()
    assert call(s, "memory.get", {"id": "f"})["entry"]["title"].startswith("edited fact")
    assert untouched(outside) == before


# -- the data dir ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["meta.json", "lint-last.json", "writer.lock"])
def test_data_dir_files_are_not_written_through_symlinks(
    vault: Path, outside: Path, tmp_path: Path, name: str
) -> None:
    before = untouched(outside)
    data = tmp_path / "data"
    data.mkdir()
    (data / name).symlink_to(outside / "a.md")
    try:
        s = Services.open(vault, data, embedder=TinyEmbedder(64))
    except SidecarError as exc:
        assert "symlink" in exc.message  # the lock: refused at open
    else:
        try:
            with pytest.raises(SidecarError, match="symlink"):
                s.reindex()  # writes meta.json
                from sidecar.daemon.lint_job import run_scheduled

                run_scheduled(s)  # writes lint-last.json
        finally:
            s.close()
    assert untouched(outside) == before


def test_the_data_dir_is_private(vault: Path, tmp_path: Path, opener: Opener) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "sidecar").mkdir(parents=True, mode=0o755)
    os.chmod(xdg / "sidecar", 0o755)  # as an older version left it
    s = Services.open(vault, xdg / "sidecar" / "v-1", embedder=TinyEmbedder(64))
    s.close()
    assert (xdg / "sidecar").stat().st_mode & 0o777 == 0o700
    assert (xdg / "sidecar" / "v-1").stat().st_mode & 0o777 == 0o700


# -- lint --fix --------------------------------------------------------------------------------


def test_lint_fix_does_not_write_through_a_folder_swapped_for_a_symlink(
    vault: Path, outside: Path, opener: Opener
) -> None:
    """Indexed as a real folder, then swapped for a link to a folder holding the same note:
    the fix must not land outside the vault."""
    s = opener()
    s.reindex()
    shutil.copy(vault / "sub/New.md", outside / "New.md")
    before = untouched(outside)
    shutil.rmtree(vault / "sub")
    (vault / "sub").symlink_to(outside)
    out = call(s, "lint.fix", {"rule": "missing_inverse", "write": True})
    assert out["written_paths"] == []
    assert [(k["path"], "symlink" in k["reason"]) for k in out["skipped"]] == [("sub/New.md", True)]
    assert untouched(outside) == before


# -- the helper itself -------------------------------------------------------------------------


def test_beneath_refuses_what_could_step_out_and_special_files(tmp_path: Path) -> None:
    from sidecar.store.files import Beneath, UnsafePath

    root = tmp_path / "root"
    files = Beneath(root, create_anchor=True)
    files.write("a/b.md", b"x")
    assert files.read_bytes("a/b.md") == b"x" and files.stat("a/missing") is None
    for bad in ("../x", "a/../../x", "/etc/passwd", "a\x00b", "a\\..\\x"):
        with pytest.raises(UnsafePath):
            files.read_bytes(bad)
    os.mkfifo(root / "fifo.md")
    with pytest.raises(UnsafePath, match="not a regular file"):
        files.read_bytes("fifo.md")  # refused at once, not blocked on
    with pytest.raises(UnsafePath):
        files.write("fifo.md", b"x")
    assert [n for n, _ in files.files()] == [] and files.is_dir("a")
    with pytest.raises(UnsafePath):
        files.unlink("a")  # a folder is not a file to remove
