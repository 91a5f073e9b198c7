"""The URI <-> vault-path function on names as people write them and URIs as clients send them."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from urllib.parse import quote

import pytest

from sidecar.lsp.uris import Root, from_path, to_path

NAMES = ["Minimal Theme.md", "Plan #2.md", "100% done.md", "[draft] idea.md",
         "Budget (2024).md", "café.md", "日本 旅行.md", "a+b=c; d&e.md"]  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_round_trip_and_client_spellings(tmp_path: Path, name: str) -> None:
    (tmp_path / "sub dir").mkdir()
    (tmp_path / "sub dir" / name).write_text("x", "utf-8")
    root = Root.of(tmp_path)
    rel = f"sub dir/{name}"
    uri = root.uri(rel)
    assert "#" not in uri.removeprefix("file://") and " " not in uri
    assert root.rel(to_path(uri) or "") == rel
    assert to_path((tmp_path / rel).as_uri()) == str(tmp_path / rel)  # Python's own quoting
    neovim = "file://" + quote(str(tmp_path / rel), safe="/!$&'()*+,;=:@")  # vim.uri_from_fname
    assert root.rel(to_path(neovim) or "") == rel


def test_nfc_uri_finds_the_nfd_file_and_back(tmp_path: Path) -> None:
    stored = unicodedata.normalize("NFD", "Café notes/Crème brûlée.md")
    (tmp_path / stored).parent.mkdir()
    (tmp_path / stored).write_text("x", "utf-8")
    typed = unicodedata.normalize("NFC", stored)
    root = Root.of(tmp_path)
    assert root.rel(str(tmp_path / typed)) == stored
    assert root.rel(to_path(from_path(str(tmp_path / typed))) or "") == stored
    assert root.rel(str(tmp_path / stored)) == stored


def test_windows_drive_letters_as_vs_code_and_others_write_them() -> None:
    root = Root.of(to_path("file:///C:/Users/me/My%20Vault") or "")
    for uri in ("file:///c%3A/Users/me/My%20Vault/Notes/A%20b.md",
                "file:///C:/Users/me/My%20Vault/Notes/A%20b.md",
                "file:///c:/Users/me/My Vault/Notes/A b.md"):  # fmt: skip
        assert root.rel(to_path(uri) or "") == "Notes/A b.md", uri
    assert root.uri("Notes/A b.md") == "file:///c%3A/Users/me/My%20Vault/Notes/A%20b.md"
    assert root.rel(to_path("file:///d%3A/Users/me/My%20Vault/x.md") or "") is None


def test_symlinked_root_answers_in_the_editor_s_spelling(tmp_path: Path) -> None:
    real = tmp_path / "real vault"
    (real / "Notes").mkdir(parents=True)
    (real / "Notes" / "A b.md").write_text("x", "utf-8")
    link = tmp_path / "notes"
    os.symlink(real, link)
    root = Root.of(link)
    assert root.rel(str(link / "Notes" / "A b.md")) == "Notes/A b.md"
    assert root.rel(str(real / "Notes" / "A b.md")) == "Notes/A b.md"
    assert to_path(root.uri("Notes/A b.md")) == str(link / "Notes" / "A b.md")


def test_outside_and_other_schemes(tmp_path: Path) -> None:
    root = Root.of(tmp_path / "vault")
    assert root.rel(str(tmp_path / "vault-other" / "x.md")) is None
    assert root.rel(str(tmp_path / "vault" / ".." / "x.md")) is None
    assert root.rel(str(tmp_path / "vault")) is None
    assert to_path("untitled:Untitled-1") is None
    assert to_path("file://server/share/x%20y.md") == "//server/share/x y.md"
    assert to_path("file://localhost/tmp/x.md") == "/tmp/x.md"
