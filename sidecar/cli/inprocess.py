"""A command with no daemon serving the vault runs the methods here, in its own process: an
open ``Services`` holding the writer lock for the command's lifetime.

This is the only client-side module that imports the store, the model and the services, and
only ``client.connect`` imports it, when no daemon answers."""

from __future__ import annotations

import os
import sys
from typing import Any

from sidecar.api import Registry, build_registry
from sidecar.config import Settings, model_cache_dir
from sidecar.core.chunks import ChunkOptions
from sidecar.embed import load_embedder
from sidecar.services.context import Services
from sidecar.services.memory import memory_dir


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
            self._services = open_services(self.settings)
            if sys.stderr.isatty():
                self._services.progress = progress_bar
        return self._services

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        spec = self.registry.get(method)  # an unknown method fails before any work
        if not self._fresh and not method.startswith("index."):
            self.services.reindex()
            self._fresh = True
        if spec.needs_vectors and (params or {}).get("mode") != "lexical":
            pending = self.services.store.count_pending()
            if pending > 1000:
                sys.stderr.write(f"embedding {pending} chunks first (the daemon does this in "
                                 "the background; `sidecar index` does it up front)\n")  # fmt: skip
            self.services.embed_stage.run(progress=self.services.progress)
        return self.registry.call(self.services, method, params)

    def close(self) -> None:
        if self._services is not None:
            self._services.close()
            self._services = None


def open_services(s: Settings) -> Services:
    embedder = load_embedder(
        str(s["embed.model"]),
        batch_size=int(s["embed.batch_size"]),
        threads=int(s["embed.threads"]),
        cache_dir=model_cache_dir(os.environ),
    )
    services = Services.open(
        s.vault,
        s.data_dir,
        ignore=list(s["index.ignore"]),
        memory_folder=memory_dir(s.vault, str(s["memory.folder"])),
        max_file_bytes=int(s["index.max_file_bytes"]),
        chunk_options=ChunkOptions(int(s["chunk.max_chars"]), int(s["chunk.overlap_chars"])),
        embedder=embedder,
    )
    services.settings = s
    return services


def progress_bar(done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    sys.stderr.write(f"\rindexing [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()
