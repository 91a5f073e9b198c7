"""A command with no daemon serving the vault runs the methods here, in its own process: an
open ``Services`` holding the writer lock for the command's lifetime.

This is the only client-side module that imports the store, the model and the services, and
only ``client.connect`` imports it, when no daemon answers."""

from __future__ import annotations

import sys
from typing import Any

from sidecar import logs
from sidecar.api import Registry, build_registry
from sidecar.cli.progress import Bars, bars_for
from sidecar.config import Settings
from sidecar.services.context import Services


class InProcessClient:
    """Without a daemon, the command owns the index: it catches up with the vault (an
    incremental pass, milliseconds when nothing changed) before answering a query, so answers
    are never staler than the files."""

    def __init__(self, settings: Settings, registry: Registry | None = None) -> None:
        self.settings = settings
        self.registry = registry or build_registry()
        self._services: Services | None = None
        self._fresh = False

    @property
    def services(self) -> Services:
        if self._services is None:
            # the same embedder as the daemon's, so vectors stay valid whichever process ran
            if sys.stderr.isatty():  # "preparing the embedding model" and the like
                logs.to_stderr("\r\x1b[Ksidecar: %(message)s")  # over a half-drawn bar
            self._services = open_services(self.settings, progress=bars_for(sys.stderr))
        return self._services

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        spec = self.registry.get(method)  # an unknown method fails before any work
        if not self._fresh and not method.startswith("index."):
            self.services.reindex()
            self._fresh = True
        if spec.needs_vectors and (params or {}).get("mode") != "lexical":
            pending = self.services.embed_stage.pending()
            if pending > 1000:
                sys.stderr.write(f"embedding {pending} chunks first (the daemon does this in "
                                 "the background; `sidecar index` does it up front)\n")  # fmt: skip
            bars = self.services.progress
            self.services.embed_stage.run(progress=bars("embed") if bars else None)
        return self.registry.call(self.services, method, params)

    def close(self) -> None:
        if self._services is not None:
            self._services.close()
            self._services = None


def open_services(s: Settings, progress: Bars | None = None) -> Services:
    """The services over the vault's index (``Services.from_settings``)."""
    return Services.from_settings(s, progress=progress)
