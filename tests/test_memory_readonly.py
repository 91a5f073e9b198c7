"""Memory writes when the data dir turns read-only (issue 24, minors): an answer is the truth
about the entry files. A refused write leaves no file behind; an import says which entries it
wrote before the disk refused. Needs root for a read-only bind mount."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.api import build_registry
from sidecar.embed import TinyEmbedder
from sidecar.errors import SidecarError
from sidecar.services.context import Services
from sidecar.services.memory import memory_dir
from tests.conftest import require

REGISTRY = build_registry()
pytestmark = pytest.mark.e2e  # mount(8) is a process


@pytest.fixture
def readonly_later(tmp_path: Path) -> Iterator[tuple[Services, Path]]:
    """Services whose data dir turns read-only once they are open: a read-only bind mount over
    it (the files LanceDB holds open stay on the mount below, which a plain remount refuses)."""
    require(os.geteuid() == 0, "root, to mount the data dir read-only")
    vault, data = tmp_path / "vault", tmp_path / "data"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nSome words.\n", "utf-8")
    s = Services.open(vault, data, embedder=TinyEmbedder(64))
    s.reindex()
    REGISTRY.call(s, "memory.write", {"id": "before", "title": "written before"})
    subprocess.run(["mount", "--bind", str(data), str(data)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(data)], check=True)
        yield s, vault
    finally:
        subprocess.run(["umount", str(data)], check=False)
        s.close()


def entry_files(vault: Path) -> set[str]:
    folder = memory_dir(vault)
    assert (folder / "before.md").is_file()  # the folder the entries are in
    return {p.name for p in folder.rglob("*.md")}


def test_a_refused_write_leaves_no_entry_file(readonly_later: tuple[Services, Path]) -> None:
    s, vault = readonly_later
    files = entry_files(vault)
    with pytest.raises(SidecarError) as err:
        REGISTRY.call(s, "memory.write", {"id": "refused", "title": "on a read-only disk"})
    assert "Read-only file system" in err.value.message and "\n" not in err.value.message
    assert entry_files(vault) == files  # the error is the truth: no file was written
    assert REGISTRY.call(s, "memory.get", {"id": "before"})["entry"]["title"] == "written before"


def test_a_refused_update_keeps_the_old_text(readonly_later: tuple[Services, Path]) -> None:
    s, vault = readonly_later
    path = memory_dir(vault) / "before.md"
    text = path.read_text("utf-8")
    with pytest.raises(SidecarError):
        REGISTRY.call(s, "memory.update", {"id": "before", "title": "changed on a read-only disk"})
    assert path.read_text("utf-8") == text
    assert REGISTRY.call(s, "memory.get", {"id": "before"})["entry"]["title"] == "written before"


def test_an_import_says_what_it_could_not_write(readonly_later: tuple[Services, Path]) -> None:
    s, vault = readonly_later
    items = [{"id": f"imported-{i}", "title": f"imported {i}", "entry_type": "topic"}
             for i in range(3)]  # fmt: skip
    out = REGISTRY.call(s, "memory.import", {"entries": items})
    assert out["imported"] == []
    assert [e["id"] for e in out["errors"]] == ["imported-0", "imported-1", "imported-2"]
    assert all("Read-only file system" in e["error"] for e in out["errors"])
    assert not any(name.startswith("imported-") for name in entry_files(vault))
