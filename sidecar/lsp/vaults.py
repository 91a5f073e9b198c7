"""Which vault a document belongs to: the folders the editor names, routed by path.

An editor starts a language server in its own working directory, so the vault comes from
``initialize``: each workspace folder is a vault, else ``rootUri``/``rootPath``; a folder inside
a marked vault (``.obsidian/`` or ``.sidecar/`` above it) stands for that vault, as Obsidian
would open it. A document outside all of them belongs to the nearest marked vault above it,
else to the fallback (``--vault``, ``SIDECAR_VAULT``, the working directory's vault) when the
editor named no folder. A document in none gets no features.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sidecar.lsp.uris import Root, is_drive_path, to_path
from sidecar.lsp.vault import Vault

MARKERS = (".obsidian", ".sidecar")


@dataclass(frozen=True, slots=True)
class Doc:
    vault: Vault
    rel: str  # the vault path


def marked_above(path: str) -> str | None:
    """The nearest folder at or above ``path`` holding ``.obsidian/`` or ``.sidecar/``."""
    if is_drive_path(path):
        return None
    folder = Path(path)
    for candidate in (folder, *folder.parents):
        if any((candidate / m).is_dir() for m in MARKERS):
            return str(candidate)
    return None


def vault_folder(path: str) -> str:
    """The vault a folder the editor names stands for: the marked vault around it, else itself."""
    return marked_above(path) or path


class Vaults:
    """The open vaults, by root; ``opener`` connects one (it never starts a daemon itself)."""

    def __init__(
        self,
        opener: Callable[[Root], Vault],
        fallback: Sequence[str] = (),
        pinned: str | None = None,
    ) -> None:
        self._open = opener
        self._fallback = list(fallback)
        self.named: dict[str, Vault] = {}  # the folders the editor named
        self.found: dict[str, Vault] = {}  # marked vaults found above documents
        self.pinned = pinned is not None
        if pinned is not None:
            self.add(pinned)

    def name(self, folders: Iterable[str]) -> None:
        """Folders from ``initialize`` (workspace folders, else the root); ``--vault`` pins the
        vault instead."""
        for folder in () if self.pinned else folders:
            self.add(folder)

    def add(self, folder: str) -> Vault:
        root = Root.of(vault_folder(folder))
        vault = self.named.get(root.real) or self.found.pop(root.real, None) or self._open(root)
        self.named[root.real] = vault
        return vault

    def remove(self, folder: str) -> Vault | None:
        root = Root.of(vault_folder(folder))
        vault = self.named.pop(root.real, None)
        if vault is not None:
            vault.close()
        return vault

    def all(self) -> list[Vault]:
        return [*self.named.values(), *self.found.values()]

    def route(self, uri: str) -> Doc | None:
        """The vault and vault path of the document at ``uri``, or None outside every vault."""
        path = to_path(uri)
        if path is None:
            return None
        best = self._deepest(path, self.all())
        if best is None:
            best = self._discover(path)
        rel = best.rel(path) if best is not None else None
        return Doc(best, rel) if best is not None and rel is not None else None

    def _deepest(self, path: str, vaults: Iterable[Vault]) -> Vault | None:
        inside = [v for v in vaults if v.rel(path) is not None]
        return max(inside, key=lambda v: len(v.root.real), default=None)

    def _discover(self, path: str) -> Vault | None:
        marked = marked_above(os.path.dirname(path))
        if marked is not None:
            root = Root.of(marked)
            vault = self.found.get(root.real) or self._open(root)
            self.found[root.real] = vault
            return vault
        if self.named:
            return None  # the editor named its folders; this document is in none of them
        for folder in self._fallback:
            root = Root.of(vault_folder(folder))
            if root.rel(path) is not None:
                vault = self.found.get(root.real) or self._open(root)
                self.found[root.real] = vault
                return vault
        return None

    def close(self) -> None:
        for vault in self.all():
            vault.close()
